//! The orchestrator: [`ContextPacker`] runs the stages in order and accounts for every chunk.

mod admit;
mod candidates;
mod config;
mod context;
mod cut;
mod drops;
mod plan;

use std::borrow::Cow;

use rag_core::{
    Chunk, ConflictAnnotation, DroppedChunk, PackedContext, Packer, PackerError, RequestContext, async_trait,
};
use tracing::field::Empty;

use self::admit::{Request, admit, admit_borrowed};
use self::candidates::candidates;
pub use self::config::{PackerConfig, PackerConfigBuilder};
use self::context::{PieceCounts, Rendered};
pub use self::cut::MIN_CUT_TOKENS;
use self::plan::{Counted, Plan, plan};
use crate::conflicts::detect_conflicts;
use crate::render::ContextFormat;

/// Packs retrieved chunks into a token budget: admit (tenant, access, scoring), validate, pin,
/// rank, dedup, select, order, annotate.
///
/// Nothing is computed from what the principal cannot see: chunks whose `acl_labels` it does not
/// all hold are removed right after the tenant check, before any other stage (BM25 statistics,
/// sections, dedup, selection, conflicts, notes) looks at the input; only their number is
/// reported, in [`PackedContext::hidden_by_acl`].
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
/// let packer = ContextPacker::new(PackerConfig::default());
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
    /// A packer with `config` (checked when it was built, see [`PackerConfigBuilder::build`]).
    pub fn new(config: PackerConfig) -> Self {
        Self { config }
    }

    /// The configuration.
    pub fn config(&self) -> &PackerConfig {
        &self.config
    }

    /// Packs `chunks` into `budget` tokens for `ctx`'s tenant.
    ///
    /// The async form, as the [`Packer`] trait and the Python API have it. Packing itself is CPU-bound
    /// and does not yield: on a multi-threaded runtime serving other requests, call
    /// [`pack_blocking`](Self::pack_blocking) inside `spawn_blocking` (or from a plain thread)
    /// instead, so a large pack does not hold an executor thread. From synchronous code, call
    /// `pack_blocking` directly.
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
            let (chunks, request) = admit(&self.config, ctx, chunks, budget)?;
            self.pack_admitted(chunks, request)
        })
    }

    /// The stages after admission, on owned chunks the principal may all see.
    fn pack_admitted(&self, chunks: Vec<Chunk>, request: Request) -> Result<PackedContext, PackerError> {
        let (plan, ()) = plan(
            &self.config,
            &chunks,
            candidates(&self.config, &chunks, &request)?,
            self.counted(&chunks),
        )?;
        let (packed, dropped, plan) = plan.hand_over(chunks);
        let conflicts = self.conflicts(&packed);
        Ok(self.assemble(packed, dropped, conflicts, plan, request))
    }

    /// Packs borrowed candidates: like [`pack_blocking`](Self::pack_blocking), but the caller
    /// keeps `chunks` and the packed ones are cloned into the result.
    ///
    /// For packing the same candidates more than once (at several budgets, or before and after
    /// a reranker), and for callers that keep their candidates anyway. Freeing the candidates is
    /// then the caller's business: at 100,000 candidates that is a fifth of the time of an owned
    /// pack. When some candidates are hidden from the principal, or the packer scores them
    /// (see [`PackerConfig::query`]), the visible ones are cloned first: nothing of the hidden ones
    /// may reach any stage, and scoring writes each chunk's `score`.
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
    /// let packer = ContextPacker::new(PackerConfig::default());
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
            let (chunks, request) = match admit_borrowed(&self.config, ctx, chunks, budget)? {
                (Cow::Owned(chunks), request) => return self.pack_admitted(chunks, request),
                (Cow::Borrowed(chunks), request) => (chunks, request),
            };
            let (mut plan, ()) = plan(
                &self.config,
                chunks,
                candidates(&self.config, chunks, &request)?,
                self.counted(chunks),
            )?;
            let packed: Vec<Chunk> = plan.packed.iter().map(|&i| chunks[i].clone()).collect();
            // Conflict detection reads the packed chunks only: it runs while the ids are cloned.
            let (conflicts, dropped) = rayon::join(|| self.conflicts(&packed), || plan.clone_dropped(chunks));
            Ok(self.assemble(packed, dropped, conflicts, plan, request))
        })
    }

    /// Packs `chunks` and renders them as the context of a prompt, within `budget` tokens of the
    /// *rendered* text: template text, breadcrumb lines and delimiters count, and chunks of one
    /// document whose spans overlap or touch are shown once, as one excerpt (see
    /// [`ContextFormat`]). The result carries the text in [`PackedContext::context`], its exact
    /// token count under the configured counter as `tokens_used`, and the excerpts in
    /// [`PackedContext::excerpts`]; `chunks` lists the packed chunks in the order the context
    /// shows them.
    ///
    /// ```
    /// use rag_core::{Chunk, RequestContext, Span};
    /// use rag_packer::{ContextFormat, ContextPacker};
    ///
    /// let text = "Streams end when the source is drained. Call end() to finish writing.";
    /// let piece = |id: &str, start: usize, end: usize, score: f64| {
    ///     let mut c = Chunk::with_content(id, "streams.md", "acme", &text[start..end]);
    ///     c.span = Some(Span::new(start, end));
    ///     c.score = Some(score);
    ///     c.metadata.insert("heading_path".into(), serde_json::json!(["Streams", "Ending"]));
    ///     c
    /// };
    /// let chunks = vec![piece("a", 0, 39, 0.9), piece("b", 17, 69, 0.8)];
    /// let packed = ContextPacker::default().pack_context_blocking(&RequestContext::local("acme"), chunks, 100, &ContextFormat::default())?;
    /// assert_eq!(packed.context.as_deref(), Some(format!("Streams > Ending\n{text}").as_str()));
    /// assert_eq!(packed.excerpts.len(), 1, "the overlap is printed once");
    /// # Ok::<(), rag_core::PackerError>(())
    /// ```
    pub async fn pack_context(
        &self,
        ctx: &RequestContext,
        chunks: Vec<Chunk>,
        budget: i64,
        format: &ContextFormat,
    ) -> Result<PackedContext, PackerError> {
        self.pack_context_blocking(ctx, chunks, budget, format)
    }

    /// [`pack_context`](Self::pack_context), synchronously.
    pub fn pack_context_blocking(
        &self,
        ctx: &RequestContext,
        chunks: Vec<Chunk>,
        budget: i64,
        format: &ContextFormat,
    ) -> Result<PackedContext, PackerError> {
        self.traced(ctx, chunks.len(), budget, || {
            let (mut chunks, request) = admit(&self.config, ctx, chunks, budget)?;
            let mut pieces = PieceCounts::default();
            let mut planned = plan(
                &self.config,
                &chunks,
                candidates(&self.config, &chunks, &request)?,
                Rendered::new(&self.config, format, &chunks, &mut pieces),
            )?;
            // Cut to fit: the best left-out chunk's best part joins the candidates, and the context
            // is planned again; kept only if the part made it in.
            let mut cut_from = None;
            if let Some((original, part)) = cut::cut_for(&self.config, format, &chunks, &planned.0)? {
                let ids = (chunks[original].id.clone(), part.id.clone());
                chunks.push(part);
                // The whole chunk is set aside: knapsack and optimal, which may have left out a
                // chunk that fits, would otherwise pack it beside its own part.
                let mut again_candidates = candidates(&self.config, &chunks, &request)?;
                again_candidates.set_aside_for_its_part(original);
                let again = plan(
                    &self.config,
                    &chunks,
                    again_candidates,
                    Rendered::new(&self.config, format, &chunks, &mut pieces),
                )?;
                if again.0.packed.contains(&(chunks.len() - 1)) {
                    planned = again;
                    cut_from = Some(ids);
                } else {
                    chunks.pop();
                }
            }
            let (plan, (text, excerpts)) = planned;
            let (packed, mut dropped, plan) = plan.hand_over(chunks);
            if let Some((original, part)) = &cut_from {
                cut::mark_cut(&mut dropped, original, part);
            }
            let conflicts = self.conflicts(&packed);
            let mut result = self.assemble(packed, dropped, conflicts, plan, request);
            result.context = Some(text);
            result.excerpts = excerpts;
            Ok(result)
        })
    }

    /// The fit of [`pack`](Self::pack) for `chunks`: the sum of their counts.
    fn counted<'a>(&'a self, chunks: &'a [Chunk]) -> Counted<'a> {
        Counted {
            config: &self.config,
            chunks,
        }
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
            rag.pack.hidden_by_acl = Empty,
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
                span.record("rag.pack.hidden_by_acl", saturating_i64(packed.hidden_by_acl));
            }
            Err(err) => {
                span.record("otel.status_code", "ERROR");
                span.record("otel.status_description", err.to_string());
            }
        }
        result
    }

    /// Stage 8: conflicts among the packed chunks (advisory notes; the detector cannot fail on
    /// any input, so a panic in it is a bug and is not caught).
    fn conflicts(&self, packed: &[Chunk]) -> Vec<ConflictAnnotation> {
        if self.config.detect_conflicts {
            detect_conflicts(packed)
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
        request: Request,
    ) -> PackedContext {
        let mut result = PackedContext::new(
            packed,
            plan.tokens_used,
            plan.budget,
            self.config.token_counter.name(),
            self.config.order.clone(),
            plan.strategy,
        );
        result.conflicts = conflicts;
        result.dropped = dropped;
        result.notes = plan.notes;
        result.hidden_by_acl = request.hidden;
        result.scoring = request.scoring;
        result.effective_scores = plan.packed.iter().map(|&i| plan.scores[i]).collect();
        if !request.score_parts.is_empty() {
            // A part cut to fit was added after scoring: it has no parts of its own.
            result.score_parts = plan
                .packed
                .iter()
                .map(|&i| request.score_parts.get(i).copied())
                .collect();
        }
        result
    }
}

impl Default for ContextPacker {
    /// As Python's `ContextPacker()`: [`PackerConfig::default`] (lost in the middle, greedy, exact
    /// dedup only, conflicts on, `cl100k_base`).
    fn default() -> Self {
        Self {
            config: PackerConfig::default(),
        }
    }
}

#[async_trait]
impl Packer for ContextPacker {
    async fn pack(&self, ctx: &RequestContext, chunks: Vec<Chunk>, budget: i64) -> Result<PackedContext, PackerError> {
        self.pack_blocking(ctx, chunks, budget)
    }
}

fn saturating_i64(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod context_tests;
#[cfg(test)]
mod hidden_tests;
#[cfg(test)]
mod tests;
