"""The Repacker: a lighter way to turn chunks into prompt context, in three stages.

- PACK fits chunks against ``size_limit``, per batch: ``truncate`` keeps the longest prefix that
  fits, ``greedy`` takes each chunk that still fits, ``knapsack`` maximises total score. Batches
  come from ``batch_size``: ``None`` (one batch), an int (fixed-size partitions, each packed), or
  ``"auto"`` (next-fit by ``size_limit``).
- ORDER arranges each batch: ``forward``, ``reverse`` or ``sides``.
- SHAPE returns chunks, or renders each chunk (its content, or a :class:`ContextConfig` template)
  and joins them with ``delimiter``.

The given order is the Repacker's notion of relevance; it does no dedup and no tenant check (use
:class:`rag_packer.ContextPacker` for that). The size limit counts chunks, not delimiters.

>>> from rag_core import Chunk
>>> from rag_packer import Repacker
>>> chunks = [Chunk(f"c{i}", "d", "t", text) for i, text in enumerate(["alpha", "beta", "gamma"])]
>>> Repacker(method="reverse", mode="context", delimiter=" | ", size_limit=9).repack_blocking(chunks)
'beta | alpha'
"""

from __future__ import annotations

from enum import Enum
from typing import Any, Awaitable, Callable, List, Optional, Sequence, TypeVar, Union

from ragctl._native import Chunk, ContextConfig, RepackerEngine, sides_order
from rag_core.errors import GenerationValueError

__all__ = [
    "ContextConfig",
    "RepackMethod",
    "RepackStrategy",
    "Repacker",
    "RepackerMode",
    "content_length",
]

T = TypeVar("T")


class RepackMethod(str, Enum):
    """The ORDER stage: how chunks are arranged within each batch."""

    forward = "forward"
    reverse = "reverse"
    sides = "sides"


class RepackerMode(str, Enum):
    """The SHAPE stage: chunks, or rendered context strings."""

    chunk = "chunk"
    context = "context"


class RepackStrategy(str, Enum):
    """The PACK stage: how chunks are fitted against ``size_limit``."""

    truncate = "truncate"
    greedy = "greedy"
    knapsack = "knapsack"


class _ContentLength:
    """The default ``size_func``: characters (code points) of the chunk's content.

    Its type declares ``measured_in_rust = "chars"``: the Repacker measures such a size in Rust,
    the same way, instead of calling it for each chunk. The declaration is read from the type, so
    a wrapper made with ``functools.wraps`` (which copies attributes, not the type) is called.
    """

    measured_in_rust = "chars"

    def __call__(self, chunk: Chunk) -> int:
        content = chunk.content
        if content is None:
            raise GenerationValueError(f"chunk {chunk.id} has no content to measure")
        return len(content)

    def __repr__(self) -> str:
        return "content_length"


content_length = _ContentLength()


def _forward(items: Sequence[T]) -> List[T]:
    return list(items)


def _reverse(items: Sequence[T]) -> List[T]:
    return list(reversed(items))


_ORDER = {
    "forward": _forward,
    "reverse": _reverse,
    "sides": sides_order,
}


def _name(value: Union[str, Enum]) -> str:
    return value.value if isinstance(value, Enum) else str(value)


class Repacker:
    """Repacks chunks by running the PACK -> ORDER -> SHAPE stages.

    Every attribute can be reassigned; the next :meth:`repack` uses the new value. The return type
    follows ``mode`` and ``batch_size``: ``list[Chunk]`` (chunk mode, no batching),
    ``list[list[Chunk]]`` (chunk mode, batched), ``str`` (context mode) or ``list[str]``
    (context mode, batched). Returned chunks are the objects passed in.
    """

    def __init__(
        self,
        method: Union[str, RepackMethod] = "forward",
        mode: Union[str, RepackerMode] = "chunk",
        delimiter: str = "\n\n",
        size_func: Callable[[Chunk], int] = content_length,
        size_limit: Optional[int] = None,
        context_config: Optional[ContextConfig] = None,
        pack: Union[str, RepackStrategy] = "truncate",
        batch_size: Union[int, None, str] = None,
    ) -> None:
        self.method = method
        self.mode = mode
        self.delimiter = delimiter
        self.size_func = size_func
        self.size_limit = size_limit
        self.context_config = context_config
        self.pack = pack
        self.batch_size = batch_size
        # A combination that cannot work fails here, where it was given.
        self._engine()

    @property
    def strategy(self) -> Callable[[Sequence[Any]], List[Any]]:
        """The ORDER stage's function for ``method``: it arranges a batch given best first."""
        return _ORDER[_name(self.method)]

    def _engine(self) -> RepackerEngine:
        return RepackerEngine(
            method=_name(self.method),
            mode=_name(self.mode),
            delimiter=self.delimiter,
            size_limit=self.size_limit,
            context_config=self.context_config,
            pack=_name(self.pack),
            batch_size=self.batch_size,
        )

    def _sizes(self, chunks: Sequence[Chunk]) -> Optional[List[int]]:
        if not isinstance(chunks, list) or not all(isinstance(c, Chunk) for c in chunks):
            raise GenerationValueError("chunks must be a list of rag_core.Chunk objects")
        if getattr(type(self.size_func), "measured_in_rust", None) == "chars":
            return None
        sizes = []
        for chunk in chunks:
            size = self.size_func(chunk)
            if isinstance(size, bool) or not isinstance(size, int) or size < 0:
                raise GenerationValueError(
                    f"size_func returned {size!r} for chunk {chunk.id}, not a non-negative int"
                )
            sizes.append(size)
        return sizes

    def repack(self, chunks: List[Chunk]) -> Awaitable[Any]:
        """Repacks ``chunks`` (awaitable); the work runs on a worker thread, without the GIL."""
        engine = self._engine()
        return engine.repack(chunks, self._sizes(chunks))

    def repack_blocking(self, chunks: List[Chunk]) -> Any:
        """:meth:`repack`, on the calling thread; the GIL is released while Rust works."""
        engine = self._engine()
        return engine.repack_blocking(chunks, self._sizes(chunks))

    def __repr__(self) -> str:
        return (
            f"Repacker(method={_name(self.method)!r}, mode={_name(self.mode)!r}, "
            f"delimiter={self.delimiter!r}, size_limit={self.size_limit!r}, "
            f"pack={_name(self.pack)!r}, batch_size={self.batch_size!r})"
        )
