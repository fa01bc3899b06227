//! Stages 4 and 5: exact and near-duplicate removal.
//!
//! Both passes walk texts in priority order (pinned first, then rank order) and compare each text
//! with the texts *kept so far*: a text is dropped if it duplicates one that survived, never one that
//! was itself dropped. The first `anchors` texts (the pinned chunks) are always kept and never
//! compared with each other.
//!
//! Exact dedup compares [normalised](normalise) texts. Near dedup compares word [shingles] with the
//! [Jaccard](jaccard) similarity. It is exact (it finds every pair at or above the threshold, as the
//! all-pairs loop would) but does not compare all pairs: an inverted index over a prefix of each
//! kept text's shingles (prefix filtering) proposes the only texts that can reach the threshold,
//! and each proposal is verified on the full shingle sets.
//!
//! # How the hot path works
//!
//! The work per text does not depend on the priority order, so [`PreparedTexts`] does it first, in
//! any order and on the rayon pool. Each text is read once: its words are found 64 bytes at a time
//! with bit masks and hashed to 64 bits (a short ASCII word with one masked load; other text
//! through a small buffer), and the same loop gives the text's exact-dedup key and its rolling
//! shingle hashes; its prefix is then selected while the shingles are still in cache, in one global
//! order that puts common shingles last ([`CommonShingles`], estimated from a sample of the texts).
//! No normalised string is built except to confirm an exact match, so a hash collision can never
//! drop a chunk as an exact duplicate. Shingles are compared as 64-bit hashes (see
//! [`ShingleSets`] for what a collision would mean).
//!
//! The verdicts then come from one sequential pass in priority order. Only the prefix tokens found
//! in two or more prefixes can propose anything; [`prefix_index`] finds those first, in parallel,
//! and the pass indexes only them.
//!
//! Texts with equal normalised text form a group whose first member (its *representative*) is the
//! only one shingled and indexed: a later member has the same shingle set, so its verdict follows
//! from the representative's (an exact duplicate of it if it was kept, otherwise the same near
//! duplicate verdict; see [`jaccard_dedup`]).

use std::collections::{BTreeSet, HashMap};
use std::hash::{BuildHasherDefault, Hasher};
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};

use rag_core::PackerError;
use rayon::prelude::*;
use sha2::{Digest, Sha256};

use prefix_index::{Hint, PrefixIndex, SharedTokens, UNSHARED};

mod prefix_index;

/// One normalised word, as [`for_each_word`] yields it.
#[derive(Clone, Copy)]
enum Word<'a> {
    /// A run of ASCII alphanumerics straight from the text, not yet lower-cased.
    Ascii(&'a str),
    /// A word built character by character (the text had non-ASCII characters there), already
    /// lower-cased.
    Lower(&'a str),
}

/// Whether `b` can be part of a word: an ASCII alphanumeric, or a byte of a non-ASCII character
/// (which the Unicode rules then decide). Everything else is an ASCII separator.
/// The scanner uses [`word_byte_flags`], eight bytes at a time; this is its readable definition.
#[cfg(test)]
fn is_word_byte(b: u8) -> bool {
    (b | 0x20).wrapping_sub(b'a') < 26 || b.wrapping_sub(b'0') < 10 || b >= 0x80
}

/// One bit per byte of `text` (bit `i % 64` of word `i / 64`): set for a byte that can be part
/// of a word: an ASCII alphanumeric or any byte of a non-ASCII character.
///
/// Eight bytes at a time (SWAR): the scanner then steps from word to word with bit operations
/// instead of branching on every byte. A unit test checks it against the byte-by-byte rule.
///
/// Returns whether `text` is all ASCII, found on the way (it saves a pass over the text).
fn word_bits(text: &[u8], bits: &mut Vec<u64>) -> bool {
    bits.clear();
    let mut mask = 0u64;
    let mut high = 0u64;
    let mut blocks = text.chunks_exact(8);
    for (k, block) in (&mut blocks).enumerate() {
        let x = load_8(block);
        high |= x;
        mask |= word_byte_flags(x) << (8 * (k % 8));
        if k % 8 == 7 {
            bits.push(mask);
            mask = 0;
        }
    }
    let rest = blocks.remainder();
    let full = text.len() / 8;
    if !rest.is_empty() {
        // Zero padding is a separator, so it adds no flags.
        let x = load_tail(rest);
        high |= x;
        mask |= word_byte_flags(x) << (8 * (full % 8));
    }
    if !full.is_multiple_of(8) || !rest.is_empty() {
        bits.push(mask);
    }
    high & 0x8080_8080_8080_8080 == 0
}

/// The word-byte flags of the eight bytes of `x` (little-endian), as eight bits.
fn word_byte_flags(x: u64) -> u64 {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let ones = |b: u8| u64::from(b) * 0x0101_0101_0101_0101;
    let high = x & HIGH;
    let t = x & !HIGH;
    // Each sum stays below 0x100 per byte (t <= 0x7f), so no carry crosses into the next byte;
    // bit 7 of a byte of `t + (0x80 - lo)` is set exactly when the byte is at least `lo`.
    let lower = t | ones(0x20);
    let letter = (lower + ones(0x80 - b'a')) & !(lower + ones(0x7f - b'z'));
    let digit = (t + ones(0x80 - b'0')) & !(t + ones(0x7f - b'9'));
    let flags = (letter | digit | high) & HIGH;
    // Gather the eight bit-7s into the top byte, then down.
    ((flags >> 7).wrapping_mul(0x0102_0408_1020_4080)) >> 56
}

/// The maximal runs of word bytes, as `(start, end)` in order, given the [`word_bits`] of a text
/// of `len` bytes.
///
/// Starts and ends are found 64 bytes at a time with bit operations: one mispredicted branch per
/// block rather than one per word. An iterator rather than a callback, so that the caller's loop
/// body is compiled into the loop.
struct Segments<'b> {
    bits: &'b [u64],
    len: usize,
    /// The next block of `bits` to load.
    next_block: usize,
    /// Where the current block starts in the text.
    base: usize,
    /// The current block's segment starts and ends not taken yet. A start is a word byte after a
    /// separator; an end is a separator after a word byte. They alternate, beginning with an end
    /// when a segment is still open from the previous block.
    starts: u64,
    ends: u64,
    /// Whether the last byte of the previous block was a word byte.
    carry: u64,
    /// The start of the segment in progress, or `usize::MAX`.
    open: usize,
}

impl<'b> Segments<'b> {
    fn new(bits: &'b [u64], len: usize) -> Self {
        Self {
            bits,
            len,
            next_block: 0,
            base: 0,
            starts: 0,
            ends: 0,
            carry: 0,
            open: usize::MAX,
        }
    }
}

impl Iterator for Segments<'_> {
    type Item = (usize, usize);

    #[inline]
    fn next(&mut self) -> Option<(usize, usize)> {
        loop {
            if self.open == usize::MAX {
                if self.starts != 0 {
                    self.open = self.base + self.starts.trailing_zeros() as usize;
                    self.starts &= self.starts - 1;
                    continue;
                }
            } else if self.ends != 0 {
                let end = self.base + self.ends.trailing_zeros() as usize;
                self.ends &= self.ends - 1;
                return Some((std::mem::replace(&mut self.open, usize::MAX), end));
            }
            let Some(&mask) = self.bits.get(self.next_block) else {
                // Bits past the end are zero, so only a segment ending exactly at a 64-byte
                // boundary is still open here.
                return (self.open != usize::MAX).then(|| (std::mem::replace(&mut self.open, usize::MAX), self.len));
            };
            let before = (mask << 1) | self.carry;
            self.starts = mask & !before;
            self.ends = !mask & before;
            self.carry = mask >> 63;
            self.base = 64 * self.next_block;
            self.next_block += 1;
        }
    }
}

/// Calls `emit` with each word of the [normalised](normalise) form of `text`, in order.
///
/// This is the one definition of the words: [`normalise`] joins what it yields, and the dedup
/// hashes the same words (see [`push_word_hashes`]). The text is cut into *segments* at ASCII
/// separators (no UTF-8 multi-byte sequence contains an ASCII byte, so these are character
/// boundaries), found with [`Segments`]. A segment of ASCII alphanumerics is one word as it
/// stands; a segment with other characters follows the Unicode rule of [`lower_words`].
fn for_each_word<'t>(text: &'t str, scratch: &mut String, bits: &mut Vec<u64>, mut emit: impl FnMut(Word<'_>)) {
    word_bits(text.as_bytes(), bits);
    for (start, end) in Segments::new(bits, text.len()) {
        let segment: &'t str = &text[start..end];
        if segment.is_ascii() {
            emit(Word::Ascii(segment));
        } else {
            lower_words(segment, scratch, |word| emit(Word::Lower(word)));
        }
    }
}

/// The words of a segment with non-ASCII characters, character by character: each character is
/// lower-cased first, and each character of the lower-case form continues the word if it is
/// alphanumeric and ends it otherwise. Lower-casing before classifying keeps [`normalise`]
/// idempotent.
fn lower_words(segment: &str, scratch: &mut String, mut emit: impl FnMut(&str)) {
    scratch.clear();
    for c in segment.chars() {
        if c.is_ascii() {
            // Only alphanumerics reach here (separators end segments): skip the Unicode tables.
            scratch.push(c.to_ascii_lowercase());
            continue;
        }
        if let Some(lower) = latin1_lower(c) {
            scratch.push(lower);
            continue;
        }
        for lower in c.to_lowercase() {
            if lower.is_alphanumeric() {
                scratch.push(lower);
            } else if !scratch.is_empty() {
                emit(scratch);
                scratch.clear();
            }
        }
    }
    if !scratch.is_empty() {
        emit(scratch);
    }
}

