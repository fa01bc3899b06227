"""The coroutine behind every async method of the native module (see ``src/runtime.rs``)."""

import asyncio
from typing import Any, Callable


async def run(call: Callable[[], Any], cancel: Callable[[], None]) -> Any:
    """Runs ``call`` (the engine's work, which releases the GIL while Rust works) on a thread of
    the running loop's default executor and returns its result. If the awaiting task is
    cancelled, ``cancel`` tells the work to stop at its next token count."""
    future = asyncio.get_running_loop().run_in_executor(None, call)
    try:
        return await future
    except asyncio.CancelledError:
        cancel()
        raise
