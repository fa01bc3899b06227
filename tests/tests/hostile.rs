//! Hostile input against the chunker and the packer, as libraries: each input gets a clear error or
//! a correct result (every contract rule holds), never a panic, a hang or silently lost data.
//!
//! Each input is as large as the failure it guards against needs (a 1 MB line, 50,000 table rows,
//! 100,000 identical chunks, 10 MB of words), except where a debug build would take more than a
//! few seconds; those cases say so and run at full size in the release contract report or the CLI
//! tests.
#![allow(clippy::unwrap_used, missing_docs)]

use std::sync::{Arc, OnceLock};

use rag_chunker::{DocumentType, HeadingAwareChunker, TiktokenCounter, parse_document};
use rag_contract::chunker::{Budget, OutputBound, check_chunker, output_linear_in_input};
use rag_contract::corpus;
use rag_contract::packer::{Dedup, PackerCase, PackerSpec, check_packer};
use rag_contract::reference::{self, priority_order};
use rag_contract::testing::SpyCounter;
use rag_core::{
    Chunk, ChunkError, CorpusId, DocumentId, DropReason, PackOrder, PackedContext, PackerError, ParseError,
    ParsedDocument, RequestContext, SelectionStrategy, SourceBytes, TokenCounter,
};
use rag_packer::{ContextPacker, PackerConfig};

fn counter() -> Arc<dyn TokenCounter> {
    static COUNTER: OnceLock<Arc<dyn TokenCounter>> = OnceLock::new();
    Arc::clone(COUNTER.get_or_init(|| Arc::new(TiktokenCounter::cl100k())))
}

fn ctx() -> RequestContext {
    RequestContext::local("acme")
}

fn parse(doc_type: DocumentType, uri: &str, bytes: &[u8]) -> Result<ParsedDocument, ParseError> {
    let (id, corpus) = (DocumentId::from(uri), CorpusId::from("hostile"));
    let source = SourceBytes {
        document_id: &id,
        corpus_id: &corpus,
        source_uri: uri,
        bytes,
    };
    parse_document(&ctx(), doc_type, source)
}

/// Parses, chunks with `max`/`overlap` tokens, checks every chunker rule; returns the chunks.
fn chunk_checked(doc_type: DocumentType, uri: &str, text: &str, max: usize, overlap: usize) -> Vec<Chunk> {
    let parsed = parse(doc_type, uri, text.as_bytes()).unwrap();
    chunks_checked(&parsed, max, overlap, counter())
}

/// Chunks `parsed` with `max`/`overlap` tokens of `counter`, checks every chunker rule; returns
/// the chunks.
fn chunks_checked(parsed: &ParsedDocument, max: usize, overlap: usize, counter: Arc<dyn TokenCounter>) -> Vec<Chunk> {
    let chunker = HeadingAwareChunker::new(max, overlap, Arc::clone(&counter)).unwrap();
    let budget = Budget {
        max_tokens: max,
        counter: counter.as_ref(),
    };
    let report = check_chunker(&chunker, &ctx(), parsed, Some(budget));
    assert!(report.passed(), "{report}");
    chunker.chunk_document(&ctx(), parsed).unwrap()
}

fn md(uri: &str, text: &str) -> Vec<Chunk> {
    chunk_checked(DocumentType::Markdown, uri, text, 128, 16)
}

fn kinds(chunks: &[Chunk], kind: &str) -> usize {
    chunks.iter().filter(|c| c.metadata_str("kind") == Some(kind)).count()
}

#[test]
fn empty_and_whitespace_only_files_have_no_chunks() {
    for doc_type in [DocumentType::Markdown, DocumentType::Text] {
        assert_eq!(chunk_checked(doc_type, "empty", &corpus::empty(), 64, 8), []);
        assert_eq!(chunk_checked(doc_type, "blank", &corpus::whitespace_only(), 64, 8), []);
    }
}

#[test]
fn a_one_megabyte_line_without_spaces_is_split_within_budget() {
    let line = corpus::long_line(1 << 20);
    let chunks = chunk_checked(DocumentType::Markdown, "line.md", &line, 512, 64);
    assert!(chunks.len() > 100, "{} chunks", chunks.len());
    let chunks = chunk_checked(DocumentType::Text, "line.txt", &line[..1 << 17], 128, 16);
    assert!(chunks.len() > 100);
}

