"""The GIL is released while Rust works: two Python threads chunking two documents run in
parallel.

Measured as a ratio within one run, never as an absolute time: each thread chunks its document
over and over and logs when each call starts and ends. If a call held the GIL, the other thread
could not be inside a call at the same time (it needs the GIL to enter or leave one), so the
calls of the two threads would never overlap and the two documents would take twice as long as
one. The assertion is on that overlap, which does not depend on how busy the machine is; the
wall-time speed-up, which does, is reported (``pytest -s``) beside it.
"""

from __future__ import annotations

import threading
import time
from typing import List, Tuple

from rag_chunker import HeadingAwareChunker
from rag_core import RequestContext

from conftest import NODEJS_DOCS

Interval = Tuple[float, float]


def overlap_ratio(a: List[Interval], b: List[Interval]) -> float:
    """The share of the time `a`'s calls ran during which a call of `b` ran too."""
    total = sum(end - start for start, end in a)
    shared = sum(max(0.0, min(end_a, end_b) - max(start_a, start_b)) for start_a, end_a in a for start_b, end_b in b)
    return shared / total


def test_two_threads_chunk_two_documents_in_parallel():
    ctx = RequestContext("acme")
    chunker = HeadingAwareChunker()
    documents = [(NODEJS_DOCS / name).read_text(encoding="utf-8") for name in ("fs.md", "http.md")]
    calls: List[List[Interval]] = [[], []]
    cpu = [0.0, 0.0]
    stop = threading.Event()

    def chunk_over_and_over(i: int) -> None:
        cpu_start = time.thread_time()
        while not stop.is_set():
            start = time.perf_counter()
            chunker.chunk_text_blocking(ctx, documents[i], source_uri=f"{i}.md")
            calls[i].append((start, time.perf_counter()))
        cpu[i] = time.thread_time() - cpu_start

    threads = [threading.Thread(target=chunk_over_and_over, args=(i,)) for i in range(2)]
    began = time.perf_counter()
    for thread in threads:
        thread.start()
    while min(len(c) for c in calls) < 4:
        time.sleep(0.01)
    stop.set()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - began

    ratio = overlap_ratio(calls[0], calls[1])
    print(
        f"overlap {ratio:.2f}; CPU seconds of the two threads over wall seconds {sum(cpu) / wall:.2f} "
        "(2.0 on two free cores, at most 1.0 if the GIL serialised them)"
    )
    # Held GIL: ~0.0. Released: ~1.0, whatever else the machine runs.
    assert ratio > 0.5, f"the calls of two threads overlapped for only {ratio:.0%} of the time"
