"""Every Python example the API was specified with (docs/reference-design.md), as written, adapted
only where they import or build the ctx and the inputs they leave to the reader."""

from __future__ import annotations

import asyncio
import inspect

import pytest

import rag_core
from rag_core import Chunk, CorpusId, DocumentId, RequestContext

MARKDOWN = """# Guide

Intro text for the guide.

## Install

Run the installer. It takes a minute.

## Use

Call `ragctl chunk` on a file.
"""


def reranked(ctx: RequestContext):
    texts = [
        "Cross-encoder rerankers score (query, document) pairs jointly.",
        "MMR balances relevance against diversity in selection.",
        "Cross-encoder rerankers score (query, document) pairs jointly!",
        "Context packing fits chunks into the LLM prompt window.",
    ]
    return [
        Chunk(f"chunk-{i}", f"doc-{i}", ctx.tenant_id, text, score=1.0 - i / 10) for i, text in enumerate(texts)
    ]


def test_chunker_snippet_runs_as_written(ctx):
    from rag_chunker import HeadingAwareChunker
    from rag_chunker import parse_document

    parsed = parse_document(ctx, MARKDOWN, source_uri="guide.md")

    async def snippet():
        chunker = HeadingAwareChunker(
            max_tokens=512,        # chunk token budget
            overlap_tokens=64,     # the tail of a chunk that starts the next one
            token_counter=None,    # default: TiktokenCounter("cl100k_base")
        )
        chunks = await chunker.chunk(ctx, parsed)
        return chunker, chunks

    chunker, chunks = asyncio.run(snippet())
    assert [c.metadata["kind"] for c in chunks] == ["heading", "body", "heading", "body", "heading", "body"]
    assert chunks[3].metadata == {"kind": "body", "heading_path": ["Guide", "Install"]}
    assert chunks[2].metadata == {"kind": "heading", "level": 2, "heading_path": ["Guide"]}
    assert chunker.token_counter.name() == "tiktoken:cl100k_base"
    # The blocking twin gives the same chunks.
    assert chunker.chunk_blocking(ctx, parsed) == chunks


def test_chunker_defaults_are_the_seeds():
    from rag_chunker import HeadingAwareChunker

    signature = inspect.signature(HeadingAwareChunker)
    assert [(p.name, p.default) for p in signature.parameters.values()] == [
        ("max_tokens", 512),
        ("overlap_tokens", None),
        ("token_counter", None),
        ("fold_headings", False),
    ]
    # The signature's default is what the constructor uses (the library's constant).
    assert HeadingAwareChunker().max_tokens == 512
    # No overlap given: the library's rule, 64 or an eighth of the budget, as `ragctl chunk`'s.
    assert HeadingAwareChunker().overlap_tokens == 64
    assert HeadingAwareChunker(100).overlap_tokens == 12
    assert HeadingAwareChunker(100, 30).overlap_tokens == 30


def test_chunker_folds_headings_when_asked(ctx):
    import pickle

    from rag_chunker import HeadingAwareChunker

    folded = HeadingAwareChunker(fold_headings=True)
    assert folded.fold_headings and not HeadingAwareChunker().fold_headings
    assert repr(folded).endswith("fold_headings=True)")
    assert pickle.loads(pickle.dumps(folded)).fold_headings
    chunks = folded.chunk_text_blocking(ctx, "# run\n\n## Options\n\nRun a command.\n", source_uri="run.md")
    assert [c.content for c in chunks] == ["# run\n\n## Options\n\nRun a command."]
    assert chunks[0].metadata == {"kind": "body", "heading_path": ["run", "Options"]}
    assert chunks[0].parent_id is None


def test_token_counter_snippet(ctx):
    from rag_chunker import TiktokenCounter, TokenCounter

    assert TiktokenCounter().name() == "tiktoken:cl100k_base"
    assert TiktokenCounter("o200k_base").name() == "tiktoken:o200k_base"
    assert isinstance(TiktokenCounter(), TokenCounter)

    class Words:  # any object with count and name is a TokenCounter
        def count(self, text: str) -> int:
            return len(text.split())

        def name(self) -> str:
            return "words"

    assert isinstance(Words(), TokenCounter)


