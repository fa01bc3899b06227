//! The heading-aware chunker on fixtures and generated inputs: every promise checked on each.

#![allow(clippy::unwrap_used)]

mod invariants;

use std::sync::Arc;

use invariants::{check_blocks, chunk_and_check, chunks_of, cl100k, ctx, o200k, parse, parse_md};
use rag_chunker::{DocumentType, HeadingAwareChunker, TiktokenCounter};
use rag_contract::testing::SpyCounter;
use rag_core::{
    Block, BlockType, ChunkError, Chunker, Document, HeadingLevel, Health, ParsedDocument, Span, TokenCounter,
    TokenizerError,
};
use serde_json::json;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(format!("{FIXTURES}/{name}")).unwrap()
}

fn kinds(chunks: &[rag_core::Chunk]) -> Vec<&str> {
    chunks.iter().map(|c| c.metadata_str("kind").unwrap()).collect()
}

/// Budgets from roomy to tiny, so the packing, overlap and splitting paths all run.
const CONFIGS: [(usize, usize); 4] = [(512, 64), (64, 16), (16, 4), (8, 0)];

/// The `n` pieces `piece(0)`, `piece(1)`, ... written one after the other.
fn numbered(n: usize, piece: impl Fn(usize) -> String) -> String {
    (0..n).map(piece).collect()
}

#[test]
fn every_fixture_keeps_every_promise_under_both_tokenizers() {
    for name in [
        "all_blocks.md",
        "bom.md",
        "empty.md",
        "whitespace.md",
        "cjk.md",
        "emoji.md",
    ] {
        let parsed = parse(DocumentType::Markdown, name, &fixture(name));
        for (max, overlap) in CONFIGS {
            chunk_and_check(&parsed, max, overlap, cl100k());
            chunk_and_check(&parsed, max, overlap, o200k());
        }
    }
    let parsed = parse(DocumentType::Text, "notes.txt", &fixture("notes.txt"));
    for (max, overlap) in CONFIGS {
        chunk_and_check(&parsed, max, overlap, cl100k());
    }
    let parsed = parse(DocumentType::Ocr, "scan.ocr.json", &fixture("scan.ocr.json"));
    for (max, overlap) in CONFIGS {
        chunk_and_check(&parsed, max, overlap, o200k());
    }
}

#[test]
fn the_all_blocks_fixture_has_every_block_type_and_the_expected_outline() {
    let parsed = parse(DocumentType::Markdown, "all_blocks.md", &fixture("all_blocks.md"));
    // Every type but captions, which Markdown has no syntax for.
    for ty in BlockType::ALL.into_iter().filter(|&ty| ty != BlockType::Caption) {
        assert!(parsed.blocks.iter().any(|b| b.block_type == ty), "no {ty:?} block");
    }
    let headings: Vec<(u8, &str)> = parsed
        .blocks
        .iter()
        .filter_map(|b| Some((b.level?.get(), b.text.as_deref()?)))
        .collect();
    assert_eq!(
        headings,
        [
            (1, "Field guide"),
            (3, "Skipped a level"),
            (2, "Setext section"),
            (2, "Second chapter")
        ],
        "the `#` in code is not a heading"
    );
    let front_matter = &parsed.blocks[0];
    assert_eq!(front_matter.block_type, BlockType::Other);
    assert!(
        parsed
            .block_text(front_matter)
            .is_some_and(|t| t.starts_with("---\ntitle: Field guide"))
    );
    assert!(
        parsed
            .blocks
            .iter()
            .any(|b| parsed.block_text(b) == Some("[home]: https://example.invalid/home"))
    );

    let chunks = chunk_and_check(&parsed, 512, 64, cl100k());
    let headings: Vec<_> = chunks
        .iter()
        .filter(|c| c.metadata_str("kind") == Some("heading"))
        .collect();
    assert_eq!(headings.len(), 4);
    // H3 under H1 (a skipped level), the setext H2 under H1 too, not under the H3.
    assert_eq!(headings[1].parent_id, Some(headings[0].id.clone()));
    assert_eq!(headings[1].metadata["heading_path"], json!(["Field guide"]));
    assert_eq!(headings[2].parent_id, Some(headings[0].id.clone()));
    assert_eq!(headings[2].metadata["level"], 2);
    let body_under_setext = chunks
        .iter()
        .find(|c| c.parent_id.as_ref() == Some(&headings[2].id))
        .unwrap();
    assert_eq!(
        body_under_setext.metadata["heading_path"],
        json!(["Field guide", "Setext section"])
    );
    assert!(body_under_setext.content().unwrap().contains("| span   | bytes   |"));
    assert!(
        body_under_setext
            .content()
            .unwrap()
            .contains("```rust\n# this is not a heading")
    );
    // The front matter comes before any heading: a body chunk without parent or path.
    assert_eq!(chunks[0].parent_id, None);
    assert_eq!(chunks[0].metadata["heading_path"], json!([]));
}

