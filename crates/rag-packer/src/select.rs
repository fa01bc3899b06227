//! Stage 6: choosing which candidates fill the room the pinned chunks left.
//!
//! Every function takes the candidates in rank order (best first) and returns the indices it chose,
//! ascending. Position in the slice is the final tie-break everywhere, so with the packer's ranking
//! (score descending, then id ascending) ties resolve by id.
//!
//! The per-document cap is part of the problem each strategy solves, not a filter applied before
//! it: at most `per_document` chosen items share a `document`, and the strategies optimise under
//! that constraint (the exact one exactly).

use std::collections::HashMap;
use std::hash::Hash;

use rag_core::SelectionStrategy;

/// A candidate as the selection strategies see it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SelectionItem {
    /// Its tokens.
    pub tokens: usize,
    /// Its relevance score (finite).
    pub score: f64,
    /// A number identifying its document, for the per-document cap.
    pub document: usize,
}

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

/// What `knapsack` and `optimal` maximise (`greedy` takes the rank order and maximises nothing).
///
/// The seed's objective, the sum of the packed chunks' scores, rewards splitting: ten fragments
/// scoring 0.5 beat the one passage scoring 0.9 that answers the question, so a budget fills with
/// headings and list items. [`RankPrior`](Self::RankPrior) values a chunk by how likely it is to
/// hold the answer given its rank instead, which no splitting can inflate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Objective {
    /// [`RankPrior`](Self::RankPrior) when the candidates are sections of documents (they carry
    /// the heading-aware chunker's metadata and section-aware packing is on), the seed's
    /// [`ScoreSum`](Self::ScoreSum) otherwise, so any other retriever's chunks are packed exactly
    /// as the seed specifies.
    #[default]
    Auto,
    /// The sum of the packed chunks' scores (the seed's knapsack problem).
    ScoreSum,
    /// The sum over packed chunks of [`rank_prior`]: the chunk ranked `r` (0 = best, counting
    /// chunks with a positive score only) is worth `1 / (r + 1)²`; a chunk scoring 0 or less keeps
    /// its score, so it is never worth packing.
    ///
    /// The value estimates the chance that the chunk holds the answer, which falls steeply with
    /// rank (on the evaluation's questions about half the answers are in the first chunk, a sixth
    /// in the second, a twentieth in the third). The values after the first sum to less than it
    /// (`π²/6 − 1 ≈ 0.64`), so the best chunk is always packed when it fits; what the optimiser
    /// may trade is a large chunk ranked `r` for several smaller ones ranked just after it, which
    /// is where it beats greedy's first fit. Cutting a passage into fragments does not raise its
    /// value: each fragment takes a rank, and later ranks are worth less.
    RankPrior,
}

/// A chunk's value under [`Objective::RankPrior`], from its rank among the chunks with a positive
/// score (0 = the best).
///
/// ```
/// use rag_packer::rank_prior;
///
/// assert_eq!(rank_prior(0), 1.0);
/// assert_eq!(rank_prior(1), 0.25);
/// // Every chunk after the best is worth less than the best alone.
/// assert!((1..10_000).map(rank_prior).sum::<f64>() < rank_prior(0));
/// ```
pub fn rank_prior(rank: usize) -> f64 {
    let place = rank as f64 + 1.0;
    1.0 / (place * place)
}

/// The items' scores replaced by their values under `objective`, for the strategies that maximise
/// a value; `items` are in rank order, and `sections` says whether they are sections of documents
/// (for [`Objective::Auto`]).
pub(crate) fn valued(objective: Objective, sections: bool, items: &[SelectionItem]) -> Vec<SelectionItem> {
    let rank_prior_wanted = match objective {
        Objective::RankPrior => true,
        Objective::Auto => sections,
        Objective::ScoreSum => false,
    };
    if !rank_prior_wanted {
        return items.to_vec();
    }
    let mut rank = 0;
    items
        .iter()
        .map(|item| {
            let score = if item.score > 0.0 {
                rank += 1;
                rank_prior(rank - 1)
            } else {
                item.score
            };
            SelectionItem { score, ..*item }
        })
        .collect()
}

/// What stage 6 chose: indices into the items, ascending, and the strategy that actually ran.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Selection {
    pub(crate) chosen: Vec<usize>,
    /// `optimal` falls back to `knapsack` when its table would be too large.
    pub(crate) strategy: SelectionStrategy,
    /// What the caller should be told, e.g. why a fallback happened.
    pub(crate) note: Option<String>,
}

