//! The chunk: the unit chunkers emit, retrievers score and packers fit into a prompt.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::{ChunkId, DocumentId, Origin, Span, TenantId};

/// How far the text of a chunk may be trusted; the packer flags conflicts across levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TrustLevel {
    /// Curated by the operator (the default: chunkers emit the operator's own documents).
    #[default]
    Trusted,
    /// Supplied by an end user, e.g. an uploaded file or a chat message.
    UserSupplied,
    /// From an unvetted source, e.g. the open web.
    Untrusted,
}

impl TrustLevel {
    /// Every level, most trusted first, for CLIs, bindings and exhaustive tests.
    pub const ALL: [Self; 3] = [Self::Trusted, Self::UserSupplied, Self::Untrusted];

    /// The snake_case name used in JSON and in the CLI.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Trusted => "trusted",
            Self::UserSupplied => "user_supplied",
            Self::Untrusted => "untrusted",
        }
    }

    fn is_default(&self) -> bool {
        *self == Self::default()
    }
}

/// Why a chunk could not be built: a chunk must carry its text, a reference to it, or both.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("chunk {id} has neither content nor content_ref: at least one is required")]
pub struct MissingContentError {
    /// The chunk that was rejected.
    pub id: ChunkId,
}

/// The top-level fields of a chunk's JSON form: every one, so that a misspelt key is warned
/// about whichever field it was meant for (a misspelt `tokenizer` would otherwise let a count
/// made with another tokenizer be trusted silently).
pub const CHUNK_FIELDS: [&str; 19] = [
    "id",
    "document_id",
    "tenant_id",
    "position",
    "parent_id",
    "content",
    "content_ref",
    "token_count",
    "tokenizer",
    "span",
    "provenance",
    "source_uri",
    "score",
    "trust",
    "pinned",
    "acl_labels",
    "metadata",
    "embedding_model",
    "embedding",
];

/// Why an extra field was refused: its key names a field of the chunk, and the JSON form would
/// carry that key twice (the second would overwrite the field when read back).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("chunk {id}: extra field `{key}` names a field of the chunk; set the field itself")]
pub struct ExtraFieldError {
    /// The chunk whose extra field was refused.
    pub id: ChunkId,
    /// The key, one of [`CHUNK_FIELDS`].
    pub key: String,
}

/// A piece of a document, sized for a model's context.
///
/// Its JSON form is the interchange format of the CLI: `ragctl chunk --format jsonl` writes one per
/// line and `ragctl pack` reads them. A chunk always has `content`, `content_ref` or both: the
/// constructors and deserialisation enforce it. Fields the format does not know are kept in
/// [`extra`](Self::extra) and written back unchanged; an extra key never names a field of the
/// chunk ([`CHUNK_FIELDS`]), so each key is written once and reads back as what it was.
///
/// ```
/// use rag_core::Chunk;
///
/// let chunk = Chunk::with_content("doc#0", "doc", "acme", "Rerankers score pairs jointly.");
/// let line = serde_json::to_string(&chunk).unwrap();
/// let back: Chunk = serde_json::from_str(&line).unwrap();
/// assert_eq!(back.content(), Some("Rerankers score pairs jointly."));
///
/// let err = serde_json::from_str::<Chunk>(r#"{"id":"x","document_id":"d","tenant_id":"t"}"#)
///     .unwrap_err();
/// assert!(err.to_string().contains("neither content nor content_ref"));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "ChunkRepr")]
pub struct Chunk {
    /// The chunk's id.
    pub id: ChunkId,
    /// The document the chunk was cut from.
    pub document_id: DocumentId,
    /// The tenant that owns the chunk.
    pub tenant_id: TenantId,
    /// 0-based position within its document.
    pub position: usize,
    /// The enclosing chunk (for a chunker's output: the closest enclosing heading), if any.
    pub parent_id: Option<ChunkId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    content: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    content_ref: Option<String>,
    /// Number of tokens of `content` under the tokenizer named by whoever set it, cached at ingest.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_count: Option<usize>,
    /// The [`TokenCounter::name`](crate::TokenCounter::name) of the counter that produced
    /// `token_count` (e.g. `tiktoken:cl100k_base`), so a consumer counting with another tokenizer
    /// knows the count is not in its units. `None` when unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokenizer: Option<String>,
    /// Byte range of `content` in the document's text, when the chunk is a slice of it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub span: Option<Span>,
    /// Where `content` comes from in the original file, when the document's text is a rendition
    /// of it (HTML byte ranges, PDF pages and boxes, DOCX paragraphs, OCR regions); empty when the
    /// text is the file itself, where `span` is the place.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub provenance: Vec<Origin>,
    /// Where the source document was read from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_uri: Option<String>,
    /// Relevance score from retrieval or reranking; higher is better. Missing counts as 0.0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// How far the text may be trusted.
    #[serde(skip_serializing_if = "TrustLevel::is_default")]
    pub trust: TrustLevel,
    /// Always packed, ahead of every other chunk (system prompt, user question).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub pinned: bool,
    /// Labels a principal needs to see the chunk.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub acl_labels: Vec<String>,
    /// Producer-specific data; the heading-aware chunker sets `kind`, `level` and `heading_path`.
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub metadata: Map<String, Value>,
    /// The chunk's vector and the model that made it (JSON `embedding_model` and `embedding`),
    /// when it was embedded; see [`Embedding`].
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub embedding: Option<Embedding>,
    /// Fields this version does not know, kept so that a pipe through `ragctl` loses nothing.
    /// Private so that no key of [`CHUNK_FIELDS`] gets in: see [`set_extra`](Self::set_extra).
    #[serde(flatten)]
    extra: Map<String, Value>,
}