#[test]
fn headings_nest_by_a_stack_of_levels() {
    let parsed = parse_md("# A\n\n### A.a.a\n\ntext\n\n## A.b\n\n# B\n\n## B.a\n\nmore\n");
    let chunks = chunk_and_check(&parsed, 100, 10, cl100k());
    let outline: Vec<(&str, Option<&str>)> = chunks
        .iter()
        .map(|c| (c.content().unwrap(), c.parent_id.as_ref().map(|p| p.as_str())))
        .collect();
    assert_eq!(
        outline,
        [
            ("# A", None),
            ("### A.a.a", Some("doc#0")),
            ("text", Some("doc#1")),
            ("## A.b", Some("doc#0")),
            ("# B", None),
            ("## B.a", Some("doc#4")),
            ("more", Some("doc#5")),
        ]
    );
    assert_eq!(
        chunks[2].metadata,
        json!({"kind": "body", "heading_path": ["A", "A.a.a"]})
            .as_object()
            .unwrap()
            .clone()
    );
    assert_eq!(
        chunks[5].metadata,
        json!({"kind": "heading", "level": 2, "heading_path": ["B"]})
            .as_object()
            .unwrap()
            .clone()
    );
    assert_eq!(chunks[0].acl_labels, ["staff", "eu"]);
    assert_eq!(chunks[0].tenant_id.as_str(), "acme");
}

#[test]
fn body_blocks_pack_until_the_next_would_overflow_and_keep_their_separators() {
    let paragraphs: Vec<String> = (0..12)
        .map(|i| format!("Paragraph number {i} has a few words."))
        .collect();
    let text = format!("# Packing\n\n{}\n", paragraphs.join("\n\n"));
    let parsed = parse_md(&text);
    let chunks = chunk_and_check(&parsed, 40, 0, cl100k());
    let bodies: Vec<_> = chunks
        .iter()
        .filter(|c| c.metadata_str("kind") == Some("body"))
        .collect();
    assert!(bodies.len() > 1 && bodies.len() < 12, "{} bodies", bodies.len());
    assert!(bodies[0].content().unwrap().contains("words.\n\nParagraph number 1"));
    let counter = TiktokenCounter::cl100k();
    for pair in bodies.windows(2) {
        // Greedy: the next chunk's first paragraph would not have fitted into this one.
        let (a, b) = (pair[0].span.unwrap(), pair[1].span.unwrap());
        let next_para_end = b.start + text[b.start..].find('.').unwrap() + 1;
        assert!(counter.count(&text[a.start..next_para_end]).unwrap() > 40 - 2);
    }
}

#[test]
fn overlap_repeats_the_end_of_the_previous_chunk_at_a_boundary_and_stays_in_budget() {
    let sentences = numbered(60, |i| {
        format!("Sentence {i} talks about retrieval and chunk boundaries. ")
    });
    let text = format!("# Overlap\n\n{sentences}\n\n# Next\n\nAfter the heading.\n");
    let parsed = parse_md(&text);
    let counter = TiktokenCounter::cl100k();
    let chunks = chunk_and_check(&parsed, 64, 16, cl100k());
    let bodies: Vec<_> = chunks
        .iter()
        .filter(|c| c.metadata_str("kind") == Some("body") && c.parent_id.as_ref().unwrap().as_str() == "doc#0")
        .collect();
    assert!(bodies.len() >= 4);
    let mut overlaps = 0;
    for pair in bodies.windows(2) {
        let (a, b) = (pair[0].span.unwrap(), pair[1].span.unwrap());
        if b.start < a.end {
            overlaps += 1;
            let repeated = &text[b.start..a.end];
            assert!(counter.count(repeated).unwrap() <= 16, "{repeated:?}");
            // It starts at a sentence or word start.
            assert!(text[..b.start].ends_with(' '), "{repeated:?}");
        }
    }
    assert!(overlaps >= bodies.len() - 2, "only {overlaps} overlaps");
    // The first body chunk of each section starts after its heading: no overlap across headings.
    let next = chunks.iter().position(|c| c.content() == Some("# Next")).unwrap();
    assert_eq!(chunks[next + 1].content(), Some("After the heading."));
}

#[test]
fn long_code_blocks_split_between_lines() {
    let lines = numbered(300, |i| format!("    let value_{i} = compute({i}, \"#{i}\");\n"));
    let text = format!("## Code\n\n```rust\nfn main() {{\n{lines}}}\n```\n");
    let parsed = parse_md(&text);
    assert_eq!(parsed.blocks[1].block_type, BlockType::Code);
    let chunks = chunk_and_check(&parsed, 64, 0, cl100k());
    assert!(chunks.len() > 10);
    for chunk in &chunks[1..] {
        let span = chunk.span.unwrap();
        assert!(
            text[..span.start].ends_with('\n'),
            "chunk starts mid-line: {:?}",
            chunk.content()
        );
        assert!(
            text[span.end..].starts_with('\n'),
            "chunk ends mid-line: {:?}",
            chunk.content()
        );
    }
    assert!(
        chunks
            .iter()
            .all(|c| c.metadata_str("kind") != Some("heading") || c.position == 0)
    );
}

