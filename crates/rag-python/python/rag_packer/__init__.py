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

# A literal ``__all__`` (every stage module's ``__all__``) so that type checkers, which do not
# evaluate ``__all__ += module.__all__``, see the re-exports; tests/test_exports.py checks it lists
# exactly the submodules' names.
from rag_packer.budget import *  # noqa: F403
from rag_packer.conflicts import *  # noqa: F403
from rag_packer.dedup import *  # noqa: F403
from rag_packer.embed import *  # noqa: F403
from rag_packer.pipeline import *  # noqa: F403
from rag_packer.reorder import *  # noqa: F403
from rag_packer.repacker import *  # noqa: F403
from rag_packer.score import *  # noqa: F403
from rag_packer.types import *  # noqa: F403

__all__ = [
    # rag_packer.budget
    "OPTIMAL_CELL_LIMIT",
    "fit_to_budget",
    "knapsack_select",
    "optimal_select",
    # rag_packer.conflicts
    "detect_conflicts",
    # rag_packer.dedup
    "content_hash",
    "hash_dedup",
    "jaccard",
    "jaccard_dedup",
    "normalise",
    "normalised_words",
    "shingles",
    # rag_packer.embed
    "Embedder",
    "StaticEmbedder",
    # rag_packer.pipeline
    "ContextPacker",
    # rag_packer.reorder
    "ascending_order",
    "descending_order",
    "lost_in_middle_order",
    "rank_order",
    "sides_order",
    # rag_packer.repacker
    "ContextConfig",
    "RepackMethod",
    "RepackStrategy",
    "Repacker",
    "RepackerMode",
    "content_length",
    # rag_packer.score
    "bm25_chunk_scores",
    "bm25_scores",
    # rag_packer.types
    "OrderStrategy",
    "PackerConfig",
    "SelectionStrategy",
]
