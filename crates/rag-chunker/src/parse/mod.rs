//! Parsers: the bytes of one file in, a [`ParsedDocument`] (source text and ordered blocks) out.
//!
//! The formats are chosen by file extension or by name ([`DocumentType`]): Markdown on
//! `pulldown-cmark`, plain text, OCR results as JSON, and PDF (the `pdf` feature; without it a PDF
//! is [`ParseError::NotBuilt`]). Every parser keeps the promises of
//! [`rag_core::Parser`]: block spans are character-aligned byte ranges of `Document::text`, they
//! increase and do not overlap, and every non-whitespace byte lies in some block (a leading
//! byte-order mark excepted: it stays in the text, so spans are offsets into the file as read, but
//! no block covers it).

/// Declares a built-in parser: a unit struct, carrying the doc comment written above it, that
/// reports `name` and parses with a `fn(&RequestContext, SourceBytes) -> Result<ParsedDocument,
/// ParseError>` of its module, so that each format's module holds only what is its own (defined
/// before the `mod` lines: the format modules see it by textual scope).
macro_rules! builtin_parser {
    ($(#[$attr:meta])* $parser:ident($name:literal) => $parse:path) => {
        $(#[$attr])*
        #[derive(Debug, Clone, Copy, Default)]
        pub struct $parser;

        impl rag_core::Parser for $parser {
            fn name(&self) -> &str {
                $name
            }

            fn parse(&self, ctx: &RequestContext, source: SourceBytes<'_>) -> Result<ParsedDocument, ParseError> {
                $parse(ctx, source)
            }
        }
    };
}

pub mod code;
pub mod docx;
#[cfg(feature = "html")]
mod html;
mod markdown;
mod no_text;
mod ocr;
#[cfg(feature = "pdf")]
mod pdf;
mod text;

use std::fmt;
use std::ops::Range;
use std::str::FromStr;

use rag_core::{Block, BlockType, Document, ParseError, ParsedDocument, RequestContext, SourceBytes, Span};

pub use code::{CodeParser, Language};
pub use docx::DocxParser;
#[cfg(feature = "html")]
pub use html::{
    HTML_ATTRIBUTE_COMPARISONS_PER_BYTE, HtmlParser, MAX_HTML_ATTRIBUTE_COMPARISONS, MAX_HTML_BYTES, MAX_HTML_DEPTH,
    MAX_HTML_NODES,
};
pub use markdown::MarkdownParser;
pub use no_text::{NO_TEXT, no_text_warning, thousands};
pub use ocr::{OcrJsonParser, OcrRegion, OcrResult, ocr_result_to_parsed_document};
#[cfg(feature = "pdf")]
pub use pdf::{PdfLimits, PdfParser, parse_pdf_with_limits};
pub use text::PlainTextParser;

use crate::sentence::trim_range;

/// The document formats the built-in parsers read.
///
/// ```
/// use rag_chunker::parse::DocumentType;
///
/// assert_eq!(DocumentType::from_path("notes/Guide.MD"), Some(DocumentType::Markdown));
/// assert_eq!(DocumentType::from_path("scan-001.ocr.json"), Some(DocumentType::Ocr));
/// assert_eq!("text".parse::<DocumentType>()?, DocumentType::Text);
/// let err = DocumentType::detect("report.odt").unwrap_err();
/// assert!(err.to_string().contains("markdown (.md, .markdown)"));
/// # Ok::<(), rag_chunker::parse::UnknownDocumentType>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DocumentType {
    /// CommonMark with tables, footnotes and front matter (`.md`, `.markdown`).
    Markdown,
    /// Plain text, paragraphs separated by blank lines (`.txt`, `.text`).
    Text,
    /// An OCR result as JSON (`.ocr.json`), see [`OcrResult`].
    Ocr,
    /// An HTML page (`.html`, `.htm`, `.xhtml`), read into a text rendition by `HtmlParser`
    /// (rag-chunker's `html` feature; without it, parsing is a [`ParseError::NotBuilt`]).
    Html,
    /// A Word file (`.docx`), see [`DocxParser`]; parsed when the cargo feature `docx` is on.
    Docx,
    /// PDF (`.pdf`): its text layer, read along the page layout by `PdfParser` (rag-chunker's
    /// `pdf` feature; without it, parsing is a [`ParseError::NotBuilt`]).
    Pdf,
    /// Source code of one language (`.py`, `.rs`, `.ts`, ...), read along its syntax tree by
    /// [`CodeParser`] and chunked along it (rag-chunker's `code-<language>` features; without
    /// the language's, parsing is a [`ParseError::NotBuilt`]).
    Code(Language),
}

/// The supported types and their file-name suffixes, as error messages list them:
/// `markdown (.md, .markdown), text (.txt, .text), ...`.
fn supported() -> String {
    DocumentType::ALL
        .iter()
        .map(|ty| format!("{} ({})", ty.as_str(), ty.suffixes().join(", ")))
        .collect::<Vec<_>>()
        .join(", ")
}

impl DocumentType {
    /// Every document type, in the order help texts list them.
    pub const ALL: [DocumentType; 15] = [
        Self::Markdown,
        Self::Text,
        Self::Ocr,
        Self::Html,
        Self::Docx,
        Self::Pdf,
        Self::Code(Language::Python),
        Self::Code(Language::Rust),
        Self::Code(Language::JavaScript),
        Self::Code(Language::TypeScript),
        Self::Code(Language::Tsx),
        Self::Code(Language::Go),
        Self::Code(Language::Java),
        Self::Code(Language::C),
        Self::Code(Language::Cpp),
    ];

    /// The name used by `--type` and in messages: `markdown`, `text`, `ocr`, `html`, `docx`,
    /// `pdf`, or a language's name (`python`, `rust`, ..., see [`Language::as_str`]).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Code(language) => language.as_str(),
            Self::Markdown => "markdown",
            Self::Text => "text",
            Self::Ocr => "ocr",
            Self::Html => "html",
            Self::Docx => "docx",
            Self::Pdf => "pdf",
        }
    }

    /// The file-name suffixes of the type (lower case, with their dot), as [`from_path`]
    /// matches them: the one list the walk, the error messages and the Python package read.
    ///
    /// [`from_path`]: DocumentType::from_path
    pub const fn suffixes(self) -> &'static [&'static str] {
        match self {
            Self::Markdown => &[".md", ".markdown"],
            Self::Text => &[".txt", ".text"],
            Self::Ocr => &[".ocr.json"],
            Self::Html => &[".html", ".htm", ".xhtml"],
            Self::Docx => &[".docx"],
            Self::Pdf => &[".pdf"],
            Self::Code(language) => language.suffixes(),
        }
    }

    /// The type a path's file name ends in (case-insensitive, one of [`DocumentType::suffixes`]),
    /// or `None` for any other name. A name that is only a suffix (`.md`, a dot file) has none.
    pub fn from_path(path: &str) -> Option<DocumentType> {
        let name = file_name(path).to_ascii_lowercase();
        // The longest suffix wins: `.ocr.json` is OCR, a plain `.json` file is not something we read.
        Self::ALL
            .into_iter()
            .flat_map(|ty| ty.suffixes().iter().map(move |suffix| (ty, *suffix)))
            .filter(|(_, suffix)| name.len() > suffix.len() && name.ends_with(suffix))
            .max_by_key(|(_, suffix)| suffix.len())
            .map(|(ty, _)| ty)
    }

    /// The type of `source_uri` by its extension, or an error listing the supported types.
    pub fn detect(source_uri: &str) -> Result<DocumentType, ParseError> {
        Self::from_path(source_uri).ok_or_else(|| ParseError::UnsupportedType {
            source_uri: source_uri.to_owned(),
            kind: extension(file_name(source_uri)).to_owned(),
            supported: supported(),
        })
    }

    /// The built-in parser for this type.
    pub fn parser(self) -> &'static dyn rag_core::Parser {
        match self {
            Self::Code(language) => code::parser_of(language),
            Self::Markdown => &MarkdownParser,
            Self::Text => &PlainTextParser,
            Self::Ocr => &OcrJsonParser,
            #[cfg(feature = "html")]
            Self::Html => {
                const HTML: HtmlParser = HtmlParser::new();
                &HTML
            }
            #[cfg(not(feature = "html"))]
            Self::Html => {
                const HTML: NotBuiltParser = NotBuiltParser {
                    format: "html",
                    feature: "html",
                };
                &HTML
            }
            Self::Docx => {
                const DOCX: DocxParser = DocxParser::new();
                &DOCX
            }
            #[cfg(feature = "pdf")]
            Self::Pdf => {
                const PDF: PdfParser = PdfParser::new();
                &PDF
            }
            #[cfg(not(feature = "pdf"))]
            Self::Pdf => &NotBuiltParser {
                format: "pdf",
                feature: "pdf",
            },
        }
    }
}

