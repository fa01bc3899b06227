//! The contract suite of ragctl's SPI: one named check per promise a [`Chunker`](rag_core::Chunker) makes, runnable by
//! anyone implementing the trait, from their own tests, in a few lines.
//!
//! ```
//! use rag_contract::chunker::{check_chunker, Budget};
//! use rag_core::{async_trait, Block, BlockType, Chunk, ChunkError, Chunker, Document, Health,
//!     ParsedDocument, RequestContext, Span};
//!
//! /// One chunk per block: the simplest chunker that keeps every promise.
//! struct OnePerBlock;
//!
//! #[async_trait]
//! impl Chunker for OnePerBlock {
//!     async fn chunk(&self, ctx: &RequestContext, parsed: &ParsedDocument) -> Result<Vec<Chunk>, ChunkError> {
//!         Ok(parsed.blocks.iter().enumerate().map(|(i, block)| {
//!             let text = &parsed.document.text[block.span.range()];
//!             let mut chunk = Chunk::with_content(format!("c{i}"), parsed.document.id.clone(),
//!                 ctx.tenant_id.clone(), text);
//!             chunk.position = i;
//!             chunk.span = Some(block.span);
//!             chunk.acl_labels = ctx.principal.acl_labels.clone();
//!             chunk
//!         }).collect())
//!     }
//!     async fn health(&self) -> Health { Health::Healthy }
//! }
//!
//! let text = "Hello.\n\nWorld.".to_owned();
//! let parsed = ParsedDocument {
//!     document: Document { id: "d".into(), corpus_id: "c".into(), source_uri: "mem".into(), text },
//!     blocks: vec![
//!         Block::new(BlockType::Paragraph, "Hello.", Span::new(0, 6)),
//!         Block::new(BlockType::Paragraph, "World.", Span::new(8, 14)),
//!     ],
//! };
//! let report = check_chunker(&OnePerBlock, &RequestContext::local("t"), &parsed, None);
//! assert!(report.passed(), "{report}");
//! ```

pub mod chunker;
mod violation;

pub use violation::{Report, Violation};

#[cfg(test)]
mod self_test;