#[test]
fn long_tables_split_between_rows_and_the_header_stays_with_its_delimiter() {
    let rows = numbered(200, |i| format!("| row {i} | value {} |\n", i * 7));
    let text = format!("# Table\n\n| name | value |\n|------|-------|\n{rows}");
    let parsed = parse_md(&text);
    assert_eq!(
        parsed
            .blocks
            .iter()
            .filter(|b| b.block_type == BlockType::TableRow)
            .count(),
        201
    );
    let chunks = chunk_and_check(&parsed, 48, 8, cl100k());
    assert!(
        chunks[1]
            .content()
            .unwrap()
            .starts_with("| name | value |\n|------|-------|\n| row 0 |")
    );
    for chunk in &chunks[1..] {
        let content = chunk.content().unwrap();
        assert!(content.ends_with('|'), "{content:?}");
    }
}

#[test]
fn a_megabyte_line_without_spaces_is_hard_split_quickly() {
    let line: String = (0..1_000_000u32)
        .map(|i| char::from(b'a' + ((i * 7 + i / 3) % 26) as u8))
        .collect();
    let text = format!("# Blob\n\n{line}\n");
    let parsed = parse_md(&text);
    let chunks = chunk_and_check(&parsed, 512, 64, cl100k());
    assert!(chunks.len() > 500);
    let counter = TiktokenCounter::cl100k();
    // Pieces are filled close to the budget, not cut at a fixed byte length.
    let full = chunks[1..chunks.len() - 1]
        .iter()
        .filter(|c| c.token_count.unwrap() >= 400)
        .count();
    assert!(
        full * 10 >= (chunks.len() - 2) * 9,
        "{full} of {} pieces are full",
        chunks.len()
    );
    assert!(counter.count(chunks[1].content().unwrap()).unwrap() <= 512);
}

#[test]
fn cjk_without_punctuation_splits_on_characters_not_bytes() {
    let text: String = "東京都庁舎の展望台から富士山が見える日もある"
        .chars()
        .cycle()
        .take(34_000)
        .collect();
    assert!(text.len() > 100_000);
    let parsed = parse(DocumentType::Text, "cjk.txt", text.as_bytes());
    let chunks = chunk_and_check(&parsed, 256, 32, o200k());
    assert!(chunks.len() > 50);
}

#[test]
fn emoji_and_combining_marks_are_never_cut_inside_a_character() {
    let parsed = parse(DocumentType::Markdown, "emoji.md", &fixture("emoji.md"));
    for max in [4, 5, 6, 8, 12] {
        let chunks = chunk_and_check(&parsed, max, max / 2, cl100k());
        assert!(chunks.len() > 5);
    }
}

#[test]
fn crlf_and_lone_cr_files_keep_their_line_endings() {
    let crlf = "# Title\r\n\r\nFirst paragraph\r\ncontinues.\r\n\r\n## Sub\r\n\r\n- item one\r\n- item two\r\n";
    let parsed = parse_md(crlf);
    let chunks = chunk_and_check(&parsed, 64, 8, cl100k());
    assert_eq!(chunks[0].content(), Some("# Title"));
    assert_eq!(chunks[1].content(), Some("First paragraph\r\ncontinues."));
    assert_eq!(chunks[3].content(), Some("- item one\r\n- item two"));

    let lone_cr = "First paragraph\rstill first.\r\rSecond paragraph.\r";
    let parsed = parse(DocumentType::Text, "old-mac.txt", lone_cr.as_bytes());
    assert_eq!(parsed.blocks.len(), 2);
    assert_eq!(
        parsed.block_text(&parsed.blocks[0]),
        Some("First paragraph\rstill first.")
    );
    chunk_and_check(&parsed, 64, 8, cl100k());
    let parsed = parse_md(lone_cr);
    chunk_and_check(&parsed, 8, 2, cl100k());
}

#[test]
fn empty_and_whitespace_only_documents_give_no_chunks() {
    for name in ["empty.md", "whitespace.md"] {
        let parsed = parse(DocumentType::Markdown, name, &fixture(name));
        assert!(parsed.blocks.is_empty(), "{name}");
        assert!(chunks_of(&parsed, 64, 8).is_empty(), "{name}");
    }
    let parsed = parse(DocumentType::Text, "w.txt", b" \n\t\n");
    assert!(chunks_of(&parsed, 64, 8).is_empty());
}

#[test]
fn a_byte_order_mark_stays_in_the_text_but_in_no_chunk() {
    let parsed = parse(DocumentType::Markdown, "bom.md", &fixture("bom.md"));
    assert!(parsed.document.text.starts_with('\u{feff}'));
    let chunks = chunk_and_check(&parsed, 64, 8, cl100k());
    assert_eq!(chunks[0].span, Some(Span::new(3, 22)));
    assert_eq!(chunks[0].content(), Some("# Title after a BOM"));
    let parsed = parse(DocumentType::Text, "bom.txt", "\u{feff}Hello.".as_bytes());
    assert_eq!(parsed.blocks[0].span, Span::new(3, 9));
}

