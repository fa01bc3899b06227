//! The Repacker's engine for Python, and `ContextConfig`.
//!
//! `rag_packer.Repacker` is a Python class (its attributes can be reassigned between calls,
//! and its `size_func` is any Python callable); each `repack` builds a
//! [`PyRepackerEngine`] from the current attributes and runs it here, without the GIL.
//!
//! A Python `size_func` is called by the Python class before the engine runs, once per chunk,
//! so its exceptions reach the caller as they are; the engine reads the sizes by input
//! position. For that, the engine's copies of the chunks carry their input position in
//! `position` (nothing the Repacker renders or orders by), which also maps the chunks it
//! returns back to the caller's objects.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};
use rag_core::{Chunk, RepackError};
use rag_packer::{
    BatchSize, ContextConfig, RepackMethod, RepackMode, RepackOutput, RepackPack, Repacker, RepackerConfig, SizeFn,
};

use crate::chunk::{PyChunk, chunks_from_py};
use crate::errors;
use crate::names::Named;
use crate::runtime::{Work, run_awaitable, run_blocking};

/// Renders each chunk through a template in the Repacker's `context` mode (and `pack_context`).
#[pyclass(frozen, module = "rag_packer", name = "ContextConfig")]
#[derive(Clone)]
pub(crate) struct PyContextConfig {
    pub(crate) inner: ContextConfig,
    template: String,
}

#[pymethods]
impl PyContextConfig {
    /// Placeholders: `{content}`, `{id}`, `{source_uri}`, `{score}`, `{heading_path}`,
    /// `{metadata.KEY}`; `{{` and `}}` are literal braces. An unknown placeholder is a
    /// `RepackError` here, not when rendering.
    #[new]
    #[pyo3(signature = (template = "{content}"))]
    fn new(py: Python<'_>, template: &str) -> PyResult<Self> {
        let inner = ContextConfig::new(template).map_err(|e| errors::repack_error(py, &e))?;
        Ok(Self {
            inner,
            template: template.to_owned(),
        })
    }

    /// The template.
    #[getter]
    fn template(&self) -> &str {
        &self.template
    }

    /// `chunk` rendered through the template.
    fn render(&self, py: Python<'_>, chunk: &Bound<'_, PyChunk>) -> PyResult<String> {
        let chunk = chunk.borrow().to_rust(py)?;
        self.inner
            .render(&chunk)
            .map_err(|e| errors::repack_error(py, &RepackError::from(e)))
    }

    fn __repr__(&self) -> String {
        format!("ContextConfig({:?})", self.template)
    }
}

fn parse_batch_size(value: Option<&Bound<'_, PyAny>>) -> PyResult<BatchSize> {
    let Some(value) = value.filter(|v| !v.is_none()) else {
        return Ok(BatchSize::None);
    };
    if let Ok(s) = value.cast::<PyString>() {
        return match s.to_cow()?.as_ref() {
            "auto" => Ok(BatchSize::Auto),
            other => Err(PyValueError::new_err(format!(
                "batch_size is None, a positive int or \"auto\", not {other:?}"
            ))),
        };
    }
    value
        .extract::<usize>()
        .map(BatchSize::Count)
        .map_err(|_| PyTypeError::new_err("batch_size is None, a positive int or \"auto\""))
}

/// One Repacker configuration, checked; runs PACK -> ORDER -> SHAPE over chunks.
#[pyclass(frozen, module = "rag_packer", name = "RepackerEngine")]
pub(crate) struct PyRepackerEngine {
    config: RepackerConfig,
}

/// One repack call: the checked Repacker, the engine's chunks and the caller's objects.
struct RepackJob {
    repacker: Repacker,
    chunks: Vec<Chunk>,
    objects: Vec<Py<PyAny>>,
}

impl Work for RepackJob {
    type Output = (Result<RepackOutput, RepackError>, Vec<Py<PyAny>>);

    fn run(self) -> Self::Output {
        (self.repacker.repack(self.chunks), self.objects)
    }

