"""The packer from Python: pack_context's prompt, the primitives, and the Chunk type."""

from __future__ import annotations

import asyncio
import copy
import json
import pickle
import subprocess

import pytest

from rag_chunker import HeadingAwareChunker, TiktokenCounter
from conftest import REPO
from rag_core import Chunk, PackerError, Principal, RequestContext, Span
from rag_packer import (
    ContextPacker,
    PackerConfig,
    ascending_order,
    bm25_scores,
    content_hash,
    descending_order,
    detect_conflicts,
    fit_to_budget,
    hash_dedup,
    jaccard,
    jaccard_dedup,
    knapsack_select,
    lost_in_middle_order,
    normalise,
    optimal_select,
    shingles,
    sides_order,
)

GUIDE = """# Streams

Streams move data in pieces.

## Ending

Streams end when the source is drained. Call end() to finish writing.

## Errors

An error event is emitted when something fails.
"""


def test_pack_context_renders_the_prompt_within_the_budget(ctx):
    chunks = HeadingAwareChunker(64, 8).chunk_text_blocking(ctx, GUIDE, source_uri="streams.md")
    packer = ContextPacker()
    packed = asyncio.run(packer.pack_context(ctx, chunks, budget=60, query="how do streams end"))
    assert packed.scoring.startswith("bm25 against the query over heading path and text of ")
    assert all(chunk.score is None for chunk in chunks), "the caller's chunks keep their own score"
    assert packed.context.startswith("Streams > Ending\nStreams end when the source is drained.")
    assert packed.tokens_used == TiktokenCounter().count(packed.context) <= 60
    assert packed.excerpts[0].breadcrumb and packed.excerpts[0].heading_path == ["Streams", "Ending"]
    tagged = packer.pack_context_blocking(
        ctx, chunks, 80, query="how do streams end", template='<doc path="{heading_path}">{content}</doc>', delimiter="\n"
    )
    assert tagged.context.startswith('<doc path="Streams > Ending">Streams end when')
    assert not tagged.excerpts[0].breadcrumb, "a template showing the path needs no breadcrumb"
    assert packer.pack_blocking(ctx, chunks, 60, query="how do streams end").context is None
    assert packer.pack_blocking(ctx, chunks, 60).scoring is None, "without a query, scores are as given"


@pytest.mark.parametrize("query, budget", [("how are duplicates dropped", 300), ("what does the packer refuse", 600)])
def test_a_query_packs_unscored_chunks_as_ragctl_pack_does(tmp_path, ragctl_bin, query, budget):
    lines = subprocess.run(
        [ragctl_bin, "chunk", "docs/architecture.md", "docs/security.md", "--format", "jsonl"],
        cwd=REPO, check=True, capture_output=True, text=True,
    ).stdout.splitlines()
    # A chunk the principal may not see, which must change nothing it gets.
    hidden = json.loads(lines[3])
    hidden.update(id="board#1", acl_labels=["board"], content=hidden["content"] + " duplicates dropped refuse")
    lines.append(json.dumps(hidden))
    (tmp_path / "chunks.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    cli = json.loads(subprocess.run(
        [ragctl_bin, "pack", query, "--input", str(tmp_path / "chunks.jsonl"), "--budget", str(budget), "--format", "json"],
        check=True, capture_output=True, text=True,
    ).stdout)
    chunks = [Chunk.from_json(line) for line in lines]
    packed = ContextPacker().pack_context_blocking(RequestContext("ragctl-local"), chunks, budget, query=query)
    assert [c.id for c in packed.chunks] == [c["id"] for c in cli["chunks"]] != []
    assert packed.context == cli["context"]
    assert packed.scoring == cli["scoring"] and packed.hidden_by_acl == cli["hidden_by_acl"] == 1
    assert [(d.id, d.reason) for d in packed.dropped] == [(d["id"], d["reason"]) for d in cli["dropped"]]
    awaited = asyncio.run(ContextPacker().pack(RequestContext("ragctl-local"), chunks, budget, query=query))
    assert awaited.scoring == cli["scoring"]


