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


def test_the_loader_reads_every_type_with_provenance_into_the_original(tmp_path):
    import shutil

    from conftest import REPO
    from ragctl.integrations.langchain import RagctlLoader

    shutil.copy(REPO / "crates" / "rag-chunker" / "tests" / "fixtures" / "docx" / "pandoc-stack-ls.docx", tmp_path / "a.docx")
    page = b"<html><body><main><h1>Page</h1><p>Hello from the web.</p></main></body></html>"
    (tmp_path / "b.html").write_bytes(page)
    (tmp_path / "c.md").write_text(GUIDE)
    (tmp_path / "d.png").write_bytes(b"\x89PNG")
    loader = RagctlLoader(tmp_path, max_tokens=128, overlap_tokens=16)
    docs = list(loader.lazy_load())
    sources = [d.metadata["source"] for d in docs]
    assert sorted(set(sources)) == [str(tmp_path / n) for n in ("a.docx", "b.html", "c.md")]
    assert len({d.id for d in docs}) == len(docs)
    counter = TiktokenCounter("cl100k_base")
    assert all(counter.count(d.page_content) <= 128 for d in docs)
    for doc in docs:
        if doc.metadata["source"].endswith(".md"):
            assert "provenance" not in doc.metadata
        else:
            assert doc.metadata["provenance"], doc.metadata
    [hello] = [d for d in docs if "Hello" in d.page_content]
    origin = hello.metadata["provenance"][0]
    assert b"Hello from the web." in page[origin["start"] : origin["end"]]
    # Headings fold into their section's first chunk by default, as for the splitter.
    assert [d.page_content for d in RagctlLoader([tmp_path / "b.html"]).load()] == ["# Page\n\nHello from the web."]
    unfolded = RagctlLoader([tmp_path / "b.html"], fold_headings=False, include_headings=False).load()
    assert [d.page_content for d in unfolded] == ["Hello from the web."]


def test_the_splitter_reads_html_text():
    page = "<html><body><nav>Menu</nav><main><h1>Page</h1><p>Hello from the web.</p></main></body></html>"
    docs = RagctlTextSplitter(document_type="html").create_documents([page], [{"source": "p.html"}])
    assert [d.page_content for d in docs] == ["# Page\n\nHello from the web."]
    assert docs[0].metadata["heading_path"] == ["Page"]
    [origin] = docs[0].metadata["provenance"]
    assert origin["kind"] == "bytes" and "Menu" not in page[origin["start"] : origin["end"]]


def test_the_loader_reads_source_code_along_its_syntax(tmp_path):
    from ragctl.integrations.langchain import RagctlLoader

    (tmp_path / "main.go").write_text("package main\n\nfunc Run() int {\n\treturn 1\n}\n")
    docs = RagctlLoader(tmp_path, max_tokens=12).load()
    assert "".join(d.page_content for d in docs).replace("\n", "").replace("\t", "").replace(" ", "") == "packagemainfuncRun()int{return1}"
    assert any(d.metadata["heading_path"] == ["func Run"] for d in docs), [d.metadata for d in docs]
