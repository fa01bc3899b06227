//! Parsers for Python: bytes or text in, a `ParsedDocument` out, with the GIL released while
//! Rust parses. Also the OCR adapter and its input types.

use std::path::PathBuf;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString};
use rag_chunker::ingest::{self, ParseOptions};
use rag_chunker::{DocumentType, OcrRegion, OcrResult, ocr_result_to_parsed_document};
use rag_core::{CorpusId, DocumentId, ParseError, ParsedDocument, RequestContext, SourceBytes};

use crate::context::PyRequestContext;
use crate::document::PyParsedDocument;
use crate::errors;
use crate::ingest::{PyParseOptions, options_or_default};
use crate::json;

/// The bytes of `data`: a `bytes` object as is, a `str` as UTF-8.
pub(crate) fn bytes_of(data: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    if let Ok(bytes) = data.cast::<PyBytes>() {
        Ok(bytes.as_bytes().to_vec())
    } else if let Ok(text) = data.cast::<PyString>() {
        Ok(text.to_cow()?.as_bytes().to_vec())
    } else if let Ok(bytes) = data.extract::<Vec<u8>>() {
        Ok(bytes)
    } else {
        Err(PyTypeError::new_err("a document is bytes (read as UTF-8) or str"))
    }
}

/// The document type named `name`, or detected from `source_uri`'s extension.
pub(crate) fn document_type(py: Python<'_>, name: Option<&str>, source_uri: &str) -> PyResult<DocumentType> {
    match name {
        Some(name) => name
            .parse()
            .map_err(|e: rag_chunker::UnknownDocumentType| PyValueError::new_err(e.to_string())),
        None => DocumentType::detect(source_uri).map_err(|e| errors::parse_error(py, &e)),
    }
}

/// Where the document's bytes come from: given by Python, or a file read on the worker thread
/// (so an awaitable call does not read on the event loop).
enum JobInput {
    Bytes(Vec<u8>),
    File(PathBuf),
}

/// What to parse: the bytes and the identity the document will carry.
pub(crate) struct ParseJob {
    pub(crate) ctx: RequestContext,
    doc_type: DocumentType,
    document_id: DocumentId,
    corpus_id: CorpusId,
    source_uri: String,
    input: JobInput,
    options: ParseOptions,
}

impl ParseJob {
    /// A job from the arguments every parse call takes; `source_uri` defaults to the document
    /// id and the id to the source.
    pub(crate) fn new(
        py: Python<'_>,
        ctx: &Bound<'_, PyRequestContext>,
        data: &Bound<'_, PyAny>,
        doc_type: Option<DocumentType>,
        document_type_name: Option<&str>,
        source_uri: Option<String>,
        document_id: Option<String>,
        corpus_id: &str,
        options: Option<&Bound<'_, PyParseOptions>>,
    ) -> PyResult<Self> {
        let (source_uri, document_id) = match (source_uri, document_id) {
            (Some(uri), Some(id)) => (uri, id),
            (Some(uri), None) => (uri.clone(), uri),
            (None, Some(id)) => (id.clone(), id),
            (None, None) => {
                return Err(PyValueError::new_err(
                    "name the document: give source_uri (a path or URL) or document_id",
                ));
            }
        };
        let doc_type = match doc_type {
            Some(t) => t,
            None => document_type(py, document_type_name, &source_uri)?,
        };
        Ok(Self {
            ctx: ctx.get().inner.clone(),
            doc_type,
            document_id: document_id.into(),
            corpus_id: corpus_id.into(),
            source_uri,
            input: JobInput::Bytes(bytes_of(data)?),
            options: options_or_default(options),
        })
    }

    /// A job that reads the file at `path` when it runs. The document is named by the path as
    /// given, written as `ragctl chunk` writes paths (`ingest::path_uri`), unless `document_id`
    /// names it; the type is `document_type_name` or detected from the path's extension.
    pub(crate) fn from_path(
        py: Python<'_>,
        ctx: &Bound<'_, PyRequestContext>,
        path: PathBuf,
        document_type_name: Option<&str>,
        document_id: Option<String>,
        corpus_id: &str,
        options: Option<&Bound<'_, PyParseOptions>>,
    ) -> PyResult<Self> {
        let source_uri = ingest::path_uri(&path);
        // Before the type: a directory has no extension to tell a type by, or one that lies
        // (`folder.html`).
        if path.is_dir() {
            return Err(errors::parse_error(py, &directory_error(&source_uri)));
        }
        let doc_type = document_type(py, document_type_name, &source_uri)?;
        Ok(Self {
            ctx: ctx.get().inner.clone(),
            doc_type,
            document_id: document_id.unwrap_or_else(|| source_uri.clone()).into(),
            corpus_id: corpus_id.into(),
            source_uri,
            input: JobInput::File(path),
            options: options_or_default(options),
        })
    }

