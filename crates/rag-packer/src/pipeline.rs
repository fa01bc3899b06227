//! The orchestrator: [`ContextPacker`] runs the stages in order and accounts for every chunk.

use std::collections::HashMap;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rag_chunker::TiktokenCounter;
use rag_core::{
    Chunk, ChunkId, ConflictAnnotation, DropReason, DroppedChunk, PackOrder, PackedContext, PackerError,
    RequestContext, SelectionStrategy, TokenCounter,
};
use tracing::field::Empty;

use crate::conflicts::detect_conflicts;
use crate::dedup::{DedupVerdict, PARALLEL_MIN_BYTES, PreparedTexts, check_near_config};
use crate::order::{ascending_order, descending_order, input_order, lost_in_middle_order, reverse_order, sides_order};
use crate::rank::rank_by;
use crate::select::{SelectionItem, fit_to_budget, knapsack_select, optimal_select};
use crate::validate::{Checked, validate_budget, validate_chunks};

/// How a [`ContextPacker`] packs.
#[derive(Clone)]
pub struct PackerConfig {
    /// The order of the packed chunks after the pinned ones.
    pub order: PackOrder,
    /// How candidates are chosen to fill the budget.
    pub strategy: SelectionStrategy,
    /// Near-duplicate dedup: drop a candidate whose shingle Jaccard similarity with a pinned or
    /// kept chunk reaches this, in `(0, 1]`. `None` turns near dedup off (exact dedup always runs).
    pub jaccard_threshold: Option<f64>,
    /// Words per shingle for near dedup, at least 1.
    pub shingle_size: usize,
    /// Whether to annotate conflicts among the packed chunks.
    pub detect_conflicts: bool,
    /// At most this many packed chunks per document (pinned chunks do not count), at least 1.
    pub max_per_document: Option<usize>,
    /// Counts tokens of chunks that carry no cached `token_count`.
    pub token_counter: Arc<dyn TokenCounter>,
}

impl Default for PackerConfig {
    /// `lost_in_middle`, `greedy`, near dedup off, 5-word shingles, conflicts on, no cap, and
    /// `cl100k_base` (whose table is only built if some chunk lacks a `token_count`).
    fn default() -> Self {
        Self {
            order: PackOrder::default(),
            strategy: SelectionStrategy::default(),
            jaccard_threshold: None,
            shingle_size: 5,
            detect_conflicts: true,
            max_per_document: None,
            token_counter: Arc::new(TiktokenCounter::cl100k()),
        }
    }
}

impl fmt::Debug for PackerConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PackerConfig")
            .field("order", &self.order)
            .field("strategy", &self.strategy)
            .field("jaccard_threshold", &self.jaccard_threshold)
            .field("shingle_size", &self.shingle_size)
            .field("detect_conflicts", &self.detect_conflicts)
            .field("max_per_document", &self.max_per_document)
            .field("token_counter", &self.token_counter.name())
            .finish()
    }
}

/// Packs retrieved chunks into a token budget: validate, pin, rank, dedup, select, order, annotate.
///
/// The result is deterministic and, except for `order = input` and `reverse`, independent of the
/// input order. Every input chunk ends up either in [`PackedContext::chunks`] or in
/// [`PackedContext::dropped`] with its reason. Each call emits one `rag.pack` tracing span.
///
/// ```
/// use rag_core::{Chunk, RequestContext};
/// use rag_packer::{ContextPacker, PackerConfig};
///
/// let ctx = RequestContext::local("acme");
/// let chunk = |id: &str, text: &str, score: f64| {
///     let mut c = Chunk::with_content(id, "guide", "acme", text);
///     c.score = Some(score);
///     c.token_count = Some(10);
///     c
/// };
/// let packer = ContextPacker::new(PackerConfig::default())?;
/// let packed = packer.pack_blocking(
///     &ctx,
///     vec![chunk("a", "Rerankers score pairs.", 0.9), chunk("b", "rerankers SCORE pairs", 0.5), chunk("c", "MMR.", 0.7)],
///     25,
/// )?;
/// assert_eq!(packed.chunks.len(), 2);
/// assert_eq!(packed.dropped[0].reason.to_string(), "exact duplicate of a");
/// # Ok::<(), rag_core::PackerError>(())
/// ```
#[derive(Debug, Clone)]
pub struct ContextPacker {
    config: PackerConfig,
}

impl ContextPacker {
    /// A packer with `config`; errors if a setting is out of range (threshold outside `(0, 1]`,
    /// shingle size 0, cap 0).
    pub fn new(config: PackerConfig) -> Result<Self, PackerError> {
        if let Some(threshold) = config.jaccard_threshold {
            check_near_config(threshold, config.shingle_size)?;
        }
        if config.shingle_size == 0 {
            return Err(PackerError::InvalidConfig {
                message: "shingle size must be at least 1".to_owned(),
            });
        }
        if config.max_per_document == Some(0) {
            return Err(PackerError::InvalidConfig {
                message: "max_per_document must be at least 1".to_owned(),
            });
        }
        Ok(Self { config })
    }

    /// The configuration.
    pub fn config(&self) -> &PackerConfig {
        &self.config
    }

