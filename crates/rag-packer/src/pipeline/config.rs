//! [`PackerConfig`]: every setting of the pipeline, checked once when a packer is built.

use std::fmt;
use std::sync::Arc;

use rag_core::{Embedder, Fusion, Order, PackOrder, PackerError, SelectionStrategy, TokenCounter};
use rag_tokens::TiktokenCounter;

use crate::dedup::check_near_config;
use crate::select::Objective;
use crate::setters::setters;

/// How a [`ContextPacker`](crate::ContextPacker) packs: a configuration that was checked when it
/// was built, so a packer never meets an invalid one.
///
/// [`PackerConfig::default`] is the reference design's configuration; [`PackerConfig::builder`] starts from it,
/// the `with_*` methods of [`PackerConfigBuilder`] change what you need, and
/// [`build`](PackerConfigBuilder::build) checks the whole (settings that depend on each other, such
/// as the near-dedup threshold and the shingle size, are checked together, whatever the order of
/// the calls). The settings are read through the methods named after them.
///
/// ```
/// use rag_core::{PackOrder, SelectionStrategy};
/// use rag_packer::PackerConfig;
///
/// let config = PackerConfig::builder()
///     .with_order(PackOrder::Ascending)
///     .with_strategy(SelectionStrategy::Knapsack)
///     .with_jaccard_threshold(Some(0.85))
///     .build()?;
/// assert_eq!(config.order(), &PackOrder::Ascending);
/// let too_short = PackerConfig::builder().with_shingle_size(0).build();
/// assert_eq!(too_short.unwrap_err().to_string(), "invalid packer configuration: shingle size must be at least 1");
/// # Ok::<(), rag_core::PackerError>(())
/// ```
#[derive(Clone)]
pub struct PackerConfig {
    /// The order of the packed chunks after the pinned ones.
    pub(crate) order: PackOrder,
    /// How candidates are chosen to fill the budget.
    pub(crate) strategy: SelectionStrategy,
    /// What `knapsack` and `optimal` maximise (default [`Objective::Auto`]).
    pub(crate) objective: Objective,
    /// Near-duplicate dedup: drop a candidate whose shingle Jaccard similarity with a pinned or
    /// kept chunk reaches this, in `(0, 1]`. `None` turns near dedup off (exact dedup always runs).
    pub(crate) jaccard_threshold: Option<f64>,
    /// Words per shingle for near dedup, at least 1.
    pub(crate) shingle_size: usize,
    /// Whether to annotate conflicts among the packed chunks.
    pub(crate) detect_conflicts: bool,
    /// At most this many packed chunks per document (pinned chunks do not count), at least 1.
    pub(crate) max_per_document: Option<usize>,
    /// Counts tokens of chunks that carry no cached `token_count`.
    pub(crate) token_counter: Arc<dyn TokenCounter>,
    /// Section-aware packing (on by default): for chunks that carry the heading-aware chunker's
    /// metadata, a heading is packed only when none of its section's chunks is a candidate, and a
    /// heading's score reaches its section's chunks (see [`carried_headings`](crate::carried_headings)
    /// and [`section_scores`](crate::section_scores)). Chunks without that metadata are not
    /// affected either way.
    pub(crate) section_aware: bool,
    /// Recount every chunk that has content instead of trusting its cached `token_count`, and
    /// report in the notes how many counts were checked and whether any claim was wrong (default
    /// off: a cached count is trusted unless it was made with another tokenizer).
    pub(crate) verify_counts: bool,
    /// A candidate is packed only if its score is above this (`None`: no floor, so a chunk
    /// without a score counts as 0.0 and may fill leftover room). With BM25 scores,
    /// a floor of 0.0 keeps out chunks that hold no query term. When set, it also applies to
    /// scores the packer computed for the [`query`](Self::query).
    pub(crate) relevance_floor: Option<f64>,
    /// The question the chunks were retrieved for. With it, the packer scores chunks that arrive
    /// without a score by the one policy of the CLI, the library and Python
    /// ([`score_missing`](crate::score_missing)): after the tenant and access checks, over the
    /// chunks the principal may see only; BM25 when none of them carries a score (with a relevance
    /// floor of 0 unless `relevance_floor` is set), the given scores otherwise.
    /// [`PackedContext::scoring`](rag_core::PackedContext::scoring) says which rule applied.
    /// `None` (the default): scores are taken as given, a missing one as 0.0.
    pub(crate) query: Option<String>,
    /// Cut to fit (on by default; [`ContextPacker::pack_context`](crate::ContextPacker::pack_context)
    /// only): when the best-ranked chunk left out for lack of room is a heading-aware chunk
    /// (`metadata.kind` `"body"` or `"heading"`), its [best part](crate::best_part) for the query
    /// is packed in its place: in the room the chunk would have had (at most a third of the budget) when
    /// the part keeps every query term the chunk holds or the chunk fits nowhere, else in the room
    /// the plan left, either at least [`MIN_CUT_TOKENS`](crate::MIN_CUT_TOKENS), as a new chunk `ID#cut` whose `metadata.cut_from` names the
    /// original and the byte range of its content; the original is dropped as
    /// [`CutToFit`](rag_core::DropReason::CutToFit) and is never packed beside its part. `pack` never cuts: its chunks are the caller's.
    pub(crate) cut_to_fit: bool,
    /// Hybrid scoring: with an embedder and a [`query`](Self::query), chunks that arrive without
    /// a score are scored by BM25 fused with the cosine of the embedder's vectors
    /// ([`score_missing_hybrid`](crate::score_missing_hybrid)) instead of BM25 alone. `None` (the
    /// default): BM25 alone.
    pub(crate) embedder: Option<Arc<dyn Embedder>>,
    /// How hybrid scoring fuses the two scores (default [`DEFAULT_FUSION`](crate::DEFAULT_FUSION)).
    pub(crate) fusion: Fusion,
    /// Diversity (opt-in, `None` by default): the eligible candidates are re-ranked by maximal
    /// marginal relevance over their vectors ([`mmr_order`](crate::mmr_order)), each one's value
    /// lowered by this weight times its greatest cosine to the candidates ranked before it. A
    /// finite number of at least 0; chunks without a vector are never lowered.
    pub(crate) diversity: Option<f64>,
}

