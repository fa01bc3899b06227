//! `ParseOptions` and the directory walk for Python: the options of `rag_chunker::ingest`, every
//! one `ragctl chunk` has (and the PDF limits, which it does not), and the walk `ragctl chunk DIR`
//! does.

use std::path::PathBuf;

use pyo3::exceptions::{PyFileNotFoundError, PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use rag_chunker::ingest::{self, ParseOptions, Walk, WalkOptions};

/// How documents are read and parsed: the options of every format's parser and the most bytes a
/// file is read to. Every parse and chunk call takes one as `options=`; the defaults are those
/// of `ragctl chunk`.
#[pyclass(frozen, module = "rag_chunker", name = "ParseOptions")]
#[derive(Clone)]
pub(crate) struct PyParseOptions {
    pub(crate) inner: ParseOptions,
}

#[pymethods]
impl PyParseOptions {
    /// `keep_chrome` is `ragctl chunk --keep-chrome`, `keep_hidden` `--keep-hidden` (HTML, DOCX
    /// and PDF text a reader does not see), `max_input_bytes` `--max-input-bytes`; the `pdf_*`
    /// limits are the PDF parser's (`PdfLimits`).
    #[new]
    #[pyo3(
        text_signature = "(*, keep_chrome=False, keep_hidden=False, max_input_bytes=268435456, pdf_max_pages=None, \
                             pdf_max_text_bytes=None, pdf_max_runs_per_page=None, pdf_max_stream_bytes=None, \
                             pdf_max_operations_per_page=None, pdf_max_operations=None, pdf_max_content_bytes=None)"
    )]
    #[pyo3(signature = (
        *,
        keep_chrome = false,
        keep_hidden = false,
        max_input_bytes = ingest::MAX_INPUT_BYTES,
        pdf_max_pages = None,
        pdf_max_text_bytes = None,
        pdf_max_runs_per_page = None,
        pdf_max_stream_bytes = None,
        pdf_max_operations_per_page = None,
        pdf_max_operations = None,
        pdf_max_content_bytes = None,
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        keep_chrome: bool,
        keep_hidden: bool,
        max_input_bytes: u64,
        pdf_max_pages: Option<usize>,
        pdf_max_text_bytes: Option<usize>,
        pdf_max_runs_per_page: Option<usize>,
        pdf_max_stream_bytes: Option<usize>,
        pdf_max_operations_per_page: Option<usize>,
        pdf_max_operations: Option<usize>,
        pdf_max_content_bytes: Option<usize>,
    ) -> PyResult<Self> {
        let mut inner = ParseOptions::default().keep_hidden(keep_hidden);
        inner.html.keep_chrome = keep_chrome;
        if max_input_bytes == 0 {
            return Err(PyValueError::new_err("max_input_bytes must be at least 1 byte"));
        }
        inner.max_input_bytes = max_input_bytes;
        let limits = &mut inner.pdf.limits;
        for (name, given, limit) in [
            ("pdf_max_pages", pdf_max_pages, &mut limits.max_pages),
            ("pdf_max_text_bytes", pdf_max_text_bytes, &mut limits.max_text_bytes),
            (
                "pdf_max_runs_per_page",
                pdf_max_runs_per_page,
                &mut limits.max_runs_per_page,
            ),
            (
                "pdf_max_stream_bytes",
                pdf_max_stream_bytes,
                &mut limits.max_stream_bytes,
            ),
            (
                "pdf_max_operations_per_page",
                pdf_max_operations_per_page,
                &mut limits.max_operations_per_page,
            ),
            ("pdf_max_operations", pdf_max_operations, &mut limits.max_operations),
            (
                "pdf_max_content_bytes",
                pdf_max_content_bytes,
                &mut limits.max_content_bytes,
            ),
        ] {
            if let Some(value) = given {
                if value == 0 {
                    return Err(PyValueError::new_err(format!("{name} must be at least 1")));
                }
                *limit = value;
            }
        }
        Ok(Self { inner })
    }

    /// Whether HTML site chrome (navigation, tables of contents, headers, footers) is kept.
    #[getter]
    fn keep_chrome(&self) -> bool {
        self.inner.html.keep_chrome
    }

    /// Whether text a reader does not see (HTML, DOCX, PDF) is kept rather than left out.
    #[getter]
    fn keep_hidden(&self) -> bool {
        self.inner.html.keep_hidden
    }

    /// The most bytes a file is read to; a larger file is a `ParseError`.
    #[getter]
    fn max_input_bytes(&self) -> u64 {
        self.inner.max_input_bytes
    }

    /// Pages a PDF may have.
    #[getter]
    fn pdf_max_pages(&self) -> usize {
        self.inner.pdf.limits.max_pages
    }

    /// Bytes of text a PDF may give, all pages together.
    #[getter]
    fn pdf_max_text_bytes(&self) -> usize {
        self.inner.pdf.limits.max_text_bytes
    }

    /// Text runs a PDF page may have.
    #[getter]
    fn pdf_max_runs_per_page(&self) -> usize {
        self.inner.pdf.limits.max_runs_per_page
    }

    /// Bytes one PDF stream may decompress to.
    #[getter]
    fn pdf_max_stream_bytes(&self) -> usize {
        self.inner.pdf.limits.max_stream_bytes
    }

    /// Content-stream operators a PDF page may execute.
    #[getter]
    fn pdf_max_operations_per_page(&self) -> usize {
        self.inner.pdf.limits.max_operations_per_page
    }

    /// Content-stream operators a whole PDF may execute.
    #[getter]
    fn pdf_max_operations(&self) -> usize {
        self.inner.pdf.limits.max_operations
    }

    /// Bytes of content streams a whole PDF may run.
    #[getter]
    fn pdf_max_content_bytes(&self) -> usize {
        self.inner.pdf.limits.max_content_bytes
    }

    /// The keyword arguments that rebuild these options, so they pickle (Ray ships a task's
    /// arguments to its workers that way).
    fn __getnewargs_ex__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyTuple>, Bound<'py, PyDict>)> {
        let limits = &self.inner.pdf.limits;
        let kwargs = PyDict::new(py);
        kwargs.set_item("keep_chrome", self.inner.html.keep_chrome)?;
        kwargs.set_item("keep_hidden", self.inner.html.keep_hidden)?;
        kwargs.set_item("max_input_bytes", self.inner.max_input_bytes)?;
        kwargs.set_item("pdf_max_pages", limits.max_pages)?;
        kwargs.set_item("pdf_max_text_bytes", limits.max_text_bytes)?;
        kwargs.set_item("pdf_max_runs_per_page", limits.max_runs_per_page)?;
        kwargs.set_item("pdf_max_stream_bytes", limits.max_stream_bytes)?;
        kwargs.set_item("pdf_max_operations_per_page", limits.max_operations_per_page)?;
        kwargs.set_item("pdf_max_operations", limits.max_operations)?;
        kwargs.set_item("pdf_max_content_bytes", limits.max_content_bytes)?;
        Ok((PyTuple::empty(py), kwargs))
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<PyParseOptions>()
            .is_ok_and(|other| other.get().inner == self.inner)
    }

    fn __repr__(&self) -> String {
        let limits = &self.inner.pdf.limits;
        format!(
            "ParseOptions(keep_chrome={}, keep_hidden={}, max_input_bytes={}, pdf_max_pages={}, \
             pdf_max_text_bytes={}, pdf_max_runs_per_page={}, pdf_max_stream_bytes={}, \
             pdf_max_operations_per_page={}, pdf_max_operations={}, pdf_max_content_bytes={})",
            if self.inner.html.keep_chrome { "True" } else { "False" },
            if self.inner.html.keep_hidden { "True" } else { "False" },
            self.inner.max_input_bytes,
            limits.max_pages,
            limits.max_text_bytes,
            limits.max_runs_per_page,
            limits.max_stream_bytes,
            limits.max_operations_per_page,
            limits.max_operations,
            limits.max_content_bytes,
        )
    }
}

