//! Errors, one enum per stage, and [`Error`] that wraps them all.
//!
//! Every message names what failed and where (file, byte offset, block, chunk id), lower-case and
//! without a trailing period, so callers can prefix it (`error: docs/a.md: invalid UTF-8 ...`).

use crate::{ChunkId, DocumentId, EmbedError, MissingContentError, TenantId, TokenizerError};

/// Any error of the ragctl libraries.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A parser could not read a document.
    #[error(transparent)]
    Parse(#[from] ParseError),
    /// A chunker could not chunk a document.
    #[error(transparent)]
    Chunk(#[from] ChunkError),
    /// Retrieval-time processing (packing) failed.
    #[error(transparent)]
    Retrieval(#[from] RetrievalError),
    /// A chunk without content or content_ref was built.
    #[error(transparent)]
    MissingContent(#[from] MissingContentError),
}

impl From<PackerError> for Error {
    fn from(err: PackerError) -> Self {
        Self::Retrieval(RetrievalError::Packer(err))
    }
}

impl From<RepackError> for Error {
    fn from(err: RepackError) -> Self {
        Self::Retrieval(RetrievalError::Repack(err))
    }
}

/// A document could not be parsed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ParseError {
    /// The bytes are not UTF-8.
    #[error("{source_uri}: invalid UTF-8 at byte offset {offset}")]
    InvalidUtf8 {
        /// The document.
        source_uri: String,
        /// Offset of the first invalid byte in the input as read (a byte-order mark included).
        offset: usize,
    },
    /// No parser handles this kind of file.
    #[error("{source_uri}: unsupported file type {kind:?}; supported: {supported}")]
    UnsupportedType {
        /// The document.
        source_uri: String,
        /// The extension or type name that was asked for (empty if the file has none).
        kind: String,
        /// The types that are supported, e.g. `markdown (.md, .markdown), text (.txt, .text)`.
        supported: String,
    },
    /// The input is of the right type but its content is malformed (e.g. OCR JSON).
    #[error("{source_uri}{}: {message}", location_suffix(*line, *column))]
    Malformed {
        /// The document.
        source_uri: String,
        /// 1-based line of the problem, when known.
        line: Option<usize>,
        /// 1-based column of the problem, when known.
        column: Option<usize>,
        /// What is wrong.
        message: String,
    },
    /// The format is known but its parser was left out of this build (a cargo feature).
    #[error("{source_uri}: {format} is not supported by this build (rag-chunker's `{feature}` feature is off)")]
    NotBuilt {
        /// The document.
        source_uri: String,
        /// The format, e.g. `pdf`.
        format: String,
        /// The cargo feature of `rag-chunker` that builds its parser.
        feature: String,
    },
    /// The input exceeds a documented limit of its parser (decompressed size, nesting depth,
    /// number of pages); parsing stops instead of exhausting memory or time.
    #[error("{source_uri}: {what} exceeds the limit of {limit}")]
    LimitExceeded {
        /// The document.
        source_uri: String,
        /// What is over the limit, e.g. `decompressed size of word/document.xml`.
        what: String,
        /// The limit, with its unit, e.g. `256 MiB`.
        limit: String,
    },
    /// The document could not be read.
    #[error("{source_uri}: cannot read: {source}")]
    Io {
        /// The document.
        source_uri: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

impl ParseError {
    /// The document the error is about, as its file path or URL.
    pub fn source_uri(&self) -> &str {
        match self {
            Self::InvalidUtf8 { source_uri, .. }
            | Self::UnsupportedType { source_uri, .. }
            | Self::Malformed { source_uri, .. }
            | Self::NotBuilt { source_uri, .. }
            | Self::LimitExceeded { source_uri, .. }
            | Self::Io { source_uri, .. } => source_uri,
        }
    }

    /// The byte offset of the problem in the input as read, when the error has one.
    pub fn offset(&self) -> Option<usize> {
        match self {
            Self::InvalidUtf8 { offset, .. } => Some(*offset),
            _ => None,
        }
    }

    /// The 1-based line of the problem, when known.
    pub fn line(&self) -> Option<usize> {
        match self {
            Self::Malformed { line, .. } => *line,
            _ => None,
        }
    }

    /// The 1-based column of the problem, when known.
    pub fn column(&self) -> Option<usize> {
        match self {
            Self::Malformed { column, .. } => *column,
            _ => None,
        }
    }
}

fn location_suffix(line: Option<usize>, column: Option<usize>) -> String {
    match (line, column) {
        (Some(line), Some(column)) => format!(":{line}:{column}"),
        (Some(line), None) => format!(":{line}"),
        _ => String::new(),
    }
}

/// A chunker failed, or was configured wrongly.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ChunkError {
    /// The configuration cannot work (e.g. `max_tokens` is 0, or overlap is not below it).
    #[error("invalid chunker configuration: {message}")]
    InvalidConfig {
        /// What is wrong.
        message: String,
    },
    /// The tokenizer failed or is unknown.
    #[error("tokenizer {tokenizer}: {message}")]
    Tokenizer {
        /// The tokenizer's name.
        tokenizer: String,
        /// What went wrong.
        message: String,
    },
    /// A block of the parsed document is inconsistent with its source text.
    #[error("document {document_id}: block {block_index}: {message}")]
    MalformedBlock {
        /// The document.
        document_id: DocumentId,
        /// 0-based index of the block in `ParsedDocument::blocks`.
        block_index: usize,
        /// What is wrong, e.g. a span outside the text.
        message: String,
    },
    /// The token counter failed on the document's text.
    #[error("document {document_id}{}: {source}", counted_at(*offset))]
    TokenCount {
        /// The document.
        document_id: DocumentId,
        /// Byte offset in the document's text where the text being counted starts, when known.
        offset: Option<usize>,
        /// The counter's error.
        source: TokenizerError,
    },
}

impl ChunkError {
    /// The document being chunked, when the error is about one.
    pub fn document_id(&self) -> Option<&DocumentId> {
        match self {
            Self::MalformedBlock { document_id, .. } | Self::TokenCount { document_id, .. } => Some(document_id),
            _ => None,
        }
    }

    /// The index of the inconsistent block in `ParsedDocument::blocks`, when a block is the problem.
    pub fn block_index(&self) -> Option<usize> {
        match self {
            Self::MalformedBlock { block_index, .. } => Some(*block_index),
            _ => None,
        }
    }

    /// The byte offset in the document's text where the failed count started, when known.
    pub fn offset(&self) -> Option<usize> {
        match self {
            Self::TokenCount { offset, .. } => *offset,
            _ => None,
        }
    }

    /// The tokenizer that failed or is unknown, when a tokenizer is the problem.
    pub fn tokenizer(&self) -> Option<&str> {
        match self {
            Self::Tokenizer { tokenizer, .. } => Some(tokenizer),
            Self::TokenCount { source, .. } => Some(&source.tokenizer),
            _ => None,
        }
    }
}

fn counted_at(offset: Option<usize>) -> String {
    offset.map_or_else(String::new, |offset| format!(": counting the text at byte {offset}"))
}

/// Retrieval-time processing failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RetrievalError {
    /// The context packer refused its input or configuration.
    #[error(transparent)]
    Packer(#[from] PackerError),
    /// The Repacker refused its input or configuration.
    #[error(transparent)]
    Repack(#[from] RepackError),
}

/// The context packer refused its input or configuration.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum PackerError {
    /// The budget is zero or negative.
    #[error("token budget must be positive, got {budget}")]
    InvalidBudget {
        /// The budget that was given.
        budget: i64,
    },
    /// A chunk belongs to another tenant than the request (defence in depth).
    #[error("chunk {chunk_id} belongs to tenant {chunk_tenant}, not to the request's tenant {expected}")]
    ForeignTenant {
        /// The chunk.
        chunk_id: ChunkId,
        /// Its tenant.
        chunk_tenant: TenantId,
        /// The request's tenant.
        expected: TenantId,
    },
    /// A chunk carries only a `content_ref` and no cached `token_count`.
    #[error(
        "chunk {chunk_id} has a content_ref but no content and no token_count: \
         the packer does not fetch content, so set token_count at ingest"
    )]
    MissingTokenCount {
        /// The chunk.
        chunk_id: ChunkId,
    },
    /// A chunk's `token_count` was made with another tokenizer than the packer's, and the chunk
    /// has no content to count again.
    #[error(
        "chunk {chunk_id} has a token_count made with {tokenizer}, the packer counts with {expected}, \
         and it has no content to count again"
    )]
    ForeignTokenCount {
        /// The chunk.
        chunk_id: ChunkId,
        /// The tokenizer its count was made with.
        tokenizer: String,
        /// The packer's tokenizer.
        expected: String,
    },
    /// A chunk counts as zero tokens (empty content or `token_count: 0`).
    #[error("chunk {chunk_id} has 0 tokens: empty chunks cannot be packed")]
    ZeroTokens {
        /// The chunk.
        chunk_id: ChunkId,
    },
    /// A chunk's score is NaN or infinite.
    #[error("chunk {chunk_id} has a non-finite score ({score})")]
    NonFiniteScore {
        /// The chunk.
        chunk_id: ChunkId,
        /// The score.
        score: f64,
    },
    /// Two input chunks share an id, so drop records and ties would be ambiguous.
    #[error("chunk id {chunk_id} appears more than once in the input")]
    DuplicateChunkId {
        /// The repeated id.
        chunk_id: ChunkId,
    },
    /// The pinned chunks alone exceed the budget.
    #[error("pinned chunks need {pinned_tokens} tokens, more than the budget of {budget}")]
    PinnedOverBudget {
        /// Tokens of all pinned chunks.
        pinned_tokens: usize,
        /// The budget.
        budget: usize,
    },
    /// A chunk that must be rendered into the context carries no text (only a `content_ref`).
    #[error("chunk {chunk_id} has no content to render into the context (the packer does not fetch content_ref)")]
    MissingContent {
        /// The chunk.
        chunk_id: ChunkId,
    },
    /// A custom order did not return a permutation of the chunks it was given.
    #[error("custom order {order}: {message}")]
    CustomOrder {
        /// The order's name.
        order: String,
        /// What is wrong with its result.
        message: String,
    },
    /// The packer's configuration cannot work (e.g. a Jaccard threshold outside `(0, 1]`).
    #[error("invalid packer configuration: {message}")]
    InvalidConfig {
        /// What is wrong.
        message: String,
    },
    /// The token counter failed on a chunk without a cached `token_count`.
    #[error("chunk {chunk_id}: {source}")]
    Tokenizer {
        /// The chunk whose content was being counted.
        chunk_id: ChunkId,
        /// The counter's error.
        source: TokenizerError,
    },
    /// The token counter failed on the rendered context (or a piece of its layout).
    #[error("counting the rendered context: {source}")]
    ContextCount {
        /// The counter's error.
        source: TokenizerError,
    },
    /// The query the packer was to score chunks against has more distinct search terms than BM25
    /// searches (a bound on the work and on what the scoring report lists).
    #[error("the query has {terms} distinct search terms; BM25 searches at most {limit}")]
    TooManyQueryTerms {
        /// Its distinct search terms.
        terms: usize,
        /// The most that are searched.
        limit: usize,
    },
    /// The packer's embedder failed (or broke its contract) while embedding the query or chunks.
    #[error("embedding for hybrid scoring: {source}")]
    Embedder {
        /// The embedder's error.
        source: EmbedError,
    },
    /// A chunk carries a vector made by another model than the packer's embedder: the two cannot
    /// be compared.
    #[error(
        "chunk {chunk_id} has an embedding made by {model}, the packer embeds with {expected}: \
         embed the input with one model"
    )]
    ForeignEmbedding {
        /// The chunk.
        chunk_id: ChunkId,
        /// The model its vector was made by.
        model: String,
        /// The packer's embedder.
        expected: String,
    },
    /// A chunk carries a vector of the embedder's model id but of another dimension.
    #[error("chunk {chunk_id} has an embedding of {dimension} values, the embedder {model} makes {expected}")]
    EmbeddingDimension {
        /// The chunk.
        chunk_id: ChunkId,
        /// The model id its vector claims.
        model: String,
        /// Its length.
        dimension: usize,
        /// The embedder's dimension.
        expected: usize,
    },
}