impl Chunk {
    /// A chunk holding `content`, with every optional field empty.
    pub fn with_content(
        id: impl Into<ChunkId>,
        document_id: impl Into<DocumentId>,
        tenant_id: impl Into<TenantId>,
        content: impl Into<String>,
    ) -> Self {
        Self::empty(
            id.into(),
            document_id.into(),
            tenant_id.into(),
            Some(content.into()),
            None,
        )
    }

    /// A chunk whose text lives elsewhere (object store, database), referenced by `content_ref`.
    pub fn with_content_ref(
        id: impl Into<ChunkId>,
        document_id: impl Into<DocumentId>,
        tenant_id: impl Into<TenantId>,
        content_ref: impl Into<String>,
    ) -> Self {
        Self::empty(
            id.into(),
            document_id.into(),
            tenant_id.into(),
            None,
            Some(content_ref.into()),
        )
    }

    /// A chunk from explicit parts; fails if both `content` and `content_ref` are `None`.
    pub fn try_new(
        id: impl Into<ChunkId>,
        document_id: impl Into<DocumentId>,
        tenant_id: impl Into<TenantId>,
        content: Option<String>,
        content_ref: Option<String>,
    ) -> Result<Self, MissingContentError> {
        let id = id.into();
        if content.is_none() && content_ref.is_none() {
            return Err(MissingContentError { id });
        }
        Ok(Self::empty(
            id,
            document_id.into(),
            tenant_id.into(),
            content,
            content_ref,
        ))
    }

    fn empty(
        id: ChunkId,
        document_id: DocumentId,
        tenant_id: TenantId,
        content: Option<String>,
        content_ref: Option<String>,
    ) -> Self {
        Self {
            id,
            document_id,
            tenant_id,
            position: 0,
            parent_id: None,
            content,
            content_ref,
            token_count: None,
            tokenizer: None,
            span: None,
            provenance: Vec::new(),
            source_uri: None,
            score: None,
            trust: TrustLevel::default(),
            pinned: false,
            acl_labels: Vec::new(),
            metadata: Map::new(),
            embedding: None,
            extra: Map::new(),
        }
    }

    /// The chunk's text, if it carries it.
    pub fn content(&self) -> Option<&str> {
        self.content.as_deref()
    }

    /// Where the chunk's text is stored, if it is stored elsewhere.
    pub fn content_ref(&self) -> Option<&str> {
        self.content_ref.as_deref()
    }

    /// Replaces the text and the reference together; fails, leaving the chunk unchanged, if both are `None`.
    pub fn set_body(
        &mut self,
        content: Option<String>,
        content_ref: Option<String>,
    ) -> Result<(), MissingContentError> {
        if content.is_none() && content_ref.is_none() {
            return Err(MissingContentError { id: self.id.clone() });
        }
        self.content = content;
        self.content_ref = content_ref;
        Ok(())
    }

    /// The fields of the JSON form this version does not know, kept so a round trip loses
    /// nothing.
    pub fn extra(&self) -> &Map<String, Value> {
        &self.extra
    }