/// The lower-case form of a Latin-1 letter (`À`..`ÿ` except `×` and `÷`), which is a single
/// alphanumeric character: a shortcut past the Unicode tables for the most common non-ASCII
/// letters. `None` for any other character.
fn latin1_lower(c: char) -> Option<char> {
    match c {
        '\u{df}'..='\u{ff}' if c != '\u{f7}' => Some(c),
        '\u{c0}'..='\u{de}' if c != '\u{d7}' => char::from_u32(u32::from(c) + 0x20),
        _ => None,
    }
}

/// The normalised form of `text`: lower-cased, each run of Unicode alphanumeric characters a word,
/// the words joined by one space. Punctuation, symbols and whitespace only separate words.
///
/// ```
/// use rag_packer::normalise;
///
/// assert_eq!(normalise("  The Refund-window is 30 DAYS!  "), "the refund window is 30 days");
/// assert_eq!(normalise("Ünïcode, ÇA VA?"), "ünïcode ça va");
/// assert_eq!(normalise("-- *** --"), "");
/// ```
pub fn normalise(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let (mut scratch, mut bits) = (String::new(), Vec::new());
    for_each_word(text, &mut scratch, &mut bits, |word| {
        if !out.is_empty() {
            out.push(' ');
        }
        match word {
            Word::Ascii(w) => {
                let start = out.len();
                out.push_str(w);
                out[start..].make_ascii_lowercase();
            }
            Word::Lower(w) => out.push_str(w),
        }
    });
    out
}

/// The words of the [normalised](normalise) text.
///
/// ```
/// use rag_packer::normalised_words;
///
/// assert_eq!(normalised_words("Hello, World!"), ["hello", "world"]);
/// ```
pub fn normalised_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let (mut scratch, mut bits) = (String::new(), Vec::new());
    for_each_word(text, &mut scratch, &mut bits, |word| {
        words.push(match word {
            Word::Ascii(w) => w.to_ascii_lowercase(),
            Word::Lower(w) => w.to_owned(),
        });
    });
    words
}

/// The word `size`-shingles of `words`: every run of `size` consecutive words, joined by one space.
///
/// A text of fewer than `size` words (but at least one) is a single shingle of all its words, so
/// short texts still compare; no words give the empty set. A `size` of 0 is treated as 1.
///
/// This is the readable definition; the dedup computes the same sets as 64-bit hashes.
///
/// ```
/// use rag_packer::shingles;
///
/// let set = shingles(&["a", "b", "c", "d"], 3);
/// assert_eq!(set.into_iter().collect::<Vec<_>>(), ["a b c", "b c d"]);
/// assert_eq!(shingles(&["only", "two"], 5).len(), 1);
/// ```
pub fn shingles<S: AsRef<str>>(words: &[S], size: usize) -> BTreeSet<String> {
    let size = size.max(1);
    if words.is_empty() {
        return BTreeSet::new();
    }
    let join = |window: &[S]| window.iter().map(AsRef::as_ref).collect::<Vec<_>>().join(" ");
    if words.len() < size {
        return BTreeSet::from([join(words)]);
    }
    words.windows(size).map(join).collect()
}

/// The Jaccard similarity `|a ∩ b| / |a ∪ b|`, in 0..=1.
///
/// Two empty sets have similarity 0: a text without words is never a *near* duplicate (two such
/// texts normalise to the same empty string, so exact dedup already catches them).
///
/// ```
/// use std::collections::BTreeSet;
/// use rag_packer::jaccard;
///
/// let a = BTreeSet::from([1, 2, 3, 4]);
/// let b = BTreeSet::from([2, 3, 4, 5]);
/// assert_eq!(jaccard(&a, &b), 0.6);
/// ```
pub fn jaccard<T: Ord>(a: &BTreeSet<T>, b: &BTreeSet<T>) -> f64 {
    similarity_from_counts(a.intersection(b).count(), a.len(), b.len())
}

/// The one formula both the public [`jaccard`] and the index use, so they agree to the last bit.
fn similarity_from_counts(overlap: usize, len_a: usize, len_b: usize) -> f64 {
    let union = len_a + len_b - overlap;
    if union == 0 { 0.0 } else { overlap as f64 / union as f64 }
}

/// The SHA-256 of the [normalised](normalise) text: a stable fingerprint of what exact dedup
/// compares (two texts are exact duplicates exactly when their normalised texts are equal).
///
/// ```
/// use rag_packer::content_hash;
///
/// assert_eq!(content_hash("Refunds: 30 days."), content_hash("refunds 30 DAYS"));
/// assert_ne!(content_hash("Refunds: 30 days."), content_hash("Refunds: 14 days."));
/// ```
pub fn content_hash(text: &str) -> [u8; 32] {
    Sha256::digest(normalise(text).as_bytes()).into()
}

/// What dedup decided for one text; `of` is an index into the same slice.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DedupVerdict {
    /// The text survives (it may still be left out later for lack of room).
    Kept,
    /// Its normalised text equals that of the kept text `of` (the first such kept text).
    ExactDuplicate {
        /// Index of the kept text it duplicates.
        of: usize,
    },
    /// Its shingle set has Jaccard similarity at least the threshold with the kept text `of`.
    NearDuplicate {
        /// Index of the first kept text (pinned first, then rank order) at or above the threshold.
        of: usize,
        /// The similarity with that text.
        similarity: f64,
    },
}

/// Exact dedup: drops each text whose normalised form equals that of a text kept before it.
///
/// `texts` are in priority order; the first `anchors` (pinned chunks) are always kept. A `None` text
/// (a chunk known only by its `content_ref`) cannot be compared and is always kept. Texts are
/// grouped by a 64-bit hash of their normalised words and a match is confirmed by comparing the
/// normalised texts, so the result is exact. `O(total text length)`.
///
/// ```
/// use rag_packer::{DedupVerdict, hash_dedup};
///
/// let texts = [Some("Refunds take 30 days."), Some("refunds TAKE 30 days"), Some("Other.")];
/// assert_eq!(
///     hash_dedup(&texts, 0),
///     [DedupVerdict::Kept, DedupVerdict::ExactDuplicate { of: 0 }, DedupVerdict::Kept]
/// );
/// ```
pub fn hash_dedup(texts: &[Option<&str>], anchors: usize) -> Vec<DedupVerdict> {
    let order: Vec<usize> = (0..texts.len()).collect();
    PreparedTexts::new(texts, None).verdicts(texts, &order, anchors)
}

/// Exact and near dedup in one pass: each text is first checked for an exact duplicate, then for a
/// kept text whose word `shingle_size`-shingles reach Jaccard `threshold` with its own.
///
/// The result equals the all-pairs definition: text `i` (not an anchor) is an exact duplicate of the
/// first kept `j < i` with the same normalised text, else a near duplicate of the first kept
/// `j < i` with `jaccard(shingles(i), shingles(j)) >= threshold`. Errors if `threshold` is not in
/// `(0, 1]` or `shingle_size` is 0.
///
/// Only the first text of each group of equal normalised texts is looked up: a later one has the
/// same shingles, and the texts kept before it are those kept before the first plus later ones
/// that all rank after the first's match, so it is an exact duplicate of the first if that was
/// kept, and otherwise a near duplicate of the same text at the same similarity.
///
/// ```
/// use rag_packer::{DedupVerdict, jaccard_dedup};
///
/// let texts = [
///     Some("the quick brown fox jumps over the lazy dog"),
///     Some("the quick brown fox jumps over the lazy cat"),
/// ];
/// let verdicts = jaccard_dedup(&texts, 0, 0.5, 3)?;
/// assert_eq!(verdicts[1], DedupVerdict::NearDuplicate { of: 0, similarity: 6.0 / 8.0 });
/// # Ok::<(), rag_core::PackerError>(())
/// ```
pub fn jaccard_dedup(
    texts: &[Option<&str>],
    anchors: usize,
    threshold: f64,
    shingle_size: usize,
) -> Result<Vec<DedupVerdict>, PackerError> {
    check_near_config(threshold, shingle_size)?;
    let order: Vec<usize> = (0..texts.len()).collect();
    Ok(PreparedTexts::new(texts, Some((threshold, shingle_size))).verdicts(texts, &order, anchors))
}

/// The part of dedup that does not depend on the priority order, done once per text: word hashes,
/// sequence keys and (for near dedup) shingle sets with their prefixes first. The packer prepares
/// the texts in input order while it validates and ranks the chunks, then asks for the
/// [`verdicts`](Self::verdicts) in priority order.
pub(crate) struct PreparedTexts {
    sets: ShingleSets,
    /// With near dedup, its threshold.
    threshold: Option<f64>,
}

impl PreparedTexts {
    /// Prepares `texts` for exact dedup, and with `near = Some((threshold, shingle_size))`
    /// (already checked with [`check_near_config`]) for near dedup too.
    pub(crate) fn new(texts: &[Option<&str>], near: Option<(f64, usize)>) -> Self {
        Self::new_unless(texts, near, &AtomicBool::new(false))
    }

