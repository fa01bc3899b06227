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

use std::fmt;
use std::sync::Arc;

use rag_core::{Chunk, ChunkId, TokenCounter, TokenizerError};
use serde_json::Value;

use crate::order::sides_order;
use crate::select::{SelectionItem, fit_to_budget, knapsack_select};

/// Why the Repacker refused its configuration or input.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RepackError {
    /// The settings do not work together (e.g. `batch_size` auto without a `size_limit`).
    #[error("invalid repacker configuration: {message}")]
    InvalidConfig {
        /// What is wrong.
        message: String,
    },
    /// A context template does not parse or names an unknown field.
    #[error("invalid context template {template:?}: {message}")]
    InvalidTemplate {
        /// The template.
        template: String,
        /// What is wrong.
        message: String,
    },
    /// A chunk has no `content` where its text is needed (character size, rendering).
    #[error("chunk {chunk_id} has no content to measure or render (the repacker does not fetch content_ref)")]
    MissingContent {
        /// The chunk.
        chunk_id: ChunkId,
    },
    /// A token-sized chunk has neither content nor a cached `token_count`.
    #[error("chunk {chunk_id} has a content_ref but no content and no token_count")]
    MissingTokenCount {
        /// The chunk.
        chunk_id: ChunkId,
    },
    /// With `batch_size` auto, a chunk larger than `size_limit` fits no batch.
    #[error("chunk {chunk_id} has size {size}, more than the size limit of {limit}: it fits no batch")]
    ChunkTooLarge {
        /// The chunk.
        chunk_id: ChunkId,
        /// Its size.
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// Knapsack packing needs finite scores.
    #[error("chunk {chunk_id} has a non-finite score ({score})")]
    NonFiniteScore {
        /// The chunk.
        chunk_id: ChunkId,
        /// The score.
        score: f64,
    },
    /// The token counter of [`SizeFn::Tokens`] failed on a chunk without a cached `token_count`.
    #[error("chunk {chunk_id}: {source}")]
    Tokenizer {
        /// The chunk whose content was being counted.
        chunk_id: ChunkId,
        /// The counter's error.
        source: TokenizerError,
    },
}

/// ORDER: how chunks are arranged within each batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RepackMethod {
    /// As given.
    #[default]
    Forward,
    /// Reversed: the first chunk ends up last, next to the question.
    Reverse,
    /// LangChain's long-context reorder, taking the given order as relevance order ([`sides_order`]).
    Sides,
}

/// SHAPE: what the Repacker returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RepackMode {
    /// The chunks themselves.
    #[default]
    Chunk,
    /// Rendered text, chunks joined by the delimiter.
    Context,
}

/// PACK: how chunks are fitted against the size limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RepackPack {
    /// The longest prefix that fits.
    #[default]
    Truncate,
    /// Each chunk that still fits, in order (smaller later chunks may fill a gap).
    Greedy,
    /// The highest total score that fits ([`knapsack_select`]), kept in the given order.
    Knapsack,
}

/// PACK: how chunks are grouped into batches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BatchSize {
    /// One batch of everything.
    #[default]
    None,
    /// Consecutive batches of this many chunks (the last may be shorter), each packed on its own.
    Count(usize),
    /// Next-fit by `size_limit`: a new batch starts when the next chunk would overflow the current one.
    Auto,
}

/// How the Repacker measures one chunk.
#[derive(Clone, Default)]
pub enum SizeFn {
    /// Unicode scalar values of `content` (the default).
    #[default]
    Chars,
    /// Tokens: the cached `token_count`, else the counter on `content`.
    Tokens(Arc<dyn TokenCounter>),
    /// Any function of the chunk.
    Custom(Arc<dyn Fn(&Chunk) -> usize + Send + Sync>),
}

impl SizeFn {
    /// A size function from a closure.
    pub fn custom(f: impl Fn(&Chunk) -> usize + Send + Sync + 'static) -> Self {
        Self::Custom(Arc::new(f))
    }

    /// The size of `chunk`.
    pub fn size(&self, chunk: &Chunk) -> Result<usize, RepackError> {
        match self {
            Self::Chars => chunk
                .content()
                .map(|c| c.chars().count())
                .ok_or_else(|| RepackError::MissingContent {
                    chunk_id: chunk.id.clone(),
                }),
            Self::Tokens(counter) => match (chunk.token_count, chunk.content()) {
                (Some(tokens), _) => Ok(tokens),
                (None, Some(content)) => counter.count(content).map_err(|source| RepackError::Tokenizer {
                    chunk_id: chunk.id.clone(),
                    source,
                }),
                (None, None) => Err(RepackError::MissingTokenCount {
                    chunk_id: chunk.id.clone(),
                }),
            },
            Self::Custom(f) => Ok(f(chunk)),
        }
    }
}

