"""Drop-ins for other frameworks, each importable only with its framework installed:

- :mod:`ragctl.integrations.langchain`: ``RagctlTextSplitter``, a LangChain ``TextSplitter``
  (``pip install "ragctl[langchain]"``);
- :mod:`ragctl.integrations.llamaindex`: ``RagctlNodeParser``, a LlamaIndex ``NodeParser``
  (``pip install "ragctl[llamaindex]"``);
- :mod:`ragctl.integrations.ray`: chunking a directory into Parquet or JSON Lines with Ray Data
  (``pip install "ragctl[ray]"``).
"""

from __future__ import annotations

from typing import Any, Dict

from ragctl._native import Chunk

__all__ = ["chunk_metadata", "char_offsets"]


def chunk_metadata(chunk: Chunk) -> Dict[str, Any]:
    """The metadata a framework document carries for a chunk: where it sits (``heading_path``,
    ``span`` as UTF-8 byte offsets, ``chunk_id``, ``parent_id``, ``position``), what it is
    (``kind``, and ``level`` for a heading) and its exact ``token_count`` and ``tokenizer``."""
    meta: Dict[str, Any] = {
        "chunk_id": chunk.id,
        "parent_id": chunk.parent_id,
        "position": chunk.position,
        "heading_path": chunk.heading_path,
        "token_count": chunk.token_count,
    }
    span = chunk.span
    if span is not None:
        meta["span"] = {"start": span.start, "end": span.end}
    kind = chunk.metadata.get("kind")
    if kind is not None:
        meta["kind"] = kind
    level = chunk.metadata.get("level")
    if level is not None:
        meta["level"] = level
    return meta


def char_offsets(text: str) -> "_CharOffsets":
    """A converter from UTF-8 byte offsets of ``text`` to character (code point) offsets, which
    Python frameworks use for ``start_index`` / ``start_char_idx``."""
    return _CharOffsets(text)


class _CharOffsets:
    """Byte offset -> character offset for offsets on character boundaries.

    It walks from the offset asked before, forwards or backwards, so the work of a call is the
    distance between the two offsets: asked for each chunk's start and end, it decodes each
    chunk's bytes about once, overlap included, which is linear in the text overall.
    (Restarting at byte 0 for every offset below the last one, as overlapping chunks ask, was
    quadratic.)
    """

    def __init__(self, text: str) -> None:
        self._ascii = text.isascii()
        self._data = b"" if self._ascii else text.encode("utf-8")
        self._byte = 0
        self._char = 0
        self.decoded = 0
        """Bytes decoded so far: the converter's work."""

    def __call__(self, byte_offset: int) -> int:
        if self._ascii:
            return byte_offset
        if byte_offset >= self._byte:
            self._char += len(self._data[self._byte : byte_offset].decode("utf-8"))
        else:
            self._char -= len(self._data[byte_offset : self._byte].decode("utf-8"))
        self.decoded += abs(byte_offset - self._byte)
        self._byte = byte_offset
        return self._char