#[test]
fn a_hundred_kilobytes_of_cjk_without_punctuation_is_split_within_budget() {
    let cjk = corpus::cjk(100_000);
    for doc_type in [DocumentType::Markdown, DocumentType::Text] {
        let chunks = chunk_checked(doc_type, "cjk", &cjk, 256, 32);
        assert!(chunks.len() > 50, "{} chunks", chunks.len());
    }
}

#[test]
fn emoji_sequences_and_combining_marks_survive_every_split_point() {
    // Every budget from 4 tokens (a character is at most 4) to 24 moves the cuts across the ZWJ
    // sequences and mark stacks; every chunk must still be an exact UTF-8 slice and nothing lost.
    let text = corpus::emoji_and_marks(3);
    for max in 4..=24 {
        for doc_type in [DocumentType::Markdown, DocumentType::Text] {
            chunk_checked(doc_type, "emoji", &text, max, max / 4);
        }
    }
}

#[test]
fn a_budget_smaller_than_one_character_is_a_clear_error() {
    let parsed = parse(DocumentType::Text, "emoji.txt", "👩\u{200d}👩\u{200d}👧".as_bytes()).unwrap();
    let chunker = HeadingAwareChunker::new(1, 0, counter()).unwrap();
    let err = chunker.chunk_document(&ctx(), &parsed).unwrap_err();
    assert!(matches!(err, ChunkError::InvalidConfig { .. }), "{err}");
    assert!(
        err.to_string().contains("'👩' at byte 0 of document emoji.txt"),
        "{err}"
    );
}

#[test]
fn crlf_and_lone_cr_line_endings_keep_headings_and_bytes() {
    let crlf = md("crlf.md", &corpus::crlf());
    assert_eq!(kinds(&crlf, "heading"), 2, "{crlf:#?}");
    assert!(crlf.iter().any(|c| c.content().is_some_and(|t| t.contains("\r\n"))));
    let cr = md("cr.md", &corpus::lone_cr());
    assert_eq!(kinds(&cr, "heading"), 2, "{cr:#?}");
    for text in [corpus::crlf(), corpus::lone_cr()] {
        let parsed = parse(DocumentType::Text, "eol.txt", text.as_bytes()).unwrap();
        assert!(
            parsed.blocks.len() >= 4,
            "paragraphs split at blank lines: {:#?}",
            parsed.blocks
        );
        chunk_checked(DocumentType::Text, "eol.txt", &text, 8, 2);
    }
}

#[test]
fn a_byte_order_mark_is_kept_in_the_text_and_out_of_every_chunk() {
    let chunks = md("bom.md", &corpus::bom());
    assert_eq!(chunks[0].span.unwrap().start, 3);
    assert_eq!(chunks[0].content(), Some("# Title"));
}

#[test]
fn invalid_utf8_names_the_file_and_byte_offset() {
    let (bytes, offset) = corpus::invalid_utf8();
    for doc_type in [DocumentType::Markdown, DocumentType::Text] {
        let err = parse(doc_type, "docs/bad.md", &bytes).unwrap_err();
        assert!(
            matches!(err, ParseError::InvalidUtf8 { offset: o, .. } if o == offset),
            "{err}"
        );
        assert_eq!(
            err.to_string(),
            format!("docs/bad.md: invalid UTF-8 at byte offset {offset}")
        );
    }
}

#[test]
fn a_binary_file_is_refused_as_invalid_utf8() {
    let err = parse(DocumentType::Markdown, "image.png.md", &corpus::binary(4096)).unwrap_err();
    assert_eq!(err.to_string(), "image.png.md: invalid UTF-8 at byte offset 0");
    // NUL and other control characters are valid UTF-8: chunked, not refused.
    md("controls.md", &corpus::control_characters());
}

#[test]
fn ten_thousand_headings() {
    let chunks = md("headings.md", &corpus::many_headings(10_000));
    assert_eq!(kinds(&chunks, "heading"), 10_000);
    assert_eq!(kinds(&chunks, "body"), 10_000);
}

