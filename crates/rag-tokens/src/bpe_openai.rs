//! The `bpe-openai` backend (cargo feature `bpe-openai`).

use rag_core::{ChunkError, TokenCounter, TokenizerError};

use crate::unknown_encoding;

/// Counts tokens with the `bpe-openai` crate: the same counts and ids as
/// [`TiktokenCounter`](crate::TiktokenCounter) (the tests compare them on generated text), faster,
/// for a larger binary (see `docs/performance.md`).
///
/// Only with the cargo feature `bpe-openai`. Its tables, like tiktoken-rs's, are built once per
/// process on the first count.
///
/// ```
/// use rag_tokens::BpeOpenAiCounter;
/// use rag_core::TokenCounter;
///
/// let counter = BpeOpenAiCounter::new("cl100k_base")?;
/// assert_eq!(counter.name(), "tiktoken:cl100k_base");
/// assert_eq!(counter.count("hello world")?, 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy)]
pub struct BpeOpenAiCounter {
    bpe: fn() -> &'static bpe_openai::Tokenizer,
    name: &'static str,
}

impl BpeOpenAiCounter {
    /// A counter for `encoding` (`cl100k_base` or `o200k_base`); an unknown name is an error
    /// listing the supported ones.
    ///
    /// Its [`name`](TokenCounter::name) is the tiktoken one (`tiktoken:cl100k_base`): the counts are
    /// the same, so chunks counted by either backend are interchangeable.
    pub fn new(encoding: &str) -> Result<Self, ChunkError> {
        let (bpe, name): (fn() -> &'static bpe_openai::Tokenizer, _) = match encoding {
            "cl100k_base" => (bpe_openai::cl100k_base, "tiktoken:cl100k_base"),
            "o200k_base" => (bpe_openai::o200k_base, "tiktoken:o200k_base"),
            other => return Err(unknown_encoding(other)),
        };
        Ok(Self { bpe, name })
    }

    /// The `cl100k_base` counter.
    pub fn cl100k() -> Self {
        Self {
            bpe: bpe_openai::cl100k_base,
            name: "tiktoken:cl100k_base",
        }
    }

    /// The token ids of `text` (the same ids as [`TiktokenCounter::encode`](crate::TiktokenCounter::encode)).
    pub fn encode(&self, text: &str) -> Vec<u32> {
        (self.bpe)().encode(text)
    }
}

impl std::fmt::Debug for BpeOpenAiCounter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BpeOpenAiCounter").field("name", &self.name).finish()
    }
}

impl TokenCounter for BpeOpenAiCounter {
    /// Never fails: the tables are in the binary.
    fn count(&self, text: &str) -> Result<usize, TokenizerError> {
        Ok((self.bpe)().count(text))
    }

    fn name(&self) -> &str {
        self.name
    }

    /// True, for the same reason as [`TiktokenCounter`](crate::TiktokenCounter)'s: `bpe-openai` runs the same
    /// pre-tokenizer (its look-ahead rewritten as a one-character match it gives back) and encodes
    /// each piece on its own.
    fn splits_at_line_starts(&self) -> bool {
        true
    }

    /// True, for the same reason as [`TiktokenCounter`](crate::TiktokenCounter)'s.
    fn splits_at_spaces(&self) -> bool {
        true
    }
}