    /// Packs `chunks` into `budget` tokens for `ctx`'s tenant.
    ///
    /// Packing is CPU-bound and does not yield; to keep a large pack off an async executor's
    /// threads, run [`pack_blocking`](Self::pack_blocking) on a blocking thread instead.
    pub async fn pack(
        &self,
        ctx: &RequestContext,
        chunks: Vec<Chunk>,
        budget: i64,
    ) -> Result<PackedContext, PackerError> {
        self.pack_blocking(ctx, chunks, budget)
    }

    /// [`pack`](Self::pack), synchronously.
    pub fn pack_blocking(
        &self,
        ctx: &RequestContext,
        chunks: Vec<Chunk>,
        budget: i64,
    ) -> Result<PackedContext, PackerError> {
        self.traced(ctx, chunks.len(), budget, || {
            let plan = self.plan(ctx, &chunks, budget)?;
            let (packed, dropped, plan) = plan.hand_over(chunks);
            let conflicts = self.conflicts(&packed);
            Ok(self.assemble(packed, dropped, conflicts, plan))
        })
    }

    /// Packs borrowed candidates: like [`pack_blocking`](Self::pack_blocking), but the caller
    /// keeps `chunks` and the packed ones are cloned into the result.
    ///
    /// For packing the same candidates more than once (at several budgets, or before and after
    /// a reranker), and for callers that keep their candidates anyway. Freeing the candidates is
    /// then the caller's business: at 100,000 candidates that is a fifth of the time of an owned
    /// pack.
    ///
    /// ```
    /// use rag_core::{Chunk, RequestContext};
    /// use rag_packer::{ContextPacker, PackerConfig};
    ///
    /// let ctx = RequestContext::local("acme");
    /// let mut candidates = Vec::new();
    /// for (id, text) in [("a", "Rerankers score pairs."), ("b", "Bi-encoders embed queries."), ("c", "MMR diversifies.")] {
    ///     let mut chunk = Chunk::with_content(id, "guide", "acme", text);
    ///     chunk.token_count = Some(10);
    ///     candidates.push(chunk);
    /// }
    /// let packer = ContextPacker::new(PackerConfig::default())?;
    /// let small = packer.pack_borrowed(&ctx, &candidates, 15)?;
    /// let large = packer.pack_borrowed(&ctx, &candidates, 30)?;
    /// assert_eq!((small.chunks.len(), large.chunks.len()), (1, 3));
    /// # Ok::<(), rag_core::PackerError>(())
    /// ```
    pub fn pack_borrowed(
        &self,
        ctx: &RequestContext,
        chunks: &[Chunk],
        budget: i64,
    ) -> Result<PackedContext, PackerError> {
        self.traced(ctx, chunks.len(), budget, || {
            let mut plan = self.plan(ctx, chunks, budget)?;
            let packed: Vec<Chunk> = plan.packed.iter().map(|&i| chunks[i].clone()).collect();
            // Conflict detection reads the packed chunks only: it runs while the ids are cloned.
            let (conflicts, dropped) = rayon::join(|| self.conflicts(&packed), || plan.clone_dropped(chunks));
            Ok(self.assemble(packed, dropped, conflicts, plan))
        })
    }

    /// Runs `pack` inside the `rag.pack` span and records its outcome there.
    fn traced(
        &self,
        ctx: &RequestContext,
        chunks_in: usize,
        budget: i64,
        pack: impl FnOnce() -> Result<PackedContext, PackerError>,
    ) -> Result<PackedContext, PackerError> {
        let span = tracing::info_span!(
            "rag.pack",
            rag.tenant_id = ctx.tenant_id.as_str(),
            rag.pack.order = self.config.order.as_str(),
            rag.pack.strategy = self.config.strategy.as_str(),
            rag.pack.budget = budget,
            rag.pack.tokens_used = Empty,
            rag.pack.chunks_in = saturating_i64(chunks_in),
            rag.pack.chunks_out = Empty,
            rag.pack.dropped_dedup = Empty,
            rag.pack.dropped_budget = Empty,
            rag.pack.conflicts = Empty,
            rag.tokenizer = self.config.token_counter.name(),
            otel.status_code = Empty,
            otel.status_description = Empty,
        );
        let _entered = span.enter();
        let result = pack();
        match &result {
            Ok(packed) => {
                // The OpenTelemetry bridge exports unsigned integers as strings, so counts go out as i64.
                span.record("rag.pack.strategy", packed.strategy.as_str());
                span.record("rag.pack.tokens_used", saturating_i64(packed.tokens_used));
                span.record("rag.pack.chunks_out", saturating_i64(packed.chunks.len()));
                span.record("rag.pack.dropped_dedup", saturating_i64(packed.dropped_dedup()));
                span.record("rag.pack.dropped_budget", saturating_i64(packed.dropped_budget()));
                span.record("rag.pack.conflicts", saturating_i64(packed.conflicts.len()));
            }
            Err(err) => {
                span.record("otel.status_code", "ERROR");
                span.record("otel.status_description", err.to_string());
            }
        }
        result
    }

