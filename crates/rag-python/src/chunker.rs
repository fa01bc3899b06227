//! `HeadingAwareChunker` for Python: the constructor and async `chunk`, a blocking twin,
//! and `chunk_text` that parses and chunks in one call.

use std::path::PathBuf;
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyList;
use rag_chunker::HeadingAwareChunker;
use rag_core::{Chunk, ChunkError, Chunker, Health, ParseError, ParsedDocument, RequestContext};

use crate::chunk::PyChunk;
use crate::context::PyRequestContext;
use crate::document::PyParsedDocument;
use crate::errors;
use crate::ingest::PyParseOptions;
use crate::parse::ParseJob;
use crate::runtime::{Cancel, Reduced, Work, awaitable, run_awaitable, run_blocking};
use crate::tokens::{CallCounter, CounterSource};

/// What can go wrong in a chunking call: the parse (`chunk_text` only) or the chunking.
enum ChunkCallError {
    Parse(ParseError),
    Chunk(ChunkError),
}

/// What a chunking call chunks: a parsed document, or a document to parse first (`chunk_text`).
enum ChunkInput {
    Parsed {
        ctx: RequestContext,
        parsed: Arc<ParsedDocument>,
    },
    Text(ParseJob),
}

impl ChunkInput {
    fn parsed(ctx: &Bound<'_, PyRequestContext>, parsed: &Bound<'_, PyParsedDocument>) -> Self {
        Self::Parsed {
            ctx: ctx.get().inner.clone(),
            parsed: Arc::clone(&parsed.get().inner),
        }
    }
}

/// One chunking call: the chunker with the call's counter, and its input.
struct ChunkJob {
    chunker: HeadingAwareChunker,
    counter: CallCounter,
    input: ChunkInput,
}

/// The parser's warnings about a document parsed for a chunking call, and why it gave no text
/// when it gave none, each after the document's name.
fn parse_warnings(parsed: &ParsedDocument) -> Vec<String> {
    let uri = &parsed.document.source_uri;
    parsed
        .warnings()
        .iter()
        .cloned()
        .chain(rag_chunker::parse::no_text_warning(parsed))
        .map(|warning| format!("{uri}: {warning}"))
        .collect()
}

impl Work for ChunkJob {
    /// The chunks and, for a document the call parsed, the warnings to give the caller.
    type Output = (Result<(Vec<Chunk>, Vec<String>), ChunkCallError>, CallCounter);

    fn run(self) -> Self::Output {
        let result = match self.input {
            ChunkInput::Parsed { ctx, parsed } => self
                .chunker
                .chunk_document(&ctx, &parsed)
                .map(|chunks| (chunks, Vec::new()))
                .map_err(ChunkCallError::Chunk),
            ChunkInput::Text(job) => {
                let ctx = job.ctx().clone();
                job.run().map_err(ChunkCallError::Parse).and_then(|parsed| {
                    self.chunker
                        .chunk_document(&ctx, &parsed)
                        .map(|chunks| (chunks, parse_warnings(&parsed)))
                        .map_err(ChunkCallError::Chunk)
                })
            }
        };
        (result, self.counter)
    }

    fn cancel(&self) -> Option<Cancel> {
        Some(self.counter.cancel())
    }

    /// The chunks, after the parser's warnings as `ParseWarning`s, or the error (a chunking
    /// error with a Python counter's own exception as its cause).
    fn finish(py: Python<'_>, (result, counter): Self::Output) -> PyResult<Py<PyAny>> {
        match result {
            Ok((chunks, warnings)) => {
                for warning in &warnings {
                    errors::parse_warning(py, warning)?;
                }
                let list = PyList::empty(py);
                for chunk in chunks {
                    list.append(PyChunk::from_rust(chunk))?;
                }
                Ok(list.into_any().unbind())
            }
            Err(ChunkCallError::Chunk(err)) => Err(counter.caused(py, errors::chunk_error(py, &err))),
            Err(ChunkCallError::Parse(err)) => Err(errors::parse_error(py, &err)),
        }
    }
}

/// What `health()` returns for the engine's answer: `healthy`, or `degraded: ` or `unhealthy: `
/// and the reason.
fn health_text(health: &Health) -> String {
    match health {
        Health::Healthy => "healthy".to_owned(),
        Health::Degraded(reason) => format!("degraded: {reason}"),
        Health::Unhealthy(reason) => format!("unhealthy: {reason}"),
    }
}

