//! The near search: one sequential pass in priority order that decides, for each text, whether a
//! text kept before it reaches the threshold.
//!
//! Prefix filtering (see `prefix.rs`) says which earlier texts *can* reach the threshold with a
//! text: those whose prefix shares a token with its prefix. [`candidates`] finds the tokens that
//! two or more prefixes share (no other token can propose a pair), [`index`] files them for the
//! kept texts and proposes the earlier texts that share one, and [`verify`] decides each proposal
//! on the full shingle sets, in priority order, so the first match is the best-ranked kept text.
//!
//! The exact search has a work bound. On most inputs a text's prefix meets few others, but on
//! boilerplate-heavy ones (every shingle common, a low threshold, so long prefixes) nearly every
//! pair is proposed and verified, which is quadratic. The search counts its work as it goes
//! (postings walked, proposals considered, tokens a verification may probe); once the count
//! passes [`work_bound`], the texts still to decide go to [`minhash`], an approximate search
//! whose work per text is bounded, and the result says so ([`NearFallback`]). The texts decided
//! before, the best-ranked ones, keep their exact verdicts. The count does not depend on timing
//! or threads, so the same input falls back at the same text on any machine.

use std::fmt;

use rayon::prelude::*;

use candidates::{SharedTokens, UNSHARED};
use index::PrefixIndex;
use minhash::{Approximate, Bands, HASHES};
use verify::Hint;

use super::DedupVerdict;
use super::prepare::ShingleSets;
use super::table::TokenSet;

mod candidates;
mod index;
mod minhash;
mod verify;

/// Work units the exact search may spend per shingle of the input (see [`work_bound`]).
const WORK_PER_SHINGLE: u64 = 32;

/// Work units the exact search may always spend, so that small inputs are always exact.
const WORK_FLOOR: u64 = 1 << 24;

/// The work the exact search may do on an input of `shingles` shingles before the rest goes to
/// the approximate search: a multiple of the input, so the near search stays linear in it.
fn work_bound(shingles: usize) -> u64 {
    WORK_FLOOR.saturating_add(WORK_PER_SHINGLE.saturating_mul(shingles as u64))
}

/// Near dedup went approximate past its work bound: where, and how.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct NearFallback {
    /// The texts decided exactly: the first ones in priority order.
    pub(crate) exact: usize,
    /// All the texts.
    pub(crate) texts: usize,
    /// The work bound the exact search passed.
    pub(crate) bound: u64,
    /// How the approximate search bands its signatures.
    bands: Bands,
}

impl fmt::Display for NearFallback {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "near dedup fell back to MinHash LSH after the first {} of {} chunks in rank order: the \
             exact search passed its work bound of {} units; later chunks were compared through {} \
             bands of {} of {HASHES} hashes, so every near duplicate dropped was verified but some \
             may have been missed",
            self.exact, self.texts, self.bound, self.bands.bands, self.bands.rows
        )
    }
}

/// From this many texts on, each text's first candidate is verified on the pool before the
/// sequential pass (see [`verdicts`]); below, the pass verifies as it goes.
pub(super) const PARALLEL_MIN_HINTS: usize = 2048;

/// The verdicts of exact and near dedup for the texts in `order` (`sets` indexed by text,
/// `representative` and the result by position in `order`; see `exact::group_equal_texts`).
///
/// With `hinted`, each representative's first candidate is verified on the pool before the pass.
/// `bound` is the work bound of the exact search ([`work_bound`] of the input unless given).
pub(super) fn verdicts(
    sets: &ShingleSets,
    order: &[usize],
    representative: &[Option<usize>],
    anchors: usize,
    threshold: f64,
    hinted: bool,
    bound: Option<u64>,
) -> (Vec<DedupVerdict>, Option<NearFallback>) {
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
    let hints: Vec<Option<Hint>> = if hinted {
        first_proposal_hints(&shared, representative, anchors, threshold, &set_at)
    } else {
        vec![None; order.len()]
    };
    let bound = bound.unwrap_or_else(|| work_bound(sets.shingles()));
    let mut index = PrefixIndex::new(threshold, shared.count(), order.len());
    let mut approximate: Option<Approximate> = None;
    let mut fallback = None;
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
            Some(_) if approximate.is_some() || index.work() > bound => {
                let approximate = approximate.get_or_insert_with(|| {
                    let (started, note) = start_approximate(threshold, bound, p, representative, &verdicts, &set_at);
                    fallback = Some(note);
                    started
                });
                let is_representative = |q: usize| representative[q] == Some(q);
                match approximate.decide(p, p >= anchors, &set_at, is_representative, order.len()) {
                    Some((of, similarity)) => DedupVerdict::NearDuplicate { of, similarity },
                    None => DedupVerdict::Kept,
                }
            }
            Some(_) => exact_verdict(&mut index, shared.of(p), p, p >= anchors, &set_at, hints[p]),
        };
        verdicts.push(verdict);
    }
    (verdicts, fallback)
}

/// Each representative's first proposal verified ahead of the sequential pass, on the pool.
///
/// A text's first proposal is nearly always the first text whose prefix shares one of its
/// tokens, and at most the texts before it are kept or not, which the sequential pass decides.
/// So that pair is verified first, in parallel; the pass then uses the result if that text is
/// proposed. At most one verification per text is done ahead, so a flood of copies of one text
/// adds no work.
fn first_proposal_hints<'s>(
    shared: &SharedTokens,
    representative: &[Option<usize>],
    anchors: usize,
    threshold: f64,
    set_at: &(impl Fn(usize) -> &'s [u64] + Sync),
) -> Vec<Option<Hint>> {
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
    (0..representative.len())
        .into_par_iter()
        .map_init(TokenSet::default, hint_for)
        .collect()
}

/// The approximate search taking over at position `p`, with the texts kept before it filed, and
/// the note that says so (also emitted as a warning).
fn start_approximate<'s>(
    threshold: f64,
    bound: u64,
    p: usize,
    representative: &[Option<usize>],
    verdicts: &[DedupVerdict],
    set_at: &(impl Fn(usize) -> &'s [u64] + Sync),
) -> (Approximate, NearFallback) {
    let texts = representative.len();
    let kept: Vec<usize> = (0..p)
        .filter(|&q| representative[q] == Some(q) && verdicts[q] == DedupVerdict::Kept)
        .collect();
    let started = Approximate::start(threshold, texts, &kept, set_at);
    let note = NearFallback {
        exact: p,
        texts,
        bound,
        bands: started.bands(),
    };
    tracing::warn!(exact = p, texts, bound, "{note}");
    (started, note)
}

/// The exact search's verdict on the representative at position `p`, whose shared tokens are
/// `ids`: the first kept text before it that reaches the threshold, if `propose` (false for an
/// anchor).
fn exact_verdict<'s>(
    index: &mut PrefixIndex,
    ids: &[u32],
    p: usize,
    propose: bool,
    set_at: &impl Fn(usize) -> &'s [u64],
    hint: Option<Hint>,
) -> DedupVerdict {
    // Indexed before it is known to be kept: one pass over its shared tokens both finds the
    // earlier texts sharing them and files this one; a text found to be a duplicate (the rarer
    // case) is taken out again.
    let mark = index.insert(p, ids, propose);
    match index.first_match(set_at, set_at(p), hint) {
        Some((of, similarity)) => {
            index.retract(ids, mark);
            DedupVerdict::NearDuplicate { of, similarity }
        }
        None => DedupVerdict::Kept,
    }
}
