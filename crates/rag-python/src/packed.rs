//! `PackedContext` and what it reports: conflict annotations, dropped chunks, excerpts.

use std::collections::HashMap;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use rag_core::{ChunkId, ConflictAnnotation, DroppedChunk, Excerpt, PackedContext};

use crate::chunk::{PyChunk, PySpan};
use crate::json;

/// An advisory note that some packed chunks disagree.
#[pyclass(frozen, get_all, module = "rag_core", name = "ConflictAnnotation")]
pub(crate) struct PyConflictAnnotation {
    /// `"numeric_disagreement"` or `"trust_mismatch"`.
    kind: &'static str,
    /// The chunks involved, in packed order.
    chunk_ids: Vec<String>,
    /// What disagrees, for a person to read, e.g. `"refund window is": 30 days vs 14 days`.
    detail: String,
}

impl PyConflictAnnotation {
    pub(crate) fn from_rust(conflict: ConflictAnnotation) -> Self {
        Self {
            kind: conflict.kind.as_str(),
            chunk_ids: conflict.chunk_ids.into_iter().map(ChunkId::into_string).collect(),
            detail: conflict.detail,
        }
    }
}

#[pymethods]
impl PyConflictAnnotation {
    fn __repr__(&self) -> String {
        format!(
            "ConflictAnnotation(kind={:?}, chunk_ids={:?}, detail={:?})",
            self.kind, self.chunk_ids, self.detail
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
    /// `negative_score`, `heading_only`, `not_relevant` or `cut_to_fit`.
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
        json::map_to_py(py, &map, &format!("details of {}", self.inner.id))
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
#[pyclass(frozen, get_all, module = "rag_core", name = "Excerpt")]
pub(crate) struct PyExcerpt {
    /// The chunks it shows, in document order.
    chunk_ids: Vec<String>,
    /// Their document.
    document_id: String,
    /// The byte range of the document it covers, when its chunks have spans.
    span: Option<PySpan>,
    /// The titles of the headings enclosing its first chunk, outermost first.
    heading_path: Vec<String>,
    /// Whether a breadcrumb line (the heading path) precedes it in the context.
    breadcrumb: bool,
}

impl PyExcerpt {
    fn from_rust(excerpt: Excerpt) -> Self {
        Self {
            chunk_ids: excerpt.chunk_ids.into_iter().map(ChunkId::into_string).collect(),
            document_id: excerpt.document_id.into_string(),
            span: excerpt.span.map(|inner| PySpan { inner }),
            heading_path: excerpt.heading_path,
            breadcrumb: excerpt.breadcrumb,
        }
    }
}

#[pymethods]
impl PyExcerpt {
    fn __repr__(&self) -> String {
        format!(
            "Excerpt(chunk_ids={:?}, document_id={:?})",
            self.chunk_ids, self.document_id
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
    /// Tokens of the packed chunks (of the rendered context, for `pack_context`).
    #[pyo3(get)]
    tokens_used: usize,
    /// The budget the packer was given.
    #[pyo3(get)]
    tokens_budget: usize,
    /// The tokenizer the counts are in, e.g. `tiktoken:cl100k_base`.
    #[pyo3(get)]
    tokenizer: String,
    /// The order applied, e.g. `lost_in_middle`.
    #[pyo3(get)]
    order: &'static str,
    /// The selection strategy applied (`optimal` may fall back to `knapsack`).
    #[pyo3(get)]
    strategy: &'static str,
    /// How many input chunks the request's principal may not see (it lacks one of their
    /// `acl_labels`): left out first, and named nowhere, not even in `dropped`.
    #[pyo3(get)]
    hidden_by_acl: usize,
    /// Remarks about the run, e.g. a strategy fallback or recounted token counts.
    #[pyo3(get)]
    notes: Vec<String>,
    /// The rendered prompt context (`pack_context` only, else `None`).
    #[pyo3(get)]
    context: Option<String>,
    /// How the chunks were scored when the packer was given a `query`, as `ragctl pack` prints it
    /// (`bm25 against the query ...`, `given ...`); `None` without a query.
    #[pyo3(get)]
    scoring: Option<String>,
    /// The score each packed chunk was ranked by (its section heading's when that lifted it),
    /// parallel to `chunks`.
    #[pyo3(get)]
    effective_scores: Vec<f64>,
    /// With hybrid scoring, each packed chunk's `(bm25, cosine)`, parallel to `chunks` (`None`
    /// for a part cut to fit); empty otherwise.
    #[pyo3(get)]
    score_parts: Vec<Option<(f64, f64)>>,
    /// How many chunks were dropped as exact or near duplicates.
    dedup_drops: usize,
    /// How many chunks were dropped for lack of room.
    budget_drops: usize,
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
        for chunk in std::mem::take(&mut packed.chunks) {
            // The packer refuses repeated ids, so each packed id names exactly one input; a part
            // cut to fit is no input, and is a new chunk.
            match position.get(&chunk.id).copied() {
                Some(i) => chunks.append(originals[i].bind(py))?,
                None if chunk.is_cut() => {
                    chunks.append(Py::new(py, PyChunk::from_rust(chunk))?)?;
                }
                None => {
                    return Err(PyValueError::new_err(format!(
                        "packed chunk {} is not among the inputs",
                        chunk.id
                    )));
                }
            }
        }
        let conflicts = PyList::empty(py);
        for conflict in std::mem::take(&mut packed.conflicts) {
            conflicts.append(PyConflictAnnotation::from_rust(conflict))?;
        }
        let (dedup_drops, budget_drops) = (packed.dropped_dedup(), packed.dropped_budget());
        let dropped = PyList::empty(py);
        for inner in std::mem::take(&mut packed.dropped) {
            dropped.append(PyDroppedChunk { inner })?;
        }
        let excerpts = PyList::empty(py);
        for inner in std::mem::take(&mut packed.excerpts) {
            excerpts.append(PyExcerpt::from_rust(inner))?;
        }
        Ok(Self {
            chunks: chunks.unbind(),
            conflicts: conflicts.unbind(),
            dropped: dropped.unbind(),
            excerpts: excerpts.unbind(),
            tokens_used: packed.tokens_used,
            tokens_budget: packed.tokens_budget,
            order: packed.order.as_str(),
            strategy: packed.strategy.as_str(),
            hidden_by_acl: packed.hidden_by_acl,
            dedup_drops,
            budget_drops,
            tokenizer: packed.tokenizer,
            notes: packed.notes,
            context: packed.context,
            scoring: packed.scoring.as_ref().map(ToString::to_string),
            effective_scores: packed.effective_scores,
            score_parts: packed
                .score_parts
                .iter()
                .map(|parts| parts.map(|p| (p.bm25, p.cosine)))
                .collect(),
        })
    }
}

#[pymethods]
impl PyPackedContext {
    /// How many chunks were dropped as exact or near duplicates.
    fn dropped_dedup(&self) -> usize {
        self.dedup_drops
    }

    /// How many chunks were dropped for lack of room (budget or per-document cap).
    fn dropped_budget(&self) -> usize {
        self.budget_drops
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "PackedContext(chunks={}, tokens_used={}, tokens_budget={}, dropped={}, conflicts={})",
            self.chunks.bind(py).len(),
            self.tokens_used,
            self.tokens_budget,
            self.dropped.bind(py).len(),
            self.conflicts.bind(py).len()
        )
    }
}
