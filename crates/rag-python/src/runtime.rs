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
