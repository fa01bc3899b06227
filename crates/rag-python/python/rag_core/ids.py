"""Identifier types: each is a ``str`` (so any string is accepted where an id is expected), with a
name that says which id it is (``DocumentId("scan-001")``)."""

from __future__ import annotations

__all__ = ["TenantId", "DocumentId", "CorpusId", "ChunkId"]


class TenantId(str):
    """The tenant that owns a document, a chunk or a request. Data never crosses tenants."""

    __slots__ = ()


class DocumentId(str):
    """A source document (a file, a scanned page, a web page)."""

    __slots__ = ()


class CorpusId(str):
    """A named collection of documents, e.g. one knowledge base."""

    __slots__ = ()


class ChunkId(str):
    """One chunk; unique within a chunker run, derived from the document id and position."""

    __slots__ = ()
