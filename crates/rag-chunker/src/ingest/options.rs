//! Parse options: how each format's parser is configured, in one place and one style, so that the
//! CLI, the Python package and a library user set the same things the same way.

use crate::ingest::MAX_INPUT_BYTES;

/// How the HTML parser reads a page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct HtmlOptions {
    /// Keep site chrome (navigation, tables of contents, page headers and footers, sidebars) in
    /// the text instead of leaving it out; scripts, styles and comments stay out either way.
    pub keep_chrome: bool,
    /// Keep the text the page hides (the `hidden` attribute, `aria-hidden="true"`, an inline
    /// `display: none` or `visibility: hidden`) instead of leaving it out (see
    /// `HtmlParser::keep_hidden`).
    pub keep_hidden: bool,
}

/// How the DOCX parser reads a Word file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct DocxOptions {
    /// Keep hidden runs (`w:vanish`, directly or through a style) instead of leaving them out
    /// (see `DocxParser::keep_hidden`).
    pub keep_hidden: bool,
}

/// How the PDF parser reads a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct PdfOptions {
    /// The limits it enforces (pages, text, runs and operators, decompressed streams).
    pub limits: PdfLimits,
    /// Keep text a reader of the page does not see (invisible, in the background's colour, under
    /// 1 pt, clipped away) instead of leaving it out as `hidden` (see `PdfParser::keep_hidden`).
    pub keep_hidden: bool,
}

/// The limits the PDF parser enforces (see `PdfParser`); the same type whether or not the `pdf`
/// feature is built, so configuration code compiles either way.
#[cfg(feature = "pdf")]
pub use crate::parse::PdfLimits;

/// The limits the PDF parser enforces; this build has no PDF parser (rag-chunker's `pdf` feature is
/// off), so they configure nothing.
#[cfg(not(feature = "pdf"))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PdfLimits;

/// How documents are read and parsed: the options of every format, and the most bytes an input
/// is read to. [`keep_hidden`](Self::keep_hidden) sets every format's `keep_hidden` at once.
///
/// ```
/// use rag_chunker::ingest::ParseOptions;
///
/// let mut options = ParseOptions::default();
/// options.html.keep_chrome = true;
/// options.max_input_bytes = 64 << 20;
/// # #[cfg(feature = "pdf")]
/// # { options.pdf.limits.max_pages = 500; }
/// assert!(options.html.keep_chrome);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ParseOptions {
    /// HTML pages.
    pub html: HtmlOptions,
    /// Word files.
    pub docx: DocxOptions,
    /// PDF files.
    pub pdf: PdfOptions,
    /// The most bytes a file or a stream is read to ([`MAX_INPUT_BYTES`] by default): a larger
    /// input is a `ParseError::LimitExceeded` before it is parsed.
    pub max_input_bytes: u64,
}

impl ParseOptions {
    /// These options with hidden text kept (`keep`) or left out in every format that hides
    /// text: HTML, DOCX and PDF.
    #[must_use]
    pub fn keep_hidden(mut self, keep: bool) -> Self {
        self.html.keep_hidden = keep;
        self.docx.keep_hidden = keep;
        self.pdf.keep_hidden = keep;
        self
    }
}

impl Default for ParseOptions {
    fn default() -> Self {
        Self {
            html: HtmlOptions::default(),
            docx: DocxOptions::default(),
            pdf: PdfOptions::default(),
            max_input_bytes: MAX_INPUT_BYTES,
        }
    }
}
