"""The exceptions of ragctl's Python API, one class per stage, as in the Rust core.

Every exception carries the Rust error's message, which names what failed and where (file, byte
offset, block, chunk id), and the same facts as attributes (``chunk_id``, ``document_id``,
``offset``, ...); an attribute that does not apply is ``None``. When a Python token counter
raised, its exception is the ``__cause__`` of the one you catch.

Hierarchy::

    RagError
    ├── ParseError            a document could not be parsed
    ├── ChunkError            a chunker failed (a counter's failure names the document and offset)
    │   └── ChunkerConfigError   also a ValueError: max_tokens / overlap_tokens cannot work
    ├── TokenizerError        a counter could not be built or could not count
    └── RetrievalError
        ├── PackerError       the context packer refused its input or configuration
        └── RepackError       the Repacker refused its input or configuration
            └── GenerationValueError   also a ValueError: the input is not a list of Chunk

One warning class, for what a parse did not fail on but you must know::

    UserWarning
    └── ParseWarning          a document's text may not be the whole file, or it gave no text
"""

from __future__ import annotations

from typing import Optional

__all__ = [
    "RagError",
    "ParseError",
    "ChunkError",
    "ChunkerConfigError",
    "TokenizerError",
    "RetrievalError",
    "PackerError",
    "RepackError",
    "GenerationValueError",
    "ParseWarning",
]


class RagError(Exception):
    """Any error of the ragctl libraries; ``str(err)`` is the Rust message."""


class ParseError(RagError):
    """A document could not be parsed (invalid UTF-8, unsupported type, malformed OCR JSON)."""

    source_uri: Optional[str] = None
    """The document."""
    offset: Optional[int] = None
    """Byte offset of the first invalid byte, for invalid UTF-8."""
    line: Optional[int] = None
    """1-based line of the problem, when known."""
    column: Optional[int] = None
    """1-based column of the problem, when known."""


class ChunkError(RagError):
    """A chunker failed: a malformed block, or a token counter that failed on the document."""

    document_id: Optional[str] = None
    """The document being chunked, when known."""
    block_index: Optional[int] = None
    """0-based index of the malformed block."""
    tokenizer: Optional[str] = None
    """The tokenizer that failed or is unknown."""


class ChunkerConfigError(ChunkError, ValueError):
    """The chunker's configuration cannot work (``max_tokens`` 0, overlap not below it, or a
    budget smaller than one character's tokens)."""


class TokenizerError(RagError):
    """A token counter could not be built (unknown encoding, unreadable ``tokenizer.json``) or
    could not count."""

    tokenizer: Optional[str] = None
    """The tokenizer's name."""


class RetrievalError(RagError):
    """Retrieval-time processing (packing) failed."""


class PackerError(RetrievalError):
    """The context packer refused its input or configuration: a budget that is not positive, a
    chunk of another tenant, a repeated id, a ``content_ref`` without ``token_count``, ..."""

    chunk_id: Optional[str] = None
    """The chunk the error is about, when there is one."""
    budget: Optional[int] = None
    """The budget, when it is the problem."""
    score: Optional[float] = None
    """The score, when it is not finite."""


class RepackError(RetrievalError):
    """The Repacker refused its configuration or input."""

    chunk_id: Optional[str] = None
    """The chunk the error is about, when there is one."""


class GenerationValueError(RepackError, ValueError):
    """The Repacker was given something other than a list of :class:`rag_core.Chunk`."""


class ParseWarning(UserWarning):
    """What a parser must tell you about a document it parsed when you asked for its chunks
    (``chunk_text``, ``chunk_file``): its text may not be the whole file (a package read another
    way than it claims, content skipped), or it gave no text, and why. The message names the
    document first, as ``ragctl chunk`` prints it: ``scan.docx: no text: the document is 3 images
    and no text; ...``. ``ParsedDocument.warnings`` holds the same sentences without the name."""
