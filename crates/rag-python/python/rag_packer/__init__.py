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

# Each submodule's ``__all__`` lists its names; the package exports them all.
from rag_packer import budget, conflicts, dedup, pipeline, reorder, repacker, score, types
from rag_packer.budget import *  # noqa: F403
from rag_packer.conflicts import *  # noqa: F403
from rag_packer.dedup import *  # noqa: F403
from rag_packer.pipeline import *  # noqa: F403
from rag_packer.reorder import *  # noqa: F403
from rag_packer.repacker import *  # noqa: F403
from rag_packer.score import *  # noqa: F403
from rag_packer.types import *  # noqa: F403

__all__: list[str] = []
__all__ += budget.__all__
__all__ += conflicts.__all__
__all__ += dedup.__all__
__all__ += pipeline.__all__
__all__ += reorder.__all__
__all__ += repacker.__all__
__all__ += score.__all__
__all__ += types.__all__
