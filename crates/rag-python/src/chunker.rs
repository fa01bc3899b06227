//! `HeadingAwareChunker` for Python: the seed's constructor and async `chunk`, a blocking twin,
//! and `chunk_text` that parses and chunks in one call.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyList;
use rag_chunker::HeadingAwareChunker;
use rag_core::{Chunk, ChunkError, ParseError, ParsedDocument, RequestContext};

use crate::chunk::PyChunk;
use crate::context::PyRequestContext;
use crate::document::PyParsedDocument;
use crate::errors;
use crate::parse::ParseJob;
use crate::runtime::{Reduced, awaitable};
use crate::tokens::{CallCounter, CounterSource, PyTiktokenCounter};

/// What can go wrong in `chunk_text`: the parse or the chunking.
enum ChunkTextError {
    Parse(ParseError),
    Chunk(ChunkError),
}

/// Cuts parsed documents into chunks along their headings, within a token budget.
#[pyclass(frozen, module = "rag_chunker", name = "HeadingAwareChunker")]
pub(crate) struct PyHeadingAwareChunker {
    max_tokens: usize,
    overlap_tokens: usize,
    counter: CounterSource,
    /// The counter object as given (or the default `TiktokenCounter`), for `token_counter`.
    counter_obj: Py<PyAny>,
}

impl PyHeadingAwareChunker {
    /// The engine's chunker for one call, with its counter.
    fn engine(&self, py: Python<'_>) -> PyResult<(HeadingAwareChunker, CallCounter)> {
        let counter = self.counter.for_call(py);
        let chunker = HeadingAwareChunker::new(self.max_tokens, self.overlap_tokens, Arc::clone(&counter.engine))
            .map_err(|e| errors::chunk_error(py, &e))?;
        Ok((chunker, counter))
    }
}

/// The Python result of a chunking call: the chunks, or the error with a Python counter's own
/// exception as its cause.
fn chunks_into_py(
    py: Python<'_>,
    result: Result<Vec<Chunk>, ChunkError>,
    counter: &CallCounter,
) -> PyResult<Py<PyAny>> {
    match result {
        Ok(chunks) => {
            let list = PyList::empty(py);
            for chunk in chunks {
                list.append(PyChunk::from_rust(chunk))?;
            }
            Ok(list.into_any().unbind())
        }
        Err(err) => Err(errors::with_cause(
            py,
            errors::chunk_error(py, &err),
            counter.take_failure(),
        )),
    }
}

fn chunk_text_into_py(
    py: Python<'_>,
    result: Result<Vec<Chunk>, ChunkTextError>,
    counter: &CallCounter,
) -> PyResult<Py<PyAny>> {
    match result {
        Ok(chunks) => chunks_into_py(py, Ok(chunks), counter),
        Err(ChunkTextError::Chunk(err)) => chunks_into_py(py, Err(err), counter),
        Err(ChunkTextError::Parse(err)) => Err(errors::parse_error(py, &err)),
    }
}

fn parse_and_chunk(job: ParseJob, chunker: &HeadingAwareChunker) -> Result<Vec<Chunk>, ChunkTextError> {
    let ctx: RequestContext = job.ctx.clone();
    let parsed: ParsedDocument = job.run().map_err(ChunkTextError::Parse)?;
    chunker.chunk_document(&ctx, &parsed).map_err(ChunkTextError::Chunk)
}

#[pymethods]
impl PyHeadingAwareChunker {
    #[new]
    #[pyo3(signature = (max_tokens = 512, overlap_tokens = 64, token_counter = None))]
    fn new(
        py: Python<'_>,
        max_tokens: usize,
        overlap_tokens: usize,
        token_counter: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let counter_obj = match token_counter {
            Some(obj) if !obj.is_none() => obj.clone().unbind(),
            _ => Bound::new(py, PyTiktokenCounter::cl100k())?.into_any().unbind(),
        };
        let counter = CounterSource::from_py(counter_obj.bind(py))?;
        let this = Self {
            max_tokens,
            overlap_tokens,
            counter,
            counter_obj,
        };
        // Checks the budget now, so a bad configuration fails in the constructor (a ValueError).
        this.engine(py)?;
        Ok(this)
    }

    /// The most tokens a chunk may have.
    #[getter]
    fn max_tokens(&self) -> usize {
        self.max_tokens
    }