/// The options of a call: the ones given, or the defaults.
pub(crate) fn options_or_default(options: Option<&Bound<'_, PyParseOptions>>) -> ParseOptions {
    options.map_or_else(ParseOptions::default, |options| options.get().inner)
}

/// The file-name suffixes of every type the built-in parsers read (`.md`, `.ocr.json`, ...), as
/// a directory walk takes them.
#[pyfunction]
pub(crate) fn supported_suffixes() -> Vec<&'static str> {
    rag_chunker::DocumentType::ALL
        .iter()
        .flat_map(|ty| ty.suffixes().iter().copied())
        .collect()
}

/// A path as `ragctl chunk` names it in chunk ids (`rag_chunker::ingest::path_uri`).
#[pyfunction]
pub(crate) fn path_uri(path: PathBuf) -> String {
    ingest::path_uri(&path)
}

/// The files `ragctl chunk PATHS` would chunk, as `(path, name)` pairs in its order, and the
/// broken symbolic links it would warn about (see `supported_files` in `ragctl.integrations`).
/// A path that does not exist is a `FileNotFoundError`, any other walk error an `OSError`.
#[pyfunction]
#[pyo3(signature = (paths, *, all_files = false, ignore_files = true, hidden = false))]
pub(crate) fn walk_files(
    py: Python<'_>,
    paths: Vec<PathBuf>,
    all_files: bool,
    ignore_files: bool,
    hidden: bool,
) -> PyResult<(Vec<(std::ffi::OsString, String)>, Vec<String>)> {
    let mut options = WalkOptions::default();
    options.all_files = all_files;
    options.ignore_files = ignore_files;
    options.hidden = hidden;
    let (files, report) = py
        .detach(|| {
            let mut walk = Walk::new(options);
            let mut files = Vec::new();
            for path in &paths {
                let missing = !path.exists() && path.symlink_metadata().is_err();
                let found = walk.add(path);
                if missing {
                    return Err(ingest::path_uri(path));
                }
                files.extend(found.into_iter().map(|file| (file.path.into_os_string(), file.uri)));
            }
            Ok((files, walk.finish()))
        })
        .map_err(|uri| PyFileNotFoundError::new_err(format!("{uri}: cannot read: no such file or directory")))?;
    if let Some(first) = report.errors.first() {
        return Err(PyOSError::new_err(first.clone()));
    }
    Ok((files, report.broken_links))
}
