"""Chunking a real doc set from Python: ragctl against the Python splitters, CPU time and exactness.

Each library chunks every Markdown file of the corpus (default: the Node.js API reference in
eval/corpus/nodejs-api/docs, 3.2 MB) at 512 tokens with 64 tokens of overlap under cl100k_base,
one file at a time on one thread, the way each library's documentation sets it up:

- ragctl: ``HeadingAwareChunker(512, 64).chunk_text_blocking`` (parse and chunk in Rust);
- LangChain: ``MarkdownHeaderTextSplitter`` (h1-h6, headers kept) then
  ``RecursiveCharacterTextSplitter.from_tiktoken_encoder(cl100k_base, 512, 64)``;
- semantic-text-splitter (the text-splitter crate's wheel):
  ``MarkdownSplitter.from_tiktoken_model("gpt-4", 512, overlap=64)``;
- chonkie: ``RecursiveChunker(cl100k_base, 512)`` then ``OverlapRefinery(context_size=64)``.

CPU time is ``time.process_time()`` over all files, the best of ``--runs`` runs, after a warm-up
run that loads each library's tables. Exactness is checked on the chunks of the last run, with
tiktoken's own cl100k_base as the reference count:

- over budget: chunks with more than 512 tokens;
- spans: whether the library gives each chunk's offsets and ``text[start:end]`` is the chunk;
- counts: whether a token count the library reports is the chunk's real count;
- rewritten: chunks that are not a verbatim slice of the file (text changed or reordered);
- lost: non-whitespace characters of the files missing from the chunks, counted as multisets of
  characters per file (so overlap cannot hide a loss, and a rewritten chunk still counts for the
  characters it kept).

Install (the peers come from PyPI; llama-index-core for the offline tiktoken tables it ships):

    python3 -m venv target/bench-venv
    target/bench-venv/bin/pip install ./crates/rag-python "langchain-text-splitters==1.1.3" \\
        "semantic-text-splitter==0.33.1" "chonkie==1.7.0" "llama-index-core==0.14.25"
    target/bench-venv/bin/python bench/python_chunkers.py [--corpus DIR] [--runs N] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parents[1]
MAX_TOKENS, OVERLAP = 512, 64


def offline_tiktoken() -> None:
    """Points Python tiktoken at the cl100k_base table llama-index-core ships, so nothing is
    downloaded (LangChain and chonkie count with Python tiktoken)."""
    if "TIKTOKEN_CACHE_DIR" in os.environ:
        return
    import importlib.util

    spec = importlib.util.find_spec("llama_index.core")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("install llama-index-core for its offline tiktoken tables, or set TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = str(Path(list(spec.submodule_search_locations)[0]) / "_static" / "tiktoken_cache")


# A chunk as the checks see it: its text, its (start, end) character offsets if the library gave
# them, and the token count the library reported, if any.
Piece = Tuple[str, Optional[Tuple[int, int]], Optional[int]]


class Chunker:
    """A library set up once: ``chunk`` is what is timed (the library's own call, returning its
    own objects); ``pieces`` turns those into Pieces for the checks, outside the timing."""

    def __init__(self, chunk: Callable[[str, str], Any], pieces: Callable[[str, Any], List[Piece]]) -> None:
        self.chunk = chunk
        self.pieces = pieces


def ragctl_chunker() -> Chunker:
    from rag_chunker import HeadingAwareChunker
    from rag_core import RequestContext
    from ragctl.integrations import char_offsets

    chunker = HeadingAwareChunker(MAX_TOKENS, OVERLAP)
    ctx = RequestContext("bench")

    def chunk(name: str, text: str) -> Any:
        return chunker.chunk_text_blocking(ctx, text, source_uri=name)

    def pieces(text: str, chunks: Any) -> List[Piece]:
        to_chars = char_offsets(text)
        return [(c.content, (to_chars(c.span.start), to_chars(c.span.end)), c.token_count) for c in chunks]

    return Chunker(chunk, pieces)


def langchain_chunker() -> Chunker:
    from langchain_text_splitters import MarkdownHeaderTextSplitter, RecursiveCharacterTextSplitter

    headers = MarkdownHeaderTextSplitter([("#" * i, f"h{i}") for i in range(1, 7)], strip_headers=False)
    splitter = RecursiveCharacterTextSplitter.from_tiktoken_encoder(
        encoding_name="cl100k_base", chunk_size=MAX_TOKENS, chunk_overlap=OVERLAP
    )

    def chunk(name: str, text: str) -> Any:
        return splitter.split_documents(headers.split_text(text))

    return Chunker(chunk, lambda text, docs: [(d.page_content, None, None) for d in docs])


def semantic_text_splitter_chunker() -> Chunker:
    from semantic_text_splitter import MarkdownSplitter

    splitter = MarkdownSplitter.from_tiktoken_model("gpt-4", MAX_TOKENS, overlap=OVERLAP)

    def chunk(name: str, text: str) -> Any:
        return splitter.chunk_indices(text)

    return Chunker(chunk, lambda text, out: [(c, (start, start + len(c)), None) for start, c in out])


def chonkie_chunker() -> Chunker:
    import tiktoken
    from chonkie import OverlapRefinery, RecursiveChunker

    encoding = tiktoken.get_encoding("cl100k_base")
    chunker = RecursiveChunker(tokenizer=encoding, chunk_size=MAX_TOKENS)
    refinery = OverlapRefinery(tokenizer=encoding, context_size=OVERLAP)

    def chunk(name: str, text: str) -> Any:
        return refinery.refine(chunker.chunk(text))

    return Chunker(chunk, lambda text, out: [(c.text, (c.start_index, c.end_index), c.token_count) for c in out])


LIBRARIES: Dict[str, Callable[[], Chunker]] = {
    "ragctl": ragctl_chunker,
    "langchain_text_splitters": langchain_chunker,
    "semantic-text-splitter": semantic_text_splitter_chunker,
    "chonkie": chonkie_chunker,
}


def cpu_seconds(chunker: Chunker, files: List[Tuple[str, str]]) -> Tuple[float, List[Any]]:
    start = time.process_time()
    out = [chunker.chunk(name, text) for name, text in files]
    return time.process_time() - start, out


def non_whitespace(text: str) -> Counter:
    return Counter(c for c in text if not c.isspace())


def exactness(files: List[Tuple[str, str]], results: List[List[Piece]], count: Callable[[str], int]) -> Dict[str, object]:
    chunks = over = wrong_spans = no_spans = reported = wrong_counts = rewritten = 0
    lost = total = 0
    max_tokens = 0
    for (_, text), pieces in zip(files, results):
        source = non_whitespace(text)
        kept = Counter()
        for content, _, _ in pieces:
            kept.update(non_whitespace(content))
        total += sum(source.values())
        lost += sum((source - kept).values())
        cursor = 0
        for content, span, tokens in pieces:
            chunks += 1
            real = count(content)
            max_tokens = max(max_tokens, real)
            over += real > MAX_TOKENS
            if tokens is not None:
                reported += 1
                wrong_counts += tokens != real
            if span is None:
                no_spans += 1
            elif text[span[0] : span[1]] != content:
                wrong_spans += 1
            # A verbatim slice: its span if right, else found after the previous chunk's start.
            verbatim = span is not None and text[span[0] : span[1]] == content
            if not verbatim:
                start = text.find(content, cursor)
                verbatim = start >= 0
                cursor = max(cursor, start)
            else:
                cursor = span[0]
            rewritten += not verbatim
    return {
        "chunks": chunks,
        "max_tokens": max_tokens,
        "over_budget": over,
        "spans": "none" if no_spans == chunks else "exact" if wrong_spans == 0 and no_spans == 0 else f"{wrong_spans} wrong",
        "counts": "not reported" if reported == 0 else "exact" if wrong_counts == 0 else f"{wrong_counts} wrong",
        "rewritten": rewritten,
        "lost_percent": 100.0 * lost / total if total else 0.0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=ROOT / "eval" / "corpus" / "nodejs-api" / "docs")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", type=Path, help="also write the results as JSON")
    parser.add_argument("--only", nargs="*", choices=list(LIBRARIES), help="run only these libraries")
    args = parser.parse_args()
    offline_tiktoken()
    import tiktoken

    reference = tiktoken.get_encoding("cl100k_base")
    count = lambda text: len(reference.encode(text, disallowed_special=()))  # noqa: E731
    files = [(p.name, p.read_text(encoding="utf-8")) for p in sorted(args.corpus.rglob("*.md"))]
    size = sum(len(t.encode("utf-8")) for _, t in files)
    print(f"corpus: {args.corpus} ({len(files)} files, {size / 1e6:.1f} MB); {MAX_TOKENS} tokens, {OVERLAP} overlap, cl100k_base")

    rows = {}
    for name in args.only or LIBRARIES:
        chunker = LIBRARIES[name]()
        chunker.chunk(files[0][0], files[0][1])  # warm-up: tables, caches
        best, outputs = min((cpu_seconds(chunker, files) for _ in range(args.runs)), key=lambda r: r[0])
        results = [chunker.pieces(text, out) for (_, text), out in zip(files, outputs)]
        rows[name] = {"cpu_seconds": best, **exactness(files, results, count)}
        print(f"  {name}: {best:.2f} s", file=sys.stderr)

    base = rows.get("ragctl", {}).get("cpu_seconds")
    print()
    print("| library | CPU s | vs ragctl | chunks | max tokens | over 512 | spans | token counts | rewritten chunks | text lost |")
    print("|---|---:|---:|---:|---:|---:|---|---|---:|---:|")
    for name, r in rows.items():
        ratio = f"{r['cpu_seconds'] / base:.1f}x" if base else "-"
        print(
            f"| {name} | {r['cpu_seconds']:.2f} | {ratio} | {r['chunks']} | {r['max_tokens']} | {r['over_budget']} "
            f"| {r['spans']} | {r['counts']} | {r['rewritten']} | {r['lost_percent']:.2f}% |"
        )
    if args.json:
        args.json.write_text(json.dumps({"corpus_bytes": size, "files": len(files), "results": rows}, indent=2))


if __name__ == "__main__":
    main()
