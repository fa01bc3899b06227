//! The chunker's promises as one check, shared by the integration tests.
//!
//! It runs the contract suite (`rag_contract::chunker`) and adds what is specific to the
//! heading-aware chunker: id format, chunks never whitespace-only, spans moving forward, overlap
//! only between body chunks of one section, parents and heading paths consistent, and the
//! parser's own promises on the blocks.

#![allow(dead_code, clippy::unwrap_used)]

use std::sync::Arc;

use rag_chunker::{DocumentType, HeadingAwareChunker, TiktokenCounter, parse_document};
use rag_contract::chunker::{Budget, OutputBound, check_chunker, output_linear_in_input};
use rag_core::{BlockType, Chunk, CorpusId, DocumentId, ParsedDocument, RequestContext, SourceBytes, TokenCounter};

/// The context every test runs in: a principal with labels, so label propagation is checked.
pub(crate) fn ctx() -> RequestContext {
    RequestContext::new(
        "acme",
        rag_core::Principal {
            id: "tester".into(),
            acl_labels: vec!["staff".into(), "eu".into()],
        },
    )
}

pub(crate) fn cl100k() -> Arc<dyn TokenCounter> {
    Arc::new(TiktokenCounter::cl100k())
}

pub(crate) fn o200k() -> Arc<dyn TokenCounter> {
    Arc::new(TiktokenCounter::new("o200k_base").unwrap())
}

pub(crate) fn parse(doc_type: DocumentType, source_uri: &str, bytes: &[u8]) -> ParsedDocument {
    let (id, corpus) = (DocumentId::from("doc"), CorpusId::from("corpus"));
    let source = SourceBytes {
        document_id: &id,
        corpus_id: &corpus,
        source_uri,
        bytes,
    };
    parse_document(&ctx(), doc_type, source).unwrap()
}

pub(crate) fn parse_md(text: &str) -> ParsedDocument {
    parse(DocumentType::Markdown, "mem.md", text.as_bytes())
}

/// Chunks `parsed` in both modes (headings as chunks of their own, and folded) and checks every
/// promise of each; returns the chunks of the first mode for further assertions.
pub(crate) fn chunk_and_check(
    parsed: &ParsedDocument,
    max: usize,
    overlap: usize,
    counter: Arc<dyn TokenCounter>,
) -> Vec<Chunk> {
    let chunker = HeadingAwareChunker::new(max, overlap, counter).unwrap();
    check_with(&chunker.clone().with_fold_headings(true), parsed);
    check_with(&chunker, parsed)
}

/// `chunker`'s chunks of `parsed`, every promise checked.
pub(crate) fn check_with(chunker: &HeadingAwareChunker, parsed: &ParsedDocument) -> Vec<Chunk> {
    check_blocks(parsed);
    let (max, counter) = (chunker.max_tokens(), chunker.counter().as_ref());
    let report = check_chunker(
        chunker,
        &ctx(),
        parsed,
        Some(Budget {
            max_tokens: max,
            counter,
        }),
    );
    assert!(report.passed(), "{report}");
    let chunks = chunker.chunk_document(&ctx(), parsed).unwrap();
    if chunker.fold_headings() {
        check_folded_chunks(parsed, &chunks, max, counter);
    } else {
        check_chunks(parsed, &chunks, max, counter);
    }
    check_fences(parsed, &chunks, max, counter);
    let bound = output_bound(chunker, parsed);
    let broken = output_linear_in_input(parsed, &chunks, bound.max_repetition, bound.max_overhead);
    assert!(broken.is_empty(), "{broken:?}");
    chunks
}

