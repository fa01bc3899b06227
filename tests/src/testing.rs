//! Small implementations tests share: one definition instead of a copy in every test file.

use std::sync::atomic::{AtomicUsize, Ordering};

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

/// Counts as `inner` but makes the additivity promise only if told to, so a test can run a chunker
/// with and without the promise over the same counts.
///
/// ```
/// use rag_contract::testing::{Promising, WordCounter};
/// use rag_core::TokenCounter;
///
/// assert!(Promising::new(WordCounter, true).splits_at_line_starts());
/// assert_eq!(Promising::new(WordCounter, true).count("two words"), Ok(2));
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Promising<C> {
    inner: C,
    promise: bool,
}

impl<C: TokenCounter> Promising<C> {
    /// Counts as `inner`, promising additivity if `promise`.
    pub fn new(inner: C, promise: bool) -> Self {
        Self { inner, promise }
    }
}

impl<C: TokenCounter> TokenCounter for Promising<C> {
    fn count(&self, text: &str) -> Result<usize, TokenizerError> {
        self.inner.count(text)
    }

    fn name(&self) -> &str {
        self.inner.name()
    }

    fn splits_at_line_starts(&self) -> bool {
        self.promise
    }
}

/// Forwards to `inner` and adds up the bytes it was handed, to measure how much text a chunker
/// counts per input byte.
///
/// ```
/// use rag_contract::testing::{Metered, WordCounter};
/// use rag_core::TokenCounter;
///
/// let metered = Metered::new(WordCounter);
/// assert_eq!(metered.count("two words"), Ok(2));
/// assert_eq!(metered.bytes(), 9);
/// ```
#[derive(Debug)]
pub struct Metered<C> {
    inner: C,
    bytes: AtomicUsize,
}

impl<C: TokenCounter> Metered<C> {
    /// Forwards to `inner`, counting nothing yet.
    pub fn new(inner: C) -> Self {
        Self {
            inner,
            bytes: AtomicUsize::new(0),
        }
    }

    /// The bytes of text counted so far.
    pub fn bytes(&self) -> usize {
        self.bytes.load(Ordering::Relaxed)
    }
}

impl<C: TokenCounter> TokenCounter for Metered<C> {
    fn count(&self, text: &str) -> Result<usize, TokenizerError> {
        self.bytes.fetch_add(text.len(), Ordering::Relaxed);
        self.inner.count(text)
    }

    fn name(&self) -> &str {
        self.inner.name()
    }

    fn splits_at_line_starts(&self) -> bool {
        self.inner.splits_at_line_starts()
    }
}

/// Counts as `inner` until its `fail_at`-th call (1-based), which fails as a remote or model-file
/// tokenizer can, named `flaky`; `fail_at` 0 never fails, to count the calls a run makes.
///
/// ```
/// use rag_contract::testing::{FailsAt, WordCounter};
/// use rag_core::{TokenCounter, TokenizerError};
///
/// let counter = FailsAt::new(2, WordCounter);
/// assert_eq!(counter.count("one"), Ok(1));
/// assert_eq!(counter.count("two"), Err(TokenizerError::new("flaky", "call 2 refused")));
/// assert_eq!(counter.count("three"), Ok(1));
/// assert_eq!(counter.calls(), 3);
/// ```
#[derive(Debug)]
pub struct FailsAt<C> {
    inner: C,
    fail_at: usize,
    calls: AtomicUsize,
}

impl<C: TokenCounter> FailsAt<C> {
    /// Fails the `fail_at`-th call and forwards every other one to `inner`.
    pub fn new(fail_at: usize, inner: C) -> Self {
        Self {
            inner,
            fail_at,
            calls: AtomicUsize::new(0),
        }
    }

    /// The calls made so far, the failed one included.
    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::Relaxed)
    }
}

impl<C: TokenCounter> TokenCounter for FailsAt<C> {
    fn count(&self, text: &str) -> Result<usize, TokenizerError> {
        let call = self.calls.fetch_add(1, Ordering::Relaxed) + 1;
        if call == self.fail_at {
            return Err(TokenizerError::new("flaky", format!("call {call} refused")));
        }
        self.inner.count(text)
    }

    fn name(&self) -> &str {
        "flaky"
    }

    fn splits_at_line_starts(&self) -> bool {
        self.inner.splits_at_line_starts()
    }
}
