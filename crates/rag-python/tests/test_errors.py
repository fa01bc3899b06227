"""Errors are Python exceptions of the right class, with the Rust message and its facts."""

from __future__ import annotations

import pytest

from rag_chunker import HeadingAwareChunker, OCRResult, parse_document
from rag_core import (
    Block,
    Chunk,
    ChunkError,
    ChunkerConfigError,
    Document,
    GenerationValueError,
    PackerError,
    ParseError,
    ParsedDocument,
    RagError,
    RepackError,
    RetrievalError,
    TokenizerError,
)
from rag_packer import ContextConfig, ContextPacker, PackerConfig, Repacker


def test_hierarchy():
    assert issubclass(PackerError, RetrievalError) and issubclass(RepackError, RetrievalError)
    assert issubclass(ChunkerConfigError, ChunkError) and issubclass(ChunkerConfigError, ValueError)
    assert issubclass(GenerationValueError, RepackError) and issubclass(GenerationValueError, ValueError)
    for cls in (ParseError, ChunkError, TokenizerError, RetrievalError):
        assert issubclass(cls, RagError)


def test_the_exception_classes_are_looked_up_once(ctx, monkeypatch):
    import rag_core.errors

    ok = Chunk("a", "d", ctx.tenant_id, "text", score=0.5)
    with pytest.raises(PackerError):
        ContextPacker().pack_blocking(ctx, [ok], 0)

    class Impostor(Exception):
        pass

    # The native module keeps the class it found the first time, not the module's attribute.
    monkeypatch.setattr(rag_core.errors, "PackerError", Impostor)
    with pytest.raises(PackerError) as caught:
        ContextPacker().pack_blocking(ctx, [ok], 0)
    assert type(caught.value) is PackerError and not isinstance(caught.value, Impostor)


def test_invalid_utf8_names_the_file_and_offset(ctx):
    with pytest.raises(ParseError) as caught:
        parse_document(ctx, b"# Title\n\nok \xff bad", source_uri="docs/a.md")
    err = caught.value
    assert str(err) == "docs/a.md: invalid UTF-8 at byte offset 12"
    assert (err.source_uri, err.offset) == ("docs/a.md", 12)


def test_unsupported_type_and_malformed_ocr(ctx):
    with pytest.raises(ParseError, match='deck.pptx: unsupported file type "pptx"; supported: markdown'):
        parse_document(ctx, b"PK\x03\x04", source_uri="deck.pptx")
    # A PDF is a supported type now: a file that only starts like one is named as damaged.
    with pytest.raises(ParseError, match="report.pdf: "):
        parse_document(ctx, b"%PDF", source_uri="report.pdf")
    with pytest.raises(ParseError) as caught:
        parse_document(ctx, b'{"engine": "e",\n "regions": [{"text": "x"}]}', source_uri="s.ocr.json")
    assert caught.value.line == 2 and str(caught.value).startswith("s.ocr.json:2:")
    with pytest.raises(ValueError, match="not an OCR result"):
        OCRResult.from_json("{}")


def test_chunker_configuration_errors_are_value_errors():
    with pytest.raises(ValueError, match=r"invalid chunker configuration: overlap_tokens \(64\) must be below max_tokens \(64\)"):
        HeadingAwareChunker(max_tokens=64, overlap_tokens=64)
    with pytest.raises(ChunkerConfigError, match="max_tokens must be at least 1"):
        HeadingAwareChunker(max_tokens=0, overlap_tokens=0)
    with pytest.raises(OverflowError):
        HeadingAwareChunker(max_tokens=-1)


def test_a_budget_below_one_character_names_it(ctx):
    with pytest.raises(ChunkerConfigError, match="the character '🎉' at byte 2 of document e.md alone has more tokens"):
        HeadingAwareChunker(1, 0).chunk_text_blocking(ctx, "# 🎉", source_uri="e.md")


def test_a_malformed_block_names_the_document_and_block(ctx):
    parsed = ParsedDocument(Document("doc", "short"), [Block("paragraph", (0, 99))])
    with pytest.raises(ChunkError) as caught:
        HeadingAwareChunker().chunk_blocking(ctx, parsed)
    err = caught.value
    assert str(err) == "document doc: block 0: span 0..99 is outside the 5-byte text"
    assert (err.document_id, err.block_index) == ("doc", 0)


