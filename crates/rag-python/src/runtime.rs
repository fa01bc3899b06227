//! Where the engine's work runs: without the GIL, either on the calling thread (the `_blocking`
//! methods) or on tokio's blocking pool behind a Python coroutine (the async methods).
//!
//! Chunking and packing are CPU-bound and do not yield, so an async method hands the work to
//! `spawn_blocking`: the asyncio event loop stays free while Rust works, and several awaits run
//! in parallel on the pool's threads.
//!
//! An async method returns a real coroutine (from `ragctl._aio.run`), not an asyncio future: a
//! future can only be made inside a running event loop, while a coroutine can be made anywhere
//! and handed to `asyncio.run`, `gather` or `create_task`, as a Python `async def` can. The
//! coroutine creates the future (`pyo3_async_runtimes`) when it first runs, inside the loop.

use std::sync::{Mutex, PoisonError};

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyCFunction, PyDict, PyTuple};

/// What `__reduce__` returns: the callable that rebuilds an object, and its arguments.
pub(crate) type Reduced<'py, A> = PyResult<(Bound<'py, PyAny>, A)>;

/// A Python coroutine that runs `work` on tokio's blocking pool, then `finish` (with the GIL)
/// on its result to build the Python value.
pub(crate) fn awaitable<'py, T, W, F>(py: Python<'py>, work: W, finish: F) -> PyResult<Bound<'py, PyAny>>
where
    T: Send + 'static,
    W: FnOnce() -> T + Send + 'static,
    F: FnOnce(Python<'_>, T) -> PyResult<Py<PyAny>> + Send + 'static,
{
    let job = Mutex::new(Some((work, finish)));
    let start = PyCFunction::new_closure(
        py,
        Some(c"start"),
        None,
        move |args: &Bound<'_, PyTuple>, _kwargs: Option<&Bound<'_, PyDict>>| -> PyResult<Py<PyAny>> {
            let (work, finish) = job
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take()
                .ok_or_else(|| PyRuntimeError::new_err("this coroutine was already awaited"))?;
            Ok(pyo3_async_runtimes::tokio::future_into_py(args.py(), run(work, finish))?.unbind())
        },
    )?;
    py.import("ragctl._aio")?.getattr("run")?.call1((start,))
}

async fn run<T, W, F>(work: W, finish: F) -> PyResult<Py<PyAny>>
where
    T: Send + 'static,
    W: FnOnce() -> T + Send + 'static,
    F: FnOnce(Python<'_>, T) -> PyResult<Py<PyAny>> + Send + 'static,
{
    let output = tokio::task::spawn_blocking(work)
        .await
        .map_err(|err| PyRuntimeError::new_err(format!("the engine's worker thread failed: {err}")))?;
    Python::attach(|py| finish(py, output))
}

/// The engine's part of one call, taken from its Python arguments, and how its output becomes the
/// Python result. An async method and its `_blocking` twin build the same work and hand it to
/// [`run_awaitable`] or [`run_blocking`].
pub(crate) trait Work: Send + 'static {
    /// What the engine returns, with what the result needs of the arguments.
    type Output: Send + 'static;

    /// The engine's part, without the GIL.
    fn run(self) -> Self::Output;

    /// The Python result, or exception, of the engine's output (with the GIL).
    fn finish(py: Python<'_>, output: Self::Output) -> PyResult<Py<PyAny>>;
}

/// `work` as a Python coroutine (see [`awaitable`]).
pub(crate) fn run_awaitable<W: Work>(py: Python<'_>, work: W) -> PyResult<Bound<'_, PyAny>> {
    awaitable(py, move || work.run(), W::finish)
}

/// `work` on the calling thread, with the GIL released while the engine works.
pub(crate) fn run_blocking<W: Work>(py: Python<'_>, work: W) -> PyResult<Py<PyAny>> {
    let output = py.detach(move || work.run());
    W::finish(py, output)
}