    /// Replaces the extra fields; fails, leaving the chunk unchanged, if a key names a field of
    /// the chunk (`tenant_id`, `content`, ...: set the field itself).
    ///
    /// ```
    /// use rag_core::Chunk;
    /// use serde_json::{Map, json};
    ///
    /// let mut chunk = Chunk::with_content("a", "d", "acme", "salary");
    /// let mut extra = Map::new();
    /// extra.insert("tenant_id".into(), json!("globex"));
    /// assert!(chunk.set_extra(extra).is_err());
    /// assert_eq!(chunk.insert_extra("reranker", json!("bge"))?, None);
    /// assert_eq!(chunk.extra()["reranker"], "bge");
    /// # Ok::<(), rag_core::ExtraFieldError>(())
    /// ```
    pub fn set_extra(&mut self, extra: Map<String, Value>) -> Result<(), ExtraFieldError> {
        if let Some(key) = extra.keys().find(|key| is_field(key)) {
            return Err(self.extra_field_error(key));
        }
        self.extra = extra;
        Ok(())
    }

    /// Sets one extra field, returning the value it replaces; fails, leaving the chunk unchanged,
    /// if `key` names a field of the chunk.
    pub fn insert_extra(&mut self, key: impl Into<String>, value: Value) -> Result<Option<Value>, ExtraFieldError> {
        let key = key.into();
        if is_field(&key) {
            return Err(self.extra_field_error(&key));
        }
        Ok(self.extra.insert(key, value))
    }

    fn extra_field_error(&self, key: &str) -> ExtraFieldError {
        ExtraFieldError {
            id: self.id.clone(),
            key: key.to_owned(),
        }
    }

    /// The score the packer ranks by: the chunk's score, or 0.0 when it has none.
    pub fn score_or_zero(&self) -> f64 {
        self.score.unwrap_or(0.0)
    }

    /// A string field of `metadata`, e.g. `metadata_str("kind")`.
    pub fn metadata_str(&self, key: &str) -> Option<&str> {
        self.metadata.get(key).and_then(Value::as_str)
    }

    /// The titles of the headings enclosing the chunk, outermost first, from
    /// `metadata.heading_path` (as the heading-aware chunker writes it); empty when absent.
    /// Entries that are not strings are skipped.
    ///
    /// ```
    /// use rag_core::Chunk;
    ///
    /// let mut chunk = Chunk::with_content("c", "d", "t", "Install it.");
    /// assert!(chunk.heading_path().is_empty());
    /// chunk.metadata.insert("heading_path".into(), serde_json::json!(["Guide", "Setup"]));
    /// assert_eq!(chunk.heading_path(), ["Guide", "Setup"]);
    /// ```
    pub fn heading_path(&self) -> Vec<&str> {
        match self.metadata.get(ChunkKind::HEADING_PATH_KEY) {
            Some(Value::Array(titles)) => titles.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        }
    }

    /// What the chunk is in its document's structure, from `metadata.kind`; `None` when the
    /// producer did not say (or said something else).
    ///
    /// ```
    /// use rag_core::{Chunk, ChunkKind};
    ///
    /// let mut chunk = Chunk::with_content("c", "d", "t", "## Setup");
    /// assert_eq!(chunk.kind(), None);
    /// chunk.metadata = ChunkKind::Heading.metadata(Some(2), ["Guide"]);
    /// assert_eq!((chunk.kind(), chunk.heading_level()), (Some(ChunkKind::Heading), Some(2)));
    /// assert_eq!(chunk.heading_path(), ["Guide"]);
    /// ```
    pub fn kind(&self) -> Option<ChunkKind> {
        match self.metadata_str(ChunkKind::KEY)? {
            "heading" => Some(ChunkKind::Heading),
            "body" => Some(ChunkKind::Body),
            "function" => Some(ChunkKind::Function),
            "class" => Some(ChunkKind::Class),
            "code" => Some(ChunkKind::Code),
            _ => None,
        }
    }

    /// The level of a heading chunk (1 for `#`), from `metadata.level`; `None` when absent or not
    /// a level.
    pub fn heading_level(&self) -> Option<u8> {
        let level = self.metadata.get(ChunkKind::LEVEL_KEY)?.as_u64()?;
        u8::try_from(level).ok()
    }

    /// Whether the chunk is a heading alone: `metadata.kind` is `"heading"`.
    pub fn is_heading(&self) -> bool {
        self.kind() == Some(ChunkKind::Heading)
    }

