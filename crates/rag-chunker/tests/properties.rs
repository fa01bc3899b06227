//! Property test: generated Markdown, small budgets, every promise of parser and chunker.

#![allow(clippy::unwrap_used)]

mod invariants;

use invariants::{chunk_and_check, cl100k, o200k, parse};
use proptest::prelude::*;
use rag_chunker::DocumentType;

/// Words from several scripts, with emoji ZWJ sequences and combining marks, so cuts are tested
/// against multi-byte characters and grapheme clusters.
const WORDS: &[&str] = &[
    "chunk",
    "token",
    "budget",
    "heading",
    "retrieval",
    "the",
    "a",
    "of",
    "東京都",
    "北京是中华人民共和国的首都",
    "日本語の文章には空白がない",
    "👩‍👩‍👧‍👦",
    "🏳️‍🌈",
    "👍🏽",
    "e\u{301}le\u{300}ve",
    "Tiếng",
    "Việt",
    "naïve",
    "x=1;",
    "#hash",
    "*emph*",
    "`code`",
    "[link](http://example.invalid)",
    "supercalifragilisticexpialidocious",
];

fn sentence() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(prop::sample::select(WORDS), 1..12),
        prop::sample::select(&[".", "!", "?", "", "。"][..]),
    )
        .prop_map(|(words, end)| format!("{}{end}", words.join(" ")))
}

fn paragraph() -> impl Strategy<Value = String> {
    prop::collection::vec(sentence(), 1..6).prop_map(|s| s.join(" "))
}

/// One Markdown block, its lines joined by `\n` (line endings are applied to the whole text).
fn block() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => (1..=6usize, paragraph()).prop_map(|(level, title)| format!("{} {}", "#".repeat(level), title)),
        1 => (paragraph(), prop::bool::ANY)
            .prop_map(|(title, one)| format!("{title}\n{}", if one { "=====" } else { "-----" })),
        4 => paragraph(),
        2 => prop::collection::vec((0..3usize, sentence()), 1..6).prop_map(|items| {
            // Indent by the previous depth + 1 at most, so nesting is valid Markdown.
            let mut depth = 0usize;
            items
                .into_iter()
                .map(|(d, text)| {
                    depth = d.min(depth + 1);
                    format!("{}- {text}", "  ".repeat(depth))
                })
                .collect::<Vec<_>>()
                .join("\n")
        }),
        1 => (prop::collection::vec(sentence(), 1..8), prop::bool::ANY).prop_map(|(lines, closed)| {
            format!("```text\n# {}\n{}", lines.join("\n"), if closed { "```" } else { "" })
        }),
        1 => prop::collection::vec((sentence(), sentence()), 1..8).prop_map(|rows| {
            let body: Vec<String> = rows.iter().map(|(a, b)| format!("| {a} | {b} |")).collect();
            format!("| key | value |\n|-----|-------|\n{}", body.join("\n"))
        }),
        1 => paragraph().prop_map(|p| format!("> {p}\n> > {p}")),
        1 => Just("***".to_owned()),
        1 => Just("[ref]: https://example.invalid/ref".to_owned()),
        1 => Just("<div>\nraw html\n</div>".to_owned()),
    ]
}

fn markdown() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(block(), 0..12),
        prop::sample::select(&["\n", "\r\n", "\r"][..]),
        prop::bool::weighted(0.1),
        prop::bool::weighted(0.1),
    )
        .prop_map(|(blocks, newline, bom, front_matter)| {
            let mut text = String::new();
            if bom {
                text.push('\u{feff}');
            }
            if front_matter {
                text.push_str("---\ntitle: generated\n---\n\n");
            }
            text.push_str(&blocks.join("\n\n"));
            text.replace('\n', newline)
        })
}

fn budget() -> impl Strategy<Value = (usize, usize)> {
    (8..=64usize).prop_flat_map(|max| (Just(max), 0..max))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn generated_markdown_keeps_every_promise((max, overlap) in budget(), text in markdown(), o200 in prop::bool::ANY) {
        let parsed = parse(DocumentType::Markdown, "generated.md", text.as_bytes());
        let counter = if o200 { o200k() } else { cl100k() };
        chunk_and_check(&parsed, max, overlap, counter);
    }

    #[test]
    fn generated_text_keeps_every_promise((max, overlap) in budget(), text in markdown()) {
        let parsed = parse(DocumentType::Text, "generated.txt", text.as_bytes());
        chunk_and_check(&parsed, max, overlap, cl100k());
    }
}
