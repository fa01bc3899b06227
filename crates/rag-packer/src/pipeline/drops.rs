//! The accounting: why each chunk that was not packed was left out, and the hand-over of the
//! chunks to the result.

use std::collections::HashMap;

use rag_core::{Chunk, ChunkId, DropReason, DroppedChunk, SelectionStrategy};

use super::plan::{Candidates, Early, Plan};
use crate::dedup::DedupVerdict;
use crate::select::{Selection, SelectionItem};

/// What the accounting reads: the candidates and what selection made of them.
pub(super) struct Outcome<'a> {
    pub(super) chunks: &'a [Chunk],
    pub(super) candidates: &'a Candidates,
    /// The selection items of `candidates.eligible`.
    pub(super) items: &'a [SelectionItem],
    pub(super) selection: &'a Selection,
    pub(super) cap: Option<usize>,
    pub(super) relevance_floor: f64,
}

/// Every candidate not selected, in rank order, with its reason.
///
/// The same rule holds for every strategy: a chunk whose document already has the maximum number
/// of packed chunks is over the cap; one with a negative score that would still have fitted was
/// left out for its score (only `knapsack` and `optimal` do that); any other is over budget.
pub(super) fn drop_reasons(outcome: &Outcome<'_>) -> Vec<(usize, DropReason)> {
    let Outcome {
        chunks,
        candidates,
        items,
        selection,
        cap,
        relevance_floor,
    } = outcome;
    let mut selected = vec![false; chunks.len()];
    let mut per_document: HashMap<usize, usize> = HashMap::new();
    let mut used = 0usize;
    // Eligible candidate -> its selection item, by position: a vector, not a map, at 100k
    // candidates.
    let mut item_of: Vec<u32> = vec![u32::MAX; chunks.len()];
    for (s, &i) in candidates.eligible.iter().enumerate() {
        item_of[i] = s as u32;
    }
    for &s in &selection.chosen {
        selected[candidates.eligible[s]] = true;
        *per_document.entry(items[s].document).or_insert(0) += 1;
        used += items[s].tokens;
    }
    let room_left = candidates.room.saturating_sub(used);
    let shown_by = first_packed_child(chunks, candidates, &selected);
    candidates
        .ranked
        .iter()
        .filter(|&&i| !selected[i])
        .map(|&i| {
            let of = |of: usize| chunks[candidates.priority[of]].id.clone();
            let reason = match candidates.early[i] {
                Some(Early::HeadingOnly) => DropReason::HeadingOnly {
                    shown_by: shown_by.get(&i).map(|&c| chunks[c].id.clone()),
                },
                Some(Early::NotRelevant) => DropReason::NotRelevant {
                    score: candidates.scores[i],
                    floor: *relevance_floor,
                },
                Some(Early::Duplicate(DedupVerdict::ExactDuplicate { of: o })) => {
                    DropReason::ExactDuplicate { of: of(o) }
                }
                Some(Early::Duplicate(DedupVerdict::NearDuplicate { of: o, similarity })) => {
                    DropReason::NearDuplicate { of: of(o), similarity }
                }
                Some(Early::Duplicate(DedupVerdict::Kept)) | None => match (cap, items.get(item_of[i] as usize)) {
                    (Some(cap), Some(item)) if per_document.get(&item.document).copied().unwrap_or(0) >= *cap => {
                        DropReason::OverDocumentCap {
                            document_id: chunks[i].document_id.clone(),
                            cap: *cap,
                        }
                    }
                    (_, Some(item))
                        if item.score < 0.0
                            && item.tokens <= room_left
                            && selection.strategy != SelectionStrategy::Greedy =>
                    {
                        DropReason::NegativeScore { score: item.score }
                    }
                    _ => DropReason::OverBudget {
                        tokens: candidates.checked[i].tokens,
                    },
                },
            };
            (i, reason)
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

impl Plan {
    /// Moves the packed chunks out of `chunks`, and each dropped one's id into its drop record
    /// (moved, not cloned); the rest is freed here.
    pub(super) fn hand_over(mut self, chunks: Vec<Chunk>) -> (Vec<Chunk>, Vec<DroppedChunk>, Plan) {
        let mut place: Vec<u32> = vec![u32::MAX; chunks.len()];
        for (slot, &i) in self.packed.iter().enumerate() {
            place[i] = slot as u32;
        }
        let mut packed: Vec<Option<Chunk>> = vec![None; self.packed.len()];
        let mut dropped_ids: Vec<Option<ChunkId>> = vec![None; chunks.len()];
        for (i, chunk) in chunks.into_iter().enumerate() {
            match place[i] {
                u32::MAX => dropped_ids[i] = Some(chunk.id),
                slot => packed[slot as usize] = Some(chunk),
            }
        }
        let dropped = self.take_dropped(dropped_ids);
        (packed.into_iter().flatten().collect(), dropped, self)
    }

    /// The drop records, with the ids cloned out of `chunks`.
    pub(super) fn clone_dropped(&mut self, chunks: &[Chunk]) -> Vec<DroppedChunk> {
        // Ids are cloned in input order, where the chunks (and usually their ids) lie one after
        // the other in memory; in rank order nearly every clone was two cache misses.
        let mut wanted = vec![false; chunks.len()];
        for &(i, _) in &self.dropped {
            wanted[i] = true;
        }
        let ids: Vec<Option<ChunkId>> = chunks
            .iter()
            .zip(wanted)
            .map(|(chunk, wanted)| wanted.then(|| chunk.id.clone()))
            .collect();
        self.take_dropped(ids)
    }

    /// The drop records, each taking its id out of `ids` (by input position).
    fn take_dropped(&mut self, mut ids: Vec<Option<ChunkId>>) -> Vec<DroppedChunk> {
        std::mem::take(&mut self.dropped)
            .into_iter()
            .filter_map(|(i, reason)| {
                Some(DroppedChunk {
                    id: ids[i].take()?,
                    reason,
                })
            })
            .collect()
    }
}
