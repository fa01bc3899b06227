//! Provenance: where the text of a document came from in its original file, when that text is a
//! rendition of the file (HTML, PDF, DOCX) or was recognised from it (OCR) rather than the file
//! itself.
//!
//! A parser of such a format writes a [`Rendition`] beside the document: the text the chunks are cut
//! from stays `Document::text`, so `content == text[span]` holds for every chunk, and the rendition's
//! source map says, stretch by stretch, which place of the original each part of that text comes
//! from. A chunk's [`provenance`](crate::Chunk::provenance) is the source map read over the chunk's
//! span ([`Rendition::provenance`]), so a user can open the original at the place a chunk names.
//!
//! ```
//! use rag_core::{MappedSpan, Origin, Rendition, Span};
//!
//! // Two paragraphs of page 1 and one of page 2 of a PDF, at these offsets of the rendition.
//! let mut rendition = Rendition::new("pdf", Some(48_213));
//! rendition.source_map = vec![
//!     MappedSpan::new(Span::new(0, 40), Origin::page(1, [72.0, 90.0, 540.0, 130.0])),
//!     MappedSpan::new(Span::new(42, 90), Origin::page(1, [72.0, 140.0, 540.0, 200.0])),
//!     MappedSpan::new(Span::new(92, 130), Origin::page(2, [72.0, 72.0, 300.0, 96.0])),
//! ];
//! // A chunk over the first two paragraphs names page 1 once, with the box around both.
//! assert_eq!(rendition.provenance(Span::new(0, 90)), [Origin::page(1, [72.0, 90.0, 540.0, 200.0])]);
//! // One that crosses the page break names both pages.
//! assert_eq!(rendition.provenance(Span::new(50, 100)).len(), 2);
//! ```

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::Span;

/// One place in an original file.
///
/// In JSON, an object tagged by `kind`: `{"kind": "bytes", "start": 120, "end": 388}`,
/// `{"kind": "page", "page": 3, "bbox": [72.0, 90.5, 540.0, 130.2]}`,
/// `{"kind": "paragraphs", "part": "word/document.xml", "first": 12, "last": 15}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Origin {
    /// Bytes `start..end` of the original file as read (HTML: the source of the text, markup
    /// between its pieces included), whatever its character encoding.
    Bytes {
        /// First byte.
        start: usize,
        /// One past the last byte.
        end: usize,
    },
    /// A region of a page: PDF text, or an OCR engine's region.
    Page {
        /// The 1-based page number.
        page: u32,
        /// The region's box `[x0, y0, x1, y1]`: for PDF in points from the page's top-left corner
        /// (y grows downwards, as in viewers and OCR engines), for OCR in the engine's coordinates.
        /// `None` when the page is known and the box is not.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        bbox: Option<[f64; 4]>,
        /// The OCR engine's confidence in the text of the region, in the engine's own scale; for a
        /// merged region, the lowest of its parts.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        confidence: Option<f64>,
    },
    /// Paragraphs `first..=last` of one part of a package (DOCX: `word/document.xml`, counting the
    /// `w:p` elements of the part from 0 in document order, table cells included).
    Paragraphs {
        /// The part's name inside the package.
        part: String,
        /// The first paragraph's index.
        first: usize,
        /// The last paragraph's index (inclusive).
        last: usize,
    },
}

impl Origin {
    /// Bytes `start..end` of the original file.
    pub const fn bytes(start: usize, end: usize) -> Self {
        Self::Bytes { start, end }
    }

    /// A box on a 1-based page, without a confidence.
    pub const fn page(page: u32, bbox: [f64; 4]) -> Self {
        Self::Page {
            page,
            bbox: Some(bbox),
            confidence: None,
        }
    }

    /// Paragraphs `first..=last` of `part`.
    pub fn paragraphs(part: impl Into<String>, first: usize, last: usize) -> Self {
        Self::Paragraphs {
            part: part.into(),
            first,
            last,
        }
    }

