//! What a packer returns: the chunks that made it into the prompt, and why the others did not.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::{Chunk, ChunkId, DocumentId, Span};

/// The order packed chunks are arranged in (pinned chunks always come first).
///
/// A built-in order is named by its snake_case name in JSON and in the CLI; a custom one carries
/// its implementation, so a configuration cannot name a custom order without one. Two orders are
/// equal when their names are: a custom order by its [`Order::name`].
#[derive(Clone, Default)]
#[non_exhaustive]
pub enum PackOrder {
    /// Best chunks at both ends, weakest in the middle (Liu et al., "Lost in the Middle").
    #[default]
    LostInMiddle,
    /// Rank order: best first.
    Descending,
    /// Reverse rank order: best last, next to the user turn.
    Ascending,
    /// The order the chunks were given in.
    Input,
    /// The input order reversed.
    Reverse,
    /// The long-context reorder LangChain users know, applied to the rank order.
    Sides,
    /// An order the caller plugged in; the packer's notes name it. Not in [`PackOrder::ALL`]:
    /// it is not a name but an implementation. In JSON it is `"custom"`, which reads back as an
    /// error, since a name alone cannot run.
    Custom(Arc<dyn Order>),
}

/// An order of your own for the packed chunks: [`PackOrder::Custom`] holds one.
///
/// The packer hands it the selected chunks best first (score descending, ties by id) and takes
/// back the new order as a permutation of their indices; pinned chunks stay first and are not
/// passed. A result that is not a permutation is a [`PackerError::CustomOrder`](crate::PackerError::CustomOrder).
///
/// ```
/// use rag_core::{Chunk, Order};
///
/// /// Shortest first: small facts before long passages.
/// struct ShortestFirst;
///
/// impl Order for ShortestFirst {
///     fn name(&self) -> &str {
///         "shortest_first"
///     }
///
///     fn arrange(&self, ranked: &[&Chunk]) -> Vec<usize> {
///         let mut order: Vec<usize> = (0..ranked.len()).collect();
///         order.sort_by_key(|&i| ranked[i].content().map_or(0, str::len));
///         order
///     }
/// }
///
/// let long = Chunk::with_content("a", "d", "t", "a longer passage of text");
/// let short = Chunk::with_content("b", "d", "t", "short");
/// assert_eq!(ShortestFirst.arrange(&[&long, &short]), [1, 0]);
/// ```
pub trait Order: Send + Sync {
    /// The order's name, reported in the packer's notes.
    fn name(&self) -> &str;

    /// The new order of `ranked` (best first): a permutation of `0..ranked.len()`.
    fn arrange(&self, ranked: &[&Chunk]) -> Vec<usize>;
}

impl PackOrder {
    /// Every built-in order, for CLIs and exhaustive tests.
    pub const ALL: [Self; 6] = [
        Self::LostInMiddle,
        Self::Descending,
        Self::Ascending,
        Self::Input,
        Self::Reverse,
        Self::Sides,
    ];

    /// The snake_case name used in JSON and in the CLI (`custom` for every custom order).
    pub const fn as_str(&self) -> &'static str {
        match self {
            Self::LostInMiddle => "lost_in_middle",
            Self::Descending => "descending",
            Self::Ascending => "ascending",
            Self::Input => "input",
            Self::Reverse => "reverse",
            Self::Sides => "sides",
            Self::Custom(_) => "custom",
        }
    }

    /// The name that tells orders apart: the built-in name, or a custom order's own name.
    fn identity(&self) -> &str {
        match self {
            Self::Custom(order) => order.name(),
            built_in => built_in.as_str(),
        }
    }
}

impl fmt::Debug for PackOrder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::LostInMiddle => f.write_str("LostInMiddle"),
            Self::Descending => f.write_str("Descending"),
            Self::Ascending => f.write_str("Ascending"),
            Self::Input => f.write_str("Input"),
            Self::Reverse => f.write_str("Reverse"),
            Self::Sides => f.write_str("Sides"),
            Self::Custom(order) => f.debug_tuple("Custom").field(&order.name()).finish(),
        }
    }
}

