//! OCR results: regions of recognised text become paragraph blocks of a synthetic document.

use rag_core::{
    Block, BlockType, CorpusId, Document, DocumentId, MappedSpan, Origin, ParseError, ParsedDocument, Rendition,
    RequestContext, SourceBytes, Span,
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{content_start, decode};

/// What an OCR engine recognised on a scan: the engine's name and its regions in reading order.
///
/// This is the JSON of an `.ocr.json` file:
/// `{"engine": "tesseract-5", "regions": [{"text": "...", "confidence": 0.93, "bbox": [x0, y0, x1, y1], "page": 1}]}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OcrResult {
    /// The engine that produced the result, e.g. `tesseract-5`.
    pub engine: String,
    /// Recognised regions in reading order.
    pub regions: Vec<OcrRegion>,
}

/// One region of recognised text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OcrRegion {
    /// The recognised text.
    pub text: String,
    /// The engine's confidence, in the engine's own scale (often 0..=1).
    pub confidence: f64,
    /// Bounding box `[x0, y0, x1, y1]` in the engine's coordinates.
    pub bbox: [f64; 4],
    /// The 1-based page, when the scan has several.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<u32>,
}

/// The separator between region texts in the synthetic source text: a blank line, so the text
/// reads as one paragraph per region.
const REGION_SEPARATOR: &str = "\n\n";

/// Turns an OCR result into a document the chunker reads like any parser's output.
///
/// The synthetic source text is the region texts joined by blank lines; each region becomes one
/// [`BlockType::Paragraph`] block whose span indexes that text, with attributes `engine`,
/// `ocr_confidence`, `bbox` and, when known, `page`. A region whose text is empty or whitespace
/// keeps its block (so block `i` is region `i`); the chunker drops whitespace-only blocks. The
/// document's [`rendition`](ParsedDocument::rendition) maps each region with a page to its page, box
/// and confidence, so every chunk's `provenance` names the regions it was cut from.
///
/// ```
/// use rag_chunker::parse::{OcrResult, ocr_result_to_parsed_document};
/// use rag_core::RequestContext;
///
/// let ocr: OcrResult = serde_json::from_str(r#"{"engine": "tesseract-5", "regions": [
///     {"text": "INVOICE 42", "confidence": 0.98, "bbox": [10, 10, 200, 40], "page": 1},
///     {"text": "Total: 12.50 EUR", "confidence": 0.91, "bbox": [10, 60, 220, 80]}]}"#)?;
/// let parsed = ocr_result_to_parsed_document(&RequestContext::local("acme"), &ocr,
///     "scan-001".into(), "invoices".into(), "s3://scans/scan-001.png");
/// assert_eq!(parsed.document.text, "INVOICE 42\n\nTotal: 12.50 EUR");
/// assert_eq!(parsed.source_of(&parsed.blocks[1]), Some("Total: 12.50 EUR"));
/// assert_eq!(parsed.blocks[0].attributes["page"], 1);
/// let origins = parsed.provenance(parsed.blocks[0].span);
/// assert_eq!(origins, [rag_core::Origin::Page { page: 1, bbox: Some([10.0, 10.0, 200.0, 40.0]), confidence: Some(0.98) }]);
/// # Ok::<(), serde_json::Error>(())
/// ```
pub fn ocr_result_to_parsed_document(
    _ctx: &RequestContext,
    ocr: &OcrResult,
    document_id: DocumentId,
    corpus_id: CorpusId,
    source_uri: impl Into<String>,
) -> ParsedDocument {
    let capacity = ocr.regions.iter().map(|r| r.text.len() + REGION_SEPARATOR.len()).sum();
    let mut text = String::with_capacity(capacity);
    let mut blocks = Vec::with_capacity(ocr.regions.len());
    let mut source_map = Vec::with_capacity(ocr.regions.len());
    for (i, region) in ocr.regions.iter().enumerate() {
        if i > 0 {
            text.push_str(REGION_SEPARATOR);
        }
        let start = text.len();
        text.push_str(&region.text);
        let mut attributes = Map::new();
        attributes.insert("engine".into(), Value::from(ocr.engine.as_str()));
        // serde_json turns a non-finite number into null rather than failing.
        attributes.insert("ocr_confidence".into(), Value::from(region.confidence));
        attributes.insert("bbox".into(), Value::from(region.bbox.to_vec()));
        if let Some(page) = region.page {
            attributes.insert("page".into(), Value::from(page));
        }
        // The region's text is exactly this slice of the synthetic source, so it is not copied again.
        let span = Span::new(start, text.len());
        let mut block = Block::new(BlockType::Paragraph, span);
        block.attributes = attributes;
        blocks.push(block);
        // Regions without a page are not placed by the source map: a box alone names no page.
        if let Some(page) = region.page {
            let origin = Origin::Page {
                page,
                bbox: Some(region.bbox).filter(|bbox| bbox.iter().all(|v| v.is_finite())),
                confidence: Some(region.confidence).filter(|c| c.is_finite()),
            };
            source_map.push(MappedSpan::new(span, origin));
        }
    }
    let mut rendition = Rendition::new("ocr", None);
    rendition.source_map = source_map;
    ParsedDocument {
        document: Document {
            id: document_id,
            corpus_id,
            source_uri: source_uri.into(),
            text,
        },
        blocks,
        rendition: Some(rendition),
    }
}

builtin_parser! {
    /// Reads an `.ocr.json` file (an [`OcrResult`]) through [`ocr_result_to_parsed_document`].
    ///
    /// The document's text is the synthetic text of the regions, not the JSON: spans index the text
    /// chunks are cut from. Malformed JSON is a [`ParseError::Malformed`] with its line and column.
    ///
    /// ```
    /// use rag_chunker::parse::OcrJsonParser;
    /// use rag_core::{CorpusId, DocumentId, Parser, RequestContext, SourceBytes};
    ///
    /// let (id, corpus) = (DocumentId::from("s"), CorpusId::from("c"));
    /// let bytes = b"{\"engine\": \"e\",\n \"regions\": [{\"text\": \"x\"}]}";
    /// let err = OcrJsonParser.parse(&RequestContext::local("t"),
    ///     SourceBytes { document_id: &id, corpus_id: &corpus, source_uri: "s.ocr.json", bytes })
    ///     .unwrap_err();
    /// assert!(err.to_string().starts_with("s.ocr.json:2:"), "{err}");
    /// ```
    OcrJsonParser("ocr") => parse_ocr_json
}

fn parse_ocr_json(ctx: &RequestContext, source: SourceBytes<'_>) -> Result<ParsedDocument, ParseError> {
    let json = decode(&source)?;
    // serde_json rejects a byte-order mark; skipping it keeps line and column numbers right.
    let ocr: OcrResult = serde_json::from_str(&json[content_start(&json)..]).map_err(|err| {
        // The error's text ends with its location, which the ParseError shows already.
        let full = err.to_string();
        let location = format!(" at line {} column {}", err.line(), err.column());
        let message = full.strip_suffix(&location).unwrap_or(&full);
        ParseError::Malformed {
            source_uri: source.source_uri.to_owned(),
            line: Some(err.line()),
            column: Some(err.column()),
            message: format!("not an OCR result: {message}"),
        }
    })?;
    Ok(ocr_result_to_parsed_document(
        ctx,
        &ocr,
        source.document_id.clone(),
        source.corpus_id.clone(),
        source.source_uri,
    ))
}