    /// [`new`](Self::new), giving up early (with a result that must not be used) once `cancel`
    /// is set: the packer prepares while it validates, and a validation error makes the work moot.
    pub(crate) fn new_unless(texts: &[Option<&str>], near: Option<(f64, usize)>, cancel: &AtomicBool) -> Self {
        Self {
            sets: ShingleSets {
                blocks: analyse(texts, near, cancel),
            },
            threshold: near.map(|(threshold, _)| threshold),
        }
    }

    /// The verdicts for the prepared `texts` taken in priority order: position `p` of the result
    /// is about `texts[order[p]]`, and `of` is a position in `order`. The first `anchors` are
    /// always kept. `order` must list each text at most once.
    pub(crate) fn verdicts(&self, texts: &[Option<&str>], order: &[usize], anchors: usize) -> Vec<DedupVerdict> {
        self.verdicts_hinted(texts, order, anchors, order.len() >= PARALLEL_MIN_HINTS)
    }

    /// [`verdicts`](Self::verdicts), with or without the parallel first verifications.
    fn verdicts_hinted(
        &self,
        texts: &[Option<&str>],
        order: &[usize],
        anchors: usize,
        hinted: bool,
    ) -> Vec<DedupVerdict> {
        let sets = &self.sets;
        let representative = group_equal_texts(texts, &sets.blocks, order);
        let Some(threshold) = self.threshold else {
            return (0..order.len())
                .map(|p| match representative[p] {
                    Some(first) if first != p && p >= anchors => DedupVerdict::ExactDuplicate { of: first },
                    _ => DedupVerdict::Kept,
                })
                .collect();
        };
        // Only representatives are looked up (see `jaccard_dedup`), so only their prefixes can
        // share tokens.
        let prefixes: Vec<&[u64]> = (0..order.len())
            .map(|p| match representative[p] {
                Some(first) if first == p => sets.prefix(order[p]),
                _ => &[],
            })
            .collect();
        let shared = SharedTokens::find(&prefixes);
        let set_at = |p: usize| sets.set(order[p]);
        // Each text's first proposal is nearly always the first text whose prefix shares one of
        // its tokens, and at most the texts before it are kept or not, which the sequential pass
        // decides. So that pair is verified first, in parallel; the pass then uses the result if
        // that text is proposed (one verification per text at most, so a flood of copies of one
        // text costs no more than before).
        let hint_for = |scratch: &mut TokenSet, p: usize| -> Option<Hint> {
            if representative[p] != Some(p) || p < anchors {
                return None;
            }
            let earliest = shared
                .of(p)
                .iter()
                .filter(|&&id| id != UNSHARED)
                .map(|&id| shared.first_text(id))
                .filter(|&text| text < p)
                .min()?;
            Some(Hint::verify(threshold, set_at(p), earliest, set_at(earliest), scratch))
        };
        let hints: Vec<Option<Hint>> = if hinted {
            (0..order.len())
                .into_par_iter()
                .map_init(TokenSet::default, hint_for)
                .collect()
        } else {
            vec![None; order.len()]
        };
        let mut index = PrefixIndex::new(threshold, shared.count(), order.len());
        let mut verdicts: Vec<DedupVerdict> = Vec::with_capacity(order.len());
        for (p, &first) in representative.iter().enumerate() {
            let verdict = match first {
                None => DedupVerdict::Kept,
                // A later member of a group: an anchor is kept (and needs no indexing, its set is
                // the representative's); any other follows the representative, as documented on
                // `jaccard_dedup`.
                Some(first) if first != p => match verdicts[first] {
                    _ if p < anchors => DedupVerdict::Kept,
                    DedupVerdict::Kept => DedupVerdict::ExactDuplicate { of: first },
                    near => near,
                },
                Some(_) => {
                    let ids = shared.of(p);
                    // Indexed before it is known to be kept: one pass over its shared tokens both
                    // finds the earlier texts sharing them and files this one; a text found to be
                    // a duplicate (about one in ten) is taken out again.
                    let mark = index.insert(p, ids, p >= anchors);
                    match index.first_match(set_at, set_at(p), hints[p]) {
                        Some((of, similarity)) => {
                            index.retract(ids, mark);
                            DedupVerdict::NearDuplicate { of, similarity }
                        }
                        None => DedupVerdict::Kept,
                    }
                }
            };
            verdicts.push(verdict);
        }
        verdicts
    }
}

/// The near-dedup settings must make sense: a threshold of 0 would call every pair a duplicate.
pub(crate) fn check_near_config(threshold: f64, shingle_size: usize) -> Result<(), PackerError> {
    if !(threshold > 0.0 && threshold <= 1.0) {
        return Err(PackerError::InvalidConfig {
            message: format!("jaccard threshold must be in (0, 1], got {threshold}"),
        });
    }
    if shingle_size == 0 {
        return Err(PackerError::InvalidConfig {
            message: "shingle size must be at least 1".to_owned(),
        });
    }
    Ok(())
}

/// From this many texts on, each text's first candidate is verified on the pool before the
/// sequential pass (see [`PreparedTexts::verdicts`]); below, the pass verifies as it goes.
const PARALLEL_MIN_HINTS: usize = 2048;

/// Texts per unit of work of the per-text pass. Blocks are cut by position, never by which thread
/// runs them, and each block's result depends only on its texts, so the result is the same
/// whatever the scheduling (and the same as on one thread).
const BLOCK_TEXTS: usize = 128;

/// Below this much text the per-text pass stays on the calling thread: handing out the work would
/// cost about as much as it saves.
pub(crate) const PARALLEL_MIN_BYTES: usize = 256 * 1024;

/// What the per-text pass found for a block of [`BLOCK_TEXTS`] consecutive texts.
#[derive(Default)]
struct Block {
    /// Per text, the key of its normalised word sequence (see [`sequence_key`]); `None` for a
    /// `None` text.
    keys: Vec<Option<u64>>,
    /// With shingling, the shingle sets of the block's texts (as hashes), one after the other.
    tokens: Vec<u64>,
    /// With shingling, per text, where its set ends in `tokens`.
    ends: Vec<usize>,
    /// With shingling, a copy of each text's prefix (see [`move_prefix_first`]), one after the
    /// other, so that the shared-token search reads them from one compact array instead of from
    /// all over `tokens` (where nearly every prefix was a cache miss).
    prefixes: Vec<u64>,
    /// Per text, where its prefix ends in `prefixes`.
    prefix_ends: Vec<usize>,
}

impl Block {
    fn range(&self, local: usize) -> Range<usize> {
        let start = match local.checked_sub(1) {
            Some(previous) => self.ends[previous],
            None => 0,
        };
        start..self.ends[local]
    }

    fn prefix(&self, local: usize) -> &[u64] {
        let start = match local.checked_sub(1) {
            Some(previous) => self.prefix_ends[previous],
            None => 0,
        };
        &self.prefixes[start..self.prefix_ends[local]]
    }
}

/// Buffers the per-text pass reuses from text to text, one set per worker.
#[derive(Default)]
struct Scratch {
    words: Vec<u64>,
    lower: String,
    bits: Vec<u64>,
    /// Removes repeated shingles within one text.
    seen: TokenSet,
    /// For [`move_prefix_first`].
    arrange: ArrangeScratch,
}

/// The per-text pass: reads each text once, hashing its normalised words, and derives its
/// sequence key and, with `near = Some((threshold, shingle_size))`, its shingle set with its
/// prefix (see [`prefix_len`]) moved to the front and copied out. Texts are independent, so large
/// inputs are spread over the rayon pool, a block of texts per task.
///
/// The prefixes are taken in one global order of shingles, common ones last (see
/// [`CommonShingles`]), which a sample of the texts decides before the pass: each set's prefix is
/// then selected while its shingles are still in cache.
///
/// Once `cancel` is set, the remaining blocks are left empty.
fn analyse(texts: &[Option<&str>], near: Option<(f64, usize)>, cancel: &AtomicBool) -> Vec<Block> {
    let bytes: usize = texts.iter().flatten().map(|t| t.len()).sum();
    let common = near.map(|(_, size)| CommonShingles::sample(texts, size));
    let common = common.as_ref();
    if bytes < PARALLEL_MIN_BYTES {
        let mut scratch = Scratch::default();
        texts
            .chunks(BLOCK_TEXTS)
            .map(|block| analyse_block(block, near, common, &mut scratch))
            .collect()
    } else {
        texts
            .par_chunks(BLOCK_TEXTS)
            .map_init(Scratch::default, |scratch, block| {
                if cancel.load(Ordering::Relaxed) {
                    return Block::default();
                }
                analyse_block(block, near, common, scratch)
            })
            .collect()
    }
}