impl PartialEq for PackOrder {
    fn eq(&self, other: &Self) -> bool {
        matches!(self, Self::Custom(_)) == matches!(other, Self::Custom(_)) && self.identity() == other.identity()
    }
}

impl Eq for PackOrder {}

impl Hash for PackOrder {
    fn hash<H: Hasher>(&self, state: &mut H) {
        matches!(self, Self::Custom(_)).hash(state);
        self.identity().hash(state);
    }
}

impl Serialize for PackOrder {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for PackOrder {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        if let Some(order) = Self::ALL.into_iter().find(|order| order.as_str() == name) {
            return Ok(order);
        }
        let names: Vec<&str> = Self::ALL.iter().map(Self::as_str).collect();
        let problem = if name == "custom" {
            "a custom order cannot be read back: JSON names it, the implementation is not in it".to_owned()
        } else {
            format!("unknown order {name:?}")
        };
        Err(D::Error::custom(format!(
            "{problem}; expected one of {}",
            names.join(", ")
        )))
    }
}
/// How candidates are chosen to fill the token budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum SelectionStrategy {
    /// Rank order; skip a chunk that no longer fits and keep trying smaller ones.
    #[default]
    Greedy,
    /// Score-per-token greedy, compared with a run that starts with the best single chunk: at least
    /// half the optimum.
    Knapsack,
    /// The exact 0/1 knapsack optimum, within a documented size limit.
    Optimal,
}

impl SelectionStrategy {
    /// Every strategy, for CLIs and exhaustive tests.
    pub const ALL: [Self; 3] = [Self::Greedy, Self::Knapsack, Self::Optimal];

    /// The snake_case name used in JSON and in the CLI.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Greedy => "greedy",
            Self::Knapsack => "knapsack",
            Self::Optimal => "optimal",
        }
    }
}

/// Writes `Display` as the enum's snake_case name, the one it has in JSON and in the CLI.
macro_rules! display_as_name {
    ($($name:ty),+) => {
        $(
            impl fmt::Display for $name {
                fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str(self.as_str())
                }
            }
        )+
    };
}

display_as_name!(PackOrder, SelectionStrategy);

/// The kind of disagreement the packer noticed between packed chunks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ConflictKind {
    /// Chunks of different trust levels make conflicting or near-identical claims.
    TrustMismatch,
    /// Chunks give different numbers for the same quantity.
    NumericDisagreement,
}

impl ConflictKind {
    /// The snake_case name used in JSON and in the CLI.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::TrustMismatch => "trust_mismatch",
            Self::NumericDisagreement => "numeric_disagreement",
        }
    }
}

/// An advisory note that some packed chunks disagree; the packer reports, the caller decides.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConflictAnnotation {
    /// What kind of disagreement.
    pub kind: ConflictKind,
    /// The chunks involved, in packed order.
    pub chunk_ids: Vec<ChunkId>,
    /// A sentence a person can read, e.g. `"refund window": 30 days vs 14 days`.
    pub detail: String,
}