    /// Widens `self` to cover `next` too, when the two name the same stretch of one place (bytes of
    /// the file, one page, paragraphs of one part); returns whether it did.
    fn absorb(&mut self, next: &Origin) -> bool {
        match (self, next) {
            (Self::Bytes { start, end }, Self::Bytes { start: s, end: e }) => {
                *start = (*start).min(*s);
                *end = (*end).max(*e);
                true
            }
            (
                Self::Page { page, bbox, confidence },
                Self::Page {
                    page: p,
                    bbox: b,
                    confidence: c,
                },
            ) if page == p => {
                *bbox = match (*bbox, *b) {
                    (Some(a), Some(b)) => Some([a[0].min(b[0]), a[1].min(b[1]), a[2].max(b[2]), a[3].max(b[3])]),
                    // A box that does not hold every part would name a place the text is not.
                    _ => None,
                };
                *confidence = match (*confidence, *c) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
                true
            }
            (
                Self::Paragraphs { part, first, last },
                Self::Paragraphs {
                    part: p,
                    first: f,
                    last: l,
                },
            ) if part == p => {
                *first = (*first).min(*f);
                *last = (*last).max(*l);
                true
            }
            _ => false,
        }
    }
}

/// A stretch of a rendition's text and the place of the original it comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MappedSpan {
    /// The stretch of `Document::text`.
    pub span: Span,
    /// Where it comes from.
    pub origin: Origin,
}

impl MappedSpan {
    /// `span` of the text comes from `origin`.
    pub const fn new(span: Span, origin: Origin) -> Self {
        Self { span, origin }
    }
}

