//! The Repacker: a lighter, configurable way to turn chunks into prompt context, in three stages.
//!
//! - **PACK** fits chunks against `size_limit`, per batch: `truncate` keeps the longest prefix that
//!   fits, `greedy` takes each chunk that still fits, `knapsack` maximises total score
//!   ([`knapsack_select`]). Batches come from `batch_size`: none (one batch), a count (fixed-size
//!   partitions, each then packed), or `auto` (next-fit by `size_limit`).
//! - **ORDER** arranges each batch: `forward`, `reverse`, or `sides` ([`sides_order`]).
//! - **SHAPE** returns chunks, or renders each chunk (its content, or a [`ContextConfig`]
//!   template) and joins them with the delimiter.
//!
//! Unlike [`ContextPacker`](crate::ContextPacker), the Repacker keeps the caller's order as its
//! notion of relevance, does no dedup and no tenant check, and measures size with any function.
//! The size limit counts chunks only, not delimiters.

mod config;

use rag_core::{Chunk, RenderError, RepackError};

pub use self::config::{
    BatchSize, RepackMethod, RepackMode, RepackPack, RepackerConfig, RepackerConfigBuilder, SizeFn,
};
use crate::order::sides_order;
use crate::render::content_of;
use crate::select::{SelectionItem, fit_to_budget, knapsack_select};

/// What [`Repacker::repack`] returns; the variant follows from `mode` and `batch_size`.
#[derive(Debug, Clone, PartialEq)]
pub enum RepackOutput {
    /// `chunk` mode, no batching.
    Chunks(Vec<Chunk>),
    /// `chunk` mode, batched.
    Batches(Vec<Vec<Chunk>>),
    /// `context` mode, no batching.
    Context(String),
    /// `context` mode, batched: one string per batch.
    Contexts(Vec<String>),
}

/// Runs PACK, ORDER and SHAPE over chunks.
///
/// - PACK fits chunks against `size_limit`, per batch: `truncate` keeps the longest prefix that
///   fits, `greedy` takes each chunk that still fits, `knapsack` maximises total score
///   ([`knapsack_select`]). Batches come from `batch_size`: none (one batch), a count (fixed-size
///   partitions, each packed on its own), or `auto` (next-fit by `size_limit`; a chunk larger than
///   the limit is an error, since no batch could hold it).
/// - ORDER arranges each batch: `forward`, `reverse`, or `sides` ([`sides_order`]).
/// - SHAPE returns the chunks (or batches), or renders each chunk (its content, or a
///   [`ContextConfig`](crate::ContextConfig) template) and joins them with the delimiter (one string per batch).
///
/// The given order is the Repacker's notion of relevance; it does no dedup and no tenant check
/// (use [`ContextPacker`](crate::ContextPacker) for that). The size limit counts chunks, not
/// delimiters. A count batch whose chunks all fail to fit stays in the output, empty, so batch `i`
/// always comes from input partition `i`.
///
/// ```
/// use rag_core::Chunk;
/// use rag_packer::{RepackMethod, RepackMode, RepackOutput, Repacker, RepackerConfig};
///
/// let chunks: Vec<Chunk> = ["alpha", "beta", "gamma"]
///     .iter()
///     .enumerate()
///     .map(|(i, text)| Chunk::with_content(format!("c{i}"), "d", "t", *text))
///     .collect();
/// let config = RepackerConfig::builder()
///     .with_method(RepackMethod::Reverse)
///     .with_mode(RepackMode::Context)
///     .with_delimiter(" | ")
///     .with_size_limit(Some(9)) // characters: alpha (5) + beta (4)
///     .build()?;
/// let repacker = Repacker::new(config);
/// assert_eq!(repacker.repack(chunks)?, RepackOutput::Context("beta | alpha".into()));
/// # Ok::<(), rag_core::RepackError>(())
/// ```
#[derive(Debug, Clone)]
pub struct Repacker {
    config: RepackerConfig,
}

impl Repacker {
    /// A Repacker with `config` (checked when it was built).
    pub fn new(config: RepackerConfig) -> Self {
        Self { config }
    }

    /// The configuration.
    pub fn config(&self) -> &RepackerConfig {
        &self.config
    }

    /// Changes the PACK strategy for the next [`repack`](Self::repack) calls, as Python's
    /// `repacker.pack = ...` does; checked like a new configuration.
    ///
    /// ```
    /// use rag_core::Chunk;
    /// use rag_packer::{RepackOutput, RepackPack, Repacker, RepackerConfig};
    ///
    /// let chunks = || vec![Chunk::with_content("a", "d", "t", "aaaaaa"), Chunk::with_content("b", "d", "t", "bb")];
    /// let mut repacker = Repacker::new(RepackerConfig::builder().with_size_limit(Some(4)).build()?);
    /// assert_eq!(repacker.repack(chunks())?, RepackOutput::Chunks(vec![]), "truncate: the first does not fit");
    /// repacker.set_pack(RepackPack::Greedy)?;
    /// assert_eq!(repacker.repack(chunks())?, RepackOutput::Chunks(vec![chunks().remove(1)]));
    /// # Ok::<(), rag_core::RepackError>(())
    /// ```
    pub fn set_pack(&mut self, pack: RepackPack) -> Result<(), RepackError> {
        self.config = self.config.to_builder().with_pack(pack).build()?;
        Ok(())
    }

