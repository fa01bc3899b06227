//! The chunker and its counters: the chunker stays exact with and without the promise that counts
//! add up across line starts, and the promise saves counting. (Whether a counter keeps the promise
//! is `rag-tokens`' test, with the contract suite's rule.)

#![allow(clippy::unwrap_used)]

mod invariants;

use std::sync::Arc;

use invariants::{chunk_and_check, parse, parse_md};
use rag_chunker::{DocumentType, TiktokenCounter};
use rag_contract::generate::line_text;
use rag_contract::testing::SpyCounter;

fn fixture(name: &str) -> String {
    String::from_utf8(std::fs::read(format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()).unwrap()
}

/// A long section of paragraphs, each well below the budget: the chunker's common case.
fn long_section() -> String {
    let mut text = String::from("# Guide\n\n");
    for i in 0..60 {
        text.push_str(&format!("Paragraph {i} says something. "));
        text.push_str(&"It repeats a sentence about budgets and chunks, as prose does. ".repeat(i % 7 + 3));
        text.push_str("\n\n");
    }
    text
}

#[test]
fn chunks_are_exact_with_and_without_the_promise_and_the_promise_saves_counting() {
    let docs = vec![
        parse(
            DocumentType::Markdown,
            "all_blocks.md",
            fixture("all_blocks.md").as_bytes(),
        ),
        parse(DocumentType::Markdown, "cjk.md", fixture("cjk.md").as_bytes()),
        parse(DocumentType::Markdown, "emoji.md", fixture("emoji.md").as_bytes()),
        parse(DocumentType::Text, "gen.txt", line_text(300, 7).as_bytes()),
        parse_md(&line_text(300, 8)),
        parse_md(&long_section()),
    ];
    for (max, overlap) in [(512, 64), (64, 8), (16, 4)] {
        for doc in &docs {
            for promise in [false, true] {
                let counter = Arc::new(SpyCounter::new(TiktokenCounter::cl100k()).promising(promise));
                // Checks that every token_count is the exact count of its content, within max.
                chunk_and_check(doc, max, overlap, counter);
            }
        }
    }
    let text = long_section();
    let bytes_counted = |promise| {
        let counter = Arc::new(SpyCounter::new(TiktokenCounter::cl100k()).promising(promise));
        let chunker = rag_chunker::HeadingAwareChunker::new(512, 64, counter.clone()).unwrap();
        chunker.chunk_document(&invariants::ctx(), &parse_md(&text)).unwrap();
        counter.bytes() as f64 / text.len() as f64
    };
    let (without, with) = (bytes_counted(false), bytes_counted(true));
    assert!(
        without > 1.8,
        "without the promise each chunk is counted again: {without:.2}"
    );
    assert!(
        with < 1.5,
        "with it, a chunk is summed from its units: {with:.2} bytes counted per byte"
    );
}