/// Cuts parsed documents into chunks along their headings, within a token budget.
#[pyclass(frozen, module = "rag_chunker", name = "HeadingAwareChunker")]
pub(crate) struct PyHeadingAwareChunker {
    /// The most tokens a chunk may have.
    #[pyo3(get)]
    max_tokens: usize,
    /// About how many tokens a body chunk repeats from the previous chunk of its section.
    #[pyo3(get)]
    overlap_tokens: usize,
    /// Whether each heading folds into the first body chunk of its section.
    #[pyo3(get)]
    fold_headings: bool,
    counter: CounterSource,
    /// The counter budgets and `token_count`s are in.
    #[pyo3(get)]
    token_counter: Py<PyAny>,
}

impl PyHeadingAwareChunker {
    /// The engine's chunker for one call, with its counter.
    fn engine(&self, py: Python<'_>) -> PyResult<(HeadingAwareChunker, CallCounter)> {
        let counter = self.counter.for_call();
        let chunker = HeadingAwareChunker::new(self.max_tokens, self.overlap_tokens, Arc::clone(&counter.engine))
            .map_err(|e| errors::chunk_error(py, &e))?
            .with_fold_headings(self.fold_headings);
        Ok((chunker, counter))
    }

    fn job(&self, py: Python<'_>, input: ChunkInput) -> PyResult<ChunkJob> {
        let (chunker, counter) = self.engine(py)?;
        Ok(ChunkJob {
            chunker,
            counter,
            input,
        })
    }
}

