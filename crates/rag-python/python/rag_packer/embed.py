"""Embedders for hybrid scoring: with ``embedder=``, ``ContextPacker.pack`` and ``pack_context``
rank chunks that carry no score by BM25 fused with the cosine of the query's vector and each
chunk's, as ``ragctl pack --embedder DIR`` does.

``StaticEmbedder(path)`` loads a model2vec folder (``config.json``, ``model.safetensors``,
``tokenizer.json``; ``cargo xtask wordllama`` writes one from the wordllama wheel); nothing is
downloaded. Any object with ``embed(list[str]) -> list[list[float]]`` is an embedder too (a
sentence-transformers model behind a two-line class, an API client): the packer calls it in
batches, and it may say its ``id`` (which model made a vector, default ``python:`` and its type's
name) and its ``dimension`` (else it is asked to embed one word first).
"""

from __future__ import annotations

from typing import List, Protocol, runtime_checkable

from ragctl._native import StaticEmbedder

__all__ = ["Embedder", "StaticEmbedder"]


@runtime_checkable
class Embedder(Protocol):
    """What the packer needs of an embedder: one vector per text, in order."""

    def embed(self, texts: List[str]) -> List[List[float]]: ...
