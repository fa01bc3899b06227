"""BM25 scoring, for chunks that arrive without a retriever's score.

>>> from rag_packer.score import bm25_scores
>>> bm25_scores("refund window", ["The refund window is 30 days.", "Shipping is free."])
[1.0, 0.0]
"""

from ragctl._native import bm25_chunk_scores, bm25_scores

__all__ = ["bm25_chunk_scores", "bm25_scores"]
