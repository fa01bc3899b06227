//! Small implementations tests share: one definition instead of a copy in every test file.

use rag_core::{TokenCounter, TokenizerError};

/// Counts whitespace-separated words, named `words`: cheap, predictable by eye, and enough to test
/// token rules without a real tokenizer. It never fails and makes no additivity promise.
///
/// ```
/// use rag_contract::testing::WordCounter;
/// use rag_core::TokenCounter;
///
/// assert_eq!(WordCounter.count("the refund  window\n"), Ok(3));
/// assert_eq!(WordCounter.name(), "words");
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct WordCounter;

impl TokenCounter for WordCounter {
    fn count(&self, text: &str) -> Result<usize, TokenizerError> {
        Ok(text.split_whitespace().count())
    }

    fn name(&self) -> &str {
        "words"
    }
}