impl PackerConfig {
    /// Words per shingle for near-duplicate detection unless configured: the default of the
    /// library, the CLI's `--shingle-size` and Python's `PackerConfig(shingle_size=...)`.
    pub const DEFAULT_SHINGLE_SIZE: usize = 5;
}

impl Default for PackerConfig {
    /// `lost_in_middle`, `greedy`, near dedup off, 5-word shingles, conflicts on, no cap, and
    /// `cl100k_base` (whose table is only built if some chunk lacks a `token_count`).
    fn default() -> Self {
        Self {
            order: PackOrder::default(),
            strategy: SelectionStrategy::default(),
            objective: Objective::default(),
            jaccard_threshold: None,
            shingle_size: Self::DEFAULT_SHINGLE_SIZE,
            detect_conflicts: true,
            max_per_document: None,
            token_counter: Arc::new(TiktokenCounter::cl100k()),
            section_aware: true,
            verify_counts: false,
            relevance_floor: None,
            query: None,
            cut_to_fit: true,
            embedder: None,
            fusion: crate::DEFAULT_FUSION,
            diversity: None,
        }
    }
}

/// Collects the settings of a [`PackerConfig`]; [`build`](Self::build) checks them together.
#[derive(Clone, Debug, Default)]
pub struct PackerConfigBuilder {
    config: PackerConfig,
}

