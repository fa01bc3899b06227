//! Token counters for Python: the built-in `TiktokenCounter` and `HuggingFaceCounter`, and any
//! Python object with `count(text)` and `name()` as the engine's counter.
//!
//! A built-in counter passed to the chunker or the packer is used directly, with no call back into
//! Python. A Python object is wrapped in a [`PythonCounter`]: each count takes the GIL, calls
//! `count`, and turns an exception (or a result that is not a non-negative int) into the
//! engine's `TokenizerError`, which the chunker and packer report as their own error naming the
//! document or chunk. The original exception is kept and becomes the `__cause__` of the one
//! Python sees.

use std::sync::{Arc, Mutex, PoisonError};

use pyo3::exceptions::PyTypeError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use rag_core::{ChunkError, TokenCounter, TokenizerError};
use rag_tokens::{BpeOpenAiCounter, HuggingFaceCounter};

use crate::errors;
use crate::runtime::{Cancel, Reduced};

/// The first exception a Python counter raised during one engine call.
type Failure = Arc<Mutex<Option<PyErr>>>;

/// A Python object with `count(text) -> int` and `name() -> str`, as the engine's counter.
struct PythonCounter {
    /// Shared with the chunker or packer: the engine drops its counter without the GIL, and
    /// dropping a shared handle is then only a count going down, not a Python object released.
    obj: Arc<Py<PyAny>>,
    name: String,
    splits_at_line_starts: bool,
    failure: Failure,
}

impl TokenCounter for PythonCounter {
    fn count(&self, text: &str) -> Result<usize, TokenizerError> {
        Python::attach(|py| {
            let err = match self.obj.bind(py).call_method1(intern!(py, "count"), (text,)) {
                Ok(n) => match n.extract::<usize>() {
                    Ok(n) => return Ok(n),
                    Err(_) => PyTypeError::new_err(format!(
                        "count() returned {}, not a non-negative int",
                        n.repr().map_or_else(|_| "?".to_owned(), |r| r.to_string())
                    )),
                },
                Err(err) => err,
            };
            let message = err.to_string();
            self.failure
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .get_or_insert(err);
            Err(TokenizerError::new(self.name.clone(), message))
        })
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn splits_at_line_starts(&self) -> bool {
        self.splits_at_line_starts
    }
}

/// Where a chunker's or packer's counter comes from, fixed when the chunker or packer is built.
#[derive(Clone)]
pub(crate) enum CounterSource {
    /// A built-in counter: counts in Rust, no GIL.
    Native(Arc<dyn TokenCounter>),
    /// A Python object, called for every count.
    Python {
        obj: Arc<Py<PyAny>>,
        name: String,
        splits_at_line_starts: bool,
    },
}

/// A call's counter that fails once the call is cancelled, so that the engine stops at its next
/// count instead of finishing work nobody awaits.
struct Cancellable {
    counter: Arc<dyn TokenCounter>,
    cancel: Cancel,
}

impl TokenCounter for Cancellable {
    fn count(&self, text: &str) -> Result<usize, TokenizerError> {
        if self.cancel.is_set() {
            return Err(TokenizerError::new(self.counter.name(), "the call was cancelled"));
        }
        self.counter.count(text)
    }

    fn name(&self) -> &str {
        self.counter.name()
    }

    fn splits_at_line_starts(&self) -> bool {
        self.counter.splits_at_line_starts()
    }
}

/// The counter of one engine call, and where a Python counter's exception is kept.
pub(crate) struct CallCounter {
    pub(crate) engine: Arc<dyn TokenCounter>,
    failure: Option<Failure>,
    cancel: Cancel,
}

impl CallCounter {
    /// What stops the call: once set, every count fails.
    pub(crate) fn cancel(&self) -> Cancel {
        self.cancel.clone()
    }

    /// Runs `work`, the engine's part of a call that counts with this counter and may use the
    /// rayon pool (the packer does).
    ///
    /// With a built-in counter that is the shared rayon pool. A Python counter gets a pool of its
    /// own, one thread, for the call: its counts serialise on the GIL anyway, and a counter that
    /// waits for other engine work (its `count` packs with another packer, directly or on a
    /// thread it joins) would otherwise hold shared pool threads that the other work needs, until
    /// every one of them waits and nothing moves.
    pub(crate) fn run<R: Send>(&self, work: impl FnOnce() -> R + Send) -> R {
        // Only a Python counter keeps its exception.
        if self.failure.is_none() {
            return work();
        }
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .thread_name(|_| "ragctl-python-counter".to_owned())
            .build();
        match pool {
            Ok(pool) => pool.install(work),
            // No thread could be started: the work runs where it is, as it would with a built-in
            // counter; only a counter that waits for other engine work can then stall.
            Err(_) => work(),
        }
    }

