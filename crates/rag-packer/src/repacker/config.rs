//! What a [`Repacker`](super::Repacker) is configured with: the PACK, ORDER and SHAPE choices, the
//! size function, and the builder.

use std::fmt;
use std::sync::Arc;

use rag_core::{Chunk, RepackError, TokenCounter};

use super::Repacker;
use crate::render::ContextConfig;
use crate::setters::setters;

/// ORDER: how chunks are arranged within each batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RepackMethod {
    /// As given.
    #[default]
    Forward,
    /// Reversed: the first chunk ends up last, next to the question.
    Reverse,
    /// LangChain's long-context reorder, taking the given order as relevance order ([`sides_order`](crate::sides_order)).
    Sides,
}

impl RepackMethod {
    /// Every method, for CLIs, bindings and exhaustive tests.
    pub const ALL: [Self; 3] = [Self::Forward, Self::Reverse, Self::Sides];

    /// The snake_case name bindings use (`forward`, `reverse`, `sides`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Forward => "forward",
            Self::Reverse => "reverse",
            Self::Sides => "sides",
        }
    }
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

impl RepackMode {
    /// Every mode, for CLIs, bindings and exhaustive tests.
    pub const ALL: [Self; 2] = [Self::Chunk, Self::Context];

    /// The snake_case name bindings use (`chunk`, `context`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Chunk => "chunk",
            Self::Context => "context",
        }
    }
}

/// PACK: how chunks are fitted against the size limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RepackPack {
    /// The longest prefix that fits.
    #[default]
    Truncate,
    /// Each chunk that still fits, in order (smaller later chunks may fill a gap).
    Greedy,
    /// The highest total score that fits ([`knapsack_select`](crate::knapsack_select)), kept in the given order.
    Knapsack,
}

impl RepackPack {
    /// Every PACK strategy, for CLIs, bindings and exhaustive tests.
    pub const ALL: [Self; 3] = [Self::Truncate, Self::Greedy, Self::Knapsack];

    /// The snake_case name bindings use (`truncate`, `greedy`, `knapsack`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Truncate => "truncate",
            Self::Greedy => "greedy",
            Self::Knapsack => "knapsack",
        }
    }
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
    setters! { in config:
        /// Sets the ORDER method.
        pub fn method(method: RepackMethod);
        /// Sets the SHAPE mode.
        pub fn mode(mode: RepackMode);
        /// Sets how chunks are measured.
        pub fn size_fn(size_fn: SizeFn);
        /// Sets the PACK strategy.
        pub fn pack(pack: RepackPack);
        /// Sets the batching.
        pub fn batch_size(batch_size: BatchSize);
    }

    /// Sets the delimiter of `context` mode.
    #[must_use]
    pub fn delimiter(mut self, delimiter: impl Into<String>) -> Self {
        self.config.delimiter = delimiter.into();
        self
    }

    /// Sets the size limit of a batch.
    #[must_use]
    pub fn size_limit(mut self, limit: usize) -> Self {
        self.config.size_limit = Some(limit);
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