    /// Parses, without the GIL (call inside `detach` or a blocking task).
    pub(crate) fn run(self) -> Result<ParsedDocument, ParseError> {
        let bytes = match self.input {
            JobInput::Bytes(bytes) => bytes,
            JobInput::File(path) => ingest::read_file(&path, &self.source_uri, self.options.max_input_bytes)?,
        };
        let source = SourceBytes {
            document_id: &self.document_id,
            corpus_id: &self.corpus_id,
            source_uri: &self.source_uri,
            bytes: &[],
        };
        ingest::parse_owned(&self.ctx, self.doc_type, source, bytes, &self.options)
    }

    /// The context the document is parsed (and then chunked) under.
    pub(crate) fn ctx(&self) -> &RequestContext {
        &self.ctx
    }
}

/// The error for a directory named where one file is read, pointing at what reads a directory.
fn directory_error(source_uri: &str) -> ParseError {
    ParseError::Io {
        source_uri: source_uri.to_owned(),
        source: std::io::Error::new(
            std::io::ErrorKind::IsADirectory,
            "is a directory, and this reads one file: ragctl.integrations.supported_files(path) lists \
             the files of a directory as ragctl chunk walks it",
        ),
    }
}

/// Parses one document with the built-in parser of its type.
#[pyfunction]
#[pyo3(signature = (ctx, data, *, source_uri = None, document_type = None, document_id = None, corpus_id = "local", options = None))]
pub(crate) fn parse_document(
    py: Python<'_>,
    ctx: &Bound<'_, PyRequestContext>,
    data: &Bound<'_, PyAny>,
    source_uri: Option<String>,
    document_type: Option<&str>,
    document_id: Option<String>,
    corpus_id: &str,
    options: Option<&Bound<'_, PyParseOptions>>,
) -> PyResult<PyParsedDocument> {
    let job = ParseJob::new(
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
    let parsed = py.detach(|| job.run()).map_err(|e| errors::parse_error(py, &e))?;
    Ok(PyParsedDocument::from_rust(parsed))
}

/// Reads and parses the file at `path` with the built-in parser of its type (the GIL released
/// while Rust reads and parses).
#[pyfunction]
#[pyo3(signature = (ctx, path, *, document_type = None, document_id = None, corpus_id = "local", options = None))]
pub(crate) fn parse_file(
    py: Python<'_>,
    ctx: &Bound<'_, PyRequestContext>,
    path: PathBuf,
    document_type: Option<&str>,
    document_id: Option<String>,
    corpus_id: &str,
    options: Option<&Bound<'_, PyParseOptions>>,
) -> PyResult<PyParsedDocument> {
    let job = ParseJob::from_path(py, ctx, path, document_type, document_id, corpus_id, options)?;
    let parsed = py.detach(|| job.run()).map_err(|e| errors::parse_error(py, &e))?;
    Ok(PyParsedDocument::from_rust(parsed))
}

/// The document type of a path's extension (`markdown`, `text`, `ocr`, `html`, `docx`, ...); a
/// `ParseError` listing the supported types otherwise.
#[pyfunction]
pub(crate) fn detect_document_type(py: Python<'_>, source_uri: &str) -> PyResult<&'static str> {
    DocumentType::detect(source_uri)
        .map(DocumentType::as_str)
        .map_err(|e| errors::parse_error(py, &e))
}

/// One built-in parser, chosen by its document type (`Parser("markdown")`); `MarkdownParser` and
/// the other parser classes of `rag_chunker` are its subclasses.
#[pyclass(frozen, subclass, module = "rag_chunker", name = "Parser")]
pub(crate) struct PyParser {
    doc_type: DocumentType,
    keep_hidden: bool,
}

#[pymethods]
impl PyParser {
    /// The parser of `document_type`: `markdown`, `text`, `ocr`, `html`, `docx`, ...;
    /// `keep_hidden` keeps the text an HTML page or a Word file hides (the other formats hide
    /// none).
    #[new]
    #[pyo3(signature = (document_type, *, keep_hidden = false))]
    fn new(document_type: &str, keep_hidden: bool) -> PyResult<Self> {
        let doc_type = document_type
            .parse()
            .map_err(|e: rag_chunker::UnknownDocumentType| PyValueError::new_err(e.to_string()))?;
        Ok(Self { doc_type, keep_hidden })
    }

    /// Whether the parser keeps hidden text.
    #[getter]
    fn keep_hidden(&self) -> bool {
        self.keep_hidden
    }

    /// Short name of the format, e.g. `markdown`.
    fn name(&self) -> &'static str {
        self.doc_type.as_str()
    }

    /// Parses one document; `source_uri` names it in errors and defaults to `document_id`.
    #[pyo3(signature = (ctx, data, *, source_uri = None, document_id = None, corpus_id = "local", options = None))]
    fn parse(
        &self,
        py: Python<'_>,
        ctx: &Bound<'_, PyRequestContext>,
        data: &Bound<'_, PyAny>,
        source_uri: Option<String>,
        document_id: Option<String>,
        corpus_id: &str,
        options: Option<&Bound<'_, PyParseOptions>>,
    ) -> PyResult<PyParsedDocument> {
        let mut job = ParseJob::new(
            py,
            ctx,
            data,
            Some(self.doc_type),
            None,
            source_uri,
            document_id,
            corpus_id,
            options,
        )?;
        if self.keep_hidden {
            job.options = job.options.keep_hidden(true);
        }
        let parsed = py.detach(|| job.run()).map_err(|e| errors::parse_error(py, &e))?;
        Ok(PyParsedDocument::from_rust(parsed))
    }

    fn __repr__(&self) -> String {
        if self.keep_hidden {
            format!("Parser({:?}, keep_hidden=True)", self.doc_type.as_str())
        } else {
            format!("Parser({:?})", self.doc_type.as_str())
        }
    }
}

/// One region of text an OCR engine recognised.
#[pyclass(frozen, module = "rag_chunker", name = "OCRRegion")]
#[derive(Clone)]
pub(crate) struct PyOcrRegion {
    inner: OcrRegion,
}

#[pymethods]
impl PyOcrRegion {
    #[new]
    #[pyo3(signature = (text, confidence, bbox, page = None))]
    fn new(text: String, confidence: f64, bbox: [f64; 4], page: Option<u32>) -> Self {
        Self {
            inner: OcrRegion {
                text,
                confidence,
                bbox,
                page,
            },
        }
    }

    /// The recognised text.
    #[getter]
    fn text(&self) -> &str {
        &self.inner.text
    }

    /// The engine's confidence.
    #[getter]
    fn confidence(&self) -> f64 {
        self.inner.confidence
    }

    /// Bounding box `(x0, y0, x1, y1)` in the engine's coordinates.
    #[getter]
    fn bbox(&self) -> (f64, f64, f64, f64) {
        let [a, b, c, d] = self.inner.bbox;
        (a, b, c, d)
    }

    /// The 1-based page, when known.
    #[getter]
    fn page(&self) -> Option<u32> {
        self.inner.page
    }

    fn __repr__(&self) -> String {
        format!(
            "OCRRegion(text={:?}, confidence={})",
            self.inner.text, self.inner.confidence
        )
    }
}

/// What an OCR engine recognised on a scan: its name and the regions in reading order.
#[pyclass(frozen, module = "rag_chunker", name = "OCRResult")]
#[derive(Clone)]
pub(crate) struct PyOcrResult {
    inner: OcrResult,
}

#[pymethods]
impl PyOcrResult {
    #[new]
    fn new(engine: String, regions: Vec<PyRef<'_, PyOcrRegion>>) -> Self {
        Self {
            inner: OcrResult {
                engine,
                regions: regions.iter().map(|r| r.inner.clone()).collect(),
            },
        }
    }

    /// An OCR result from its JSON (the content of an `.ocr.json` file).
    #[staticmethod]
    fn from_json(text: &str) -> PyResult<Self> {
        serde_json::from_str(text)
            .map(|inner| Self { inner })
            .map_err(|e| PyValueError::new_err(format!("not an OCR result: {e}")))
    }

    /// The engine that produced the result.
    #[getter]
    fn engine(&self) -> &str {
        &self.inner.engine
    }

    /// The regions, in reading order.
    #[getter]
    fn regions(&self) -> Vec<PyOcrRegion> {
        self.inner
            .regions
            .iter()
            .map(|r| PyOcrRegion { inner: r.clone() })
            .collect()
    }

    fn __repr__(&self) -> String {
        format!(
            "OCRResult(engine={:?}, regions=<{}>)",
            self.inner.engine,
            self.inner.regions.len()
        )
    }
}

/// Turns an OCR result into a document the chunker reads: the region texts joined by blank
/// lines, one paragraph block per region with `engine`, `ocr_confidence`, `bbox` and `page`.
///
/// `ocr_result` is an `OCRResult` or a dict of the same JSON shape.
#[pyfunction]
#[pyo3(name = "ocr_result_to_parsed_document", signature = (ctx, ocr_result, document_id, corpus_id, source_uri))]
pub(crate) fn ocr_to_parsed_document(
    ctx: &Bound<'_, PyRequestContext>,
    ocr_result: &Bound<'_, PyAny>,
    document_id: String,
    corpus_id: String,
    source_uri: String,
) -> PyResult<PyParsedDocument> {
    let ocr = match ocr_result.cast::<PyOcrResult>() {
        Ok(result) => result.get().inner.clone(),
        Err(_) => match ocr_result.cast::<PyDict>() {
            Ok(dict) => serde_json::from_value(json::from_py(dict.as_any(), "ocr_result")?)
                .map_err(|e| PyValueError::new_err(format!("not an OCR result: {e}")))?,
            Err(_) => return Err(PyTypeError::new_err("ocr_result is an OCRResult or a dict of its JSON")),
        },
    };
    Ok(PyParsedDocument::from_rust(ocr_result_to_parsed_document(
        &ctx.get().inner,
        &ocr,
        document_id.into(),
        corpus_id.into(),
        source_uri,
    )))
}
