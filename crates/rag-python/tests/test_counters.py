"""Token counters from Python: any object with count(text) and name() is the engine's counter,
and its failures become the chunker's or packer's errors, with the original as their cause."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time

import pytest

from rag_chunker import HeadingAwareChunker, TiktokenCounter, TokenCounter
from rag_core import Chunk, ChunkError, PackerError, TokenizerError
from rag_packer import ContextPacker, Repacker, fit_to_budget

TEXT = "# Guide\n\n" + "Words and more words. " * 60 + "\n\n## Next\n\nShort.\n"


class Words:
    def __init__(self) -> None:
        self.calls = 0

    def count(self, text: str) -> int:
        self.calls += 1
        return len(text.split())

    def name(self) -> str:
        return "words"


class Failing:
    def __init__(self, after: int) -> None:
        self.left = after

    def count(self, text: str) -> int:
        if self.left == 0:
            raise ConnectionError("tokenizer service unavailable")
        self.left -= 1
        return len(text)

    def name(self) -> str:
        return "remote"


def test_a_python_counter_counts_every_chunk(ctx):
    words = Words()
    chunker = HeadingAwareChunker(50, 10, token_counter=words)
    assert chunker.token_counter is words
    chunks = chunker.chunk_text_blocking(ctx, TEXT, source_uri="g.md")
    assert words.calls > 0
    assert all(c.token_count == len(c.content.split()) <= 50 for c in chunks)
    assert asyncio.run(chunker.chunk_text(ctx, TEXT, source_uri="g.md")) == chunks


def test_an_exception_in_count_is_a_chunk_error_caused_by_it(ctx):
    chunker = HeadingAwareChunker(50, 10, token_counter=Failing(after=2))
    with pytest.raises(ChunkError) as caught:
        chunker.chunk_text_blocking(ctx, TEXT, source_uri="docs/g.md")
    err = caught.value
    assert "docs/g.md" in str(err)
    assert "tokenizer remote failed: ConnectionError: tokenizer service unavailable" in str(err)
    assert (err.document_id, err.tokenizer) == ("docs/g.md", "remote")
    assert isinstance(err.__cause__, ConnectionError)
    # The same through the async method.
    with pytest.raises(ChunkError) as caught:
        asyncio.run(HeadingAwareChunker(50, 10, token_counter=Failing(after=0)).chunk_text(ctx, TEXT, source_uri="g.md"))
    assert isinstance(caught.value.__cause__, ConnectionError)


def test_an_exception_in_count_is_a_packer_error_naming_the_chunk(ctx):
    chunks = [Chunk("a", "d", ctx.tenant_id, "counted here", score=1.0)]
    packer = ContextPacker(token_counter=Failing(after=0))
    with pytest.raises(PackerError) as caught:
        packer.pack_blocking(ctx, chunks, 100)
    assert "chunk a" in str(caught.value)
    assert (caught.value.chunk_id, caught.value.tokenizer) == ("a", "remote")
    assert isinstance(caught.value.__cause__, ConnectionError)
    # A chunk with a cached token_count is never counted.
    chunks[0].token_count = 3
    assert packer.pack_blocking(ctx, chunks, 100).tokens_used == 3


def test_a_count_that_is_not_a_non_negative_int_is_an_error(ctx):
    class Negative:
        def count(self, text):
            return -1

        def name(self):
            return "negative"

    with pytest.raises(ChunkError, match="count\\(\\) returned -1, not a non-negative int"):
        HeadingAwareChunker(token_counter=Negative()).chunk_text_blocking(ctx, TEXT, source_uri="g.md")


def test_an_object_without_count_or_name_is_refused():
    class NoName:
        def count(self, text):
            return 1

    with pytest.raises(TypeError, match="name\\(\\) -> str"):
        HeadingAwareChunker(token_counter=NoName())
    with pytest.raises(TypeError, match="count\\(text\\) -> int"):
        ContextPacker(token_counter=object())


def test_a_name_attribute_works_like_tiktoken_encodings(ctx):
    class EncodingLike:
        name = "cl100k-like"

        def count(self, text):
            return TiktokenCounter().count(text)

    packer = ContextPacker(token_counter=EncodingLike())
    packed = packer.pack_blocking(ctx, [Chunk("a", "d", ctx.tenant_id, "hello world")], 10)
    assert packed.tokenizer == "cl100k-like"
    assert packed.tokens_used == 2


def test_tiktoken_counter(ctx):
    counter = TiktokenCounter()
    assert isinstance(counter, TokenCounter)
    assert counter.count("") == 0
    assert counter.count("hello world") == 2
    assert counter.encode("hello world") == [15339, 1917]
    assert counter.count("<|endoftext|>") > 1, "special-token text counts as text"
    assert counter.splits_at_line_starts()
    with pytest.raises(TokenizerError, match="tokenizer p50k_base: unknown encoding; supported: cl100k_base, o200k_base"):
        TiktokenCounter("p50k_base")


def test_python_size_func_measures_for_the_repacker(ctx):
    chunks = [Chunk(f"c{i}", "d", ctx.tenant_id, "word " * n) for i, n in enumerate([3, 5, 2, 4])]
    seen = []

    def words(chunk):
        seen.append(chunk.id)
        return len(chunk.content.split())

    repacker = Repacker(size_func=words, size_limit=7, pack="greedy")
    assert [c.id for c in repacker.repack_blocking(chunks)] == ["c0", "c2"]
    assert seen == ["c0", "c1", "c2", "c3"], "each chunk measured once, in order"
    # Its exceptions reach the caller as they are.
    repacker.size_func = lambda chunk: 1 / 0
    with pytest.raises(ZeroDivisionError):
        repacker.repack_blocking(chunks)
    repacker.size_func = lambda chunk: "big"
    with pytest.raises(ValueError, match="size_func returned 'big' for chunk c0"):
        repacker.repack_blocking(chunks)


def test_fit_to_budget_with_a_python_counter(ctx):
    chunks = [Chunk(f"c{i}", "d", ctx.tenant_id, "w " * n) for i, n in enumerate([6, 5, 3])]
    assert [c.id for c in fit_to_budget(chunks, budget=9, token_counter=Words())] == ["c0", "c2"]
    with pytest.raises(PackerError) as caught:
        fit_to_budget(chunks, budget=9, token_counter=Failing(after=1))
    assert caught.value.chunk_id == "c1"
    assert isinstance(caught.value.__cause__, ConnectionError)


def test_health_is_the_engine_probe_of_the_counter():
    assert asyncio.run(HeadingAwareChunker(token_counter=Words()).health()) == "healthy"
    # A counter that raises on every call makes the chunker unhealthy, saying why.
    health = asyncio.run(HeadingAwareChunker(token_counter=Failing(after=0)).health())
    assert health == "unhealthy: tokenizer remote failed: ConnectionError: tokenizer service unavailable"


# A counter whose count() waits for another pack: the outer pack's counts and the inner pack's
# own parallel work must not wait for each other's threads. Run in a subprocess: on failure the
# interpreter deadlocks, and the timeout turns that into a failed test.
REENTRANT = """
import asyncio, threading, sys
from rag_core import Chunk, RequestContext
from rag_packer import ContextPacker

