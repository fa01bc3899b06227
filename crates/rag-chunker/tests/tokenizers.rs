//! The chunker and its counters: counts add up across line starts on the chunker's fixtures (the
//! promise the chunker's cost rests on; `rag-tokens` tests it on generated text), and the chunker
//! stays exact with and without that promise.

#![allow(clippy::unwrap_used)]

mod invariants;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use invariants::{chunk_and_check, parse, parse_md};
use rag_chunker::{DocumentType, TiktokenCounter};
use rag_core::{TokenCounter, TokenizerError};

const FIXTURES: [&str; 7] = [
    "all_blocks.md",
    "bom.md",
    "cjk.md",
    "emoji.md",
    "whitespace.md",
    "notes.txt",
    "scan.ocr.json",
];

fn fixture(name: &str) -> String {
    String::from_utf8(std::fs::read(format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()).unwrap()
}

/// Line fragments chosen for what the pre-tokenizers treat specially at line starts and ends:
/// punctuation (which takes trailing line breaks into its piece), spaces and tabs before a line
/// break, contractions, digits, CJK, emoji, markup, CR, CRLF.
const STARTS: [&str; 16] = [
    "word",
    "'s",
    "'ll go",
    "123456",
    ".",
    "...",
    "- item",
    "# Title",
    "| a | b |",
    "```rust",
    "東京都の",
    "👍🏽 ok",
    "Émile",
    "«quote»",
    "x=1;",
    "\u{301}mark",
];
const ENDS: [&str; 12] = ["", ".", "!", " ", "\t", "  ", ":", "```", "|", "。", "👨‍👩‍👧", "'"];
const BREAKS: [&str; 7] = ["\n", "\n\n", "\r\n", "\r", "\n \n", " \n\n", "\n\t\n"];

/// A deterministic text of `lines` lines built from the fragments above.
fn generated(lines: usize, seed: u64) -> String {
    let mut state = seed;
    let mut next = |n: usize| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) as usize % n
    };
    let mut text = String::new();
    for _ in 0..lines {
        text.push_str(STARTS[next(STARTS.len())]);
        for _ in 0..next(4) {
            text.push(' ');
            text.push_str(STARTS[next(STARTS.len())]);
        }
        text.push_str(ENDS[next(ENDS.len())]);
        text.push_str(BREAKS[next(BREAKS.len())]);
    }
    text
}

fn texts() -> Vec<String> {
    let mut texts: Vec<String> = FIXTURES.iter().map(|name| fixture(name)).collect();
    texts.extend((0..4).map(|seed| generated(400, seed)));
    texts
}

/// Byte offsets where the promise applies: after `\n` or `\r`, before a character that is neither
/// whitespace nor `/`.
fn line_starts(text: &str) -> Vec<usize> {
    text.char_indices()
        .filter(|&(i, c)| i > 0 && !c.is_whitespace() && c != '/' && matches!(text.as_bytes()[i - 1], b'\n' | b'\r'))
        .map(|(i, _)| i)
        .collect()
}

/// The sum of the counts of the pieces between all line starts equals the count of the whole.
fn assert_additive(counter: &dyn TokenCounter, text: &str) {
    let mut cuts = line_starts(text);
    cuts.push(text.len());
    let mut from = 0;
    let mut sum = 0;
    for cut in cuts {
        sum += counter.count(&text[from..cut]).unwrap();
        from = cut;
    }
    assert_eq!(
        sum,
        counter.count(text).unwrap(),
        "{}: {:?}",
        counter.name(),
        &text[..text.len().min(80)]
    );
}

#[test]
fn counts_add_up_across_line_starts_on_the_fixtures_and_generated_text() {
    let counters = [TiktokenCounter::cl100k(), TiktokenCounter::new("o200k_base").unwrap()];
    for counter in &counters {
        assert!(counter.splits_at_line_starts());
        for text in texts() {
            assert_additive(counter, &text);
        }
    }
}

/// Forwards counts and adds up the bytes counted; makes the promise only if told to.
struct Metered {
    promise: bool,
    bytes: AtomicUsize,
}

impl TokenCounter for Metered {
    fn count(&self, text: &str) -> Result<usize, TokenizerError> {
        self.bytes.fetch_add(text.len(), Ordering::Relaxed);
        TiktokenCounter::cl100k().count(text)
    }

    fn name(&self) -> &str {
        "tiktoken:cl100k_base"
    }

    fn splits_at_line_starts(&self) -> bool {
        self.promise
    }
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
        parse(DocumentType::Text, "gen.txt", generated(300, 7).as_bytes()),
        parse_md(&generated(300, 8)),
        parse_md(&long_section()),
    ];
    for (max, overlap) in [(512, 64), (64, 8), (16, 4)] {
        for doc in &docs {
            for promise in [false, true] {
                let counter = Arc::new(Metered {
                    promise,
                    bytes: AtomicUsize::new(0),
                });
                // Checks that every token_count is the exact count of its content, within max.
                chunk_and_check(doc, max, overlap, counter);
            }
        }
    }
    let text = long_section();
    let bytes_counted = |promise| {
        let counter = Arc::new(Metered {
            promise,
            bytes: AtomicUsize::new(0),
        });
        let chunker = rag_chunker::HeadingAwareChunker::new(512, 64, counter.clone()).unwrap();
        chunker.chunk_document(&invariants::ctx(), &parse_md(&text)).unwrap();
        counter.bytes.load(Ordering::Relaxed) as f64 / text.len() as f64
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
