//! The accounting: why each chunk that was not packed was left out, and the hand-over of the
//! chunks to the result.

use std::collections::HashMap;

use rag_core::{Chunk, ChunkId, DropReason, DroppedChunk, SelectionStrategy};

use super::plan::Plan;
use crate::dedup::DedupVerdict;
use crate::select::{Selection, SelectionItem};
use crate::validate::Checked;

/// What the accounting reads: the stages' results, by input position.
pub(super) struct Outcome<'a> {
    pub(super) chunks: &'a [Chunk],
    pub(super) checked: &'a [Checked],
    /// Candidates, best first.
    pub(super) ranked: &'a [usize],
    /// Dedup's verdict on each of `ranked`.
    pub(super) ranked_verdicts: &'a [DedupVerdict],
    /// Pinned, then ranked: what a verdict's `of` indexes.
    pub(super) priority: &'a [usize],
    /// The candidates dedup kept, in rank order: what `items` describe.
    pub(super) survivors: &'a [usize],
    pub(super) items: &'a [SelectionItem],
    pub(super) selection: &'a Selection,
    /// The budget the pinned chunks left.
    pub(super) room: usize,
    pub(super) cap: Option<usize>,
}

/// Every candidate not selected, in rank order, with its reason.
///
/// The same rule holds for every strategy: a chunk whose document already has the maximum number
/// of packed chunks is over the cap; one with a negative score that would still have fitted was
/// left out for its score (only `knapsack` and `optimal` do that); any other is over budget.
pub(super) fn drop_reasons(outcome: &Outcome<'_>) -> Vec<(usize, DropReason)> {
    let Outcome {
        chunks,
        checked,
        ranked,
        ranked_verdicts,
        priority,
        survivors,
        items,
        selection,
        room,
        cap,
    } = outcome;
    let mut selected = vec![false; chunks.len()];
    let mut per_document: HashMap<usize, usize> = HashMap::new();
    let mut used = 0usize;
    for &s in &selection.chosen {
        selected[survivors[s]] = true;
        *per_document.entry(items[s].document).or_insert(0) += 1;
        used += items[s].tokens;
    }
    let room_left = room.saturating_sub(used);
    // Candidate -> its selection item, by position: a vector, not a map, at 100k candidates.
    let mut survivor_item: Vec<u32> = vec![u32::MAX; chunks.len()];
    for (s, &i) in survivors.iter().enumerate() {
        survivor_item[i] = s as u32;
    }
    ranked
        .iter()
        .zip(ranked_verdicts.iter())
        .filter(|(i, _)| !selected[**i])
        .map(|(&i, verdict)| {
            let reason = match *verdict {
                DedupVerdict::ExactDuplicate { of } => DropReason::ExactDuplicate {
                    of: chunks[priority[of]].id.clone(),
                },
                DedupVerdict::NearDuplicate { of, similarity } => DropReason::NearDuplicate {
                    of: chunks[priority[of]].id.clone(),
                    similarity,
                },
                DedupVerdict::Kept => match (cap, items.get(survivor_item[i] as usize)) {
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
                        tokens: checked[i].tokens,
                    },
                },
            };
            (i, reason)
        })
        .collect()
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