#[test]
fn headings_nested_six_deep_and_skipping_levels() {
    let chunks = md("nested.md", &corpus::nested_skipping_headings());
    let heading = |title: &str| {
        chunks
            .iter()
            .find(|c| c.metadata_str("kind") == Some("heading") && c.content().is_some_and(|t| t.contains(title)))
            .unwrap()
    };
    assert_eq!(heading("Level 6").metadata["level"], 6);
    assert_eq!(heading("Level 6").parent_id, Some(heading("Level 5").id.clone()));
    // "# Skip to 1", "### Skip to 3", "###### Skip to 6": each skipped level parents to the last
    // smaller one.
    assert_eq!(heading("Skip to 6").parent_id, Some(heading("Skip to 3").id.clone()));
    assert_eq!(heading("Setext two").metadata["level"], 2);
}

#[test]
fn thousand_deep_block_quotes_and_lists() {
    let quotes = md("quotes.md", &corpus::nested_quotes(1_000));
    assert_eq!(quotes.len(), 2, "{quotes:#?}");
    // 1,000 levels on one line ("- - - ... item"); lists nested by indentation are 1 MB at this
    // depth and hit the chunker's recounting regression (see the tokenizer work test below), so
    // they run at depth 300 here.
    let inline = md("lists.md", &corpus::nested_lists_inline(1_000));
    assert!(!inline.is_empty());
    let mixed = md("mixed.md", &corpus::nested_quotes_and_lists(1_000));
    assert!(!mixed.is_empty());
    let indented = md("indented.md", &corpus::nested_lists(300));
    assert!(indented.len() > 1);
}

#[test]
fn a_fifty_thousand_row_table_splits_between_rows() {
    let text = corpus::table(50_000);
    let chunks = md("table.md", &text);
    assert!(chunks.len() > 100);
    for c in &chunks {
        let content = c.content().unwrap();
        assert!(content.starts_with('|') && content.ends_with('|'), "{content:?}");
    }
}

#[test]
fn a_five_thousand_line_code_block_has_no_headings_inside() {
    let chunks = md("code.md", &corpus::code_block(5_000));
    assert_eq!(
        kinds(&chunks, "heading"),
        1,
        "only `# Code`; `# not a heading` lines are code"
    );
    assert!(chunks.len() > 50);
}

#[test]
fn an_unterminated_fence_runs_to_the_end() {
    let chunks = md("fence.md", &corpus::unterminated_fence());
    assert_eq!(kinds(&chunks, "heading"), 1);
    assert!(chunks.last().unwrap().content().unwrap().ends_with("still code"));
}

#[test]
fn a_setext_heading_longer_than_the_budget_is_split() {
    let chunks = chunk_checked(
        DocumentType::Markdown,
        "setext.md",
        &corpus::long_setext_heading(300),
        32,
        4,
    );
    assert_eq!(chunks[0].metadata_str("kind"), Some("heading"));
    assert_eq!(kinds(&chunks, "heading"), 1);
    assert!(chunks.len() > 10);
    assert!(chunks[1..].iter().all(|c| c.parent_id == Some(chunks[0].id.clone())));
}

/// `bytes` of prose: words and a sentence end every twelve words, no line breaks.
fn prose(bytes: usize) -> String {
    let words = [
        "the", "chunker", "packs", "body", "text", "under", "its", "heading", "within", "budget",
    ];
    let mut text = String::new();
    let mut i = 0;
    while text.len() < bytes {
        text.push_str(words[i % words.len()]);
        text.push_str(if i % 12 == 11 { ". " } else { " " });
        i += 1;
    }
    text.trim_end().to_owned()
}