impl fmt::Display for DocumentType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A document type name that is not one of [`DocumentType::ALL`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownDocumentType {
    /// The name that was given.
    pub name: String,
}

impl fmt::Display for UnknownDocumentType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown document type {:?}; supported: {}", self.name, supported())
    }
}

impl std::error::Error for UnknownDocumentType {}

impl FromStr for DocumentType {
    type Err = UnknownDocumentType;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|ty| ty.as_str().eq_ignore_ascii_case(name))
            .ok_or_else(|| UnknownDocumentType { name: name.to_owned() })
    }
}

/// Parses `source` as `doc_type` with the built-in parser.
///
/// ```
/// use rag_chunker::parse::{DocumentType, parse_document};
/// use rag_core::{BlockType, CorpusId, DocumentId, RequestContext, SourceBytes};
///
/// let (id, corpus) = (DocumentId::from("guide"), CorpusId::from("docs"));
/// let source = SourceBytes { document_id: &id, corpus_id: &corpus, source_uri: "guide.md",
///     bytes: b"# Install\n\nRun the installer.\n" };
/// let parsed = parse_document(&RequestContext::local("acme"), DocumentType::Markdown, source)?;
/// let types: Vec<BlockType> = parsed.blocks.iter().map(|b| b.block_type).collect();
/// assert_eq!(types, [BlockType::Heading, BlockType::Paragraph]);
/// assert_eq!(parsed.blocks[0].text.as_deref(), Some("Install"));
/// # Ok::<(), rag_core::ParseError>(())
/// ```
pub fn parse_document(
    ctx: &RequestContext,
    doc_type: DocumentType,
    source: SourceBytes<'_>,
) -> Result<ParsedDocument, ParseError> {
    doc_type.parser().parse(ctx, source)
}

