"""Every async call, awaited to its end or cancelled while it works, lets the interpreter exit
cleanly: each case runs in fresh interpreters (one call, then the script ends) that must all exit
with status 0.

An interpreter that ends while engine work is under way is the case that matters: a thread that
is not Python's touching Python while the interpreter finalizes aborts the process (SIGABRT, exit
status 134), and only at exit, so only a fresh interpreter per run shows it. The work now runs on
the event loop's executor threads, which Python joins before it finalizes, and a cancelled call
stops at its next token count. Runs go two at a time, one per core; each is a tiny script.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from typing import Dict, List, Tuple

RUNS_PER_CASE = 17
"""Fresh interpreters per case: 12 cases, 204 interpreters in all."""

PRELUDE = textwrap.dedent(
    """
    import asyncio, time
    from rag_core import Chunk, RequestContext
    from rag_chunker import HeadingAwareChunker, parse_document
    from rag_packer import ContextPacker, Repacker

    class Words:
        # A Python counter: the calls that reach back into Python while the engine works, and
        # no tokenizer table to build, which keeps each run short.
        def __init__(self, seconds=0.0):
            self.seconds = seconds
        def count(self, text):
            # Slow when asked, so that a call is still counting when it is cancelled.
            time.sleep(self.seconds)
            return len(text.split())
        def name(self):
            return "words"

    ctx = RequestContext("acme")
    TEXT = "# Guide\\n\\n" + "One short sentence of the guide. " * 300
    CHUNKS = [Chunk(f"c{i}", "d", "acme", f"chunk {i} says something else " * 8) for i in range(150)]
    """
)

CALLS: Dict[str, str] = {
    "chunk_text": "HeadingAwareChunker(20, 4, COUNTER).chunk_text(ctx, TEXT, source_uri='guide.md')",
    "chunk": "HeadingAwareChunker(20, 4, COUNTER).chunk(ctx, parse_document(ctx, TEXT, source_uri='guide.md'))",
    "health": "HeadingAwareChunker(20, 4, COUNTER).health()",
    "pack": "ContextPacker(token_counter=COUNTER).pack(ctx, CHUNKS, budget=300)",
    "pack_context": "ContextPacker(token_counter=COUNTER).pack_context(ctx, CHUNKS, budget=300)",
    "repack": "Repacker(size_limit=2000).repack(CHUNKS)",
}

AWAITED = """
async def main():
    result = await {call}
    print("done", type(result).__name__)

COUNTER = Words()
asyncio.run(main())
"""

CANCELLED = """
async def main():
    try:
        await asyncio.wait_for({call}, {timeout})
    except asyncio.TimeoutError:
        print("cancelled")

COUNTER = Words({seconds})
asyncio.run(main())
"""


def script(call: str, cancelled: bool) -> str:
    if not cancelled:
        return PRELUDE + AWAITED.format(call=CALLS[call])
    # The health probe is one count, so that count is the slow one; the Repacker counts
    # nothing, so its call is cancelled before it can finish.
    seconds = 0.15 if call == "health" else 0.002
    timeout = 0 if call == "repack" else 0.05
    return PRELUDE + CANCELLED.format(call=CALLS[call], timeout=timeout, seconds=seconds)


def run(case: Tuple[str, bool]) -> subprocess.CompletedProcess:
    call, cancelled = case
    return subprocess.run(
        [sys.executable, "-c", script(call, cancelled)], capture_output=True, text=True, timeout=120
    )


def test_every_async_call_exits_cleanly_in_fresh_interpreters():
    cases: List[Tuple[str, bool]] = [(call, cancelled) for call in CALLS for cancelled in (False, True)]
    runs = [case for case in cases for _ in range(RUNS_PER_CASE)]
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(run, runs))
    failures = [(case, r) for case, r in zip(runs, results) if r.returncode != 0]
    assert not failures, (
        f"{len(failures)} of {len(runs)} interpreters failed; the first, {failures[0][0]}, exited with "
        f"{failures[0][1].returncode}: {failures[0][1].stderr[-2000:]}"
    )
    for (call, cancelled), result in zip(runs, results):
        expected = "cancelled" if cancelled else "done"
        assert result.stdout.split()[:1] == [expected], (call, cancelled, result.stdout, result.stderr)
        assert result.stderr == "", (call, cancelled, result.stderr)