#[test]
fn an_oversize_heading_is_split_and_its_first_piece_is_the_heading_chunk() {
    let title = "A very long heading that keeps going with many words about chunking ".repeat(6);
    let text = format!("## {title}\n\nBody.\n");
    let parsed = parse_md(&text);
    let chunks = chunk_and_check(&parsed, 16, 4, cl100k());
    assert_eq!(kinds(&chunks)[0], "heading");
    assert!(chunks[0].content().unwrap().starts_with("## A very long"));
    assert_eq!(chunks[0].metadata["level"], 2);
    assert!(chunks.len() > 3);
    // The 414-character title is carried cut to 200 characters, its first 199 and an ellipsis.
    let carried: String = title.chars().take(199).collect::<String>() + "…";
    assert_eq!(carried.chars().count(), HeadingAwareChunker::MAX_PATH_TITLE_CHARS);
    for chunk in &chunks[1..] {
        assert_eq!(chunk.metadata_str("kind"), Some("body"));
        assert_eq!(chunk.parent_id.as_ref(), Some(&chunks[0].id));
        assert_eq!(chunk.metadata["heading_path"][0].as_str().unwrap(), carried);
    }
}

#[test]
fn oversize_prose_splits_on_sentences_first() {
    let text = "# S\n\nThe first sentence is here. The second sentence follows it. A third one ends the paragraph.";
    let parsed = parse_md(text);
    let chunks = chunk_and_check(&parsed, 8, 0, cl100k());
    let bodies: Vec<&str> = chunks[1..].iter().map(|c| c.content().unwrap()).collect();
    assert_eq!(
        bodies,
        [
            "The first sentence is here.",
            "The second sentence follows it.",
            "A third one ends the paragraph."
        ]
    );
}

#[test]
fn invalid_configurations_are_rejected_at_construction() {
    let err = HeadingAwareChunker::new(0, 0, cl100k()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid chunker configuration: max_tokens must be at least 1"
    );
    let err = HeadingAwareChunker::new(64, 64, cl100k()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid chunker configuration: overlap_tokens (64) must be below max_tokens (64)"
    );
    let chunker = HeadingAwareChunker::new(64, 63, cl100k()).unwrap();
    assert_eq!((chunker.max_tokens(), chunker.overlap_tokens()), (64, 63));
    assert_eq!(chunker.counter().name(), "tiktoken:cl100k_base");
}

fn doc_with(text: &str, blocks: Vec<Block>) -> ParsedDocument {
    let document = Document {
        id: "bad".into(),
        corpus_id: "c".into(),
        source_uri: "mem".into(),
        text: text.into(),
    };
    ParsedDocument::new(document, blocks)
}

#[test]
fn malformed_blocks_are_errors_naming_document_and_block() {
    let chunker = HeadingAwareChunker::new(64, 0, cl100k()).unwrap();
    let cases = [
        (
            vec![Block::new(BlockType::Paragraph, Span::new(0, 99))],
            "document bad: block 0: span 0..99 is outside the 6-byte text",
        ),
        (
            vec![Block::new(BlockType::Paragraph, Span::new(0, 1))],
            "document bad: block 0: span 0..1 splits a character",
        ),
        (
            vec![
                Block::new(BlockType::Paragraph, Span::new(0, 4)),
                Block::new(BlockType::Paragraph, Span::new(3, 6)),
            ],
            "document bad: block 1: span 3..6 overlaps the previous block, which ends at 4",
        ),
        (
            vec![Block::new(BlockType::Paragraph, Span::new(4, 3))],
            "document bad: block 0: span 4..3 is reversed",
        ),
        (
            vec![Block {
                level: None,
                ..Block::heading(HeadingLevel::H1, "t", Span::new(0, 6))
            }],
            "document bad: block 0: heading block has no level",
        ),
    ];
    for (blocks, message) in cases {
        let err = chunker.chunk_document(&ctx(), &doc_with("é abc", blocks)).unwrap_err();
        assert!(matches!(err, ChunkError::MalformedBlock { .. }));
        assert_eq!(err.to_string(), message);
    }
}

#[test]
fn a_budget_below_one_character_is_an_error_not_a_panic() {
    // One emoji is several tokens: a budget of 1 cannot hold it without cutting the character.
    let parsed = parse_md("🦀🦀🦀");
    let err = HeadingAwareChunker::new(1, 0, cl100k())
        .unwrap()
        .chunk_document(&ctx(), &parsed)
        .unwrap_err();
    assert!(err.to_string().contains("max_tokens 1 is too small"), "{err}");
}