/// Like [`parse_document`], but takes the bytes by value: for Markdown and plain text they become
/// the document's text without a copy, which keeps a large file in memory once, not twice.
/// `source.bytes` is ignored (pass `&[]`); `bytes` is the input.
///
/// ```
/// use rag_chunker::parse::{DocumentType, parse_document_owned};
/// use rag_core::{RequestContext, SourceBytes};
///
/// let (id, corpus) = ("guide".into(), "docs".into());
/// let source = SourceBytes { document_id: &id, corpus_id: &corpus, source_uri: "guide.md", bytes: &[] };
/// let bytes = b"# Install\n\nRun it.\n".to_vec();
/// let parsed = parse_document_owned(&RequestContext::local("acme"), DocumentType::Markdown, source, bytes)?;
/// assert_eq!(parsed.document.text, "# Install\n\nRun it.\n");
/// assert_eq!(parsed.blocks.len(), 2);
/// # Ok::<(), rag_core::ParseError>(())
/// ```
pub fn parse_document_owned(
    ctx: &RequestContext,
    doc_type: DocumentType,
    source: SourceBytes<'_>,
    bytes: Vec<u8>,
) -> Result<ParsedDocument, ParseError> {
    let blocks_of: fn(&str) -> Vec<Block> = match doc_type {
        DocumentType::Markdown => markdown::markdown_blocks,
        DocumentType::Text => text::text_blocks,
        DocumentType::Code(language) => {
            // The file is the text: decoded in place, never copied.
            let text = String::from_utf8(bytes).map_err(|err| ParseError::InvalidUtf8 {
                source_uri: source.source_uri.to_owned(),
                offset: err.utf8_error().valid_up_to(),
            })?;
            return code::parse_code(language, &source, text);
        }
        // OCR JSON, HTML, DOCX and PDF are not the document's text (the text is derived from
        // them): nothing to save, and a DOCX or a PDF is binary, never decoded as UTF-8.
        DocumentType::Ocr | DocumentType::Html | DocumentType::Docx | DocumentType::Pdf => {
            return parse_document(
                ctx,
                doc_type,
                SourceBytes {
                    bytes: &bytes,
                    ..source
                },
            );
        }
    };
    let text = String::from_utf8(bytes).map_err(|err| ParseError::InvalidUtf8 {
        source_uri: source.source_uri.to_owned(),
        offset: err.utf8_error().valid_up_to(),
    })?;
    Ok(parsed_text(&source, text, blocks_of))
}

