//! `Span` and `Chunk`: the unit chunkers emit, retrievers score and packers fit into a prompt.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use pyo3::{PyTraverseError, PyVisit};
use rag_core::{Chunk, ChunkId, Span, TrustLevel};
use serde_json::{Map, Value};

use crate::json;
use crate::names::Named;
use crate::runtime::Reduced;

/// A half-open byte range `start..end` of a document's UTF-8 text.
#[pyclass(frozen, eq, hash, module = "rag_core", name = "Span")]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct PySpan {
    pub(crate) inner: Span,
}

#[pymethods]
impl PySpan {
    #[new]
    fn new(start: usize, end: usize) -> PyResult<Self> {
        if start > end {
            return Err(PyValueError::new_err(format!("span {start}..{end} is reversed")));
        }
        Ok(Self {
            inner: Span::new(start, end),
        })
    }

    /// First byte of the range.
    #[getter]
    fn start(&self) -> usize {
        self.inner.start
    }

    /// One past the last byte of the range.
    #[getter]
    fn end(&self) -> usize {
        self.inner.end
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok((self.inner.start, self.inner.end)
            .into_pyobject(py)?
            .try_iter()?
            .into_any())
    }

    fn __repr__(&self) -> String {
        format!("Span(start={}, end={})", self.inner.start, self.inner.end)
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> Reduced<'py, (usize, usize)> {
        let span = slf.get().inner;
        Ok((slf.get_type().into_any(), (span.start, span.end)))
    }
}

/// A `Span`, or a `(start, end)` pair.
pub(crate) fn span_from_py(obj: &Bound<'_, PyAny>) -> PyResult<Span> {
    if let Ok(span) = obj.cast::<PySpan>() {
        return Ok(span.get().inner);
    }
    match obj.extract::<(usize, usize)>() {
        Ok((start, end)) if start <= end => Ok(Span::new(start, end)),
        Ok((start, end)) => Err(PyValueError::new_err(format!("span {start}..{end} is reversed"))),
        Err(_) => Err(PyTypeError::new_err(
            "a span is a Span or a (start, end) pair of byte offsets",
        )),
    }
}

/// A JSON object field of a chunk as Python sees it: the Rust map until Python reads or sets
/// it, then a live dict that Python may change in place (`chunk.metadata["k"] = v`), read back
/// into Rust whenever the chunk is handed to the engine.
#[derive(Default)]
struct LiveMap {
    dict: Option<Py<PyDict>>,
}

impl LiveMap {
    fn get<'py>(&mut self, py: Python<'py>, map: &Map<String, Value>, what: &str) -> PyResult<Bound<'py, PyDict>> {
        if let Some(dict) = &self.dict {
            return Ok(dict.bind(py).clone());
        }
        let dict = json::map_to_py(py, map, what)?;
        self.dict = Some(dict.clone().unbind());
        Ok(dict)
    }

    /// The current value: the live dict's content if Python holds it, else `map`.
    fn current(&self, py: Python<'_>, map: &Map<String, Value>, what: &str) -> PyResult<Map<String, Value>> {
        match &self.dict {
            Some(dict) => json::map_from_py(dict.bind(py), what),
            None => Ok(map.clone()),
        }
    }
}

/// A piece of a document, sized for a model's context (Python view of `rag_core::Chunk`).
#[pyclass(module = "rag_core", name = "Chunk")]
pub(crate) struct PyChunk {
    inner: Chunk,
    metadata: LiveMap,
    extra: LiveMap,
}

impl PyChunk {
    /// Wraps a chunk the engine made.
    pub(crate) fn from_rust(inner: Chunk) -> Self {
        Self {
            inner,
            metadata: LiveMap::default(),
            extra: LiveMap::default(),
        }
    }

