//! Documents as parsers hand them to chunkers: the source text and its ordered blocks.

use std::ops::Range;

use serde::{Deserialize, Serialize};

use crate::{CorpusId, DocumentId, Origin, Rendition};

/// A half-open byte range `start..end` into a document's source text.
///
/// Offsets are bytes of the UTF-8 text, so they are exact for any script; a valid span starts and
/// ends on character boundaries. A span read from JSON (`{"start": 4, "end": 9}`) that ends
/// before it starts is an error, as [`Span::try_new`] refuses one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "SpanRepr")]
pub struct Span {
    /// First byte of the range.
    pub start: usize,
    /// One past the last byte of the range.
    pub end: usize,
}

impl Span {
    /// The span `start..end`; `start` must not be past `end` (see [`Span::try_new`] for
    /// offsets that come from input).
    pub const fn new(start: usize, end: usize) -> Self {
        Self { start, end }
    }

    /// The span `start..end`, or an error when it would end before it starts.
    ///
    /// ```
    /// use rag_core::Span;
    ///
    /// assert_eq!(Span::try_new(2, 5).unwrap().len(), 3);
    /// let err = Span::try_new(5, 2).unwrap_err();
    /// assert_eq!(err.to_string(), "span 5..2 ends before it starts");
    /// ```
    pub const fn try_new(start: usize, end: usize) -> Result<Self, ReversedSpanError> {
        if start > end {
            return Err(ReversedSpanError { start, end });
        }
        Ok(Self { start, end })
    }

    /// Length in bytes (0 if the span is reversed).
    pub const fn len(&self) -> usize {
        self.end.saturating_sub(self.start)
    }

    /// Whether the span covers no byte.
    pub const fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The span as a `Range` for slicing.
    pub const fn range(&self) -> Range<usize> {
        self.start..self.end
    }
}

/// A span that ends before it starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("span {start}..{end} ends before it starts")]
pub struct ReversedSpanError {
    /// The start given.
    pub start: usize,
    /// The end given, before `start`.
    pub end: usize,
}

/// The wire form of a span, checked by `TryFrom` so that a reversed one is never read.
#[derive(Deserialize)]
struct SpanRepr {
    start: usize,
    end: usize,
}

impl TryFrom<SpanRepr> for Span {
    type Error = ReversedSpanError;

    fn try_from(repr: SpanRepr) -> Result<Self, Self::Error> {
        Self::try_new(repr.start, repr.end)
    }
}

impl From<Range<usize>> for Span {
    fn from(range: Range<usize>) -> Self {
        Self::new(range.start, range.end)
    }
}

/// What a block is, as far as chunking cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockType {
    /// A section heading; carries a [`HeadingLevel`].
    Heading,
    /// A paragraph of prose.
    Paragraph,
    /// One item of a list.
    ListItem,
    /// One row of a table (the header row included).
    TableRow,
    /// Source code or preformatted text, fenced or indented.
    Code,
    /// A block quote.
    Quote,
    /// A figure or table caption.
    Caption,
    /// Anything else: HTML, thematic breaks, front matter, link definitions, footnotes.
    Other,
}

impl BlockType {
    /// Every block type, for exhaustive tests and name lookups.
    pub const ALL: [Self; 8] = [
        Self::Heading,
        Self::Paragraph,
        Self::ListItem,
        Self::TableRow,
        Self::Code,
        Self::Quote,
        Self::Caption,
        Self::Other,
    ];

    /// The snake_case name used in JSON and in the CLI.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Heading => "heading",
            Self::Paragraph => "paragraph",
            Self::ListItem => "list_item",
            Self::TableRow => "table_row",
            Self::Code => "code",
            Self::Quote => "quote",
            Self::Caption => "caption",
            Self::Other => "other",
        }
    }
}

/// A heading level, 1 (outermost) to 6.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "u8", into = "u8")]
pub struct HeadingLevel(u8);

impl HeadingLevel {
    /// Level 1, the outermost.
    pub const H1: Self = Self(1);

    /// The level `level`, or `None` outside 1..=6.
    pub const fn new(level: u8) -> Option<Self> {
        if level >= 1 && level <= 6 {
            Some(Self(level))
        } else {
            None
        }
    }

