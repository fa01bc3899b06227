"""Budget primitives: which chunks fit a token budget.

Tokens come from each chunk's ``token_count`` when it has one, else from ``token_counter``
(default ``TiktokenCounter("cl100k_base")``); the chosen chunks come back in the given order.

>>> from rag_core import Chunk
>>> from rag_packer.budget import fit_to_budget
>>> chunks = [Chunk(i, "d", "t", "x", token_count=n) for i, n in [("a", 60), ("b", 50), ("c", 30)]]
>>> [c.id for c in fit_to_budget(chunks, budget=100)]
['a', 'c']
"""

from ragctl._native import OPTIMAL_CELL_LIMIT, fit_to_budget, knapsack_select, optimal_select

__all__ = ["OPTIMAL_CELL_LIMIT", "fit_to_budget", "knapsack_select", "optimal_select"]
