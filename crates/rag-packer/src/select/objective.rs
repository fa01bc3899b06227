//! What `knapsack` and `optimal` maximise: the value of a candidate.

use super::SelectionItem;

/// What `knapsack` and `optimal` maximise (`greedy` takes the rank order and maximises nothing).
///
/// The plain knapsack objective, the sum of the packed chunks' scores, rewards splitting: ten fragments
/// scoring 0.5 beat the one passage scoring 0.9 that answers the question, so a budget fills with
/// headings and list items. [`RankPrior`](Self::RankPrior) values a chunk by how likely it is to
/// hold the answer given its rank instead, which no splitting can inflate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Objective {
    /// [`RankPrior`](Self::RankPrior) when the candidates are sections of documents (they carry
    /// the heading-aware chunker's metadata and section-aware packing is on),
    /// [`ScoreSum`](Self::ScoreSum) otherwise, so any other retriever's chunks are packed by the
    /// sum of their scores, as the contract suite's knapsack oracles expect.
    #[default]
    Auto,
    /// The sum of the packed chunks' scores (the plain 0/1 knapsack problem).
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
    /// value: each fragment takes a rank, and later ranks are worth less. Under this objective the
    /// packer's `knapsack` also compares greedy's first fit and keeps it when it is worth more.
    RankPrior,
}

impl Objective {
    /// Every objective, for CLIs, bindings and exhaustive tests.
    pub const ALL: [Self; 3] = [Self::Auto, Self::ScoreSum, Self::RankPrior];

    /// The snake_case name bindings use (`auto`, `score_sum`, `rank_prior`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::ScoreSum => "score_sum",
            Self::RankPrior => "rank_prior",
        }
    }
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

/// Whether `objective` values candidates by rank ([`Objective::RankPrior`], or
/// [`Objective::Auto`] for sections of documents).
pub(crate) fn is_valued_by_rank(objective: Objective, sections: bool) -> bool {
    match objective {
        Objective::RankPrior => true,
        Objective::Auto => sections,
        Objective::ScoreSum => false,
    }
}

/// The items' scores replaced by their values under `objective`, for the strategies that maximise
/// a value; `items` are in rank order, and `sections` says whether they are sections of documents
/// (for [`Objective::Auto`]).
pub(crate) fn valued(objective: Objective, sections: bool, items: &[SelectionItem]) -> Vec<SelectionItem> {
    if !is_valued_by_rank(objective, sections) {
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