/// The chunks of a source file at `max` tokens (no overlap), after the contract suite's checks
/// and those of code: every chunk an exact slice within budget with its exact count, spans in
/// order without overlap, every byte that is not whitespace in a chunk (a leading byte-order
/// mark excepted, as everywhere).
pub(crate) fn check_code(parsed: &ParsedDocument, max: usize) -> Vec<Chunk> {
    let chunker = HeadingAwareChunker::new(max, 0, cl100k()).unwrap();
    let counter = chunker.counter().as_ref();
    let report = check_chunker(
        &chunker,
        &ctx(),
        parsed,
        Some(Budget {
            max_tokens: max,
            counter,
        }),
    );
    assert!(report.passed(), "{report}");
    let chunks = chunker.chunk_document(&ctx(), parsed).unwrap();
    let code = parsed.document.text.as_str();
    let mut covered = code.len() - code.trim_start_matches('\u{feff}').len();
    for chunk in &chunks {
        let span = chunk.span.unwrap();
        assert_eq!(chunk.content(), Some(&code[span.range()]));
        assert!(chunk.token_count.unwrap() <= max, "{chunk:?}");
        assert_eq!(
            counter.count(chunk.content().unwrap()).unwrap(),
            chunk.token_count.unwrap()
        );
        assert!(span.start >= covered, "overlap at {}", span.start);
        assert!(
            code[covered..span.start].trim().is_empty(),
            "lost {:?}",
            &code[covered..span.start]
        );
        assert!(chunk.kind().is_some_and(rag_core::ChunkKind::is_code), "{chunk:?}");
        covered = span.end;
    }
    assert!(code[covered..].trim().is_empty(), "lost the tail");
    chunks
}

/// The output-size bound the chunker documents, for `chunker` on `parsed` in [`ctx`].
pub(crate) fn output_bound(chunker: &HeadingAwareChunker, parsed: &ParsedDocument) -> OutputBound {
    OutputBound::heading_aware(
        chunker.overlap_tokens(),
        HeadingAwareChunker::MAX_PATH_TITLE_CHARS,
        chunker.counter().name(),
        &ctx(),
        &parsed.document,
    )
}

/// The bytes of `chunks` as JSON Lines, as `ragctl chunk --format jsonl` writes them.
pub(crate) fn jsonl_bytes(chunks: &[Chunk]) -> usize {
    chunks.iter().map(|c| serde_json::to_string(c).unwrap().len() + 1).sum()
}

/// The parser promises: spans on character boundaries, increasing, not overlapping, not covering
/// a leading byte-order mark; every non-whitespace character in some block; only headings have a
/// level.
pub(crate) fn check_blocks(parsed: &ParsedDocument) {
    let text = &parsed.document.text;
    let bom = if text.starts_with('\u{feff}') { 3 } else { 0 };
    let mut covered = vec![false; text.len()];
    let mut previous_end = bom;
    for (i, block) in parsed.blocks.iter().enumerate() {
        let span = block.span;
        assert!(span.start <= span.end && span.end <= text.len(), "block {i}: {span:?}");
        assert!(
            text.is_char_boundary(span.start) && text.is_char_boundary(span.end),
            "block {i}: {span:?}"
        );
        assert!(
            span.start >= previous_end,
            "block {i} overlaps or goes backwards: {span:?}"
        );
        previous_end = span.end;
        assert_eq!(
            block.level.is_some(),
            block.block_type == BlockType::Heading,
            "block {i}"
        );
        covered[span.range()].fill(true);
    }
    for (offset, ch) in text.char_indices() {
        if offset < bom || ch.is_whitespace() {
            continue;
        }
        assert!(covered[offset], "byte {offset} ({ch:?}) is in no block");
    }
}

/// What the contract suite does not check.
pub(crate) fn check_chunks(parsed: &ParsedDocument, chunks: &[Chunk], max: usize, counter: &dyn TokenCounter) {
    let mut heading_levels: Vec<Option<u64>> = Vec::new();
    let mut last_heading: Option<usize> = None;
    for (i, chunk) in chunks.iter().enumerate() {
        check_chunk(parsed, chunks, i, max, counter);
        let kind = chunk.metadata_str("kind").unwrap();
        let path_len = chunk.metadata["heading_path"].as_array().unwrap().len();
        let span = chunk.span.unwrap();
        if i > 0 {
            let previous = chunks[i - 1].span.unwrap();
            if span.start < previous.end {
                // Overlap: only a body chunk repeats, and only a body chunk of the same section.
                assert_eq!(kind, "body", "chunk {i}");
                assert_eq!(chunks[i - 1].metadata_str("kind"), Some("body"), "chunk {i}");
                assert_eq!(
                    chunks[i - 1].parent_id,
                    chunk.parent_id,
                    "chunk {i} overlaps another section"
                );
            }
        }
        match kind {
            "heading" => {
                let level = chunk.metadata["level"].as_u64().unwrap();
                assert!((1..=6).contains(&level));
                if let Some(parent) = &chunk.parent_id {
                    let p = chunks.iter().position(|c| &c.id == parent).unwrap();
                    assert!(heading_levels[p].is_some_and(|pl| pl < level), "chunk {i}");
                    let parent_len = chunks[p].metadata["heading_path"].as_array().unwrap().len();
                    assert_eq!(path_len, parent_len + 1, "chunk {i}: heading_path is its ancestors");
                } else {
                    assert_eq!(path_len, 0, "chunk {i}: a top-level heading has an empty path");
                }
                heading_levels.push(Some(level));
                last_heading = Some(i);
            }
            "body" => {
                assert!(chunk.metadata.get("level").is_none());
                match last_heading {
                    Some(h) => {
                        assert_eq!(chunk.parent_id.as_ref(), Some(&chunks[h].id), "chunk {i}");
                        let heading_len = chunks[h].metadata["heading_path"].as_array().unwrap().len();
                        assert_eq!(
                            path_len,
                            heading_len + 1,
                            "chunk {i}: heading_path includes its section"
                        );
                    }
                    None => {
                        assert_eq!(chunk.parent_id, None, "chunk {i}");
                        assert_eq!(path_len, 0);
                    }
                }
                heading_levels.push(None);
            }
            other => panic!("chunk {i} has kind {other}"),
        }
    }
}