#[pymethods]
impl PyHeadingAwareChunker {
    /// `overlap_tokens` defaults to the library's rule for `max_tokens`
    /// (`HeadingAwareChunker::default_overlap_tokens`: 64, or an eighth of the budget when that is
    /// smaller), the same default as `ragctl chunk`'s.
    #[new]
    // The default is the library's constant; the text signature spells it for `inspect`, which
    // cannot read an expression (tests/test_seeds.py checks the two agree).
    #[pyo3(
        signature = (max_tokens = HeadingAwareChunker::DEFAULT_MAX_TOKENS, overlap_tokens = None, token_counter = None, fold_headings = false),
        text_signature = "(max_tokens=512, overlap_tokens=None, token_counter=None, fold_headings=False)"
    )]
    fn new(
        py: Python<'_>,
        max_tokens: usize,
        overlap_tokens: Option<usize>,
        token_counter: Option<&Bound<'_, PyAny>>,
        fold_headings: bool,
    ) -> PyResult<Self> {
        let (counter, token_counter) = CounterSource::from_arg(py, token_counter)?;
        let this = Self {
            max_tokens,
            overlap_tokens: overlap_tokens.unwrap_or(HeadingAwareChunker::default_overlap_tokens(max_tokens)),
            fold_headings,
            counter,
            token_counter,
        };
        // Checks the budget now, so a bad configuration fails in the constructor (a ValueError).
        this.engine(py)?;
        Ok(this)
    }

    /// Chunks one parsed document (awaitable); runs on a worker thread, without the GIL.
    fn chunk<'py>(
        &self,
        py: Python<'py>,
        ctx: &Bound<'py, PyRequestContext>,
        parsed: &Bound<'py, PyParsedDocument>,
    ) -> PyResult<Bound<'py, PyAny>> {
        run_awaitable(py, self.job(py, ChunkInput::parsed(ctx, parsed))?)
    }

    /// `chunk`, on the calling thread; the GIL is released while Rust works.
    fn chunk_blocking(
        &self,
        py: Python<'_>,
        ctx: &Bound<'_, PyRequestContext>,
        parsed: &Bound<'_, PyParsedDocument>,
    ) -> PyResult<Py<PyAny>> {
        run_blocking(py, self.job(py, ChunkInput::parsed(ctx, parsed))?)
    }

    /// Parses `data` (bytes or str) and chunks it, in one call without the GIL (awaitable).
    ///
    /// The type is `document_type` (`markdown`, `text`, `ocr`, `html`, `docx`, ...; a binary
    /// format such as DOCX is given as bytes) or detected from `source_uri`'s
    /// extension; `document_id` defaults to `source_uri` and the reverse.
    #[pyo3(signature = (ctx, data, *, source_uri = None, document_type = None, document_id = None, corpus_id = "local", options = None))]
    fn chunk_text<'py>(
        &self,
        py: Python<'py>,
        ctx: &Bound<'py, PyRequestContext>,
        data: &Bound<'py, PyAny>,
        source_uri: Option<String>,
        document_type: Option<&str>,
        document_id: Option<String>,
        corpus_id: &str,
        options: Option<&Bound<'py, PyParseOptions>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let parse = ParseJob::new(
            py,
            ctx,
            data,
            None,
            document_type,
            source_uri,
            document_id,
            corpus_id,
            options,
        )?;
        run_awaitable(py, self.job(py, ChunkInput::Text(parse))?)
    }

    /// `chunk_text`, on the calling thread; the GIL is released while Rust works.
    #[pyo3(signature = (ctx, data, *, source_uri = None, document_type = None, document_id = None, corpus_id = "local", options = None))]
    fn chunk_text_blocking(
        &self,
        py: Python<'_>,
        ctx: &Bound<'_, PyRequestContext>,
        data: &Bound<'_, PyAny>,
        source_uri: Option<String>,
        document_type: Option<&str>,
        document_id: Option<String>,
        corpus_id: &str,
        options: Option<&Bound<'_, PyParseOptions>>,
    ) -> PyResult<Py<PyAny>> {
        let parse = ParseJob::new(
            py,
            ctx,
            data,
            None,
            document_type,
            source_uri,
            document_id,
            corpus_id,
            options,
        )?;
        run_blocking(py, self.job(py, ChunkInput::Text(parse))?)
    }

    /// Reads the file at `path` and chunks it, in one call without the GIL (awaitable): the file
    /// is read on the worker thread, at most `options.max_input_bytes` of it (256 MiB by default).
    ///
    /// The type is `document_type` or detected from the path's extension (`.md`, `.html`,
    /// `.docx`, ...); `document_id` and the chunks' `source_uri` default to the path as given.
    #[pyo3(signature = (ctx, path, *, document_type = None, document_id = None, corpus_id = "local", options = None))]
    fn chunk_file<'py>(
        &self,
        py: Python<'py>,
        ctx: &Bound<'py, PyRequestContext>,
        path: PathBuf,
        document_type: Option<&str>,
        document_id: Option<String>,
        corpus_id: &str,
        options: Option<&Bound<'py, PyParseOptions>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let parse = ParseJob::from_path(py, ctx, path, document_type, document_id, corpus_id, options)?;
        run_awaitable(py, self.job(py, ChunkInput::Text(parse))?)
    }

    /// `chunk_file`, on the calling thread; the GIL is released while Rust reads and works.
    #[pyo3(signature = (ctx, path, *, document_type = None, document_id = None, corpus_id = "local", options = None))]
    fn chunk_file_blocking(
        &self,
        py: Python<'_>,
        ctx: &Bound<'_, PyRequestContext>,
        path: PathBuf,
        document_type: Option<&str>,
        document_id: Option<String>,
        corpus_id: &str,
        options: Option<&Bound<'_, PyParseOptions>>,
    ) -> PyResult<Py<PyAny>> {
        let parse = ParseJob::from_path(py, ctx, path, document_type, document_id, corpus_id, options)?;
        run_blocking(py, self.job(py, ChunkInput::Text(parse))?)
    }

    /// Whether the chunker can work (awaitable): the engine's probe counts a short text with the
    /// chunker's counter. `"healthy"` if it counts, `"unhealthy: "` and the counter's error if it
    /// fails (`"degraded: "` and a reason is the third answer the engine may give).
    fn health<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let (chunker, counter) = self.engine(py)?;
        let cancel = counter.cancel();
        awaitable(
            py,
            Some(cancel),
            move || (pollster::block_on(Chunker::health(&chunker)), counter),
            // The counter goes back to Python with the answer, so that a Python counter's
            // exception is released with the GIL held.
            |py, (health, _counter)| Ok(health_text(&health).into_pyobject(py)?.into_any().unbind()),
        )
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> Reduced<'py, (usize, usize, Py<PyAny>, bool)> {
        let this = slf.get();
        Ok((
            slf.get_type().into_any(),
            (
                this.max_tokens,
                this.overlap_tokens,
                this.token_counter.clone_ref(slf.py()),
                this.fold_headings,
            ),
        ))
    }

    fn __repr__(&self) -> String {
        format!(
            "HeadingAwareChunker(max_tokens={}, overlap_tokens={}, token_counter={}, fold_headings={})",
            self.max_tokens,
            self.overlap_tokens,
            self.counter.name(),
            if self.fold_headings { "True" } else { "False" }
        )
    }
}
