"""The packer's configuration type and the names its settings take."""

from typing import Literal

from ragctl._native import PackerConfig

__all__ = ["OrderStrategy", "PackerConfig", "SelectionStrategy"]

OrderStrategy = Literal["lost_in_middle", "descending", "ascending", "input", "reverse", "sides"]
"""The orders ``PackerConfig.order`` takes."""

SelectionStrategy = Literal["greedy", "knapsack", "optimal"]
"""The strategies ``PackerConfig.strategy`` takes."""