impl PackerConfigBuilder {
    setters! { in config:
        /// Sets the order of the packed chunks.
        pub fn with_order(order: PackOrder);
        /// Sets the selection strategy.
        pub fn with_strategy(strategy: SelectionStrategy);
        /// Sets what `knapsack` and `optimal` maximise.
        pub fn with_objective(objective: Objective);
        /// Sets the near-duplicate threshold (`None`: exact dedup only).
        pub fn with_jaccard_threshold(jaccard_threshold: Option<f64>);
        /// Sets the words per shingle of near dedup.
        pub fn with_shingle_size(shingle_size: usize);
        /// Turns conflict detection on or off.
        pub fn with_conflicts(detect_conflicts: bool);
        /// Sets the per-document cap (`None`: no cap).
        pub fn with_max_per_document(max_per_document: Option<usize>);
        /// Sets the token counter for chunks without a cached count.
        pub fn with_token_counter(token_counter: Arc<dyn TokenCounter>);
        /// Turns section-aware packing on or off.
        pub fn with_section_aware(section_aware: bool);
        /// Turns the recounting of every cached token count on or off.
        pub fn with_verify_counts(verify_counts: bool);
        /// Sets the relevance floor (`None`: no floor).
        pub fn with_relevance_floor(relevance_floor: Option<f64>);
        /// Sets the query that chunks without a score are scored against (`None`: no scoring).
        pub fn with_query(query: Option<String>);
        /// Turns cutting the best left-out chunk to fit on or off (`pack_context` only).
        pub fn with_cut_to_fit(cut_to_fit: bool);
        /// Sets the embedder of hybrid scoring (`None`: BM25 alone).
        pub fn with_embedder(embedder: Option<Arc<dyn Embedder>>);
        /// Sets how hybrid scoring fuses BM25 and cosine.
        pub fn with_fusion(fusion: Fusion);
        /// Sets the weight of maximal-marginal-relevance diversity (`None`: off).
        pub fn with_diversity(diversity: Option<f64>);
    }

    /// Plugs in an order of your own (the extension point for orders); `order` becomes
    /// [`PackOrder::Custom`] holding it.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use rag_core::{Chunk, PackOrder};
    /// use rag_packer::{Order, PackerConfig};
    ///
    /// struct InputReversed;
    /// impl Order for InputReversed {
    ///     fn name(&self) -> &str { "worst_first" }
    ///     fn arrange(&self, ranked: &[&Chunk]) -> Vec<usize> { (0..ranked.len()).rev().collect() }
    /// }
    /// let config = PackerConfig::builder().with_custom_order(Arc::new(InputReversed)).build()?;
    /// assert!(matches!(config.order(), PackOrder::Custom(_)));
    /// # Ok::<(), rag_core::PackerError>(())
    /// ```
    #[must_use]
    pub fn with_custom_order(mut self, order: Arc<dyn Order>) -> Self {
        self.config.order = PackOrder::Custom(order);
        self
    }

    /// The configuration, or [`PackerError::InvalidConfig`] naming the first setting that is out
    /// of range or does not work with another one.
    pub fn build(self) -> Result<PackerConfig, PackerError> {
        self.config.validate()?;
        Ok(self.config)
    }
}

impl PackerConfig {
    /// A builder starting from [`PackerConfig::default`].
    pub fn builder() -> PackerConfigBuilder {
        PackerConfigBuilder::default()
    }

    /// A builder starting from this configuration, to change some of its settings.
    pub fn to_builder(&self) -> PackerConfigBuilder {
        PackerConfigBuilder { config: self.clone() }
    }

    /// The order of the packed chunks after the pinned ones.
    pub fn order(&self) -> &PackOrder {
        &self.order
    }

    /// How candidates are chosen to fill the budget.
    pub fn strategy(&self) -> SelectionStrategy {
        self.strategy
    }

    /// What `knapsack` and `optimal` maximise.
    pub fn objective(&self) -> Objective {
        self.objective
    }

    /// The near-duplicate threshold, in `(0, 1]` (`None`: exact dedup only).
    pub fn jaccard_threshold(&self) -> Option<f64> {
        self.jaccard_threshold
    }

    /// Words per shingle of near dedup, at least 1.
    pub fn shingle_size(&self) -> usize {
        self.shingle_size
    }

    /// Whether conflicts among the packed chunks are annotated.
    pub fn detect_conflicts(&self) -> bool {
        self.detect_conflicts
    }

