//! The `tiktoken-rs` backend.
//!
//! Building a BPE table is slow (tens of milliseconds in release builds, over a second in debug),
//! so tables are built only on the first count (a packer whose chunks all carry a cached
//! `token_count` never pays for one), shared by every counter that names the encoding, and kept
//! for the process.
//!
//! One table per encoding is not quite enough on several threads: tiktoken-rs gives each thread
//! its own copy of the pre-tokenizer regex, but the copies share the compiled pattern's inner
//! matchers and with them one pool of match caches, which serialises the threads (see
//! `docs/performance.md`). So threads are spread over up to [`TABLES_PER_ENCODING`] tables, each
//! built on the first count of a thread that needs it.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use rag_core::{ChunkError, TokenCounter, TokenizerError};
use tiktoken_rs::CoreBPE;

use crate::unknown_encoding;

/// The most tables one encoding gets, one per slot of threads (see the module documentation). A
/// table takes about 23 MB; the first slot is tiktoken-rs's own singleton.
pub const TABLES_PER_ENCODING: usize = 4;

/// The tables of one encoding, by thread slot.
struct Tables {
    /// Slot 0: the crate's singleton, shared with any other user of tiktoken-rs in the process.
    singleton: fn() -> &'static CoreBPE,
    /// Builds a fresh table (`None` only if the crate's embedded data failed to load, which its
    /// singleton would have panicked on already).
    build: fn() -> Option<CoreBPE>,
    others: [OnceLock<Option<CoreBPE>>; TABLES_PER_ENCODING - 1],
}

impl Tables {
    const fn new(singleton: fn() -> &'static CoreBPE, build: fn() -> Option<CoreBPE>) -> Self {
        Self {
            singleton,
            build,
            others: [const { OnceLock::new() }; TABLES_PER_ENCODING - 1],
        }
    }

    /// The calling thread's table.
    fn get(&'static self) -> &'static CoreBPE {
        let slot = THREAD_SLOT.with(|slot| *slot);
        match slot.checked_sub(1).and_then(|other| self.others.get(other)) {
            Some(cell) => cell
                .get_or_init(self.build)
                .as_ref()
                .unwrap_or_else(|| (self.singleton)()),
            None => (self.singleton)(),
        }
    }
}

static CL100K: Tables = Tables::new(tiktoken_rs::cl100k_base_singleton, || tiktoken_rs::cl100k_base().ok());
static O200K: Tables = Tables::new(tiktoken_rs::o200k_base_singleton, || tiktoken_rs::o200k_base().ok());

/// Threads take slots in the order of their first count, round robin.
static NEXT_SLOT: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static THREAD_SLOT: usize = NEXT_SLOT.fetch_add(1, Ordering::Relaxed) % TABLES_PER_ENCODING;
}

/// Counts tokens with an OpenAI BPE encoding (`cl100k_base` or `o200k_base`).
///
/// `cl100k_base` is the tokenizer of GPT-4 and GPT-3.5 and of OpenAI's embedding models, and a fair
/// estimate for other model families; `o200k_base` is GPT-4o's.
///
/// ```
/// use rag_tokens::TiktokenCounter;
/// use rag_core::TokenCounter;
///
/// let counter = TiktokenCounter::new("cl100k_base")?;
/// assert_eq!(counter.name(), "tiktoken:cl100k_base");
/// assert_eq!(counter.count("hello world")?, 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy)]
pub struct TiktokenCounter {
    tables: &'static Tables,
    name: &'static str,
}

impl TiktokenCounter {
    /// A counter for `encoding`; an unknown name is an error listing the supported ones.
    pub fn new(encoding: &str) -> Result<Self, ChunkError> {
        let (tables, name): (&'static Tables, _) = match encoding {
            "cl100k_base" => (&CL100K, "tiktoken:cl100k_base"),
            "o200k_base" => (&O200K, "tiktoken:o200k_base"),
            other => return Err(unknown_encoding(other)),
        };
        Ok(Self { tables, name })
    }

    /// The `cl100k_base` counter, the default of the chunker and the packer.
    pub fn cl100k() -> Self {
        Self {
            tables: &CL100K,
            name: "tiktoken:cl100k_base",
        }
    }

    /// The token ids of `text`, for callers that need more than the count.
    pub fn encode(&self, text: &str) -> Vec<u32> {
        self.tables.get().encode_ordinary(text)
    }
}

impl std::fmt::Debug for TiktokenCounter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TiktokenCounter").field("name", &self.name).finish()
    }
}

impl TokenCounter for TiktokenCounter {
    /// Never fails: the tables are in the binary.
    fn count(&self, text: &str) -> Result<usize, TokenizerError> {
        // Special-token text such as "<|endoftext|>" in a document is ordinary text to us: counting
        // it as one special token would undercount what an API charges for user content.
        Ok(self.tables.get().encode_ordinary(text).len())
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

    /// True: in both encodings' pre-tokenizer regexes, a piece that holds a character that is not
    /// whitespace never goes on into a space or tab after it (letters, digits and contractions
    /// stop there, and a run of punctuation takes only the line breaks after it, and in
    /// `o200k_base` slashes), so a piece starts at such a space; the regexes have no look-behind,
    /// and the text before it cannot end in a way the `$` or `(?!\S)` alternatives treat
    /// differently, since it ends with a character that is not whitespace. The tests check the sum
    /// over such splits against whole-text counts on the fixtures and on generated text.
    fn splits_at_spaces(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(counter: &TiktokenCounter, text: &str) -> usize {
        counter.count(text).unwrap()
    }

    #[test]
    fn known_encodings_count_and_name_themselves() {
        let cl = TiktokenCounter::new("cl100k_base").unwrap();
        let o2 = TiktokenCounter::new("o200k_base").unwrap();
        assert_eq!(cl.name(), "tiktoken:cl100k_base");
        assert_eq!(o2.name(), "tiktoken:o200k_base");
        assert_eq!(n(&cl, ""), 0);
        assert_eq!(n(&cl, "hello world"), 2);
        assert_eq!(n(&o2, "hello world"), 2);
        assert_eq!(n(&cl, "<|endoftext|>"), cl.encode("<|endoftext|>").len());
        assert!(n(&cl, "<|endoftext|>") > 1, "special tokens in user text count as text");
    }

    #[test]
    fn every_thread_slot_counts_alike() {
        // More threads than slots, so every slot's table is built and used, some by two threads.
        let text = "Rerankers score (query, passage) pairs; the café's 3 TB index — ünïcode too.\n\n  x";
        let counters = [TiktokenCounter::cl100k(), TiktokenCounter::new("o200k_base").unwrap()];
        let want: Vec<(usize, Vec<u32>)> = counters.iter().map(|c| (n(c, text), c.encode(text))).collect();
        std::thread::scope(|scope| {
            let threads: Vec<_> = (0..TABLES_PER_ENCODING + 2)
                .map(|_| {
                    scope.spawn(|| {
                        counters
                            .iter()
                            .map(|c| (n(c, text), c.encode(text)))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            for thread in threads {
                assert_eq!(thread.join().unwrap(), want);
            }
        });
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