/// Why an input chunk was not packed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
#[non_exhaustive]
pub enum DropReason {
    /// Its normalised text equals that of a pinned or better-ranked kept chunk.
    ExactDuplicate {
        /// The chunk that was kept.
        of: ChunkId,
    },
    /// Its shingle Jaccard similarity with a pinned or better-ranked kept chunk reached the threshold.
    NearDuplicate {
        /// The chunk that was kept.
        of: ChunkId,
        /// The Jaccard similarity, in 0..=1.
        similarity: f64,
    },
    /// The selection strategy left it out: it did not fit in the room left, or better chunks used it.
    OverBudget {
        /// The chunk's tokens.
        tokens: usize,
    },
    /// Its score is negative, so packing it could only lower the total score the strategy
    /// maximises (`knapsack`, `optimal`); it would have fitted in the room left.
    NegativeScore {
        /// The chunk's score.
        score: f64,
    },
    /// A heading alone, left out because chunks of its section were candidates: a heading is
    /// context for its section, not an answer, and the packed body chunks show it as their
    /// breadcrumb.
    HeadingOnly {
        /// The first packed chunk of its section, which shows the heading; `None` if none of the
        /// section's chunks made it into the pack.
        shown_by: Option<ChunkId>,
    },
    /// Its score is not above the relevance floor (e.g. BM25 found no query term in it), so it
    /// would only be filler.
    NotRelevant {
        /// The chunk's score.
        score: f64,
        /// The floor it had to exceed.
        floor: f64,
    },
    /// It did not fit whole, so its best part for the query was packed instead, as the chunk
    /// `part`, whose `metadata.cut_from` names this chunk and the byte range of its content.
    CutToFit {
        /// The chunk's tokens.
        tokens: usize,
        /// The packed chunk that holds its best part.
        part: ChunkId,
    },
    /// Its document already had the maximum number of packed chunks.
    OverDocumentCap {
        /// The document.
        document_id: DocumentId,
        /// The cap that was reached.
        cap: usize,
    },
}

impl DropReason {
    /// Whether the chunk was dropped as an exact or near duplicate.
    pub const fn is_duplicate(&self) -> bool {
        matches!(self, Self::ExactDuplicate { .. } | Self::NearDuplicate { .. })
    }
}

impl DropReason {
    /// Whether the chunk was left out for lack of room: over the budget or the per-document cap.
    pub const fn is_lack_of_room(&self) -> bool {
        matches!(
            self,
            Self::OverBudget { .. } | Self::OverDocumentCap { .. } | Self::CutToFit { .. }
        )
    }
}

impl fmt::Display for DropReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ExactDuplicate { of } => write!(f, "exact duplicate of {of}"),
            Self::NearDuplicate { of, similarity } => {
                write!(f, "near duplicate of {of} (jaccard {similarity:.3})")
            }
            Self::OverBudget { tokens } => write!(f, "over budget ({tokens} tokens did not fit)"),
            Self::NegativeScore { score } => {
                write!(
                    f,
                    "negative score ({score}) would lower the total; it fitted but was left out"
                )
            }
            Self::HeadingOnly { shown_by: Some(by) } => write!(f, "heading only: shown as the breadcrumb of {by}"),
            Self::HeadingOnly { shown_by: None } => {
                write!(f, "heading only: its section's chunks were candidates, none was packed")
            }
            Self::NotRelevant { score, floor } => {
                write!(f, "not relevant: score {score} is not above the floor {floor}")
            }
            Self::OverDocumentCap { document_id, cap } => {
                write!(f, "over the cap of {cap} chunks for document {document_id}")
            }
            Self::CutToFit { tokens, part } => {
                write!(
                    f,
                    "cut to fit ({tokens} tokens did not fit): its best part is packed as {part}"
                )
            }
        }
    }
}

