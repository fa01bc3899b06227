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

/// Counts as `inner` and records what it was asked, with two faults a test can turn on: it can
/// withhold or make the additivity promises ([`promising`](Self::promising),
/// [`promising_spaces`](Self::promising_spaces)), and fail one call as a remote or model-file
/// tokenizer can ([`failing_at`](Self::failing_at)).
///
/// It counts the calls and the bytes of text it was handed, so a test can see how often and how
/// much a chunker or packer counts. A counter with a failing call is named `flaky`, so its errors
/// say which counter failed; otherwise it takes `inner`'s name.
///
/// ```
/// use rag_contract::testing::{SpyCounter, WordCounter};
/// use rag_core::{TokenCounter, TokenizerError};
///
/// let spy = SpyCounter::new(WordCounter).promising(true).failing_at(2);
/// assert!(spy.splits_at_line_starts() && spy.splits_at_spaces());
/// assert_eq!(spy.count("two words"), Ok(2));
/// assert_eq!(spy.count("three"), Err(TokenizerError::new("flaky", "call 2 refused")));
/// assert_eq!(spy.count("four"), Ok(1));
/// assert_eq!((spy.calls(), spy.bytes()), (3, 18));
/// ```
#[derive(Debug)]
pub struct SpyCounter<C> {
    inner: C,
    promise: Option<bool>,
    space_promise: Option<bool>,
    fail_at: Option<usize>,
    calls: AtomicUsize,
    bytes: AtomicUsize,
}

impl<C: TokenCounter> SpyCounter<C> {
    /// Counts as `inner`, promising what it promises and never failing, with nothing recorded yet.
    pub fn new(inner: C) -> Self {
        Self {
            inner,
            promise: None,
            space_promise: None,
            fail_at: None,
            calls: AtomicUsize::new(0),
            bytes: AtomicUsize::new(0),
        }
    }

    /// Makes both additivity promises (at line starts and at spaces) if `promise`, and withholds
    /// them otherwise, whatever `inner` promises, so a test can run a chunker with and without
    /// them over the same counts.
    #[must_use]
    pub fn promising(mut self, promise: bool) -> Self {
        self.promise = Some(promise);
        self.space_promise = Some(promise);
        self
    }

    /// Makes the promise that counts add up at spaces if `promise`, and withholds it otherwise,
    /// whatever [`promising`](Self::promising) or `inner` says: a test can then keep the
    /// line-start promise alone.
    #[must_use]
    pub fn promising_spaces(mut self, promise: bool) -> Self {
        self.space_promise = Some(promise);
        self
    }

    /// Fails the `call`-th call (1-based, so `failing_at(0)` never fails) and forwards every
    /// other one.
    #[must_use]
    pub fn failing_at(mut self, call: usize) -> Self {
        self.fail_at = Some(call);
        self
    }

    /// The calls made so far, a failed one included.
    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::Relaxed)
    }

    /// The bytes of text handed to it so far, a failed call's included.
    pub fn bytes(&self) -> usize {
        self.bytes.load(Ordering::Relaxed)
    }
}

impl<C: TokenCounter> TokenCounter for SpyCounter<C> {
    fn count(&self, text: &str) -> Result<usize, TokenizerError> {
        let call = self.calls.fetch_add(1, Ordering::Relaxed) + 1;
        self.bytes.fetch_add(text.len(), Ordering::Relaxed);
        if self.fail_at == Some(call) {
            return Err(TokenizerError::new("flaky", format!("call {call} refused")));
        }
        self.inner.count(text)
    }

    fn name(&self) -> &str {
        if self.fail_at.is_some() {
            "flaky"
        } else {
            self.inner.name()
        }
    }

    fn splits_at_line_starts(&self) -> bool {
        self.promise.unwrap_or_else(|| self.inner.splits_at_line_starts())
    }

    fn splits_at_spaces(&self) -> bool {
        self.space_promise.unwrap_or_else(|| self.inner.splits_at_spaces())
    }
}