def test_pack_context_packs_the_best_part_of_a_chunk_that_does_not_fit(ctx):
    filler = " ".join(f"Filler sentence {i} says little." for i in range(30))
    best = Chunk("best", "guide", "acme", filler + " The refund window is thirty days. " + filler)
    small = Chunk("small", "guide2", "acme", "Refund forms are online.")
    for chunk in (best, small):
        chunk.metadata = {"kind": "body"}
    packed = ContextPacker().pack_context_blocking(ctx, [best, small], 120, query="refund window")
    cut = [c for c in packed.chunks if c.id == "best#cut"]
    assert cut and "The refund window is thirty days." in cut[0].content
    start, end = cut[0].metadata["cut_from"]["start"], cut[0].metadata["cut_from"]["end"]
    assert best.content.encode()[start:end].decode() == cut[0].content
    assert [d.reason for d in packed.dropped if d.id == "best"] == ["cut_to_fit"]
    assert len(packed.effective_scores) == len(packed.chunks)
    assert packed.tokens_used <= 120
    whole = ContextPacker(PackerConfig(cut_to_fit=False)).pack_context_blocking(
        ctx, [best, small], 120, query="refund window"
    )
    assert all(not c.id.endswith("#cut") for c in whole.chunks)
    assert [d.reason for d in whole.dropped if d.id == "best"] == ["over_budget"]


def test_a_query_of_more_than_1024_terms_is_refused(ctx):
    chunks = [Chunk("a", "d", "acme", "term1 and term2")]
    query = " ".join(f"term{i}" for i in range(1025))
    with pytest.raises(PackerError, match="1025 distinct search terms; BM25 searches at most 1024"):
        ContextPacker().pack_blocking(ctx, chunks, 100, query=query)


def test_packs_run_concurrently_under_asyncio(ctx):
    chunks = HeadingAwareChunker(64, 8).chunk_text_blocking(ctx, GUIDE, source_uri="streams.md")

    async def many():
        packer = ContextPacker()
        return await asyncio.gather(*(packer.pack(ctx, chunks, budget=b) for b in (10, 20, 40, 400)))

    results = asyncio.run(many())
    assert [r.tokens_budget for r in results] == [10, 20, 40, 400]
    assert all(r.tokens_used <= r.tokens_budget for r in results)
    assert all(d.message for r in results for d in r.dropped)


def test_dedup_primitives(ctx):
    a = Chunk("a", "d", "t", "the quick brown fox jumps over the lazy dog today")
    b = Chunk("b", "d", "t", "The quick brown fox jumps over the lazy dog, today!")
    c = Chunk("c", "d", "t", "the quick brown fox jumps over the lazy cat today")
    assert normalise("The quick  brown-fox!") == "the quick brown fox"
    assert content_hash("A b") == content_hash("a, B!") and len(content_hash("a")) == 64
    assert hash_dedup([a, b, c]) == [a, c] and hash_dedup([a, b, c])[0] is a
    assert jaccard_dedup([a, b, c], threshold=0.5) == [a]
    assert jaccard_dedup([a, b, c], threshold=0.9) == [a, c]
    words = "the quick brown fox jumps".split()
    assert shingles(words, 3) == {"the quick brown", "quick brown fox", "brown fox jumps"}
    assert jaccard({"x", "y"}, {"y", "z"}) == pytest.approx(1 / 3)


def test_order_primitives():
    assert lost_in_middle_order([1, 2, 3, 4, 5]) == [1, 3, 5, 4, 2]
    assert lost_in_middle_order([1, 2, 3, 4]) == [1, 3, 4, 2]
    assert sides_order([1, 2, 3, 4]) == [2, 4, 3, 1]
    chunks = [Chunk(i, "d", "t", "x", score=s) for i, s in [("a", 0.2), ("b", 0.9), ("c", 0.5)]]
    assert [c.id for c in descending_order(chunks)] == ["b", "c", "a"]
    assert [c.id for c in ascending_order(chunks)] == ["a", "c", "b"]


def test_budget_primitives():
    chunks = [Chunk(i, "d", "t", "x", token_count=n, score=s) for i, n, s in [("a", 60, 1.0), ("b", 50, 0.8), ("c", 50, 0.8), ("d", 30, 0.5)]]
    assert [c.id for c in fit_to_budget(chunks, budget=100)] == ["a", "d"]
    assert [c.id for c in knapsack_select(chunks, budget=100)] == ["a", "d"]
    assert [c.id for c in optimal_select(chunks, budget=100)] == ["b", "c"], "the exact optimum: 1.6"
    capped = [Chunk(i, doc, "t", "x", token_count=10) for i, doc in [("a", "d1"), ("b", "d1"), ("c", "d2")]]
    assert [c.id for c in fit_to_budget(capped, budget=100, max_per_document=1)] == ["a", "c"]


def test_conflicts_and_scores():
    a = Chunk("a", "d1", "t", "The refund window is 30 days.")
    b = Chunk("b", "d2", "t", "The refund window is 14 days.", trust="untrusted")
    kinds = sorted(c.kind for c in detect_conflicts([a, b]))
    assert kinds == ["numeric_disagreement", "trust_mismatch"]
    conflict = detect_conflicts([a, b])[0]
    assert conflict.chunk_ids == ["a", "b"] and "30 days vs 14 days" in conflict.detail
    assert bm25_scores("refund window", ["The refund window is 30 days.", "Shipping is free."]) == [1.0, 0.0]


