"""RagctlTextSplitter against the real langchain-text-splitters from PyPI."""

from __future__ import annotations

import pytest

langchain_text_splitters = pytest.importorskip("langchain_text_splitters")

from langchain_core.documents import Document  # noqa: E402
from langchain_text_splitters import MarkdownHeaderTextSplitter, TextSplitter  # noqa: E402

from rag_chunker import TiktokenCounter  # noqa: E402
from ragctl.integrations.langchain import RagctlTextSplitter, document_ids  # noqa: E402

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
    assert texts[0] == "# Guide"
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
    install = next(d for d in docs if d.page_content.startswith("Run the installer"))
    assert install.metadata["heading_path"] == ["Guide", "Install"]
    assert install.metadata["kind"] == "body"
    # transform_documents, what LangChain pipelines call, gives the same documents.
    assert splitter.transform_documents([source]) == docs


def test_headings_can_be_left_out():
    docs = RagctlTextSplitter(include_headings=False).create_documents([GUIDE])
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


def test_chunk_ids_are_unique_when_texts_share_a_source():
    # What PDF loaders emit: one Document per page, each with the file as its source.
    pages = [
        Document(page_content=f"Page {p} starts here. " + "The report goes on. " * 40, metadata={"source": "report.pdf", "page": p})
        for p in range(3)
    ]
    docs = RagctlTextSplitter(max_tokens=64, overlap_tokens=8).split_documents(pages)
    ids = [d.metadata["chunk_id"] for d in docs]
    assert len(docs) >= 6
    assert len(set(ids)) == len(ids)
    # Each page's chunks are named by its order among the texts of that source.
    assert [d.metadata["chunk_id"] for d in docs if d.metadata["page"] == 1][:2] == ["report.pdf[1]#0", "report.pdf[1]#1"]
    assert all(d.metadata["source"] == "report.pdf" for d in docs)
    # A source no other text of the call shares keeps its plain name.
    single = RagctlTextSplitter(max_tokens=64, overlap_tokens=8).split_documents(pages[:1])
    assert single[0].metadata["chunk_id"] == "report.pdf#0"


def test_document_ids_stay_distinct_whatever_the_sources_are_called():
    assert document_ids(["a", "b"]) == ["a", "b"]
    assert document_ids(["a", "a", "b", "a"]) == ["a[0]", "a[1]", "b", "a[2]"]
    tricky = document_ids(["a", "a", "a[0]", "text-3"])
    assert len(set(tricky)) == 4