/// Stage 6: runs `strategy` over `items` (in rank order) within `room` and the per-document cap.
pub(crate) fn select(
    strategy: SelectionStrategy,
    items: &[SelectionItem],
    room: usize,
    per_document: Option<usize>,
) -> Selection {
    let ran = |chosen, strategy| Selection {
        chosen,
        strategy,
        note: None,
    };
    match strategy {
        SelectionStrategy::Knapsack => ran(knapsack_select(items, room, per_document), strategy),
        SelectionStrategy::Optimal => match optimal_select(items, room, per_document) {
            Ok(chosen) => ran(chosen, strategy),
            Err(too_large) => Selection {
                chosen: knapsack_select(items, room, per_document),
                strategy: SelectionStrategy::Knapsack,
                note: Some(format!("optimal selection fell back to knapsack: {too_large}")),
            },
        },
        // Greedy, and any strategy added to the enum before it is implemented here.
        _ => ran(fit_to_budget(items, room, per_document), SelectionStrategy::Greedy),
    }
}

/// Counts chosen items per document to enforce the cap.
struct DocumentCounts {
    cap: Option<usize>,
    counts: HashMap<usize, usize>,
}

impl DocumentCounts {
    fn new(cap: Option<usize>) -> Self {
        Self {
            cap,
            counts: HashMap::new(),
        }
    }

    fn is_full(&self, document: usize) -> bool {
        self.cap
            .is_some_and(|cap| self.counts.get(&document).copied().unwrap_or(0) >= cap)
    }

    fn add(&mut self, document: usize) {
        *self.counts.entry(document).or_insert(0) += 1;
    }
}

/// Greedy selection, the seed pipeline's: in rank order, take each item that still fits (and whose
/// document is under the cap); an item that does not fit is skipped and smaller ones are still tried.
///
/// ```
/// use rag_packer::{SelectionItem, fit_to_budget};
///
/// let item = |tokens, score| SelectionItem { tokens, score, document: 0 };
/// // 60 fits, 50 no longer does, 30 still does.
/// let items = [item(60, 0.9), item(50, 0.8), item(30, 0.7)];
/// assert_eq!(fit_to_budget(&items, 100, None), [0, 2]);
/// assert_eq!(fit_to_budget(&items, 100, Some(1)), [0]);
/// ```
pub fn fit_to_budget(items: &[SelectionItem], room: usize, per_document: Option<usize>) -> Vec<usize> {
    greedy_pass(items, 0..items.len(), None, room, per_document).0
}

/// Takes `order`'s items that fit, after the optional `seed`; returns the chosen indices sorted
/// and their total score (summed in index order, so equal sets have bit-identical totals).
fn greedy_pass(
    items: &[SelectionItem],
    order: impl IntoIterator<Item = usize>,
    seed: Option<usize>,
    room: usize,
    per_document: Option<usize>,
) -> (Vec<usize>, f64) {
    let mut remaining = room;
    let mut counts = DocumentCounts::new(per_document);
    let mut chosen = Vec::new();
    let mut take = |i: usize, remaining: &mut usize, counts: &mut DocumentCounts| {
        let item = &items[i];
        if item.tokens <= *remaining && !counts.is_full(item.document) {
            *remaining -= item.tokens;
            counts.add(item.document);
            chosen.push(i);
        }
    };
    if let Some(seed) = seed {
        take(seed, &mut remaining, &mut counts);
    }
    for i in order {
        if Some(i) != seed {
            take(i, &mut remaining, &mut counts);
        }
    }
    chosen.sort_unstable();
    let total = total_score(items, &chosen);
    (chosen, total)
}

fn total_score(items: &[SelectionItem], chosen: &[usize]) -> f64 {
    chosen.iter().map(|&i| items[i].score).sum()
}