impl fmt::Debug for SizeFn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Chars => f.write_str("Chars"),
            Self::Tokens(counter) => write!(f, "Tokens({})", counter.name()),
            Self::Custom(_) => f.write_str("Custom(..)"),
        }
    }
}

/// One piece of a parsed template.
#[derive(Debug, Clone, PartialEq)]
enum Segment {
    Text(String),
    Content,
    Id,
    SourceUri,
    Score,
    Metadata(String),
}

/// Renders each chunk through a template before the chunks are joined.
///
/// Placeholders: `{content}`, `{id}`, `{source_uri}`, `{score}`, `{metadata.KEY}`; `{{` and `}}` are
/// literal braces. A missing source, score or metadata key renders as nothing; a metadata value
/// that is not a string renders as JSON. An unknown placeholder is an error when the template is
/// parsed, not when it is used.
///
/// ```
/// use rag_core::Chunk;
/// use rag_packer::ContextConfig;
///
/// let template = ContextConfig::new("[{id} from {source_uri}, {metadata.kind}] {content}")?;
/// let mut chunk = Chunk::with_content("c1", "d", "t", "Rerankers score pairs.");
/// chunk.source_uri = Some("docs/rerank.md".into());
/// chunk.metadata.insert("kind".into(), "body".into());
/// assert_eq!(template.render(&chunk)?, "[c1 from docs/rerank.md, body] Rerankers score pairs.");
/// assert!(ContextConfig::new("{nope}").is_err());
/// # Ok::<(), rag_packer::RepackError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ContextConfig {
    template: String,
    segments: Vec<Segment>,
}

impl ContextConfig {
    /// Parses `template`.
    pub fn new(template: impl Into<String>) -> Result<Self, RepackError> {
        let template = template.into();
        let error = |message: String| RepackError::InvalidTemplate {
            template: template.clone(),
            message,
        };
        let mut segments = Vec::new();
        let mut text = String::new();
        let mut chars = template.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '{' if chars.peek() == Some(&'{') => {
                    chars.next();
                    text.push('{');
                }
                '}' if chars.peek() == Some(&'}') => {
                    chars.next();
                    text.push('}');
                }
                '}' => return Err(error("unmatched '}' (write '}}' for a literal brace)".to_owned())),
                '{' => {
                    let mut name = String::new();
                    loop {
                        match chars.next() {
                            Some('}') => break,
                            Some(c) => name.push(c),
                            None => return Err(error(format!("unclosed placeholder {{{name}"))),
                        }
                    }
                    let field = match name.as_str() {
                        "content" => Segment::Content,
                        "id" => Segment::Id,
                        "source_uri" => Segment::SourceUri,
                        "score" => Segment::Score,
                        other => match other.strip_prefix("metadata.") {
                            Some(key) if !key.is_empty() => Segment::Metadata(key.to_owned()),
                            _ => {
                                return Err(error(format!(
                                    "unknown placeholder {{{other}}}; known: {{content}}, {{id}}, \
                                     {{source_uri}}, {{score}}, {{metadata.KEY}}"
                                )));
                            }
                        },
                    };
                    if !text.is_empty() {
                        segments.push(Segment::Text(std::mem::take(&mut text)));
                    }
                    segments.push(field);
                }
                c => text.push(c),
            }
        }
        if !text.is_empty() {
            segments.push(Segment::Text(text));
        }
        Ok(Self { template, segments })
    }

    /// The template as given.
    pub fn template(&self) -> &str {
        &self.template
    }

    /// `chunk` rendered through the template; `{content}` of a chunk without content is an error.
    pub fn render(&self, chunk: &Chunk) -> Result<String, RepackError> {
        let mut out = String::new();
        for segment in &self.segments {
            match segment {
                Segment::Text(text) => out.push_str(text),
                Segment::Content => out.push_str(content_of(chunk)?),
                Segment::Id => out.push_str(chunk.id.as_str()),
                Segment::SourceUri => out.push_str(chunk.source_uri.as_deref().unwrap_or("")),
                Segment::Score => {
                    if let Some(score) = chunk.score {
                        out.push_str(&score.to_string());
                    }
                }
                Segment::Metadata(key) => match chunk.metadata.get(key) {
                    Some(Value::String(s)) => out.push_str(s),
                    Some(other) => out.push_str(&other.to_string()),
                    None => {}
                },
            }
        }
        Ok(out)
    }
}