/// The per-text pass over one block (see [`analyse`]); `common` is given exactly when `near` is.
fn analyse_block(
    texts: &[Option<&str>],
    near: Option<(f64, usize)>,
    common: Option<&CommonShingles>,
    scratch: &mut Scratch,
) -> Block {
    let Scratch {
        words,
        lower,
        bits,
        seen,
        arrange,
    } = scratch;
    let mut block = Block {
        keys: Vec::with_capacity(texts.len()),
        tokens: Vec::new(),
        ends: Vec::new(),
        prefixes: Vec::new(),
        prefix_ends: Vec::new(),
    };
    if near.is_some() {
        // About one shingle per word and a word per six bytes.
        let bytes: usize = texts.iter().flatten().map(|t| t.len()).sum();
        block.tokens.reserve(bytes / 6);
        block.ends.reserve(texts.len());
        block.prefix_ends.reserve(texts.len());
    }
    // The texts are separate allocations, so the hardware prefetcher cannot see the next one
    // coming: its first cache lines are read one text ahead, which overlaps their misses with
    // the work on the current text.
    let mut touched = 0u8;
    for (k, text) in texts.iter().enumerate() {
        if let Some(Some(next)) = texts.get(k + 1) {
            for line in next.as_bytes().iter().step_by(64).take(16) {
                touched ^= line;
            }
        }
        let start = block.tokens.len();
        match text {
            None => block.keys.push(None),
            Some(text) => {
                words.clear();
                push_word_hashes(text, lower, bits, words);
                let key = match near {
                    Some((_, size)) => push_shingles(words, size, seen, &mut block.tokens),
                    None => sequence_key(words),
                };
                block.keys.push(Some(key));
            }
        }
        if let (Some((threshold, _)), Some(common)) = (near, common) {
            let set = &mut block.tokens[start..];
            let p = prefix_len(threshold, set.len());
            if p < set.len() {
                move_prefix_first(set, p, common, arrange);
            }
            block.prefixes.extend_from_slice(&set[..p]);
            block.prefix_ends.push(block.prefixes.len());
            block.ends.push(block.tokens.len());
        }
    }
    std::hint::black_box(touched);
    block
}

/// Appends the distinct shingle hashes of a text given as its word hashes, in order of first
/// occurrence.
///
/// A shingle's hash is the XOR of its word hashes, the `k`-th rotated left by `k` bits, so the
/// next window's hash follows from the last one in three operations whatever the shingle size.
/// Word hashes are finalised (uniform over 64 bits), so two different shingles collide with
/// probability about 2^-64; a shingle that repeats words still stays within 2^-60, since the
/// rotations are distinct as long as the size is at most 64. Larger sizes fold the words with
/// multiplications instead.
///
/// Returns the text's [`sequence_key`], computed in the same loop: on its own, that loop's chain
/// of multiplications is pure latency, while here other work fills it.
fn push_shingles(words: &[u64], size: usize, seen: &mut TokenSet, tokens: &mut Vec<u64>) -> u64 {
    if words.is_empty() {
        return sequence_key(words);
    }
    let window = size.min(words.len());
    // Room for four times the shingles: at a load of at most 1/8, a probe almost always finds
    // a free slot first, which keeps the branch predictable.
    seen.clear(4 * (words.len() - window + 1));
    let mut push = |shingle: u64| {
        if seen.insert(shingle) {
            tokens.push(shingle);
        }
    };
    if window > 64 {
        for w in words.windows(window) {
            push(finish(
                w.iter()
                    .fold(0u64, |h, word| (h.rotate_left(5) ^ word).wrapping_mul(MUL)),
            ));
        }
        return sequence_key(words);
    }
    let last = (window - 1) as u32;
    let mut key = words[..window]
        .iter()
        .fold(key_start(words.len()), |h, &w| key_step(h, w));
    let mut shingle = words[..window]
        .iter()
        .zip(0u32..)
        .fold(0u64, |h, (&word, k)| h ^ word.rotate_left(k));
    push(shingle);
    for (&leaving, &entering) in words.iter().zip(&words[window..]) {
        key = key_step(key, entering);
        shingle = (shingle ^ leaving).rotate_right(1) ^ entering.rotate_left(last);
        push(shingle);
    }
    finish(key)
}

/// Groups equal normalised texts by the keys of the per-text pass, taking the texts in `order`:
/// returns, per position `p`, the first position whose text has the same normalised text (`p`
/// itself if none came before), or `None` for a `None` text.
fn group_equal_texts(texts: &[Option<&str>], blocks: &[Block], order: &[usize]) -> Vec<Option<usize>> {
    let mut groups: HashMap<u64, usize, BuildHasherDefault<PremixedHasher>> =
        HashMap::with_capacity_and_hasher(order.len(), BuildHasherDefault::default());
    // Representatives that share a key, chained: almost always a chain of one.
    let mut same_key: Vec<usize> = vec![usize::MAX; order.len()];
    let mut representative = Vec::with_capacity(order.len());
    for (p, &i) in order.iter().enumerate() {
        let key = blocks[i / BLOCK_TEXTS].keys[i % BLOCK_TEXTS];
        let (Some(text), Some(key)) = (texts[i], key) else {
            representative.push(None);
            continue;
        };
        let mut first = p;
        match groups.get(&key) {
            None => {
                groups.insert(key, p);
            }
            Some(&head) => {
                // Confirm on the texts themselves: equal keys are not proof of equal texts.
                let normalised = normalise(text);
                let mut at = head;
                while at != usize::MAX {
                    if texts[order[at]].is_some_and(|other| normalise(other) == normalised) {
                        first = at;
                        break;
                    }
                    at = same_key[at];
                }
                if first == p {
                    same_key[p] = head;
                    groups.insert(key, p);
                }
            }
        }
        representative.push(Some(first));
    }
    representative
}

/// A 64-bit key of a word-hash sequence (length included), for grouping equal texts.
fn sequence_key(words: &[u64]) -> u64 {
    finish(words.iter().fold(key_start(words.len()), |h, &w| key_step(h, w)))
}

/// The state a [`sequence_key`] of `len` words starts from.
fn key_start(len: usize) -> u64 {
    len as u64 ^ 0x243f_6a88_85a3_08d3
}

/// One word folded into a [`sequence_key`].
#[inline]
fn key_step(h: u64, word: u64) -> u64 {
    (h.rotate_left(23) ^ word).wrapping_mul(MUL)
}

/// The shingle sets of every text, as 64-bit shingle hashes, in the blocks of the per-text pass.
///
/// Shingles are compared by these hashes, not by their text. Two different shingles collide with
/// probability 2^-64 per pair, so among a million distinct shingles the chance that any collision
/// exists at all is about 3 in 100 million; a collision could shift one similarity by one shingle.
///
/// A set is stored in no particular order except that its prefix (see [`prefix_len`]) comes
/// first.
struct ShingleSets {
    blocks: Vec<Block>,
}

impl ShingleSets {
    #[inline]
    fn set(&self, text: usize) -> &[u64] {
        let block = &self.blocks[text / BLOCK_TEXTS];
        &block.tokens[block.range(text % BLOCK_TEXTS)]
    }

    /// The prefix of `text`'s set.
    fn prefix(&self, text: usize) -> &[u64] {
        self.blocks[text / BLOCK_TEXTS].prefix(text % BLOCK_TEXTS)
    }
}

/// Shingles common enough across the texts to go last in the global order of prefix filtering;
/// the order is (common or not, then the hash).
///
/// Prefix filtering needs one global order of shingles, and common ones last keeps the indexed
/// prefixes, and so the posting lists probed, short: in plain hash order, the shingles of a
/// boilerplate sentence land in a fifth of all prefixes and the index degrades to all pairs
/// (measured: 20 times slower at 10,000 texts). *Any* order is correct as long as it is the same
/// for every text, so "common" may be an estimate: it is counted on every 16th text, in a sketch
/// (a collision only makes a shingle count as common too, which costs nothing but a little
/// filtering), and a shingle seen 4 times there (in about 64 texts in all) is common.
struct CommonShingles {
    /// One bit per sketch bucket, set for the buckets of common shingles.
    bits: Vec<u64>,
    mask: u64,
}

impl CommonShingles {
    /// Texts are sampled one in this many, by position.
    const SAMPLE_EVERY: usize = 16;
    /// The sample count from which a shingle is common.
    const COMMON_AT: u8 = 4;

    /// Counts the shingles of every [`SAMPLE_EVERY`](Self::SAMPLE_EVERY)-th text of `texts`.
    fn sample(texts: &[Option<&str>], shingle_size: usize) -> Self {
        let sampled: Vec<&str> = texts.iter().step_by(Self::SAMPLE_EVERY).flatten().copied().collect();
        let shingles_of = |group: &[&str]| {
            let mut scratch = Scratch::default();
            let mut tokens = Vec::new();
            for text in group {
                scratch.words.clear();
                push_word_hashes(text, &mut scratch.lower, &mut scratch.bits, &mut scratch.words);
                push_shingles(&scratch.words, shingle_size, &mut scratch.seen, &mut tokens);
            }
            tokens
        };
        let bytes: usize = sampled.iter().map(|t| t.len()).sum();
        let tokens: Vec<Vec<u64>> = if bytes < PARALLEL_MIN_BYTES {
            vec![shingles_of(&sampled)]
        } else {
            sampled.par_chunks(BLOCK_TEXTS).map(shingles_of).collect()
        };
        // A load of at most a quarter keeps chance collisions of four rare shingles negligible;
        // the cap (16 Mi buckets, 16 MiB of counts) is reached only past about 60,000 sampled
        // texts, where the load stays below one.
        let total: usize = tokens.iter().map(Vec::len).sum();
        let buckets = (total * 4).next_power_of_two().clamp(1 << 10, 1 << 24);
        let mask = (buckets - 1) as u64;
        let mut counts = vec![0u8; buckets];
        let mut bits = vec![0u64; buckets / 64];
        for &token in tokens.iter().flatten() {
            let bucket = (token & mask) as usize;
            counts[bucket] = counts[bucket].saturating_add(1);
            if counts[bucket] == Self::COMMON_AT {
                bits[bucket / 64] |= 1 << (bucket % 64);
            }
        }
        Self { bits, mask }
    }

