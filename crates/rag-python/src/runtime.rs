//! Where the engine's work runs: without the GIL, either on the calling thread (the `_blocking`
//! methods) or on a thread of the running event loop's default executor behind a Python
//! coroutine (the async methods).
//!
//! Chunking and packing are CPU-bound and do not yield, so an async method hands the work to
//! `loop.run_in_executor(None, ...)`: the asyncio event loop stays free while Rust works, and
//! several awaits run in parallel on the executor's threads.
//!
//! The executor's threads are Python threads, and that is the point. Everything that touches
//! Python after the engine is done (building the result, a Python counter's calls, dropping the
//! caller's objects) happens on a thread the interpreter knows and waits for: `asyncio.run` joins
//! the default executor before it returns, and `concurrent.futures` joins its workers before the
//! interpreter finalizes. A thread of our own (tokio's blocking pool did this job before) is
//! invisible to the interpreter, so it could set a result or release an object while the
//! interpreter was finalizing, which aborts the process.
//!
//! An async method returns a real coroutine (from `ragctl._aio.run`), not an asyncio future: a
//! future can only be made inside a running event loop, while a coroutine can be made anywhere
//! and handed to `asyncio.run`, `gather` or `create_task`, as a Python `async def` can.
//!
//! When the task awaiting the coroutine is cancelled (`asyncio.wait_for` timing out, a
//! `TaskGroup` failing), the coroutine sets the call's [`Cancel`]: the call's token counter fails
//! its next count, which stops the engine there instead of letting it finish work nobody awaits.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyCFunction, PyDict, PyTuple};

/// What `__reduce__` returns: the callable that rebuilds an object, and its arguments.
pub(crate) type Reduced<'py, A> = PyResult<(Bound<'py, PyAny>, A)>;

/// Whether the task awaiting a call was cancelled; shared by the coroutine, which sets it, and
/// the call's token counter, which stops counting once it is set.
#[derive(Clone, Default)]
pub(crate) struct Cancel(Arc<AtomicBool>);

impl Cancel {
    /// Asks the call to stop.
    fn set(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Whether the call was asked to stop.
    pub(crate) fn is_set(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// A Python coroutine that runs `work` without the GIL on a thread of the running loop's default
/// executor, then `finish` (with the GIL, on the same thread) on its result to build the Python
/// value. Cancelling the awaiting task sets `cancel`.
pub(crate) fn awaitable<'py, T, W, F>(
    py: Python<'py>,
    cancel: Option<Cancel>,
    work: W,
    finish: F,
) -> PyResult<Bound<'py, PyAny>>
where
    T: Send + 'static,
    W: FnOnce() -> T + Send + 'static,
    F: FnOnce(Python<'_>, T) -> PyResult<Py<PyAny>> + Send + 'static,
{
    let job = Mutex::new(Some((work, finish)));
    let call = PyCFunction::new_closure(
        py,
        Some(c"call"),
        None,
        move |args: &Bound<'_, PyTuple>, _kwargs: Option<&Bound<'_, PyDict>>| -> PyResult<Py<PyAny>> {
            let (work, finish) = job
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take()
                .ok_or_else(|| PyRuntimeError::new_err("this coroutine was already awaited"))?;
            let py = args.py();
            let output = py.detach(work);
            finish(py, output)
        },
    )?;
    let stop = PyCFunction::new_closure(
        py,
        Some(c"cancel"),
        None,
        move |_args: &Bound<'_, PyTuple>, _kwargs: Option<&Bound<'_, PyDict>>| -> PyResult<()> {
            if let Some(cancel) = &cancel {
                cancel.set();
            }
            Ok(())
        },
    )?;
    py.import("ragctl._aio")?.getattr("run")?.call1((call, stop))
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

    /// What stops the work when the awaiting task is cancelled; `None` for work that runs to its
    /// end (it counts nothing, and is short).
    fn cancel(&self) -> Option<Cancel> {
        None
    }
}

/// `work` as a Python coroutine (see [`awaitable`]).
pub(crate) fn run_awaitable<W: Work>(py: Python<'_>, work: W) -> PyResult<Bound<'_, PyAny>> {
    let cancel = work.cancel();
    awaitable(py, cancel, move || work.run(), W::finish)
}

/// `work` on the calling thread, with the GIL released while the engine works.
pub(crate) fn run_blocking<W: Work>(py: Python<'_>, work: W) -> PyResult<Py<PyAny>> {
    let output = py.detach(move || work.run());
    W::finish(py, output)
}