fn content_of(chunk: &Chunk) -> Result<&str, RepackError> {
    chunk.content().ok_or_else(|| RepackError::MissingContent {
        chunk_id: chunk.id.clone(),
    })
}

/// Everything a [`Repacker`] is configured with; [`Repacker::builder`] is the short way to set it.
#[derive(Debug, Clone)]
pub struct RepackerConfig {
    /// ORDER within each batch.
    pub method: RepackMethod,
    /// SHAPE of the output.
    pub mode: RepackMode,
    /// What joins rendered chunks in `context` mode (default a blank line, `"\n\n"`).
    pub delimiter: String,
    /// How a chunk is measured (default: characters of its content).
    pub size_fn: SizeFn,
    /// The most a batch may hold, in `size_fn` units; `None` packs nothing out.
    pub size_limit: Option<usize>,
    /// PACK strategy against `size_limit`.
    pub pack: RepackPack,
    /// How chunks are grouped into batches.
    pub batch_size: BatchSize,
    /// Template rendering for `context` mode; `None` renders each chunk's content.
    pub context: Option<ContextConfig>,
}

impl Default for RepackerConfig {
    fn default() -> Self {
        Self {
            method: RepackMethod::default(),
            mode: RepackMode::default(),
            delimiter: "\n\n".to_owned(),
            size_fn: SizeFn::default(),
            size_limit: None,
            pack: RepackPack::default(),
            batch_size: BatchSize::default(),
            context: None,
        }
    }
}

/// Builds a [`Repacker`] step by step; [`build`](Self::build) checks the combination.
#[derive(Debug, Clone, Default)]
pub struct RepackerBuilder {
    config: RepackerConfig,
}

impl RepackerBuilder {
    /// Sets the ORDER method.
    #[must_use]
    pub fn method(mut self, method: RepackMethod) -> Self {
        self.config.method = method;
        self
    }

    /// Sets the SHAPE mode.
    #[must_use]
    pub fn mode(mut self, mode: RepackMode) -> Self {
        self.config.mode = mode;
        self
    }

    /// Sets the delimiter of `context` mode.
    #[must_use]
    pub fn delimiter(mut self, delimiter: impl Into<String>) -> Self {
        self.config.delimiter = delimiter.into();
        self
    }

    /// Sets how chunks are measured.
    #[must_use]
    pub fn size_fn(mut self, size_fn: SizeFn) -> Self {
        self.config.size_fn = size_fn;
        self
    }

    /// Sets the size limit of a batch.
    #[must_use]
    pub fn size_limit(mut self, limit: usize) -> Self {
        self.config.size_limit = Some(limit);
        self
    }

    /// Sets the PACK strategy.
    #[must_use]
    pub fn pack(mut self, pack: RepackPack) -> Self {
        self.config.pack = pack;
        self
    }

    /// Sets the batching.
    #[must_use]
    pub fn batch_size(mut self, batch_size: BatchSize) -> Self {
        self.config.batch_size = batch_size;
        self
    }

    /// Sets the template of `context` mode.
    #[must_use]
    pub fn context(mut self, context: ContextConfig) -> Self {
        self.config.context = Some(context);
        self
    }

    /// The Repacker, or an error if the settings do not work together.
    pub fn build(self) -> Result<Repacker, RepackError> {
        Repacker::new(self.config)
    }
}

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
///   [`ContextConfig`] template) and joins them with the delimiter (one string per batch).
///
/// The given order is the Repacker's notion of relevance; it does no dedup and no tenant check
/// (use [`ContextPacker`](crate::ContextPacker) for that). The size limit counts chunks, not
/// delimiters. A count batch whose chunks all fail to fit stays in the output, empty, so batch `i`
/// always comes from input partition `i`.
///
/// ```
/// use rag_core::Chunk;
/// use rag_packer::{RepackMethod, RepackMode, RepackOutput, Repacker};
///
/// let chunks: Vec<Chunk> = ["alpha", "beta", "gamma"]
///     .iter()
///     .enumerate()
///     .map(|(i, text)| Chunk::with_content(format!("c{i}"), "d", "t", *text))
///     .collect();
/// let repacker = Repacker::builder()
///     .method(RepackMethod::Reverse)
///     .mode(RepackMode::Context)
///     .delimiter(" | ")
///     .size_limit(9) // characters: alpha (5) + beta (4)
///     .build()?;
/// assert_eq!(repacker.repack(chunks)?, RepackOutput::Context("beta | alpha".into()));
/// # Ok::<(), rag_packer::RepackError>(())
/// ```
#[derive(Debug, Clone)]
pub struct Repacker {
    config: RepackerConfig,
}