#[test]
fn output_stays_linear_in_the_input_with_a_giant_heading_or_setext_paragraph() {
    // The inputs of docs/performance.md at a tenth of their size: an 80 KB ATX heading, and 100 KB
    // of prose closed by `---` (a setext heading). Every piece of the split heading carries its title in
    // `heading_path`; were the title not bounded, 125 pieces would each repeat all 80 KB.
    let cases = [
        ("atx.md", format!("# {}\n\nBody under it.\n", prose(80_000))),
        ("setext.md", format!("{}\n---\n\nBody under it.\n", prose(100_000))),
    ];
    for (name, text) in &cases {
        for (max, overlap) in [(128, 0), (128, 16)] {
            let chunks = chunk_checked(DocumentType::Markdown, name, text, max, overlap);
            let parsed = parse(DocumentType::Markdown, name, text.as_bytes()).unwrap();
            let chunker = HeadingAwareChunker::new(max, overlap, counter()).unwrap();
            let bound = OutputBound::heading_aware(
                overlap,
                HeadingAwareChunker::MAX_PATH_TITLE_CHARS,
                chunker.counter().name(),
                &ctx(),
                &parsed.document,
            );
            let output: usize = chunks.iter().map(|c| serde_json::to_string(c).unwrap().len() + 1).sum();
            assert!(
                output <= bound.max_jsonl_bytes(text.len(), chunks.len()),
                "{name} {max}/{overlap}: {output} bytes of JSON Lines for {} bytes in {} chunks",
                text.len(),
                chunks.len()
            );
            let broken = output_linear_in_input(&parsed, &chunks, bound.max_repetition, bound.max_overhead);
            assert!(
                broken.is_empty(),
                "{name} {max}/{overlap}: {:?}",
                &broken[..broken.len().min(3)]
            );
            // The body pieces of the heading carry its title cut to 200 characters.
            let title = chunks[1].metadata["heading_path"][0].as_str().unwrap();
            assert_eq!(
                title.chars().count(),
                HeadingAwareChunker::MAX_PATH_TITLE_CHARS,
                "{name}"
            );
            assert!(
                title.ends_with('…') && text.contains(title.trim_end_matches('…')),
                "{name}"
            );
            assert!(chunks.len() > 100, "{name}: {} chunks", chunks.len());
        }
    }
}

#[test]
fn front_matter_only_is_one_chunk() {
    let chunks = md("front.md", &corpus::front_matter_only());
    assert_eq!(chunks.len(), 1);
    assert_eq!(chunks[0].content(), Some(corpus::front_matter_only().trim_end()));
}

// ---- packer -------------------------------------------------------------------------------

fn pack(config: PackerConfig, chunks: Vec<Chunk>, budget: i64) -> Result<PackedContext, PackerError> {
    ContextPacker::new(config).pack_blocking(&ctx(), chunks, budget)
}

fn config(strategy: SelectionStrategy) -> PackerConfig {
    PackerConfig::builder()
        .with_strategy(strategy)
        .with_order(PackOrder::Descending)
        .with_token_counter(counter())
        .build()
        .unwrap()
}

fn chunk(id: &str, text: &str, score: f64) -> Chunk {
    let mut c = Chunk::with_content(id, "doc", "acme", text);
    c.score = Some(score);
    c
}

fn check(strategy: SelectionStrategy, case: &PackerCase) {
    let packer = ContextPacker::new(config(strategy));
    let run = |ctx: &RequestContext, chunks: Vec<Chunk>, budget: i64| packer.pack_blocking(ctx, chunks, budget);
    let counter = counter();
    let spec = PackerSpec {
        optimal: strategy == SelectionStrategy::Optimal,
        ..PackerSpec::new(counter.as_ref())
    };
    let report = check_packer(&run, &spec, case);
    assert!(report.passed(), "{strategy}: {report}");
}

#[test]
fn a_hundred_thousand_identical_chunks_pack_one_and_name_it_for_the_rest() {
    let chunks: Vec<Chunk> = (0..100_000)
        .map(|i| {
            let mut c = chunk(&format!("c{i:06}"), "the very same text", 1.0);
            c.token_count = Some(4);
            c
        })
        .collect();
    for strategy in SelectionStrategy::ALL {
        let packed = pack(config(strategy), chunks.clone(), 1_000).unwrap();
        assert_eq!(packed.chunks.len(), 1);
        assert_eq!(packed.chunks[0].id.as_str(), "c000000", "ties go to the smallest id");
        assert_eq!(packed.dropped.len(), 99_999);
        assert!(
            packed
                .dropped
                .iter()
                .all(|d| d.reason == DropReason::ExactDuplicate { of: "c000000".into() })
        );
    }
    // The full rule set (four packs, the reference dedup) on a tenth of it, to stay fast in debug.
    let case = PackerCase::new("10,000 identical", ctx(), chunks[..10_000].to_vec(), 1_000);
    check(SelectionStrategy::Greedy, &case);
}