/// The parser of a format whose parser this build left out: every parse is
/// [`ParseError::NotBuilt`], naming the cargo feature that builds it.
#[derive(Debug, Clone, Copy)]
pub struct NotBuiltParser {
    /// The format, as [`DocumentType::as_str`] names it.
    pub format: &'static str,
    /// The cargo feature of rag-chunker that builds its parser.
    pub feature: &'static str,
}

impl rag_core::Parser for NotBuiltParser {
    fn name(&self) -> &str {
        self.format
    }

    fn parse(&self, _ctx: &RequestContext, source: SourceBytes<'_>) -> Result<ParsedDocument, ParseError> {
        Err(ParseError::NotBuilt {
            source_uri: source.source_uri.to_owned(),
            format: self.format.to_owned(),
            feature: self.feature.to_owned(),
        })
    }
}

fn file_name(path: &str) -> &str {
    path.rsplit(['/', '\\']).next().unwrap_or(path)
}

/// The text after the last dot of a file name, or `""` (dot files such as `.md` have none).
fn extension(name: &str) -> &str {
    match name.rfind('.') {
        Some(dot) if dot > 0 => &name[dot + 1..],
        _ => "",
    }
}

/// The source as UTF-8, exactly as read (a byte-order mark included), or the offset of the first
/// invalid byte.
pub(crate) fn decode(source: &SourceBytes<'_>) -> Result<String, ParseError> {
    match std::str::from_utf8(source.bytes) {
        Ok(text) => Ok(text.to_owned()),
        Err(err) => Err(ParseError::InvalidUtf8 {
            source_uri: source.source_uri.to_owned(),
            offset: err.valid_up_to(),
        }),
    }
}

/// Where the content starts: after a leading byte-order mark, which no block covers.
pub(crate) fn content_start(text: &str) -> usize {
    if text.starts_with('\u{feff}') {
        '\u{feff}'.len_utf8()
    } else {
        0
    }
}

/// A document whose text is `text`, with the identity `source` names.
pub(crate) fn document(source: &SourceBytes<'_>, text: String) -> Document {
    Document {
        id: source.document_id.clone(),
        corpus_id: source.corpus_id.clone(),
        source_uri: source.source_uri.to_owned(),
        text,
    }
}

/// The parse of a format whose decoded text is the document's text: `text` cut into blocks by
/// `blocks_of`, with the identity `source` names.
pub(crate) fn parsed_text(source: &SourceBytes<'_>, text: String, blocks_of: fn(&str) -> Vec<Block>) -> ParsedDocument {
    let blocks = blocks_of(&text);
    ParsedDocument::new(document(source, text), blocks)
}