impl Repacker {
    /// A builder starting from the defaults (forward, chunk mode, `"\n\n"`, characters, no limit,
    /// truncate, no batching, no template).
    pub fn builder() -> RepackerBuilder {
        RepackerBuilder::default()
    }

    /// A Repacker with `config`, or an error if the settings do not work together.
    pub fn new(config: RepackerConfig) -> Result<Self, RepackError> {
        let invalid = |message: &str| {
            Err(RepackError::InvalidConfig {
                message: message.to_owned(),
            })
        };
        if config.size_limit == Some(0) {
            return invalid("size_limit must be at least 1");
        }
        if config.batch_size == BatchSize::Count(0) {
            return invalid("batch_size must be at least 1");
        }
        if config.batch_size == BatchSize::Auto && config.size_limit.is_none() {
            return invalid("batch_size auto needs a size_limit");
        }
        if config.batch_size == BatchSize::Auto && config.pack != RepackPack::Truncate {
            return invalid("pack has no effect with batch_size auto: every chunk is placed in some batch");
        }
        if config.size_limit.is_none() && config.pack != RepackPack::Truncate {
            return invalid("pack greedy or knapsack needs a size_limit");
        }
        if config.mode == RepackMode::Chunk && config.context.is_some() {
            return invalid("a context template needs mode context");
        }
        Ok(Self { config })
    }