#[test]
fn the_async_chunker_matches_the_sync_call_and_is_healthy() {
    let parsed = parse(DocumentType::Markdown, "all_blocks.md", &fixture("all_blocks.md"));
    let chunker = HeadingAwareChunker::new(64, 8, cl100k()).unwrap();
    let via_trait = pollster::block_on(Chunker::chunk(&chunker, &ctx(), &parsed)).unwrap();
    assert_eq!(via_trait, chunker.chunk_document(&ctx(), &parsed).unwrap());
    assert_eq!(pollster::block_on(chunker.health()), Health::Healthy);
    let shared: Arc<dyn Chunker> = Arc::new(chunker);
    assert!(!pollster::block_on(shared.chunk(&ctx(), &parsed)).unwrap().is_empty());
}

#[test]
fn both_tokenizers_count_exactly_and_differ_where_they_should() {
    let parsed = parse(DocumentType::Markdown, "cjk.md", &fixture("cjk.md"));
    let cl = chunk_and_check(&parsed, 512, 0, cl100k());
    let o2 = chunk_and_check(&parsed, 512, 0, o200k());
    assert_eq!(cl.len(), o2.len());
    let total = |chunks: &[rag_core::Chunk]| chunks.iter().map(|c| c.token_count.unwrap()).sum::<usize>();
    // o200k has far more CJK tokens, so the same text costs fewer of them.
    assert!(total(&o2) < total(&cl), "{} vs {}", total(&o2), total(&cl));
}

#[test]
fn foreign_parsers_blocks_with_whitespace_are_trimmed_and_blank_ones_dropped() {
    let text = "  Title  \n\n   \n\n  body text  ";
    let parsed = doc_with(
        text,
        vec![
            Block::heading(HeadingLevel::H1, " Title ", Span::new(0, 10)),
            Block::new(BlockType::Paragraph, Span::new(10, 15)),
            Block::new(BlockType::Paragraph, Span::new(15, text.len())),
        ],
    );
    check_blocks(&parsed);
    let chunks = chunk_and_check(&parsed, 32, 4, cl100k());
    assert_eq!(chunks.len(), 2);
    assert_eq!(chunks[0].content(), Some("Title"));
    assert_eq!(chunks[1].content(), Some("body text"));
    assert_eq!(chunks[1].metadata["heading_path"], json!(["Title"]));
}

/// Counts like cl100k, making the additivity promise if `promise`.
fn spy(promise: bool) -> SpyCounter<TiktokenCounter> {
    SpyCounter::new(TiktokenCounter::cl100k()).promising(promise)
}

#[test]
fn a_counter_that_fails_on_any_call_is_a_chunk_error_naming_the_document_and_offset() {
    // Small budgets, overlap and an oversize heading, so headings, units, hard splits, overlap
    // tails, gaps and flush counts all call the counter; every call is made to fail once.
    let mut text = String::from_utf8(fixture("all_blocks.md")).unwrap();
    text.push_str("\n\n# ");
    text.push_str(&"A heading far longer than the budget. ".repeat(6));
    text.push_str("\n\n");
    text.push_str(&"averyveryverylongwordwithoutanybreak".repeat(8));
    text.push('\n');
    let parsed = parse_md(&text);
    for promise in [false, true] {
        let calls = {
            let counter = Arc::new(spy(promise));
            HeadingAwareChunker::new(24, 6, counter.clone())
                .unwrap()
                .chunk_document(&ctx(), &parsed)
                .unwrap();
            counter.calls()
        };
        assert!(calls > 50, "{calls} calls");
        for fail_at in 1..=calls {
            let chunker = HeadingAwareChunker::new(24, 6, Arc::new(spy(promise).failing_at(fail_at))).unwrap();
            let err = chunker.chunk_document(&ctx(), &parsed).unwrap_err();
            let ChunkError::TokenCount {
                document_id,
                offset: Some(offset),
                source,
            } = &err
            else {
                panic!("call {fail_at}: {err:?}");
            };
            assert_eq!(document_id.as_str(), "doc");
            assert!(*offset < text.len() && text.is_char_boundary(*offset), "{offset}");
            assert_eq!(source, &TokenizerError::new("flaky", format!("call {fail_at} refused")));
            assert_eq!(
                err.to_string(),
                format!(
                    "document doc: counting the text at byte {offset}: tokenizer flaky failed: call {fail_at} refused"
                )
            );
        }
    }
}

#[test]
fn a_chunker_whose_counter_fails_is_unhealthy() {
    let chunker = HeadingAwareChunker::new(64, 8, Arc::new(spy(false).failing_at(1))).unwrap();
    assert_eq!(
        pollster::block_on(chunker.health()),
        Health::Unhealthy("tokenizer flaky failed: call 1 refused".into())
    );
    assert_eq!(pollster::block_on(chunker.health()), Health::Healthy);
}