def test_chunk_fields_round_trip():
    chunk = Chunk(
        "guide#1", "guide", "acme", "Body text.",
        position=1, parent_id="guide#0", token_count=3, span=(9, 19), source_uri="docs/a.md",
        score=0.75, trust="user_supplied", pinned=True, acl_labels=["staff"], metadata={"kind": "body"},
    )
    line = chunk.to_json()
    assert line == (
        '{"id":"guide#1","document_id":"guide","tenant_id":"acme","position":1,"parent_id":"guide#0",'
        '"content":"Body text.","token_count":3,"span":{"start":9,"end":19},"source_uri":"docs/a.md",'
        '"score":0.75,"trust":"user_supplied","pinned":true,"acl_labels":["staff"],"metadata":{"kind":"body"}}'
    )
    assert Chunk.from_json(line) == chunk
    assert Chunk.from_dict(chunk.to_dict()) == chunk
    assert pickle.loads(pickle.dumps(chunk)) == chunk
    assert chunk.span == Span(9, 19) and tuple(chunk.span) == (9, 19) and len(chunk.span) == 10
    # Unknown fields survive a round trip, in `extra`.
    extended = Chunk.from_json('{"id":"c","document_id":"d","tenant_id":"t","content":"x","reranker":"bge"}')
    assert extended.extra == {"reranker": "bge"}
    assert '"reranker":"bge"' in extended.to_json()


def test_an_extra_key_that_names_a_field_is_refused():
    injected = {"tenant_id": "globex", "acl_labels": [], "content": "INJECTED"}
    with pytest.raises(ValueError, match=r"chunk a: extra field `(tenant_id|acl_labels|content)` names a field"):
        Chunk("a", "d", "acme", "salary", acl_labels=["hr"], extra=injected)
    chunk = Chunk("a", "d", "acme", "salary", acl_labels=["hr"], extra={"reranker": "bge"})
    with pytest.raises(ValueError, match="extra field `tenant_id`"):
        chunk.extra = {"tenant_id": "globex"}
    # The live dict is checked whenever the chunk leaves Python: no door writes a key twice.
    chunk.extra["tenant_id"] = "globex"
    for door in (chunk.to_json, chunk.to_dict, lambda: pickle.dumps(chunk)):
        with pytest.raises(ValueError, match="extra field `tenant_id`"):
            door()
    del chunk.extra["tenant_id"]
    back = Chunk.from_dict(chunk.to_dict())
    assert (back.tenant_id, back.acl_labels, back.content) == ("acme", ("hr",), "salary")
    assert pickle.loads(pickle.dumps(chunk)) == chunk


def test_metadata_is_a_live_dict_and_copies_are_independent():
    chunk = Chunk("c", "d", "t", "x", metadata={"kind": "body"})
    chunk.metadata["page"] = 3
    assert chunk.metadata is chunk.metadata
    assert chunk.to_dict()["metadata"] == {"kind": "body", "page": 3}
    twin = copy.deepcopy(chunk)
    twin.metadata["page"] = 4
    assert chunk.metadata["page"] == 3 and twin.metadata["page"] == 4
    assert chunk != twin


def test_access_labels_and_token_count_provenance(ctx):
    public = Chunk("pub", "d", "acme", "Refunds take 30 days.", score=0.9)
    secret = Chunk("sec", "d", "acme", "Salaries are listed here.", score=1.0, acl_labels=["hr"])
    packed = ContextPacker().pack_blocking(ctx, [public, secret], 100)
    assert [c.id for c in packed.chunks] == ["pub"]
    assert packed.hidden_by_acl == 1 and not any(d.id == "sec" for d in packed.dropped)
    hr = RequestContext("acme", Principal("bob", ["hr"]))
    assert len(ContextPacker().pack_blocking(hr, [public, secret], 100).chunks) == 2
    # A count made with another tokenizer is recounted, or refused without content to recount.
    foreign = Chunk("f", "d", "acme", content_ref="s3://b/f", token_count=7, tokenizer="hf:other.json@000000000000")
    with pytest.raises(PackerError) as caught:
        ContextPacker().pack_blocking(ctx, [foreign], 100)
    assert (caught.value.chunk_id, caught.value.tokenizer) == ("f", "hf:other.json@000000000000")
    lying = Chunk("l", "d", "acme", "Refunds take 30 days.", token_count=1, tokenizer="tiktoken:cl100k_base")
    checked = ContextPacker(config=PackerConfig(verify_counts=True)).pack_blocking(ctx, [lying], 100)
    assert checked.tokens_used == TiktokenCounter().count(lying.content)
    assert any("l" in note for note in checked.notes), checked.notes
