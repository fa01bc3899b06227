//! Generated inputs: proptest strategies for Markdown documents and packer cases, and [`sample`]
//! to draw a fixed, seeded set of them outside a proptest run (the contract report does).
//!
//! ```
//! use rag_contract::generate::{markdown, sample};
//!
//! let docs = sample(markdown(), 3, 42);
//! assert_eq!(docs.len(), 3);
//! assert_eq!(docs, sample(markdown(), 3, 42), "same seed, same inputs");
//! ```

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use rag_core::{Chunk, RequestContext, TrustLevel};

use crate::packer::PackerCase;

/// Words the generated text is made of: prose, numbers, CJK, emoji ZWJ sequences, combining marks,
/// punctuation, markup characters that are not markup in context.
const WORDS: &[&str] = &[
    "the",
    "refund",
    "window",
    "is",
    "30",
    "days.",
    "Rerankers",
    "score",
    "pairs;",
    "jointly!",
    "東京",
    "日本語のテキスト",
    "👩\u{200d}👩\u{200d}👧",
    "e\u{301}\u{302}",
    "🇫🇷",
    "naïve",
    "(see",
    "below)",
    "`code`",
    "*em*",
    "a_b",
    "—",
    "1.",
    "#tag",
    "x\u{200b}y",
    "?",
];

fn sentence() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(WORDS), 1..30).prop_map(|w| w.join(" "))
}

/// One Markdown block with its trailing line ending.
fn block() -> impl Strategy<Value = String> {
    let words = || prop::collection::vec(prop::sample::select(WORDS), 1..6).prop_map(|w| w.join(" "));
    prop_oneof![
        3 => (1usize..=6, words()).prop_map(|(level, title)| format!("{} {title}\n", "#".repeat(level))),
        1 => (words(), prop::bool::ANY)
            .prop_map(|(title, one)| format!("{title}\n{}\n", if one { "===" } else { "---" })),
        6 => prop::collection::vec(sentence(), 1..4).prop_map(|s| format!("{}\n", s.join("\n"))),
        2 => prop::collection::vec((0usize..4, sentence()), 1..6).prop_map(|items| {
            items
                .into_iter()
                .map(|(depth, s)| format!("{}- {s}\n", "  ".repeat(depth)))
                .collect()
        }),
        1 => (1usize..8, sentence()).prop_map(|(depth, s)| format!("{} {s}\n", ">".repeat(depth))),
        1 => (prop::collection::vec(sentence(), 0..5), prop::bool::weighted(0.8)).prop_map(|(lines, closed)| {
            format!("```\n{}{}", lines.join("\n# not a heading\n"), if closed { "\n```\n" } else { "\n" })
        }),
        1 => prop::collection::vec((words(), words()), 1..6).prop_map(|rows| {
            let mut t = String::from("| a | b |\n|---|---|\n");
            for (a, b) in rows {
                t.push_str(&format!("| {a} | {b} |\n"));
            }
            t
        }),
        1 => Just("---\n".to_owned()),
        1 => Just("<div>\nhtml block\n</div>\n".to_owned()),
    ]
}

/// A Markdown document of up to 24 blocks, separated by blank lines; sometimes CRLF, sometimes
/// with a byte-order mark.
pub fn markdown() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(block(), 0..24),
        prop::bool::weighted(0.15),
        prop::bool::weighted(0.05),
    )
        .prop_map(|(blocks, crlf, bom)| {
            let mut doc = blocks.join("\n");
            if crlf {
                doc = doc.replace('\n', "\r\n");
            }
            if bom {
                doc.insert(0, '\u{feff}');
            }
            doc
        })
}

/// Plain text: paragraphs of sentences separated by blank lines (LF, CRLF or CR).
pub fn plain_text() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(prop::collection::vec(sentence(), 1..4), 0..10),
        prop::sample::select(vec!["\n", "\r\n", "\r"]),
    )
        .prop_map(|(paragraphs, eol)| {
            paragraphs
                .into_iter()
                .map(|p| p.join(eol))
                .collect::<Vec<_>>()
                .join(&format!("{eol}{eol}"))
        })
}

/// Texts packer chunks draw from: exact duplicates up to case and punctuation, near duplicates,
/// distinct texts, and a text without words.
const TEXTS: &[&str] = &[
    "the refund window is 30 days",
    "The refund window is 30 DAYS.",
    "the refund window is 14 days",
    "alpha beta gamma delta epsilon zeta eta",
    "alpha beta gamma delta epsilon zeta eta theta",
    "alpha beta gamma delta epsilon",
    "shipping is free above fifty euros",
    "rerankers score pairs jointly",
    "東京 日本語のテキスト",
    "!!! ???",
];