/// Paragraphs of `range`: maximal runs of non-blank lines, trimmed.
///
/// A line is blank when it holds only whitespace; `\n`, `\r\n` and a lone `\r` all end a line.
pub(crate) fn paragraph_ranges(text: &str, range: Range<usize>) -> Vec<Range<usize>> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut current: Option<Range<usize>> = None;
    let mut line_start = range.start;
    let mut i = range.start;
    loop {
        let at_end = i >= range.end;
        let terminator = !at_end && matches!(bytes[i], b'\n' | b'\r');
        if at_end || terminator {
            let line = line_start..i;
            if text[line.clone()].trim().is_empty() {
                if let Some(paragraph) = current.take() {
                    out.push(trim_range(text, paragraph));
                }
            } else {
                current = Some(current.map_or(line.clone(), |p| p.start..line.end));
            }
            if at_end {
                break;
            }
            i += if bytes[i] == b'\r' && i + 1 < range.end && bytes[i + 1] == b'\n' {
                2
            } else {
                1
            };
            line_start = i;
        } else {
            i += 1;
        }
    }
    if let Some(paragraph) = current {
        out.push(trim_range(text, paragraph));
    }
    out
}

/// Makes raw parser blocks keep the [`rag_core::Parser`] promises: spans trimmed of edge
/// whitespace, in source order, not overlapping, empty ones dropped; and every stretch of
/// non-whitespace text no block covers becomes an `other` block (one per blank-line-separated
/// paragraph of the gap), so nothing is lost.
///
/// Non-heading blocks carry no `text` of their own: their text is their final span's slice.
///
/// The blocks are finished in place, in `raw`'s own buffer: a document may have millions of them,
/// and a second list (or a sort's buffer, when they already are in order) would double them.
pub(crate) fn finish_blocks(text: &str, mut raw: Vec<Block>) -> Vec<Block> {
    let start = content_start(text);
    // The event walk emits blocks in order already; the sort is a guard for odd inputs.
    if !raw.is_sorted_by_key(|b| b.span.start) {
        raw.sort_by_key(|b| b.span.start);
    }
    // `other` blocks for uncovered text, each with the number of blocks kept before it.
    let mut gaps: Vec<(usize, Block)> = Vec::new();
    let mut kept = 0;
    let mut covered = start;
    for read in 0..raw.len() {
        let from = raw[read].span.start.max(covered);
        let to = raw[read].span.end.min(text.len());
        if from >= to || !text.is_char_boundary(from) || !text.is_char_boundary(to) {
            continue;
        }
        let span = trim_range(text, from..to);
        if span.is_empty() {
            continue;
        }
        for gap in paragraph_ranges(text, covered..span.start) {
            gaps.push((kept, Block::new(BlockType::Other, gap.into())));
        }
        raw.swap(kept, read);
        let block = &mut raw[kept];
        block.span = span.clone().into();
        if block.block_type != BlockType::Heading {
            // The text of a non-heading block is its (final) span: no copy.
            block.text = None;
        }
        covered = span.end;
        kept += 1;
    }
    raw.truncate(kept);
    for gap in paragraph_ranges(text, covered..text.len()) {
        gaps.push((kept, Block::new(BlockType::Other, gap.into())));
    }
    insert_before(&mut raw, gaps);
    raw
}