/// How the chunks a packer ranked got their scores, when the packer was given the query they were
/// retrieved for ([`PackedContext::scoring`]). Only the chunks the principal may see count: the
/// rule, the BM25 statistics and the numbers here come from them alone.
///
/// Its `Display` is the sentence `ragctl pack` prints on its `scoring` line.
///
/// ```
/// use rag_core::Scoring;
///
/// let scoring = Scoring::Bm25 { chunks: 3, terms: vec!["dedup".into(), "drop".into()] };
/// assert_eq!(
///     scoring.to_string(),
///     "bm25 against the query over heading path and text of 3 chunks (terms: dedup, drop); \
///      chunks without a query term are not packed"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "rule", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Scoring {
    /// Every chunk carried a score (or there was none): the scores were used as given.
    Given,
    /// Some chunks carried a score and `unscored` of the `chunks` did not: the given scores stand
    /// and a missing one counts as 0.0, as without a query. Given scores and BM25 scores are on
    /// different scales, so they are never mixed.
    PartlyGiven {
        /// The chunks without a score.
        unscored: usize,
        /// All the chunks.
        chunks: usize,
    },
    /// No chunk carried a score: the packer scored the `chunks` with BM25 against the query, over
    /// heading path and text, by the query's distinct search `terms` (sorted), and a chunk that
    /// holds none of them is not packed (a relevance floor of 0).
    Bm25 {
        /// The chunks scored.
        chunks: usize,
        /// The query's distinct search terms, sorted; empty when the query has none (it is empty
        /// or only stop words), and then no chunk is relevant.
        terms: Vec<String>,
    },
    /// No chunk carried a score and the packer had an embedder: each chunk's score fuses its BM25
    /// score with the cosine of its vector and the query's, by `fusion` (the parts of each packed
    /// chunk are in [`PackedContext::score_parts`]). No relevance floor applies: a chunk that
    /// shares no word with the query may still be close to it in meaning.
    Hybrid {
        /// The chunks scored.
        chunks: usize,
        /// The query's distinct search terms, sorted, as for [`Scoring::Bm25`].
        terms: Vec<String>,
        /// The embedder's id: every vector compared was made by it.
        model: String,
        /// How the two scores were fused.
        fusion: Fusion,
        /// How many chunks arrived without a vector and were embedded by the packer.
        embedded: usize,
    },
}

/// How BM25 and cosine scores are fused into one ([`Scoring::Hybrid`]).
///
/// ```
/// use rag_core::Fusion;
///
/// assert_eq!(Fusion::Convex { bm25_weight: 0.7 }.to_string(), "0.7 x bm25 + 0.3 x cosine, each min-max normalised over the chunks");
/// assert_eq!(Fusion::ReciprocalRank { k: 60 }.to_string(), "reciprocal-rank fusion (k = 60) of the bm25 and cosine rankings");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Fusion {
    /// `w x bm25' + (1 - w) x cosine'`, where each score is min-max normalised over the chunks
    /// scored for the query (the lowest 0, the highest 1; all 0 when they are equal).
    Convex {
        /// The weight `w` of BM25, in `0..=1`; 1 is BM25 alone, 0 the cosine alone.
        bm25_weight: f64,
    },
    /// `1 / (k + rank by bm25) + 1 / (k + rank by cosine)`, ranks from 1 (ties broken by input
    /// order, as the packer breaks them by id later).
    ReciprocalRank {
        /// The constant `k` damping the top ranks (60 in the literature).
        k: u32,
    },
}

impl fmt::Display for Fusion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Convex { bm25_weight } => {
                // Rounded to the thousandth, so 1 - 0.7 does not print as 0.30000000000000004.
                let cosine = ((1.0 - bm25_weight) * 1000.0).round() / 1000.0;
                write!(
                    f,
                    "{bm25_weight} x bm25 + {cosine} x cosine, each min-max normalised over the chunks"
                )
            }
            Self::ReciprocalRank { k } => {
                write!(f, "reciprocal-rank fusion (k = {k}) of the bm25 and cosine rankings")
            }
        }
    }
}

/// The two scores a chunk's hybrid score was fused from ([`PackedContext::score_parts`]): its BM25
/// score (scaled so the best chunk scores 1, as [`Scoring::Bm25`] scores are) and the cosine of its
/// vector and the query's, before normalisation.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ScoreParts {
    /// The BM25 score.
    pub bm25: f64,
    /// The cosine similarity, in `-1..=1`.
    pub cosine: f64,
}

