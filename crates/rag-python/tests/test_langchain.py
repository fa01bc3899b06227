"""RagctlTextSplitter against the real langchain-text-splitters from PyPI."""

from __future__ import annotations

import pytest

langchain_text_splitters = pytest.importorskip("langchain_text_splitters")

from langchain_core.documents import Document  # noqa: E402
from langchain_text_splitters import MarkdownHeaderTextSplitter, TextSplitter  # noqa: E402

from rag_chunker import TiktokenCounter  # noqa: E402
from ragctl.integrations.langchain import RagctlTextSplitter  # noqa: E402

GUIDE = """# Guide

Welcome to the guide. ünïcödé and 日本語 are fine.

## Install

Run the installer:

```python
def main():
    if ready():
        install()
```

## Use

""" + "Use it well. " * 400


def test_it_is_a_langchain_text_splitter():
    splitter = RagctlTextSplitter(max_tokens=128, overlap_tokens=16)
    assert isinstance(splitter, TextSplitter)
    texts = splitter.split_text(GUIDE)
    # Headings fold into the first chunk of their section by default.
    assert texts[0].startswith("# Guide\n\nWelcome to the guide.")
    assert all(TiktokenCounter().count(t) <= 128 for t in texts)
    # The code block keeps its indentation (LangChain's header splitter strips it).
    assert any("    if ready():\n        install()" in t for t in texts)
    header_split = MarkdownHeaderTextSplitter([("#", "h1"), ("##", "h2")]).split_text(GUIDE)
    assert not any("        install()" in d.page_content for d in header_split)


def test_documents_carry_where_they_came_from():
    splitter = RagctlTextSplitter(max_tokens=128, overlap_tokens=16, add_start_index=True)
    source = Document(page_content=GUIDE, metadata={"source": "docs/guide.md", "lang": "en"})
    docs = splitter.split_documents([source])
    data = GUIDE.encode("utf-8")
    for i, doc in enumerate(docs):
        meta = doc.metadata
        assert meta["lang"] == "en" and meta["source"] == "docs/guide.md"
        assert meta["chunk_id"] == f"docs/guide.md#{i}"
        span = meta["span"]
        assert data[span["start"] : span["end"]].decode("utf-8") == doc.page_content
        assert GUIDE[meta["start_index"] : meta["start_index"] + len(doc.page_content)] == doc.page_content
        assert meta["token_count"] == TiktokenCounter().count(doc.page_content) <= 128
    install = next(d for d in docs if d.page_content.startswith("## Install\n\nRun the installer"))
    assert install.metadata["heading_path"] == ["Guide", "Install"]
    assert install.metadata["kind"] == "body"
    # transform_documents, what LangChain pipelines call, gives the same documents.
    assert splitter.transform_documents([source]) == docs


def test_no_document_is_a_heading_alone_by_default():
    docs = RagctlTextSplitter(max_tokens=128, overlap_tokens=16).create_documents([GUIDE])
    assert docs and all(d.metadata["kind"] == "body" for d in docs)
    assert [d.metadata["heading_path"] for d in docs[:3]] == [["Guide"], ["Guide", "Install"], ["Guide", "Use"]]
    seed = RagctlTextSplitter(max_tokens=128, overlap_tokens=16, fold_headings=False).split_text(GUIDE)
    assert seed[:2] == ["# Guide", "Welcome to the guide. ünïcödé and 日本語 are fine."]
    assert sum(t.startswith("#") for t in seed) == 3 and not any(d.page_content in seed[:1] for d in docs)


def test_the_default_overlap_is_the_library_rule():
    assert RagctlTextSplitter()._chunk_overlap == 64
    assert RagctlTextSplitter(max_tokens=100)._chunk_overlap == 12


def test_headings_can_be_left_out():
    docs = RagctlTextSplitter(include_headings=False, fold_headings=False).create_documents([GUIDE])
    assert all(d.metadata["kind"] == "body" for d in docs)
    assert docs[0].metadata["heading_path"] == ["Guide"]


def test_a_python_counter_sets_the_budget():
    class Words:
        def count(self, text):
            return len(text.split())

        def name(self):
            return "words"

    texts = RagctlTextSplitter(max_tokens=50, overlap_tokens=5, token_counter=Words()).split_text(GUIDE)
    assert max(len(t.split()) for t in texts) <= 50