/// Inserts each `(index, block)` of `inserts` (in order of `index`) before the block at `index` of
/// `blocks` as it was, moving the blocks back from the end, in place.
fn insert_before(blocks: &mut Vec<Block>, inserts: Vec<(usize, Block)>) {
    if inserts.is_empty() {
        return;
    }
    let old_len = blocks.len();
    blocks.reserve_exact(inserts.len());
    blocks.resize_with(old_len + inserts.len(), || {
        Block::new(BlockType::Other, Span::new(0, 0))
    });
    let (mut read, mut write) = (old_len, blocks.len());
    for (index, block) in inserts.into_iter().rev() {
        while read > index {
            read -= 1;
            write -= 1;
            blocks.swap(read, write);
        }
        write -= 1;
        blocks[write] = block;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_suffix_names_its_own_type_and_nothing_else_does() {
        for ty in DocumentType::ALL {
            for suffix in ty.suffixes() {
                assert_eq!(
                    DocumentType::from_path(&format!("dir/Name{}", suffix.to_uppercase())),
                    Some(ty)
                );
                // A dot file named only by the suffix has no type.
                assert_eq!(DocumentType::from_path(&format!("dir/{suffix}")), None);
            }
        }
        assert_eq!(DocumentType::from_path("data.json"), None);
        assert_eq!(DocumentType::from_path("archive.tar.gz"), None);
    }
    use crate::sentence::pieces;

    #[test]
    fn extensions_map_to_types_case_insensitively() {
        for (path, ty) in [
            ("a.md", Some(DocumentType::Markdown)),
            ("dir.v2/A.Markdown", Some(DocumentType::Markdown)),
            ("a.TXT", Some(DocumentType::Text)),
            ("a.text", Some(DocumentType::Text)),
            ("C:\\scans\\p1.OCR.JSON", Some(DocumentType::Ocr)),
            ("papers/Report.PDF", Some(DocumentType::Pdf)),
            ("a.json", None),
            ("site/Index.HTML", Some(DocumentType::Html)),
            ("a.htm", Some(DocumentType::Html)),
            ("a.xhtml", Some(DocumentType::Html)),
            ("Report.DOCX", Some(DocumentType::Docx)),
            ("a.doc", None),
            ("README", None),
            (".md", None),
            ("-", None),
        ] {
            assert_eq!(DocumentType::from_path(path), ty, "{path}");
        }
    }

    #[test]
    fn names_round_trip_and_unknown_names_are_an_error() {
        for ty in DocumentType::ALL {
            assert_eq!(ty.to_string().parse::<DocumentType>(), Ok(ty));
            assert_eq!(ty.parser().name(), ty.as_str());
        }
        assert_eq!(
            "odt".parse::<DocumentType>().unwrap_err().to_string(),
            "unknown document type \"odt\"; supported: markdown (.md, .markdown), text (.txt, .text), \
             ocr (.ocr.json), html (.html, .htm, .xhtml), docx (.docx), pdf (.pdf), python (.py, .pyi), \
             rust (.rs), javascript (.js, .mjs, .cjs, .jsx), typescript (.ts, .mts, .cts), tsx (.tsx), go (.go), \
             java (.java), c (.c, .h), cpp (.cc, .cpp, .cxx, .hpp, .hh, .hxx)"
        );
    }

    #[cfg(not(feature = "html"))]
    #[test]
    fn html_without_its_feature_is_not_built() {
        let (id, corpus) = ("d".into(), "c".into());
        let source = SourceBytes {
            document_id: &id,
            corpus_id: &corpus,
            source_uri: "page.html",
            bytes: b"<p>x</p>",
        };
        let err = parse_document(&RequestContext::local("t"), DocumentType::Html, source).err();
        assert_eq!(
            err.map(|e| e.to_string()).as_deref(),
            Some("page.html: html is not supported by this build (rag-chunker's `html` feature is off)")
        );
    }

    #[test]
    fn uncovered_text_becomes_other_blocks_between_the_others_in_order() {
        let text = "lead\n\nA para\n\ngap one\n\ngap two\n\nB para\ntail";
        let span = |s: &str| {
            let at = text.find(s).unwrap();
            Span::new(at, at + s.len())
        };
        let raw = vec![
            Block::new(BlockType::Paragraph, span("A para")),
            Block::new(BlockType::Paragraph, span("B para")),
            Block::new(BlockType::Paragraph, Span::new(3, 3)),
        ];
        let blocks = finish_blocks(text, raw);
        let got: Vec<(BlockType, &str)> = blocks.iter().map(|b| (b.block_type, &text[b.span.range()])).collect();
        assert_eq!(
            got,
            [
                (BlockType::Other, "lead"),
                (BlockType::Paragraph, "A para"),
                (BlockType::Other, "gap one"),
                (BlockType::Other, "gap two"),
                (BlockType::Paragraph, "B para"),
                (BlockType::Other, "tail"),
            ]
        );
    }

    #[test]
    fn paragraphs_split_on_blank_lines_with_any_line_ending() {
        let text = "one\r\ntwo\r\n \t\r\nthree\r\rfour\n\n\n";
        assert_eq!(pieces(text, paragraph_ranges), ["one\r\ntwo", "three", "four"]);
    }
}
