//! The near search: one sequential pass in priority order that decides, for each text, whether a
//! text kept before it reaches the threshold.
//!
//! Prefix filtering (see `prefix.rs`) says which earlier texts *can* reach the threshold with a
//! text: those whose prefix shares a token with its prefix. [`candidates`] finds the tokens that
//! two or more prefixes share (no other token can propose a pair), [`index`] files them for the
//! kept texts and proposes the earlier texts that share one, and [`verify`] decides each proposal
//! on the full shingle sets, in priority order, so the first match is the best-ranked kept text.

use rayon::prelude::*;

use candidates::{SharedTokens, UNSHARED};
use index::PrefixIndex;
use verify::Hint;

use super::DedupVerdict;
use super::prepare::ShingleSets;
use super::table::TokenSet;

mod candidates;
mod index;
mod verify;

/// From this many texts on, each text's first candidate is verified on the pool before the
/// sequential pass (see [`verdicts`]); below, the pass verifies as it goes.
pub(super) const PARALLEL_MIN_HINTS: usize = 2048;

/// The verdicts of exact and near dedup for the texts in `order` (`sets` indexed by text,
/// `representative` and the result by position in `order`; see `exact::group_equal_texts`).
///
/// With `hinted`, each representative's first candidate is verified on the pool before the pass.
pub(super) fn verdicts(
    sets: &ShingleSets,
    order: &[usize],
    representative: &[Option<usize>],
    anchors: usize,
    threshold: f64,
    hinted: bool,
) -> Vec<DedupVerdict> {
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
    // that text is proposed. At most one verification per text is done ahead, so a flood of
    // copies of one text adds no work.
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
                // a duplicate (the rarer case) is taken out again.
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
