//! Verification: a proposed pair decided on the full shingle sets.

use crate::dedup::definition::similarity_from_counts;
use crate::dedup::table::TokenSet;

/// A verification done ahead of the sequential pass: the similarity of a text with `text` if it
/// reaches the threshold, else `None`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Hint {
    pub(super) text: u32,
    pub(super) similarity: Option<f64>,
    /// The work the verification counts for (see [`verification_work`]), so that the work of the
    /// search does not depend on whether it was done ahead.
    pub(super) work: u32,
}

impl Hint {
    /// Verifies `set` against `other_set` (the set of text `other`), with `scratch` as the set
    /// to load `set` into.
    pub(super) fn verify(threshold: f64, set: &[u64], other: usize, other_set: &[u64], scratch: &mut TokenSet) -> Self {
        let work = verification_work(threshold, set.len(), other_set.len());
        let similarity = if set.is_empty() || work == 0 {
            None
        } else {
            load(scratch, set);
            verify(threshold, scratch, set.len(), other_set)
        };
        Self {
            text: other as u32,
            similarity,
            work: work.try_into().unwrap_or(u32::MAX),
        }
    }
}

/// What verifying a set of `len` tokens against one of `other_len` costs, in the work units of the
/// search: the tokens of the other set it may probe, or 0 when the length filter decides alone.
pub(super) fn verification_work(threshold: f64, len: usize, other_len: usize) -> u64 {
    match min_overlap(threshold, len, other_len) {
        Some(_) => other_len as u64,
        None => 0,
    }
}

/// Fills `query_set` with `set`.
pub(super) fn load(query_set: &mut TokenSet, set: &[u64]) {
    // Two slots per token: a load of at most one half.
    query_set.clear(2 * set.len());
    for &token in set {
        query_set.insert(token);
    }
}

/// The similarity of a set of `len` tokens (loaded in `query_set`) with `other_set`, if it
/// reaches the threshold. Shared tokens are counted only until the rest of `other_set` could no
/// longer bring the count to what the threshold needs.
pub(super) fn verify(threshold: f64, query_set: &TokenSet, len: usize, other_set: &[u64]) -> Option<f64> {
    let needed = min_overlap(threshold, len, other_set.len())?;
    let mut shared = 0;
    for (seen, &token) in other_set.iter().enumerate() {
        if shared + (other_set.len() - seen) < needed {
            break;
        }
        shared += usize::from(query_set.contains(token));
    }
    (shared >= needed).then(|| similarity_from_counts(shared, len, other_set.len()))
}

/// The smallest overlap at which two sets of `len_a` and `len_b` tokens reach the threshold, or
/// `None` if no overlap can (the length filter: `J <= min / max`).
///
/// Computed with the same [`similarity_from_counts`] the verdict uses, so the cut is exactly where
/// the definition puts it, floating-point rounding included.
pub(super) fn min_overlap(threshold: f64, len_a: usize, len_b: usize) -> Option<usize> {
    let most = len_a.min(len_b);
    if most == 0 || similarity_from_counts(most, len_a, len_b) < threshold {
        return None;
    }
    // J = o / (a + b - o) >= t  <=>  o >= t (a + b) / (1 + t); start just below and step up.
    let estimate = threshold * (len_a + len_b) as f64 / (1.0 + threshold);
    let mut overlap = (estimate.floor() as usize).saturating_sub(1).min(most);
    while similarity_from_counts(overlap, len_a, len_b) < threshold {
        overlap += 1;
    }
    Some(overlap)
}
