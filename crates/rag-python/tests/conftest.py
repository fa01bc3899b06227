"""Fixtures shared by the suite: a request context, the repository's own documents, the ragctl
binary for byte-for-byte comparisons."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import List

import pytest

from rag_core import RequestContext

REPO = Path(__file__).resolve().parents[3]
"""The workspace root (tests/ is in crates/rag-python/)."""

NODEJS_DOCS = REPO / "eval" / "corpus" / "nodejs-api" / "docs"


@pytest.fixture
def ctx() -> RequestContext:
    return RequestContext("acme")


@pytest.fixture(scope="session")
def repo_docs() -> List[Path]:
    """Real Markdown of varied shape: the project's docs and a few Node.js API pages."""
    docs = sorted((REPO / "docs").rglob("*.md"))
    docs += [NODEJS_DOCS / name for name in ("fs.md", "stream.md", "buffer.md", "url.md")]
    return [d for d in docs if d.is_file()]


@pytest.fixture(scope="session")
def ragctl_bin() -> str:
    """The ragctl binary: $RAGCTL, else the workspace's debug or release build, else PATH."""
    candidates = [os.environ.get("RAGCTL")]
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    candidates += [str(target / "debug" / "ragctl"), str(target / "release" / "ragctl"), shutil.which("ragctl")]
    for candidate in candidates:
        if candidate and Path(candidate).is_file():
            return candidate
    raise RuntimeError("no ragctl binary: run `cargo build -p ragctl` or set RAGCTL=/path/to/ragctl")