def test_ocr_snippet_runs_as_written(ctx):
    from rag_chunker import HeadingAwareChunker, OCRRegion, OCRResult, ocr_result_to_parsed_document

    ocr_result = OCRResult(
        "tesseract-5",
        [
            OCRRegion("INVOICE 42", 0.98, (10, 10, 200, 40), page=1),
            OCRRegion("Total: 12.50 EUR", 0.91, (10, 60, 220, 80)),
        ],
    )
    chunker = HeadingAwareChunker()

    async def snippet():
        parsed = ocr_result_to_parsed_document(
            ctx, ocr_result,
            document_id=DocumentId("scan-001"),
            corpus_id=CorpusId("invoices"),
            source_uri="s3://bucket/scan.png",
        )
        chunks = await chunker.chunk(ctx, parsed)
        return parsed, chunks

    parsed, chunks = asyncio.run(snippet())
    assert parsed.text == "INVOICE 42\n\nTotal: 12.50 EUR"
    assert parsed.blocks[0].attributes == {
        "engine": "tesseract-5",
        "ocr_confidence": 0.98,
        "bbox": [10.0, 10.0, 200.0, 40.0],
        "page": 1,
    }
    assert [c.content for c in chunks] == ["INVOICE 42\n\nTotal: 12.50 EUR"]
    assert chunks[0].document_id == "scan-001"
    assert chunks[0].source_uri == "s3://bucket/scan.png"


def test_minimal_packer_snippet_runs_as_written(ctx, capsys):
    from rag_packer import ContextPacker

    reranked_chunks = reranked(ctx)

    async def snippet():
        packer = ContextPacker()
        packed = await packer.pack(ctx, reranked_chunks, budget=4000)
        print(packed.tokens_used, "of", packed.tokens_budget)
        for chunk in packed.chunks:
            ...
        return packed

    packed = asyncio.run(snippet())
    assert capsys.readouterr().out == f"{packed.tokens_used} of 4000\n"
    # Defaults: lost in the middle, exact dedup only, conflicts on, cl100k.
    assert packed.order == "lost_in_middle"
    assert packed.tokenizer == "tiktoken:cl100k_base"
    assert [c.id for c in packed.chunks] == ["chunk-0", "chunk-3", "chunk-1"]
    assert [(d.id, d.message) for d in packed.dropped] == [("chunk-2", "exact duplicate of chunk-0")]
    assert packed.chunks[0] is reranked_chunks[0], "the caller's own objects come back"


def test_packer_config_snippet_runs_as_written(ctx):
    from rag_packer import ContextPacker, PackerConfig

    reranked = [
        Chunk("a", "d1", ctx.tenant_id, "the quick brown fox jumps over the lazy dog today", score=0.9),
        Chunk("b", "d2", ctx.tenant_id, "the quick brown fox jumps over the lazy dog today!", score=0.8),
        Chunk("c", "d3", ctx.tenant_id, "the quick brown fox jumps over the lazy cat today", score=0.7),
        Chunk("d", "d4", ctx.tenant_id, "an unrelated sentence about shipping costs", score=0.5),
    ]

    async def snippet():
        packer = ContextPacker(
            config=PackerConfig(
                order="ascending",            # most-relevant closest to the user turn
                jaccard_threshold=0.85,       # collapse near-duplicates too
                detect_conflicts=True,
            ),
        )
        packed = await packer.pack(ctx, reranked, budget=8000)
        return packed

    packed = asyncio.run(snippet())
    assert [c.id for c in packed.chunks] == ["d", "c", "a"], "ascending: best last"
    reasons = {d.id: d.reason for d in packed.dropped}
    assert reasons == {"b": "exact_duplicate"}
    # With a lower threshold, "c" is a near duplicate of "a".
    near = ContextPacker(config=PackerConfig(jaccard_threshold=0.5)).pack_blocking(ctx, reranked, 8000)
    dropped = {d.id: d for d in near.dropped}
    assert dropped["c"].reason == "near_duplicate"
    assert dropped["c"].details["of"] == "a"


def test_packer_config_defaults_are_the_seeds():
    from rag_packer import PackerConfig

    config = PackerConfig()
    assert (config.order, config.jaccard_threshold, config.detect_conflicts) == ("lost_in_middle", None, True)


def test_custom_tokenizer_snippet_runs_as_written(ctx):
    from rag_chunker.tokens import TiktokenCounter
    from rag_packer import ContextPacker

    packer = ContextPacker(
        token_counter=TiktokenCounter("o200k_base"),   # GPT-4o family
    )
    packed = packer.pack_blocking(ctx, reranked(ctx), 4000)
    assert packed.tokenizer == "tiktoken:o200k_base"
    assert packed.tokens_used == sum(TiktokenCounter("o200k_base").count(c.content) for c in packed.chunks)


