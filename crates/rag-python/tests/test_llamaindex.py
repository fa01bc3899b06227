"""RagctlNodeParser against the real llama-index-core from PyPI."""

from __future__ import annotations

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core import Document  # noqa: E402
from llama_index.core.ingestion import IngestionPipeline  # noqa: E402
from llama_index.core.node_parser import NodeParser  # noqa: E402
from llama_index.core.schema import MetadataMode, NodeRelationship, TextNode  # noqa: E402

from rag_chunker import TiktokenCounter  # noqa: E402
from ragctl.integrations import char_offsets  # noqa: E402
from ragctl.integrations.llamaindex import BOOKKEEPING_METADATA_KEYS, RagctlNodeParser  # noqa: E402

GUIDE = """# Guide

Repeated line.

## Install

Repeated line.

Run the installer. Ünïcödé too.

## Use

""" + "Use it well. " * 300


def test_nodes_are_exact_slices_with_their_place():
    parser = RagctlNodeParser(max_tokens=64, overlap_tokens=8, fold_headings=False)
    assert isinstance(parser, NodeParser)
    document = Document(text=GUIDE, metadata={"file_name": "guide.md"}, id_="guide")
    nodes = parser.get_nodes_from_documents([document])
    assert all(isinstance(n, TextNode) for n in nodes)
    data = GUIDE.encode("utf-8")
    for i, node in enumerate(nodes):
        assert node.node_id == f"guide#{i}"
        assert GUIDE[node.start_char_idx : node.end_char_idx] == node.text
        span = node.metadata["span"]
        assert data[span["start"] : span["end"]].decode("utf-8") == node.text
        assert node.metadata["token_count"] == TiktokenCounter().count(node.text) <= 64
        assert node.metadata["file_name"] == "guide.md"
        assert node.relationships[NodeRelationship.SOURCE].node_id == "guide"
    # The second "Repeated line." is at its own place, not at the first one's.
    repeated = [n for n in nodes if n.text.startswith("Repeated line.")]
    assert [n.start_char_idx for n in repeated] == [GUIDE.index("Repeated"), GUIDE.rindex("Repeated")]
    install = next(n for n in nodes if n.text.startswith("Repeated line.") and n.metadata["heading_path"] == ["Guide", "Install"])
    parent = install.relationships[NodeRelationship.PARENT]
    assert parent.node_id == "guide#2"
    assert nodes[2].text == "## Install"
    assert nodes[1].relationships[NodeRelationship.NEXT].node_id == nodes[2].node_id


def test_headings_fold_into_their_first_node_by_default():
    nodes = RagctlNodeParser(max_tokens=64, overlap_tokens=8).get_nodes_from_documents([Document(text=GUIDE, id_="guide")])
    assert nodes and all(n.metadata["kind"] == "body" for n in nodes)
    assert nodes[0].text.startswith("# Guide\n\n")
    install = next(n for n in nodes if n.metadata["heading_path"] == ["Guide", "Install"])
    assert install.text.startswith("## Install\n\n")
    assert GUIDE[install.start_char_idx : install.end_char_idx] == install.text
    assert all(NodeRelationship.PARENT not in n.relationships for n in nodes)


def test_it_runs_in_an_ingestion_pipeline():
    pipeline = IngestionPipeline(transformations=[RagctlNodeParser(max_tokens=64, overlap_tokens=8, include_headings=False)])
    nodes = pipeline.run(documents=[Document(text=GUIDE, id_="guide")])
    assert nodes and all(n.metadata["kind"] == "body" for n in nodes)
    assert nodes[0].metadata["heading_path"] == ["Guide"]


def test_what_llamaindex_embeds_and_sends_is_within_max_tokens(repo_docs):
    counter = TiktokenCounter()
    parser = RagctlNodeParser(max_tokens=128, overlap_tokens=16)
    documents = [
        Document(
            text=path.read_text(encoding="utf-8"),
            id_=path.name,
            metadata={"file_name": path.name, "file_path": str(path), "title": path.stem.replace("-", " ").title()},
            excluded_llm_metadata_keys=["file_path"],
        )
        for path in repo_docs[:8]
    ]
    nodes = parser.get_nodes_from_documents(documents)
    assert len(nodes) > 100
    for node in nodes:
        embed = node.get_content(metadata_mode=MetadataMode.EMBED)
        llm = node.get_content(metadata_mode=MetadataMode.LLM)
        assert counter.count(embed) <= 128 and counter.count(llm) <= 128, node.node_id
        # The bookkeeping stays in the metadata for programs, out of the model's text; the
        # heading path and the document's own metadata are in it.
        assert all(f"{key}:" not in embed.split("\n\n")[0] for key in BOOKKEEPING_METADATA_KEYS)
        assert "heading_path:" in embed and "file_name:" in embed
        assert "file_path:" in embed and "file_path:" not in llm
        assert node.metadata["chunk_id"] and "span" in node.metadata
    # The budget is spent on text, not lost: the largest nodes come close to it.
    assert max(counter.count(n.get_content(metadata_mode=MetadataMode.EMBED)) for n in nodes) > 128 - 16


