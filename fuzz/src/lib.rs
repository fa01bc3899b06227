//! What the fuzz targets share: decoding a chunker configuration from the input's first byte,
//! and parse + chunk + contract check of one document, output size included; for DOCX, the
//! package the XML targets wrap their input in.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Arc, Mutex, OnceLock};

use rag_chunker::{DocumentType, HeadingAwareChunker, TiktokenCounter, parse_document};
use rag_contract::Report;
use rag_contract::chunker::{Budget, OutputBound, check_output, deterministic, output_linear_in_input};
use rag_core::{
    CorpusId, DocumentId, ParseError, ParsedDocument, Principal, RequestContext, SourceBytes, TokenCounter,
    TokenizerError,
};

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
    let Some((&config, bytes)) = data.split_first() else {
        return;
    };
    let parsed = match parse_document(&ctx(), doc_type, source(bytes)) {
        Ok(parsed) => parsed,
        Err(ParseError::InvalidUtf8 { offset, .. }) => {
            // The error must point at the first invalid byte.
            let expected = std::str::from_utf8(bytes).err().map(|e| e.valid_up_to());
            assert_eq!(Some(offset), expected, "invalid UTF-8 reported at the wrong offset");
            return;
        }
        // A page past a documented limit is refused, naming the limit; nothing else is an error.
        Err(ParseError::LimitExceeded { .. }) if doc_type == DocumentType::Html => return,
        Err(err) => panic!("a {doc_type} parser refused UTF-8 input: {err}"),
    };
    if let Some(rendition) = &parsed.rendition {
        // A rendition: its source map in text order, inside the text, naming bytes of the input;
        // its size linear in the input (line prefixes of nested lists and quotes stop growing).
        let text = &parsed.document.text;
        assert!(text.len() <= 41 * bytes.len() + 64, "a rendition of {} bytes from {}", text.len(), bytes.len());
        let mut previous_end = 0;
        for mapped in &rendition.source_map {
            assert!(mapped.span.start >= previous_end && mapped.span.end <= text.len(), "source map out of order");
            previous_end = mapped.span.end;
            if let rag_core::Origin::Bytes { start, end } = mapped.origin {
                assert!(start <= end && end <= bytes.len(), "origin {start}..{end} outside the input");
            }
        }
    }
    chunk_check(config, &parsed);
}

/// Like [`parse_chunk_check`], for a binary format (DOCX, PDF) whose parser may refuse its input:
/// broken or hostile input must be a malformed-input or limit error (never a panic, never another
/// error), and a document it accepts must keep every promise, its rendition's too (source map in
/// text order, not overlapping, on character boundaries).
pub fn parse_binary_chunk_check(doc_type: DocumentType, data: &[u8]) {
    let Some((&config, bytes)) = data.split_first() else {
        return;
    };
    let parsed = match parse_document(&ctx(), doc_type, source(bytes)) {
        Ok(parsed) => parsed,
        Err(ParseError::Malformed { .. } | ParseError::LimitExceeded { .. }) => return,
        Err(err) => panic!("a {doc_type} parser failed with an unexpected error: {err}"),
    };
    let rendition = parsed
        .rendition
        .as_ref()
        .expect("a binary format's text is a rendition");
    let text = &parsed.document.text;
    let mut previous_end = 0;
    for mapped in &rendition.source_map {
        let span = mapped.span;
        assert!(
            span.start >= previous_end && span.start < span.end && span.end <= text.len(),
            "source map: {span:?}"
        );
        assert!(
            text.is_char_boundary(span.start) && text.is_char_boundary(span.end),
            "source map: {span:?}"
        );
        previous_end = span.end;
        // Where the stretch comes from is a place in this file, written to JSON as it is read
        // back (a NaN or infinite coordinate would be written as `null`).
        match &mapped.origin {
            rag_core::Origin::Bytes { start, end } => {
                assert!(start <= end && *end <= bytes.len(), "origin {start}..{end} outside the input");
            }
            rag_core::Origin::Page { page, bbox, confidence } => {
                assert!(*page >= 1, "page {page}: pages count from 1");
                assert!(
                    bbox.is_none_or(|b| b.iter().all(|v| v.is_finite())) && confidence.is_none_or(f64::is_finite),
                    "page {page}: a box or confidence that is not a number: {bbox:?} {confidence:?}"
                );
            }
            rag_core::Origin::Paragraphs { part, first, last } => {
                assert!(first <= last, "{part}: paragraphs {first}..={last}");
            }
            _ => {}
        }
    }
    assert_eq!(rendition.original_bytes, Some(bytes.len()), "the rendition's size of the original");
    chunk_check(config, &parsed);
}

fn ctx() -> RequestContext {
    RequestContext::new(
        "acme",
        Principal {
            id: "fuzz".into(),
            acl_labels: vec!["staff".into()],
        },
    )
}

fn source(bytes: &[u8]) -> SourceBytes<'_> {
    static IDS: OnceLock<(DocumentId, CorpusId)> = OnceLock::new();
    let (id, corpus) = IDS.get_or_init(|| (DocumentId::from("doc"), CorpusId::from("corpus")));
    SourceBytes {
        document_id: id,
        corpus_id: corpus,
        source_uri: "fuzz",
        bytes,
    }
}