/// Knapsack selection: at least half the best possible total score, in `O(n log n)`.
///
/// Among items that fit alone and have a non-negative score (a negative score can only lower the
/// total), two greedy runs by score per token (ties: higher score, then position) are compared:
/// one from empty, one seeded with the best single item (highest score; ties: fewer tokens, then
/// position). The seeded set wins only if its total is strictly higher. Density greedy alone can be
/// arbitrarily bad (many small weak items crowding out one large strong one); the seeded run
/// repairs that, which guarantees half the optimum.
///
/// ```
/// use rag_packer::{SelectionItem, knapsack_select};
///
/// let item = |tokens, score| SelectionItem { tokens, score, document: 0 };
/// // Density greedy takes the small item (density 0.1) and then cannot fit the large one (0.09);
/// // the run seeded with the best single item scores 9.0 instead of 1.0.
/// let items = [item(100, 9.0), item(10, 1.0)];
/// assert_eq!(knapsack_select(&items, 100, None), [0]);
/// ```
pub fn knapsack_select(items: &[SelectionItem], room: usize, per_document: Option<usize>) -> Vec<usize> {
    let eligible: Vec<usize> = (0..items.len())
        .filter(|&i| items[i].tokens <= room && items[i].score >= 0.0)
        .collect();
    // The sort keys are computed once, not in every comparison; the position makes the order
    // total, so an unstable sort gives the same result as a stable one.
    let mut keyed: Vec<(f64, f64, usize)> = eligible
        .iter()
        .map(|&i| (items[i].score / items[i].tokens.max(1) as f64, items[i].score, i))
        .collect();
    keyed.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(b.1.total_cmp(&a.1)).then(a.2.cmp(&b.2)));
    let by_density: Vec<usize> = keyed.into_iter().map(|(_, _, i)| i).collect();
    let (plain, plain_total) = greedy_pass(items, by_density.iter().copied(), None, room, per_document);
    let best_single = eligible.iter().copied().min_by(|&a, &b| {
        items[b]
            .score
            .total_cmp(&items[a].score)
            .then(items[a].tokens.cmp(&items[b].tokens))
            .then(a.cmp(&b))
    });
    match best_single {
        Some(seed) => {
            let (seeded, seeded_total) = greedy_pass(items, by_density, Some(seed), room, per_document);
            if seeded_total > plain_total { seeded } else { plain }
        }
        None => plain,
    }
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
/// then falls back to [`knapsack_select`] and says so.
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