    /// Marks the chunk as `kind` in `metadata` (and a heading's `level`, which is removed when
    /// `None`), as the heading-aware chunker writes it; `kind: None` removes both marks, so the
    /// packer treats the chunk as one no chunker described. `heading_path` is left as it is.
    ///
    /// ```
    /// use rag_core::{Chunk, ChunkKind};
    ///
    /// let mut chunk = Chunk::with_content("c", "d", "t", "# Setup");
    /// chunk.set_kind(Some(ChunkKind::Heading), Some(1));
    /// assert!(chunk.is_heading() && chunk.heading_level() == Some(1));
    /// chunk.set_kind(Some(ChunkKind::Body), None);
    /// assert_eq!((chunk.kind(), chunk.heading_level()), (Some(ChunkKind::Body), None));
    /// ```
    pub fn set_kind(&mut self, kind: Option<ChunkKind>, level: Option<u8>) {
        match kind {
            Some(kind) => {
                self.metadata.insert(ChunkKind::KEY.into(), Value::from(kind.as_str()));
            }
            None => {
                self.metadata.remove(ChunkKind::KEY);
            }
        }
        match level.filter(|_| kind.is_some()) {
            Some(level) => {
                self.metadata.insert(ChunkKind::LEVEL_KEY.into(), Value::from(level));
            }
            None => {
                self.metadata.remove(ChunkKind::LEVEL_KEY);
            }
        }
    }

    /// Where this chunk was cut from, when it is a part the packer cut to fit (`metadata.cut_from`);
    /// `None` for any other chunk, and for a `cut_from` that is not one.
    pub fn cut_from(&self) -> Option<CutFrom> {
        CutFrom::deserialize(self.metadata.get(CutFrom::KEY)?).ok()
    }

    /// Whether the chunk is a part cut to fit: it carries `metadata.cut_from`.
    pub fn is_cut(&self) -> bool {
        self.metadata.contains_key(CutFrom::KEY)
    }

    /// Records in `metadata.cut_from` where this part was cut from.
    pub fn set_cut_from(&mut self, from: &CutFrom) {
        let value = serde_json::to_value(from).unwrap_or(Value::Null);
        self.metadata.insert(CutFrom::KEY.into(), value);
    }
}

/// A chunk's vector and the id of the model that made it ([`Embedder::id`](crate::Embedder::id)).
///
/// In JSON it is two top-level fields of the chunk: `embedding_model` (the id) and `embedding`
/// (the values, an array of numbers). Each value is written as the shortest decimal that reads
/// back as the same `f32`, so a vector survives a pipe through JSON Lines bit for bit: a chunk
/// embedded at chunk time ranks exactly as one embedded at pack time. Reading a chunk with one
/// field and not the other, an empty vector or a value that is not a finite `f32` is an error
/// naming the chunk.
///
/// ```
/// use rag_core::{Chunk, Embedding};
///
/// let mut chunk = Chunk::with_content("a", "d", "acme", "Deprecated since 2.0.");
/// chunk.embedding = Some(Embedding::new("model2vec:tiny", vec![0.1, -0.25, 1.0e-7]));
/// let line = serde_json::to_string(&chunk)?;
/// assert!(line.ends_with(r#""embedding_model":"model2vec:tiny","embedding":[0.1,-0.25,1e-7]}"#));
/// let back: Chunk = serde_json::from_str(&line)?;
/// assert_eq!(back.embedding, chunk.embedding);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Embedding {
    /// The id of the model that made the vector.
    #[serde(rename = "embedding_model")]
    pub model: String,
    /// The vector.
    #[serde(rename = "embedding")]
    pub vector: Vec<f32>,
}

impl Embedding {
    /// The vector `vector` made by the model `model`.
    pub fn new(model: impl Into<String>, vector: Vec<f32>) -> Self {
        Self {
            model: model.into(),
            vector,
        }
    }

    /// What makes `vector` unusable, if anything.
    fn problem(vector: &[f32]) -> Option<&'static str> {
        if vector.is_empty() {
            Some("has an empty embedding")
        } else if !vector.iter().all(|v| v.is_finite()) {
            Some("has an embedding value that is not a finite 32-bit float")
        } else {
            None
        }
    }
}

