//! Structure-aware chunking for ragctl: parsers that turn files into blocks, the heading-aware
//! chunker that turns blocks into token-budgeted chunks, and the OCR adapter. The token counters
//! live in `rag-tokens` and are re-exported here ([`TiktokenCounter`], and the [`tokens`] module).
//!
//! The pipeline is two calls: [`parse_document`] reads the bytes of a Markdown, plain-text or OCR
//! JSON file into a [`ParsedDocument`](rag_core::ParsedDocument) (source text plus ordered, typed
//! blocks with byte spans), and [`HeadingAwareChunker::chunk_document`] cuts it into
//! [`Chunk`](rag_core::Chunk)s: one per heading, body text packed under its heading within a token
//! budget, every chunk an exact slice of the source with an exact token count, and a
//! `heading_path` saying where it sits.
//!
//! [`ingest`] is how a front end gets a document from a path: the name its chunks carry, reading
//! within a limit, the options of every format's parser, and the directory walk (feature `walk`).
//! This crate does not embed, retrieve, rank or pack: `rag-packer` packs the chunks this crate
//! emits into a prompt budget.
//!
//! ```
//! use rag_chunker::{DocumentType, HeadingAwareChunker, parse_document};
//! use rag_core::{CorpusId, DocumentId, RequestContext, SourceBytes};
//!
//! let ctx = RequestContext::local("acme");
//! let (id, corpus) = (DocumentId::from("guide"), CorpusId::from("docs"));
//! let markdown = "# Guide\n\n## Install\n\nRun `make install`.\n\n## Use\n\nRun `ragctl`.\n";
//! let source = SourceBytes { document_id: &id, corpus_id: &corpus, source_uri: "guide.md",
//!     bytes: markdown.as_bytes() };
//! let parsed = parse_document(&ctx, DocumentType::Markdown, source)?;
//!
//! // 512 tokens per chunk, 64 of overlap, cl100k_base; see `with_budget` and `with_counter`.
//! let chunker = HeadingAwareChunker::default();
//! let chunks = chunker.chunk_document(&ctx, &parsed)?;
//! assert_eq!(chunks.len(), 5); // three headings, two bodies
//! assert_eq!(chunks[2].content(), Some("Run `make install`."));
//! assert_eq!(chunks[2].metadata["heading_path"], serde_json::json!(["Guide", "Install"]));
//! assert_eq!(chunks[2].parent_id, Some(chunks[1].id.clone()));
//! # Ok::<(), rag_core::Error>(())
//! ```

mod heading_aware;
pub mod ingest;
pub mod parse;
mod sentence;

/// The token counters, from `rag-tokens` (re-exported, so `rag_chunker::tokens::...` paths keep
/// working).
pub use rag_tokens as tokens;

pub use heading_aware::HeadingAwareChunker;
pub use parse::{
    DocumentType, DocxParser, MarkdownParser, OcrJsonParser, OcrRegion, OcrResult, PlainTextParser,
    UnknownDocumentType, ocr_result_to_parsed_document, parse_document, parse_document_owned,
};
#[cfg(feature = "html")]
pub use parse::{
    HTML_ATTRIBUTE_COMPARISONS_PER_BYTE, HtmlParser, MAX_HTML_ATTRIBUTE_COMPARISONS, MAX_HTML_BYTES, MAX_HTML_DEPTH,
    MAX_HTML_NODES,
};
#[cfg(feature = "bpe-openai")]
pub use rag_tokens::BpeOpenAiCounter;
pub use rag_tokens::{SUPPORTED_ENCODINGS, TiktokenCounter};