    /// Stage 8: conflicts among the packed chunks. Advisory, so a failure must not lose the pack.
    fn conflicts(&self, packed: &[Chunk]) -> Vec<ConflictAnnotation> {
        if self.config.detect_conflicts {
            conflicts_or_none(packed)
        } else {
            Vec::new()
        }
    }

    /// The result, from the handed-over chunks.
    fn assemble(
        &self,
        packed: Vec<Chunk>,
        dropped: Vec<DroppedChunk>,
        conflicts: Vec<ConflictAnnotation>,
        plan: Plan,
    ) -> PackedContext {
        PackedContext {
            chunks: packed,
            tokens_used: plan.tokens_used,
            tokens_budget: plan.budget,
            tokenizer: self.config.token_counter.name().to_owned(),
            order: self.config.order,
            strategy: plan.strategy,
            conflicts,
            dropped,
            notes: plan.notes,
        }
    }

    /// Stages 1 to 3: validation, the pinned chunks and their tokens, and the ranking.
    fn validate_and_rank(&self, ctx: &RequestContext, chunks: &[Chunk], budget: usize) -> Result<Ranking, PackerError> {
        let checked = validate_chunks(ctx, chunks, self.config.token_counter.as_ref())?;

        // Stage 2: pinned chunks, in input order, before anything else.
        let (pinned, candidates): (Vec<usize>, Vec<usize>) = (0..chunks.len()).partition(|&i| chunks[i].pinned);
        // Saturating: token counts come from input, and a wrapped sum would let pinned chunks of
        // absurd sizes through (a saturated sum is always over the budget, which is an i64).
        let pinned_tokens = pinned
            .iter()
            .fold(0usize, |sum, &i| sum.saturating_add(checked[i].tokens));
        if pinned_tokens > budget {
            return Err(PackerError::PinnedOverBudget { pinned_tokens, budget });
        }

        // Stage 3: one ranking for everything that follows (input positions, best first).
        let ranked: Vec<usize> = rank_by(candidates.len(), |k| {
            (checked[candidates[k]].score, &chunks[candidates[k]].id)
        })
        .into_iter()
        .map(|k| candidates[k])
        .collect();
        Ok(Ranking {
            checked,
            pinned,
            ranked,
            pinned_tokens,
            room: budget - pinned_tokens,
        })
    }

    /// Stages 1 to 7 and the accounting, on borrowed chunks: what goes where, by input position.
    fn plan(&self, ctx: &RequestContext, chunks: &[Chunk], budget: i64) -> Result<Plan, PackerError> {
        let config = &self.config;
        let budget = validate_budget(budget)?;
        // The chunks stay where they are until the end: every stage works on input positions, so
        // that no chunk (several hundred bytes each) is moved more than once.
        let texts: Vec<Option<&str>> = chunks.iter().map(Chunk::content).collect();
        let near = config
            .jaccard_threshold
            .map(|threshold| (threshold, config.shingle_size));
        // Most of dedup's work (reading every text once) does not depend on the ranking, so on
        // large inputs it starts on the thread pool while this thread validates and ranks. A
        // validation error stops it after the blocks under way.
        let bytes: usize = texts.iter().flatten().map(|t| t.len()).sum();
        let (ranking, prepared) = if bytes >= PARALLEL_MIN_BYTES {
            let invalid = AtomicBool::new(false);
            rayon::join(
                || {
                    let ranking = self.validate_and_rank(ctx, chunks, budget);
                    invalid.store(ranking.is_err(), Ordering::Relaxed);
                    ranking
                },
                || PreparedTexts::new_unless(&texts, near, &invalid),
            )
        } else {
            let ranking = self.validate_and_rank(ctx, chunks, budget);
            (ranking, PreparedTexts::new(&texts, near))
        };
        let Ranking {
            checked,
            pinned,
            ranked,
            pinned_tokens,
            room,
        } = ranking?;

        // Stages 4-5: dedup in priority order, pinned first; `of` indexes this same order.
        let priority: Vec<usize> = pinned.iter().chain(&ranked).copied().collect();
        let (verdicts, near_fallback) = prepared.verdicts(&texts, &priority, pinned.len());
        drop((prepared, texts));
        let ranked_verdicts = &verdicts[pinned.len()..];

        // Stage 6: selection among survivors, in rank order.
        let survivors: Vec<usize> = ranked
            .iter()
            .zip(ranked_verdicts)
            .filter(|(_, verdict)| matches!(verdict, DedupVerdict::Kept))
            .map(|(&i, _)| i)
            .collect();
        // Without a cap, documents matter to no strategy, so they are not even looked at.
        let documents = config.max_per_document.map(|_| number_documents(chunks, &survivors));
        let items: Vec<SelectionItem> = survivors
            .iter()
            .enumerate()
            .map(|(s, &i)| SelectionItem {
                tokens: checked[i].tokens,
                score: checked[i].score,
                document: documents.as_ref().map_or(0, |numbers| numbers[s]),
            })
            .collect();
        let mut notes: Vec<String> = near_fallback.iter().map(ToString::to_string).collect();
        let (chosen, strategy) = match config.strategy {
            SelectionStrategy::Greedy => (
                fit_to_budget(&items, room, config.max_per_document),
                SelectionStrategy::Greedy,
            ),
            SelectionStrategy::Knapsack => (
                knapsack_select(&items, room, config.max_per_document),
                SelectionStrategy::Knapsack,
            ),
            SelectionStrategy::Optimal => match optimal_select(&items, room, config.max_per_document) {
                Ok(chosen) => (chosen, SelectionStrategy::Optimal),
                Err(too_large) => {
                    notes.push(format!("optimal selection fell back to knapsack: {too_large}"));
                    (
                        knapsack_select(&items, room, config.max_per_document),
                        SelectionStrategy::Knapsack,
                    )
                }
            },
        };
        let mut selected = vec![false; chunks.len()];
        let mut per_document: HashMap<usize, usize> = HashMap::new();
        for &s in &chosen {
            selected[survivors[s]] = true;
            *per_document.entry(items[s].document).or_insert(0) += 1;
        }

        // Stage 9 (accounting): every candidate not selected, in rank order, with its reason.
        // Candidate -> its selection item, by position: a vector, not a map, at 100k candidates.
        let mut survivor_item: Vec<u32> = vec![u32::MAX; chunks.len()];
        for (s, &i) in survivors.iter().enumerate() {
            survivor_item[i] = s as u32;
        }
        let reasons: Vec<(usize, DropReason)> = ranked
            .iter()
            .zip(ranked_verdicts)
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
                    // The same rule for every strategy: a chunk whose document already has the
                    // maximum number of packed chunks is over the cap; any other is over budget.
                    DedupVerdict::Kept => match (config.max_per_document, items.get(survivor_item[i] as usize)) {
                        (Some(cap), Some(item)) if per_document.get(&item.document).copied().unwrap_or(0) >= cap => {
                            DropReason::OverDocumentCap {
                                document_id: chunks[i].document_id.clone(),
                                cap,
                            }
                        }
                        _ => DropReason::OverBudget {
                            tokens: checked[i].tokens,
                        },
                    },
                };
                (i, reason)
            })
            .collect();

        // Stage 7: order the selection; pinned chunks stay first.
        let in_rank_order: Vec<usize> = ranked.iter().copied().filter(|&i| selected[i]).collect();
        let ordered = match config.order {
            PackOrder::LostInMiddle => lost_in_middle_order(in_rank_order),
            PackOrder::Descending => descending_order(in_rank_order),
            PackOrder::Ascending => ascending_order(in_rank_order),
            PackOrder::Input => input_order(in_rank_order, |&i| i),
            PackOrder::Reverse => reverse_order(in_rank_order, |&i| i),
            PackOrder::Sides => sides_order(in_rank_order),
        };
        let tokens_used = pinned_tokens + ordered.iter().map(|&i| checked[i].tokens).sum::<usize>();

        let packed = pinned.into_iter().chain(ordered).collect();
        Ok(Plan {
            packed,
            dropped: reasons,
            tokens_used,
            budget,
            strategy,
            notes,
        })
    }
}

