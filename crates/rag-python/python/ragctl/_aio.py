"""The coroutine behind every async method of the native module (see ``src/runtime.rs``)."""

from typing import Any, Awaitable, Callable


async def run(start: Callable[[], Awaitable[Any]]) -> Any:
    """Starts the engine's work inside the running event loop and waits for its result."""
    return await start()
