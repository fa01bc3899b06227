//! `Document`, `Block` and `ParsedDocument`: what parsers produce and chunkers consume.

use std::sync::Arc;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rag_core::{Block, BlockType, Document, HeadingLevel, ParsedDocument};

use crate::chunk::{PySpan, span_from_py};
use crate::json;
use crate::names::Named;

/// A document as a parser read it: identity, origin, and its full source text.
#[pyclass(frozen, module = "rag_core", name = "Document")]
#[derive(Clone)]
pub(crate) struct PyDocument {
    pub(crate) inner: Arc<Document>,
}

#[pymethods]
impl PyDocument {
    #[new]
    #[pyo3(signature = (id, text, corpus_id = "local", source_uri = None))]
    fn new(id: String, text: String, corpus_id: &str, source_uri: Option<String>) -> Self {
        Self {
            inner: Arc::new(Document {
                source_uri: source_uri.unwrap_or_else(|| id.clone()),
                id: id.into(),
                corpus_id: corpus_id.into(),
                text,
            }),
        }
    }

    /// The document's id; chunks copy it.
    #[getter]
    fn id(&self) -> &str {
        self.inner.id.as_str()
    }

    /// The corpus the document belongs to.
    #[getter]
    fn corpus_id(&self) -> &str {
        self.inner.corpus_id.as_str()
    }

    /// Where the document was read from.
    #[getter]
    fn source_uri(&self) -> &str {
        &self.inner.source_uri
    }

    /// The source text exactly as read; spans are UTF-8 byte offsets into it.
    #[getter]
    fn text(&self) -> &str {
        &self.inner.text
    }

    fn __repr__(&self) -> String {
        format!(
            "Document(id={:?}, corpus_id={:?}, source_uri={:?}, text=<{} bytes>)",
            self.inner.id.as_str(),
            self.inner.corpus_id.as_str(),
            self.inner.source_uri,
            self.inner.text.len()
        )
    }
}

/// One structural unit of a parsed document.
#[pyclass(frozen, module = "rag_core", name = "Block")]
#[derive(Clone)]
pub(crate) struct PyBlock {
    pub(crate) inner: Block,
}

#[pymethods]
impl PyBlock {
    #[new]
    #[pyo3(signature = (block_type, span, *, level = None, text = None, attributes = None))]
    fn new(
        block_type: &str,
        span: &Bound<'_, PyAny>,
        level: Option<u8>,
        text: Option<String>,
        attributes: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let block_type = BlockType::from_name(block_type)?;
        let level = match level {
            Some(level) => Some(
                HeadingLevel::new(level)
                    .ok_or_else(|| PyValueError::new_err(format!("heading level {level} is outside 1..=6")))?,
            ),
            None => None,
        };
        let attributes = match attributes {
            Some(a) => json::map_from_py(a, "block attributes")?,
            None => serde_json::Map::new(),
        };
        Ok(Self {
            inner: Block {
                block_type,
                level,
                text,
                span: span_from_py(span)?,
                attributes,
            },
        })
    }

    /// `"heading"`, `"paragraph"`, `"list_item"`, `"table_row"`, `"code"`, `"quote"`, `"caption"` or `"other"`.
    #[getter]
    fn block_type(&self) -> &'static str {
        self.inner.block_type.as_str()
    }

    /// The heading level, 1 to 6, on headings only.
    #[getter]
    fn level(&self) -> Option<u8> {
        self.inner.level.map(HeadingLevel::get)
    }

    /// The block's text where it differs from its source slice (a heading's title), else `None`.
    #[getter]
    fn text(&self) -> Option<&str> {
        self.inner.text.as_deref()
    }

    /// Where the block sits in the source text, markup included.
    #[getter]
    fn span(&self) -> PySpan {
        PySpan { inner: self.inner.span }
    }

    /// Attributes from the parser (OCR engine, confidence, bounding box, page, ...), as a new dict.
    #[getter]
    fn attributes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        json::map_to_py(py, &self.inner.attributes, "block attributes")
    }

    fn __repr__(&self) -> String {
        let level = self
            .inner
            .level
            .map_or(String::new(), |l| format!(", level={}", l.get()));
        format!(
            "Block({:?}, Span(start={}, end={}){level})",
            self.inner.block_type.as_str(),
            self.inner.span.start,
            self.inner.span.end
        )
    }
}

