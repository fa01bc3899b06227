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
//! # The algorithm, file by file
//!
//! Each file is one step and reads on its own; in the order the data flows:
//!
//! 1. `definition.rs`: what is compared, on strings: [`normalise`], [`normalised_words`],
//!    [`shingles`], [`jaccard`], [`content_hash`]. Everything below computes the same thing faster.
//! 2. `scanner.rs`: the same words found 64 bytes at a time with bit masks and hashed as they are
//!    found, next to the byte-by-byte rule its tests hold it to.
//! 3. `hashing.rs`: a word's 64-bit hash, and the key of a text's word sequence.
//! 4. `shingling.rs`: a text's shingle set as 64-bit hashes, rolled from its word hashes.
//! 5. `prefix.rs`: prefix filtering: how many leading shingles of a set can find every pair
//!    (`prefix_len`), in which global order (common shingles last), and how they are selected.
//! 6. `prepare.rs`: steps 2 to 5 once per text ([`PreparedTexts`]). This does not depend on the
//!    ranking, so it runs in fixed blocks on the rayon pool while the packer ranks.
//! 7. `exact.rs`: texts with equal normalised text grouped in priority order; a group's first text
//!    (its *representative*) is the only one looked up, the others follow its verdict.
//! 8. `near/`: the sequential pass in priority order: `candidates.rs` finds the prefix tokens
//!    shared by two or more texts (the only ones that can propose a pair), `index.rs` indexes them
//!    for the kept texts, `verify.rs` checks a proposal on the full sets.
//! 9. `table.rs`: the open-addressing table of 64-bit hashes that steps 4, 8 and the candidates
//!    reuse from text to text.
//!
//! Small functions that the per-text pass calls from another file are marked `#[inline]`: each
//! file is compiled as its own unit, and without the mark they would not be inlined across it.
//!
//! No normalised string is built except to confirm an exact match, so a hash collision can never
//! drop a chunk as an exact duplicate. Shingles are compared as 64-bit hashes (see `ShingleSets`
//! in `prepare.rs` for what a collision would mean).

use std::sync::atomic::AtomicBool;

use rag_core::PackerError;

pub(crate) use blocks::PARALLEL_MIN_BYTES;
pub use definition::{content_hash, jaccard, normalise, normalised_words, shingles};
pub(crate) use near::NearFallback;

mod blocks;
mod definition;
mod exact;
mod hashing;
mod near;
mod prefix;
mod prepare;
mod scanner;
mod shingling;
mod table;
#[cfg(test)]
mod tests;

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
    PreparedTexts::new(texts, None).verdicts(texts, &order, anchors).0
}

/// Exact and near dedup in one pass: each text is first checked for an exact duplicate, then for a
/// kept text whose word `shingle_size`-shingles reach Jaccard `threshold` with its own.
///
/// The result equals the all-pairs definition: text `i` (not an anchor) is an exact duplicate of the
/// first kept `j < i` with the same normalised text, else a near duplicate of the first kept
/// `j < i` with `jaccard(shingles(i), shingles(j)) >= threshold`. Errors if `threshold` is not in
/// `(0, 1]` or `shingle_size` is 0.
///
/// The exact search has a work bound linear in the input (32 units per shingle, plus 2^24), which
/// only boilerplate-heavy inputs at low thresholds reach. Past it, the remaining texts are
/// compared through MinHash LSH: a near duplicate it reports is still verified on the full
/// shingle sets, but it may miss one (see `docs/reference/packer.md`). A `tracing` warning says
/// where that happened; the packer also reports it in `PackedContext::notes`.
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
    Ok(PreparedTexts::new(texts, Some((threshold, shingle_size)))
        .verdicts(texts, &order, anchors)
        .0)
}

/// The part of dedup that does not depend on the priority order, done once per text: word hashes,
/// sequence keys and (for near dedup) shingle sets with their prefixes first. The packer prepares
/// the texts in input order while it validates and ranks the chunks, then asks for the
/// [`verdicts`](Self::verdicts) in priority order.
pub(crate) struct PreparedTexts {
    sets: prepare::ShingleSets,
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
            sets: prepare::ShingleSets {
                blocks: prepare::analyse(texts, near, cancel),
            },
            threshold: near.map(|(threshold, _)| threshold),
        }
    }

    /// The verdicts for the prepared `texts` taken in priority order: position `p` of the result
    /// is about `texts[order[p]]`, and `of` is a position in `order`. The first `anchors` are
    /// always kept. `order` must list each text at most once. With near dedup, the second value
    /// says where it went approximate, if it did (see `near/mod.rs`).
    pub(crate) fn verdicts(
        &self,
        texts: &[Option<&str>],
        order: &[usize],
        anchors: usize,
    ) -> (Vec<DedupVerdict>, Option<NearFallback>) {
        self.verdicts_with(texts, order, anchors, order.len() >= near::PARALLEL_MIN_HINTS, None)
    }

    /// [`verdicts`](Self::verdicts), with or without the parallel first verifications, and with
    /// the work bound of the exact search given (`None`: the default for the input).
    fn verdicts_with(
        &self,
        texts: &[Option<&str>],
        order: &[usize],
        anchors: usize,
        hinted: bool,
        bound: Option<u64>,
    ) -> (Vec<DedupVerdict>, Option<NearFallback>) {
        let representative = exact::group_equal_texts(texts, &self.sets.blocks, order);
        match self.threshold {
            None => (exact::verdicts(&representative, anchors), None),
            Some(threshold) => near::verdicts(&self.sets, order, &representative, anchors, threshold, hinted, bound),
        }
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
