//! The contract suite of ragctl's SPI: one named check per promise a chunker or a context packer
//! makes, runnable by anyone implementing them, from their own tests, in a few lines.
//!
//! - [`chunker`]: the rules of [`rag_core::Chunker`]; [`chunker::check_chunker`] runs them all.
//! - [`packer`]: the rules of a context packer (never over budget, pinned first, deterministic,
//!   every chunk accounted for, foreign tenants refused, dedup and optimal selection equal to their
//!   reference definitions); [`packer::check_packer`] runs them all.
//! - [`counter`]: the line-start additivity a token counter may promise.
//! - [`corpus`]: shared inputs: real Markdown read from a directory, and edge-case generators.
//! - [`generate`]: proptest strategies for documents and packer cases, and seeded samples of them.
//! - [`reference`](mod@reference): the definitions the packer rules compare against (normalisation, shingles,
//!   dedup by all pairs, optimal selection by brute force), for tests that need them directly.
//! - [`embedding`]: a tiny static embedding model built at test time, as a model2vec folder and as
//!   an [`rag_core::Embedder`].
//! - [`testing`]: small implementations tests share, such as the [`testing::WordCounter`].
//! - [`Summary`]: the table of a run (rule, implementation, cases, result).
//!
//! Every check returns a [`Report`] naming the input, the rules that ran and each violation; a
//! test asserts `report.passed()` and prints the report when it did not. `cargo xtask contract`
//! runs every rule against the workspace's own chunker and packer (the `contract-report` binary,
//! behind the `report` feature).
//!
//! A chunker, in a few lines:
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
//! let document = Document { id: "d".into(), corpus_id: "c".into(), source_uri: "mem".into(), text };
//! let parsed = ParsedDocument::new(document, vec![
//!     Block::new(BlockType::Paragraph, Span::new(0, 6)),
//!     Block::new(BlockType::Paragraph, Span::new(8, 14)),
//! ]);
//! let report = check_chunker(&OnePerBlock, &RequestContext::local("t"), &parsed, None);
//! assert!(report.passed(), "{report}");
//! ```

pub mod chunker;
pub mod corpus;
pub mod counter;
pub mod embedding;
pub mod generate;
pub mod packer;
pub mod reference;
mod summary;
pub mod testing;
mod violation;

pub use summary::{Row, Summary};
pub use violation::{Report, Violation};

#[cfg(test)]
mod self_test;
#[cfg(test)]
mod self_test_packer;
