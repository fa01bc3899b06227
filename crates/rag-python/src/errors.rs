//! Rust errors as Python exceptions of `rag_core.errors`.
//!
//! The exception classes are written in Python (`rag_core/errors.py`), so that they can inherit
//! from two bases (`ChunkerConfigError` is a `ChunkError` and a `ValueError`, so `except ValueError`
//! around the constructor catches it) and carry docstrings; this module looks each one up once, the first time
//! it raises it, and keeps the class (a raise is then a call, not an import and an attribute
//! lookup). The message is the Rust error's message, and the fields a caller may want to act on (`chunk_id`,
//! `document_id`, `offset`, ...) are attributes of the exception.

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;
use rag_core::{ChunkError, PackerError, ParseError, RepackError};

/// One attribute value of an exception.
pub(crate) enum Attr {
    Str(String),
    Int(usize),
    Signed(i64),
    Float(f64),
}

/// The exception classes of `rag_core.errors` the native code raises.
#[derive(Debug, Clone, Copy)]
pub(crate) enum ErrorClass {
    Parse,
    Chunk,
    ChunkerConfig,
    Packer,
    Repack,
    Tokenizer,
}

impl ErrorClass {
    const COUNT: usize = 6;

    fn name(self) -> &'static str {
        match self {
            Self::Parse => "ParseError",
            Self::Chunk => "ChunkError",
            Self::ChunkerConfig => "ChunkerConfigError",
            Self::Packer => "PackerError",
            Self::Repack => "RepackError",
            Self::Tokenizer => "TokenizerError",
        }
    }

    /// The class, imported the first time it is needed.
    fn get(self, py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
        static CLASSES: [PyOnceLock<Py<PyType>>; ErrorClass::COUNT] = [const { PyOnceLock::new() }; ErrorClass::COUNT];
        CLASSES[self as usize].import(py, "rag_core.errors", self.name())
    }
}

/// An instance of `rag_core.errors.<class>` with `message` and `attrs`, as a `PyErr`.
pub(crate) fn raise(py: Python<'_>, class: ErrorClass, message: String, attrs: Vec<(&str, Attr)>) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let cls = class.get(py)?;
        let instance = cls.call1((message.clone(),))?;
        for (name, value) in attrs {
            match value {
                Attr::Str(s) => instance.setattr(name, s)?,
                Attr::Int(i) => instance.setattr(name, i)?,
                Attr::Signed(i) => instance.setattr(name, i)?,
                Attr::Float(f) => instance.setattr(name, f)?,
            }
        }
        Ok(PyErr::from_value(instance))
    };
    // The classes ship with the package; failing to find them means a broken install, and the
    // message must still reach the caller.
    build().unwrap_or_else(|import_error| {
        let err = PyRuntimeError::new_err(message);
        err.set_cause(py, Some(import_error));
        err
    })
}

/// `err` with `cause` as its `__cause__`, when there is one (a Python counter's own exception).
pub(crate) fn with_cause(py: Python<'_>, err: PyErr, cause: Option<PyErr>) -> PyErr {
    if cause.is_some() {
        err.set_cause(py, cause);
    }
    err
}

/// The attributes among `attrs` that the error has, for [`raise`].
fn present<'a>(attrs: impl IntoIterator<Item = Option<(&'a str, Attr)>>) -> Vec<(&'a str, Attr)> {
    attrs.into_iter().flatten().collect()
}

fn str_attr(name: &str, value: impl ToString) -> (&str, Attr) {
    (name, Attr::Str(value.to_string()))
}

/// A parser's error as `ParseError`, with `source_uri` and, when known, `offset`, `line`, `column`.
pub(crate) fn parse_error(py: Python<'_>, err: &ParseError) -> PyErr {
    let attrs = present([
        Some(str_attr("source_uri", err.source_uri())),
        err.offset().map(|offset| ("offset", Attr::Int(offset))),
        err.line().map(|line| ("line", Attr::Int(line))),
        err.column().map(|column| ("column", Attr::Int(column))),
    ]);
    raise(py, ErrorClass::Parse, err.to_string(), attrs)
}

/// A chunker's error: `ChunkerConfigError` (also a `ValueError`) for a configuration that cannot
/// work, `ChunkError` otherwise, with `document_id`, `block_index`, `offset` or `tokenizer`.
pub(crate) fn chunk_error(py: Python<'_>, err: &ChunkError) -> PyErr {
    let class = match err {
        ChunkError::InvalidConfig { .. } => ErrorClass::ChunkerConfig,
        _ => ErrorClass::Chunk,
    };
    let attrs = present([
        err.document_id().map(|id| str_attr("document_id", id)),
        err.block_index().map(|index| ("block_index", Attr::Int(index))),
        err.offset().map(|offset| ("offset", Attr::Int(offset))),
        err.tokenizer().map(|tokenizer| str_attr("tokenizer", tokenizer)),
    ]);
    raise(py, class, err.to_string(), attrs)
}

/// The packer's error as `PackerError` (a `RetrievalError`), with `chunk_id`, `tokenizer`,
/// `budget` or `score`.
pub(crate) fn packer_error(py: Python<'_>, err: &PackerError) -> PyErr {
    let (budget, score) = match err {
        PackerError::InvalidBudget { budget } => (Some(*budget), None),
        PackerError::NonFiniteScore { score, .. } => (None, Some(*score)),
        _ => (None, None),
    };
    let attrs = present([
        err.chunk_id().map(|id| str_attr("chunk_id", id)),
        err.tokenizer().map(|tokenizer| str_attr("tokenizer", tokenizer)),
        budget.map(|budget| ("budget", Attr::Signed(budget))),
        score.map(|score| ("score", Attr::Float(score))),
    ]);
    raise(py, ErrorClass::Packer, err.to_string(), attrs)
}

/// The Repacker's error as `RepackError` (a `RetrievalError`), with `chunk_id` where one is named.
pub(crate) fn repack_error(py: Python<'_>, err: &RepackError) -> PyErr {
    let attrs = present([err.chunk_id().map(|id| str_attr("chunk_id", id))]);
    raise(py, ErrorClass::Repack, err.to_string(), attrs)
}

/// Warns `message` as a `rag_core.errors.ParseWarning` (a `UserWarning`); an error when the
/// warning filters turn warnings into errors, or the class cannot be found.
pub(crate) fn parse_warning(py: Python<'_>, message: &str) -> PyResult<()> {
    static CLASS: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    let class = CLASS.import(py, "rag_core.errors", "ParseWarning")?;
    // A C string cannot hold a NUL, which a file name may.
    let message =
        std::ffi::CString::new(message.replace('\0', "\\0")).map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    PyErr::warn(py, class.as_any(), &message, 1)
}
