//! Rust errors as Python exceptions of `rag_core.errors`.
//!
//! The exception classes are written in Python (`rag_core/errors.py`), so that they can inherit
//! from two bases (`ChunkerConfigError` is a `ChunkError` and a `ValueError`, as the seed's
//! constructor promises) and carry docstrings; this module looks them up when it raises one. The
//! message is the Rust error's message, and the fields a caller may want to act on (`chunk_id`,
//! `document_id`, `offset`, ...) are attributes of the exception.

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use rag_core::{ChunkError, PackerError, ParseError, RepackError};

/// One attribute value of an exception.
pub(crate) enum Attr {
    Str(String),
    Int(usize),
    Signed(i64),
    Float(f64),
}

/// An instance of `rag_core.errors.<class>` with `message` and `attrs`, as a `PyErr`.
pub(crate) fn raise(py: Python<'_>, class: &str, message: String, attrs: Vec<(&str, Attr)>) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let cls = py.import("rag_core.errors")?.getattr(class)?;
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

/// A parser's error as `ParseError`, with `source_uri` and, when known, `offset`, `line`, `column`.
pub(crate) fn parse_error(py: Python<'_>, err: &ParseError) -> PyErr {
    let mut attrs = Vec::new();
    match err {
        ParseError::InvalidUtf8 { source_uri, offset } => {
            attrs.push(("source_uri", Attr::Str(source_uri.clone())));
            attrs.push(("offset", Attr::Int(*offset)));
        }
        ParseError::UnsupportedType { source_uri, .. } | ParseError::Io { source_uri, .. } => {
            attrs.push(("source_uri", Attr::Str(source_uri.clone())));
        }
        ParseError::Malformed {
            source_uri,
            line,
            column,
            ..
        } => {
            attrs.push(("source_uri", Attr::Str(source_uri.clone())));
            attrs.extend(line.map(|line| ("line", Attr::Int(line))));
            attrs.extend(column.map(|column| ("column", Attr::Int(column))));
        }
        _ => {}
    }
    raise(py, "ParseError", err.to_string(), attrs)
}

/// A chunker's error: `ChunkerConfigError` (also a `ValueError`) for a configuration that cannot
/// work, `ChunkError` otherwise, with `document_id`, `block_index`, `offset` or `tokenizer`.
pub(crate) fn chunk_error(py: Python<'_>, err: &ChunkError) -> PyErr {
    let mut attrs = Vec::new();
    let class = match err {
        ChunkError::InvalidConfig { .. } => "ChunkerConfigError",
        ChunkError::Tokenizer { tokenizer, .. } => {
            attrs.push(("tokenizer", Attr::Str(tokenizer.clone())));
            "ChunkError"
        }
        ChunkError::MalformedBlock {
            document_id,
            block_index,
            ..
        } => {
            attrs.push(("document_id", Attr::Str(document_id.to_string())));
            attrs.push(("block_index", Attr::Int(*block_index)));
            "ChunkError"
        }
        ChunkError::TokenCount {
            document_id,
            offset,
            source,
        } => {
            attrs.push(("document_id", Attr::Str(document_id.to_string())));
            attrs.extend(offset.map(|offset| ("offset", Attr::Int(offset))));
            attrs.push(("tokenizer", Attr::Str(source.tokenizer.clone())));
            "ChunkError"
        }
        _ => "ChunkError",
    };
    raise(py, class, err.to_string(), attrs)
}

/// The packer's error as `PackerError` (a `RetrievalError`), with `chunk_id` or `budget`.
pub(crate) fn packer_error(py: Python<'_>, err: &PackerError) -> PyErr {
    let mut attrs = Vec::new();
    match err {
        PackerError::InvalidBudget { budget } => {
            attrs.push(("budget", Attr::Signed(*budget)));
        }
        PackerError::ForeignTenant { chunk_id, .. }
        | PackerError::MissingTokenCount { chunk_id }
        | PackerError::ZeroTokens { chunk_id }
        | PackerError::DuplicateChunkId { chunk_id }
        | PackerError::MissingContent { chunk_id } => {
            attrs.push(("chunk_id", Attr::Str(chunk_id.to_string())));
        }
        PackerError::NonFiniteScore { chunk_id, score } => {
            attrs.push(("chunk_id", Attr::Str(chunk_id.to_string())));
            attrs.push(("score", Attr::Float(*score)));
        }
        PackerError::Tokenizer { chunk_id, source } => {
            attrs.push(("chunk_id", Attr::Str(chunk_id.to_string())));
            attrs.push(("tokenizer", Attr::Str(source.tokenizer.clone())));
        }
        PackerError::ForeignTokenCount {
            chunk_id, tokenizer, ..
        } => {
            attrs.push(("chunk_id", Attr::Str(chunk_id.to_string())));
            attrs.push(("tokenizer", Attr::Str(tokenizer.clone())));
        }
        PackerError::ContextCount { source } => {
            attrs.push(("tokenizer", Attr::Str(source.tokenizer.clone())));
        }
        _ => {}
    }
    raise(py, "PackerError", err.to_string(), attrs)
}

/// The Repacker's error as `RepackError` (a `RetrievalError`), with `chunk_id` where one is named.
pub(crate) fn repack_error(py: Python<'_>, err: &RepackError) -> PyErr {
    let mut attrs = Vec::new();
    match err {
        RepackError::MissingContent { chunk_id }
        | RepackError::MissingTokenCount { chunk_id }
        | RepackError::ChunkTooLarge { chunk_id, .. }
        | RepackError::NonFiniteScore { chunk_id, .. }
        | RepackError::Tokenizer { chunk_id, .. } => {
            attrs.push(("chunk_id", Attr::Str(chunk_id.to_string())));
        }
        _ => {}
    }
    raise(py, "RepackError", err.to_string(), attrs)
}
