//! The exact strategy: a 0/1 knapsack by dynamic programming over tokens, with the per-document
//! cap as part of the problem.

use std::collections::HashMap;

use super::{DocumentCounts, SelectionItem};

/// The largest dynamic-programming table [`optimal_select`] builds, in cells.
///
/// A cell is one (candidate, tokens) pair: without a cap the table has `candidates x (room + 1)`
/// cells, where only candidates with a positive score that fit alone count and `room` is first
/// lowered to their total tokens. With a cap of `c` per document, each candidate counts
/// `min(c, its document's candidates)` times. 16 Mi cells take about 2 MiB of memory and tens of
/// milliseconds in a release build (e.g. 4,000 candidates at a 4,000-token room).
pub const OPTIMAL_CELL_LIMIT: usize = 1 << 24;

/// The exact optimum was not computed because its table would exceed [`OPTIMAL_CELL_LIMIT`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("exact selection needs {cells} table cells, more than the limit of {limit}")]
pub struct OptimalTooLarge {
    /// Cells the table would need.
    pub cells: usize,
    /// The limit.
    pub limit: usize,
}

/// Exact selection: the 0/1 knapsack optimum of total score, by dynamic programming over tokens.
///
/// Only items with a positive score enter the table (a zero score cannot raise the total, a
/// negative one can only lower it); afterwards, items with a score of exactly zero fill the room
/// left in rank order, as the other strategies would. Among sets with the same total, the table
/// takes a later item only when it strictly improves the total, so ties favour better-ranked items.
/// With a cap, the table gains a dimension per document (how many of its items are taken), so the
/// cap is part of the optimum rather than a filter.
///
/// Errors with [`OptimalTooLarge`] when the table would exceed [`OPTIMAL_CELL_LIMIT`]; the packer
/// then falls back to [`knapsack_select`](super::knapsack_select) and says so.
///
/// ```
/// use rag_packer::{SelectionItem, optimal_select};
///
/// let item = |tokens, score| SelectionItem { tokens, score, document: 0 };
/// // Knapsack's greedy would take 60 + 30 (score 1.5); the optimum is 50 + 50 (score 1.6).
/// let items = [item(60, 1.0), item(50, 0.8), item(50, 0.8), item(30, 0.5)];
/// assert_eq!(optimal_select(&items, 100, None)?, [1, 2]);
/// # Ok::<(), rag_packer::OptimalTooLarge>(())
/// ```
pub fn optimal_select(
    items: &[SelectionItem],
    room: usize,
    per_document: Option<usize>,
) -> Result<Vec<usize>, OptimalTooLarge> {
    let positive: Vec<usize> = (0..items.len())
        .filter(|&i| items[i].score > 0.0 && items[i].tokens <= room)
        .collect();
    let width = positive
        .iter()
        .map(|&i| items[i].tokens)
        .fold(0usize, usize::saturating_add)
        .min(room);
    let mut chosen = match per_document {
        None => {
            let cells = positive.len().saturating_mul(width.saturating_add(1));
            check_cells(cells)?;
            optimal_uncapped(items, &positive, width)
        }
        Some(cap) => {
            let groups = group_by_document(items, &positive);
            let cells = groups
                .iter()
                .map(|g| g.len().saturating_mul(cap.min(g.len())))
                .fold(groups.len(), usize::saturating_add)
                .saturating_mul(width.saturating_add(1));
            check_cells(cells)?;
            optimal_capped(items, &groups, cap, width)
        }
    };
    chosen.sort_unstable();
    fill_with_zero_scores(items, &mut chosen, room, per_document);
    Ok(chosen)
}

fn check_cells(cells: usize) -> Result<(), OptimalTooLarge> {
    if cells > OPTIMAL_CELL_LIMIT {
        return Err(OptimalTooLarge {
            cells,
            limit: OPTIMAL_CELL_LIMIT,
        });
    }
    Ok(())
}

/// A flat bit table: one "taking this item improved this cell" flag per cell.
struct Bits(Vec<u64>);

impl Bits {
    fn new(len: usize) -> Self {
        Self(vec![0; len.div_ceil(64)])
    }

    fn set(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }

    fn get(&self, i: usize) -> bool {
        self.0[i / 64] & (1 << (i % 64)) != 0
    }
}