/// A document and its blocks in reading order: what a chunker consumes.
#[pyclass(frozen, module = "rag_core", name = "ParsedDocument")]
#[derive(Clone)]
pub(crate) struct PyParsedDocument {
    pub(crate) inner: Arc<ParsedDocument>,
}

impl PyParsedDocument {
    pub(crate) fn from_rust(parsed: ParsedDocument) -> Self {
        Self {
            inner: Arc::new(parsed),
        }
    }
}

#[pymethods]
impl PyParsedDocument {
    #[new]
    fn new(document: &Bound<'_, PyDocument>, blocks: Vec<PyRef<'_, PyBlock>>) -> Self {
        Self::from_rust(ParsedDocument::new(
            Document::clone(&document.get().inner),
            blocks.iter().map(|b| b.inner.clone()).collect(),
        ))
    }

    /// The document (its text is copied out on each access).
    #[getter]
    fn document(&self) -> PyDocument {
        PyDocument {
            inner: Arc::new(self.inner.document.clone()),
        }
    }

    /// The blocks, in source order.
    #[getter]
    fn blocks(&self) -> Vec<PyBlock> {
        self.inner.blocks.iter().map(|b| PyBlock { inner: b.clone() }).collect()
    }

    /// The document's source text.
    #[getter]
    fn text(&self) -> &str {
        &self.inner.document.text
    }

    /// How the text was derived from the file when it is a rendition (HTML, DOCX, PDF, OCR):
    /// a dict with `format`, `original_bytes`, `source_map` (a list of `{"span": {"start",
    /// "end"}, "origin": {...}}`, stretches of the text and the place in the file each came
    /// from), `left_out` (bytes of the original left out of the text, by kind) and `warnings`; `None` when
    /// the text is the file itself (Markdown, plain text).
    #[getter]
    fn rendition<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let Some(rendition) = &self.inner.rendition else {
            return Ok(None);
        };
        let value = serde_json::to_value(rendition).map_err(|e| PyValueError::new_err(format!("rendition: {e}")))?;
        json::to_py(py, &value, "rendition").map(Some)
    }

    /// What the parser must tell the caller because the text may not be the whole file (a
    /// repaired PDF, skipped content), one sentence each, and last, for a document that gave no
    /// text, why (`no text: ...`, the rule `ragctl chunk` warns by); empty when there is nothing
    /// to say.
    #[getter]
    fn warnings(&self) -> Vec<String> {
        let mut warnings = self.inner.warnings().to_vec();
        warnings.extend(rag_chunker::parse::no_text_warning(&self.inner));
        warnings
    }

    /// Where the text of `span` (a `Span` or a `(start, end)` pair) came from in the original:
    /// the places, in the shape of `Chunk.provenance`; empty when the text is the file itself.
    /// A span past the end of the text is a `ValueError`, as a reversed one is.
    fn provenance<'py>(&self, py: Python<'py>, span: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let span = span_from_py(span)?;
        let len = self.inner.document.text.len();
        if span.end > len {
            return Err(PyValueError::new_err(format!(
                "span {}..{} is past the end of the document's text ({len} bytes)",
                span.start, span.end
            )));
        }
        let origins = self.inner.provenance(span);
        let value = serde_json::to_value(&origins).map_err(|e| PyValueError::new_err(format!("provenance: {e}")))?;
        json::to_py(py, &value, "provenance")
    }

    /// A block's text: its own `text` if it has one (a heading's title), else its source slice;
    /// `None` if its span is not a slice of the text.
    fn block_text(&self, block: &Bound<'_, PyBlock>) -> Option<String> {
        self.inner.block_text(&block.get().inner).map(str::to_owned)
    }

    fn __len__(&self) -> usize {
        self.inner.blocks.len()
    }

    fn __repr__(&self) -> String {
        format!(
            "ParsedDocument(document_id={:?}, blocks={}, text=<{} bytes>)",
            self.inner.document.id.as_str(),
            self.inner.blocks.len(),
            self.inner.document.text.len()
        )
    }
}
