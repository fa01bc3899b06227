//! What the fuzz targets share: decoding a chunker configuration from the input's first byte,
//! and parse + chunk + contract check of one document, output size included.

use std::sync::{Arc, OnceLock};

use rag_chunker::{DocumentType, HeadingAwareChunker, TiktokenCounter, parse_document};
use rag_contract::chunker::{Budget, OutputBound, check_chunker, output_linear_in_input};
use rag_core::{CorpusId, DocumentId, ParseError, Principal, RequestContext, SourceBytes, TokenCounter};

fn counters() -> &'static [Arc<dyn TokenCounter>; 2] {
    static COUNTERS: OnceLock<[Arc<dyn TokenCounter>; 2]> = OnceLock::new();
    COUNTERS.get_or_init(|| {
        [
            Arc::new(TiktokenCounter::cl100k()),
            Arc::new(TiktokenCounter::new("o200k_base").expect("o200k_base is built in")),
        ]
    })
}

/// Parses `data[1..]` as `doc_type`, chunks it with a configuration taken from `data[0]` (either
/// tokenizer, 4 to 67 tokens: a character is at most 4 tokens, so every budget can be met) and
/// panics, naming the broken rule, if any promise of the parser or the chunker is broken,
/// including the output-size bound (`OutputBound::heading_aware`) and the length of the
/// titles in `heading_path`.
pub fn parse_chunk_check(doc_type: DocumentType, data: &[u8]) {
    let Some((&config, bytes)) = data.split_first() else { return };
    let counter = &counters()[usize::from(config & 1)];
    let max_tokens = 4 + usize::from(config >> 2);
    let overlap = usize::from(config >> 1 & 1) * (max_tokens / 4);
    let ctx = RequestContext::new(
        "acme",
        Principal {
            id: "fuzz".into(),
            acl_labels: vec!["staff".into()],
        },
    );
    let (id, corpus) = (DocumentId::from("doc"), CorpusId::from("corpus"));
    let source = SourceBytes {
        document_id: &id,
        corpus_id: &corpus,
        source_uri: "fuzz",
        bytes,
    };
    let parsed = match parse_document(&ctx, doc_type, source) {
        Ok(parsed) => parsed,
        Err(ParseError::InvalidUtf8 { offset, .. }) => {
            // The error must point at the first invalid byte.
            let expected = std::str::from_utf8(bytes).err().map(|e| e.valid_up_to());
            assert_eq!(Some(offset), expected, "invalid UTF-8 reported at the wrong offset");
            return;
        }
        Err(err) => panic!("a {doc_type} parser refused UTF-8 input: {err}"),
    };
    let chunker = HeadingAwareChunker::new(max_tokens, overlap, Arc::clone(counter)).expect("valid configuration");
    let budget = Budget {
        max_tokens,
        counter: counter.as_ref(),
    };
    let report = check_chunker(&chunker, &ctx, &parsed, Some(budget));
    assert!(
        report.passed(),
        "{} {max_tokens}/{overlap}: {report}",
        counter.name()
    );
    let chunks = chunker
        .chunk_document(&ctx, &parsed)
        .expect("the contract check chunked this document without error");
    let bound = OutputBound::heading_aware(
        overlap,
        HeadingAwareChunker::MAX_PATH_TITLE_CHARS,
        counter.name(),
        &ctx,
        &parsed.document,
    );
    let broken = output_linear_in_input(&parsed, &chunks, bound.max_repetition, bound.max_overhead);
    assert!(
        broken.is_empty(),
        "{} {max_tokens}/{overlap}: output not linear in the input: {broken:?}",
        counter.name()
    );
    let output: usize = chunks
        .iter()
        .map(|c| serde_json::to_string(c).map_or(0, |line| line.len() + 1))
        .sum();
    let limit = bound.max_jsonl_bytes(bytes.len(), chunks.len());
    assert!(output <= limit, "{output} bytes of JSON Lines, over the bound of {limit}");
    for chunk in &chunks {
        let titles = chunk.metadata["heading_path"].as_array().map_or(&[][..], Vec::as_slice);
        assert!(
            titles.iter().all(|t| t
                .as_str()
                .is_some_and(|t| t.chars().count() <= HeadingAwareChunker::MAX_PATH_TITLE_CHARS)),
            "chunk {}: a heading_path title over {} characters",
            chunk.id,
            HeadingAwareChunker::MAX_PATH_TITLE_CHARS
        );
    }
}