    /// The Python value of the Repacker's output, its chunks mapped back to the caller's objects.
    fn finish(py: Python<'_>, (result, objects): Self::Output) -> PyResult<Py<PyAny>> {
        let output = result.map_err(|e| errors::repack_error(py, &e))?;
        let originals = |chunks: &[Chunk]| -> PyResult<Bound<'_, PyList>> {
            PyList::new(py, chunks.iter().map(|c| objects[c.position].clone_ref(py)))
        };
        Ok(match output {
            RepackOutput::Chunks(chunks) => originals(&chunks)?.into_any().unbind(),
            RepackOutput::Batches(batches) => {
                let list = PyList::empty(py);
                for batch in &batches {
                    list.append(originals(batch)?)?;
                }
                list.into_any().unbind()
            }
            RepackOutput::Context(text) => PyString::new(py, &text).into_any().unbind(),
            RepackOutput::Contexts(texts) => PyList::new(py, texts)?.into_any().unbind(),
        })
    }
}

impl PyRepackerEngine {
    /// The work of one call; `sizes[i]` is chunk `i`'s size, or `None` for characters of the
    /// content.
    fn job(&self, py: Python<'_>, chunks: &Bound<'_, PyAny>, sizes: Option<Vec<usize>>) -> PyResult<RepackJob> {
        let (mut engine_chunks, objects) = chunks_from_py(chunks, "chunks")?;
        for (i, chunk) in engine_chunks.iter_mut().enumerate() {
            chunk.position = i;
        }
        let size_fn = match sizes {
            None => SizeFn::Chars,
            Some(sizes) => {
                if sizes.len() != engine_chunks.len() {
                    return Err(PyValueError::new_err(format!(
                        "{} sizes for {} chunks",
                        sizes.len(),
                        engine_chunks.len()
                    )));
                }
                SizeFn::custom(move |chunk: &Chunk| sizes[chunk.position])
            }
        };
        let config = self
            .config
            .to_builder()
            .with_size_fn(size_fn)
            .build()
            .map_err(|e| errors::repack_error(py, &e))?;
        let repacker = Repacker::new(config);
        Ok(RepackJob {
            repacker,
            chunks: engine_chunks,
            objects,
        })
    }
}

#[pymethods]
impl PyRepackerEngine {
    #[new]
    #[pyo3(signature = (*, method, mode, delimiter, size_limit, context_config, pack, batch_size))]
    fn new(
        py: Python<'_>,
        method: &str,
        mode: &str,
        delimiter: String,
        size_limit: Option<usize>,
        context_config: Option<&Bound<'_, PyContextConfig>>,
        pack: &str,
        batch_size: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        // Checks the combination now, so a bad configuration fails where it was given.
        let config = RepackerConfig::builder()
            .with_method(RepackMethod::from_name(method)?)
            .with_mode(RepackMode::from_name(mode)?)
            .with_delimiter(delimiter)
            .with_size_fn(SizeFn::Chars)
            .with_size_limit(size_limit)
            .with_pack(RepackPack::from_name(pack)?)
            .with_batch_size(parse_batch_size(batch_size)?)
            .with_context(context_config.map(|c| c.get().inner.clone()))
            .build()
            .map_err(|e| errors::repack_error(py, &e))?;
        Ok(Self { config })
    }

    /// Repacks `chunks` on the calling thread, without the GIL.
    #[pyo3(signature = (chunks, sizes = None))]
    fn repack_blocking(
        &self,
        py: Python<'_>,
        chunks: &Bound<'_, PyAny>,
        sizes: Option<Vec<usize>>,
    ) -> PyResult<Py<PyAny>> {
        run_blocking(py, self.job(py, chunks, sizes)?)
    }

    /// Repacks `chunks` on a worker thread (awaitable).
    #[pyo3(signature = (chunks, sizes = None))]
    fn repack<'py>(
        &self,
        py: Python<'py>,
        chunks: &Bound<'py, PyAny>,
        sizes: Option<Vec<usize>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        run_awaitable(py, self.job(py, chunks, sizes)?)
    }
}