impl Chunk {
    /// The text an [`Embedder`](crate::Embedder) is given for this chunk: its heading path
    /// (`A > B`) on a line of its own, then its content; the heading path alone for a chunk that
    /// carries only a `content_ref`. One definition, so a chunk embedded when it is chunked and
    /// one embedded when it is packed get the same vector.
    ///
    /// ```
    /// use rag_core::Chunk;
    ///
    /// let mut chunk = Chunk::with_content("c", "d", "t", "Call end() to finish.");
    /// assert_eq!(chunk.embedding_text(), "Call end() to finish.");
    /// chunk.metadata.insert("heading_path".into(), serde_json::json!(["Streams", "Writable"]));
    /// assert_eq!(chunk.embedding_text(), "Streams > Writable\nCall end() to finish.");
    /// ```
    pub fn embedding_text(&self) -> String {
        let path = self.heading_path().join(" > ");
        match (path.is_empty(), self.content()) {
            (true, content) => content.unwrap_or_default().to_owned(),
            (false, Some(content)) => format!("{path}\n{content}"),
            (false, None) => path,
        }
    }
}

/// Where a part the packer cut to fit came from (`metadata.cut_from` in JSON): the chunk, the
/// byte range of that chunk's content the part holds, and the tokens the whole chunk needed.
///
/// ```
/// use rag_core::{Chunk, ChunkId, CutFrom};
///
/// let mut part = Chunk::with_content("a#cut", "d", "t", "Refunds take 30 days.");
/// let from = CutFrom { id: ChunkId::new("a"), start: 120, end: 141, tokens: 900 };
/// part.set_cut_from(&from);
/// assert_eq!(part.metadata["cut_from"]["id"], "a");
/// assert_eq!(part.cut_from(), Some(from));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CutFrom {
    /// The chunk the part was cut from.
    pub id: ChunkId,
    /// Where the part starts in that chunk's content, in bytes.
    pub start: usize,
    /// Where it ends, exclusive.
    pub end: usize,
    /// The tokens the whole chunk needed (more than the room it was cut for).
    pub tokens: usize,
}

impl CutFrom {
    /// The metadata key it is written under.
    pub const KEY: &'static str = "cut_from";
}

/// What a chunk is in its document's structure, as the heading-aware chunker marks it in
/// `metadata` (`kind`, `level` for a heading, `heading_path`): the contract between the chunker,
/// which writes it with [`ChunkKind::metadata`], and the packer, which reads it with
/// [`Chunk::kind`], [`Chunk::heading_level`] and [`Chunk::heading_path`].
///
/// A chunk of source code is a [`Function`](Self::Function), a [`Class`](Self::Class) or
/// [`Code`](Self::Code), and its `heading_path` names the definitions enclosing it (`["class
/// Command", "def invoke"]`) instead of headings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ChunkKind {
    /// A heading alone.
    Heading,
    /// Text under the headings of its `heading_path`.
    Body,
    /// Source code: one or more whole functions or methods, or a part of the function its
    /// `heading_path` ends with.
    Function,
    /// Source code: one or more whole type definitions (classes, structs, enums, traits,
    /// interfaces, impl blocks), or a part of the one its `heading_path` ends with that is not
    /// inside one of its functions.
    Class,
    /// Source code outside any definition (imports, constants, statements), or a mix of kinds.
    Code,
}

impl ChunkKind {
    /// The metadata key of the kind.
    pub const KEY: &'static str = "kind";
    /// The metadata key of a heading's level.
    pub const LEVEL_KEY: &'static str = "level";
    /// The metadata key of the enclosing headings' titles.
    pub const HEADING_PATH_KEY: &'static str = "heading_path";

    /// The name in `metadata.kind`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Heading => "heading",
            Self::Body => "body",
            Self::Function => "function",
            Self::Class => "class",
            Self::Code => "code",
        }
    }

    /// Whether the kind is one of source code's (`function`, `class`, `code`): its
    /// `heading_path` names definitions, and the file names the place.
    ///
    /// ```
    /// use rag_core::ChunkKind;
    ///
    /// assert!(ChunkKind::Function.is_code() && !ChunkKind::Body.is_code());
    /// ```
    pub const fn is_code(self) -> bool {
        matches!(self, Self::Function | Self::Class | Self::Code)
    }

    /// The metadata of a chunk of this kind: its `level` when given (a heading's), and the titles
    /// of the headings enclosing it, outermost first.
    pub fn metadata<'a>(
        self,
        level: Option<u8>,
        heading_path: impl IntoIterator<Item = &'a str>,
    ) -> Map<String, Value> {
        let mut metadata = Map::new();
        metadata.insert(Self::KEY.into(), Value::from(self.as_str()));
        if let Some(level) = level {
            metadata.insert(Self::LEVEL_KEY.into(), Value::from(level));
        }
        let titles = heading_path.into_iter().map(Value::from).collect();
        metadata.insert(Self::HEADING_PATH_KEY.into(), Value::Array(titles));
        metadata
    }
}