    /// The level as a number in 1..=6.
    pub const fn get(self) -> u8 {
        self.0
    }
}

impl TryFrom<u8> for HeadingLevel {
    type Error = String;

    fn try_from(level: u8) -> Result<Self, Self::Error> {
        Self::new(level).ok_or_else(|| format!("heading level {level} is outside 1..=6"))
    }
}

impl From<HeadingLevel> for u8 {
    fn from(level: HeadingLevel) -> Self {
        level.0
    }
}

/// One structural unit of a parsed document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Block {
    /// What the block is.
    #[serde(rename = "type")]
    pub block_type: BlockType,
    /// The heading level; set on headings and only on headings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<HeadingLevel>,
    /// The block's text where it is not simply its source slice: a heading's title without its
    /// markup (`Install` for `## Install`), an OCR region's recognised text. `None` means the
    /// text is `document.text[span]`, which is not copied: a 100 MB document has a million
    /// blocks. [`ParsedDocument::block_text`] gives the text in both cases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Where the block sits in the source text, markup included.
    pub span: Span,
    /// Free-form attributes from the parser (OCR engine, confidence, bounding box, page, ...).
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub attributes: serde_json::Map<String, serde_json::Value>,
}

impl Block {
    /// A non-heading block whose text is its source slice.
    pub fn new(block_type: BlockType, span: Span) -> Self {
        Self {
            block_type,
            level: None,
            text: None,
            span,
            attributes: serde_json::Map::new(),
        }
    }

    /// A non-heading block whose text differs from its source slice (e.g. recognised by OCR).
    pub fn with_text(block_type: BlockType, text: impl Into<String>, span: Span) -> Self {
        Self {
            text: Some(text.into()),
            ..Self::new(block_type, span)
        }
    }

    /// A heading block of `level` whose title is `title`.
    pub fn heading(level: HeadingLevel, title: impl Into<String>, span: Span) -> Self {
        Self {
            block_type: BlockType::Heading,
            level: Some(level),
            text: Some(title.into()),
            span,
            attributes: serde_json::Map::new(),
        }
    }
}

/// The document a parser read: identity, where it came from, and its full source text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Document {
    /// The document's id; chunks copy it.
    pub id: DocumentId,
    /// The corpus the document belongs to.
    pub corpus_id: CorpusId,
    /// Where the document was read from (a path, a URL, an object-store key).
    pub source_uri: String,
    /// The text blocks and chunks are cut from. For Markdown and plain text it is the source text
    /// exactly as read, so spans are byte offsets into the input file (a leading byte-order mark
    /// stays in the text, but no block covers it). For formats whose bytes are not the text (HTML,
    /// PDF, DOCX, OCR results) it is the parser's text rendition of the original, and
    /// [`ParsedDocument::rendition`] maps it back.
    pub text: String,
}

/// A document and its blocks in reading order: what a [`Chunker`](crate::Chunker) consumes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParsedDocument {
    /// The document.
    pub document: Document,
    /// Blocks in source order; spans do not overlap and increase.
    pub blocks: Vec<Block>,
    /// Set when the text is a rendition of the original file rather than the file itself: the
    /// original's format, where each stretch of the text comes from, and what was left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rendition: Option<Rendition>,
}

impl ParsedDocument {
    /// A document whose text is the file itself, and its blocks.
    pub fn new(document: Document, blocks: Vec<Block>) -> Self {
        Self {
            document,
            blocks,
            rendition: None,
        }
    }

    /// The source slice a block covers, or `None` if its span is out of range or splits a character.
    pub fn source_of(&self, block: &Block) -> Option<&str> {
        self.document.text.get(block.span.range())
    }

    /// A block's text: its own `text` if it has one (a heading's title), else its source slice.
    pub fn block_text<'a>(&'a self, block: &'a Block) -> Option<&'a str> {
        block.text.as_deref().or_else(|| self.source_of(block))
    }

    /// The places of the original file that `span` of the text comes from (see
    /// [`Rendition::provenance`]); empty when the text is the file itself, where `span` is the place.
    pub fn provenance(&self, span: Span) -> Vec<Origin> {
        self.rendition
            .as_ref()
            .map(|rendition| rendition.provenance(span))
            .unwrap_or_default()
    }

