"""The packages re-export exactly their submodules' names, so ``from rag_packer import X`` works for
every public name and type checkers (which read the literal ``__all__``) agree with the runtime."""

from __future__ import annotations

import importlib

import pytest

PACKAGES = {
    "rag_chunker": ["rag_chunker.parse", "rag_chunker.tokens"],
    "rag_packer": [
        "rag_packer.budget",
        "rag_packer.conflicts",
        "rag_packer.dedup",
        "rag_packer.embed",
        "rag_packer.pipeline",
        "rag_packer.reorder",
        "rag_packer.repacker",
        "rag_packer.score",
        "rag_packer.types",
    ],
}
# Exported by the package itself, not by a submodule.
OWN = {"rag_chunker": {"HeadingAwareChunker"}, "rag_packer": set()}


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_package_all_lists_exactly_its_submodules_names(package):
    expected = set(OWN[package])
    for name in PACKAGES[package]:
        expected |= set(importlib.import_module(name).__all__)
    exported = importlib.import_module(package).__all__
    assert sorted(exported) == sorted(expected)
    assert len(exported) == len(set(exported)), "no name listed twice"
    module = importlib.import_module(package)
    assert [name for name in exported if not hasattr(module, name)] == []