def test_repacker_snippet_signature_and_defaults():
    from rag_packer import Repacker, content_length

    signature = inspect.signature(Repacker)
    assert [(p.name, p.default) for p in signature.parameters.values()] == [
        ("method", "forward"),
        ("mode", "chunk"),
        ("delimiter", "\n\n"),
        ("size_func", content_length),
        ("size_limit", None),
        ("context_config", None),
        ("pack", "truncate"),
        ("batch_size", None),
    ]
    repacker = Repacker()
    for attribute in ("method", "mode", "pack", "delimiter", "size_func", "size_limit", "batch_size", "strategy", "context_config"):
        assert hasattr(repacker, attribute), attribute


def test_repacker_return_shapes_follow_mode_and_batch_size(ctx):
    from rag_packer import ContextConfig, Repacker

    chunks = [Chunk(f"c{i}", "d", ctx.tenant_id, text) for i, text in enumerate(["alpha", "beta", "gamma", "delta"])]

    async def shapes():
        return (
            await Repacker().repack(chunks),
            await Repacker(batch_size=2).repack(chunks),
            await Repacker(mode="context").repack(chunks),
            await Repacker(mode="context", batch_size=2).repack(chunks),
            await Repacker(mode="context", size_limit=10, batch_size="auto", context_config=ContextConfig("[{id}] {content}")).repack(chunks),
        )

    one, batches, text, texts, auto = asyncio.run(shapes())
    assert one == chunks and one[0] is chunks[0]
    assert batches == [chunks[:2], chunks[2:]]
    assert text == "alpha\n\nbeta\n\ngamma\n\ndelta"
    assert texts == ["alpha\n\nbeta", "gamma\n\ndelta"]
    assert auto == ["[c0] alpha\n\n[c1] beta", "[c2] gamma\n\n[c3] delta"]
    # Reassigning pack takes effect on the next call.
    gap = [Chunk(i, "d", ctx.tenant_id, text) for i, text in [("a", "alpha"), ("long", "a longer one"), ("g", "gamma")]]
    repacker = Repacker(size_limit=10, method="reverse")
    assert [c.id for c in repacker.repack_blocking(gap)] == ["a"], "truncate: the longest prefix that fits"
    repacker.pack = "greedy"
    assert [c.id for c in repacker.repack_blocking(gap)] == ["g", "a"], "greedy fills the gap, then reverse"


def test_every_symbol_of_the_seeds_exists():
    import rag_chunker
    import rag_chunker.tokens
    import rag_core.errors
    import rag_core.spi.chunker
    import rag_packer
    import rag_packer.budget
    import rag_packer.conflicts
    import rag_packer.dedup
    import rag_packer.pipeline
    import rag_packer.reorder
    import rag_packer.types

    for module, names in {
        rag_core: ["RequestContext", "Chunk", "PackedContext", "ConflictAnnotation", "DocumentId", "CorpusId", "ParsedDocument", "BlockType"],
        rag_core.errors: ["ChunkError", "PackerError", "RetrievalError"],
        rag_core.spi.chunker: ["Chunker"],
        rag_chunker: ["HeadingAwareChunker", "TiktokenCounter", "TokenCounter", "ocr_result_to_parsed_document"],
        rag_chunker.tokens: ["TiktokenCounter"],
        rag_packer: ["ContextPacker", "PackerConfig", "Repacker"],
        rag_packer.pipeline: ["ContextPacker"],
        rag_packer.types: ["PackerConfig"],
        rag_packer.dedup: ["hash_dedup", "jaccard_dedup"],
        rag_packer.reorder: ["lost_in_middle_order", "descending_order", "ascending_order"],
        rag_packer.budget: ["fit_to_budget"],
        rag_packer.conflicts: ["detect_conflicts"],
    }.items():
        for name in names:
            assert hasattr(module, name), f"{module.__name__}.{name}"
    assert issubclass(rag_core.errors.PackerError, rag_core.errors.RetrievalError)
    assert issubclass(rag_core.PackerError, rag_core.RetrievalError)


def test_heading_aware_chunker_is_a_chunker():
    from rag_chunker import HeadingAwareChunker
    from rag_core.spi.chunker import Chunker

    assert isinstance(HeadingAwareChunker(), Chunker)
    assert asyncio.run(HeadingAwareChunker().health()) == "healthy"


def test_packer_shingle_default_is_the_librarys():
    from rag_packer import PackerConfig

    signature = inspect.signature(PackerConfig)
    assert signature.parameters["shingle_size"].default == 5
    assert PackerConfig().shingle_size == 5