/// The classic one-dimensional table: `best[w]` is the highest total within `w` tokens.
fn optimal_uncapped(items: &[SelectionItem], positive: &[usize], width: usize) -> Vec<usize> {
    let stride = width + 1;
    let mut best = vec![0.0f64; stride];
    let mut took = Bits::new(positive.len() * stride);
    for (row, &i) in positive.iter().enumerate() {
        let SelectionItem { tokens, score, .. } = items[i];
        for w in (tokens..=width).rev() {
            let with = best[w - tokens] + score;
            if with > best[w] {
                best[w] = with;
                took.set(row * stride + w);
            }
        }
    }
    let mut chosen = Vec::new();
    let mut w = width;
    for (row, &i) in positive.iter().enumerate().rev() {
        if took.get(row * stride + w) {
            chosen.push(i);
            w -= items[i].tokens;
        }
    }
    chosen
}

/// Items grouped by document, groups in order of their best item, items in rank order.
fn group_by_document(items: &[SelectionItem], positive: &[usize]) -> Vec<Vec<usize>> {
    let mut slot: HashMap<usize, usize> = HashMap::new();
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for &i in positive {
        let g = *slot.entry(items[i].document).or_insert_with(|| {
            groups.push(Vec::new());
            groups.len() - 1
        });
        groups[g].push(i);
    }
    groups
}

/// The table with a cap: within a document, `layer[k][w]` is the best total within `w` tokens that
/// takes exactly `k` of the document's items; between documents, the best layer carries over.
fn optimal_capped(items: &[SelectionItem], groups: &[Vec<usize>], cap: usize, width: usize) -> Vec<usize> {
    let stride = width + 1;
    let mut best = vec![0.0f64; stride];
    // Bits of item `row` at layer `k` live at `(offset[row] + k - 1) * stride + w`.
    let mut offsets = Vec::new();
    let mut cells = 0;
    for group in groups {
        let layers = cap.min(group.len());
        for _ in group {
            offsets.push(cells);
            cells += layers;
        }
    }
    let mut took = Bits::new(cells * stride);
    let mut best_layer: Vec<Vec<u32>> = Vec::with_capacity(groups.len());
    let mut row = 0;
    for group in groups {
        let layers = cap.min(group.len());
        let mut layer = vec![vec![f64::NEG_INFINITY; stride]; layers + 1];
        layer[0].copy_from_slice(&best);
        for &i in group {
            let SelectionItem { tokens, score, .. } = items[i];
            // Descending k reads layer k - 1 before this item could have updated it.
            for k in (1..=layers).rev() {
                let (below, above) = layer.split_at_mut(k);
                let (from, to) = (&below[k - 1], &mut above[0]);
                for w in (tokens..=width).rev() {
                    let with = from[w - tokens] + score;
                    if with > to[w] {
                        to[w] = with;
                        took.set((offsets[row] + k - 1) * stride + w);
                    }
                }
            }
            row += 1;
        }
        let mut chosen_layer = vec![0u32; stride];
        for w in 0..stride {
            let mut k_best = 0;
            for k in 1..=layers {
                if layer[k][w] > layer[k_best][w] {
                    k_best = k;
                }
            }
            best[w] = layer[k_best][w];
            chosen_layer[w] = k_best as u32;
        }
        best_layer.push(chosen_layer);
    }
    let mut chosen = Vec::new();
    let mut w = width;
    let mut row = offsets.len();
    for (g, group) in groups.iter().enumerate().rev() {
        let mut k = best_layer[g][w] as usize;
        for &i in group.iter().rev() {
            row -= 1;
            if k > 0 && took.get((offsets[row] + k - 1) * stride + w) {
                chosen.push(i);
                w -= items[i].tokens;
                k -= 1;
            }
        }
    }
    chosen
}

/// Adds zero-score items in rank order while they fit; `chosen` stays sorted.
fn fill_with_zero_scores(items: &[SelectionItem], chosen: &mut Vec<usize>, room: usize, per_document: Option<usize>) {
    let used: usize = chosen.iter().map(|&i| items[i].tokens).sum();
    let mut remaining = room.saturating_sub(used);
    let mut counts = DocumentCounts::new(per_document);
    for &i in chosen.iter() {
        counts.add(items[i].document);
    }
    let mut added = false;
    for (i, item) in items.iter().enumerate() {
        if item.score == 0.0 && item.tokens <= remaining && !counts.is_full(item.document) {
            remaining -= item.tokens;
            counts.add(item.document);
            chosen.push(i);
            added = true;
        }
    }
    if added {
        chosen.sort_unstable();
    }
}
