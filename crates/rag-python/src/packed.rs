//! `PackedContext` and what it reports: conflict annotations, dropped chunks, excerpts.

use std::collections::HashMap;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use rag_core::{ChunkId, ConflictAnnotation, DroppedChunk, Excerpt, PackedContext};

use crate::chunk::PySpan;
use crate::json;

/// An advisory note that some packed chunks disagree.
#[pyclass(frozen, module = "rag_core", name = "ConflictAnnotation")]
pub(crate) struct PyConflictAnnotation {
    inner: ConflictAnnotation,
}

impl PyConflictAnnotation {
    pub(crate) fn from_rust(inner: ConflictAnnotation) -> Self {
        Self { inner }
    }
}

#[pymethods]
impl PyConflictAnnotation {
    /// `"numeric_disagreement"` or `"trust_mismatch"`.
    #[getter]
    fn kind(&self) -> &'static str {
        self.inner.kind.as_str()
    }

    /// The chunks involved, in packed order.
    #[getter]
    fn chunk_ids(&self) -> Vec<&str> {
        self.inner.chunk_ids.iter().map(ChunkId::as_str).collect()
    }

    /// What disagrees, for a person to read, e.g. `"refund window is": 30 days vs 14 days`.
    #[getter]
    fn detail(&self) -> &str {
        &self.inner.detail
    }

    fn __repr__(&self) -> String {
        format!(
            "ConflictAnnotation(kind={:?}, chunk_ids={:?}, detail={:?})",
            self.inner.kind.as_str(),
            self.chunk_ids(),
            self.inner.detail
        )
    }
}

/// An input chunk that was not packed, and why.
#[pyclass(frozen, module = "rag_core", name = "DroppedChunk")]
pub(crate) struct PyDroppedChunk {
    inner: DroppedChunk,
}

#[pymethods]
impl PyDroppedChunk {
    /// The chunk.
    #[getter]
    fn id(&self) -> &str {
        self.inner.id.as_str()
    }

    /// Why, as a name: `exact_duplicate`, `near_duplicate`, `over_budget`, `over_document_cap`,
    /// `negative_score`, `heading_only` or `not_relevant`.
    #[getter]
    fn reason(&self) -> PyResult<String> {
        let value = serde_json::to_value(&self.inner.reason).map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(value
            .get("reason")
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default()
            .to_owned())
    }

    /// The reason's fields (`of`, `similarity`, `tokens`, `document_id`, `cap`, ...), as a dict.
    #[getter]
    fn details<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let value = serde_json::to_value(&self.inner.reason).map_err(|e| PyValueError::new_err(e.to_string()))?;
        let mut map = match value {
            serde_json::Value::Object(map) => map,
            _ => serde_json::Map::new(),
        };
        map.remove("reason");
        json::map_to_py(py, &map)
    }

    /// The reason as a sentence, e.g. `exact duplicate of doc#3`.
    #[getter]
    fn message(&self) -> String {
        self.inner.reason.to_string()
    }

    fn __repr__(&self) -> PyResult<String> {
        Ok(format!(
            "DroppedChunk(id={:?}, reason={:?}, message={:?})",
            self.inner.id.as_str(),
            self.reason()?,
            self.message()
        ))
    }
}

/// A piece of a rendered context: packed chunks of one document shown as one text.
#[pyclass(frozen, module = "rag_core", name = "Excerpt")]
pub(crate) struct PyExcerpt {
    inner: Excerpt,
}

#[pymethods]
impl PyExcerpt {
    /// The chunks it shows, in document order.
    #[getter]
    fn chunk_ids(&self) -> Vec<&str> {
        self.inner.chunk_ids.iter().map(ChunkId::as_str).collect()
    }

    /// Their document.
    #[getter]
    fn document_id(&self) -> &str {
        self.inner.document_id.as_str()
    }

    /// The byte range of the document it covers, when its chunks have spans.
    #[getter]
    fn span(&self) -> Option<PySpan> {
        self.inner.span.map(|inner| PySpan { inner })
    }

    /// The titles of the headings enclosing its first chunk, outermost first.
    #[getter]
    fn heading_path(&self) -> Vec<String> {
        self.inner.heading_path.clone()
    }

    /// Whether a breadcrumb line (the heading path) precedes it in the context.
    #[getter]
    fn breadcrumb(&self) -> bool {
        self.inner.breadcrumb
    }

    fn __repr__(&self) -> String {
        format!(
            "Excerpt(chunk_ids={:?}, document_id={:?})",
            self.chunk_ids(),
            self.inner.document_id.as_str()
        )
    }
}