impl fmt::Display for Scoring {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Given => f.write_str("given (every chunk had a score)"),
            Self::PartlyGiven { unscored, chunks } => write!(
                f,
                "given; the {unscored} of {chunks} chunks without a score count as 0.0 (given and bm25 scores are \
                 never mixed)"
            ),
            Self::Bm25 { chunks, terms } => write!(
                f,
                "bm25 against the query over heading path and text of {chunks} chunks (terms: {}); chunks without \
                 a query term are not packed",
                terms.join(", ")
            ),
            Self::Hybrid {
                chunks,
                terms,
                model,
                fusion,
                embedded,
            } => write!(
                f,
                "hybrid: {fusion}; bm25 over heading path and text of {chunks} chunks (terms: {}), cosine of \
                 {model} vectors ({embedded} embedded at pack time)",
                terms.join(", ")
            ),
        }
    }
}

/// An input chunk that was not packed, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DroppedChunk {
    /// The chunk.
    pub id: ChunkId,
    /// Why it was left out.
    #[serde(flatten)]
    pub reason: DropReason,
}

/// The result of packing: chunks in their final prompt order, and an account of every other input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PackedContext {
    /// Packed chunks in final order: pinned chunks first, then the selection in `order`.
    pub chunks: Vec<Chunk>,
    /// Tokens of the packed chunks.
    pub tokens_used: usize,
    /// The budget the packer was given.
    pub tokens_budget: usize,
    /// The tokenizer counts are in, e.g. `tiktoken:cl100k_base`.
    pub tokenizer: String,
    /// The order applied.
    pub order: PackOrder,
    /// The selection strategy actually applied (`optimal` may fall back to `knapsack`).
    pub strategy: SelectionStrategy,
    /// Disagreements noticed among the packed chunks.
    pub conflicts: Vec<ConflictAnnotation>,
    /// Every input chunk that was not packed, in rank order.
    pub dropped: Vec<DroppedChunk>,
    /// Remarks about the run a caller should know, e.g. a strategy fallback.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// How many input chunks the request's principal may not see (it lacks one of their
    /// `acl_labels`): they were left out first and are named nowhere, not even in `dropped`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub hidden_by_acl: usize,
    /// The rendered prompt context, when the packer rendered one; `tokens_used` is then its exact
    /// token count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// How the context shows the packed chunks after the pinned ones, in order: each excerpt is a
    /// run of chunks of one document whose spans overlap or touch, printed once. Empty when no
    /// context was rendered.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub excerpts: Vec<Excerpt>,
    /// How the chunks were scored, when the packer was given the query (`None` otherwise: the
    /// scores were taken as given, a missing one as 0.0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scoring: Option<Scoring>,
    /// The score each packed chunk was ranked by, parallel to `chunks`: its own score, or its
    /// section heading's when the packer lifted that to it (section-aware packing), which can
    /// differ from `Chunk::score`. A pinned chunk, which is not ranked, has its own score (0.0
    /// when it has none). Empty when the packer did not report them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub effective_scores: Vec<f64>,
    /// How each packed chunk's score was fused, parallel to `chunks`, when the packer scored them
    /// with [`Scoring::Hybrid`] (`None` for a part cut to fit, whose whole chunk's parts apply).
    /// Empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub score_parts: Vec<Option<ScoreParts>>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// A piece of the rendered context: packed chunks of one document shown as one text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Excerpt {
    /// The chunks it shows, in document order.
    pub chunk_ids: Vec<ChunkId>,
    /// Their document.
    pub document_id: DocumentId,
    /// The byte range of the document it covers, when its chunks have spans.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span: Option<Span>,
    /// The titles of the headings enclosing its first chunk, outermost first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub heading_path: Vec<String>,
    /// Whether a breadcrumb line (the heading path) precedes it in the context.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub breadcrumb: bool,
}

impl Excerpt {
    /// An excerpt of `chunk_ids` (document order) of `document_id`.
    pub fn new(chunk_ids: Vec<ChunkId>, document_id: DocumentId) -> Self {
        Self {
            chunk_ids,
            document_id,
            span: None,
            heading_path: Vec::new(),
            breadcrumb: false,
        }
    }
}

