//! Embedders for Python: the built-in `StaticEmbedder` (a model2vec folder), and any Python
//! object with `embed(list[str]) -> list[list[float]]` as the engine's embedder.
//!
//! A `StaticEmbedder` passed to the packer is used directly, with no call back into Python. A
//! Python object is wrapped in a [`PythonEmbedder`]: each batch (up to the packer's
//! `EMBED_BATCH` texts) takes the GIL, calls `embed`, and turns an exception or a result that is
//! not a list of float lists into the engine's `EmbedError`; the packer reports it as its own
//! error (`PackerError`), and checks every batch against the SPI's contract.

use std::path::PathBuf;
use std::sync::Arc;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use rag_core::{EmbedError, Embedder};
use rag_embed::StaticEmbedder;

use crate::runtime::Reduced;

/// A model2vec-format static embedding model, loaded from a folder (`config.json`,
/// `model.safetensors`, `tokenizer.json`); nothing is downloaded.
#[pyclass(frozen, module = "rag_packer", name = "StaticEmbedder")]
pub(crate) struct PyStaticEmbedder {
    inner: Arc<StaticEmbedder>,
}

#[pymethods]
impl PyStaticEmbedder {
    /// Loads the folder `path`; a missing or malformed file is a `ValueError` naming it.
    #[new]
    fn new(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let inner = py
            .detach(|| StaticEmbedder::load(&path))
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(Self { inner: Arc::new(inner) })
    }

    /// One vector per text (the GIL is released while it embeds).
    fn embed(&self, py: Python<'_>, texts: Vec<String>) -> PyResult<Vec<Vec<f32>>> {
        let embedder = Arc::clone(&self.inner);
        py.detach(move || {
            let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
            embedder.embed(&texts)
        })
        .map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// The length of every vector.
    #[getter]
    fn dimension(&self) -> usize {
        self.inner.dimension()
    }

    /// The model's id: `model2vec:` and 12 hex digits of a hash of its files.
    #[getter]
    fn id(&self) -> &str {
        self.inner.id()
    }

    /// The folder the model was loaded from.
    #[getter]
    fn path(&self) -> PathBuf {
        self.inner.dir().to_owned()
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> Reduced<'py, (PathBuf,)> {
        Ok((slf.get_type().into_any(), (slf.get().inner.dir().to_owned(),)))
    }

    fn __repr__(&self) -> String {
        format!("StaticEmbedder({:?})", self.inner.dir().display().to_string())
    }
}

/// A Python object with `embed(list[str]) -> list[list[float]]`, as the engine's embedder.
struct PythonEmbedder {
    obj: Arc<Py<PyAny>>,
    id: String,
    dimension: usize,
}

impl Embedder for PythonEmbedder {
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Python::attach(|py| {
            let result = self
                .obj
                .bind(py)
                .call_method1(intern!(py, "embed"), (texts.to_vec(),))
                .map_err(|err| EmbedError::new(&self.id, err.to_string()))?;
            result
                .extract::<Vec<Vec<f32>>>()
                .map_err(|_| EmbedError::new(&self.id, "embed() must return a list of lists of floats"))
        })
    }

    fn dimension(&self) -> usize {
        self.dimension
    }

    fn id(&self) -> &str {
        &self.id
    }
}

/// The engine's embedder of a packing call's `embedder` argument: a `StaticEmbedder` as it is,
/// any other object with `embed` wrapped. Its id is `id` (a string attribute or method) or, if
/// it has none, `python:` and its type's name; its dimension is `dimension` (an int attribute or
/// method) or, if it has none, the length of its vector of `"dimension"`, asked once here.
pub(crate) fn embedder_from_py(obj: &Bound<'_, PyAny>) -> PyResult<Arc<dyn Embedder>> {
    if let Ok(embedder) = obj.cast::<PyStaticEmbedder>() {
        return Ok(Arc::clone(&embedder.get().inner) as Arc<dyn Embedder>);
    }
    let py = obj.py();
    let type_name = obj.get_type().name()?.to_string();
    if !obj.hasattr(intern!(py, "embed"))? || !obj.getattr(intern!(py, "embed"))?.is_callable() {
        return Err(PyTypeError::new_err(format!(
            "an embedder needs an embed(list[str]) -> list[list[float]] method; {type_name} has none"
        )));
    }
    let id = match attribute(obj, "id")? {
        Some(id) => id
            .extract::<String>()
            .map_err(|_| PyTypeError::new_err(format!("{type_name}.id must be a str")))?,
        None => format!("python:{type_name}"),
    };
    let dimension = match attribute(obj, "dimension")? {
        Some(dimension) => dimension
            .extract::<usize>()
            .map_err(|_| PyTypeError::new_err(format!("{type_name}.dimension must be a non-negative int")))?,
        None => {
            let probe: Vec<Vec<f32>> = obj
                .call_method1(intern!(py, "embed"), (vec!["dimension"],))?
                .extract()
                .map_err(|_| {
                    PyTypeError::new_err(format!("{type_name}.embed() must return a list of lists of floats"))
                })?;
            probe.first().map_or(0, Vec::len)
        }
    };
    Ok(Arc::new(PythonEmbedder {
        obj: Arc::new(obj.clone().unbind()),
        id,
        dimension,
    }))
}

/// The value of `obj.name`, called when it is a method; `None` when it is missing or `None`.
fn attribute<'py>(obj: &Bound<'py, PyAny>, name: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
    match obj.getattr(name) {
        Ok(value) if value.is_callable() => Ok(Some(value.call0()?)),
        Ok(value) if value.is_none() => Ok(None),
        Ok(value) => Ok(Some(value)),
        Err(_) => Ok(None),
    }
}