    /// The parser's warnings about the text (see [`Rendition::warnings`]); empty when the text is
    /// the file itself.
    pub fn warnings(&self) -> &[String] {
        self.rendition
            .as_ref()
            .map_or(&[], |rendition| rendition.warnings.as_slice())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reversed_span_is_not_read_from_json() {
        let span: Span = serde_json::from_str(r#"{"start": 2, "end": 5}"#).unwrap();
        assert_eq!(span, Span::new(2, 5));
        let err = serde_json::from_str::<Span>(r#"{"start": 5, "end": 2}"#).unwrap_err();
        assert!(err.to_string().contains("span 5..2 ends before it starts"), "{err}");
        assert!(
            serde_json::from_str::<Span>(r#"{"start": 3, "end": 3}"#).is_ok(),
            "empty is a span"
        );
    }

    fn sample() -> ParsedDocument {
        let text = "# Title\n\nBody text.\n".to_owned();
        let mut heading = Block::heading(HeadingLevel::H1, "Title", Span::new(0, 7));
        heading.attributes.insert("page".into(), serde_json::json!(1));
        ParsedDocument {
            document: Document {
                id: "doc".into(),
                corpus_id: "corpus".into(),
                source_uri: "docs/a.md".into(),
                text,
            },
            blocks: vec![heading, Block::new(BlockType::Paragraph, Span::new(9, 19))],
            rendition: None,
        }
    }

    #[test]
    fn parsed_document_round_trips_through_json() {
        let parsed = sample();
        let json = serde_json::to_value(&parsed).unwrap();
        assert_eq!(json["blocks"][0]["type"], "heading");
        assert_eq!(json["blocks"][0]["level"], 1);
        assert_eq!(json["blocks"][1]["type"], "paragraph");
        assert!(json["blocks"][1].get("level").is_none());
        assert!(json["blocks"][1].get("text").is_none(), "a source slice is not copied");
        assert_eq!(json["blocks"][1]["span"], serde_json::json!({"start": 9, "end": 19}));
        let back: ParsedDocument = serde_json::from_value(json).unwrap();
        assert_eq!(back, parsed);
    }

    #[test]
    fn every_block_type_round_trips() {
        for ty in BlockType::ALL {
            let json = serde_json::to_string(&ty).unwrap();
            assert_eq!(json, format!("\"{}\"", ty.as_str()));
            assert_eq!(serde_json::from_str::<BlockType>(&json).unwrap(), ty);
        }
    }

    #[test]
    fn heading_levels_outside_one_to_six_are_rejected() {
        assert!(HeadingLevel::new(0).is_none());
        assert!(HeadingLevel::new(7).is_none());
        assert_eq!(HeadingLevel::new(6).map(HeadingLevel::get), Some(6));
        let err = serde_json::from_str::<HeadingLevel>("7").unwrap_err();
        assert!(err.to_string().contains("heading level 7 is outside 1..=6"), "{err}");
    }

    #[test]
    fn source_of_returns_the_exact_slice() {
        let parsed = sample();
        assert_eq!(parsed.source_of(&parsed.blocks[0]), Some("# Title"));
        assert_eq!(parsed.source_of(&parsed.blocks[1]), Some("Body text."));
        let outside = Block::new(BlockType::Other, Span::new(10, 99));
        assert_eq!(parsed.source_of(&outside), None);
        assert_eq!(parsed.block_text(&parsed.blocks[0]), Some("Title"));
        assert_eq!(parsed.block_text(&parsed.blocks[1]), Some("Body text."));
        let ocr = Block::with_text(BlockType::Paragraph, "recognised", Span::new(9, 19));
        assert_eq!(parsed.block_text(&ocr), Some("recognised"));
    }

    #[test]
    fn span_helpers() {
        let span = Span::from(3..8);
        assert_eq!(span.len(), 5);
        assert!(!span.is_empty());
        assert!(Span::new(4, 4).is_empty());
        assert_eq!(span.range(), 3..8);
    }
}
