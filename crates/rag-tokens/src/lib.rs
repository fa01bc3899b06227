//! Token counters for ragctl: implementations of [`rag_core::TokenCounter`] for OpenAI's BPE
//! encodings, `cl100k_base` and `o200k_base`.
//!
//! The chunker and the packer both need a default counter; this crate holds it, so that a crate
//! that only counts (the packer) does not depend on the chunker. Each backend is one module:
//! [`TiktokenCounter`] on `tiktoken-rs` (always built), `BpeOpenAiCounter` on `bpe-openai`
//! behind the cargo feature `bpe-openai` (the same counts, about twice as fast, a larger binary),
//! and `HuggingFaceCounter` on Hugging Face's `tokenizers` behind the feature `huggingface`
//! (any model's `tokenizer.json`, read from a file the caller names).
//! The OpenAI encodings' tables ship inside those crates: nothing is downloaded, at build time or
//! at run time, and a table is built only on the first count that needs it.
//!
//! This crate does not chunk, pack or truncate text, and it never fetches a tokenizer: it counts.
//!
//! ```
//! use rag_core::TokenCounter;
//! use rag_tokens::TiktokenCounter;
//!
//! let counter = TiktokenCounter::new("o200k_base")?;
//! assert_eq!(counter.name(), "tiktoken:o200k_base");
//! assert_eq!(counter.count("hello world")?, 2);
//! // Both encodings promise that counts add up across line starts and spaces (see the trait).
//! assert!(counter.splits_at_line_starts() && counter.splits_at_spaces());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#[cfg(feature = "bpe-openai")]
mod bpe_openai;
#[cfg(feature = "huggingface")]
mod huggingface;
mod tiktoken;

#[cfg(feature = "bpe-openai")]
pub use bpe_openai::BpeOpenAiCounter;
#[cfg(feature = "huggingface")]
pub use huggingface::HuggingFaceCounter;
use rag_core::ChunkError;
pub use tiktoken::{TABLES_PER_ENCODING, TiktokenCounter};

/// The encodings the counters know, by their tiktoken names.
pub const SUPPORTED_ENCODINGS: [&str; 2] = ["cl100k_base", "o200k_base"];

/// The error for an encoding name no backend knows.
fn unknown_encoding(name: &str) -> ChunkError {
    ChunkError::Tokenizer {
        tokenizer: name.to_owned(),
        message: format!("unknown encoding; supported: {}", SUPPORTED_ENCODINGS.join(", ")),
    }
}