/// What stages 1 to 3 found, by input position.
struct Ranking {
    checked: Vec<Checked>,
    /// The pinned chunks, in input order.
    pinned: Vec<usize>,
    /// The other chunks, best first.
    ranked: Vec<usize>,
    pinned_tokens: usize,
    /// The budget the pinned chunks leave.
    room: usize,
}

/// Where every chunk goes, by input position: the outcome of stages 1 to 7 and the accounting.
struct Plan {
    /// The packed chunks, in their final order.
    packed: Vec<usize>,
    /// The chunks not packed, in rank order, with their reasons.
    dropped: Vec<(usize, DropReason)>,
    tokens_used: usize,
    budget: usize,
    strategy: SelectionStrategy,
    notes: Vec<String>,
}

impl Plan {
    /// Moves the packed chunks out of `chunks`, and each dropped one's id into its drop record
    /// (moved, not cloned); the rest is freed here.
    fn hand_over(mut self, chunks: Vec<Chunk>) -> (Vec<Chunk>, Vec<DroppedChunk>, Plan) {
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
        let dropped = std::mem::take(&mut self.dropped)
            .into_iter()
            .filter_map(|(i, reason)| {
                Some(DroppedChunk {
                    id: dropped_ids[i].take()?,
                    reason,
                })
            })
            .collect();
        (packed.into_iter().flatten().collect(), dropped, self)
    }

