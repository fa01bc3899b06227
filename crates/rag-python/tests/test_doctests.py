"""The examples in the modules' docstrings run and print what they show."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "rag_core",
    "rag_chunker",
    "rag_chunker.parse",
    "rag_chunker.tokens",
    "rag_packer",
    "rag_packer.budget",
    "rag_packer.conflicts",
    "rag_packer.dedup",
    "rag_packer.reorder",
    "rag_packer.repacker",
    "rag_packer.score",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0, f"{name} has no example"
    assert result.failed == 0