    /// The configuration.
    pub fn config(&self) -> &RepackerConfig {
        &self.config
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
            .collect::<Result<_, _>>()?;
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
        if used + size > limit && !current.is_empty() {
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
mod tests {
    use super::*;

    fn chunks(texts: &[&str]) -> Vec<Chunk> {
        texts
            .iter()
            .enumerate()
            .map(|(i, t)| Chunk::with_content(format!("c{i}"), "d", "t", *t))
            .collect()
    }

    fn ids(output: &RepackOutput) -> Vec<Vec<String>> {
        let names = |batch: &[Chunk]| batch.iter().map(|c| c.id.to_string()).collect::<Vec<_>>();
        match output {
            RepackOutput::Chunks(batch) => vec![names(batch)],
            RepackOutput::Batches(batches) => batches.iter().map(|b| names(b)).collect(),
            other => panic!("not chunks: {other:?}"),
        }
    }

    #[test]
    fn defaults_return_the_chunks_unchanged() {
        let repacker = Repacker::builder().build().unwrap();
        let out = repacker.repack(chunks(&["a", "b", "c"])).unwrap();
        assert_eq!(ids(&out), [["c0", "c1", "c2"]]);
    }

    #[test]
    fn pack_strategies_against_the_size_limit() {
        // Sizes 4, 6, 2, 3 characters; limit 9.
        let input = || chunks(&["aaaa", "bbbbbb", "cc", "ddd"]);
        let with = |pack| Repacker::builder().size_limit(9).pack(pack).build().unwrap();
        let truncate = with(RepackPack::Truncate).repack(input()).unwrap();
        assert_eq!(
            ids(&truncate),
            [["c0"]],
            "the prefix stops at the first chunk that does not fit"
        );
        let greedy = with(RepackPack::Greedy).repack(input()).unwrap();
        assert_eq!(ids(&greedy), [["c0", "c2", "c3"]]);
        let mut scored = input();
        for (chunk, score) in scored.iter_mut().zip([0.1, 0.9, 0.1, 0.5]) {
            chunk.score = Some(score);
        }
        let knapsack = with(RepackPack::Knapsack).repack(scored).unwrap();
        assert_eq!(
            ids(&knapsack),
            [["c1", "c3"]],
            "score 1.4 in 9 characters, kept in input order"
        );
    }

    #[test]
    fn methods_order_each_batch() {
        let input = || chunks(&["1", "2", "3", "4", "5"]);
        let with = |method| {
            Repacker::builder()
                .method(method)
                .batch_size(BatchSize::Count(4))
                .build()
                .unwrap()
        };
        assert_eq!(
            ids(&with(RepackMethod::Reverse).repack(input()).unwrap()),
            [vec!["c3", "c2", "c1", "c0"], vec!["c4"]]
        );
        assert_eq!(
            ids(&with(RepackMethod::Sides).repack(input()).unwrap()),
            [vec!["c1", "c3", "c2", "c0"], vec!["c4"]]
        );
    }

    #[test]
    fn count_batches_are_packed_one_by_one_and_auto_is_next_fit() {
        let input = || chunks(&["aaaa", "bbbb", "cc", "dddddd", "e"]);
        let counted = Repacker::builder()
            .batch_size(BatchSize::Count(2))
            .size_limit(5)
            .build()
            .unwrap()
            .repack(input())
            .unwrap();
        assert_eq!(ids(&counted), [vec!["c0"], vec!["c2"], vec!["c4"]]);
        let auto = Repacker::builder()
            .batch_size(BatchSize::Auto)
            .size_limit(8)
            .build()
            .unwrap()
            .repack(input())
            .unwrap();
        assert_eq!(ids(&auto), [vec!["c0", "c1"], vec!["c2", "c3"], vec!["c4"]]);
        let err = Repacker::builder()
            .batch_size(BatchSize::Auto)
            .size_limit(5)
            .build()
            .unwrap()
            .repack(input())
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "chunk c3 has size 6, more than the size limit of 5: it fits no batch"
        );
    }

    #[test]
    fn context_mode_renders_and_joins() {
        let mut input = chunks(&["first", "second"]);
        input[0].score = Some(0.5);
        input[0].metadata.insert("page".into(), serde_json::json!(3));
        let repacker = Repacker::builder()
            .mode(RepackMode::Context)
            .context(ContextConfig::new("<{id} score={score} page={metadata.page}>{{{content}}}").unwrap())
            .delimiter("\n")
            .build()
            .unwrap();
        assert_eq!(
            repacker.repack(input.clone()).unwrap(),
            RepackOutput::Context("<c0 score=0.5 page=3>{first}\n<c1 score= page=>{second}".into())
        );
        let batched = Repacker::builder()
            .mode(RepackMode::Context)
            .batch_size(BatchSize::Count(1))
            .build()
            .unwrap();
        assert_eq!(
            batched.repack(input).unwrap(),
            RepackOutput::Contexts(vec!["first".into(), "second".into()])
        );
    }

    #[test]
    fn size_functions() {
        struct Words;
        impl TokenCounter for Words {
            fn count(&self, text: &str) -> Result<usize, TokenizerError> {
                Ok(text.split_whitespace().count())
            }
            fn name(&self) -> &str {
                "words"
            }
        }
        let chunk = Chunk::with_content("c", "d", "t", "héllo wörld");
        assert_eq!(SizeFn::Chars.size(&chunk).unwrap(), 11);
        assert_eq!(SizeFn::Tokens(Arc::new(Words)).size(&chunk).unwrap(), 2);
        assert_eq!(SizeFn::custom(|c| c.id.as_str().len() * 10).size(&chunk).unwrap(), 10);
        let remote = Chunk::with_content_ref("r", "d", "t", "s3://x");
        assert_eq!(
            SizeFn::Chars.size(&remote).unwrap_err(),
            RepackError::MissingContent { chunk_id: "r".into() }
        );
        assert_eq!(
            SizeFn::Tokens(Arc::new(Words)).size(&remote).unwrap_err(),
            RepackError::MissingTokenCount { chunk_id: "r".into() }
        );
    }

    #[test]
    fn invalid_combinations_are_errors() {
        let cases = [
            (
                Repacker::builder().batch_size(BatchSize::Auto),
                "batch_size auto needs a size_limit",
            ),
            (
                Repacker::builder().batch_size(BatchSize::Count(0)),
                "batch_size must be at least 1",
            ),
            (Repacker::builder().size_limit(0), "size_limit must be at least 1"),
            (
                Repacker::builder().pack(RepackPack::Greedy),
                "pack greedy or knapsack needs a size_limit",
            ),
            (
                Repacker::builder()
                    .batch_size(BatchSize::Auto)
                    .size_limit(3)
                    .pack(RepackPack::Knapsack),
                "pack has no effect with batch_size auto: every chunk is placed in some batch",
            ),
            (
                Repacker::builder().context(ContextConfig::new("{content}").unwrap()),
                "a context template needs mode context",
            ),
        ];
        for (builder, message) in cases {
            assert_eq!(
                builder.build().unwrap_err().to_string(),
                format!("invalid repacker configuration: {message}")
            );
        }
        for (template, message) in [
            ("{oops}", "unknown placeholder {oops}"),
            ("{content", "unclosed placeholder {content"),
            ("a } b", "unmatched '}'"),
            ("{metadata.}", "unknown placeholder {metadata.}"),
        ] {
            let err = ContextConfig::new(template).unwrap_err().to_string();
            assert!(err.contains(message), "{err}");
        }
    }
}