    /// The drop records, with the ids cloned out of `chunks`.
    fn clone_dropped(&mut self, chunks: &[Chunk]) -> Vec<DroppedChunk> {
        // Ids are cloned in input order, where the chunks (and usually their ids) lie one after
        // the other in memory; in rank order nearly every clone was two cache misses.
        let mut wanted = vec![false; chunks.len()];
        for &(i, _) in &self.dropped {
            wanted[i] = true;
        }
        let mut ids: Vec<Option<ChunkId>> = chunks
            .iter()
            .zip(wanted)
            .map(|(chunk, wanted)| wanted.then(|| chunk.id.clone()))
            .collect();
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

/// Numbers the documents of `survivors` (input positions) in order of first appearance, for the
/// per-document cap.
fn number_documents(chunks: &[Chunk], survivors: &[usize]) -> Vec<usize> {
    let mut numbers: HashMap<&str, usize> = HashMap::new();
    survivors
        .iter()
        .map(|&i| {
            let next = numbers.len();
            *numbers.entry(chunks[i].document_id.as_str()).or_insert(next)
        })
        .collect()
}

/// Conflict detection with its failures contained: a panic in it becomes a warning and no notes.
fn conflicts_or_none(packed: &[Chunk]) -> Vec<ConflictAnnotation> {
    match catch_unwind(AssertUnwindSafe(|| detect_conflicts(packed))) {
        Ok(conflicts) => conflicts,
        Err(_) => {
            tracing::warn!(
                target: "rag.pack",
                "conflict detection failed; the pack is returned without conflict annotations"
            );
            Vec::new()
        }
    }
}

fn saturating_i64(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use rag_core::{ChunkId, ConflictKind, TrustLevel};

    use super::*;

    /// Counts words, and how often it was asked to.
    #[derive(Default)]
    struct Words(AtomicUsize);

    impl TokenCounter for Words {
        fn count(&self, text: &str) -> usize {
            self.0.fetch_add(1, Ordering::Relaxed);
            text.split_whitespace().count()
        }

        fn name(&self) -> &str {
            "words"
        }
    }

    fn config() -> PackerConfig {
        PackerConfig {
            token_counter: Arc::new(Words::default()),
            ..PackerConfig::default()
        }
    }

    fn chunk(id: &str, doc: &str, text: &str, score: f64) -> Chunk {
        let mut c = Chunk::with_content(id, doc, "acme", text);
        c.score = Some(score);
        c
    }

    fn ids(chunks: &[Chunk]) -> Vec<&str> {
        chunks.iter().map(|c| c.id.as_str()).collect()
    }

    fn pack(config: PackerConfig, chunks: Vec<Chunk>, budget: i64) -> Result<PackedContext, PackerError> {
        ContextPacker::new(config)?.pack_blocking(&RequestContext::local("acme"), chunks, budget)
    }

    #[test]
    fn a_validation_error_in_a_large_input_is_reported() {
        // Over 256 KiB of text, so dedup is prepared on the pool while validation runs.
        let mut chunks: Vec<Chunk> = (0..3000)
            .map(|i| {
                chunk(
                    &format!("c{i}"),
                    "d",
                    &format!("{i} {}", "filler words here ".repeat(6)),
                    0.5,
                )
            })
            .collect();
        chunks[2500].tenant_id = "other".into();
        let packer = ContextPacker::new(PackerConfig {
            jaccard_threshold: Some(0.8),
            ..config()
        })
        .unwrap();
        let err = packer
            .pack_borrowed(&RequestContext::local("acme"), &chunks, 100)
            .unwrap_err();
        assert!(
            matches!(err, PackerError::ForeignTenant { ref chunk_id, .. } if chunk_id.as_str() == "c2500"),
            "{err}"
        );
    }

    #[test]
    fn borrowed_and_owned_packs_are_identical() {
        let mut chunks: Vec<Chunk> = (0..60)
            .map(|i| {
                let text = format!("shared words here and there number {} of {}", i % 9, i % 4);
                chunk(
                    &format!("c{i}"),
                    &format!("d{}", i % 5),
                    &text,
                    f64::from(i % 13) / 13.0,
                )
            })
            .collect();
        chunks[7].pinned = true;
        for (strategy, cap, threshold) in [
            (SelectionStrategy::Greedy, None, None),
            (SelectionStrategy::Knapsack, Some(2), Some(0.6)),
            (SelectionStrategy::Optimal, Some(1), Some(0.9)),
        ] {
            let packer = ContextPacker::new(PackerConfig {
                strategy,
                max_per_document: cap,
                jaccard_threshold: threshold,
                ..config()
            })
            .unwrap();
            let ctx = RequestContext::local("acme");
            let borrowed = packer.pack_borrowed(&ctx, &chunks, 60).unwrap();
            let owned = packer.pack_blocking(&ctx, chunks.clone(), 60).unwrap();
            assert_eq!(borrowed, owned, "{strategy:?}");
            assert_eq!(owned.chunks.len() + owned.dropped.len(), chunks.len());
        }
    }

    #[test]
    fn pinned_first_then_lost_in_middle_with_every_drop_explained() {
        let mut system = chunk("sys", "prompt", "You answer from the context only.", 0.0);
        system.pinned = true;
        let chunks = vec![
            chunk("c5", "d", "five five five five five", 0.5),
            chunk("c1", "d", "one one", 0.9),
            system,
            chunk("c2", "d", "two two", 0.8),
            chunk("dup", "e", "Two, TWO!", 0.85),
            chunk("c3", "e", "three three", 0.7),
            chunk("c4", "e", "four four", 0.6),
            chunk("big", "f", "a b c d e f g h i j k l m n o p q r s t", 0.65),
        ];
        let packed = pack(config(), chunks, 18).unwrap();
        // Pinned: 6 tokens; room 12. Rank: c1 .9, dup .85, c2 .8, c3 .7, big .65, c4 .6, c5 .5.
        // dup is kept, c2 is its exact duplicate; c1 dup c3 c4 fit (8), big (20) and c5 (5) do not.
        assert_eq!(ids(&packed.chunks), ["sys", "c1", "c3", "c4", "dup"]);
        assert_eq!(packed.tokens_used, 14);
        assert_eq!(packed.tokens_budget, 18);
        assert_eq!(packed.tokenizer, "words");
        let dropped: Vec<String> = packed
            .dropped
            .iter()
            .map(|d| format!("{}: {}", d.id, d.reason))
            .collect();
        assert_eq!(
            dropped,
            [
                "c2: exact duplicate of dup",
                "big: over budget (20 tokens did not fit)",
                "c5: over budget (5 tokens did not fit)"
            ]
        );
        assert_eq!(packed.strategy, SelectionStrategy::Greedy);
    }

    #[test]
    fn every_order_keeps_pinned_first() {
        let mut pinned = chunk("q", "user", "the question", 0.0);
        pinned.pinned = true;
        let chunks = || {
            vec![
                chunk("b", "d", "bravo", 0.8),
                pinned.clone(),
                chunk("a", "d", "alpha", 0.9),
                chunk("d", "d", "delta", 0.6),
                chunk("c", "d", "charlie", 0.7),
            ]
        };
        let expect = [
            (PackOrder::Descending, ["q", "a", "b", "c", "d"]),
            (PackOrder::Ascending, ["q", "d", "c", "b", "a"]),
            (PackOrder::LostInMiddle, ["q", "a", "c", "d", "b"]),
            (PackOrder::Input, ["q", "b", "a", "d", "c"]),
            (PackOrder::Reverse, ["q", "c", "d", "a", "b"]),
            (PackOrder::Sides, ["q", "b", "d", "c", "a"]),
        ];
        for (order, want) in expect {
            let packed = pack(PackerConfig { order, ..config() }, chunks(), 100).unwrap();
            assert_eq!(ids(&packed.chunks), want, "{order}");
            assert_eq!(packed.order, order);
        }
    }

    #[test]
    fn validation_errors_name_the_chunk() {
        let foreign = Chunk::with_content("x", "d", "globex", "text");
        let err = pack(config(), vec![chunk("a", "d", "ok", 1.0), foreign], 10).unwrap_err();
        assert_eq!(
            err.to_string(),
            "chunk x belongs to tenant globex, not to the request's tenant acme"
        );
        for budget in [0, -5] {
            assert_eq!(
                pack(config(), vec![], budget).unwrap_err(),
                PackerError::InvalidBudget { budget }
            );
        }
        let remote = Chunk::with_content_ref("r", "d", "acme", "s3://b/r");
        assert_eq!(
            pack(config(), vec![remote], 10).unwrap_err(),
            PackerError::MissingTokenCount { chunk_id: "r".into() }
        );
        assert_eq!(
            pack(config(), vec![chunk("e", "d", "  ", 1.0)], 10).unwrap_err(),
            PackerError::ZeroTokens { chunk_id: "e".into() }
        );
        let err = pack(config(), vec![chunk("n", "d", "x", f64::NAN)], 10).unwrap_err();
        assert!(matches!(err, PackerError::NonFiniteScore { ref chunk_id, .. } if chunk_id.as_str() == "n"));
        assert_eq!(
            pack(config(), vec![chunk("a", "d", "x", 1.0), chunk("a", "d", "y", 1.0)], 10).unwrap_err(),
            PackerError::DuplicateChunkId { chunk_id: "a".into() }
        );
        let mut pinned = chunk("p", "d", "one two three", 0.0);
        pinned.pinned = true;
        assert_eq!(
            pack(config(), vec![pinned], 2).unwrap_err(),
            PackerError::PinnedOverBudget {
                pinned_tokens: 3,
                budget: 2
            }
        );
    }

    #[test]
    fn invalid_configurations_are_refused() {
        for (config, message) in [
            (
                PackerConfig {
                    jaccard_threshold: Some(0.0),
                    ..config()
                },
                "invalid packer configuration: jaccard threshold must be in (0, 1], got 0",
            ),
            (
                PackerConfig {
                    shingle_size: 0,
                    ..config()
                },
                "invalid packer configuration: shingle size must be at least 1",
            ),
            (
                PackerConfig {
                    max_per_document: Some(0),
                    ..config()
                },
                "invalid packer configuration: max_per_document must be at least 1",
            ),
        ] {
            assert_eq!(ContextPacker::new(config).unwrap_err().to_string(), message);
        }
    }

    #[test]
    fn cached_token_counts_never_call_the_counter() {
        let counter = Arc::new(Words::default());
        let config = PackerConfig {
            token_counter: counter.clone(),
            ..PackerConfig::default()
        };
        let mut a = chunk("a", "d", "some text here", 1.0);
        a.token_count = Some(7);
        let mut remote = Chunk::with_content_ref("r", "d", "acme", "s3://b/r");
        remote.token_count = Some(3);
        let packed = pack(config.clone(), vec![a, remote], 10).unwrap();
        assert_eq!(packed.tokens_used, 10);
        assert_eq!(counter.0.load(Ordering::Relaxed), 0);
        // The default counter is lazy too: constructing the default config loads nothing.
        assert_eq!(PackerConfig::default().token_counter.name(), "tiktoken:cl100k_base");
    }

    #[test]
    fn near_duplicates_name_the_kept_chunk_and_similarity() {
        let text = "alpha beta gamma delta epsilon zeta eta theta iota kappa";
        let chunks = vec![
            chunk("kept", "d", text, 0.9),
            chunk("near", "e", &format!("{text} lambda"), 0.8),
            chunk("other", "f", "something else entirely", 0.7),
        ];
        let config = PackerConfig {
            jaccard_threshold: Some(0.8),
            shingle_size: 3,
            ..config()
        };
        let packed = pack(config, chunks, 100).unwrap();
        assert_eq!(
            packed.dropped[0].reason,
            DropReason::NearDuplicate {
                of: "kept".into(),
                similarity: 8.0 / 9.0
            }
        );
        assert_eq!(packed.dropped_dedup(), 1);
    }

    #[test]
    fn the_cap_holds_for_every_strategy_and_is_reported() {
        let chunks = || {
            vec![
                chunk("a1", "a", "x1", 0.9),
                chunk("a2", "a", "x2", 0.8),
                chunk("a3", "a", "x3", 0.7),
                chunk("b1", "b", "y1", 0.6),
            ]
        };
        for strategy in SelectionStrategy::ALL {
            let config = PackerConfig {
                strategy,
                max_per_document: Some(2),
                order: PackOrder::Descending,
                ..config()
            };
            let packed = pack(config, chunks(), 100).unwrap();
            assert_eq!(ids(&packed.chunks), ["a1", "a2", "b1"], "{strategy}");
            assert_eq!(
                packed.dropped[0].reason,
                DropReason::OverDocumentCap {
                    document_id: "a".into(),
                    cap: 2
                }
            );
            assert_eq!(packed.dropped_budget(), 1);
        }
    }

    #[test]
    fn optimal_over_the_limit_falls_back_to_knapsack_and_says_so() {
        let chunks: Vec<Chunk> = (0..20)
            .map(|i| {
                let mut c = chunk(&format!("c{i:02}"), "d", &format!("text {i}"), 1.0);
                c.token_count = Some(1_000_000);
                c
            })
            .collect();
        let config = PackerConfig {
            strategy: SelectionStrategy::Optimal,
            ..config()
        };
        let packed = pack(config, chunks, 5_000_000).unwrap();
        assert_eq!(packed.strategy, SelectionStrategy::Knapsack);
        assert_eq!(packed.chunks.len(), 5);
        assert_eq!(packed.notes.len(), 1);
        assert!(packed.notes[0].starts_with("optimal selection fell back to knapsack: exact selection needs"));
    }

    #[test]
    fn conflicts_are_reported_and_can_be_turned_off() {
        let mut forum = chunk("forum", "f", "Someone said the refund window is 90 days.", 0.5);
        forum.trust = TrustLevel::Untrusted;
        let chunks = || {
            vec![
                chunk("policy", "p", "The refund window is 30 days.", 0.9),
                forum.clone(),
            ]
        };
        let packed = pack(config(), chunks(), 100).unwrap();
        let kinds: Vec<ConflictKind> = packed.conflicts.iter().map(|c| c.kind).collect();
        assert_eq!(kinds, [ConflictKind::NumericDisagreement, ConflictKind::TrustMismatch]);
        assert_eq!(
            packed.conflicts[0].chunk_ids,
            [ChunkId::from("policy"), ChunkId::from("forum")]
        );
        let quiet = PackerConfig {
            detect_conflicts: false,
            ..config()
        };
        assert_eq!(pack(quiet, chunks(), 100).unwrap().conflicts, []);
    }

    #[test]
    fn async_pack_equals_blocking_pack() {
        let packer = ContextPacker::new(config()).unwrap();
        let ctx = RequestContext::local("acme");
        let chunks = vec![chunk("a", "d", "one", 0.3), chunk("b", "d", "two", 0.4)];
        let blocking = packer.pack_blocking(&ctx, chunks.clone(), 10).unwrap();
        let asynchronous = pollster::block_on(packer.pack(&ctx, chunks, 10)).unwrap();
        assert_eq!(blocking, asynchronous);
    }

    mod properties {
        use std::collections::HashSet;

        use proptest::prelude::*;

        use super::*;

        fn arb_chunk(i: usize) -> impl Strategy<Value = Chunk> {
            let texts = prop::sample::select(vec![
                "the refund window is 30 days",
                "The refund window is 14 days!",
                "the refund window is 30 days.",
                "alpha beta gamma delta epsilon",
                "alpha beta gamma delta epsilon zeta",
                "shipping is free above fifty euros",
                "rerankers score pairs jointly",
            ]);
            (
                texts,
                0usize..4,
                prop::sample::select(vec![0.0, 0.25, 0.5, 0.5, 0.9, -0.1]),
                1usize..30,
                prop::bool::weighted(0.1),
                prop::sample::select(vec![TrustLevel::Trusted, TrustLevel::Untrusted]),
            )
                .prop_map(move |(text, doc, score, tokens, pinned, trust)| {
                    let mut c = Chunk::with_content(format!("c{i:02}"), format!("d{doc}"), "acme", text);
                    c.score = Some(score);
                    c.token_count = Some(tokens);
                    c.pinned = pinned;
                    c.trust = trust;
                    c
                })
        }

        fn arb_chunks() -> impl Strategy<Value = Vec<Chunk>> {
            (0usize..16).prop_flat_map(|n| (0..n).map(arb_chunk).collect::<Vec<_>>())
        }

        fn arb_config() -> impl Strategy<Value = PackerConfig> {
            (
                prop::sample::select(PackOrder::ALL.to_vec()),
                prop::sample::select(SelectionStrategy::ALL.to_vec()),
                prop::option::of(prop::sample::select(vec![0.5, 0.8, 1.0])),
                1usize..4,
                prop::option::of(1usize..3),
            )
                .prop_map(|(order, strategy, jaccard_threshold, shingle_size, max_per_document)| {
                    PackerConfig {
                        order,
                        strategy,
                        jaccard_threshold,
                        shingle_size,
                        max_per_document,
                        ..config()
                    }
                })
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(200))]

            #[test]
            fn packs_are_within_budget_complete_and_pinned_first(
                chunks in arb_chunks(),
                config in arb_config(),
                budget in 1i64..200,
            ) {
                let pinned: Vec<ChunkId> = chunks.iter().filter(|c| c.pinned).map(|c| c.id.clone()).collect();
                let pinned_tokens: usize = chunks.iter().filter(|c| c.pinned).filter_map(|c| c.token_count).sum();
                let all: Vec<ChunkId> = chunks.iter().map(|c| c.id.clone()).collect();
                let result = pack(config.clone(), chunks, budget);
                if pinned_tokens as i64 > budget {
                    prop_assert!(matches!(result, Err(PackerError::PinnedOverBudget { .. })), "{result:?}");
                    return Ok(());
                }
                let packed = result.unwrap();
                prop_assert!(packed.tokens_used as i64 <= budget);
                prop_assert_eq!(packed.tokens_used, packed.chunks.iter().filter_map(|c| c.token_count).sum::<usize>());
                let head: Vec<ChunkId> = packed.chunks.iter().take(pinned.len()).map(|c| c.id.clone()).collect();
                prop_assert_eq!(head, pinned);
                let mut seen: Vec<ChunkId> = packed.chunks.iter().map(|c| c.id.clone()).collect();
                seen.extend(packed.dropped.iter().map(|d| d.id.clone()));
                prop_assert_eq!(seen.len(), all.len(), "each input chunk is accounted for once");
                prop_assert_eq!(seen.into_iter().collect::<HashSet<_>>(), all.into_iter().collect::<HashSet<_>>());
                if let Some(cap) = config.max_per_document {
                    for doc in 0..4 {
                        let doc = format!("d{doc}");
                        let n = packed.chunks.iter().filter(|c| !c.pinned && c.document_id.as_str() == doc).count();
                        prop_assert!(n <= cap);
                    }
                }
            }

            #[test]
            fn packs_do_not_depend_on_input_order(
                (chunks, shuffled) in arb_chunks().prop_flat_map(|c| (Just(c.clone()), Just(c).prop_shuffle())),
                config in arb_config(),
                budget in 1i64..200,
            ) {
                // Pinned chunks keep their input order by design, so only candidates are shuffled.
                let pinned: Vec<Chunk> = chunks.iter().filter(|c| c.pinned).cloned().collect();
                let shuffled: Vec<Chunk> = pinned.into_iter().chain(shuffled.into_iter().filter(|c| !c.pinned)).collect();
                let chunks: Vec<Chunk> = chunks.iter().filter(|c| c.pinned).cloned().chain(chunks.iter().filter(|c| !c.pinned).cloned()).collect();
                let a = pack(config.clone(), chunks.clone(), budget);
                let b = pack(config.clone(), shuffled, budget);
                prop_assert_eq!(&a, &pack(config.clone(), chunks, budget), "deterministic");
                match (a, b) {
                    (Ok(a), Ok(b)) if matches!(config.order, PackOrder::Input | PackOrder::Reverse) => {
                        let ids = |p: &PackedContext| p.chunks.iter().map(|c| c.id.clone()).collect::<HashSet<_>>();
                        prop_assert_eq!(ids(&a), ids(&b));
                        prop_assert_eq!(a.dropped, b.dropped);
                    }
                    (a, b) => prop_assert_eq!(a, b),
                }
            }

            #[test]
            fn a_foreign_tenant_is_always_refused(
                chunks in arb_chunks(),
                config in arb_config(),
                at in any::<prop::sample::Index>(),
                budget in 1i64..200,
            ) {
                let mut chunks = chunks;
                let foreign = Chunk::with_content("intruder", "d0", "globex", "the refund window is 30 days");
                let at = at.index(chunks.len() + 1);
                chunks.insert(at, foreign);
                let err = pack(config, chunks, budget).unwrap_err();
                prop_assert_eq!(err, PackerError::ForeignTenant {
                    chunk_id: "intruder".into(),
                    chunk_tenant: "globex".into(),
                    expected: "acme".into(),
                });
            }
        }
    }
}