#[test]
fn equal_negative_and_zero_scores_pack_deterministically() {
    for case in corpus::packer_edge_cases(100) {
        for strategy in SelectionStrategy::ALL {
            check(strategy, &case);
        }
    }
    let equal: Vec<Chunk> = ["d", "b", "a", "c"]
        .iter()
        .map(|id| chunk(id, &format!("text {id}"), 0.5))
        .collect();
    let packed = pack(config(SelectionStrategy::Greedy), equal, 100).unwrap();
    let ids: Vec<&str> = packed.chunks.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["a", "b", "c", "d"], "equal scores rank by id");
}

#[test]
fn nan_infinite_zero_and_missing_token_counts_are_refused_naming_the_chunk() {
    let err = pack(
        config(SelectionStrategy::Greedy),
        vec![chunk("ok", "a", 1.0), chunk("n", "b", f64::NAN)],
        10,
    )
    .unwrap_err();
    assert_eq!(err.to_string(), "chunk n has a non-finite score (NaN)");
    let err = pack(
        config(SelectionStrategy::Knapsack),
        vec![chunk("i", "b", f64::INFINITY)],
        10,
    )
    .unwrap_err();
    assert_eq!(err.to_string(), "chunk i has a non-finite score (inf)");
    let mut zero = chunk("z", "text", 1.0);
    zero.token_count = Some(0);
    let err = pack(config(SelectionStrategy::Optimal), vec![zero], 10).unwrap_err();
    assert_eq!(err.to_string(), "chunk z has 0 tokens: empty chunks cannot be packed");
    // Negative token counts cannot be represented in the library (`usize`); the wire format
    // refuses them (see the CLI tests).
}

#[test]
fn a_chunk_larger_than_the_budget_is_dropped_with_its_size() {
    let mut big = chunk("big", "huge", 0.99);
    big.token_count = Some(1_000_000);
    let small = chunk("small", "tiny text", 0.5);
    for strategy in SelectionStrategy::ALL {
        let packed = pack(config(strategy), vec![big.clone(), small.clone()], 100).unwrap();
        assert_eq!(packed.chunks.len(), 1);
        assert_eq!(packed.dropped[0].reason, DropReason::OverBudget { tokens: 1_000_000 });
    }
}

#[test]
fn mixed_tenants_are_refused_whatever_else_is_wrong() {
    let mut foreign = chunk("intruder", "text", f64::NAN);
    foreign.tenant_id = "globex".into();
    let err = pack(
        config(SelectionStrategy::Greedy),
        vec![chunk("a", "x", 1.0), foreign],
        10,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "chunk intruder belongs to tenant globex, not to the request's tenant acme"
    );
}

#[test]
fn a_ten_megabyte_chunk_is_counted_and_dropped_or_packed() {
    // 10 MB of words: counted by the real tokenizer, since it carries no token_count. A debug
    // build counts it in about a second (the tokenizer is optimised even in dev builds).
    let words = "lorem ipsum dolor sit amet ";
    let text = words.repeat(10 * (1 << 20) / words.len());
    let big = chunk("big", &text, 0.9);
    let packed = pack(
        config(SelectionStrategy::Greedy),
        vec![big.clone(), chunk("s", "small", 0.1)],
        4_000,
    )
    .unwrap();
    assert!(
        matches!(packed.dropped[0].reason, DropReason::OverBudget { tokens } if tokens > 1_000_000),
        "{:?}",
        packed.dropped
    );
    let packed = pack(config(SelectionStrategy::Greedy), vec![big], 3_000_000).unwrap();
    assert_eq!(
        packed.chunks[0].content().map(str::len),
        Some(text.len()),
        "packed whole, unchanged"
    );
}

#[test]
fn deep_metadata_and_unknown_fields_are_packed_unchanged() {
    let mut value = serde_json::json!("leaf");
    for _ in 0..100 {
        value = serde_json::json!({ "n": value });
    }
    let mut c = chunk("deep", "text with deep metadata", 1.0);
    c.metadata.insert("deep".into(), value);
    c.insert_extra("reranker", serde_json::json!("bge"))
        .expect("reranker is no field of a chunk");
    let packed = pack(config(SelectionStrategy::Greedy), vec![c.clone()], 100).unwrap();
    assert_eq!(packed.chunks, [c]);
}

