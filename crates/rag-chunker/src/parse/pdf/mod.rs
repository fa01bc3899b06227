//! PDF: the text layer of each page, read into blocks along the page's layout.
//!
//! The backend ([`backend`]) reads the file and has each page's content streams ([`content`]) run
//! by the interpreter ([`interpreter`]) into positioned text runs, fonts decoded by [`fonts`],
//! what a reader does not see left out ([`visibility`]) and what was repaired or skipped noted
//! ([`report`]). The rest is
//! ours and works on geometry alone: runs become lines and line segments ([`layout`]), the
//! repeated running heads, footers and page numbers are left out ([`furniture`]), segments are
//! read in column order (recursive XY-cut), lines become headings, paragraphs, list items and
//! code ([`blocks`]), and the blocks are written as the text rendition, each line mapped to its
//! page and box ([`render`]).

mod backend;
mod blocks;
mod content;
mod fonts;
mod furniture;
mod glyphs;
mod graphics;
mod interpreter;
mod layout;
mod lines;
mod render;
mod report;
mod standard_widths;
mod visibility;

use rag_core::{ParseError, ParsedDocument, Rendition, RequestContext, SourceBytes};

use super::{document, finish_blocks};
use lines::ReadLine;

/// Reads a PDF's text layer into headings, paragraphs, list items and code, in reading order
/// across columns, with each line of the rendition mapped to its page and box.
///
/// The document's text is a Markdown-flavoured rendition (see the chunker reference); its
/// [`rendition`](ParsedDocument::rendition) has `format: "pdf"`, one source-map stretch per line
/// (`Origin::Page` with the box in points from the page's top-left corner) and, in `left_out`,
/// the bytes of text it leaves out: `page_furniture` (the running heads, footers and page
/// numbers that repeat from page to page, and the repeats of a heading or header row kept
/// once), `off_page` (text drawn outside the visible page),
/// `hidden` (text a reader does not see: invisible and not over an image, in the colour of its
/// background, under 1 pt, clipped away; see [`keep_hidden`](Self::keep_hidden)) and
/// `malformed_content` (bytes of content-stream tokens that are not PDF, skipped). Its
/// `warnings` say what the reader repaired or skipped and what it left out as hidden.
///
/// A PDF without a text layer, an encrypted one that the empty password does not open, and a
/// damaged one are a [`ParseError::Malformed`] that says what to do; a PDF over a limit of
/// [`PdfLimits`] is a [`ParseError::LimitExceeded`].
///
/// ```
/// use rag_chunker::parse::PdfParser;
/// use rag_core::{CorpusId, DocumentId, Parser, RequestContext, SourceBytes};
///
/// let (id, corpus) = (DocumentId::from("s"), CorpusId::from("c"));
/// let err = PdfParser::new().parse(&RequestContext::local("t"),
///     SourceBytes { document_id: &id, corpus_id: &corpus, source_uri: "scan.pdf", bytes: b"%PDF-1.7\n" })
///     .unwrap_err();
/// assert!(err.to_string().starts_with("scan.pdf: "), "{err}");
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PdfParser {
    limits: PdfLimits,
    keep_hidden: bool,
}

impl PdfParser {
    /// A parser within [`PdfLimits::DEFAULT`] that leaves hidden text out.
    pub const fn new() -> Self {
        Self {
            limits: PdfLimits::DEFAULT,
            keep_hidden: false,
        }
    }

    /// The limits to read within.
    pub const fn limits(self, limits: PdfLimits) -> Self {
        Self { limits, ..self }
    }

    /// Whether to keep text a reader of the page does not see instead of leaving it out as
    /// `hidden`: text drawn invisible (render mode 3 or 7) that is not over an image, text in the
    /// colour of what lies under it (white on the white page), text under 1 pt and text outside
    /// the clipping path. Such text is how instructions are hidden from people and shown to
    /// models, so by default it does not reach the chunks. Invisible text over an image (the text
    /// layer of a scan, from OCR) is read either way; text drawn outside the page is never read.
    ///
    /// ```
    /// use rag_chunker::parse::PdfParser;
    ///
    /// let parser = PdfParser::new().keep_hidden(true);
    /// assert_ne!(parser, PdfParser::new());
    /// ```
    pub const fn keep_hidden(self, keep: bool) -> Self {
        Self {
            keep_hidden: keep,
            ..self
        }
    }
}

impl rag_core::Parser for PdfParser {
    fn name(&self) -> &str {
        "pdf"
    }

    fn parse(&self, _ctx: &RequestContext, source: SourceBytes<'_>) -> Result<ParsedDocument, ParseError> {
        parse_pdf_with(&source, self.limits, self.keep_hidden)
    }
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
    /// Content-stream operators executed for the whole file; a stream that several pages share,
    /// or a form drawn several times, counts each time it runs.
    pub max_operations: usize,
    /// Bytes of decompressed content streams run for the whole file (pages' and forms'), each
    /// counted every time it runs.
    pub max_content_bytes: usize,
}

impl PdfLimits {
    /// The limits [`PdfParser`] uses: 10,000 pages, 256 MiB of text, 1,000,000 runs and
    /// 10,000,000 operators a page, 128 MiB per decompressed stream, and for the whole file
    /// 100,000,000 operators and 1 GiB of content streams run.
    pub const DEFAULT: PdfLimits = PdfLimits {
        max_pages: 10_000,
        max_text_bytes: 256 << 20,
        max_runs_per_page: 1_000_000,
        max_stream_bytes: 128 << 20,
        max_operations_per_page: 10_000_000,
        max_operations: 100_000_000,
        max_content_bytes: 1 << 30,
    };
}

impl Default for PdfLimits {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Parses `source` as PDF within `limits` (see [`PdfParser`]; the same as
/// `PdfParser::new().limits(limits)`).
pub fn parse_pdf_with_limits(source: SourceBytes<'_>, limits: PdfLimits) -> Result<ParsedDocument, ParseError> {
    parse_pdf_with(&source, limits, false)
}

fn parse_pdf_with(
    source: &SourceBytes<'_>,
    limits: PdfLimits,
    keep_hidden: bool,
) -> Result<ParsedDocument, ParseError> {
    let uri = source.source_uri;
    let read = backend::read_pages(source.bytes, uri, limits, keep_hidden)?;
    let pages = read.pages;
    let visible = pages
        .iter()
        .any(|page| page.runs.iter().any(|run| !run.text.trim().is_empty()));
    let unseen = read.report.hidden_bytes() + pages.iter().map(|page| page.off_page_bytes).sum::<usize>();
    if !visible && unseen == 0 {
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
    read.report.write(&mut rendition);
    if !visible {
        rendition.warn("none of the text is visible: all of it is hidden or drawn outside the page");
    }
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