#[test]
fn the_default_chunker_is_512_64_cl100k_and_the_builders_keep_new_working() {
    let chunker = HeadingAwareChunker::default();
    assert_eq!(
        (chunker.max_tokens(), chunker.overlap_tokens(), chunker.counter().name()),
        (512, 64, "tiktoken:cl100k_base")
    );
    let parsed = parse(DocumentType::Markdown, "all_blocks.md", &fixture("all_blocks.md"));
    let explicit = HeadingAwareChunker::new(512, 64, cl100k()).unwrap();
    assert_eq!(
        chunker.chunk_document(&ctx(), &parsed).unwrap(),
        explicit.chunk_document(&ctx(), &parsed).unwrap()
    );

    // One default overlap for every budget: 64, or an eighth of a smaller budget.
    assert_eq!(
        HeadingAwareChunker::DEFAULT_OVERLAP_TOKENS,
        HeadingAwareChunker::default_overlap_tokens(HeadingAwareChunker::DEFAULT_MAX_TOKENS)
    );
    for (max, overlap) in [(1, 0), (10, 1), (100, 12), (512, 64), (4096, 64)] {
        let chunker = HeadingAwareChunker::default().with_max_tokens(max).unwrap();
        assert_eq!((chunker.max_tokens(), chunker.overlap_tokens()), (max, overlap));
    }
    let err = HeadingAwareChunker::default().with_max_tokens(0).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid chunker configuration: max_tokens must be at least 1"
    );

    let built = HeadingAwareChunker::default()
        .with_budget(16, 4)
        .unwrap()
        .with_counter(o200k());
    let by_new = HeadingAwareChunker::new(16, 4, o200k()).unwrap();
    assert_eq!(format!("{built:?}"), format!("{by_new:?}"));
    assert_eq!(
        built.chunk_document(&ctx(), &parsed).unwrap(),
        by_new.chunk_document(&ctx(), &parsed).unwrap()
    );

    for (max, overlap, message) in [
        (0, 0, "invalid chunker configuration: max_tokens must be at least 1"),
        (
            8,
            8,
            "invalid chunker configuration: overlap_tokens (8) must be below max_tokens (8)",
        ),
    ] {
        let err = HeadingAwareChunker::default().with_budget(max, overlap).unwrap_err();
        assert_eq!(err.to_string(), message);
        let err = HeadingAwareChunker::new(max, overlap, cl100k()).unwrap_err();
        assert_eq!(err.to_string(), message);
    }
}

#[test]
fn every_chunk_names_the_tokenizer_of_its_count_in_its_json() {
    let parsed = parse(DocumentType::Markdown, "cjk.md", &fixture("cjk.md"));
    for (counter, name) in [(cl100k(), "tiktoken:cl100k_base"), (o200k(), "tiktoken:o200k_base")] {
        let chunks = chunk_and_check(&parsed, 64, 8, counter);
        for chunk in &chunks {
            let line = serde_json::to_value(chunk).unwrap();
            assert_eq!(line["tokenizer"], name);
            let back: rag_core::Chunk = serde_json::from_value(line).unwrap();
            assert_eq!(&back, chunk);
        }
    }
}

/// Every chunk start and its kind of boundary, for the tests of where chunks start: text before
/// the start, up to 20 bytes.
fn starts(text: &str, chunks: &[rag_core::Chunk]) -> Vec<(String, String)> {
    chunks
        .iter()
        .map(|c| {
            let at = c.span.unwrap().start;
            let before: String = text[..at]
                .chars()
                .rev()
                .take(20)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            (before, c.content().unwrap().chars().take(30).collect())
        })
        .collect()
}

#[test]
fn overlap_starts_at_a_sentence_not_at_a_wrapped_line_when_a_sentence_start_fits() {
    // Prose wrapped at a line width, as Markdown is: every line start is a UAX #29 sentence start,
    // but only those after a full stop start a sentence.
    let mut paragraph = String::new();
    for i in 0..40 {
        paragraph.push_str(&format!(
            "Sentence {i} tells a reader about chunk\nboundaries and how the overlap\nstarts. "
        ));
    }
    let text = format!("# Wrapped\n\n{paragraph}\n");
    let parsed = parse_md(&text);
    let chunks = chunk_and_check(&parsed, 96, 32, cl100k());
    let mut overlaps = 0;
    for pair in chunks[1..].windows(2) {
        let (a, b) = (pair[0].span.unwrap(), pair[1].span.unwrap());
        if b.start < a.end {
            overlaps += 1;
            assert!(
                text[..b.start].ends_with(". ") && text[b.start..].starts_with("Sentence "),
                "overlap starts mid-sentence: {:?}",
                &text[b.start..a.end]
            );
        }
        // Units are sentences, not lines: every chunk starts at a sentence.
        assert!(text[b.start..].starts_with("Sentence "), "{:?}", pair[1].content());
    }
    assert!(
        overlaps * 2 >= chunks.len(),
        "{overlaps} overlaps in {} chunks",
        chunks.len()
    );
}

