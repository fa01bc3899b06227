"""The chunker SPI: subclass :class:`Chunker` to plug a chunker of your own into a pipeline that
takes ragctl's.

A chunker promises (``check_contract`` in the package's ``tests/test_contract.py`` checks each
point on a chunker's output): every chunk has ``document_id == parsed.document.id`` and ``tenant_id ==
ctx.tenant_id``; ``position`` is 0, 1, 2, ...; a ``parent_id`` names an earlier chunk; each chunk
has ``content`` or ``content_ref``; failures are :class:`rag_core.errors.ChunkError`.
"""

from __future__ import annotations

import abc
from typing import List

from ragctl._native import Chunk, ParsedDocument, RequestContext

__all__ = ["Chunker"]


class Chunker(abc.ABC):
    """Cuts a parsed document into chunks."""

    @abc.abstractmethod
    async def chunk(self, ctx: RequestContext, parsed: ParsedDocument) -> List[Chunk]:
        """Chunks one parsed document."""

    @abc.abstractmethod
    async def health(self) -> str:
        """``"healthy"``, or why not: ``"degraded: "`` or ``"unhealthy: "`` and the reason."""


def _register_builtin() -> None:
    from ragctl._native import HeadingAwareChunker

    Chunker.register(HeadingAwareChunker)


_register_builtin()
