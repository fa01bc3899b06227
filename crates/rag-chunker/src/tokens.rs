//! Token counters on `tiktoken-rs`.
//!
//! Building a BPE table costs 60-150 ms in release builds (over a second in debug), so each
//! encoding is built at most once per process, shared by every counter that names it, and only on
//! the first count: a packer whose chunks all carry a cached `token_count` never pays for it.

use rag_core::{ChunkError, TokenCounter};
use tiktoken_rs::CoreBPE;

/// The encodings [`TiktokenCounter`] knows, by their tiktoken names.
pub const SUPPORTED_ENCODINGS: [&str; 2] = ["cl100k_base", "o200k_base"];

/// Counts tokens with an OpenAI BPE encoding (`cl100k_base` or `o200k_base`).
///
/// `cl100k_base` is the tokenizer of GPT-4 and GPT-3.5 and of OpenAI's embedding models, and a fair
/// estimate for other model families; `o200k_base` is GPT-4o's.
///
/// ```
/// use rag_chunker::TiktokenCounter;
/// use rag_core::TokenCounter;
///
/// let counter = TiktokenCounter::new("cl100k_base")?;
/// assert_eq!(counter.name(), "tiktoken:cl100k_base");
/// assert_eq!(counter.count("hello world"), 2);
/// # Ok::<(), rag_core::ChunkError>(())
/// ```
#[derive(Clone, Copy)]
pub struct TiktokenCounter {
    /// The crate's lazily built singleton for the encoding.
    bpe: fn() -> &'static CoreBPE,
    name: &'static str,
}

/// The error for an encoding name neither backend knows.
fn unknown_encoding(name: &str) -> ChunkError {
    ChunkError::Tokenizer {
        tokenizer: name.to_owned(),
        message: format!("unknown encoding; supported: {}", SUPPORTED_ENCODINGS.join(", ")),
    }
}

impl TiktokenCounter {
    /// A counter for `encoding`; an unknown name is an error listing the supported ones.
    pub fn new(encoding: &str) -> Result<Self, ChunkError> {
        let (bpe, name): (fn() -> &'static CoreBPE, _) = match encoding {
            "cl100k_base" => (tiktoken_rs::cl100k_base_singleton, "tiktoken:cl100k_base"),
            "o200k_base" => (tiktoken_rs::o200k_base_singleton, "tiktoken:o200k_base"),
            other => return Err(unknown_encoding(other)),
        };
        Ok(Self { bpe, name })
    }

    /// The `cl100k_base` counter, the default of the chunker and the packer.
    pub fn cl100k() -> Self {
        Self {
            bpe: tiktoken_rs::cl100k_base_singleton,
            name: "tiktoken:cl100k_base",
        }
    }

    /// The token ids of `text`, for callers that need more than the count.
    pub fn encode(&self, text: &str) -> Vec<u32> {
        (self.bpe)().encode_ordinary(text)
    }
}

impl std::fmt::Debug for TiktokenCounter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TiktokenCounter").field("name", &self.name).finish()
    }
}

impl TokenCounter for TiktokenCounter {
    fn count(&self, text: &str) -> usize {
        // Special-token text such as "<|endoftext|>" in a document is ordinary text to us: counting
        // it as one special token would undercount what an API charges for user content.
        (self.bpe)().encode_ordinary(text).len()
    }

    fn name(&self) -> &str {
        self.name
    }

    /// True: both encodings' pre-tokenizer regexes always start a piece after a line break that is
    /// followed by a non-whitespace character (no alternative can span `"\n"` followed by
    /// non-whitespace: the ones that match line breaks end with them or hold only whitespace), the
    /// regexes have no look-behind, and BPE encodes each piece on its own. The tests check the sum
    /// over such splits against whole-text counts on the fixtures and on generated text.
    fn splits_at_line_starts(&self) -> bool {
        true
    }
}

/// Counts tokens with the `bpe-openai` crate: the same counts as [`TiktokenCounter`] (the tests
/// compare them on the fixtures and on generated text), about twice as fast, for a larger binary.
///
/// Only with the cargo feature `bpe-openai`. Its tables, like tiktoken-rs's, are built once per
/// process on the first count.
///
/// ```
/// use rag_chunker::tokens::BpeOpenAiCounter;
/// use rag_core::TokenCounter;
///
/// let counter = BpeOpenAiCounter::new("cl100k_base")?;
/// assert_eq!(counter.name(), "tiktoken:cl100k_base");
/// assert_eq!(counter.count("hello world"), 2);
/// # Ok::<(), rag_core::ChunkError>(())
/// ```
#[cfg(feature = "bpe-openai")]
#[derive(Clone, Copy)]
pub struct BpeOpenAiCounter {
    bpe: fn() -> &'static bpe_openai::Tokenizer,
    name: &'static str,
}

#[cfg(feature = "bpe-openai")]
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

    /// The token ids of `text` (the same ids as [`TiktokenCounter::encode`]).
    pub fn encode(&self, text: &str) -> Vec<u32> {
        (self.bpe)().encode(text)
    }
}

#[cfg(feature = "bpe-openai")]
impl std::fmt::Debug for BpeOpenAiCounter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BpeOpenAiCounter").field("name", &self.name).finish()
    }
}

#[cfg(feature = "bpe-openai")]
impl TokenCounter for BpeOpenAiCounter {
    fn count(&self, text: &str) -> usize {
        (self.bpe)().count(text)
    }

    fn name(&self) -> &str {
        self.name
    }

    /// True, for the same reason as [`TiktokenCounter`]'s: `bpe-openai` runs the same
    /// pre-tokenizer (its look-ahead rewritten as a one-character match it gives back) and encodes
    /// each piece on its own.
    fn splits_at_line_starts(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_encodings_count_and_name_themselves() {
        let cl = TiktokenCounter::new("cl100k_base").unwrap();
        let o2 = TiktokenCounter::new("o200k_base").unwrap();
        assert_eq!(cl.name(), "tiktoken:cl100k_base");
        assert_eq!(o2.name(), "tiktoken:o200k_base");
        assert_eq!(cl.count(""), 0);
        assert_eq!(cl.count("hello world"), 2);
        assert_eq!(o2.count("hello world"), 2);
        assert_eq!(cl.count("<|endoftext|>"), cl.encode("<|endoftext|>").len());
        assert!(
            cl.count("<|endoftext|>") > 1,
            "special tokens in user text count as text"
        );
    }

    #[test]
    fn unknown_encodings_are_an_error_listing_the_supported_ones() {
        let err = TiktokenCounter::new("p50k_base").unwrap_err();
        assert_eq!(
            err.to_string(),
            "tokenizer p50k_base: unknown encoding; supported: cl100k_base, o200k_base"
        );
    }
}