/// `n` chunks of 10 sentences each, drawn with repetition from one pool of 40 sentences of 12 to 20
/// words (the worst case of near dedup: every shingle is common, and at Jaccard 0.5 nearly
/// every pair is verified), with token counts and distinct scores.
fn boilerplate_chunks(n: usize) -> Vec<Chunk> {
    let mut state = 0x0b01_1e4fu64;
    let mut below = move |n: u64| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) % n
    };
    let pool: Vec<String> = (0..40)
        .map(|_| {
            let words: Vec<String> = (0..12 + below(9)).map(|_| format!("w{}", below(600))).collect();
            format!("{}.", words.join(" "))
        })
        .collect();
    (0..n)
        .map(|i| {
            let sentences: Vec<&str> = (0..10).map(|_| pool[below(40) as usize].as_str()).collect();
            let mut c = chunk(&format!("b{i:05}"), &sentences.join(" "), (n - i) as f64 / n as f64);
            c.token_count = Some(200);
            c
        })
        .collect()
}

fn near_config(threshold: f64) -> PackerConfig {
    config(SelectionStrategy::Greedy)
        .to_builder()
        .with_jaccard_threshold(Some(threshold))
        .build()
        .unwrap()
}

#[test]
fn boilerplate_near_dedup_goes_approximate_past_its_work_bound_and_says_so() {
    // 16,000 of these took minutes with the exact search alone (the benchmark, `rag-bench --only
    // near`, times them). Past its work bound the search goes approximate, says so in the notes,
    // and still drops only chunks that are near duplicates by the definition.
    let chunks = boilerplate_chunks(2_000);
    let packed = pack(near_config(0.5), chunks.clone(), 4_000).unwrap();
    assert_eq!(packed.notes.len(), 1, "{:?}", packed.notes);
    let note = &packed.notes[0];
    assert!(
        note.starts_with("near dedup fell back to MinHash LSH after the first ") && note.contains(" of 2000 chunks"),
        "{note}"
    );
    let by_id: std::collections::HashMap<&str, &Chunk> = chunks.iter().map(|c| (c.id.as_str(), c)).collect();
    let rank: std::collections::HashMap<&str, usize> = priority_order(&chunks)
        .into_iter()
        .enumerate()
        .map(|(r, i)| (chunks[i].id.as_str(), r))
        .collect();
    let duplicates: std::collections::HashSet<&str> = packed
        .dropped
        .iter()
        .filter(|d| d.reason.is_duplicate())
        .map(|d| d.id.as_str())
        .collect();
    let shingles = |id: &str| reference::shingles(&reference::normalise(by_id[id].content().unwrap()), 5);
    let mut near = 0;
    for dropped in &packed.dropped {
        let (of, similarity) = match &dropped.reason {
            DropReason::NearDuplicate { of, similarity } => (of.as_str(), *similarity),
            DropReason::ExactDuplicate { of } => {
                let text = |id: &str| reference::normalise(by_id[id].content().unwrap());
                assert_eq!(text(dropped.id.as_str()), text(of.as_str()), "{}", dropped.id);
                continue;
            }
            _ => continue,
        };
        near += 1;
        let id = dropped.id.as_str();
        assert!(rank[of] < rank[id] && !duplicates.contains(of), "{id} of {of}");
        let exact = reference::jaccard(&shingles(id), &shingles(of));
        assert!(
            (exact - similarity).abs() <= 1e-9 && similarity >= 0.5,
            "{id} of {of}: {similarity} ({exact})"
        );
    }
    assert!(near > 0, "the set has near duplicates at 0.5");
}