    /// `err` (the engine's error as Python sees it), with the exception a Python counter raised
    /// during the call, if any, as its `__cause__`.
    pub(crate) fn caused(&self, py: Python<'_>, err: PyErr) -> PyErr {
        let failure = self
            .failure
            .as_ref()
            .and_then(|f| f.lock().unwrap_or_else(PoisonError::into_inner).take());
        errors::with_cause(py, err, failure)
    }
}

impl CounterSource {
    /// The source of a chunker's or packer's `token_counter` argument, and the object itself (for
    /// its `token_counter` attribute); `None` is a `TiktokenCounter("cl100k_base")`.
    pub(crate) fn from_arg(py: Python<'_>, token_counter: Option<&Bound<'_, PyAny>>) -> PyResult<(Self, Py<PyAny>)> {
        let obj = match token_counter {
            Some(obj) if !obj.is_none() => obj.clone().unbind(),
            _ => Bound::new(py, PyTiktokenCounter::cl100k())?.into_any().unbind(),
        };
        Ok((Self::from_py(obj.bind(py))?, obj))
    }

    /// The source of `obj`: a built-in counter, or any object with `count` and `name` (a method,
    /// or a string attribute as `tiktoken.Encoding` has) and optionally `splits_at_line_starts()`.
    pub(crate) fn from_py(obj: &Bound<'_, PyAny>) -> PyResult<Self> {
        if let Ok(counter) = obj.cast::<PyTiktokenCounter>() {
            return Ok(Self::Native(Arc::new(counter.get().inner)));
        }
        if let Ok(counter) = obj.cast::<PyHuggingFaceCounter>() {
            return Ok(Self::Native(Arc::new(counter.get().inner.clone())));
        }
        let py = obj.py();
        let type_name = obj.get_type().name()?;
        if !obj.hasattr(intern!(py, "count"))? || !obj.getattr(intern!(py, "count"))?.is_callable() {
            return Err(PyTypeError::new_err(format!(
                "a token counter needs a count(text) -> int method; {type_name} has none"
            )));
        }
        let name = match obj.getattr(intern!(py, "name")) {
            Ok(name) if name.is_callable() => name.call0()?,
            Ok(name) => name,
            Err(_) => {
                return Err(PyTypeError::new_err(format!(
                    "a token counter needs a name() -> str method; {type_name} has none"
                )));
            }
        };
        let name: String = name
            .extract()
            .map_err(|_| PyTypeError::new_err(format!("{type_name}.name() must return a str")))?;
        let splits_at_line_starts = match obj.getattr(intern!(py, "splits_at_line_starts")) {
            Ok(f) if f.is_callable() => f.call0()?.is_truthy()?,
            _ => false,
        };
        Ok(Self::Python {
            obj: Arc::new(obj.clone().unbind()),
            name,
            splits_at_line_starts,
        })
    }

    /// The counter for one engine call.
    pub(crate) fn for_call(&self) -> CallCounter {
        let (counter, failure): (Arc<dyn TokenCounter>, _) = match self {
            Self::Native(counter) => (Arc::clone(counter), None),
            Self::Python {
                obj,
                name,
                splits_at_line_starts,
            } => {
                let failure = Failure::default();
                let counter = PythonCounter {
                    obj: Arc::clone(obj),
                    name: name.clone(),
                    splits_at_line_starts: *splits_at_line_starts,
                    failure: Arc::clone(&failure),
                };
                (Arc::new(counter), Some(failure))
            }
        };
        let cancel = Cancel::default();
        CallCounter {
            engine: Arc::new(Cancellable {
                counter,
                cancel: cancel.clone(),
            }),
            failure,
            cancel,
        }
    }

    /// The counter's name, e.g. `tiktoken:cl100k_base`.
    pub(crate) fn name(&self) -> &str {
        match self {
            Self::Native(counter) => counter.name(),
            Self::Python { name, .. } => name,
        }
    }
}

/// An unknown encoding (or another counter construction error) as `TokenizerError`.
pub(crate) fn counter_error(py: Python<'_>, err: &ChunkError) -> PyErr {
    match err {
        ChunkError::Tokenizer { tokenizer, .. } => errors::raise(
            py,
            errors::ErrorClass::Tokenizer,
            err.to_string(),
            vec![("tokenizer", errors::Attr::Str(tokenizer.clone()))],
        ),
        other => errors::chunk_error(py, other),
    }
}

/// A counter's own failure as `TokenizerError`, with the Python exception behind it if any.
pub(crate) fn tokenizer_error(py: Python<'_>, err: &TokenizerError) -> PyErr {
    errors::raise(
        py,
        errors::ErrorClass::Tokenizer,
        err.to_string(),
        vec![("tokenizer", errors::Attr::Str(err.tokenizer.clone()))],
    )
}

/// Counts tokens with an OpenAI BPE encoding, `cl100k_base` (the default) or `o200k_base`; the
/// tables are inside the package and built once per process, on the first count.
///
/// The backend is `bpe-openai`, not `tiktoken-rs` as in the CLI: the same token ids (rag-tokens
/// tests both on generated text; the Ray test compares Python's chunks with the CLI's byte for
/// byte) at about twice the speed, and counting is most of what chunking costs.
#[pyclass(frozen, module = "rag_chunker", name = "TiktokenCounter")]
pub(crate) struct PyTiktokenCounter {
    inner: BpeOpenAiCounter,
    encoding: String,
}

impl PyTiktokenCounter {
    /// The engine's counter.
    pub(crate) fn engine(&self) -> BpeOpenAiCounter {
        self.inner
    }

