//! The reference definitions the packer rules compare against, written from the documented rules
//! and independently of `rag-packer`'s code: the priority order, text normalisation, word
//! shingles and their Jaccard similarity, dedup by all pairs, and the optimal selection by brute
//! force. Tests that need the definition itself (a benchmark's oracle, a hostile case's expected
//! drops) call these instead of writing it again.
//!
//! ```
//! use rag_contract::reference;
//!
//! let a = reference::shingles(&reference::normalise("The refund window is 30 days."), 2);
//! let b = reference::shingles(&reference::normalise("the refund window is 14 days"), 2);
//! assert_eq!(reference::jaccard(&a, &b), 3.0 / 7.0);
//! ```

use std::collections::{BTreeSet, HashMap};

use rag_core::{Chunk, DropReason, TokenCounter};

use crate::packer::{Dedup, known_tokens};

/// Brute force enumerates subsets, so it runs only where there are at most this many candidates.
pub const BRUTE_FORCE_MAX_CANDIDATES: usize = 16;

/// The priority order dedup walks: pinned chunks in input order, then the others by score
/// descending (a missing score is 0), ties by id ascending.
pub fn priority_order(chunks: &[Chunk]) -> Vec<usize> {
    let mut candidates: Vec<usize> = (0..chunks.len()).filter(|&i| !chunks[i].pinned).collect();
    candidates.sort_by(|&a, &b| {
        let (a, b) = (&chunks[a], &chunks[b]);
        b.score_or_zero()
            .partial_cmp(&a.score_or_zero())
            .unwrap_or(std::cmp::Ordering::Equal)
            .then_with(|| a.id.cmp(&b.id))
    });
    (0..chunks.len())
        .filter(|&i| chunks[i].pinned)
        .chain(candidates)
        .collect()
}

/// The normalised text: lower-cased, each maximal run of alphanumeric characters a word, words
/// joined by one space.
pub fn normalise(text: &str) -> String {
    let lower: String = text.chars().flat_map(char::to_lowercase).collect();
    lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The word `size`-shingles of a normalised text; fewer words than `size` make one shingle, no
/// words none.
pub fn shingles(normalised: &str, size: usize) -> BTreeSet<String> {
    let words: Vec<&str> = normalised.split(' ').filter(|w| !w.is_empty()).collect();
    if words.is_empty() {
        return BTreeSet::new();
    }
    if words.len() < size {
        return BTreeSet::from([words.join(" ")]);
    }
    words.windows(size.max(1)).map(|w| w.join(" ")).collect()
}

/// `|a ∩ b| / |a ∪ b|`; two empty sets have similarity 0.
pub fn jaccard(a: &BTreeSet<String>, b: &BTreeSet<String>) -> f64 {
    let overlap = a.intersection(b).count();
    let union = a.len() + b.len() - overlap;
    if union == 0 { 0.0 } else { overlap as f64 / union as f64 }
}

/// The all-pairs definition of dedup: walking the [priority order](priority_order), a chunk (not
/// pinned, with content) is an exact duplicate of the first kept chunk with the same normalised
/// text, else (near dedup on) a near duplicate of the first kept chunk whose shingle Jaccard
/// similarity reaches the threshold; otherwise it is kept. Returns, per input chunk, `None` if kept
/// or the reason it is dropped.
pub fn dedup(chunks: &[Chunk], mode: Dedup) -> Vec<Option<DropReason>> {
    let order = priority_order(chunks);
    let normalised: Vec<Option<String>> = chunks.iter().map(|c| c.content().map(normalise)).collect();
    let shingle_sets: Vec<BTreeSet<String>> = match mode {
        Dedup::Near { shingle_size, .. } => normalised
            .iter()
            .map(|n| n.as_deref().map(|n| shingles(n, shingle_size)).unwrap_or_default())
            .collect(),
        Dedup::Exact => Vec::new(),
    };
    let mut verdicts = vec![None; chunks.len()];
    let mut kept: Vec<usize> = Vec::new();
    for i in order {
        let Some(text) = &normalised[i] else { continue };
        if !chunks[i].pinned {
            let exact = kept.iter().find(|&&k| normalised[k].as_ref() == Some(text));
            if let Some(&k) = exact {
                verdicts[i] = Some(DropReason::ExactDuplicate {
                    of: chunks[k].id.clone(),
                });
                continue;
            }
            if let Dedup::Near { threshold, .. } = mode {
                let near = kept.iter().find_map(|&k| {
                    let similarity = jaccard(&shingle_sets[i], &shingle_sets[k]);
                    (similarity >= threshold).then_some((k, similarity))
                });
                if let Some((k, similarity)) = near {
                    verdicts[i] = Some(DropReason::NearDuplicate {
                        of: chunks[k].id.clone(),
                        similarity,
                    });
                    continue;
                }
            }
        }
        kept.push(i);
    }
    verdicts
}

/// The best total score any selection of the non-duplicate candidates reaches within the room
/// the pinned chunks leave (and the cap), by enumerating every subset; `None` above
/// [`BRUTE_FORCE_MAX_CANDIDATES`] candidates.
pub fn brute_force_best_score(
    input: &[Chunk],
    mode: Dedup,
    budget: usize,
    counter: &dyn TokenCounter,
    cap: Option<usize>,
) -> Option<f64> {
    let verdicts = dedup(input, mode);
    let pinned: usize = input
        .iter()
        .filter(|c| c.pinned)
        .filter_map(|c| known_tokens(c, counter))
        .fold(0, usize::saturating_add);
    let room = budget.checked_sub(pinned)?;
    // Chunks with a score of zero or less never raise the total, so only positive ones matter.
    let items: Vec<(usize, f64, &str)> = input
        .iter()
        .zip(&verdicts)
        .filter(|(c, v)| !c.pinned && v.is_none() && c.score_or_zero() > 0.0)
        .filter_map(|(c, _)| Some((known_tokens(c, counter)?, c.score_or_zero(), c.document_id.as_str())))
        .filter(|&(tokens, _, _)| tokens <= room)
        .collect();
    if items.len() > BRUTE_FORCE_MAX_CANDIDATES {
        return None;
    }
    let mut best = 0.0f64;
    for mask in 0u32..(1 << items.len()) {
        let chosen = || (0..items.len()).filter(move |i| mask & (1 << i) != 0).map(|i| items[i]);
        let tokens = chosen().map(|(t, _, _)| t).fold(0, usize::saturating_add);
        if tokens > room {
            continue;
        }
        if let Some(cap) = cap {
            let mut per_document: HashMap<&str, usize> = HashMap::new();
            if chosen().any(|(_, _, doc)| {
                let n = per_document.entry(doc).or_insert(0);
                *n += 1;
                *n > cap
            }) {
                continue;
            }
        }
        best = best.max(chosen().map(|(_, s, _)| s).sum());
    }
    Some(best)
}