/// The open headings (level, title) after every heading block of `parsed` that starts before
/// `before`, the way the chunker keeps them: a heading closes those of its level or deeper, and a
/// blank one opens nothing.
fn open_headings(parsed: &ParsedDocument, before: usize) -> Vec<(u8, String)> {
    let mut open: Vec<(u8, String)> = Vec::new();
    for block in parsed.blocks.iter().filter(|b| b.block_type == BlockType::Heading) {
        if block.span.start >= before {
            break;
        }
        let level = block.level.unwrap().get();
        while open.last().is_some_and(|(top, _)| *top >= level) {
            open.pop();
        }
        let title = parsed.block_text(block).unwrap_or_default().trim();
        if !parsed.document.text[block.span.range()].trim().is_empty() {
            open.push((level, title.to_owned()));
        }
    }
    open
}

/// Whether a chunk's `heading_path` is the titles of `open` (a title longer than the path's limit
/// is compared by its presence only).
fn path_matches(chunk: &Chunk, open: &[(u8, String)]) -> bool {
    let path = chunk.metadata["heading_path"].as_array().unwrap();
    path.len() == open.len()
        && path.iter().zip(open).all(|(got, (_, title))| {
            title.chars().count() > HeadingAwareChunker::MAX_PATH_TITLE_CHARS || got.as_str() == Some(title.as_str())
        })
}

/// What the contract suite does not check, in fold mode: no parents; a body chunk's path is every
/// heading open at its end (the headings folded into it included); a heading chunk only where its
/// section is empty or it does not fit with the body's first block; overlap only between body
/// chunks of one section, never over a heading.
pub(crate) fn check_folded_chunks(parsed: &ParsedDocument, chunks: &[Chunk], max: usize, counter: &dyn TokenCounter) {
    let text = &parsed.document.text;
    for (i, chunk) in chunks.iter().enumerate() {
        check_chunk(parsed, chunks, i, max, counter);
        assert_eq!(chunk.parent_id, None, "chunk {i} has a parent in fold mode");
        let span = chunk.span.unwrap();
        match chunk.metadata_str("kind").unwrap() {
            "body" => {
                assert!(chunk.metadata.get("level").is_none());
                assert!(
                    path_matches(chunk, &open_headings(parsed, span.end)),
                    "chunk {i}: {chunk:?}"
                );
            }
            "heading" => {
                let index = parsed
                    .blocks
                    .iter()
                    .position(|b| {
                        b.block_type == BlockType::Heading && b.span.start <= span.start && span.start < b.span.end
                    })
                    .unwrap_or_else(|| panic!("heading chunk {i} starts in no heading"));
                let level = parsed.blocks[index].level.unwrap().get();
                assert_eq!(chunk.metadata["level"].as_u64(), Some(u64::from(level)));
                let mut ancestors = open_headings(parsed, span.start);
                ancestors.retain(|(l, _)| *l < level);
                assert!(
                    path_matches(chunk, &ancestors),
                    "chunk {i}: heading_path is its ancestors"
                );
                // It could not fold: the first body block of its section, if there is one, does
                // not fit with it (a margin for the chunker's estimate of the joins).
                let body = parsed.blocks[index + 1..]
                    .iter()
                    .take_while(|b| b.block_type != BlockType::Heading || b.level.unwrap().get() > level)
                    .find(|b| b.block_type != BlockType::Heading && !text[b.span.range()].trim().is_empty());
                if let Some(body) = body {
                    let together = counter.count(&text[span.start..body.span.end]).unwrap();
                    assert!(
                        together + 4 > max,
                        "heading chunk {i} fits with its body ({together} tokens of {max}): {:?}",
                        chunk.content()
                    );
                }
            }
            other => panic!("chunk {i} has kind {other}"),
        }
        if i > 0 && span.start < chunks[i - 1].span.unwrap().end {
            let previous = &chunks[i - 1];
            assert_eq!(chunk.metadata_str("kind"), Some("body"), "chunk {i}");
            assert_eq!(previous.metadata_str("kind"), Some("body"), "chunk {i}");
            assert_eq!(
                previous.metadata["heading_path"], chunk.metadata["heading_path"],
                "chunk {i}"
            );
            let previous_end = previous.span.unwrap().end;
            assert!(
                !parsed.blocks.iter().any(|b| b.block_type == BlockType::Heading
                    && b.span.start < previous_end
                    && b.span.start >= span.start),
                "chunk {i}'s overlap reaches over the start of a heading"
            );
        }
    }
}