def test_packer_errors_name_the_chunk(ctx):
    packer = ContextPacker()
    ok = Chunk("a", "d", ctx.tenant_id, "text", score=0.5)
    with pytest.raises(PackerError) as caught:
        packer.pack_blocking(ctx, [ok], 0)
    assert str(caught.value) == "token budget must be positive, got 0" and caught.value.budget == 0
    foreign = Chunk("x", "d", "globex", "text")
    with pytest.raises(PackerError) as caught:
        packer.pack_blocking(ctx, [ok, foreign], 100)
    assert str(caught.value) == "chunk x belongs to tenant globex, not to the request's tenant acme"
    assert caught.value.chunk_id == "x"
    remote = Chunk("r", "d", ctx.tenant_id, content_ref="s3://b/r.txt")
    with pytest.raises(PackerError, match="chunk r has a content_ref but no content and no token_count"):
        packer.pack_blocking(ctx, [remote], 100)
    with pytest.raises(PackerError, match="chunk id a appears more than once"):
        packer.pack_blocking(ctx, [ok, ok.copy()], 100)
    with pytest.raises(PackerError, match="non-finite score"):
        packer.pack_blocking(ctx, [Chunk("n", "d", ctx.tenant_id, "t", score=float("nan"))], 100)
    with pytest.raises(TypeError, match=r"chunks\[1\] is a str, not a rag_core.Chunk"):
        packer.pack_blocking(ctx, [ok, "text"], 100)


def test_packer_configuration_errors(ctx):
    with pytest.raises(PackerError, match="invalid packer configuration"):
        ContextPacker(config=PackerConfig(jaccard_threshold=1.5))
    with pytest.raises(ValueError, match='unknown order "middle"; expected lost_in_middle, descending'):
        PackerConfig(order="middle")
    # Setting a name later raises the same error, without a note added on the way.
    config = PackerConfig()
    for setting in ("order", "strategy", "objective"):
        with pytest.raises(ValueError, match=f'unknown {setting} "bogus"; expected ') as caught:
            setattr(config, setting, "bogus")
        assert getattr(caught.value, "__notes__", []) == []
    assert (config.order, config.strategy, config.objective) == ("lost_in_middle", "greedy", "auto")
    with pytest.raises(RepackError, match="invalid context template"):
        ContextPacker().pack_context_blocking(ctx, [], 100, template="{nope}")


def test_repacker_errors():
    with pytest.raises(GenerationValueError, match="list of rag_core.Chunk"):
        Repacker().repack_blocking(["not a chunk"])
    with pytest.raises(RepackError, match="size_limit must be at least 1"):
        Repacker(size_limit=0)
    with pytest.raises(RepackError, match="batch_size auto needs a size_limit"):
        Repacker(batch_size="auto")
    with pytest.raises(RepackError, match="a context template needs mode context"):
        Repacker(context_config=ContextConfig("{id}"))
    with pytest.raises(RepackError) as caught:
        Repacker(mode="context", size_limit=3, batch_size="auto").repack_blocking([Chunk("big", "d", "t", "abcdef")])
    assert caught.value.chunk_id == "big"


def test_chunk_validation():
    with pytest.raises(ValueError, match="chunk c has neither content nor content_ref"):
        Chunk("c", "d", "t")
    chunk = Chunk("c", "d", "t", "x")
    with pytest.raises(ValueError, match="neither content nor content_ref"):
        chunk.content = None
    assert chunk.content == "x", "a failed assignment leaves the chunk as it was"
    with pytest.raises(ValueError, match='unknown trust level "secret"'):
        chunk.trust = "secret"
    with pytest.raises(TypeError, match=r"chunk c: metadata\['when'\]: a set is not JSON"):
        chunk.metadata = {"when": {1, 2}}
    chunk.metadata["bad"] = object()
    with pytest.raises(TypeError, match=r"chunk c: metadata\['bad'\]: a object is not JSON"):
        chunk.to_json()