    /// The default counter of the chunker and the packer, `cl100k_base`.
    pub(crate) fn cl100k() -> Self {
        Self {
            inner: BpeOpenAiCounter::cl100k(),
            encoding: "cl100k_base".to_owned(),
        }
    }
}

#[pymethods]
impl PyTiktokenCounter {
    #[new]
    #[pyo3(signature = (encoding = "cl100k_base"))]
    fn new(py: Python<'_>, encoding: &str) -> PyResult<Self> {
        let inner = BpeOpenAiCounter::new(encoding).map_err(|e| counter_error(py, &e))?;
        Ok(Self {
            inner,
            encoding: encoding.to_owned(),
        })
    }

    /// Number of tokens in `text` (special-token text such as `<|endoftext|>` counts as text).
    fn count(&self, py: Python<'_>, text: PyBackedStr) -> PyResult<usize> {
        let counter = self.inner;
        py.detach(|| counter.count(&text)).map_err(|e| tokenizer_error(py, &e))
    }

    /// The token ids of `text`.
    fn encode(&self, py: Python<'_>, text: PyBackedStr) -> Vec<u32> {
        let counter = self.inner;
        py.detach(|| counter.encode(&text))
    }

    /// The tokenizer's name, e.g. `tiktoken:cl100k_base`.
    fn name(&self) -> &str {
        self.inner.name()
    }

    /// True: counts add up across line starts, which lets the chunker count less.
    fn splits_at_line_starts(&self) -> bool {
        self.inner.splits_at_line_starts()
    }

    /// The encoding, `cl100k_base` or `o200k_base`.
    #[getter]
    fn encoding(&self) -> &str {
        &self.encoding
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> Reduced<'py, (String,)> {
        Ok((slf.get_type().into_any(), (slf.get().encoding.clone(),)))
    }

    fn __repr__(&self) -> String {
        format!("TiktokenCounter({:?})", self.encoding)
    }
}

/// Counts tokens with a Hugging Face `tokenizer.json` read from a file (Llama, Mistral, Qwen, ...);
/// nothing is downloaded. Special tokens are not counted and the file's truncation is off.
#[pyclass(frozen, module = "rag_chunker", name = "HuggingFaceCounter")]
pub(crate) struct PyHuggingFaceCounter {
    inner: HuggingFaceCounter,
}

#[pymethods]
impl PyHuggingFaceCounter {
    /// Loads `path`; a file that cannot be read or parsed is a `TokenizerError` naming it.
    #[staticmethod]
    fn from_file(py: Python<'_>, path: std::path::PathBuf) -> PyResult<Self> {
        let inner = py
            .detach(|| HuggingFaceCounter::from_file(&path))
            .map_err(|e| counter_error(py, &e))?;
        Ok(Self { inner })
    }

    /// Number of tokens in `text`, without special tokens.
    fn count(&self, py: Python<'_>, text: PyBackedStr) -> PyResult<usize> {
        py.detach(|| self.inner.count(&text))
            .map_err(|e| tokenizer_error(py, &e))
    }

    /// The token ids of `text`, without special tokens.
    fn encode(&self, py: Python<'_>, text: PyBackedStr) -> PyResult<Vec<u32>> {
        py.detach(|| self.inner.encode(&text))
            .map_err(|e| tokenizer_error(py, &e))
    }

    /// `hf:`, the file name and the start of its SHA-256, e.g. `hf:tokenizer.json@3f2a9c1b7e4d`.
    fn name(&self) -> &str {
        self.inner.name()
    }

    /// False: a tokenizer.json can hold any pre-tokenizer, so counts are not known to add up.
    fn splits_at_line_starts(&self) -> bool {
        self.inner.splits_at_line_starts()
    }

    /// The file the tokenizer was read from.
    #[getter]
    fn path(&self) -> std::path::PathBuf {
        self.inner.path().to_owned()
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> Reduced<'py, (std::path::PathBuf,)> {
        Ok((
            slf.get_type().getattr("from_file")?,
            (slf.get().inner.path().to_owned(),),
        ))
    }

    fn __repr__(&self) -> String {
        format!(
            "HuggingFaceCounter.from_file({:?})",
            self.inner.path().display().to_string()
        )
    }
}