    /// The chunk as the engine takes it, with any change Python made to `metadata` or `extra`.
    pub(crate) fn to_rust(&self, py: Python<'_>) -> PyResult<Chunk> {
        let mut chunk = self.inner.clone();
        if self.metadata.dict.is_some() {
            chunk.metadata = self
                .metadata
                .current(py, &self.inner.metadata, &self.field("metadata"))?;
        }
        if self.extra.dict.is_some() {
            chunk
                .set_extra(self.extra.current(py, self.inner.extra(), &self.field("extra"))?)
                .map_err(extra_field)?;
        }
        Ok(chunk)
    }

    fn field(&self, name: &str) -> String {
        format!("chunk {}: {name}", self.inner.id)
    }
}

/// The engine's chunk of each Python chunk in `chunks` (any iterable of `Chunk`), with the Python
/// objects themselves, so results can hand back the very objects the caller passed in; `what`
/// names the argument in errors.
pub(crate) fn chunks_from_py(chunks: &Bound<'_, PyAny>, what: &str) -> PyResult<(Vec<Chunk>, Vec<Py<PyAny>>)> {
    let py = chunks.py();
    let capacity = chunks.len().unwrap_or(0);
    let (mut engine, mut objects) = (Vec::with_capacity(capacity), Vec::with_capacity(capacity));
    for (i, item) in chunks.try_iter()?.enumerate() {
        let item = item?;
        let chunk = item.cast::<PyChunk>().map_err(|_| {
            let type_name = item
                .get_type()
                .name()
                .map_or_else(|_| "?".to_owned(), |n| n.to_string());
            PyTypeError::new_err(format!("{what}[{i}] is a {type_name}, not a rag_core.Chunk"))
        })?;
        engine.push(chunk.borrow().to_rust(py)?);
        objects.push(item.unbind());
    }
    Ok((engine, objects))
}

fn missing_body(err: rag_core::MissingContentError) -> PyErr {
    PyValueError::new_err(err.to_string())
}

fn extra_field(err: rag_core::ExtraFieldError) -> PyErr {
    PyValueError::new_err(err.to_string())
}