/// The positions of the items kept when at most `cap` items per key may pass, earliest first.
///
/// This is the cap as a plain filter over a sequence already chosen (e.g. to thin a retriever's
/// list before packing). The packer itself applies the cap inside selection instead, so that a
/// document's item left out for lack of room does not use up one of its places.
///
/// ```
/// use rag_packer::cap_per_document;
///
/// assert_eq!(cap_per_document(["a", "b", "a", "a", "b"], 2), [0, 1, 2, 4]);
/// ```
pub fn cap_per_document<K: Eq + Hash>(documents: impl IntoIterator<Item = K>, cap: usize) -> Vec<usize> {
    let mut counts: HashMap<K, usize> = HashMap::new();
    documents
        .into_iter()
        .enumerate()
        .filter_map(|(i, key)| {
            let count = counts.entry(key).or_insert(0);
            (*count < cap).then(|| {
                *count += 1;
                i
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn item(tokens: usize, score: f64) -> SelectionItem {
        SelectionItem {
            tokens,
            score,
            document: 0,
        }
    }

    fn tokens(items: &[SelectionItem], chosen: &[usize]) -> usize {
        chosen.iter().map(|&i| items[i].tokens).sum()
    }

    fn respects_cap(items: &[SelectionItem], chosen: &[usize], cap: Option<usize>) -> bool {
        let Some(cap) = cap else { return true };
        let mut counts = HashMap::new();
        chosen.iter().all(|&i| {
            let c = counts.entry(items[i].document).or_insert(0);
            *c += 1;
            *c <= cap
        })
    }

    /// Every subset: the reference for the optimum.
    fn brute_force(items: &[SelectionItem], room: usize, cap: Option<usize>) -> f64 {
        let mut best = 0.0f64;
        for mask in 0u32..(1 << items.len()) {
            let chosen: Vec<usize> = (0..items.len()).filter(|i| mask & (1 << i) != 0).collect();
            if tokens(items, &chosen) <= room && respects_cap(items, &chosen, cap) {
                best = best.max(total_score(items, &chosen));
            }
        }
        best
    }

    #[test]
    fn greedy_skips_what_no_longer_fits_and_keeps_trying() {
        let items = [item(50, 0.9), item(40, 0.8), item(30, 0.7), item(10, 0.1)];
        assert_eq!(fit_to_budget(&items, 100, None), [0, 1, 3]);
        assert_eq!(fit_to_budget(&items, 0, None), Vec::<usize>::new());
    }

    #[test]
    fn knapsack_beats_density_greedy_on_the_seed_trap() {
        // Many tiny weak items crowd out one large strong one under density greedy.
        let mut items = vec![item(100, 50.0)];
        items.extend((0..10).map(|_| item(10, 6.0)));
        let chosen = knapsack_select(&items, 100, None);
        assert_eq!(total_score(&items, &chosen), 60.0, "density greedy wins here: 10 x 6.0");
        let trap = [item(100, 50.0), item(1, 1.0)];
        assert_eq!(knapsack_select(&trap, 100, None), [0], "seeded run wins");
    }

    #[test]
    fn knapsack_ties_keep_the_plain_run() {
        // Same totals: the seeded set is not strictly better, so the density run is kept.
        let items = [item(10, 1.0), item(10, 1.0)];
        assert_eq!(knapsack_select(&items, 10, None), [0]);
        // Best single ties on score: fewer tokens first.
        let items = [item(10, 2.0), item(5, 2.0), item(5, 0.5)];
        assert_eq!(knapsack_select(&items, 10, None), [1, 2]);
    }

    #[test]
    fn negative_scores_are_never_taken_by_knapsack_or_optimal() {
        let items = [item(10, -1.0), item(10, 1.0)];
        assert_eq!(knapsack_select(&items, 100, None), [1]);
        assert_eq!(optimal_select(&items, 100, None).unwrap(), [1]);
        assert_eq!(
            fit_to_budget(&items, 100, None),
            [0, 1],
            "greedy is rank order, whatever the score"
        );
    }

    #[test]
    fn optimal_fills_with_zero_scores_and_respects_the_cap() {
        let mut items = [item(10, 0.0), item(60, 1.0), item(50, 0.9), item(50, 0.9)];
        assert_eq!(
            optimal_select(&items, 110, None).unwrap(),
            [1, 2],
            "1.9 beats 1.8; ties take the earlier"
        );
        assert_eq!(
            optimal_select(&items, 120, None).unwrap(),
            [0, 1, 2],
            "zero scores fill the rest"
        );
        assert_eq!(optimal_select(&items, 100, None).unwrap(), [2, 3]);
        items[0].document = 2;
        items[2].document = 1;
        items[3].document = 1;
        assert_eq!(optimal_select(&items, 100, Some(1)).unwrap(), [0, 1]);
    }

    #[test]
    fn optimal_refuses_tables_over_the_limit() {
        let items: Vec<SelectionItem> = (0..5000).map(|i| item(4000 + i, 1.0)).collect();
        let err = optimal_select(&items, 10_000, None).unwrap_err();
        assert_eq!(err.limit, OPTIMAL_CELL_LIMIT);
        assert!(
            err.to_string()
                .starts_with("exact selection needs 50005000 table cells"),
            "{err}"
        );
    }

    #[test]
    fn cap_per_document_keeps_the_first_per_key() {
        assert_eq!(cap_per_document([1, 1, 1], 1), [0]);
        assert_eq!(cap_per_document(Vec::<u8>::new(), 3), Vec::<usize>::new());
        assert_eq!(cap_per_document(["a", "b"], 0), Vec::<usize>::new());
    }

    fn items_strategy(max: usize) -> impl Strategy<Value = Vec<SelectionItem>> {
        prop::collection::vec(
            (1usize..40, -2i32..20, 0usize..3).prop_map(|(tokens, score, document)| SelectionItem {
                tokens,
                score: f64::from(score) / 4.0,
                document,
            }),
            0..max,
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        #[test]
        fn strategies_stay_within_room_and_cap(items in items_strategy(20), room in 0usize..120, cap in prop::option::of(1usize..3)) {
            for chosen in [
                fit_to_budget(&items, room, cap),
                knapsack_select(&items, room, cap),
                optimal_select(&items, room, cap).unwrap(),
            ] {
                prop_assert!(tokens(&items, &chosen) <= room);
                prop_assert!(respects_cap(&items, &chosen, cap));
                prop_assert!(chosen.windows(2).all(|w| w[0] < w[1]));
            }
        }

        #[test]
        fn knapsack_is_at_least_density_greedy_and_best_single(items in items_strategy(12), room in 0usize..120) {
            let total = total_score(&items, &knapsack_select(&items, room, None));
            let mut by_density: Vec<usize> = (0..items.len()).filter(|&i| items[i].score >= 0.0).collect();
            let density = |i: usize| items[i].score / items[i].tokens as f64;
            by_density.sort_by(|&a, &b| density(b).total_cmp(&density(a)).then(items[b].score.total_cmp(&items[a].score)).then(a.cmp(&b)));
            let density_total = greedy_pass(&items, by_density, None, room, None).1;
            let best_single = items.iter().filter(|i| i.tokens <= room).map(|i| i.score).fold(0.0, f64::max);
            prop_assert!(total >= density_total - 1e-9, "{total} < {density_total}");
            prop_assert!(total >= best_single - 1e-9);
            prop_assert!(2.0 * total >= brute_force(&items, room, None) - 1e-9, "half the optimum");
        }

        #[test]
        fn optimal_equals_brute_force_and_beats_knapsack(items in items_strategy(12), room in 0usize..120, cap in prop::option::of(1usize..3)) {
            let optimal = total_score(&items, &optimal_select(&items, room, cap).unwrap());
            prop_assert!((optimal - brute_force(&items, room, cap)).abs() < 1e-9);
            let knapsack = total_score(&items, &knapsack_select(&items, room, cap));
            prop_assert!(optimal >= knapsack - 1e-9);
        }
    }
}