    /// The per-document cap, at least 1 (`None`: no cap).
    pub fn max_per_document(&self) -> Option<usize> {
        self.max_per_document
    }

    /// The counter for chunks without a cached `token_count`.
    pub fn token_counter(&self) -> &Arc<dyn TokenCounter> {
        &self.token_counter
    }

    /// Whether packing is section-aware.
    pub fn section_aware(&self) -> bool {
        self.section_aware
    }

    /// Whether every cached token count is recounted.
    pub fn verify_counts(&self) -> bool {
        self.verify_counts
    }

    /// The relevance floor, a finite number (`None`: no floor).
    pub fn relevance_floor(&self) -> Option<f64> {
        self.relevance_floor
    }

    /// The query chunks without a score are scored against (`None`: no scoring).
    pub fn query(&self) -> Option<&str> {
        self.query.as_deref()
    }

    /// Whether the best left-out chunk is cut to fit (`pack_context` only).
    pub fn cut_to_fit(&self) -> bool {
        self.cut_to_fit
    }

    /// The embedder of hybrid scoring (`None`: BM25 alone).
    pub fn embedder(&self) -> Option<&Arc<dyn Embedder>> {
        self.embedder.as_ref()
    }

    /// How hybrid scoring fuses BM25 and cosine.
    pub fn fusion(&self) -> Fusion {
        self.fusion
    }

    /// The weight of maximal-marginal-relevance diversity (`None`: off).
    pub fn diversity(&self) -> Option<f64> {
        self.diversity
    }

    /// Checks every setting; the one place a configuration is validated.
    fn validate(&self) -> Result<(), PackerError> {
        let invalid = |message: &str| {
            Err(PackerError::InvalidConfig {
                message: message.to_owned(),
            })
        };
        if self.shingle_size == 0 {
            return invalid("shingle size must be at least 1");
        }
        if let Some(threshold) = self.jaccard_threshold {
            check_near_config(threshold, self.shingle_size)?;
        }
        if self.max_per_document == Some(0) {
            return invalid("max_per_document must be at least 1");
        }
        if let Some(floor) = self.relevance_floor
            && !floor.is_finite()
        {
            return Err(PackerError::InvalidConfig {
                message: format!("relevance floor must be a finite number, got {floor}"),
            });
        }
        if let Some(weight) = self.diversity
            && !(weight.is_finite() && weight >= 0.0)
        {
            return Err(PackerError::InvalidConfig {
                message: format!("the diversity weight must be a finite number of at least 0, got {weight}"),
            });
        }
        match self.fusion {
            Fusion::Convex { bm25_weight } if !(0.0..=1.0).contains(&bm25_weight) => {
                return Err(PackerError::InvalidConfig {
                    message: format!("the bm25 weight of the fusion must be in 0..=1, got {bm25_weight}"),
                });
            }
            Fusion::ReciprocalRank { k: 0 } => return invalid("the k of reciprocal-rank fusion must be at least 1"),
            Fusion::Convex { .. } | Fusion::ReciprocalRank { .. } => {}
            _ => return invalid("this fusion is not implemented by this version of the packer"),
        }
        Ok(())
    }
}

impl fmt::Debug for PackerConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PackerConfig")
            .field("order", &self.order)
            .field("strategy", &self.strategy)
            .field("objective", &self.objective)
            .field("jaccard_threshold", &self.jaccard_threshold)
            .field("shingle_size", &self.shingle_size)
            .field("detect_conflicts", &self.detect_conflicts)
            .field("max_per_document", &self.max_per_document)
            .field("token_counter", &self.token_counter.name())
            .field("section_aware", &self.section_aware)
            .field("verify_counts", &self.verify_counts)
            .field("relevance_floor", &self.relevance_floor)
            .field("query", &self.query)
            .field("cut_to_fit", &self.cut_to_fit)
            .field("embedder", &self.embedder.as_ref().map(|e| e.id().to_owned()))
            .field("fusion", &self.fusion)
            .field("diversity", &self.diversity)
            .finish()
    }
}