impl PackedContext {
    /// A result holding `chunks`, with no conflicts, drops or notes yet; a packer fills those in.
    ///
    /// ```
    /// use rag_core::{Chunk, PackOrder, PackedContext, SelectionStrategy};
    ///
    /// let chunks = vec![Chunk::with_content("a", "d", "t", "The refund window is 30 days.")];
    /// let mut packed = PackedContext::new(chunks, 8, 100, "tiktoken:cl100k_base", PackOrder::Descending, SelectionStrategy::Greedy);
    /// packed.notes.push("packed by hand".into());
    /// assert_eq!((packed.tokens_used, packed.dropped.len()), (8, 0));
    /// ```
    pub fn new(
        chunks: Vec<Chunk>,
        tokens_used: usize,
        tokens_budget: usize,
        tokenizer: impl Into<String>,
        order: PackOrder,
        strategy: SelectionStrategy,
    ) -> Self {
        Self {
            chunks,
            tokens_used,
            tokens_budget,
            tokenizer: tokenizer.into(),
            order,
            strategy,
            conflicts: Vec::new(),
            dropped: Vec::new(),
            notes: Vec::new(),
            hidden_by_acl: 0,
            context: None,
            excerpts: Vec::new(),
            scoring: None,
            effective_scores: Vec::new(),
            score_parts: Vec::new(),
        }
    }

    /// How many chunks were dropped as exact or near duplicates.
    pub fn dropped_dedup(&self) -> usize {
        self.dropped.iter().filter(|d| d.reason.is_duplicate()).count()
    }

