"""The shared vocabulary of ragctl: ids, the request context, documents and blocks, chunks, the
packed context, and the errors.

>>> from rag_core import Chunk, RequestContext
>>> ctx = RequestContext("acme")
>>> chunk = Chunk("guide#3", "guide", ctx.tenant_id, "Rerankers score pairs.", score=0.82)
>>> chunk.trust
'trusted'
>>> Chunk.from_json(chunk.to_json()) == chunk
True
"""

from __future__ import annotations

from enum import Enum

from ragctl._native import (
    Block,
    Chunk,
    ConflictAnnotation,
    Document,
    DroppedChunk,
    Excerpt,
    PackedContext,
    ParsedDocument,
    Principal,
    RequestContext,
    Span,
)
from rag_core.errors import (
    ChunkError,
    ChunkerConfigError,
    GenerationValueError,
    PackerError,
    ParseError,
    ParseWarning,
    RagError,
    RepackError,
    RetrievalError,
    TokenizerError,
)
from rag_core.ids import ChunkId, CorpusId, DocumentId, TenantId

__all__ = [
    "Block",
    "BlockType",
    "Chunk",
    "ChunkError",
    "ChunkId",
    "ChunkerConfigError",
    "ConflictAnnotation",
    "CorpusId",
    "Document",
    "DocumentId",
    "DroppedChunk",
    "Excerpt",
    "GenerationValueError",
    "PackedContext",
    "PackerError",
    "ParseError",
    "ParseWarning",
    "ParsedDocument",
    "Principal",
    "RagError",
    "RepackError",
    "RequestContext",
    "RetrievalError",
    "Span",
    "TenantId",
    "TokenizerError",
    "TrustLevel",
]


class BlockType(str, Enum):
    """What a block is; ``Block.block_type`` is one of these values (compare with ``==``)."""

    heading = "heading"
    paragraph = "paragraph"
    list_item = "list_item"
    table_row = "table_row"
    code = "code"
    quote = "quote"
    caption = "caption"
    other = "other"


class TrustLevel(str, Enum):
    """How far a chunk's text may be trusted; ``Chunk.trust`` is one of these values."""

    trusted = "trusted"
    user_supplied = "user_supplied"
    untrusted = "untrusted"