def test_nodes_take_the_documents_templates():
    document = Document(
        text=GUIDE,
        id_="guide",
        metadata={"file_name": "guide.md"},
        metadata_template="<{key}> {value}",
        text_template="{metadata_str}\n---\n{content}",
    )
    nodes = RagctlNodeParser(max_tokens=64, overlap_tokens=8).get_nodes_from_documents([document])
    counter = TiktokenCounter()
    for node in nodes:
        embed = node.get_content(metadata_mode=MetadataMode.EMBED)
        assert embed.startswith("<file_name> guide.md") and "\n---\n" in embed
        assert counter.count(embed) <= 64


def test_metadata_that_leaves_no_room_is_a_value_error():
    document = Document(text=GUIDE, id_="guide", metadata={"summary": "a long summary " * 40})
    with pytest.raises(ValueError, match=r"document guide: its metadata takes \d+ of max_tokens=64 tokens"):
        RagctlNodeParser(max_tokens=64, overlap_tokens=8).get_nodes_from_documents([document])


def hindi(sentences: int) -> str:
    """Markdown in Devanagari: several bytes per character, the case where byte and character
    offsets differ."""
    return "# दस्तावेज़\n\n" + "".join(f"वाक्य {i} है। " for i in range(sentences))


def test_character_offsets_cost_linear_work(monkeypatch):
    import ragctl.integrations.llamaindex as llamaindex

    converters: list = []

    def spy(text):
        converter = char_offsets(text)
        converters.append(converter)
        return converter

    monkeypatch.setattr(llamaindex, "char_offsets", spy)

    def work(sentences: int) -> tuple:
        converters.clear()
        text = hindi(sentences)
        nodes = RagctlNodeParser(max_tokens=64, overlap_tokens=16).get_nodes_from_documents([Document(text=text, id_="h")])
        assert all(text[n.start_char_idx : n.end_char_idx] == n.text for n in nodes)
        # Overlap makes each node start before the previous one ends: the case that was slow.
        overlapping = sum(1 for a, b in zip(nodes, nodes[1:]) if b.start_char_idx < a.end_char_idx)
        assert overlapping > len(nodes) / 2
        [converter] = converters
        return converter.decoded, len(text.encode("utf-8")), len(nodes)

    small, small_bytes, small_nodes = work(1000)
    large, large_bytes, large_nodes = work(2000)
    assert small_nodes > 100
    # Each node's bytes about once, overlap included: at most twice the text, whatever its size
    # (restarting at byte 0 for every overlapping node decodes about nodes * bytes / 2).
    assert small <= 2 * small_bytes and large <= 2 * large_bytes
    assert large / small < 2.5


def test_the_reader_gives_chunks_within_budget_with_provenance_left_out_of_the_embedding(tmp_path):
    from llama_index.core import SimpleDirectoryReader

    from conftest import REPO
    from ragctl.integrations.llamaindex import RagctlReader

    docx = REPO / "crates" / "rag-chunker" / "tests" / "fixtures" / "docx" / "pandoc-stack-ls.docx"
    reader = RagctlReader(max_tokens=96, overlap_tokens=8)
    docs = reader.load_data(docx, extra_info={"collection": "manuals"})
    assert docs and len({d.doc_id for d in docs}) == len(docs)
    count = TiktokenCounter("cl100k_base").count
    for doc in docs:
        assert doc.metadata["collection"] == "manuals"
        assert doc.metadata["provenance"][0]["kind"] == "paragraphs"
        for mode in (MetadataMode.EMBED, MetadataMode.LLM):
            content = doc.get_content(metadata_mode=mode)
            assert count(content) <= 96
            assert "provenance" not in content and "word/document.xml" not in content
    page = tmp_path / "p.html"
    page.write_text("<html><body><main><h1>Page</h1><p>Hello from the web.</p></main></body></html>")
    (tmp_path / "notes.md").write_text("# Notes\n\nPlain.\n")
    loaded = SimpleDirectoryReader(str(tmp_path), file_extractor={".html": reader}).load_data()
    texts = [d.text for d in loaded]
    # Headings fold into their section's first chunk, as RagctlNodeParser's do by default.
    assert "# Page\n\nHello from the web." in texts and "<main>" not in "".join(texts)
