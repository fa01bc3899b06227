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

use rag_core::{Chunk, PackerError, SelectionStrategy, TokenCounter};

use crate::validate::chunk_tokens;

mod objective;
mod optimal;
#[cfg(test)]
mod tests;

pub use objective::{Objective, rank_prior};
pub(crate) use objective::{is_valued_by_rank, valued};
pub use optimal::{OPTIMAL_CELL_LIMIT, OptimalTooLarge, optimal_select};

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

/// Numbers documents in order of first appearance (0, 1, 2, ...): the
/// [`document`](SelectionItem::document) of a selection item, as the packer numbers its candidates
/// for the per-document cap.
///
/// ```
/// use rag_packer::document_numbers;
///
/// assert_eq!(document_numbers(["b", "a", "b", "c"]), [0, 1, 0, 2]);
/// ```
pub fn document_numbers<'a>(documents: impl IntoIterator<Item = &'a str>) -> Vec<usize> {
    let mut numbers: HashMap<&'a str, usize> = HashMap::new();
    documents
        .into_iter()
        .map(|document| {
            let next = numbers.len();
            *numbers.entry(document).or_insert(next)
        })
        .collect()
}

/// The selection items of `chunks`, in their order: tokens as the packer takes them
/// ([`chunk_tokens`]: the cached count, else `counter` on the content), the score (a missing one
/// is 0.0), and the documents numbered by [`document_numbers`]. For callers of the selection
/// primitives who hold chunks, not items.
///
/// ```
/// use rag_core::Chunk;
/// use rag_packer::{fit_to_budget, selection_items};
/// use rag_tokens::TiktokenCounter;
///
/// let mut a = Chunk::with_content("a", "guide", "acme", "alpha");
/// a.token_count = Some(6);
/// let mut b = Chunk::with_content("b", "faq", "acme", "beta");
/// b.token_count = Some(4);
/// let items = selection_items(&[a, b], &TiktokenCounter::cl100k())?;
/// assert_eq!((items[1].tokens, items[1].document), (4, 1));
/// assert_eq!(fit_to_budget(&items, 5, None), [1]);
/// # Ok::<(), rag_core::PackerError>(())
/// ```
pub fn selection_items(chunks: &[Chunk], counter: &dyn TokenCounter) -> Result<Vec<SelectionItem>, PackerError> {
    let documents = document_numbers(chunks.iter().map(|chunk| chunk.document_id.as_str()));
    chunks
        .iter()
        .zip(documents)
        .map(|(chunk, document)| {
            Ok(SelectionItem {
                tokens: chunk_tokens(chunk, counter)?,
                score: chunk.score_or_zero(),
                document,
            })
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
/// `by_rank` says that the items' values fall with their rank ([`Objective::RankPrior`]).
pub(crate) fn select(
    strategy: SelectionStrategy,
    items: &[SelectionItem],
    room: usize,
    per_document: Option<usize>,
    by_rank: bool,
) -> Selection {
    let ran = |chosen, strategy| Selection {
        chosen,
        strategy,
        note: None,
    };
    let knapsack = || {
        if by_rank {
            knapsack_or_first_fit(items, room, per_document)
        } else {
            knapsack_select(items, room, per_document)
        }
    };
    match strategy {
        SelectionStrategy::Knapsack => ran(knapsack(), strategy),
        SelectionStrategy::Optimal => match optimal_select(items, room, per_document) {
            Ok(chosen) => ran(chosen, strategy),
            Err(too_large) => Selection {
                chosen: knapsack(),
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

/// Greedy selection, the pipeline's default: in rank order, take each item that still fits (and whose
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

/// Knapsack for values that fall with rank: [`knapsack_select`]'s set, or the first fit in rank
/// order ([`fit_to_budget`]'s pass, leaving out the items of negative value, which knapsack
/// never takes) when that is worth more.
///
/// Both of knapsack's runs go by value per token, which under a rank prior favours short chunks
/// ranked a little lower over a long one ranked higher; when the long one holds the answer (on
/// the Node.js evaluation the answer's chunk is long more often than its rank predicts), the
/// density runs lose it even where taking chunks in rank order was worth more. Comparing with
/// that order as well costs one pass, keeps the half-optimum guarantee, and means knapsack's
/// choice is never worth less than greedy's.
fn knapsack_or_first_fit(items: &[SelectionItem], room: usize, per_document: Option<usize>) -> Vec<usize> {
    let knapsack = knapsack_select(items, room, per_document);
    let non_negative = (0..items.len()).filter(|&i| items[i].score >= 0.0);
    let (first_fit, first_fit_total) = greedy_pass(items, non_negative, None, room, per_document);
    if first_fit_total > total_score(items, &knapsack) {
        first_fit
    } else {
        knapsack
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
