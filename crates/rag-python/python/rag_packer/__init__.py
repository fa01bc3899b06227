"""Token-budget context packing: the step between "the retriever returned these chunks" and "this
is the context of the prompt".

>>> import asyncio
>>> from rag_core import Chunk, RequestContext
>>> from rag_packer import ContextPacker, PackerConfig
>>> ctx = RequestContext("acme")
>>> chunks = [
...     Chunk("a", "guide", "acme", "Cross-encoders rerank retrieved passages.", score=0.9),
...     Chunk("b", "guide", "acme", "MMR trades relevance against diversity.", score=0.7),
...     Chunk("c", "guide", "acme", "Cross-encoders rerank retrieved passages!", score=0.6),
... ]
>>> packer = ContextPacker(config=PackerConfig(order="descending"))
>>> packed = asyncio.run(packer.pack(ctx, chunks, budget=4000))
>>> [c.id for c in packed.chunks], packed.dropped[0].message
(['a', 'b'], 'exact duplicate of a')
"""

from __future__ import annotations

from rag_packer.budget import OPTIMAL_CELL_LIMIT, fit_to_budget, knapsack_select, optimal_select
from rag_packer.conflicts import detect_conflicts
from rag_packer.dedup import (
    content_hash,
    hash_dedup,
    jaccard,
    jaccard_dedup,
    normalise,
    normalised_words,
    shingles,
)
from rag_packer.pipeline import ContextPacker
from rag_packer.reorder import ascending_order, descending_order, lost_in_middle_order, rank_order, sides_order
from rag_packer.repacker import (
    ContextConfig,
    RepackMethod,
    RepackStrategy,
    Repacker,
    RepackerMode,
    content_length,
)
from rag_packer.score import bm25_chunk_scores, bm25_scores
from rag_packer.types import OrderStrategy, PackerConfig, SelectionStrategy

__all__ = [
    "OPTIMAL_CELL_LIMIT",
    "ContextConfig",
    "ContextPacker",
    "OrderStrategy",
    "PackerConfig",
    "RepackMethod",
    "RepackStrategy",
    "Repacker",
    "RepackerMode",
    "SelectionStrategy",
    "ascending_order",
    "bm25_chunk_scores",
    "bm25_scores",
    "content_hash",
    "content_length",
    "descending_order",
    "detect_conflicts",
    "fit_to_budget",
    "hash_dedup",
    "jaccard",
    "jaccard_dedup",
    "knapsack_select",
    "lost_in_middle_order",
    "normalise",
    "normalised_words",
    "optimal_select",
    "rank_order",
    "shingles",
    "sides_order",
]
