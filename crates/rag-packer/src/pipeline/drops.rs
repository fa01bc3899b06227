//! The accounting: why each chunk that was not packed was left out.

use std::collections::HashMap;

use rag_core::{Chunk, DropReason, SelectionStrategy};

use super::candidates::{Candidates, Fate};

/// Every candidate not selected, in rank order, with its reason (by input position).
///
/// The same rule holds for every strategy: a chunk whose document already has the maximum number
/// of packed chunks is over the cap; one with a negative score that would still have fitted was
/// left out for its score (only `knapsack` and `optimal` do that); any other is over budget.
pub(super) fn drop_reasons(
    chunks: &[Chunk],
    candidates: &Candidates,
    cap: Option<usize>,
    strategy: SelectionStrategy,
) -> Vec<(usize, DropReason)> {
    let mut selected = vec![false; chunks.len()];
    let mut per_document: HashMap<usize, usize> = HashMap::new();
    let mut used = 0usize;
    for candidate in candidates.ranked().iter().filter(|c| c.fate == Fate::Selected) {
        selected[candidate.position] = true;
        *per_document.entry(candidate.document).or_insert(0) += 1;
        used += candidate.cost;
    }
    let room_left = candidates.room.saturating_sub(used);
    let shown_by = first_packed_child(chunks, candidates, &selected);
    let floor = candidates.relevance_floor.unwrap_or(f64::NEG_INFINITY);
    candidates
        .ranked()
        .iter()
        .filter(|c| c.fate != Fate::Selected)
        .map(|c| {
            let id = |of: usize| chunks[of].id.clone();
            let reason = match c.fate {
                Fate::HeadingOnly => DropReason::HeadingOnly {
                    shown_by: shown_by.get(&c.position).map(|&s| id(s)),
                },
                Fate::NotRelevant => DropReason::NotRelevant { score: c.score, floor },
                Fate::ExactDuplicate { of } => DropReason::ExactDuplicate { of: id(of) },
                Fate::NearDuplicate { of, similarity } => DropReason::NearDuplicate { of: id(of), similarity },
                // Over budget as the first plan found it; `mark_cut` says where its part went.
                Fate::CutFrom => DropReason::OverBudget { tokens: c.tokens },
                Fate::Eligible | Fate::Pinned | Fate::Selected => match cap {
                    Some(cap) if per_document.get(&c.document).copied().unwrap_or(0) >= cap => {
                        DropReason::OverDocumentCap {
                            document_id: chunks[c.position].document_id.clone(),
                            cap,
                        }
                    }
                    _ if c.score < 0.0 && c.cost <= room_left && strategy != SelectionStrategy::Greedy => {
                        DropReason::NegativeScore { score: c.score }
                    }
                    _ => DropReason::OverBudget { tokens: c.tokens },
                },
            };
            (c.position, reason)
        })
        .collect()
}

/// For each heading with a packed child: that child with the smallest document position (ties:
/// the smaller id), which shows the heading in its breadcrumb.
fn first_packed_child(chunks: &[Chunk], candidates: &Candidates, selected: &[bool]) -> HashMap<usize, usize> {
    let mut first: HashMap<usize, usize> = HashMap::new();
    let Some(sections) = &candidates.sections else {
        return first;
    };
    for (i, _) in selected.iter().enumerate().filter(|(_, s)| **s) {
        if let Some(parent) = sections.parent(i) {
            let key = |c: usize| (chunks[c].position, &chunks[c].id);
            first
                .entry(parent)
                .and_modify(|best| {
                    if key(i) < key(*best) {
                        *best = i;
                    }
                })
                .or_insert(i);
        }
    }
    first
}