impl PackerError {
    /// The chunk the error is about, when it is about one.
    pub fn chunk_id(&self) -> Option<&ChunkId> {
        match self {
            Self::ForeignTenant { chunk_id, .. }
            | Self::MissingTokenCount { chunk_id }
            | Self::ForeignTokenCount { chunk_id, .. }
            | Self::ZeroTokens { chunk_id }
            | Self::NonFiniteScore { chunk_id, .. }
            | Self::DuplicateChunkId { chunk_id }
            | Self::MissingContent { chunk_id }
            | Self::ForeignEmbedding { chunk_id, .. }
            | Self::EmbeddingDimension { chunk_id, .. }
            | Self::Tokenizer { chunk_id, .. } => Some(chunk_id),
            _ => None,
        }
    }

    /// The tokenizer that failed, or that a refused `token_count` was made with.
    pub fn tokenizer(&self) -> Option<&str> {
        match self {
            Self::ForeignTokenCount { tokenizer, .. } => Some(tokenizer),
            Self::Tokenizer { source, .. } | Self::ContextCount { source } => Some(&source.tokenizer),
            _ => None,
        }
    }
}

/// Rendering a chunk through a context template failed: a template is checked when it is made,
/// so what is left to fail is the chunk.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RenderError {
    /// The template shows `{content}`, and the chunk carries no text (only a `content_ref`).
    #[error("chunk {chunk_id} has no content to render")]
    MissingContent {
        /// The chunk.
        chunk_id: ChunkId,
    },
}