    /// Repacks `chunks`, taken in the given order.
    pub fn repack(&self, chunks: Vec<Chunk>) -> Result<RepackOutput, RepackError> {
        let config = &self.config;
        let sized: Vec<(Chunk, usize)> = chunks
            .into_iter()
            .map(|chunk| {
                let size = config.size_fn.size(&chunk)?;
                Ok((chunk, size))
            })
            .collect::<Result<_, RepackError>>()?;
        if config.pack == RepackPack::Knapsack
            && let Some((chunk, _)) = sized.iter().find(|(c, _)| !c.score_or_zero().is_finite())
        {
            return Err(RepackError::NonFiniteScore {
                chunk_id: chunk.id.clone(),
                score: chunk.score_or_zero(),
            });
        }

        let batches: Vec<Vec<(Chunk, usize)>> = match (config.batch_size, config.size_limit) {
            (BatchSize::None, _) => vec![self.fit(sized)],
            (BatchSize::Count(n), _) => {
                let mut batches = Vec::new();
                let mut rest = sized.into_iter().peekable();
                while rest.peek().is_some() {
                    batches.push(self.fit(rest.by_ref().take(n).collect()));
                }
                batches
            }
            (BatchSize::Auto, Some(limit)) => next_fit(sized, limit)?,
            (BatchSize::Auto, None) => {
                return Err(RepackError::InvalidConfig {
                    message: "batch_size auto needs a size_limit".to_owned(),
                });
            }
        };

        let ordered: Vec<Vec<Chunk>> = batches
            .into_iter()
            .map(|batch| {
                let batch: Vec<Chunk> = batch.into_iter().map(|(chunk, _)| chunk).collect();
                match config.method {
                    RepackMethod::Forward => batch,
                    RepackMethod::Reverse => batch.into_iter().rev().collect(),
                    RepackMethod::Sides => sides_order(batch),
                }
            })
            .collect();

        let batched = config.batch_size != BatchSize::None;
        match config.mode {
            RepackMode::Chunk if batched => Ok(RepackOutput::Batches(ordered)),
            RepackMode::Chunk => Ok(RepackOutput::Chunks(ordered.into_iter().flatten().collect())),
            RepackMode::Context => {
                let contexts: Vec<String> = ordered
                    .iter()
                    .map(|batch| self.render(batch))
                    .collect::<Result<_, _>>()?;
                if batched {
                    Ok(RepackOutput::Contexts(contexts))
                } else {
                    Ok(RepackOutput::Context(contexts.into_iter().next().unwrap_or_default()))
                }
            }
        }
    }

    /// PACK of one batch against the size limit, keeping the batch's order.
    fn fit(&self, batch: Vec<(Chunk, usize)>) -> Vec<(Chunk, usize)> {
        let Some(limit) = self.config.size_limit else {
            return batch;
        };
        let keep: Vec<usize> = match self.config.pack {
            RepackPack::Truncate => {
                let mut total = 0usize;
                batch
                    .iter()
                    .map_while(|(_, size)| {
                        total = total.saturating_add(*size);
                        (total <= limit).then_some(())
                    })
                    .enumerate()
                    .map(|(i, ())| i)
                    .collect()
            }
            RepackPack::Greedy | RepackPack::Knapsack => {
                let items: Vec<SelectionItem> = batch
                    .iter()
                    .map(|(chunk, size)| SelectionItem {
                        tokens: *size,
                        score: chunk.score_or_zero(),
                        document: 0,
                    })
                    .collect();
                if self.config.pack == RepackPack::Greedy {
                    fit_to_budget(&items, limit, None)
                } else {
                    knapsack_select(&items, limit, None)
                }
            }
        };
        let mut keep = keep.into_iter().peekable();
        batch
            .into_iter()
            .enumerate()
            .filter_map(|(i, item)| keep.next_if_eq(&i).map(|_| item))
            .collect()
    }

    fn render(&self, batch: &[Chunk]) -> Result<String, RepackError> {
        let parts: Vec<String> = batch
            .iter()
            .map(|chunk| match &self.config.context {
                Some(template) => template.render(chunk),
                None => content_of(chunk).map(str::to_owned),
            })
            .collect::<Result<_, RenderError>>()?;
        Ok(parts.join(&self.config.delimiter))
    }
}

/// Next-fit batching: fill the current batch until the next chunk would overflow it.
fn next_fit(sized: Vec<(Chunk, usize)>, limit: usize) -> Result<Vec<Vec<(Chunk, usize)>>, RepackError> {
    let mut batches = Vec::new();
    let mut current: Vec<(Chunk, usize)> = Vec::new();
    let mut used = 0usize;
    for (chunk, size) in sized {
        if size > limit {
            return Err(RepackError::ChunkTooLarge {
                chunk_id: chunk.id,
                size,
                limit,
            });
        }
        // `used <= limit` holds, so the room left cannot underflow; `used + size` could
        // overflow for sizes near the top of the range.
        if size > limit - used && !current.is_empty() {
            batches.push(std::mem::take(&mut current));
            used = 0;
        }
        used += size;
        current.push((chunk, size));
    }
    if !current.is_empty() {
        batches.push(current);
    }
    Ok(batches)
}

#[cfg(test)]
mod tests;
