"""Drop-ins for other frameworks, each importable only with its framework installed:

- :mod:`ragctl.integrations.langchain`: ``RagctlTextSplitter``, a LangChain ``TextSplitter``, and
  ``RagctlLoader``, a document loader for files of every type ragctl reads
  (``pip install "ragctl[langchain]"``);
- :mod:`ragctl.integrations.llamaindex`: ``RagctlNodeParser``, a LlamaIndex ``NodeParser``, and
  ``RagctlReader``, a reader for files of every type ragctl reads
  (``pip install "ragctl[llamaindex]"``);
- :mod:`ragctl.integrations.ray`: chunking a directory into Parquet or JSON Lines with Ray Data
  (``pip install "ragctl[ray]"``).
"""

from __future__ import annotations

import os
import warnings
from typing import Any, Dict, Iterable, List, Literal, Union

from ragctl._native import Chunk, walk_files

__all__ = ["chunk_metadata", "char_offsets", "supported_files"]

PathLike = Union[str, "os.PathLike[str]"]

DocumentTypeName = Literal["markdown", "text", "ocr", "html", "docx", "pdf"]
"""The document types the drop-ins take, as ``ragctl chunk --type`` names them."""


def supported_files(
    paths: Union[PathLike, Iterable[PathLike]],
    *,
    all_files: bool = False,
    ignore_files: bool = True,
    hidden: bool = False,
) -> List[str]:
    """The files ``ragctl chunk`` would chunk for ``paths``, by the same walk: a file named is
    taken whatever its extension (its type is detected when it is read); a directory is walked
    recursively in sorted order, as ripgrep walks it: ``.gitignore``, ``.ignore`` and git's
    exclude files honoured (``ignore_files=False`` is ``--no-ignore``), hidden names skipped
    (``hidden=True`` is ``--hidden``), files of an unsupported type skipped (``all_files=True``
    takes them, as ``--type`` does), links to directories not followed, each file once. A path
    that does not exist is a ``FileNotFoundError``, a directory that cannot be read an
    ``OSError``; a broken symbolic link inside a directory is a ``RuntimeWarning``."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    files, broken_links = walk_files(
        [os.fspath(path) for path in paths], all_files=all_files, ignore_files=ignore_files, hidden=hidden
    )
    for message in broken_links:
        warnings.warn(message, RuntimeWarning, stacklevel=2)
    return [path for path, _name in files]


def chunk_metadata(chunk: Chunk) -> Dict[str, Any]:
    """The metadata a framework document carries for a chunk: where it sits (``heading_path``,
    ``span`` as UTF-8 byte offsets, ``chunk_id``, ``parent_id``, ``position``), what it is
    (``kind``, and ``level`` for a heading), its exact ``token_count``, and, when the document's
    text is a rendition of a file (HTML, DOCX, PDF, OCR), ``provenance``: where the chunk is in
    the original (byte ranges, pages and boxes, or parts and paragraphs)."""
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
    provenance = chunk.provenance
    if provenance:
        meta["provenance"] = provenance
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