/// Whether `key` is a field of the chunk's JSON form.
fn is_field(key: &str) -> bool {
    CHUNK_FIELDS.contains(&key)
}

/// Why the wire form is not a chunk.
#[derive(Debug, thiserror::Error)]
enum InvalidChunk {
    #[error(transparent)]
    Body(#[from] MissingContentError),
    #[error(transparent)]
    Extra(#[from] ExtraFieldError),
    #[error("chunk {id} {problem}")]
    Embedding { id: ChunkId, problem: &'static str },
}

/// The wire form, checked by `TryFrom` so that a chunk without a body, or with an extra field that
/// names a field, never exists.
#[derive(Deserialize)]
// Errors name what the input should be, not this private type.
#[serde(expecting = "a chunk (a JSON object)")]
struct ChunkRepr {
    id: ChunkId,
    document_id: DocumentId,
    tenant_id: TenantId,
    #[serde(default)]
    position: usize,
    #[serde(default)]
    parent_id: Option<ChunkId>,
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    content_ref: Option<String>,
    #[serde(default)]
    token_count: Option<usize>,
    #[serde(default)]
    tokenizer: Option<String>,
    #[serde(default)]
    span: Option<Span>,
    #[serde(default)]
    provenance: Vec<Origin>,
    #[serde(default)]
    source_uri: Option<String>,
    #[serde(default)]
    score: Option<f64>,
    #[serde(default)]
    trust: TrustLevel,
    #[serde(default)]
    pinned: bool,
    #[serde(default)]
    acl_labels: Vec<String>,
    #[serde(default)]
    metadata: Map<String, Value>,
    #[serde(default)]
    embedding_model: Option<String>,
    #[serde(default)]
    embedding: Option<Vec<f32>>,
    #[serde(flatten)]
    extra: Map<String, Value>,
}

impl TryFrom<ChunkRepr> for Chunk {
    type Error = InvalidChunk;

    fn try_from(repr: ChunkRepr) -> Result<Self, Self::Error> {
        if repr.content.is_none() && repr.content_ref.is_none() {
            return Err(MissingContentError { id: repr.id }.into());
        }
        // serde routes every known key to its field (a repeated one is a `duplicate field`
        // error), so this holds already; it is checked here so that no door lets one in.
        if let Some(key) = repr.extra.keys().find(|key| is_field(key)) {
            return Err(ExtraFieldError {
                id: repr.id,
                key: key.clone(),
            }
            .into());
        }
        let embedding = match (repr.embedding_model, repr.embedding) {
            (None, None) => None,
            (Some(model), Some(vector)) => {
                if let Some(problem) = Embedding::problem(&vector) {
                    return Err(InvalidChunk::Embedding { id: repr.id, problem });
                }
                Some(Embedding { model, vector })
            }
            (Some(_), None) => {
                return Err(InvalidChunk::Embedding {
                    id: repr.id,
                    problem: "has an embedding_model but no embedding",
                });
            }
            (None, Some(_)) => {
                return Err(InvalidChunk::Embedding {
                    id: repr.id,
                    problem: "has an embedding but no embedding_model (the id of the model that made it)",
                });
            }
        };
        Ok(Self {
            id: repr.id,
            document_id: repr.document_id,
            tenant_id: repr.tenant_id,
            position: repr.position,
            parent_id: repr.parent_id,
            content: repr.content,
            content_ref: repr.content_ref,
            token_count: repr.token_count,
            tokenizer: repr.tokenizer,
            span: repr.span,
            provenance: repr.provenance,
            source_uri: repr.source_uri,
            score: repr.score,
            trust: repr.trust,
            pinned: repr.pinned,
            acl_labels: repr.acl_labels,
            metadata: repr.metadata,
            embedding,
            extra: repr.extra,
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn full_chunk() -> Chunk {
        let mut chunk = Chunk::with_content("doc#1", "doc", "acme", "Body text.");
        chunk.position = 1;
        chunk.parent_id = Some("doc#0".into());
        chunk.token_count = Some(3);
        chunk.tokenizer = Some("tiktoken:cl100k_base".into());
        chunk.span = Some(Span::new(9, 19));
        chunk.source_uri = Some("docs/a.md".into());
        chunk.score = Some(0.75);
        chunk.trust = TrustLevel::UserSupplied;
        chunk.pinned = true;
        chunk.acl_labels = vec!["staff".into()];
        chunk.metadata.insert("kind".into(), json!("body"));
        chunk
    }

    #[test]
    fn full_chunk_round_trips_with_fixed_field_names() {
        let chunk = full_chunk();
        let json = serde_json::to_value(&chunk).unwrap();
        assert_eq!(
            json,
            json!({
                "id": "doc#1", "document_id": "doc", "tenant_id": "acme", "position": 1,
                "parent_id": "doc#0", "content": "Body text.", "token_count": 3,
                "tokenizer": "tiktoken:cl100k_base", "span": {"start": 9, "end": 19}, "source_uri": "docs/a.md", "score": 0.75,
                "trust": "user_supplied", "pinned": true, "acl_labels": ["staff"],
                "metadata": {"kind": "body"}
            })
        );
        let back: Chunk = serde_json::from_value(json).unwrap();
        assert_eq!(back, chunk);
    }

    #[test]
    fn minimal_chunk_omits_empty_optionals_and_defaults_them_back() {
        let chunk = Chunk::with_content_ref("c", "d", "t", "s3://bucket/c.txt");
        let json = serde_json::to_value(&chunk).unwrap();
        assert_eq!(
            json,
            json!({"id": "c", "document_id": "d", "tenant_id": "t", "position": 0,
                   "parent_id": null, "content_ref": "s3://bucket/c.txt"})
        );
        let back: Chunk = serde_json::from_value(json).unwrap();
        assert_eq!(back, chunk);
        assert_eq!(back.trust, TrustLevel::Trusted);
        assert_eq!(back.tokenizer, None);
        assert!(!back.pinned);
        assert_eq!(back.score_or_zero(), 0.0);
    }

    #[test]
    fn a_chunk_with_neither_content_nor_ref_is_rejected() {
        let err = Chunk::try_new("c-9", "d", "t", None, None).unwrap_err();
        assert_eq!(
            err.to_string(),
            "chunk c-9 has neither content nor content_ref: at least one is required"
        );
        let err =
            serde_json::from_value::<Chunk>(json!({"id": "c-9", "document_id": "d", "tenant_id": "t"})).unwrap_err();
        assert!(
            err.to_string()
                .contains("chunk c-9 has neither content nor content_ref"),
            "{err}"
        );

        let mut chunk = Chunk::with_content("c", "d", "t", "x");
        assert!(chunk.set_body(None, None).is_err());
        assert_eq!(
            chunk.content(),
            Some("x"),
            "a failed set_body leaves the chunk as it was"
        );
        chunk.set_body(None, Some("ref".into())).unwrap();
        assert_eq!((chunk.content(), chunk.content_ref()), (None, Some("ref")));
    }

    #[test]
    fn unknown_fields_are_kept_and_written_back() {
        let line = json!({"id": "c", "document_id": "d", "tenant_id": "t", "content": "x",
                          "reranker": "bge", "nested": {"a": [1, 2]}});
        let chunk: Chunk = serde_json::from_value(line.clone()).unwrap();
        assert_eq!(chunk.extra().get("reranker"), Some(&json!("bge")));
        let out = serde_json::to_value(&chunk).unwrap();
        assert_eq!(out["nested"], line["nested"]);
        assert_eq!(out["reranker"], "bge");
    }

    #[test]
    fn an_extra_key_never_names_a_field() {
        let mut chunk = Chunk::with_content("a", "d", "acme", "salary");
        chunk.acl_labels = vec!["hr".into()];
        for key in CHUNK_FIELDS {
            let err = chunk.insert_extra(key, json!("INJECTED")).unwrap_err();
            assert_eq!(
                err.to_string(),
                format!("chunk a: extra field `{key}` names a field of the chunk; set the field itself")
            );
        }
        let mut injected = Map::new();
        injected.insert("reranker".into(), json!("bge"));
        injected.insert("tenant_id".into(), json!("globex"));
        assert!(chunk.set_extra(injected).is_err());
        assert!(
            chunk.extra().is_empty(),
            "a refused set_extra leaves the chunk as it was"
        );
        assert_eq!(chunk.insert_extra("reranker", json!("bge")).unwrap(), None);

        // Serialisation writes each key once, so the chunk reads back as it was.
        let line = serde_json::to_string(&chunk).unwrap();
        assert_eq!(line.matches("\"tenant_id\"").count(), 1, "{line}");
        let back: Chunk = serde_json::from_str(&line).unwrap();
        assert_eq!(back, chunk);
        assert_eq!(
            (back.tenant_id.as_str(), back.acl_labels.as_slice()),
            ("acme", &["hr".to_owned()][..])
        );
    }

    #[test]
    fn a_repeated_field_in_json_is_refused_not_kept_as_extra() {
        for line in [
            r#"{"id":"a","document_id":"d","tenant_id":"acme","tenant_id":"globex","content":"x"}"#,
            r#"{"id":"a","document_id":"d","tenant_id":"acme","content":"x","content":"INJECTED"}"#,
        ] {
            let err = serde_json::from_str::<Chunk>(line).unwrap_err();
            assert!(err.to_string().contains("duplicate field"), "{line}: {err}");
        }
    }

    #[test]
    fn negative_token_counts_are_rejected_by_the_wire_format() {
        let err = serde_json::from_value::<Chunk>(
            json!({"id": "c", "document_id": "d", "tenant_id": "t", "content": "x", "token_count": -3}),
        )
        .unwrap_err();
        assert!(err.to_string().contains("-3"), "{err}");
    }

    #[test]
    fn every_f32_of_an_embedding_reads_back_bit_for_bit() {
        // A stride through all finite bit patterns (both signs, subnormals, the extremes).
        let mut vector: Vec<f32> = (0..=u32::MAX)
            .step_by(65_537)
            .map(f32::from_bits)
            .filter(|v| v.is_finite())
            .collect();
        vector.extend([
            f32::MIN,
            f32::MAX,
            f32::MIN_POSITIVE,
            -0.0,
            0.0,
            1.0e-45,
            0.1,
            1.0 / 3.0,
        ]);
        let mut chunk = Chunk::with_content("a", "d", "t", "x");
        chunk.embedding = Some(Embedding::new("m", vector.clone()));
        let line = serde_json::to_string(&chunk).unwrap();
        let back: Chunk = serde_json::from_str(&line).unwrap();
        let got = back.embedding.unwrap().vector;
        assert_eq!(got.len(), vector.len());
        for (a, b) in vector.iter().zip(&got) {
            assert_eq!(a.to_bits(), b.to_bits(), "{a:e} read back as {b:e}");
        }
    }

    #[test]
    fn an_embedding_needs_its_model_and_finite_values() {
        let base = json!({"id": "c-4", "document_id": "d", "tenant_id": "t", "content": "x"});
        let with = |fields: serde_json::Value| {
            let mut line = base.clone();
            line.as_object_mut()
                .unwrap()
                .extend(fields.as_object().unwrap().clone());
            serde_json::from_value::<Chunk>(line)
        };
        let cases = [
            (
                json!({"embedding": [0.5]}),
                "chunk c-4 has an embedding but no embedding_model",
            ),
            (
                json!({"embedding_model": "m"}),
                "chunk c-4 has an embedding_model but no embedding",
            ),
            (
                json!({"embedding_model": "m", "embedding": []}),
                "chunk c-4 has an empty embedding",
            ),
            (
                json!({"embedding_model": "m", "embedding": [1e39]}),
                "chunk c-4 has an embedding value that is not a finite 32-bit float",
            ),
        ];
        for (fields, message) in cases {
            let err = with(fields.clone()).unwrap_err();
            assert!(err.to_string().contains(message), "{fields}: {err}");
        }
        assert!(with(json!({"embedding_model": "m", "embedding": [null]})).is_err());
        let ok = with(json!({"embedding_model": "m", "embedding": [0.5, -1]})).unwrap();
        assert_eq!(ok.embedding, Some(Embedding::new("m", vec![0.5, -1.0])));
        assert!(ok.extra().is_empty(), "the two fields are the embedding, not extras");
    }

    #[test]
    fn trust_levels_round_trip() {
        for trust in [TrustLevel::Trusted, TrustLevel::UserSupplied, TrustLevel::Untrusted] {
            let json = serde_json::to_string(&trust).unwrap();
            assert_eq!(json, format!("\"{}\"", trust.as_str()));
            assert_eq!(serde_json::from_str::<TrustLevel>(&json).unwrap(), trust);
        }
    }
}