    fn contains(&self, token: u64) -> bool {
        let bucket = (token & self.mask) as usize;
        self.bits[bucket / 64] >> (bucket % 64) & 1 == 1
    }
}

/// Buffers [`move_prefix_first`] reuses from set to set.
#[derive(Default)]
struct ArrangeScratch {
    rare: Vec<u64>,
    common: Vec<u64>,
    low: Vec<u64>,
    high: Vec<u64>,
}

/// Moves the first `p` tokens of `set` (fewer than all) in the global order of [`CommonShingles`]
/// (rare before common, then by value) to its front, in no particular order.
///
/// One branch-free pass splits rare from common tokens; the `p` smallest rare ones (or all rare
/// ones and the smallest common ones) are then found by [`move_smallest_first`].
fn move_prefix_first(set: &mut [u64], p: usize, common: &CommonShingles, scratch: &mut ArrangeScratch) {
    let n = set.len();
    let ArrangeScratch {
        rare,
        common: frequent,
        low,
        high,
    } = scratch;
    // Every slot is written before it is read, so the buffers only grow, never get zeroed again.
    grow_to(rare, n);
    grow_to(frequent, n);
    let (mut r, mut f) = (0, 0);
    for &token in set.iter() {
        // Written to both, kept by one: no branch on a coin flip.
        let is_common = common.contains(token);
        rare[r] = token;
        frequent[f] = token;
        r += usize::from(!is_common);
        f += usize::from(is_common);
    }
    let (rare, frequent) = (&mut rare[..r], &mut frequent[..f]);
    if r >= p {
        move_smallest_first(rare, p, low, high);
    } else {
        move_smallest_first(frequent, p - r, low, high);
    }
    set[..r].copy_from_slice(rare);
    set[r..].copy_from_slice(frequent);
}

/// Makes `buffer` at least `len` long (new slots zero, old ones as they were).
fn grow_to(buffer: &mut Vec<u64>, len: usize) {
    if buffer.len() < len {
        buffer.resize(len, 0);
    }
}

/// Moves the `p` smallest of `values` to its front, in no particular order.
///
/// Shingle hashes are uniform, so the `p`-th smallest of `n` is near `p / n` of the range: one
/// branch-free pass keeps the values under a cut a little above that, and only those (about
/// `p + 3 sqrt(p)`) are selected among, instead of all `n`. If too few fall under the cut (about
/// once in a thousand sets), all of them are.
fn move_smallest_first(values: &mut [u64], p: usize, low: &mut Vec<u64>, high: &mut Vec<u64>) {
    let n = values.len();
    if p >= n {
        return;
    }
    let expected = p as f64 + 3.0 * (p as f64).sqrt() + 8.0;
    if 2.0 * expected < n as f64 {
        // Under 2^63, since expected / n is under one half.
        let cut = (expected / n as f64 * 18_446_744_073_709_551_616.0) as u64;
        grow_to(low, n);
        grow_to(high, n);
        let (mut l, mut h) = (0, 0);
        for &value in values.iter() {
            let below = value < cut;
            low[l] = value;
            high[h] = value;
            l += usize::from(below);
            h += usize::from(!below);
        }
        if l >= p {
            let low = &mut low[..l];
            if p < l {
                low.select_nth_unstable(p);
            }
            values[..l].copy_from_slice(low);
            values[l..].copy_from_slice(&high[..h]);
            return;
        }
    }
    values.select_nth_unstable(p);
}

/// A reusable open-addressing set of 64-bit hashes (already well mixed), cleared in O(1).
#[derive(Default)]
struct TokenSet {
    slots: Vec<u64>,
    /// A slot is occupied when its stamp equals `generation`.
    stamps: Vec<u32>,
    generation: u32,
}

impl TokenSet {
    /// Empties the set and makes room for `capacity` tokens at a load of at most one half.
    fn clear(&mut self, capacity: usize) {
        let wanted = (capacity * 2).next_power_of_two().max(16);
        if wanted > self.slots.len() {
            self.slots = vec![0; wanted];
            self.stamps = vec![0; wanted];
            self.generation = 0;
        }
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            // Stamps of 2^32 generations ago would look current: start over.
            self.stamps.fill(0);
            self.generation = 1;
        }
    }

    /// Adds `token`; false if it was already there.
    fn insert(&mut self, token: u64) -> bool {
        let mask = self.slots.len() - 1;
        let mut slot = token as usize & mask;
        while self.stamps[slot] == self.generation {
            if self.slots[slot] == token {
                return false;
            }
            slot = (slot + 1) & mask;
        }
        self.stamps[slot] = self.generation;
        self.slots[slot] = token;
        true
    }

    fn contains(&self, token: u64) -> bool {
        let mask = self.slots.len() - 1;
        let mut slot = token as usize & mask;
        while self.stamps[slot] == self.generation {
            if self.slots[slot] == token {
                return true;
            }
            slot = (slot + 1) & mask;
        }
        false
    }
}

/// How many leading tokens (in the global order) of a set of `len` tokens prefix filtering needs.
///
/// For Jaccard `J(x, y) >= t` the overlap is at least `ceil(t * max(|x|, |y|))`, so the first
/// `|x| - ceil(t * |x|) + 1` tokens of `x` and the corresponding prefix of `y` must share a token.
fn prefix_len(threshold: f64, len: usize) -> usize {
    // The small slack makes floating-point rounding err towards a longer prefix: that costs a
    // little filtering, never a missed pair. It grows with the set, as the rounding error of
    // `threshold * len` does, so sets of millions of shingles stay safe too.
    let slack = 1e-9 * (len as f64).max(1.0);
    let min_overlap = ((threshold * len as f64) - slack).ceil().max(1.0) as usize;
    (len - min_overlap.min(len) + 1).min(len)
}

const MUL: u64 = 0x517c_c1b7_2722_0a95;

/// OR-ing this into the bytes of an ASCII alphanumeric run lower-cases its letters and leaves its
/// digits as they are.
const ASCII_LOWER: u64 = 0x2020_2020_2020_2020;

/// The hash of one normalised word, given as its bytes; `lower` is OR-ed into them first
/// ([`ASCII_LOWER`] for a run of ASCII alphanumerics as it stands in the text, 0 for a word that is
/// already lower-case), so both [`Word`] forms of one word hash alike.
///
/// A word of up to 8 bytes (most words) is its bytes as an integer, finalised: a bijection, so
/// short words never collide. Longer words are folded 8 bytes at a time, FxHash-style.
fn hash_word(bytes: &[u8], lower: u64) -> u64 {
    match bytes.len() {
        0..=7 => hash_short_word(load_tail(bytes) | lower, bytes.len()),
        8 => hash_short_word(load_8(bytes) | lower, 8),
        _ => hash_long_word(bytes, lower),
    }
}

/// [`hash_word`] of a word of 1 to 8 bytes, from `raw`: the word's bytes (lower-cased) in its
/// low `len` bytes, anything in the others.
#[inline]
fn hash_short_word(raw: u64, len: usize) -> u64 {
    finish(raw & (u64::MAX >> (64 - 8 * len)))
}

/// [`hash_word`] of a word of more than 8 bytes.
#[inline(never)]
fn hash_long_word(bytes: &[u8], lower: u64) -> u64 {
    let mut h = bytes.len() as u64;
    let mut blocks = bytes.chunks_exact(8);
    for block in &mut blocks {
        h = (h.rotate_left(5) ^ (load_8(block) | lower)).wrapping_mul(MUL);
    }
    let rest = blocks.remainder();
    if !rest.is_empty() {
        // Only the bytes present are lower-cased: the zero padding must stay zero.
        let tail = (load_tail(rest) | lower) & (u64::MAX >> (64 - 8 * rest.len()));
        h = (h.rotate_left(5) ^ tail).wrapping_mul(MUL);
    }
    finish(h)
}

/// The first 8 bytes of `bytes` (at least 8) as a little-endian integer.
#[inline]
fn load_8(bytes: &[u8]) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(&bytes[..8]);
    u64::from_le_bytes(word)
}

/// Pushes the [`hash_word`] of each word [`for_each_word`] yields for `text`, in order: the hot
/// path of the per-text pass.
///
/// An ASCII segment (all of them in an ASCII text) of up to 8 bytes, which is most words, is read
/// with one unaligned load and masked, instead of byte by byte; other segments go through the
/// Unicode rule.
fn push_word_hashes(text: &str, scratch: &mut String, bits: &mut Vec<u64>, words: &mut Vec<u64>) {
    let bytes = text.as_bytes();
    let all_ascii = word_bits(bytes, bits);
    for (start, end) in Segments::new(bits, bytes.len()) {
        let segment = &bytes[start..end];
        if !all_ascii && !segment.is_ascii() {
            push_unicode_word_hashes(&text[start..end], scratch, words);
            continue;
        }
        let len = end - start;
        words.push(if len <= 8 {
            // Reading past the word is fine while still inside the text: the mask drops it.
            let raw = match bytes.get(start..start + 8) {
                Some(eight) => load_8(eight),
                None => load_tail(segment),
            };
            hash_short_word(raw | ASCII_LOWER, len)
        } else {
            hash_long_word(segment, ASCII_LOWER)
        });
    }
}