/// Chunks `parsed` with the configuration `config` names and checks every promise, the output
/// bounded by the document's text (the input itself, for Markdown and text).
fn chunk_check(config: u8, parsed: &ParsedDocument) {
    let ctx = ctx();
    // Counting tokens is most of a run (tiktoken's regex, instrumented): the second run and the
    // contract's recounts ask for counts the first run made, so they are remembered, for this
    // input only.
    let counter: Arc<dyn TokenCounter> = Arc::new(Remembered::new(Arc::clone(&counters()[usize::from(config & 1)])));
    let counter = &counter;
    let max_tokens = 4 + usize::from(config >> 2);
    let overlap = usize::from(config >> 1 & 1) * (max_tokens / 4);
    let chunker = HeadingAwareChunker::new(max_tokens, overlap, Arc::clone(counter)).expect("valid configuration");
    let budget = Budget {
        max_tokens,
        counter: counter.as_ref(),
    };
    // What `check_chunker` does (every rule on two runs), without a third run to get the chunks:
    // chunking is most of a run's time.
    let chunk = || {
        chunker
            .chunk_document(&ctx, parsed)
            .unwrap_or_else(|err| panic!("{} {max_tokens}/{overlap}: the chunker failed: {err}", counter.name()))
    };
    let (chunks, again) = (chunk(), chunk());
    let differ = deterministic(&chunks, &again);
    assert!(differ.is_empty(), "{} {max_tokens}/{overlap}: not deterministic: {differ:?}", counter.name());
    let mut report = Report::new(parsed.document.source_uri.clone());
    check_output(&mut report, &ctx, parsed, &chunks, Some(budget));
    assert!(report.passed(), "{} {max_tokens}/{overlap}: {report}", counter.name());
    let bound = OutputBound::heading_aware(
        overlap,
        HeadingAwareChunker::MAX_PATH_TITLE_CHARS,
        counter.name(),
        &ctx,
        &parsed.document,
    );
    let broken = output_linear_in_input(parsed, &chunks, bound.max_repetition, bound.max_overhead);
    assert!(
        broken.is_empty(),
        "{} {max_tokens}/{overlap}: output not linear in the input: {broken:?}",
        counter.name()
    );
    let output: usize = chunks
        .iter()
        .map(|c| serde_json::to_string(c).map_or(0, |line| line.len() + 1))
        .sum();
    let limit = bound.max_jsonl_bytes(parsed.document.text.len(), chunks.len());
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

/// A counter that remembers the counts `inner` made, by the text's length and hash (the text
/// itself is not kept: a chunker counts many overlapping pieces), and takes every promise from
/// `inner`.
struct Remembered {
    inner: Arc<dyn TokenCounter>,
    counts: Mutex<HashMap<(usize, u64), usize>>,
}

impl Remembered {
    fn new(inner: Arc<dyn TokenCounter>) -> Self {
        Self {
            inner,
            counts: Mutex::new(HashMap::new()),
        }
    }
}

impl TokenCounter for Remembered {
    fn count(&self, text: &str) -> Result<usize, TokenizerError> {
        let mut hasher = DefaultHasher::new();
        text.hash(&mut hasher);
        let key = (text.len(), hasher.finish());
        if let Some(&count) = self.counts.lock().map_err(|_| TokenizerError::new("fuzz", "poisoned"))?.get(&key) {
            return Ok(count);
        }
        let count = self.inner.count(text)?;
        self.counts
            .lock()
            .map_err(|_| TokenizerError::new("fuzz", "poisoned"))?
            .insert(key, count);
        Ok(count)
    }

    fn name(&self) -> &str {
        self.inner.name()
    }

    fn splits_at_line_starts(&self) -> bool {
        self.inner.splits_at_line_starts()
    }

    fn splits_at_spaces(&self) -> bool {
        self.inner.splits_at_spaces()
    }
}

/// A DOCX package (stored, not deflated, so the fuzzer's bytes reach the XML reader as they are)
/// whose `word/document.xml` is `document` and whose `word/styles.xml` and `word/numbering.xml`
/// are `styles` and `numbering` when given.
pub fn docx_package(document: &[u8], styles: Option<&[u8]>, numbering: Option<&[u8]>) -> Vec<u8> {
    use std::io::Write as _;
    let options = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let rels = "<Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\">\
        <Relationship Id=\"s\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles\" Target=\"styles.xml\"/>\
        <Relationship Id=\"n\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/numbering\" Target=\"numbering.xml\"/>\
        <Relationship Id=\"h\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/hyperlink\" Target=\"https://example.com/\" TargetMode=\"External\"/>\
        </Relationships>";
    let mut parts: Vec<(&str, &[u8])> = vec![
        ("word/document.xml", document),
        ("word/_rels/document.xml.rels", rels.as_bytes()),
    ];
    parts.extend(styles.map(|s| ("word/styles.xml", s)));
    parts.extend(numbering.map(|n| ("word/numbering.xml", n)));
    for (name, bytes) in parts {
        writer.start_file(name, options).expect("writing to memory");
        writer.write_all(bytes).expect("writing to memory");
    }
    writer.finish().expect("writing to memory").into_inner()
}