    /// About how many tokens a body chunk repeats from the previous chunk of its section.
    #[getter]
    fn overlap_tokens(&self) -> usize {
        self.overlap_tokens
    }

    /// The counter budgets and `token_count`s are in.
    #[getter]
    fn token_counter(&self, py: Python<'_>) -> Py<PyAny> {
        self.counter_obj.clone_ref(py)
    }

    /// Chunks one parsed document (awaitable); runs on a worker thread, without the GIL.
    fn chunk<'py>(
        &self,
        py: Python<'py>,
        ctx: &Bound<'py, PyRequestContext>,
        parsed: &Bound<'py, PyParsedDocument>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (chunker, counter) = self.engine(py)?;
        let ctx = ctx.get().inner.clone();
        let parsed = Arc::clone(&parsed.get().inner);
        awaitable(
            py,
            move || (chunker.chunk_document(&ctx, &parsed), counter),
            |py, (result, counter)| chunks_into_py(py, result, &counter),
        )
    }

    /// `chunk`, on the calling thread; the GIL is released while Rust works.
    fn chunk_blocking(
        &self,
        py: Python<'_>,
        ctx: &Bound<'_, PyRequestContext>,
        parsed: &Bound<'_, PyParsedDocument>,
    ) -> PyResult<Py<PyAny>> {
        let (chunker, counter) = self.engine(py)?;
        let ctx = &ctx.get().inner;
        let parsed = &parsed.get().inner;
        let result = py.detach(|| chunker.chunk_document(ctx, parsed));
        chunks_into_py(py, result, &counter)
    }

    /// Parses `data` (bytes or str) and chunks it, in one call without the GIL (awaitable).
    ///
    /// The type is `document_type` (`markdown`, `text`, `ocr`) or detected from `source_uri`'s
    /// extension; `document_id` defaults to `source_uri` and the reverse.
    #[pyo3(signature = (ctx, data, *, source_uri = None, document_type = None, document_id = None, corpus_id = "local"))]
    #[allow(clippy::too_many_arguments)]
    fn chunk_text<'py>(
        &self,
        py: Python<'py>,
        ctx: &Bound<'py, PyRequestContext>,
        data: &Bound<'py, PyAny>,
        source_uri: Option<String>,
        document_type: Option<&str>,
        document_id: Option<String>,
        corpus_id: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let job = ParseJob::new(py, ctx, data, None, document_type, source_uri, document_id, corpus_id)?;
        let (chunker, counter) = self.engine(py)?;
        awaitable(
            py,
            move || (parse_and_chunk(job, &chunker), counter),
            |py, (result, counter)| chunk_text_into_py(py, result, &counter),
        )
    }

    /// `chunk_text`, on the calling thread; the GIL is released while Rust works.
    #[pyo3(signature = (ctx, data, *, source_uri = None, document_type = None, document_id = None, corpus_id = "local"))]
    #[allow(clippy::too_many_arguments)]
    fn chunk_text_blocking(
        &self,
        py: Python<'_>,
        ctx: &Bound<'_, PyRequestContext>,
        data: &Bound<'_, PyAny>,
        source_uri: Option<String>,
        document_type: Option<&str>,
        document_id: Option<String>,
        corpus_id: &str,
    ) -> PyResult<Py<PyAny>> {
        let job = ParseJob::new(py, ctx, data, None, document_type, source_uri, document_id, corpus_id)?;
        let (chunker, counter) = self.engine(py)?;
        let result = py.detach(|| parse_and_chunk(job, &chunker));
        chunk_text_into_py(py, result, &counter)
    }

    /// Whether the chunker can work: `"healthy"` (the tables are in the package).
    fn health<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        awaitable(
            py,
            || "healthy",
            |py, status| Ok(status.into_pyobject(py)?.into_any().unbind()),
        )
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> Reduced<'py, (usize, usize, Py<PyAny>)> {
        let this = slf.get();
        Ok((
            slf.get_type().into_any(),
            (
                this.max_tokens,
                this.overlap_tokens,
                this.counter_obj.clone_ref(slf.py()),
            ),
        ))
    }

    fn __repr__(&self) -> String {
        format!(
            "HeadingAwareChunker(max_tokens={}, overlap_tokens={}, token_counter={})",
            self.max_tokens,
            self.overlap_tokens,
            self.counter.name()
        )
    }
}
