"""Order primitives: where the best chunks sit in the prompt.

>>> from rag_packer.reorder import lost_in_middle_order, sides_order
>>> lost_in_middle_order([1, 2, 3, 4, 5])
[1, 3, 5, 4, 2]
>>> lost_in_middle_order([1, 2, 3, 4])
[1, 3, 4, 2]
>>> sides_order([1, 2, 3, 4])
[2, 4, 3, 1]
"""

from ragctl._native import ascending_order, descending_order, lost_in_middle_order, rank_order, sides_order

__all__ = ["ascending_order", "descending_order", "lost_in_middle_order", "rank_order", "sides_order"]
