//! PDF: the text layer of each page, read into blocks along the page's layout.
//!
//! The backend ([`backend`]) reads the file into positioned text runs, page by page. The rest is
//! ours and works on geometry alone: runs become lines and line segments ([`layout`]), the
//! repeated running heads, footers and page numbers are left out ([`furniture`]), segments are
//! read in column order (recursive XY-cut), lines become headings, paragraphs, list items and
//! code ([`blocks`]), and the blocks are written as the text rendition, each line mapped to its
//! page and box ([`render`]).

mod backend;
mod blocks;
mod fonts;
mod furniture;
mod glyphs;
mod layout;
mod lines;
mod render;

use rag_core::{ParseError, ParsedDocument, Rendition, RequestContext, SourceBytes};

use super::{document, finish_blocks};
use lines::ReadLine;

builtin_parser! {
    /// Reads a PDF's text layer into headings, paragraphs, list items and code, in reading
    /// order across columns, with each line of the rendition mapped to its page and box.
    ///
    /// The document's text is a Markdown-flavoured rendition (see the chunker reference); its
    /// [`rendition`](ParsedDocument::rendition) has `format: "pdf"`, one source-map stretch per
    /// line (`Origin::Page` with the box in points from the page's top-left corner) and, under
    /// `left_out["page_furniture"]`, the bytes of text of the running heads, footers and page
    /// numbers that repeat from page to page (under `left_out["off_page"]`, those of text drawn
    /// outside the visible page). A PDF without a text layer, an encrypted one that the
    /// empty password does not open, and a damaged one are a [`ParseError::Malformed`] that says
    /// what to do; a PDF over a limit of [`PdfLimits`] is a [`ParseError::LimitExceeded`].
    ///
    /// ```
    /// use rag_chunker::parse::PdfParser;
    /// use rag_core::{CorpusId, DocumentId, Parser, RequestContext, SourceBytes};
    ///
    /// let (id, corpus) = (DocumentId::from("s"), CorpusId::from("c"));
    /// let err = PdfParser.parse(&RequestContext::local("t"),
    ///     SourceBytes { document_id: &id, corpus_id: &corpus, source_uri: "scan.pdf", bytes: b"%PDF-1.7\n" })
    ///     .unwrap_err();
    /// assert!(err.to_string().starts_with("scan.pdf: "), "{err}");
    /// ```
    PdfParser("pdf") => parse_pdf
}

/// The limits the PDF parser enforces; past one, parsing stops with
/// [`ParseError::LimitExceeded`] instead of exhausting memory or time. Set some and keep the
/// rest: `PdfLimits { max_pages: 100, ..PdfLimits::DEFAULT }`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PdfLimits {
    /// Pages read.
    pub max_pages: usize,
    /// Bytes of text extracted, all pages together (the rendition is about as large).
    pub max_text_bytes: usize,
    /// Text runs on one page (a run is the text of one text-showing operator).
    pub max_runs_per_page: usize,
    /// Bytes one stream decompresses to (a page's content streams together, a font program, an
    /// object stream).
    pub max_stream_bytes: usize,
    /// Content-stream operators executed for one page, the forms it draws included.
    pub max_operations_per_page: usize,
}

impl PdfLimits {
    /// The limits [`PdfParser`] uses: 10,000 pages, 256 MiB of text, 1,000,000 runs and
    /// 10,000,000 operators a page, 128 MiB per decompressed stream.
    pub const DEFAULT: PdfLimits = PdfLimits {
        max_pages: 10_000,
        max_text_bytes: 256 << 20,
        max_runs_per_page: 1_000_000,
        max_stream_bytes: 128 << 20,
        max_operations_per_page: 10_000_000,
    };
}

impl Default for PdfLimits {
    fn default() -> Self {
        Self::DEFAULT
    }
}

fn parse_pdf(_ctx: &RequestContext, source: SourceBytes<'_>) -> Result<ParsedDocument, ParseError> {
    parse_pdf_with(&source, PdfLimits::DEFAULT)
}

/// Parses `source` as PDF within `limits` (see [`PdfParser`]).
pub fn parse_pdf_with_limits(source: SourceBytes<'_>, limits: PdfLimits) -> Result<ParsedDocument, ParseError> {
    parse_pdf_with(&source, limits)
}

fn parse_pdf_with(source: &SourceBytes<'_>, limits: PdfLimits) -> Result<ParsedDocument, ParseError> {
    let uri = source.source_uri;
    let pages = backend::read_pages(source.bytes, uri, limits)?;
    if pages
        .iter()
        .all(|page| page.runs.iter().all(|run| run.text.trim().is_empty()))
    {
        return Err(malformed(
            uri,
            format!(
                "has no text layer ({} {} of images or drawings only): run OCR and chunk the `.ocr.json`",
                pages.len(),
                if pages.len() == 1 { "page" } else { "pages" }
            ),
        ));
    }
    let mut rendition = Rendition::new("pdf", Some(source.bytes.len()));
    let lines = read_in_order(&pages, &mut rendition);
    let blocks = blocks::group(lines);
    let written = render::write(&blocks);
    rendition.source_map = written.source_map;
    let blocks = finish_blocks(&written.text, written.blocks);
    Ok(ParsedDocument {
        document: document(source, written.text),
        blocks,
        rendition: Some(rendition),
    })
}

/// The lines of every page in reading order, page furniture left out (and counted in
/// `rendition.left_out`).
fn read_in_order(pages: &[layout::PageText], rendition: &mut Rendition) -> Vec<ReadLine> {
    let segmented: Vec<Vec<layout::Segment>> = pages.iter().map(layout::segments).collect();
    let edges: Vec<furniture::PageEdges<'_>> = pages
        .iter()
        .zip(&segmented)
        .map(|(page, segments)| furniture::PageEdges {
            number: page.number,
            height: page.height,
            segments,
        })
        .collect();
    let furniture = furniture::furniture(&edges);
    for warning in furniture.warnings {
        rendition.warn(warning);
    }
    let mut lines = Vec::new();
    let mut region_count = 0;
    for ((page, segments), dropped) in pages.iter().zip(segmented).zip(furniture.dropped) {
        rendition.leave_out("off_page", page.off_page_bytes);
        let kept: Vec<layout::Segment> = segments
            .into_iter()
            .enumerate()
            .filter_map(|(index, segment)| {
                if dropped.contains(&index) {
                    rendition.leave_out("page_furniture", segment.text().trim().len());
                    None
                } else {
                    Some(segment)
                }
            })
            .collect();
        for region in layout::reading_order(&kept) {
            let in_order: Vec<&layout::Segment> = region.iter().map(|&i| &kept[i]).collect();
            lines.extend(lines::read_lines(page.number, region_count, &in_order));
            region_count += 1;
        }
    }
    lines
}

fn malformed(source_uri: &str, message: String) -> ParseError {
    ParseError::Malformed {
        source_uri: source_uri.to_owned(),
        line: None,
        column: None,
        message,
    }
}