/// The result of packing: the packed chunks in prompt order, and an account of every other input.
#[pyclass(frozen, module = "rag_core", name = "PackedContext")]
pub(crate) struct PyPackedContext {
    /// The packed chunks in final order (pinned first): the objects that were passed in.
    #[pyo3(get)]
    chunks: Py<PyList>,
    /// Disagreements noticed among the packed chunks.
    #[pyo3(get)]
    conflicts: Py<PyList>,
    /// Every input chunk that was not packed, in rank order, with its reason.
    #[pyo3(get)]
    dropped: Py<PyList>,
    /// How the context shows the packed chunks (`pack_context` only).
    #[pyo3(get)]
    excerpts: Py<PyList>,
    /// The engine's result without its chunks (they are `chunks`, the caller's own objects),
    /// conflicts and excerpts (Python objects above); `dropped` stays for the counts.
    summary: PackedContext,
}

impl PyPackedContext {
    /// The Python result of `packed`, whose chunks are looked up by id among the caller's
    /// `originals` (`ids[i]` is the id of `originals[i]`), so the caller gets its own objects back.
    pub(crate) fn from_rust(
        py: Python<'_>,
        mut packed: PackedContext,
        originals: &[Py<PyAny>],
        ids: &[ChunkId],
    ) -> PyResult<Self> {
        let position: HashMap<&ChunkId, usize> = ids.iter().enumerate().map(|(i, id)| (id, i)).collect();
        let chunks = PyList::empty(py);
        for chunk in &packed.chunks {
            // The packer refuses repeated ids, so each packed id names exactly one input.
            let i = position
                .get(&chunk.id)
                .copied()
                .ok_or_else(|| PyValueError::new_err(format!("packed chunk {} is not among the inputs", chunk.id)))?;
            chunks.append(originals[i].bind(py))?;
        }
        packed.chunks.clear();
        let conflicts = PyList::empty(py);
        for conflict in std::mem::take(&mut packed.conflicts) {
            conflicts.append(PyConflictAnnotation::from_rust(conflict))?;
        }
        let dropped = PyList::empty(py);
        for inner in packed.dropped.iter().cloned() {
            dropped.append(PyDroppedChunk { inner })?;
        }
        let excerpts = PyList::empty(py);
        for inner in std::mem::take(&mut packed.excerpts) {
            excerpts.append(PyExcerpt { inner })?;
        }
        Ok(Self {
            chunks: chunks.unbind(),
            conflicts: conflicts.unbind(),
            dropped: dropped.unbind(),
            excerpts: excerpts.unbind(),
            summary: packed,
        })
    }
}

#[pymethods]
impl PyPackedContext {
    /// Tokens of the packed chunks (of the rendered context, for `pack_context`).
    #[getter]
    fn tokens_used(&self) -> usize {
        self.summary.tokens_used
    }

    /// The budget the packer was given.
    #[getter]
    fn tokens_budget(&self) -> usize {
        self.summary.tokens_budget
    }

    /// The tokenizer the counts are in, e.g. `tiktoken:cl100k_base`.
    #[getter]
    fn tokenizer(&self) -> &str {
        &self.summary.tokenizer
    }

    /// The order applied, e.g. `lost_in_middle`.
    #[getter]
    fn order(&self) -> &'static str {
        self.summary.order.as_str()
    }

    /// The selection strategy applied (`optimal` may fall back to `knapsack`).
    #[getter]
    fn strategy(&self) -> &'static str {
        self.summary.strategy.as_str()
    }

    /// How many input chunks the request's principal may not see (it lacks one of their
    /// `acl_labels`): left out first, and named nowhere, not even in `dropped`.
    #[getter]
    fn hidden_by_acl(&self) -> usize {
        self.summary.hidden_by_acl
    }

    /// Remarks about the run, e.g. a strategy fallback or recounted token counts.
    #[getter]
    fn notes(&self) -> Vec<String> {
        self.summary.notes.clone()
    }

    /// The rendered prompt context (`pack_context` only, else `None`).
    #[getter]
    fn context(&self) -> Option<&str> {
        self.summary.context.as_deref()
    }

    /// How many chunks were dropped as exact or near duplicates.
    fn dropped_dedup(&self) -> usize {
        self.summary.dropped_dedup()
    }

    /// How many chunks were dropped for lack of room (budget or per-document cap).
    fn dropped_budget(&self) -> usize {
        self.summary.dropped_budget()
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "PackedContext(chunks={}, tokens_used={}, tokens_budget={}, dropped={}, conflicts={})",
            self.chunks.bind(py).len(),
            self.summary.tokens_used,
            self.summary.tokens_budget,
            self.dropped.bind(py).len(),
            self.conflicts.bind(py).len()
        )
    }
}