fn arb_chunk(i: usize) -> impl Strategy<Value = Chunk> {
    (
        prop::sample::select(TEXTS),
        0usize..4,
        prop::sample::select(vec![0.0, 0.25, 0.5, 0.5, 0.75, 0.9, -0.1, 1.0]),
        1usize..30,
        prop::bool::weighted(0.1),
        prop::bool::weighted(0.1),
        prop::sample::select(vec![
            TrustLevel::Trusted,
            TrustLevel::UserSupplied,
            TrustLevel::Untrusted,
        ]),
    )
        .prop_map(move |(text, doc, score, tokens, pinned, by_ref, trust)| {
            let mut c = if by_ref {
                Chunk::with_content_ref(format!("c{i:02}"), format!("d{doc}"), "acme", format!("s3://b/{i}"))
            } else {
                Chunk::with_content(format!("c{i:02}"), format!("d{doc}"), "acme", text)
            };
            c.score = Some(score);
            c.token_count = Some(tokens);
            c.pinned = pinned;
            c.trust = trust;
            c
        })
}

/// How a generated packer case is spoiled, if at all.
#[derive(Debug, Clone, Copy)]
enum Spoil {
    None,
    Foreign,
    NanScore,
    ZeroTokens,
}

/// A packer case for tenant `acme`: up to 14 chunks (at most 16 candidates, so brute force
/// applies), a budget of 1 to 200, and in about one case in ten a foreign chunk, a NaN score or a
/// zero token count.
pub fn packer_case() -> impl Strategy<Value = PackerCase> {
    let chunks = (0usize..14).prop_flat_map(|n| (0..n).map(arb_chunk).collect::<Vec<_>>());
    let spoil = prop_oneof![
        27 => Just(Spoil::None),
        1 => Just(Spoil::Foreign),
        1 => Just(Spoil::NanScore),
        1 => Just(Spoil::ZeroTokens),
    ];
    (chunks, 1i64..200, spoil, any::<prop::sample::Index>()).prop_map(|(mut chunks, budget, spoil, at)| {
        let at = at.index(chunks.len() + 1);
        let last = chunks.len().saturating_sub(1);
        match spoil {
            Spoil::None => {}
            Spoil::Foreign => chunks.insert(at, Chunk::with_content("intruder", "d0", "globex", "the refund window")),
            Spoil::NanScore | Spoil::ZeroTokens if chunks.is_empty() => {}
            Spoil::NanScore => chunks[at.min(last)].score = Some(f64::NAN),
            Spoil::ZeroTokens => chunks[at.min(last)].token_count = Some(0),
        }
        let name = format!("generated: {} chunks, budget {budget}, {spoil:?}", chunks.len());
        PackerCase::new(name, RequestContext::local("acme"), chunks, budget)
    })
}

/// `n` values of `strategy`, drawn with a generator seeded by `seed`: the same on every run.
pub fn sample<S: Strategy>(strategy: S, n: usize, seed: u64) -> Vec<S::Value> {
    let mut seed_bytes = [0u8; 32];
    seed_bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &seed_bytes);
    let mut runner = TestRunner::new_with_rng(Config::default(), rng);
    (0..n)
        .filter_map(|_| strategy.new_tree(&mut runner).ok().map(|tree| tree.current()))
        .collect()
}

/// Line fragments chosen for what the pre-tokenizers treat specially at line starts and ends:
/// punctuation (which takes trailing line breaks into its piece), spaces and tabs before a line
/// break, contractions, digits, CJK, emoji, markup, CR, CRLF.
const LINE_STARTS: [&str; 16] = [
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
const LINE_ENDS: [&str; 12] = ["", ".", "!", " ", "\t", "  ", ":", "```", "|", "。", "👨‍👩‍👧", "'"];
const LINE_BREAKS: [&str; 7] = ["\n", "\n\n", "\r\n", "\r", "\n \n", " \n\n", "\n\t\n"];

/// A text of `lines` lines built from fragments that tokenizers treat specially at line starts and
/// ends (for [`counter::additive_at_line_starts`](crate::counter::additive_at_line_starts) and a
/// chunker's counting); the same for the same `seed` on every run.
pub fn line_text(lines: usize, seed: u64) -> String {
    let mut state = seed;
    let mut next = |n: usize| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) as usize % n
    };
    let mut text = String::new();
    for _ in 0..lines {
        text.push_str(LINE_STARTS[next(LINE_STARTS.len())]);
        for _ in 0..next(4) {
            text.push(' ');
            text.push_str(LINE_STARTS[next(LINE_STARTS.len())]);
        }
        text.push_str(LINE_ENDS[next(LINE_ENDS.len())]);
        text.push_str(LINE_BREAKS[next(LINE_BREAKS.len())]);
    }
    text
}