#[test]
fn an_oversize_wrapped_paragraph_splits_at_sentences_then_lines() {
    // The second sentence starts on the first line: cut at lines, the first chunk would end inside
    // it ("The dog").
    let text = "# S\n\nThe cat sat on the mat. The dog\nslept by the door all day long.\n";
    let chunks = chunk_and_check(&parse_md(text), 14, 0, cl100k());
    let bodies: Vec<&str> = chunks[1..].iter().map(|c| c.content().unwrap()).collect();
    assert_eq!(
        bodies,
        ["The cat sat on the mat.", "The dog\nslept by the door all day long."]
    );
    // A sentence longer than the budget is cut at its lines before any word.
    let text = "# S\n\nOne sentence that keeps going on\nand on over four lines of\nwrapped prose with no\nend in sight at all\n";
    let chunks = chunk_and_check(&parse_md(text), 9, 0, cl100k());
    assert!(chunks.len() > 2);
    for chunk in &chunks[1..] {
        let start = chunk.span.unwrap().start;
        assert!(
            text[..start].ends_with('\n'),
            "{:?} starts inside a line",
            chunk.content()
        );
    }
}

#[test]
fn overlap_never_starts_inside_a_code_block_the_next_chunk_does_not_continue() {
    // The Docker docs' case: a code block, then prose; the next chunk's overlap once began with
    // the closing fence, which a renderer takes for an opening one.
    let mut text = String::from("# Run\n\n");
    for i in 0..12 {
        text.push_str(&format!(
            "Step {i} runs a container.\n\n```console\n$ docker run --rm image-{i}\nok\n```\n\nWe set nothing about memory in step {i}.\n\n"
        ));
    }
    let parsed = parse_md(&text);
    for (max, overlap) in [(40, 16), (64, 32), (100, 48)] {
        let chunks = chunk_and_check(&parsed, max, overlap, cl100k());
        for (before, start) in starts(&text, &chunks) {
            assert!(
                !start.starts_with("```\n"),
                "a chunk starts with a closing fence: {before:?} | {start:?}"
            );
            assert!(
                !start.starts_with("$ docker") && !start.starts_with("ok\n"),
                "{before:?} | {start:?}"
            );
        }
        let overlapping = chunks
            .windows(2)
            .filter(|p| p[1].span.unwrap().start < p[0].span.unwrap().end)
            .count();
        assert!(overlapping > 0, "{max}/{overlap}: no overlap at all");
    }
}

#[test]
fn a_long_code_block_keeps_its_fence_lines_with_code() {
    let lines = numbered(80, |i| format!("echo line {i}\n"));
    let text = format!("## Script\n\n```sh\n{lines}```\n\nAfter the script.\n");
    let parsed = parse_md(&text);
    for max in [8, 12, 16, 24, 40] {
        // `chunk_and_check` checks no chunk starts with the closing fence or ends with the opening
        // one; the split lines still start at line starts.
        let chunks = chunk_and_check(&parsed, max, max / 4, cl100k());
        assert!(
            chunks
                .iter()
                .any(|c| c.content().unwrap().starts_with("```sh\necho line 0"))
        );
        assert!(
            chunks
                .iter()
                .any(|c| c.content().unwrap().contains("echo line 79\n```"))
        );
    }
}

#[test]
fn a_crlf_code_block_over_budget_keeps_its_closing_fence_with_code() {
    // Found by the property test: with CRLF line ends the last line of the block is "```" after a
    // "\r\n", and a forced cut once left the closing fence to open the next chunk.
    let text =
        "```text\r\n# chunk.\r\nTi\u{1ebf}ng \u{1f469}\u{200d}\u{1f469}\u{200d}\u{1f467}\u{200d}\u{1f466}\r\n```";
    let parsed = parse_md(text);
    for (max, overlap) in [(20, 0), (12, 0), (16, 4), (24, 8)] {
        let chunks = chunk_and_check(&parsed, max, overlap, cl100k());
        for (before, start) in starts(text, &chunks) {
            assert!(
                !start.starts_with("```") || before.is_empty(),
                "{max}/{overlap}: {before:?} | {start:?}"
            );
        }
    }
}