/// What every chunk keeps in both modes: its id, source, content (an exact, non-blank slice),
/// exact count within budget, tokenizer, and a start after the previous chunk's.
fn check_chunk(parsed: &ParsedDocument, chunks: &[Chunk], i: usize, max: usize, counter: &dyn TokenCounter) {
    let chunk = &chunks[i];
    let text = &parsed.document.text;
    assert_eq!(chunk.id.as_str(), format!("{}#{i}", parsed.document.id));
    assert_eq!(chunk.source_uri.as_deref(), Some(parsed.document.source_uri.as_str()));
    let span = chunk.span.unwrap();
    let content = chunk.content().unwrap();
    assert_eq!(content, &text[span.range()]);
    assert!(!content.trim().is_empty(), "chunk {i} is whitespace-only");
    let tokens = counter.count(content).unwrap();
    assert_eq!(chunk.token_count, Some(tokens));
    assert_eq!(chunk.tokenizer.as_deref(), Some(counter.name()), "chunk {i}");
    assert!(tokens <= max, "chunk {i} has {tokens} tokens > {max}");
    if i > 0 {
        let previous = chunks[i - 1].span.unwrap();
        assert!(span.start > previous.start, "chunk {i} does not move forward");
    }
}

/// Fenced code blocks are cut only where they are over the budget: a code block that fits is in
/// one chunk whole, and no chunk starts with a closing fence or ends right after an opening one.
pub(crate) fn check_fences(parsed: &ParsedDocument, chunks: &[Chunk], max: usize, counter: &dyn TokenCounter) {
    let text = &parsed.document.text;
    let is_fence = |line: &str| {
        let line = line.trim_start();
        line.starts_with("```") || line.starts_with("~~~")
    };
    for block in parsed.blocks.iter().filter(|b| b.block_type == BlockType::Code) {
        let code = &text[block.span.range()];
        let lines: Vec<&str> = code.lines().collect();
        if !lines.first().is_some_and(|l| is_fence(l)) {
            continue;
        }
        let (start, end) = (block.span.start, block.span.end);
        let fits = counter.count(code).unwrap() <= max;
        let closing = lines
            .last()
            .filter(|l| lines.len() > 1 && is_fence(l))
            .map(|l| end - l.len());
        let opening_end = start + lines[0].len();
        for chunk in chunks {
            let span = chunk.span.unwrap();
            if fits {
                let cut = (start < span.start && span.start < end) || (start < span.end && span.end < end);
                assert!(
                    !cut,
                    "chunk {} cuts the code block at {start}..{end}, which fits",
                    chunk.id
                );
            }
            if let Some(closing) = closing {
                assert!(
                    !(span.start > start && span.start >= closing && span.start < end),
                    "chunk {} starts with the closing fence of {start}..{end}",
                    chunk.id
                );
            }
            if lines.len() > 2 {
                assert_ne!(span.end, opening_end, "chunk {} ends with an opening fence", chunk.id);
            }
        }
    }
}

/// A chunker's output on `parsed`, unchecked.
pub(crate) fn chunks_of(parsed: &ParsedDocument, max: usize, overlap: usize) -> Vec<Chunk> {
    HeadingAwareChunker::new(max, overlap, cl100k())
        .unwrap()
        .chunk_document(&ctx(), parsed)
        .unwrap()
}
