//! The native module of ragctl's Python package, `ragctl._native`.
//!
//! Python users import the modules `rag_core`, `rag_chunker` and `rag_packer`: thin pure Python
//! packages (in `python/`) that re-export the classes and functions defined here under their public
//! names, with the exception classes and protocols written in Python. This crate holds no
//! logic of its own beyond conversion: every result comes from `rag-core`, `rag-chunker` and
//! `rag-packer`.
//!
//! Each chunking and packing call converts its Python arguments first, then releases the GIL
//! while Rust works (`_blocking` methods on the calling thread, async methods on the event loop's
//! default executor, see `runtime`), then builds the Python result. Results hand back the caller's own `Chunk` objects where
//! the engine returns input chunks.
//!
//! The crate is tested by the pytest suite in `tests/` (`cargo xtask python`), not by Rust tests:
//! an extension module is loaded by Python, not linked into a test binary.

// A PyO3 function takes one Rust parameter per Python parameter, and the Python signatures (the
// Chunk's fields, the packer's settings, the parse keywords) have more than clippy's limit.
#![allow(clippy::too_many_arguments)]

mod chunk;
mod chunker;
mod context;
mod document;
mod embed;
mod errors;
mod ingest;
mod json;
mod names;
mod packed;
mod packer;
mod parse;
mod primitives;
mod repacker;
mod runtime;
mod tokens;

use pyo3::prelude::*;

/// The native module: every class and function the Python packages re-export.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<context::PyPrincipal>()?;
    m.add_class::<context::PyRequestContext>()?;
    m.add_class::<chunk::PySpan>()?;
    m.add_class::<chunk::PyChunk>()?;
    m.add_class::<document::PyDocument>()?;
    m.add_class::<document::PyBlock>()?;
    m.add_class::<document::PyParsedDocument>()?;
    m.add_class::<packed::PyConflictAnnotation>()?;
    m.add_class::<packed::PyDroppedChunk>()?;
    m.add_class::<packed::PyExcerpt>()?;
    m.add_class::<packed::PyPackedContext>()?;
    m.add_class::<tokens::PyTiktokenCounter>()?;
    m.add_class::<tokens::PyHuggingFaceCounter>()?;
    m.add_class::<embed::PyStaticEmbedder>()?;
    m.add_class::<parse::PyParser>()?;
    m.add_class::<parse::PyOcrRegion>()?;
    m.add_class::<parse::PyOcrResult>()?;
    m.add_class::<ingest::PyParseOptions>()?;
    m.add_function(wrap_pyfunction!(ingest::path_uri, m)?)?;
    m.add_function(wrap_pyfunction!(ingest::walk_files, m)?)?;
    m.add_function(wrap_pyfunction!(ingest::supported_suffixes, m)?)?;
    m.add_function(wrap_pyfunction!(parse::parse_document, m)?)?;
    m.add_function(wrap_pyfunction!(parse::parse_file, m)?)?;
    m.add_function(wrap_pyfunction!(parse::detect_document_type, m)?)?;
    m.add_function(wrap_pyfunction!(parse::ocr_to_parsed_document, m)?)?;
    m.add_class::<chunker::PyHeadingAwareChunker>()?;
    m.add_class::<packer::PyPackerConfig>()?;
    m.add_class::<packer::PyContextPacker>()?;
    m.add_class::<repacker::PyContextConfig>()?;
    m.add_class::<repacker::PyRepackerEngine>()?;
    primitives::register(m)?;
    Ok(())
}
