//! Property test: generated Markdown, small budgets, every promise of parser and chunker.

#![allow(clippy::unwrap_used)]

mod invariants;

use invariants::{chunk_and_check, cl100k, jsonl_bytes, o200k, output_bound, parse};
use proptest::prelude::*;
use rag_chunker::{DocumentType, HeadingAwareChunker};

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

/// Thousands of words with a sentence end now and then: the title of a giant heading.
fn giant_text() -> impl Strategy<Value = String> {
    (prop::collection::vec(sentence(), 1..20), 30..120usize).prop_map(|(sentences, repeat)| {
        let text = sentences.join(" ");
        std::iter::repeat_n(text.as_str(), repeat).collect::<Vec<_>>().join(" ")
    })
}

/// Markdown with giant ATX headings and giant setext headings (a long paragraph closed by `---`
/// or `===`) among ordinary blocks: the inputs whose titles once repeated in every piece.
fn markdown_with_giant_headings() -> impl Strategy<Value = String> {
    let giant = prop_oneof![
        (1..=6usize, giant_text()).prop_map(|(level, title)| format!("{} {title}", "#".repeat(level))),
        (giant_text(), prop::bool::ANY)
            .prop_map(|(title, one)| format!("{title}\n{}", if one { "===" } else { "---" })),
    ];
    prop::collection::vec(prop_oneof![1 => giant, 2 => block()], 1..5).prop_map(|blocks| blocks.join("\n\n"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// Output linear in the input: at most `C * input + D * chunks` bytes of JSON Lines, with
    /// `C = 6 * R` and `D` the documented bound (docs/reference/chunker.md, `OutputBound`).
    #[test]
    fn output_stays_linear_in_the_input_with_giant_headings(
        (max, overlap) in budget(), text in markdown_with_giant_headings(),
    ) {
        let parsed = parse(DocumentType::Markdown, "giant.md", text.as_bytes());
        // chunk_and_check also checks the per-chunk overhead and the repetition separately.
        let chunks = chunk_and_check(&parsed, max, overlap, cl100k());
        let chunker = HeadingAwareChunker::new(max, overlap, cl100k()).unwrap();
        let bound = output_bound(&chunker, &parsed);
        let output = jsonl_bytes(&chunks);
        prop_assert!(
            output <= bound.max_jsonl_bytes(text.len(), chunks.len()),
            "{output} bytes out of {} in, {} chunks ({bound:?})", text.len(), chunks.len()
        );
        for chunk in &chunks {
            for title in chunk.metadata["heading_path"].as_array().unwrap() {
                prop_assert!(title.as_str().unwrap().chars().count() <= HeadingAwareChunker::MAX_PATH_TITLE_CHARS);
            }
        }
    }
}
