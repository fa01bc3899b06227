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

/// Long prose: paragraphs of one to eighty sentences, so that some are over a 512-token budget,
/// and the last paragraph of most chunks is a long one.
fn long_prose() -> String {
    let mut text = String::from("# Essay\n\n");
    for i in 0..40 {
        for s in 0..(i * 7 % 80 + 1) {
            text.push_str(&format!(
                "Sentence {s} of paragraph {i} says what prose says, at some length. "
            ));
        }
        text.push_str("It ends.\n\n");
    }
    text
}

/// The bytes the chunker hands `counter` per byte of `text`, at 512/64.
fn bytes_counted(text: &str, counter: SpyCounter<TiktokenCounter>) -> f64 {
    let counter = Arc::new(counter);
    let chunker = rag_chunker::HeadingAwareChunker::new(512, 64, counter.clone()).unwrap();
    chunker.chunk_document(&invariants::ctx(), &parse_md(text)).unwrap();
    counter.bytes() as f64 / text.len() as f64
}

#[test]
fn with_both_promises_each_byte_is_counted_about_once() {
    let text = long_prose();
    let both = bytes_counted(&text, SpyCounter::new(TiktokenCounter::cl100k()).promising(true));
    let lines = bytes_counted(
        &text,
        SpyCounter::new(TiktokenCounter::cl100k())
            .promising(true)
            .promising_spaces(false),
    );
    // The sentences of a paragraph over the budget are counted once (not the paragraph first),
    // the last unit of a chunk is not counted again alone, and a chunk's sentences are summed.
    assert!(both < 1.12, "{both:.3} bytes counted per byte");
    assert!(
        lines > 1.5,
        "without the space promise, sentences are counted again: {lines:.3}"
    );
    for (max, overlap) in [(512, 64), (100, 20), (40, 0)] {
        for promise in [false, true] {
            let counter = SpyCounter::new(TiktokenCounter::cl100k())
                .promising(true)
                .promising_spaces(promise);
            chunk_and_check(&parse_md(&text), max, overlap, Arc::new(counter));
        }
    }
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
