//! The token counters: counts add up across line starts (the promise the chunker's cost rests on),
//! the chunker stays exact with and without that promise, and the `bpe-openai` backend counts
//! exactly like tiktoken-rs.

#![allow(clippy::unwrap_used)]

mod invariants;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use invariants::{chunk_and_check, parse, parse_md};
use proptest::prelude::*;
use rag_chunker::{DocumentType, TiktokenCounter};
use rag_core::TokenCounter;

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
        sum += counter.count(&text[from..cut]);
        from = cut;
    }
    assert_eq!(
        sum,
        counter.count(text),
        "{}: {:?}",
        counter.name(),
        &text[..text.len().min(80)]
    );
}

#[test]
fn counts_add_up_across_line_starts_on_fixtures_and_generated_text() {
    let counters = [TiktokenCounter::cl100k(), TiktokenCounter::new("o200k_base").unwrap()];
    for counter in &counters {
        assert!(counter.splits_at_line_starts());
        for text in texts() {
            assert_additive(counter, &text);
        }
    }
}

#[test]
fn a_line_start_means_a_non_whitespace_character_after_a_line_break() {
    // After "\n", a space or another line break may join the previous piece: the promise is
    // only about non-whitespace, and these show it could not be wider.
    let cl = TiktokenCounter::cl100k();
    assert_ne!(cl.count("a\n \nb"), cl.count("a\n") + cl.count(" \nb"));
    assert_eq!(line_starts("a\n b\r\nc\rd"), [6, 8]);
    // o200k_base's punctuation pattern takes the line breaks and slashes after it (found by
    // fuzzing): a line that starts with '/' is not a line start for the promise.
    let o200k = TiktokenCounter::new("o200k_base").unwrap();
    assert_ne!(o200k.count("x!\n/no"), o200k.count("x!\n") + o200k.count("/no"));
    assert_eq!(line_starts("x!\n/no\ny"), [7]);
}

fn fragment() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(
            &[
                "a", "s", "'", ".", " ", "\t", "\n", "\r", "1", "é", "東", "👍", "\u{301}", "-", "/", "!",
            ][..],
        ),
        0..24,
    )
    .prop_map(|parts| parts.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_two_texts_joined_at_a_line_start_count_as_their_sum(
        a in fragment(), brk in prop::sample::select(&["\n", "\r"][..]), first in prop::sample::select(&["a", "'", ".", "1", "東", "👍", "\u{301}"][..]), b in fragment(),
    ) {
        let (left, right) = (format!("{a}{brk}"), format!("{first}{b}"));
        for counter in [TiktokenCounter::cl100k(), TiktokenCounter::new("o200k_base").unwrap()] {
            prop_assert_eq!(counter.count(&format!("{left}{right}")), counter.count(&left) + counter.count(&right));
        }
    }
}

/// Forwards counts and adds up the bytes counted; makes the promise only if told to.
struct Metered {
    promise: bool,
    bytes: AtomicUsize,
}

impl TokenCounter for Metered {
    fn count(&self, text: &str) -> usize {
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

#[cfg(feature = "bpe-openai")]
#[test]
fn bpe_openai_counts_and_encodes_like_tiktoken() {
    use rag_chunker::BpeOpenAiCounter;
    for encoding in ["cl100k_base", "o200k_base"] {
        let (tiktoken, bpe) = (
            TiktokenCounter::new(encoding).unwrap(),
            BpeOpenAiCounter::new(encoding).unwrap(),
        );
        assert_eq!(bpe.name(), tiktoken.name());
        assert!(bpe.splits_at_line_starts());
        for text in texts() {
            assert_eq!(bpe.encode(&text), tiktoken.encode(&text), "{encoding}");
            for line in text.split_inclusive('\n') {
                assert_eq!(bpe.count(line), tiktoken.count(line), "{encoding}: {line:?}");
            }
            assert_additive(&bpe, &text);
        }
    }
    assert!(BpeOpenAiCounter::new("p50k_base").is_err());
}