impl From<RenderError> for PackerError {
    fn from(err: RenderError) -> Self {
        match err {
            RenderError::MissingContent { chunk_id } => Self::MissingContent { chunk_id },
        }
    }
}

impl From<RenderError> for RepackError {
    fn from(err: RenderError) -> Self {
        match err {
            RenderError::MissingContent { chunk_id } => Self::MissingContent { chunk_id },
        }
    }
}

/// An embedding model could not be loaded from its files: the error names the file and says what
/// is wrong with it (missing, unreadable, malformed, a tensor of the wrong shape or dtype).
///
/// ```
/// use rag_core::ModelLoadError;
///
/// let err = ModelLoadError::new("models/tiny/config.json", "not JSON: expected value at line 1 column 1");
/// assert_eq!(err.to_string(), "models/tiny/config.json: not JSON: expected value at line 1 column 1");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {message}", path.display())]
#[non_exhaustive]
pub struct ModelLoadError {
    /// The file (or folder) at fault.
    pub path: std::path::PathBuf,
    /// What is wrong with it.
    pub message: String,
}

impl ModelLoadError {
    /// The error of the file at `path`, saying what is wrong.
    pub fn new(path: impl Into<std::path::PathBuf>, message: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            message: message.into(),
        }
    }
}

/// The Repacker refused its configuration or input.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
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
    /// The token counter of a token size function failed on a chunk without a cached
    /// `token_count`.
    #[error("chunk {chunk_id}: {source}")]
    Tokenizer {
        /// The chunk whose content was being counted.
        chunk_id: ChunkId,
        /// The counter's error.
        source: TokenizerError,
    },
}