/// The slow path of [`push_word_hashes`], out of line so that the fast one stays small enough to be
/// inlined into the segment loop.
#[cold]
#[inline(never)]
fn push_unicode_word_hashes(segment: &str, scratch: &mut String, words: &mut Vec<u64>) {
    lower_words(segment, scratch, |word| words.push(hash_word(word.as_bytes(), 0)));
}

/// `rest` (at most 7 bytes) as a little-endian integer padded with zeros, read without a copy into
/// a buffer (which costs a call and a stalled load on the hot path). Overlapping reads put the same
/// byte in the same place, so OR-ing them is exact.
fn load_tail(rest: &[u8]) -> u64 {
    let n = rest.len();
    match n {
        0 => 0,
        1..=3 => u64::from(rest[0]) | u64::from(rest[n / 2]) << (8 * (n / 2)) | u64::from(rest[n - 1]) << (8 * (n - 1)),
        _ => {
            let low = u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]);
            let high = u32::from_le_bytes([rest[n - 4], rest[n - 3], rest[n - 2], rest[n - 1]]);
            u64::from(low) | u64::from(high) << (8 * (n - 4))
        }
    }
}

/// The SplitMix64 finaliser: spreads entropy to the low bits the hash tables index by.
fn finish(mut h: u64) -> u64 {
    h ^= h >> 30;
    h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h ^= h >> 27;
    h = h.wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}

/// A hasher for keys that are already well-mixed 64-bit hashes: it passes them through.
#[derive(Default)]
struct PremixedHasher(u64);

