"""Dedup primitives: exact (normalised text) and near (word-shingle Jaccard) duplicates.

Chunks are taken in priority order (best first); the first of each group of duplicates wins and
the survivors come back as the objects passed in. Chunks without ``content`` are kept.

>>> from rag_core import Chunk
>>> from rag_packer.dedup import hash_dedup, normalise
>>> normalise("Refunds take 30 days!")
'refunds take 30 days'
>>> chunks = [Chunk("a", "d", "t", "Refunds take 30 days."), Chunk("b", "d", "t", "refunds TAKE 30 days")]
>>> [c.id for c in hash_dedup(chunks)]
['a']
"""

from ragctl._native import (
    content_hash,
    hash_dedup,
    jaccard,
    jaccard_dedup,
    normalise,
    normalised_words,
    shingles,
)

__all__ = ["content_hash", "hash_dedup", "jaccard", "jaccard_dedup", "normalise", "normalised_words", "shingles"]
