//! Structure-aware chunking for ragctl: parsers that turn files into blocks, the
//! heading-aware chunker that turns blocks into token-budgeted chunks, token counters on
//! `tiktoken-rs`, and the OCR adapter.
//!
//! This crate does not retrieve, rank or pack; `rag-packer` does that with the chunks it emits.
//!
//! ```
//! use rag_chunker::TiktokenCounter;
//! use rag_core::TokenCounter;
//!
//! let counter = TiktokenCounter::new("o200k_base")?;
//! assert!(counter.count("Chunk along the document's structure.") > 0);
//! # Ok::<(), rag_core::ChunkError>(())
//! ```

pub mod tokens;

pub use tokens::{SUPPORTED_ENCODINGS, TiktokenCounter};