impl Hasher for PremixedHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only `write_u64` is used by our keys; fold anything else in so the hasher stays correct.
        for b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(*b)).wrapping_mul(MUL);
        }
    }

    fn write_u64(&mut self, value: u64) {
        self.0 = value;
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// The definition, pair by pair, with the public string functions: what the index must equal.
    pub(crate) fn all_pairs(texts: &[Option<&str>], anchors: usize, threshold: f64, size: usize) -> Vec<DedupVerdict> {
        let norm: Vec<Option<String>> = texts.iter().map(|t| t.map(normalise)).collect();
        let sets: Vec<BTreeSet<String>> = norm
            .iter()
            .map(|t| {
                let words: Vec<&str> = t
                    .as_deref()
                    .unwrap_or("")
                    .split(' ')
                    .filter(|w| !w.is_empty())
                    .collect();
                shingles(&words, size)
            })
            .collect();
        let mut kept: Vec<usize> = Vec::new();
        let mut out = Vec::new();
        for i in 0..texts.len() {
            if norm[i].is_none() {
                out.push(DedupVerdict::Kept);
                continue;
            }
            if i < anchors {
                kept.push(i);
                out.push(DedupVerdict::Kept);
                continue;
            }
            if let Some(&of) = kept.iter().find(|&&k| norm[k] == norm[i]) {
                out.push(DedupVerdict::ExactDuplicate { of });
                continue;
            }
            if let Some((of, similarity)) = kept
                .iter()
                .map(|&k| (k, jaccard(&sets[i], &sets[k])))
                .find(|&(_, j)| j >= threshold)
            {
                out.push(DedupVerdict::NearDuplicate { of, similarity });
                continue;
            }
            kept.push(i);
            out.push(DedupVerdict::Kept);
        }
        out
    }

    #[test]
    fn normalise_lowercases_and_keeps_alphanumeric_runs() {
        assert_eq!(
            normalise("Hello,   WORLD!!\n\tfoo_bar 3.14"),
            "hello world foo bar 3 14"
        );
        assert_eq!(normalise(""), "");
        assert_eq!(normalise("ÉCOLE d'été"), "école d été");
        assert_eq!(normalise("數據 データ"), "數據 データ");
        let once = normalise("İstanbul ΣΊΣΥΦΟΣ");
        assert_eq!(normalise(&once), once, "normalise is idempotent");
    }

    #[test]
    fn the_latin1_shortcut_agrees_with_the_unicode_rule() {
        for c in (0x80..0x180).filter_map(char::from_u32) {
            if let Some(lower) = latin1_lower(c) {
                assert_eq!(c.to_lowercase().collect::<Vec<_>>(), [lower], "{c}");
                assert!(lower.is_alphanumeric(), "{c}");
            }
        }
        assert_eq!(latin1_lower('É'), Some('é'));
        assert_eq!(latin1_lower('×'), None);
    }

    #[test]
    fn word_bits_agree_with_the_byte_rule() {
        for b in 0..=255u8 {
            let expected = b.is_ascii_alphanumeric() || !b.is_ascii();
            assert_eq!(is_word_byte(b), expected, "{b:#x}");
            assert_eq!(word_byte_flags(u64::from(b) << 24) == 1 << 3, expected, "{b:#x}");
        }
        let text: Vec<u8> = (0..200u32).map(|i| (i * 37 % 256) as u8).collect();
        for len in 0..text.len() {
            let mut bits = Vec::new();
            word_bits(&text[..len], &mut bits);
            assert_eq!(bits.len(), len.div_ceil(64));
            for (i, &b) in text[..len].iter().enumerate() {
                assert_eq!(bits[i / 64] >> (i % 64) & 1 == 1, is_word_byte(b), "len {len} at {i}");
            }
        }
    }

    #[test]
    fn ascii_and_built_words_hash_alike() {
        for word in ["x", "abc", "abcdefg", "abcdefgh", "abcdefghijklmnopq", "r2d2"] {
            let upper = word.to_ascii_uppercase();
            assert_eq!(
                hash_word(upper.as_bytes(), ASCII_LOWER),
                hash_word(word.as_bytes(), 0),
                "{word}"
            );
        }
    }

    /// The general path's word hashes: what the ASCII fast path must reproduce.
    fn general_word_hashes(text: &str) -> Vec<u64> {
        let mut hashes = Vec::new();
        for_each_word(text, &mut String::new(), &mut Vec::new(), |word| {
            hashes.push(match word {
                Word::Ascii(w) => hash_word(w.as_bytes(), ASCII_LOWER),
                Word::Lower(w) => hash_word(w.as_bytes(), 0),
            });
        });
        hashes
    }

    fn fast_word_hashes(text: &str) -> Vec<u64> {
        let mut hashes = Vec::new();
        push_word_hashes(text, &mut String::new(), &mut Vec::new(), &mut hashes);
        hashes
    }

    #[test]
    fn the_ascii_fast_path_equals_the_general_path() {
        // Words of every length from 1 to 20 ending at every offset around the 64-byte blocks.
        for len in 1..=20 {
            for pad in 0..70 {
                let word: String = (0..len).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
                let text = format!("{}{} Tail{}", " ".repeat(pad), word.to_uppercase(), "-".repeat(pad % 3));
                assert_eq!(fast_word_hashes(&text), general_word_hashes(&text), "{text:?}");
                let bare = format!("{}{word}", ".".repeat(pad));
                assert_eq!(fast_word_hashes(&bare), general_word_hashes(&bare), "{bare:?}");
            }
        }
        for text in [
            "",
            " ",
            "a",
            "-- ** --",
            "A1b2C3d4E5f6G7h8",
            &"x".repeat(64),
            &"y ".repeat(64),
        ] {
            assert_eq!(fast_word_hashes(text), general_word_hashes(text), "{text:?}");
        }
        assert_eq!(fast_word_hashes("Hello, WORLD"), general_word_hashes("hello world"));
    }

    #[test]
    fn prefix_selection_equals_the_full_order() {
        // No common shingles, about half, and all of them; sets from 2 to 600 tokens, prefixes
        // from one token to all but one.
        let patterns = [0u64, 0x5555_5555_5555_5555, u64::MAX];
        let mut scratch = ArrangeScratch::default();
        let mut state = 1u64;
        for pattern in patterns {
            let common = CommonShingles {
                bits: vec![pattern; 16],
                mask: 1023,
            };
            for n in [2usize, 5, 40, 170, 600] {
                for _ in 0..10 {
                    let set: Vec<u64> = (0..n)
                        .map(|_| {
                            state = finish(state.wrapping_add(1));
                            state
                        })
                        .collect();
                    for p in [1, n / 5 + 1, n / 2, n - 1] {
                        let mut got = set.clone();
                        move_prefix_first(&mut got, p, &common, &mut scratch);
                        let mut ordered: Vec<(bool, u64)> = set.iter().map(|&t| (common.contains(t), t)).collect();
                        ordered.sort_unstable();
                        let want: BTreeSet<u64> = ordered[..p].iter().map(|&(_, t)| t).collect();
                        assert_eq!(got[..p].iter().copied().collect::<BTreeSet<u64>>(), want, "n {n} p {p}");
                        let (mut all, mut original) = (got.clone(), set.clone());
                        all.sort_unstable();
                        original.sort_unstable();
                        assert_eq!(all, original, "the set keeps every token");
                    }
                }
            }
        }
    }

    #[test]
    fn the_smallest_values_are_found_when_the_cut_is_too_low() {
        // Values crowded at the top of the range: nothing falls under the cut, so the fallback
        // selection has to find them.
        let mut values: Vec<u64> = (0..500u64).map(|i| u64::MAX - i * 7919 % 500).collect();
        let (mut low, mut high) = (Vec::new(), Vec::new());
        move_smallest_first(&mut values, 20, &mut low, &mut high);
        let mut sorted = values.clone();
        sorted.sort_unstable();
        assert_eq!(
            values[..20].iter().copied().collect::<BTreeSet<u64>>(),
            sorted[..20].iter().copied().collect::<BTreeSet<u64>>()
        );
    }

    #[test]
    fn shingles_in_many_sampled_texts_are_common() {
        let boilerplate = "see the documentation for more details";
        let texts: Vec<String> = (0..400)
            .map(|i| format!("text number {i} with words {} {} {boilerplate}", i * 7, i * 13))
            .collect();
        let refs: Vec<Option<&str>> = texts.iter().map(|t| Some(t.as_str())).collect();
        let common = CommonShingles::sample(&refs, 3);
        let shingle = |text: &str| {
            let mut tokens = Vec::new();
            let words: Vec<u64> = normalised_words(text)
                .iter()
                .map(|w| hash_word(w.as_bytes(), 0))
                .collect();
            push_shingles(&words, 3, &mut TokenSet::default(), &mut tokens);
            tokens
        };
        assert!(shingle(boilerplate).iter().all(|&t| common.contains(t)));
        let unique = shingle("text number 5 with words 35 65");
        assert!(unique.iter().filter(|&&t| common.contains(t)).count() <= 1);
    }

    #[test]
    fn rolling_shingle_hashes_equal_the_direct_definition() {
        let words: Vec<u64> = (1..=40u64).map(|i| finish(i % 7)).collect();
        for size in 1..=12 {
            let mut tokens = Vec::new();
            let key = push_shingles(&words, size, &mut TokenSet::default(), &mut tokens);
            assert_eq!(key, sequence_key(&words), "size {size}");
            let mut direct: Vec<u64> = Vec::new();
            for w in words.windows(size) {
                let h = w.iter().zip(0u32..).fold(0, |h, (&x, k)| h ^ x.rotate_left(k));
                if !direct.contains(&h) {
                    direct.push(h);
                }
            }
            assert_eq!(tokens, direct, "size {size}");
            // The words repeat with period 7: so do the shingles, which the set keeps once.
            assert_eq!(tokens.len(), 7.min(words.len() - size + 1), "size {size}");
        }
    }

    #[test]
    fn words_match_the_reference_normalisation() {
        let text = "Crème BRÛLÉE, İstanbul's ΣΊΣΥΦΟΣ; naïve café-au-lait 3.14 ǅemal ﬁnance Ⅻ";
        let reference: String = text.chars().flat_map(char::to_lowercase).collect();
        let reference: Vec<&str> = reference
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .collect();
        assert_eq!(normalised_words(text), reference);
        assert_eq!(normalise(text), reference.join(" "));
    }

    #[test]
    fn shingles_follow_the_seed_examples() {
        let words = normalised_words("The quick brown fox jumps");
        assert_eq!(shingles(&words, 5).len(), 1);
        assert_eq!(shingles(&words, 3).len(), 3);
        assert_eq!(
            shingles(&words, 9),
            BTreeSet::from(["the quick brown fox jumps".to_owned()])
        );
        assert!(shingles::<&str>(&[], 3).is_empty());
        assert_eq!(shingles(&["a", "b"], 0).len(), 2, "size 0 behaves as 1");
    }

    #[test]
    fn jaccard_of_empty_sets_is_zero() {
        let empty: BTreeSet<u8> = BTreeSet::new();
        assert_eq!(jaccard(&empty, &empty), 0.0);
        assert_eq!(jaccard(&BTreeSet::from([1]), &BTreeSet::from([1])), 1.0);
    }

    #[test]
    fn hash_dedup_keeps_the_first_and_never_drops_anchors() {
        let texts = [
            Some("Same text."),
            Some("same TEXT"),
            None,
            Some("same text"),
            Some("new"),
        ];
        assert_eq!(
            hash_dedup(&texts, 2),
            [
                DedupVerdict::Kept,
                DedupVerdict::Kept,
                DedupVerdict::Kept,
                DedupVerdict::ExactDuplicate { of: 0 },
                DedupVerdict::Kept
            ]
        );
    }

    #[test]
    fn near_dedup_reports_the_first_kept_match() {
        // The knapsack seed's scenario: the same paragraph in two document versions.
        let v1 = "Rerankers score the query and the document together with full cross attention";
        let v2 = "Rerankers score the query and the document together with full cross attention.";
        let v3 = "Rerankers score the query and the document together with full cross attention today";
        let other = "Bi-encoders embed queries and documents separately for fast vector search";
        let texts = [Some(other), Some(v1), Some(v2), Some(v3)];
        let verdicts = jaccard_dedup(&texts, 0, 0.8, 3).unwrap();
        assert_eq!(verdicts[0], DedupVerdict::Kept);
        assert_eq!(verdicts[1], DedupVerdict::Kept);
        assert_eq!(verdicts[2], DedupVerdict::ExactDuplicate { of: 1 });
        assert_eq!(
            verdicts[3],
            DedupVerdict::NearDuplicate {
                of: 1,
                similarity: 10.0 / 11.0
            }
        );
        assert_eq!(verdicts, all_pairs(&texts, 0, 0.8, 3));
    }

    #[test]
    fn a_dropped_text_is_not_a_reference_for_later_ones() {
        // b is a near duplicate of the anchor a; c is identical to b but must point at a.
        let a = "one two three four five six seven eight nine ten";
        let b = "one two three four five six seven eight nine ten eleven";
        let texts = [Some(a), Some(b), Some(b)];
        let verdicts = jaccard_dedup(&texts, 1, 0.8, 2).unwrap();
        assert!(matches!(verdicts[1], DedupVerdict::NearDuplicate { of: 0, .. }));
        assert!(matches!(verdicts[2], DedupVerdict::NearDuplicate { of: 0, .. }));
    }

    #[test]
    fn invalid_near_settings_are_errors() {
        for threshold in [0.0, -0.5, 1.5, f64::NAN] {
            let err = jaccard_dedup(&[], 0, threshold, 5).unwrap_err();
            assert!(err.to_string().contains("jaccard threshold must be in (0, 1]"), "{err}");
        }
        let err = jaccard_dedup(&[], 0, 0.8, 0).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid packer configuration: shingle size must be at least 1"
        );
    }

    /// The definition, with an inverted index from shingle string to kept texts instead of all
    /// pairs (a text sharing no shingle with a kept one has similarity 0): fast enough for
    /// thousands of texts in a debug build.
    fn indexed_reference(texts: &[Option<&str>], anchors: usize, threshold: f64, size: usize) -> Vec<DedupVerdict> {
        let sets: Vec<BTreeSet<String>> = texts
            .iter()
            .map(|t| shingles(&normalised_words(t.unwrap_or("")), size))
            .collect();
        let mut kept_text: HashMap<String, usize> = HashMap::new();
        let mut postings: HashMap<&str, Vec<usize>> = HashMap::new();
        let mut out = Vec::new();
        for (i, text) in texts.iter().enumerate() {
            let Some(text) = text else {
                out.push(DedupVerdict::Kept);
                continue;
            };
            let norm = normalise(text);
            let verdict = if i < anchors {
                DedupVerdict::Kept
            } else if let Some(&of) = kept_text.get(&norm) {
                DedupVerdict::ExactDuplicate { of }
            } else {
                let mut candidates: Vec<usize> = sets[i]
                    .iter()
                    .flat_map(|s| postings.get(s.as_str()).into_iter().flatten().copied())
                    .collect();
                candidates.sort_unstable();
                candidates.dedup();
                candidates
                    .into_iter()
                    .map(|k| (k, jaccard(&sets[i], &sets[k])))
                    .find(|&(_, j)| j >= threshold)
                    .map_or(DedupVerdict::Kept, |(of, similarity)| DedupVerdict::NearDuplicate {
                        of,
                        similarity,
                    })
            };
            if verdict == DedupVerdict::Kept {
                kept_text.entry(norm).or_insert(i);
                for s in &sets[i] {
                    postings.entry(s.as_str()).or_default().push(i);
                }
            }
            out.push(verdict);
        }
        out
    }

    #[test]
    fn every_parallel_path_equals_the_definition_at_scale() {
        // Enough texts and bytes for the parallel per-text pass, the parallel shared-token search
        // and the first verifications ahead; a boilerplate sentence in a third of the texts, so
        // some shingles are common; near copies, exact and re-cased copies, `None`s, empty texts.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            state = finish(state.wrapping_add(1));
            state
        };
        let boilerplate = "see the documentation for more details about the refund window";
        let bases: Vec<Vec<String>> = (0..300)
            .map(|_| (0..(20 + next() % 20)).map(|_| format!("w{}", next() % 4000)).collect())
            .collect();
        let texts: Vec<Option<String>> = (0..2600)
            .map(|i| {
                let mut words = bases[(next() % 300) as usize].clone();
                for _ in 0..next() % 10 {
                    let at = (next() % words.len() as u64) as usize;
                    words[at] = format!("x{}", next() % 80);
                }
                let mut text = words.join(" ");
                if i % 3 == 0 {
                    text = format!("{boilerplate} {text}");
                }
                match i % 211 {
                    0 => None,
                    1 => Some(String::new()),
                    2 => Some(text.to_uppercase()),
                    _ => Some(text),
                }
            })
            .collect();
        let refs: Vec<Option<&str>> = texts.iter().map(|t| t.as_deref()).collect();
        assert!(refs.len() >= PARALLEL_MIN_HINTS);
        assert!(refs.iter().flatten().map(|t| t.len()).sum::<usize>() >= PARALLEL_MIN_BYTES);
        for (anchors, threshold, size) in [(0, 0.8, 5), (7, 0.6, 2)] {
            let got = jaccard_dedup(&refs, anchors, threshold, size).unwrap();
            assert!(got.iter().any(|v| matches!(v, DedupVerdict::NearDuplicate { .. })));
            assert_eq!(
                got,
                indexed_reference(&refs, anchors, threshold, size),
                "{threshold} {size}"
            );
        }
    }

    #[test]
    fn verifying_first_candidates_ahead_changes_no_verdict() {
        // Clusters of near copies (some below the threshold, some exact, some empty) so that
        // first candidates are kept, dropped, above and below the threshold.
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state = finish(state.wrapping_add(1));
            state
        };
        let bases: Vec<Vec<String>> = (0..40)
            .map(|_| (0..30).map(|_| format!("w{}", next() % 3000)).collect())
            .collect();
        let texts: Vec<Option<String>> = (0..600)
            .map(|i| {
                let mut words = bases[(next() % 40) as usize].clone();
                for _ in 0..next() % 8 {
                    let at = (next() % 30) as usize;
                    words[at] = format!("x{}", next() % 50);
                }
                match i % 97 {
                    0 => None,
                    1 => Some(String::new()),
                    _ => Some(words.join(" ")),
                }
            })
            .collect();
        let refs: Vec<Option<&str>> = texts.iter().map(|t| t.as_deref()).collect();
        let order: Vec<usize> = (0..refs.len()).collect();
        for (anchors, threshold, size) in [(0, 0.8, 3), (5, 0.7, 2), (0, 0.95, 1)] {
            let prepared = PreparedTexts::new(&refs, Some((threshold, size)));
            let hinted = prepared.verdicts_hinted(&refs, &order, anchors, true);
            assert_eq!(hinted, prepared.verdicts_hinted(&refs, &order, anchors, false));
            assert_eq!(hinted, all_pairs(&refs, anchors, threshold, size), "{threshold} {size}");
            assert!(hinted.iter().any(|v| matches!(v, DedupVerdict::NearDuplicate { .. })));
        }
    }

    #[test]
    fn the_parallel_pass_equals_the_all_pairs_definition() {
        // Enough text to cross PARALLEL_MIN_BYTES, so blocks are analysed on the rayon pool: a few
        // base texts, each repeated with a growing number of words replaced, so similarities
        // spread around the threshold, plus exact copies (some in a different case) and `None`s.
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let bases: Vec<Vec<String>> = (0..12)
            .map(|_| (0..160).map(|_| format!("w{}", next() % 5_000)).collect())
            .collect();
        let mut texts: Vec<Option<String>> = Vec::new();
        for i in 0..360 {
            let mut words = bases[i % bases.len()].clone();
            for _ in 0..(i / bases.len()) % 15 {
                let at = (next() % words.len() as u64) as usize;
                words[at] = format!("new{}", next() % 100);
            }
            let text = words.join(" ");
            let previous = texts.last().cloned().flatten();
            texts.push(match i % 29 {
                0 => None,
                7 => previous.map(|t| t.to_uppercase()),
                13 => previous,
                _ => Some(text),
            });
        }
        let refs: Vec<Option<&str>> = texts.iter().map(|t| t.as_deref()).collect();
        assert!(refs.iter().flatten().map(|t| t.len()).sum::<usize>() > PARALLEL_MIN_BYTES);
        for (anchors, threshold, size) in [(0, 0.8, 5), (3, 0.9, 3), (0, 0.5, 1)] {
            let verdicts = jaccard_dedup(&refs, anchors, threshold, size).unwrap();
            assert!(verdicts.iter().any(|v| matches!(v, DedupVerdict::NearDuplicate { .. })));
            assert!(
                verdicts
                    .iter()
                    .any(|v| matches!(v, DedupVerdict::ExactDuplicate { .. }))
            );
            assert_eq!(
                verdicts,
                all_pairs(&refs, anchors, threshold, size),
                "{threshold} {size}"
            );
            assert_eq!(hash_dedup(&refs, anchors), all_pairs(&refs, anchors, 2.0, size));
        }
    }

    fn small_text() -> impl Strategy<Value = Option<String>> {
        // A tiny vocabulary makes near duplicates frequent, so the property is exercised.
        let word = prop::sample::select(vec!["a", "b", "c", "d", "e", "Ab", "x"]);
        prop::option::weighted(0.95, prop::collection::vec(word, 0..9).prop_map(|w| w.join(" ")))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn near_dedup_equals_the_all_pairs_definition(
            texts in prop::collection::vec(small_text(), 0..24),
            anchors in 0usize..4,
            threshold in prop::sample::select(vec![0.1, 0.34, 0.5, 0.6, 0.75, 0.8, 0.9, 1.0]),
            size in 1usize..4,
        ) {
            let refs: Vec<Option<&str>> = texts.iter().map(|t| t.as_deref()).collect();
            prop_assert_eq!(jaccard_dedup(&refs, anchors, threshold, size).unwrap(), all_pairs(&refs, anchors, threshold, size));
        }

        #[test]
        fn prepared_texts_in_any_order_give_the_verdicts_of_that_order(
            texts in prop::collection::vec(small_text(), 0..24),
            anchors in 0usize..4,
            rotate in 0usize..24,
            threshold in prop::sample::select(vec![0.34, 0.6, 0.8, 1.0]),
            near in any::<bool>(),
        ) {
            // The packer prepares texts in input order and asks for verdicts in priority order.
            let refs: Vec<Option<&str>> = texts.iter().map(|t| t.as_deref()).collect();
            let mut order: Vec<usize> = (0..refs.len()).rev().collect();
            let by = rotate.min(order.len());
            order.rotate_left(by);
            let in_priority: Vec<Option<&str>> = order.iter().map(|&i| refs[i]).collect();
            let (settings, want) = if near {
                (Some((threshold, 2)), jaccard_dedup(&in_priority, anchors, threshold, 2).unwrap())
            } else {
                (None, hash_dedup(&in_priority, anchors))
            };
            prop_assert_eq!(PreparedTexts::new(&refs, settings).verdicts(&refs, &order, anchors), want);
        }

        #[test]
        fn near_dedup_equals_all_pairs_on_long_mutated_texts(
            base in prop::collection::vec(long_word(), 10..60),
            edits in prop::collection::vec(prop::collection::vec((any::<prop::sample::Index>(), long_word()), 0..6), 1..20),
            anchors in 0usize..3,
            threshold in prop::sample::select(vec![0.3, 0.5, 0.7, 0.8, 0.85, 0.9, 0.95]),
            size in 1usize..6,
        ) {
            // Variants of one text, a few words replaced each: sets long enough that prefixes are
            // much shorter than the sets, with similarities spread around every threshold.
            let texts: Vec<Option<String>> = edits
                .iter()
                .map(|edit| {
                    let mut words = base.clone();
                    for (at, word) in edit {
                        let at = at.index(words.len());
                        words[at] = word.clone();
                    }
                    Some(words.join(" "))
                })
                .collect();
            let refs: Vec<Option<&str>> = texts.iter().map(|t| t.as_deref()).collect();
            prop_assert_eq!(jaccard_dedup(&refs, anchors, threshold, size).unwrap(), all_pairs(&refs, anchors, threshold, size));
            prop_assert_eq!(hash_dedup(&refs, anchors), all_pairs(&refs, anchors, 2.0, size));
        }

        #[test]
        fn the_ascii_fast_path_equals_the_general_path_on_any_ascii(text in "[ -~\t\n]{0,300}") {
            prop_assert_eq!(fast_word_hashes(&text), general_word_hashes(&text));
        }

        #[test]
        fn the_fast_path_equals_the_general_path_on_mixed_text(text in "([ -~]{0,12}[éÄßİΣ—’\u{300}]?){0,30}") {
            prop_assert_eq!(fast_word_hashes(&text), general_word_hashes(&text));
        }

        #[test]
        fn normalise_equals_lowercase_then_split(text in "\\PC{0,40}") {
            let lower: String = text.chars().flat_map(char::to_lowercase).collect();
            let words: Vec<&str> = lower.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).collect();
            prop_assert_eq!(normalise(&text), words.join(" "));
        }
    }

    fn long_word() -> impl Strategy<Value = String> {
        prop::sample::select(vec![
            "alpha",
            "Beta",
            "gamma",
            "DELTA",
            "épée",
            "Straße",
            "İzmir",
            "naïve",
            "x",
            "y",
            "z",
            "3.5",
            "ab-cd",
            "verylongwordindeed",
            "ÇA",
            "über",
        ])
        .prop_map(str::to_owned)
    }
}
