"""The orchestrator, :class:`ContextPacker`: tenant check, dedup, budget fit, order, conflicts."""

from ragctl._native import ContextPacker

__all__ = ["ContextPacker"]
