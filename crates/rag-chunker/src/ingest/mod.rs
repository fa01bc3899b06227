//! Ingest: a document from a path or from bytes, the way every front end reads one.
//!
//! The CLI, the Python package and its Ray recipe all turn paths into parsed documents; this
//! module is the one definition of each step they share, so that a chunk id or a limit means the
//! same wherever the document was read:
//!
//! - the document-name rule ([`path_uri`]): the name a file's chunks carry;
//! - bounded reading ([`read_file`], [`read_limited`]): a file or a stream read whole, never past
//!   [`ParseOptions::max_input_bytes`];
//! - the options of every format's parser ([`ParseOptions`]) and parsing with them
//!   ([`parse_bytes`], [`parse_owned`], [`parse_file`]);
//! - the directory walk ([`Walk`], behind the `walk` feature, on ripgrep's `ignore`).
//!
//! ```
//! use rag_chunker::ingest::{ParseOptions, parse_bytes};
//! use rag_chunker::DocumentType;
//! use rag_core::{RequestContext, SourceBytes};
//!
//! let (id, corpus) = ("page".into(), "web".into());
//! let html = b"<nav>Home | Blog</nav><main><h1>Install</h1><p>Run it.</p></main>";
//! let source = SourceBytes { document_id: &id, corpus_id: &corpus, source_uri: "page.html", bytes: html };
//! let ctx = RequestContext::local("acme");
//! # #[cfg(feature = "html")]
//! # {
//! let parsed = parse_bytes(&ctx, DocumentType::Html, source, &ParseOptions::default())?;
//! assert!(!parsed.document.text.contains("Blog")); // site chrome left out
//! let mut keep = ParseOptions::default();
//! keep.html.keep_chrome = true;
//! let parsed = parse_bytes(&ctx, DocumentType::Html, source, &keep)?;
//! assert!(parsed.document.text.contains("Blog"));
//! # }
//! # Ok::<(), rag_core::ParseError>(())
//! ```

mod name;
mod options;
mod read;
#[cfg(feature = "walk")]
mod walk;

use std::path::Path;

use rag_core::{CorpusId, DocumentId, ParseError, ParsedDocument, RequestContext, SourceBytes};

pub use name::path_uri;
pub use options::{DocxOptions, HtmlOptions, ParseOptions, PdfLimits, PdfOptions};
pub use read::{INPUT_SIZE, MAX_INPUT_BYTES, format_size, is_input_too_large, read_file, read_limited};
#[cfg(feature = "walk")]
pub use walk::{FoundFile, Walk, WalkOptions, WalkReport};

use crate::DocumentType;
use crate::parse::{parse_document, parse_document_owned};

/// Parses `source` as `doc_type` with the built-in parser, configured by `options`.
pub fn parse_bytes(
    ctx: &RequestContext,
    doc_type: DocumentType,
    source: SourceBytes<'_>,
    options: &ParseOptions,
) -> Result<ParsedDocument, ParseError> {
    match doc_type {
        #[cfg(feature = "html")]
        DocumentType::Html => {
            let parser = crate::parse::HtmlParser::new()
                .keep_chrome(options.html.keep_chrome)
                .keep_hidden(options.html.keep_hidden);
            rag_core::Parser::parse(&parser, ctx, source)
        }
        #[cfg(feature = "docx")]
        DocumentType::Docx => {
            let parser = crate::parse::DocxParser::new().keep_hidden(options.docx.keep_hidden);
            rag_core::Parser::parse(&parser, ctx, source)
        }
        #[cfg(feature = "pdf")]
        DocumentType::Pdf => {
            let parser = crate::parse::PdfParser::new()
                .limits(options.pdf.limits)
                .keep_hidden(options.pdf.keep_hidden);
            rag_core::Parser::parse(&parser, ctx, source)
        }
        _ => {
            // Formats without options of their own: the options are the parser's defaults.
            let _ = options;
            parse_document(ctx, doc_type, source)
        }
    }
}

/// Like [`parse_bytes`], but takes the bytes by value (`source.bytes` is ignored): for Markdown
/// and plain text they become the document's text without a copy, which keeps a large file in
/// memory once, not twice.
pub fn parse_owned(
    ctx: &RequestContext,
    doc_type: DocumentType,
    source: SourceBytes<'_>,
    bytes: Vec<u8>,
    options: &ParseOptions,
) -> Result<ParsedDocument, ParseError> {
    match doc_type {
        DocumentType::Markdown | DocumentType::Text | DocumentType::Code(_) => {
            parse_document_owned(ctx, doc_type, source, bytes)
        }
        _ => parse_bytes(
            ctx,
            doc_type,
            SourceBytes {
                bytes: &bytes,
                ..source
            },
            options,
        ),
    }
}

/// A file to read and parse, and the identity its document will carry.
#[derive(Debug, Clone, Copy)]
pub struct FileSource<'a> {
    /// The path to open.
    pub path: &'a Path,
    /// The document's name in chunk ids and messages, usually `path_uri(path)`.
    pub source_uri: &'a str,
    /// The document's id.
    pub document_id: &'a DocumentId,
    /// The corpus it belongs to.
    pub corpus_id: &'a CorpusId,
}

/// Reads the file `source` names within `options.max_input_bytes` ([`read_file`]) and parses it as
/// `doc_type` with `options` ([`parse_owned`]).
pub fn parse_file(
    ctx: &RequestContext,
    doc_type: DocumentType,
    source: FileSource<'_>,
    options: &ParseOptions,
) -> Result<ParsedDocument, ParseError> {
    let bytes = read_file(source.path, source.source_uri, options.max_input_bytes)?;
    let bytes_source = SourceBytes {
        document_id: source.document_id,
        corpus_id: source.corpus_id,
        source_uri: source.source_uri,
        bytes: &[],
    };
    parse_owned(ctx, doc_type, bytes_source, bytes, options)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_read_within_its_limit_and_parsed_by_its_type() {
        let dir = std::env::temp_dir().join(format!("rag-chunker-ingest-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("guide.md");
        std::fs::write(&path, "# Install\n\nRun it.\n").unwrap();
        let (id, corpus) = (DocumentId::from("guide.md"), CorpusId::from("docs"));
        let source = FileSource {
            path: &path,
            source_uri: "guide.md",
            document_id: &id,
            corpus_id: &corpus,
        };
        let ctx = RequestContext::local("acme");
        let parsed = parse_file(&ctx, DocumentType::Markdown, source, &ParseOptions::default()).unwrap();
        assert_eq!(parsed.blocks.len(), 2);
        let small = ParseOptions {
            max_input_bytes: 8,
            ..ParseOptions::default()
        };
        let err = parse_file(&ctx, DocumentType::Markdown, source, &small).unwrap_err();
        assert!(is_input_too_large(&err), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