/// The chunks of `text` with headings folded, each as (kind, heading_path, content).
fn folded(text: &str, max: usize, overlap: usize) -> Vec<(String, Vec<String>, String)> {
    let chunker = HeadingAwareChunker::new(max, overlap, cl100k())
        .unwrap()
        .with_fold_headings(true);
    invariants::check_with(&chunker, &parse_md(text))
        .iter()
        .map(|c| {
            let path = c.metadata["heading_path"].as_array().unwrap();
            (
                c.metadata_str("kind").unwrap().to_owned(),
                path.iter().map(|t| t.as_str().unwrap().to_owned()).collect(),
                c.content().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn folded_headings_start_the_first_body_chunk_of_their_section() {
    let text =
        "# run\n\n## Options\n\nRun a command in a new container.\n\n## Examples\n\nRun it.\n\n### Empty\n\n# Next\n";
    let chunks = folded(text, 64, 8);
    let expected = [
        (
            "body",
            vec!["run", "Options"],
            "# run\n\n## Options\n\nRun a command in a new container.",
        ),
        ("body", vec!["run", "Examples"], "## Examples\n\nRun it."),
        // No body before a heading that is not deeper, nor before the end: nothing to fold into.
        ("heading", vec!["run", "Examples"], "### Empty"),
        ("heading", vec![], "# Next"),
    ];
    let got: Vec<(&str, Vec<&str>, &str)> = chunks
        .iter()
        .map(|(k, p, c)| (k.as_str(), p.iter().map(String::as_str).collect(), c.as_str()))
        .collect();
    assert_eq!(got, expected);
    // The default keeps one chunk per heading.
    let seed = chunk_and_check(&parse_md(text), 64, 8, cl100k());
    assert_eq!(seed.len(), 7);
}

#[test]
fn a_folded_heading_that_does_not_fit_with_its_body_stays_alone_and_overlap_skips_the_heading() {
    let heading = "# Configuring the container runtime".to_owned();
    // Sentences of about 17 tokens: with the heading, over a budget of 20; alone, within it.
    let body = numbered(30, |i| {
        format!("Sentence {i} of the body says what the runtime does with memory and swap.\n")
    });
    let text = format!("{heading}\n\n{body}");
    let max = 20;
    let chunks = folded(&text, max, 8);
    assert_eq!(
        chunks[0].2, heading,
        "the heading cannot fold into a chunk of {max} tokens"
    );
    assert_eq!(chunks[0].0, "heading");
    assert!(
        chunks[1..]
            .iter()
            .all(|(kind, _, content)| kind == "body" && !content.contains("title"))
    );
    // With room for it, the heading starts the first body chunk, and no overlap repeats it.
    let chunks = folded(&text, 80, 24);
    assert!(chunks[0].2.starts_with(&format!("{heading}\n\nSentence 0")));
    assert!(chunks.iter().all(|(kind, _, _)| kind == "body"));
    assert!(chunks[1..].iter().all(|(_, _, content)| !content.contains("title")));
    assert!(chunks.len() > 2);
}

#[test]
fn a_code_block_that_fits_alone_is_not_cut_when_its_trailing_break_would_not_fit() {
    // Found by the property test (o200k, 61 tokens): the block is 61 tokens alone and 62 counted
    // with the blank line after it, and was once split at its lines for that one token.
    let text = "a \u{65e5}\u{672c}\u{8a9e} x=1;\n\n```text\n# supercalifragilisticexpialidocious [link](http://example.invalid) a a \u{1f3f3}\u{fe0f}\u{200d}\u{1f308}.\n\n\n```text\n# the [link](http://example.invalid) budget!\n\u{1f469}\u{200d}\u{1f469}\u{200d}\u{1f467}\u{200d}\u{1f466} heading\n```\n\na \u{5317}\u{4eac}\u{662f}\u{4e2d}\u{534e}\u{4eba}\u{6c11}\u{5171}\u{548c}\u{56fd}\u{7684}\u{9996}\u{90fd} #hash heading token x=1; Vi\u{1ec7}t x=1;\n";
    let parsed = parse(DocumentType::Markdown, "g.md", text.as_bytes());
    let code = parsed
        .blocks
        .iter()
        .find(|b| b.block_type == rag_core::BlockType::Code)
        .unwrap();
    let code = &text[code.span.range()];
    let alone = o200k().count(code).unwrap();
    for max in [alone, alone + 1] {
        let chunks = chunk_and_check(&parsed, max, 0, o200k());
        assert!(
            chunks.iter().any(|c| c.content().unwrap().contains(code)),
            "{max}: the block is cut"
        );
    }
}

#[test]
fn an_overlap_reaches_back_to_the_sentence_its_window_cuts_when_the_next_start_keeps_too_little() {
    // The chunk ends with a long sentence and a short one: the longest tail within the overlap
    // that starts at a sentence is the short one alone, so the overlap reaches back to the start
    // of the long one (within twice the overlap), the passage an overlap exists to repeat.
    let filler = "Filler words pad this paragraph so that it takes about thirty tokens of room in the chunk before the interesting part.";
    let long = "The refund window closes thirty days after delivery unless the order was placed during the winter sale period.";
    let text = format!("# Policy\n\n{filler}\n\n{long} See below.\n\n{filler}\n");
    let parsed = parse_md(&text);
    let counter = cl100k();
    let long_tokens = counter.count(long).unwrap();
    let overlap = long_tokens * 3 / 4;
    let chunks = chunk_and_check(&parsed, 50, overlap, counter);
    let starts: Vec<&str> = chunks.iter().map(|c| c.content().unwrap()).collect();
    assert!(
        starts
            .iter()
            .any(|s| s.starts_with("The refund window") && s.contains("Filler")),
        "{overlap} of {long_tokens}: {starts:#?}"
    );
}
