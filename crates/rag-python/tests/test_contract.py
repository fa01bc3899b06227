"""The chunker contract, checked on chunks made from Python: what every chunk promises, on the
project's own docs, Node.js API pages and inputs chosen to be awkward."""

from __future__ import annotations

from typing import List

import pytest

from rag_chunker import HeadingAwareChunker, TiktokenCounter, parse_document
from rag_core import Chunk, Principal, RequestContext

AWKWARD = {
    "cjk-emoji.md": "# 見出し\n\n" + "日本語の文章です。絵文字も🎉あります。" * 80 + "\n\n## 次\n\n短い。\n",
    "crlf.md": "# Title\r\n\r\nLine one.\r\nLine two.\r\n\r\n## Sub\r\n\r\n" + "Word " * 900 + "\r\n",
    "bom.md": "\ufeff# Heading\n\nBody after a byte-order mark.\n",
    "code.md": "# Code\n\n```python\n" + "".join(f"    x_{i} = {i}  # comment\n" for i in range(400)) + "```\n",
    "deep.md": "".join(f"{'#' * (i % 6 + 1)} H{i}\n\nText {i}. " + "More text. " * (i * 7 % 50) + "\n\n" for i in range(60)),
    "table.md": "# Table\n\n| a | b |\n|---|---|\n" + "".join(f"| {i} | {'cell ' * 20} |\n" for i in range(200)),
    "plain.txt": "\n\n".join("Paragraph %d. " % i + "Sentence. " * (i % 90) for i in range(120)),
}


def check_contract(chunks: List[Chunk], text: str, ctx: RequestContext, document_id: str, max_tokens: int, counter) -> None:
    data = text.encode("utf-8")
    by_id = {}
    previous_start = -1
    for i, chunk in enumerate(chunks):
        assert chunk.position == i
        assert chunk.id == f"{document_id}#{i}"
        assert chunk.document_id == document_id
        assert chunk.tenant_id == ctx.tenant_id
        assert list(chunk.acl_labels) == ctx.principal.acl_labels
        assert chunk.content is not None and chunk.content.strip(), "never whitespace-only"
        # content is exactly the source bytes of span
        assert data[chunk.span.start : chunk.span.end].decode("utf-8") == chunk.content
        assert chunk.span.start > previous_start, "spans start strictly increasing"
        previous_start = chunk.span.start
        # token_count is the exact count, within the budget
        assert chunk.token_count == counter.count(chunk.content)
        assert chunk.token_count <= max_tokens
        if chunk.parent_id is not None:
            parent = by_id[chunk.parent_id]  # the parent comes earlier
            assert parent.metadata["kind"] == "heading"
            if chunk.metadata["kind"] == "heading" and chunk.metadata.get("level") is not None:
                assert parent.metadata["level"] < chunk.metadata["level"]
            # No chunk starts before the end of its section's heading chunk: overlap never
            # crosses a heading.
            assert chunk.span.start >= parent.span.end
        by_id[chunk.id] = chunk
    # Nothing is lost: every non-whitespace byte (a leading BOM excepted) is in some chunk.
    covered = bytearray(len(data))
    for chunk in chunks:
        covered[chunk.span.start : chunk.span.end] = b"\x01" * (chunk.span.end - chunk.span.start)
    start = 3 if data.startswith(b"\xef\xbb\xbf") else 0
    lost = [
        i for i in range(start, len(data)) if not covered[i] and data[i : i + 1] not in (b" ", b"\n", b"\r", b"\t")
    ]
    assert not lost, f"bytes not in any chunk: {lost[:10]}"


@pytest.mark.parametrize("max_tokens,overlap", [(512, 64), (64, 8), (16, 2)])
def test_contract_holds_on_real_and_awkward_documents(repo_docs, max_tokens, overlap):
    ctx = RequestContext("acme", Principal("alice", ["staff", "eu"]))
    counter = TiktokenCounter()
    chunker = HeadingAwareChunker(max_tokens, overlap)
    inputs = [(path.name, path.read_text(encoding="utf-8")) for path in repo_docs[:12]] + list(AWKWARD.items())
    for name, text in inputs:
        chunks = chunker.chunk_text_blocking(ctx, text, source_uri=name)
        assert chunks, name
        check_contract(chunks, text, ctx, name, max_tokens, counter)


def test_output_is_deterministic(ctx, repo_docs):
    chunker = HeadingAwareChunker(128, 16)
    text = repo_docs[0].read_text(encoding="utf-8")
    first = [c.to_json() for c in chunker.chunk_text_blocking(ctx, text, source_uri="a.md")]
    second = [c.to_json() for c in HeadingAwareChunker(128, 16).chunk_text_blocking(ctx, text, source_uri="a.md")]
    assert first == second


def test_overlap_stays_inside_a_section(ctx):
    text = "# A\n\n" + "Alpha sentence number one. " * 200 + "\n\n# B\n\n" + "Beta sentence number two. " * 200
    chunks = HeadingAwareChunker(64, 16).chunk_text_blocking(ctx, text, source_uri="o.md")
    bodies = [c for c in chunks if c.metadata["kind"] == "body"]
    overlapping = [(a, b) for a, b in zip(bodies, bodies[1:]) if b.span.start < a.span.end]
    assert overlapping, "long sections overlap"
    for a, b in overlapping:
        assert a.parent_id == b.parent_id, "overlap never crosses a heading"


def test_python_counter_chunks_keep_the_contract(ctx, repo_docs):
    class Words:
        def count(self, text: str) -> int:
            return len(text.split())

        def name(self) -> str:
            return "words"

    text = repo_docs[1].read_text(encoding="utf-8")
    chunks = HeadingAwareChunker(40, 5, token_counter=Words()).chunk_text_blocking(ctx, text, source_uri="w.md")
    check_contract(chunks, text, ctx, "w.md", 40, Words())
    assert max(c.token_count for c in chunks) <= 40


def test_a_parsed_document_built_in_python_is_chunked(ctx):
    from rag_core import Block, Document, ParsedDocument

    text = "# Setup\n\nInstall it.\n\n## Linux\n\nUse apt."
    parsed = ParsedDocument(
        Document("doc", text, corpus_id="c", source_uri="a.md"),
        [
            Block("heading", (0, 7), level=1, text="Setup"),
            Block("paragraph", (9, 20)),
            Block("heading", (22, 30), level=2, text="Linux"),
            Block("paragraph", (32, 40)),
        ],
    )
    chunks = HeadingAwareChunker().chunk_blocking(ctx, parsed)
    assert [(c.content, c.parent_id, c.heading_path) for c in chunks] == [
        ("# Setup", None, []),
        ("Install it.", "doc#0", ["Setup"]),
        ("## Linux", "doc#0", ["Setup"]),
        ("Use apt.", "doc#2", ["Setup", "Linux"]),
    ]
