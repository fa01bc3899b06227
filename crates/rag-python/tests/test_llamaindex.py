"""RagctlNodeParser against the real llama-index-core from PyPI."""

from __future__ import annotations

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core import Document  # noqa: E402
from llama_index.core.ingestion import IngestionPipeline  # noqa: E402
from llama_index.core.node_parser import NodeParser  # noqa: E402
from llama_index.core.schema import NodeRelationship, TextNode  # noqa: E402

from rag_chunker import TiktokenCounter  # noqa: E402
from ragctl.integrations.llamaindex import RagctlNodeParser  # noqa: E402

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