#[test]
fn boilerplate_below_the_work_bound_is_deduplicated_exactly() {
    // With near copies: 20 of the chunks again without their last sentence.
    let mut chunks = boilerplate_chunks(300);
    for i in 0..20 {
        let text = chunks[i].content().unwrap();
        let shortened = &text[..text[..text.len() - 1].rfind('.').unwrap() + 1];
        let mut copy = chunk(&format!("n{i:02}"), shortened, 0.0);
        copy.token_count = Some(180);
        chunks.push(copy);
    }
    let case = PackerCase::new("300 boilerplate chunks and 20 near copies", ctx(), chunks, 4_000);
    let packer = ContextPacker::new(near_config(0.5));
    let run = |ctx: &RequestContext, chunks: Vec<Chunk>, budget: i64| packer.pack_blocking(ctx, chunks, budget);
    let counter = counter();
    let spec = PackerSpec {
        dedup: Dedup::Near {
            threshold: 0.5,
            shingle_size: 5,
        },
        ..PackerSpec::new(counter.as_ref())
    };
    let report = check_packer(&run, &spec, &case);
    assert!(report.passed(), "{report}");
    let packed = run(&case.ctx, case.chunks.clone(), case.budget).unwrap();
    assert!(packed.notes.is_empty(), "{:?}", packed.notes);
    let near = packed
        .dropped
        .iter()
        .filter(|d| matches!(d.reason, DropReason::NearDuplicate { .. }))
        .count();
    assert!(near > 0, "the set has near duplicates at 0.5");
}

/// Bytes handed to the tokenizer per byte of input, chunking `text` as Markdown at 512/64.
fn tokenizer_work(text: &str) -> f64 {
    let spy = Arc::new(SpyCounter::new(counter()));
    let parsed = parse(DocumentType::Markdown, "work.md", text.as_bytes()).unwrap();
    let chunker = HeadingAwareChunker::new(512, 64, spy.clone()).unwrap();
    chunker.chunk_document(&ctx(), &parsed).unwrap();
    spy.bytes() as f64 / text.len() as f64
}

#[test]
fn tokenizer_work_stays_linear_on_deeply_indented_lists() {
    // Regression (found by this suite): on lists nested a few hundred deep by indentation, each
    // item is preceded by hundreds of spaces. The chunker's estimate of the whitespace between
    // units (at most 1 token) is far off, so chunks overflow at flush and are recounted unit by
    // unit: 2.7 bytes counted per input byte at depth 200, 45 at depth 400, 67 at depth 500 (the
    // 1,000-deep list, 1 MB, takes 20 s in a release build). Typical documents count about 2.
    for depth in [100, 400] {
        let work = tokenizer_work(&corpus::nested_lists(depth));
        assert!(work <= 8.0, "depth {depth}: {work:.1} bytes counted per input byte");
    }
    for (name, text) in [
        ("table", corpus::table(5_000)),
        ("long line", corpus::long_line(100_000)),
        ("headings", corpus::many_headings(2_000)),
    ] {
        let work = tokenizer_work(&text);
        assert!(work <= 8.0, "{name}: {work:.1} bytes counted per input byte");
    }
}

// ---- crashes found by the fuzz targets, kept as regressions -----------------------------------

/// Runs what the fuzz targets run: parse as Markdown, chunk, every contract rule.
fn fuzz_case(doc_type: DocumentType, encoding: &str, max: usize, overlap: usize, bytes: &[u8]) {
    let parsed = parse(doc_type, "fuzz", bytes).unwrap();
    chunks_checked(&parsed, max, overlap, Arc::new(TiktokenCounter::new(encoding).unwrap()));
}

#[test]
fn fuzz_markdown_chunk_token_count_of_a_control_character_heading() {
    // fuzz/artifacts/markdown_chunk/crash-bb7a9a2c: token_count 14, o200k_base counts 15.
    let bytes = b" e# \x00d\x16# ty filx\x00\x00\x00\n/no\x0bes, 1\r##--|-C";
    fuzz_case(DocumentType::Markdown, "o200k_base", 17, 4, bytes);
}

#[test]
fn pinned_token_counts_that_overflow_are_refused_not_wrapped() {
    // Regression: the packer sums pinned token counts with `+`. Two pinned chunks of
    // usize::MAX and 2 tokens panic in a debug build ("attempt to add with overflow") and wrap to
    // 1 token in a release build, which packs both into a budget of 10.
    let mut huge = chunk("a", "x", 0.0);
    huge.pinned = true;
    huge.token_count = Some(usize::MAX);
    let mut small = chunk("b", "y", 0.0);
    small.pinned = true;
    small.token_count = Some(2);
    let result = std::panic::catch_unwind(|| pack(config(SelectionStrategy::Greedy), vec![huge, small], 10));
    let result = result.unwrap_or_else(|_| panic!("the packer panicked on overflowing token counts"));
    assert!(
        matches!(result, Err(PackerError::PinnedOverBudget { .. })),
        "{result:?}"
    );
}
