"""Token counters: the :class:`TokenCounter` protocol and the built-in :class:`TiktokenCounter`.

Any object with ``count(text) -> int`` and ``name() -> str`` is a counter: pass it as
``token_counter=`` to :class:`rag_chunker.HeadingAwareChunker` or :class:`rag_packer.ContextPacker`
and every count calls it (with the GIL held for the call). An exception it raises becomes a
:class:`rag_core.errors.ChunkError` or :class:`rag_core.errors.PackerError` naming the document or
chunk, with your exception as ``__cause__``. A counter may also define
``splits_at_line_starts() -> bool`` to promise that counts add up across line starts, which lets
the chunker count less; leave it out unless the promise holds for every text.

>>> from rag_chunker.tokens import TiktokenCounter
>>> TiktokenCounter().count("hello world")
2
>>> TiktokenCounter("o200k_base").name()
'tiktoken:o200k_base'
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from ragctl._native import HuggingFaceCounter, TiktokenCounter

__all__ = ["HuggingFaceCounter", "TokenCounter", "TiktokenCounter"]


@runtime_checkable
class TokenCounter(Protocol):
    """Counts tokens the way a model's tokenizer does.

    ``count`` must be deterministic and give 0 for ``""``; ``name`` identifies the tokenizer
    precisely enough that two counters with the same name count alike.
    """

    def count(self, text: str) -> int:
        """Number of tokens in ``text``."""
        ...

    def name(self) -> str:
        """Name of the tokenizer, e.g. ``tiktoken:cl100k_base``."""
        ...