/// What a parser knows of a document whose text is a rendition of the original file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rendition {
    /// The original's format, as the parser names it (`html`, `pdf`, `docx`, `ocr`).
    pub format: String,
    /// The size of the original file in bytes, when the parser read it (an OCR result comes from
    /// the engine's JSON, not from the scan).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original_bytes: Option<usize>,
    /// Stretches of the text and their places in the original, in text order, not overlapping.
    /// Text between stretches (separators the rendition adds: blank lines, table pipes, list
    /// markers) comes from no one place.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub source_map: Vec<MappedSpan>,
    /// What of the original the rendition leaves out, in bytes of the original, by what it is
    /// (`markup`, `script`, `style`, `comment`, `chrome`, `page_furniture`, ...).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub left_out: BTreeMap<String, usize>,
    /// What the user must be told about the rendition because its text may not be the whole of
    /// the original: a file the reader had to repair, content it skipped, a document that gave no
    /// text. Each is one sentence that names the place in the original (a page, a part) but not
    /// the file, which the caller knows; front ends print them beside the file's name (the CLI on
    /// stderr). Text left out on purpose is counted in `left_out` instead; a warning says what the
    /// parser could not read or had to guess.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl Rendition {
    /// A rendition of an original of `original_bytes` bytes in `format`, with an empty source map.
    pub fn new(format: impl Into<String>, original_bytes: Option<usize>) -> Self {
        Self {
            format: format.into(),
            original_bytes,
            source_map: Vec::new(),
            left_out: BTreeMap::new(),
            warnings: Vec::new(),
        }
    }

    /// Records a warning about the rendition (see [`Rendition::warnings`]); a message already
    /// recorded is not repeated, so a parser may warn once per page without flooding the user.
    pub fn warn(&mut self, message: impl Into<String>) {
        let message = message.into();
        if !self.warnings.contains(&message) {
            self.warnings.push(message);
        }
    }

    /// Counts `bytes` of the original as left out of the rendition as `what`.
    pub fn leave_out(&mut self, what: &str, bytes: usize) {
        if bytes > 0 {
            *self.left_out.entry(what.to_owned()).or_default() += bytes;
        }
    }

    /// The bytes of the original left out of the rendition, all kinds together.
    pub fn left_out_bytes(&self) -> usize {
        self.left_out.values().sum()
    }

    /// The places of the original that `span` of the text comes from, in text order: the source
    /// map's stretches that overlap `span`, neighbours that name the same place merged (one byte
    /// range, one box per page, one paragraph range per part).
    pub fn provenance(&self, span: Span) -> Vec<Origin> {
        // Stretches are in text order and do not overlap, so their ends increase too.
        let first = self.source_map.partition_point(|mapped| mapped.span.end <= span.start);
        let mut origins: Vec<Origin> = Vec::new();
        for mapped in self.source_map[first..]
            .iter()
            .take_while(|mapped| mapped.span.start < span.end)
        {
            let absorbed = origins.last_mut().is_some_and(|last| last.absorb(&mapped.origin));
            if !absorbed {
                origins.push(mapped.origin.clone());
            }
        }
        origins
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn html() -> Rendition {
        let mut rendition = Rendition::new("html", Some(1000));
        rendition.source_map = vec![
            MappedSpan::new(Span::new(0, 10), Origin::bytes(100, 112)),
            MappedSpan::new(Span::new(12, 30), Origin::bytes(130, 160)),
            MappedSpan::new(Span::new(32, 40), Origin::bytes(200, 208)),
        ];
        rendition
    }

    #[test]
    fn provenance_covers_the_stretches_a_span_overlaps() {
        let rendition = html();
        assert_eq!(rendition.provenance(Span::new(0, 40)), [Origin::bytes(100, 208)]);
        assert_eq!(rendition.provenance(Span::new(12, 20)), [Origin::bytes(130, 160)]);
        // A span ending where a stretch starts, or inside a separator, does not reach it.
        assert_eq!(rendition.provenance(Span::new(5, 12)), [Origin::bytes(100, 112)]);
        assert_eq!(rendition.provenance(Span::new(10, 12)), []);
        assert_eq!(rendition.provenance(Span::new(40, 50)), []);
    }

    #[test]
    fn places_merge_only_when_they_are_the_same_page_or_part() {
        let mut rendition = Rendition::new("mixed", None);
        rendition.source_map = vec![
            MappedSpan::new(Span::new(0, 1), Origin::paragraphs("word/document.xml", 3, 3)),
            MappedSpan::new(Span::new(1, 2), Origin::paragraphs("word/document.xml", 4, 5)),
            MappedSpan::new(Span::new(2, 3), Origin::paragraphs("word/footnotes.xml", 0, 0)),
            MappedSpan::new(
                Span::new(3, 4),
                Origin::Page {
                    page: 2,
                    bbox: Some([0.0, 0.0, 1.0, 1.0]),
                    confidence: Some(0.9),
                },
            ),
            MappedSpan::new(
                Span::new(4, 5),
                Origin::Page {
                    page: 2,
                    bbox: None,
                    confidence: Some(0.5),
                },
            ),
        ];
        assert_eq!(
            rendition.provenance(Span::new(0, 5)),
            [
                Origin::paragraphs("word/document.xml", 3, 5),
                Origin::paragraphs("word/footnotes.xml", 0, 0),
                Origin::Page {
                    page: 2,
                    bbox: None,
                    confidence: Some(0.5)
                },
            ]
        );
    }

    #[test]
    fn origins_are_tagged_by_kind_in_json() {
        let origins = [
            Origin::bytes(1, 2),
            Origin::page(3, [1.0, 2.0, 3.0, 4.0]),
            Origin::paragraphs("word/document.xml", 5, 6),
        ];
        let value = serde_json::to_value(&origins).unwrap();
        assert_eq!(
            value,
            json!([
                {"kind": "bytes", "start": 1, "end": 2},
                {"kind": "page", "page": 3, "bbox": [1.0, 2.0, 3.0, 4.0]},
                {"kind": "paragraphs", "part": "word/document.xml", "first": 5, "last": 6},
            ])
        );
        let back: Vec<Origin> = serde_json::from_value(value).unwrap();
        assert_eq!(back, origins);
    }

    #[test]
    fn a_warning_is_recorded_once_and_travels_in_json() {
        let mut rendition = Rendition::new("pdf", Some(100));
        rendition.warn("the cross-reference table was rebuilt");
        rendition.warn("the cross-reference table was rebuilt");
        rendition.warn("page 2: 3 operators skipped");
        assert_eq!(rendition.warnings.len(), 2);
        let value = serde_json::to_value(&rendition).unwrap();
        assert_eq!(value["warnings"][1], "page 2: 3 operators skipped");
        let back: Rendition = serde_json::from_value(value).unwrap();
        assert_eq!(back, rendition);
        // A rendition without warnings writes no field, as before they existed.
        let quiet = serde_json::to_value(Rendition::new("html", None)).unwrap();
        assert!(quiet.get("warnings").is_none());
    }

    #[test]
    fn left_out_bytes_add_up_by_kind() {
        let mut rendition = Rendition::new("html", Some(100));
        rendition.leave_out("markup", 10);
        rendition.leave_out("script", 5);
        rendition.leave_out("markup", 2);
        rendition.leave_out("chrome", 0);
        assert_eq!(rendition.left_out_bytes(), 17);
        assert_eq!(rendition.left_out.get("markup"), Some(&12));
        assert!(!rendition.left_out.contains_key("chrome"));
    }
}
