"""Conflict detection: numeric disagreements and trust mismatches among chunks (advisory).

>>> from rag_core import Chunk
>>> from rag_packer.conflicts import detect_conflicts
>>> a = Chunk("a", "d", "t", "The refund window is 30 days.")
>>> b = Chunk("b", "e", "t", "The refund window is 14 days.")
>>> [c.kind for c in detect_conflicts([a, b])]
['numeric_disagreement']
"""

from ragctl._native import detect_conflicts

__all__ = ["detect_conflicts"]
