//! What a [`Repacker`](super::Repacker) is configured with: the PACK, ORDER and SHAPE choices, the
//! size function, and the builder.

use std::fmt;
use std::sync::Arc;

use rag_core::{Chunk, RepackError, TokenCounter};

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

/// Everything a [`Repacker`](super::Repacker) is configured with: a configuration that was checked when it was
/// built, so a Repacker never meets an invalid one.
///
/// [`RepackerConfig::builder`] starts from the defaults (forward, chunk mode, `"\n\n"`,
/// characters, no limit, truncate, no batching, no template), the `with_*` methods of
/// [`RepackerConfigBuilder`] change what you need, and [`build`](RepackerConfigBuilder::build)
/// checks the whole: settings that depend on each other (batch `auto` needs a `size_limit`, ...)
/// are checked together, whatever the order of the calls. The settings are read through the
/// methods named after them.
///
/// ```
/// use rag_packer::{BatchSize, RepackerConfig};
///
/// let config = RepackerConfig::builder().with_batch_size(BatchSize::Auto).with_size_limit(Some(100)).build()?;
/// assert_eq!(config.size_limit(), Some(100));
/// let unbounded = RepackerConfig::builder().with_batch_size(BatchSize::Auto).build();
/// assert_eq!(unbounded.unwrap_err().to_string(), "invalid repacker configuration: batch_size auto needs a size_limit");
/// # Ok::<(), rag_core::RepackError>(())
/// ```
#[derive(Debug, Clone)]
pub struct RepackerConfig {
    /// ORDER within each batch.
    pub(super) method: RepackMethod,
    /// SHAPE of the output.
    pub(super) mode: RepackMode,
    /// What joins rendered chunks in `context` mode (default a blank line, `"\n\n"`).
    pub(super) delimiter: String,
    /// How a chunk is measured (default: characters of its content).
    pub(super) size_fn: SizeFn,
    /// The most a batch may hold, in `size_fn` units; `None` packs nothing out.
    pub(super) size_limit: Option<usize>,
    /// PACK strategy against `size_limit`.
    pub(super) pack: RepackPack,
    /// How chunks are grouped into batches.
    pub(super) batch_size: BatchSize,
    /// Template rendering for `context` mode; `None` renders each chunk's content.
    pub(super) context: Option<ContextConfig>,
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

impl RepackerConfig {
    /// A builder starting from the defaults.
    pub fn builder() -> RepackerConfigBuilder {
        RepackerConfigBuilder::default()
    }

    /// A builder starting from this configuration, to change some of its settings.
    pub fn to_builder(&self) -> RepackerConfigBuilder {
        RepackerConfigBuilder { config: self.clone() }
    }

    /// ORDER within each batch.
    pub fn method(&self) -> RepackMethod {
        self.method
    }

    /// SHAPE of the output.
    pub fn mode(&self) -> RepackMode {
        self.mode
    }

    /// What joins rendered chunks in `context` mode.
    pub fn delimiter(&self) -> &str {
        &self.delimiter
    }

    /// How a chunk is measured.
    pub fn size_fn(&self) -> &SizeFn {
        &self.size_fn
    }

    /// The most a batch may hold, in `size_fn` units, at least 1 (`None`: no limit).
    pub fn size_limit(&self) -> Option<usize> {
        self.size_limit
    }

    /// PACK strategy against `size_limit`.
    pub fn pack(&self) -> RepackPack {
        self.pack
    }

    /// How chunks are grouped into batches.
    pub fn batch_size(&self) -> BatchSize {
        self.batch_size
    }

    /// Template rendering for `context` mode (`None`: each chunk's content).
    pub fn context(&self) -> Option<&ContextConfig> {
        self.context.as_ref()
    }

    /// Checks the settings together; the one place a Repacker configuration is validated.
    fn validate(&self) -> Result<(), RepackError> {
        let invalid = |message: &str| {
            Err(RepackError::InvalidConfig {
                message: message.to_owned(),
            })
        };
        if self.size_limit == Some(0) {
            return invalid("size_limit must be at least 1");
        }
        if self.batch_size == BatchSize::Count(0) {
            return invalid("batch_size must be at least 1");
        }
        if self.batch_size == BatchSize::Auto && self.size_limit.is_none() {
            return invalid("batch_size auto needs a size_limit");
        }
        if self.batch_size == BatchSize::Auto && self.pack != RepackPack::Truncate {
            return invalid("pack has no effect with batch_size auto: every chunk is placed in some batch");
        }
        if self.size_limit.is_none() && self.pack != RepackPack::Truncate {
            return invalid("pack greedy or knapsack needs a size_limit");
        }
        if self.mode == RepackMode::Chunk && self.context.is_some() {
            return invalid("a context template needs mode context");
        }
        Ok(())
    }
}

/// Collects the settings of a [`RepackerConfig`]; [`build`](Self::build) checks them together.
#[derive(Debug, Clone, Default)]
pub struct RepackerConfigBuilder {
    config: RepackerConfig,
}

impl RepackerConfigBuilder {
    setters! { in config:
        /// Sets the ORDER method.
        pub fn with_method(method: RepackMethod);
        /// Sets the SHAPE mode.
        pub fn with_mode(mode: RepackMode);
        /// Sets how chunks are measured.
        pub fn with_size_fn(size_fn: SizeFn);
        /// Sets the size limit of a batch (`None`: no limit).
        pub fn with_size_limit(size_limit: Option<usize>);
        /// Sets the PACK strategy.
        pub fn with_pack(pack: RepackPack);
        /// Sets the batching.
        pub fn with_batch_size(batch_size: BatchSize);
        /// Sets the template of `context` mode (`None`: each chunk's content).
        pub fn with_context(context: Option<ContextConfig>);
    }

    /// Sets the delimiter of `context` mode.
    #[must_use]
    pub fn with_delimiter(mut self, delimiter: impl Into<String>) -> Self {
        self.config.delimiter = delimiter.into();
        self
    }

    /// The configuration, or [`RepackError::InvalidConfig`] naming the setting that is out of
    /// range or does not work with another one.
    pub fn build(self) -> Result<RepackerConfig, RepackError> {
        self.config.validate()?;
        Ok(self.config)
    }
}