#[pymethods]
impl PyChunk {
    #[new]
    #[pyo3(signature = (
        id, document_id, tenant_id, content = None, *, content_ref = None, position = 0,
        parent_id = None, token_count = None, tokenizer = None, span = None, source_uri = None, score = None,
        trust = "trusted", pinned = false, acl_labels = None, metadata = None, extra = None,
    ))]
    fn new(
        py: Python<'_>,
        id: String,
        document_id: String,
        tenant_id: String,
        content: Option<String>,
        content_ref: Option<String>,
        position: usize,
        parent_id: Option<String>,
        token_count: Option<usize>,
        tokenizer: Option<String>,
        span: Option<&Bound<'_, PyAny>>,
        source_uri: Option<String>,
        score: Option<f64>,
        trust: &str,
        pinned: bool,
        acl_labels: Option<Vec<String>>,
        metadata: Option<&Bound<'_, PyDict>>,
        extra: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let mut chunk = Chunk::try_new(id, document_id, tenant_id, content, content_ref).map_err(missing_body)?;
        chunk.position = position;
        chunk.parent_id = parent_id.map(ChunkId::from);
        chunk.token_count = token_count;
        chunk.tokenizer = tokenizer;
        chunk.span = span.map(span_from_py).transpose()?;
        chunk.source_uri = source_uri;
        chunk.score = score;
        chunk.trust = TrustLevel::from_name(trust)?;
        chunk.pinned = pinned;
        chunk.acl_labels = acl_labels.unwrap_or_default();
        let mut this = Self::from_rust(chunk);
        if let Some(metadata) = metadata {
            this.inner.metadata = json::map_from_py(metadata, &this.field("metadata"))?;
        }
        if let Some(extra) = extra {
            let extra = json::map_from_py(extra, &this.field("extra"))?;
            this.inner.set_extra(extra).map_err(extra_field)?;
        }
        let _ = py;
        Ok(this)
    }

    /// The chunk's vector (JSON `embedding`), or `None` when it was not embedded.
    #[getter]
    fn get_embedding(&self) -> Option<Vec<f32>> {
        self.inner.embedding.as_ref().map(|e| e.vector.clone())
    }

    /// The id of the model that made the vector (JSON `embedding_model`), or `None`.
    #[getter]
    fn get_embedding_model(&self) -> Option<&str> {
        self.inner.embedding.as_ref().map(|e| e.model.as_str())
    }

    /// Sets the vector and the id of the model that made it together (both `None` removes them);
    /// a vector without a model, an empty vector or a value that is not finite is a `ValueError`.
    #[pyo3(signature = (model, vector))]
    fn set_embedding(&mut self, model: Option<String>, vector: Option<Vec<f32>>) -> PyResult<()> {
        self.inner.embedding = match (model, vector) {
            (None, None) => None,
            (Some(model), Some(vector)) if !vector.is_empty() && vector.iter().all(|v| v.is_finite()) => {
                Some(rag_core::Embedding::new(model, vector))
            }
            (Some(_), Some(_)) => {
                return Err(PyValueError::new_err(format!(
                    "chunk {}: an embedding is a non-empty list of finite floats",
                    self.inner.id
                )));
            }
            _ => {
                return Err(PyValueError::new_err(format!(
                    "chunk {}: an embedding needs both its model and its vector",
                    self.inner.id
                )));
            }
        };
        Ok(())
    }

    /// The chunk's id.
    #[getter]
    fn get_id(&self) -> &str {
        self.inner.id.as_str()
    }

    #[setter]
    fn set_id(&mut self, id: String) {
        self.inner.id = id.into();
    }

    /// The document the chunk was cut from.
    #[getter]
    fn get_document_id(&self) -> &str {
        self.inner.document_id.as_str()
    }

    #[setter]
    fn set_document_id(&mut self, id: String) {
        self.inner.document_id = id.into();
    }

    /// The tenant that owns the chunk.
    #[getter]
    fn get_tenant_id(&self) -> &str {
        self.inner.tenant_id.as_str()
    }

    #[setter]
    fn set_tenant_id(&mut self, id: String) {
        self.inner.tenant_id = id.into();
    }

    /// 0-based position within its document.
    #[getter]
    fn get_position(&self) -> usize {
        self.inner.position
    }

    #[setter]
    fn set_position(&mut self, position: usize) {
        self.inner.position = position;
    }

    /// The enclosing chunk (for a chunker's output: the closest enclosing heading), if any.
    #[getter]
    fn get_parent_id(&self) -> Option<&str> {
        self.inner.parent_id.as_ref().map(ChunkId::as_str)
    }

    #[setter]
    fn set_parent_id(&mut self, id: Option<String>) {
        self.inner.parent_id = id.map(ChunkId::from);
    }

    /// The chunk's text, if it carries it.
    #[getter]
    fn get_content(&self) -> Option<&str> {
        self.inner.content()
    }

    #[setter]
    fn set_content(&mut self, content: Option<String>) -> PyResult<()> {
        let content_ref = self.inner.content_ref().map(str::to_owned);
        self.inner.set_body(content, content_ref).map_err(missing_body)
    }

    /// Where the chunk's text is stored, if it is stored elsewhere.
    #[getter]
    fn get_content_ref(&self) -> Option<&str> {
        self.inner.content_ref()
    }

    #[setter]
    fn set_content_ref(&mut self, content_ref: Option<String>) -> PyResult<()> {
        let content = self.inner.content().map(str::to_owned);
        self.inner.set_body(content, content_ref).map_err(missing_body)
    }

    /// Tokens of `content`, cached at ingest.
    #[getter]
    fn get_token_count(&self) -> Option<usize> {
        self.inner.token_count
    }

    #[setter]
    fn set_token_count(&mut self, tokens: Option<usize>) {
        self.inner.token_count = tokens;
    }

    /// The tokenizer `token_count` was counted with, e.g. `tiktoken:cl100k_base`.
    #[getter]
    fn get_tokenizer(&self) -> Option<&str> {
        self.inner.tokenizer.as_deref()
    }

    #[setter]
    fn set_tokenizer(&mut self, tokenizer: Option<String>) {
        self.inner.tokenizer = tokenizer;
    }

    /// Byte range of `content` in the source text, when the chunk is a slice of it.
    #[getter]
    fn get_span(&self) -> Option<PySpan> {
        self.inner.span.map(|inner| PySpan { inner })
    }

    #[setter]
    fn set_span(&mut self, span: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        self.inner.span = span.map(span_from_py).transpose()?;
        Ok(())
    }

    /// Where the source document was read from.
    #[getter]
    fn get_source_uri(&self) -> Option<&str> {
        self.inner.source_uri.as_deref()
    }

    #[setter]
    fn set_source_uri(&mut self, uri: Option<String>) {
        self.inner.source_uri = uri;
    }

    /// Relevance score from retrieval or reranking; higher is better; `None` counts as 0.0.
    #[getter]
    fn get_score(&self) -> Option<f64> {
        self.inner.score
    }

    #[setter]
    fn set_score(&mut self, score: Option<f64>) {
        self.inner.score = score;
    }

    /// `"trusted"`, `"user_supplied"` or `"untrusted"`.
    #[getter]
    fn get_trust(&self) -> &'static str {
        self.inner.trust.as_str()
    }

    #[setter]
    fn set_trust(&mut self, trust: &str) -> PyResult<()> {
        self.inner.trust = TrustLevel::from_name(trust)?;
        Ok(())
    }

    /// Always packed, ahead of every other chunk (system prompt, user question).
    #[getter]
    fn get_pinned(&self) -> bool {
        self.inner.pinned
    }

    #[setter]
    fn set_pinned(&mut self, pinned: bool) {
        self.inner.pinned = pinned;
    }

    /// Labels a principal needs to see the chunk, as a tuple (assign a new sequence to change).
    #[getter]
    fn get_acl_labels<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, &self.inner.acl_labels)
    }

    #[setter]
    fn set_acl_labels(&mut self, labels: Vec<String>) {
        self.inner.acl_labels = labels;
    }

    /// Producer-specific data (a dict you may change in place); the heading-aware chunker sets
    /// `kind`, `level` and `heading_path`.
    #[getter]
    fn get_metadata<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let what = self.field("metadata");
        self.metadata.get(py, &self.inner.metadata, &what)
    }

    #[setter]
    fn set_metadata(&mut self, py: Python<'_>, metadata: &Bound<'_, PyDict>) -> PyResult<()> {
        let what = self.field("metadata");
        self.inner.metadata = json::map_from_py(metadata, &what)?;
        self.metadata.dict = Some(json::map_to_py(py, &self.inner.metadata, &what)?.unbind());
        Ok(())
    }

    /// Fields of the JSON form this version does not know, kept so a round trip loses nothing; a
    /// key that names a field of the chunk (`tenant_id`, `content`, ...) is a `ValueError`.
    #[getter]
    fn get_extra<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let what = self.field("extra");
        self.extra.get(py, self.inner.extra(), &what)
    }

    #[setter]
    fn set_extra(&mut self, py: Python<'_>, extra: &Bound<'_, PyDict>) -> PyResult<()> {
        let what = self.field("extra");
        let extra = json::map_from_py(extra, &what)?;
        self.inner.set_extra(extra).map_err(extra_field)?;
        self.extra.dict = Some(json::map_to_py(py, self.inner.extra(), &what)?.unbind());
        Ok(())
    }

    /// The titles of the headings enclosing the chunk, outermost first (`metadata["heading_path"]`).
    /// Where the chunk's text is in the original file, for a document whose text is a rendition
    /// (HTML, DOCX, PDF, OCR): a list of dicts tagged by `kind`, e.g. `{"kind": "bytes",
    /// "start": 812, "end": 1460}`, `{"kind": "page", "page": 3, "bbox": [...]}` or
    /// `{"kind": "paragraphs", "part": "word/document.xml", "first": 12, "last": 15}`; empty for
    /// Markdown and text, whose `span` is already into the file.
    #[getter]
    fn provenance<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let value = serde_json::to_value(&self.inner.provenance)
            .map_err(|e| PyValueError::new_err(format!("{}: {e}", self.field("provenance"))))?;
        json::to_py(py, &value, &self.field("provenance"))
    }

    #[getter]
    fn heading_path(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        let chunk = self.to_rust(py)?;
        Ok(chunk.heading_path().into_iter().map(str::to_owned).collect())
    }

    /// The chunk's JSON form as a dict: the fields `ragctl chunk --format jsonl` writes.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let value = serde_json::to_value(self.to_rust(py)?).map_err(|e| PyValueError::new_err(e.to_string()))?;
        match value {
            Value::Object(fields) => {
                Ok(json::record_to_py(py, &fields, &format!("chunk {}", self.inner.id))?.into_any())
            }
            other => json::to_py(py, &other, &format!("chunk {}", self.inner.id)),
        }
    }

    /// The chunk as one line of JSON, byte for byte what `ragctl chunk --format jsonl` writes.
    fn to_json(&self, py: Python<'_>) -> PyResult<String> {
        serde_json::to_string(&self.to_rust(py)?).map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// A chunk from its JSON form as a dict (unknown keys are kept in `extra`).
    #[staticmethod]
    fn from_dict(data: &Bound<'_, PyDict>) -> PyResult<Self> {
        let value = Value::Object(json::record_from_py(data, "chunk")?);
        let chunk: Chunk =
            serde_json::from_value(value).map_err(|e| PyValueError::new_err(format!("not a chunk: {e}")))?;
        Ok(Self::from_rust(chunk))
    }

    /// A chunk from one line of JSON (`ragctl chunk --format jsonl` output).
    #[staticmethod]
    fn from_json(line: &str) -> PyResult<Self> {
        let chunk: Chunk =
            serde_json::from_str(line).map_err(|e| PyValueError::new_err(format!("not a chunk: {e}")))?;
        Ok(Self::from_rust(chunk))
    }

    /// A copy whose fields (metadata included) can change without touching this chunk.
    fn copy(&self, py: Python<'_>) -> PyResult<Self> {
        Ok(Self::from_rust(self.to_rust(py)?))
    }

    fn __copy__(&self, py: Python<'_>) -> PyResult<Self> {
        self.copy(py)
    }

    #[pyo3(signature = (memo = None))]
    fn __deepcopy__(&self, py: Python<'_>, memo: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let _ = memo;
        self.copy(py)
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> Reduced<'py, (String,)> {
        let line = slf.borrow().to_json(slf.py())?;
        Ok((slf.get_type().getattr("from_json")?, (line,)))
    }

    fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        match other.cast::<Self>() {
            Ok(other) => Ok(self.to_rust(py)? == other.borrow().to_rust(py)?),
            Err(_) => Ok(false),
        }
    }

    fn __repr__(&self) -> String {
        let preview: String = self.inner.content().map_or_else(
            || format!("content_ref={:?}", self.inner.content_ref().unwrap_or_default()),
            |c| {
                let mut p: String = c.chars().take(40).collect();
                if c.chars().nth(40).is_some() {
                    p.push_str("...");
                }
                format!("content={p:?}")
            },
        );
        format!(
            "Chunk(id={:?}, document_id={:?}, position={}, token_count={}, {preview})",
            self.inner.id.as_str(),
            self.inner.document_id.as_str(),
            self.inner.position,
            self.inner.token_count.map_or("None".to_owned(), |t| t.to_string()),
        )
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        if let Some(dict) = &self.metadata.dict {
            visit.call(dict)?;
        }
        if let Some(dict) = &self.extra.dict {
            visit.call(dict)?;
        }
        Ok(())
    }

    fn __clear__(&mut self) {
        self.metadata.dict = None;
        self.extra.dict = None;
    }
}
