//! The shared vocabulary of ragctl: ids, request context, documents and blocks, chunks, packed
//! context, errors, and the SPI traits ([`Parser`], [`Chunker`], [`Packer`], [`TokenCounter`], [`Embedder`]).
//!
//! Every other crate of the workspace speaks these types, so a chunker, a packer and the CLI can be
//! swapped independently. This crate is deliberately light: no tokenizer, no async runtime, no
//! telemetry; only `serde`, `thiserror` and `async-trait`.
//!
//! ```
//! use rag_core::{Chunk, RequestContext, TrustLevel};
//!
//! let ctx = RequestContext::local("acme");
//! let mut chunk = Chunk::with_content("guide#3", "guide", ctx.tenant_id.clone(), "Rerankers score pairs.");
//! chunk.score = Some(0.82);
//! chunk.trust = TrustLevel::UserSupplied;
//!
//! // The JSON form is the CLI's interchange format, one chunk per line.
//! let line = serde_json::to_string(&chunk)?;
//! assert!(line.contains(r#""trust":"user_supplied""#));
//! # Ok::<(), serde_json::Error>(())
//! ```

mod chunk;
mod context;
mod document;
mod error;
mod ids;
pub mod jsonl;
mod packed;
mod provenance;
mod spi;

pub use chunk::{CHUNK_FIELDS, Chunk, ChunkKind, CutFrom, Embedding, ExtraFieldError, MissingContentError, TrustLevel};
pub use context::{Principal, RequestContext};
pub use document::{Block, BlockType, Document, HeadingLevel, ParsedDocument, ReversedSpanError, Span};
pub use error::{ChunkError, Error, ModelLoadError, PackerError, ParseError, RenderError, RepackError, RetrievalError};
pub use ids::{ChunkId, CorpusId, DocumentId, TenantId};
pub use packed::{
    ConflictAnnotation, ConflictKind, DropReason, DroppedChunk, Excerpt, Fusion, Order, PackOrder, PackedContext,
    ScoreParts, Scoring, SelectionStrategy,
};
pub use provenance::{MappedSpan, Origin, Rendition};
pub use spi::{
    Chunker, EmbedError, Embedder, Health, Packer, Parser, SourceBytes, TokenCounter, TokenizerError, check_embeddings,
    counts_add_up_at, counts_add_up_at_space, embed_chunks,
};

/// `async_trait` re-exported, so implementers of [`Chunker`] need no extra dependency.
pub use async_trait::async_trait;