    /// How many chunks were dropped for lack of room (budget or per-document cap).
    pub fn dropped_budget(&self) -> usize {
        self.dropped.iter().filter(|d| d.reason.is_lack_of_room()).count()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn sample() -> PackedContext {
        PackedContext {
            chunks: vec![Chunk::with_content("a", "d", "t", "The refund window is 30 days.")],
            tokens_used: 8,
            tokens_budget: 100,
            tokenizer: "tiktoken:cl100k_base".into(),
            order: PackOrder::LostInMiddle,
            strategy: SelectionStrategy::Knapsack,
            conflicts: vec![ConflictAnnotation {
                kind: ConflictKind::NumericDisagreement,
                chunk_ids: vec!["a".into(), "b".into()],
                detail: "\"refund window is\": 30 days vs 14 days".into(),
            }],
            dropped: vec![
                DroppedChunk {
                    id: "b".into(),
                    reason: DropReason::ExactDuplicate { of: "a".into() },
                },
                DroppedChunk {
                    id: "c".into(),
                    reason: DropReason::NearDuplicate {
                        of: "a".into(),
                        similarity: 0.9,
                    },
                },
                DroppedChunk {
                    id: "e".into(),
                    reason: DropReason::OverBudget { tokens: 120 },
                },
                DroppedChunk {
                    id: "g".into(),
                    reason: DropReason::CutToFit {
                        tokens: 130,
                        part: "g#cut".into(),
                    },
                },
                DroppedChunk {
                    id: "f".into(),
                    reason: DropReason::OverDocumentCap {
                        document_id: "d".into(),
                        cap: 1,
                    },
                },
            ],
            notes: vec!["optimal fell back to knapsack".into()],
            hidden_by_acl: 0,
            context: None,
            excerpts: Vec::new(),
            scoring: Some(Scoring::PartlyGiven { unscored: 1, chunks: 5 }),
            effective_scores: vec![0.75],
            score_parts: vec![Some(ScoreParts { bm25: 1.0, cosine: 0.5 })],
        }
    }

    #[test]
    fn packed_context_round_trips() {
        let packed = sample();
        let json = serde_json::to_value(&packed).unwrap();
        assert_eq!(json["order"], "lost_in_middle");
        assert_eq!(json["strategy"], "knapsack");
        assert_eq!(json["conflicts"][0]["kind"], "numeric_disagreement");
        assert_eq!(
            json["dropped"][0],
            json!({"id": "b", "reason": "exact_duplicate", "of": "a"})
        );
        assert_eq!(
            json["dropped"][1],
            json!({"id": "c", "reason": "near_duplicate", "of": "a", "similarity": 0.9})
        );
        assert_eq!(
            json["dropped"][2],
            json!({"id": "e", "reason": "over_budget", "tokens": 120})
        );
        assert_eq!(
            json["dropped"][3],
            json!({"id": "g", "reason": "cut_to_fit", "tokens": 130, "part": "g#cut"})
        );
        assert_eq!(
            json["dropped"][4],
            json!({"id": "f", "reason": "over_document_cap", "document_id": "d", "cap": 1})
        );
        assert_eq!(
            json["scoring"],
            json!({"rule": "partly_given", "unscored": 1, "chunks": 5})
        );
        assert_eq!(json["effective_scores"], json!([0.75]));
        assert_eq!(json["score_parts"], json!([{"bm25": 1.0, "cosine": 0.5}]));
        let back: PackedContext = serde_json::from_value(json).unwrap();
        assert_eq!(back, packed);
        assert_eq!((back.dropped_dedup(), back.dropped_budget()), (2, 3));
    }

    #[test]
    fn drop_reasons_read_as_sentences() {
        let reasons: Vec<String> = sample().dropped.iter().map(|d| d.reason.to_string()).collect();
        assert_eq!(
            reasons,
            [
                "exact duplicate of a",
                "near duplicate of a (jaccard 0.900)",
                "over budget (120 tokens did not fit)",
                "cut to fit (130 tokens did not fit): its best part is packed as g#cut",
                "over the cap of 1 chunks for document d",
            ]
        );
    }

    #[test]
    fn orders_and_strategies_use_snake_case_names() {
        for order in PackOrder::ALL {
            assert_eq!(serde_json::to_string(&order).unwrap(), format!("\"{order}\""));
        }
        for strategy in SelectionStrategy::ALL {
            let json = serde_json::to_string(&strategy).unwrap();
            assert_eq!(serde_json::from_str::<SelectionStrategy>(&json).unwrap(), strategy);
        }
        assert_eq!(ConflictKind::TrustMismatch.as_str(), "trust_mismatch");
    }

    struct Named(&'static str);

    impl Order for Named {
        fn name(&self) -> &str {
            self.0
        }

        fn arrange(&self, ranked: &[&Chunk]) -> Vec<usize> {
            (0..ranked.len()).collect()
        }
    }

    #[test]
    fn built_in_orders_read_back_from_their_names() {
        for order in PackOrder::ALL {
            let json = serde_json::to_string(&order).unwrap();
            assert_eq!(serde_json::from_str::<PackOrder>(&json).unwrap(), order);
        }
        let unknown = serde_json::from_str::<PackOrder>("\"shuffled\"").unwrap_err();
        assert!(
            unknown
                .to_string()
                .starts_with("unknown order \"shuffled\"; expected one of lost_in_middle, descending"),
            "{unknown}"
        );
    }

    #[test]
    fn a_custom_order_is_named_custom_in_json_and_does_not_read_back() {
        let custom = PackOrder::Custom(Arc::new(Named("shortest_first")));
        assert_eq!(serde_json::to_string(&custom).unwrap(), "\"custom\"");
        assert_eq!(custom.to_string(), "custom");
        assert_eq!(format!("{custom:?}"), "Custom(\"shortest_first\")");
        let back = serde_json::from_str::<PackOrder>("\"custom\"").unwrap_err();
        assert!(
            back.to_string().starts_with("a custom order cannot be read back"),
            "{back}"
        );
    }

    #[test]
    fn custom_orders_are_equal_by_their_name_and_never_equal_a_built_in_one() {
        let custom = |name| PackOrder::Custom(Arc::new(Named(name)));
        assert_eq!(custom("a"), custom("a"));
        assert_ne!(custom("a"), custom("b"));
        assert_ne!(custom("descending"), PackOrder::Descending);
        assert!(!PackOrder::ALL.contains(&custom("custom")));
    }
}