class Words:
    def count(self, text):
        return len(text.split())
    def name(self):
        return "words"

ctx = RequestContext("acme")
chunks = lambda n, tag: [Chunk(f"{tag}{i}", "d", "acme", f"{tag} {i} text " * 5) for i in range(n)]
inner = ContextPacker(token_counter=Words() if sys.argv[2] == "python" else None)

class Reentrant:
    def count(self, text):
        if sys.argv[1] == "asyncio":
            asyncio.run(inner.pack(ctx, chunks(120, "in"), budget=50))
        else:
            worker = threading.Thread(target=inner.pack_blocking, args=(ctx, chunks(120, "in"), 50))
            worker.start()
            worker.join()
        return len(text.split())
    def name(self):
        return "reentrant"

packed = ContextPacker(token_counter=Reentrant()).pack_blocking(ctx, chunks(100, "out"), budget=200)
print(len(packed.chunks))
"""


@pytest.mark.parametrize("waits", ["asyncio", "thread"])
@pytest.mark.parametrize("inner_counter", ["python", "builtin"])
def test_a_counter_that_waits_for_another_pack_finishes(waits, inner_counter):
    out = subprocess.run(
        [sys.executable, "-c", REENTRANT, waits, inner_counter], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert int(out.stdout) == 200 // 15  # a budget of 200 words, chunks of 15


def test_cancelling_an_await_stops_its_counting(ctx):
    class Slow:
        def __init__(self) -> None:
            self.calls = 0

        def count(self, text: str) -> int:
            self.calls += 1
            time.sleep(0.002)
            return len(text.split())

        def name(self) -> str:
            return "slow"

    slow = Slow()
    chunks = [Chunk(f"c{i}", "d", "acme", f"chunk {i} text " * 4) for i in range(500)]

    async def main() -> None:
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(ContextPacker(token_counter=slow).pack(ctx, chunks, budget=100), 0.05)

    asyncio.run(main())
    # asyncio.run waited for the executor: the work stopped at its next count, far from the 500
    # counts the pack would make, and nothing counts after the loop is gone.
    stopped_at = slow.calls
    assert 0 < stopped_at < 100
    time.sleep(0.05)
    assert slow.calls == stopped_at


def test_a_size_func_declared_as_characters_is_measured_in_rust_and_a_wrapper_is_called(ctx):
    import functools

    from rag_packer import content_length

    chunks = [Chunk(f"c{i}", "d", ctx.tenant_id, "x" * n) for i, n in enumerate([3, 5, 2])]

    class Characters:
        """Declares the characters the Rust engine counts; never called."""

        measured_in_rust = "chars"

        def __call__(self, chunk):
            raise AssertionError("measured in Rust, not called")

    repacker = Repacker(size_func=Characters(), size_limit=5, pack="greedy")
    assert [c.id for c in repacker.repack_blocking(chunks)] == ["c0", "c2"]

    @functools.wraps(content_length)
    def doubled(chunk):
        return 2 * content_length(chunk)

    repacker.size_func = doubled
    assert [c.id for c in repacker.repack_blocking(chunks)] == ["c2"], "the wrapper's own sizes: 6, 10, 4"
    repacker.size_func = content_length
    assert [c.id for c in repacker.repack_blocking(chunks)] == ["c0", "c2"]
    assert content_length(chunks[1]) == 5