impl RepackError {
    /// The chunk the error is about, when it is about one.
    pub fn chunk_id(&self) -> Option<&ChunkId> {
        match self {
            Self::MissingContent { chunk_id }
            | Self::MissingTokenCount { chunk_id }
            | Self::ChunkTooLarge { chunk_id, .. }
            | Self::NonFiniteScore { chunk_id, .. }
            | Self::Tokenizer { chunk_id, .. } => Some(chunk_id),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_place_an_error_names_can_be_read_without_matching_its_variant() {
        let err = ParseError::Malformed {
            source_uri: "scan.ocr.json".into(),
            line: Some(3),
            column: None,
            message: "missing field `regions`".into(),
        };
        assert_eq!(
            (err.source_uri(), err.line(), err.column(), err.offset()),
            ("scan.ocr.json", Some(3), None, None)
        );
        let err = ParseError::InvalidUtf8 {
            source_uri: "a.md".into(),
            offset: 17,
        };
        assert_eq!((err.source_uri(), err.offset(), err.line()), ("a.md", Some(17), None));

        let err = ChunkError::TokenCount {
            document_id: "doc".into(),
            offset: Some(40),
            source: TokenizerError::new("remote", "timed out"),
        };
        assert_eq!(err.document_id().map(DocumentId::as_str), Some("doc"));
        assert_eq!(
            (err.offset(), err.block_index(), err.tokenizer()),
            (Some(40), None, Some("remote"))
        );
        let err = ChunkError::MalformedBlock {
            document_id: "doc".into(),
            block_index: 4,
            message: "span outside the text".into(),
        };
        assert_eq!((err.block_index(), err.tokenizer()), (Some(4), None));

        let err = PackerError::ForeignTokenCount {
            chunk_id: "c1".into(),
            tokenizer: "words".into(),
            expected: "tiktoken:cl100k_base".into(),
        };
        assert_eq!(
            (err.chunk_id().map(ChunkId::as_str), err.tokenizer()),
            (Some("c1"), Some("words"))
        );
        let err = PackerError::ContextCount {
            source: TokenizerError::new("remote", "timed out"),
        };
        assert_eq!((err.chunk_id(), err.tokenizer()), (None, Some("remote")));
        assert_eq!(PackerError::InvalidBudget { budget: 0 }.chunk_id(), None);

        let err = RepackError::ChunkTooLarge {
            chunk_id: "c2".into(),
            size: 9,
            limit: 4,
        };
        assert_eq!(err.chunk_id().map(ChunkId::as_str), Some("c2"));
    }

    #[test]
    fn parse_errors_name_the_file_and_place() {
        let err = ParseError::InvalidUtf8 {
            source_uri: "docs/a.md".into(),
            offset: 17,
        };
        assert_eq!(err.to_string(), "docs/a.md: invalid UTF-8 at byte offset 17");

        let err = ParseError::UnsupportedType {
            source_uri: "a.pdf".into(),
            kind: "pdf".into(),
            supported: "markdown (.md), text (.txt)".into(),
        };
        assert_eq!(
            err.to_string(),
            "a.pdf: unsupported file type \"pdf\"; supported: markdown (.md), text (.txt)"
        );

        let err = ParseError::Malformed {
            source_uri: "scan.ocr.json".into(),
            line: Some(3),
            column: Some(9),
            message: "missing field `regions`".into(),
        };
        assert_eq!(err.to_string(), "scan.ocr.json:3:9: missing field `regions`");
        let err = ParseError::Malformed {
            source_uri: "scan.ocr.json".into(),
            line: None,
            column: None,
            message: "region 2: bbox has 3 numbers, expected 4".into(),
        };
        assert_eq!(
            err.to_string(),
            "scan.ocr.json: region 2: bbox has 3 numbers, expected 4"
        );

        let err = ParseError::Io {
            source_uri: "gone.md".into(),
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"),
        };
        assert_eq!(err.to_string(), "gone.md: cannot read: no such file");

        let err = ParseError::NotBuilt {
            source_uri: "report.pdf".into(),
            format: "pdf".into(),
            feature: "pdf".into(),
        };
        assert_eq!(
            err.to_string(),
            "report.pdf: pdf is not supported by this build (rag-chunker's `pdf` feature is off)"
        );
        let err = ParseError::LimitExceeded {
            source_uri: "bomb.docx".into(),
            what: "decompressed size of word/document.xml".into(),
            limit: "256 MiB".into(),
        };
        assert_eq!(
            err.to_string(),
            "bomb.docx: decompressed size of word/document.xml exceeds the limit of 256 MiB"
        );
        assert_eq!(err.source_uri(), "bomb.docx");
    }

    #[test]
    fn chunk_errors_name_the_block() {
        let err = ChunkError::MalformedBlock {
            document_id: "doc".into(),
            block_index: 4,
            message: "span 10..99 is outside the 20-byte text".into(),
        };
        assert_eq!(
            err.to_string(),
            "document doc: block 4: span 10..99 is outside the 20-byte text"
        );
        let err = ChunkError::InvalidConfig {
            message: "max_tokens must be at least 1".into(),
        };
        assert_eq!(
            err.to_string(),
            "invalid chunker configuration: max_tokens must be at least 1"
        );
        let err = ChunkError::Tokenizer {
            tokenizer: "p50k".into(),
            message: "unknown encoding".into(),
        };
        assert_eq!(err.to_string(), "tokenizer p50k: unknown encoding");
    }

    #[test]
    fn packer_errors_name_the_chunk_and_wrap_into_the_top_level_error() {
        let err = PackerError::ForeignTenant {
            chunk_id: "c7".into(),
            chunk_tenant: "globex".into(),
            expected: "acme".into(),
        };
        let msg = "chunk c7 belongs to tenant globex, not to the request's tenant acme";
        assert_eq!(err.to_string(), msg);
        let top = Error::from(err);
        assert!(matches!(
            top,
            Error::Retrieval(RetrievalError::Packer(PackerError::ForeignTenant { .. }))
        ));
        assert_eq!(top.to_string(), msg);

        let cases = [
            (
                PackerError::InvalidBudget { budget: -5 },
                "token budget must be positive, got -5",
            ),
            (
                PackerError::ZeroTokens { chunk_id: "z".into() },
                "chunk z has 0 tokens: empty chunks cannot be packed",
            ),
            (
                PackerError::NonFiniteScore {
                    chunk_id: "n".into(),
                    score: f64::NAN,
                },
                "chunk n has a non-finite score (NaN)",
            ),
            (
                PackerError::PinnedOverBudget {
                    pinned_tokens: 120,
                    budget: 100,
                },
                "pinned chunks need 120 tokens, more than the budget of 100",
            ),
            (
                PackerError::DuplicateChunkId { chunk_id: "d".into() },
                "chunk id d appears more than once in the input",
            ),
        ];
        for (err, msg) in cases {
            assert_eq!(err.to_string(), msg);
        }
        assert!(
            PackerError::MissingTokenCount { chunk_id: "r".into() }
                .to_string()
                .starts_with("chunk r has a content_ref but no content and no token_count")
        );
    }

    #[test]
    fn missing_content_converts_into_the_top_level_error() {
        let err = Error::from(MissingContentError { id: "c".into() });
        assert!(err.to_string().contains("chunk c has neither content nor content_ref"));
    }
}
