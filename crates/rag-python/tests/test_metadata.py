"""Metadata, extra and block attributes are JSON values: a value that contains itself, or nests
deeper than 100 levels, is a ValueError naming where (as json.dumps raises one), in both
directions, never a crash of the interpreter."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from rag_chunker import HeadingAwareChunker
from rag_core import Block, Chunk
from rag_packer import ContextPacker

MAX_DEPTH = 100


def nested(levels: int) -> list:
    value: list = []
    for _ in range(levels - 1):
        value = [value]
    return value


def chunk(**fields) -> Chunk:
    return Chunk("c1", "d", "acme", "text", **fields)


def test_a_dict_that_contains_itself_is_a_value_error():
    m: dict = {}
    m["self"] = m
    with pytest.raises(ValueError, match=r"chunk c1: metadata\['self'\]: a circular reference"):
        chunk(metadata=m)
    with pytest.raises(ValueError, match=r"chunk c1: extra\['self'\]: a circular reference"):
        chunk(extra=m)
    with pytest.raises(ValueError, match="Circular reference"):
        json.dumps(m)  # the same exception class as the json module's


def test_a_cycle_added_in_place_is_caught_where_the_chunk_is_read(ctx):
    c = chunk(metadata={"page": 1})
    loop: list = []
    loop.append(loop)
    c.metadata["loop"] = loop
    with pytest.raises(ValueError, match=r"chunk c1: metadata\['loop'\]\[0\]: a circular reference"):
        c.to_json()
    with pytest.raises(ValueError, match="circular reference"):
        c.to_dict()
    with pytest.raises(ValueError, match="circular reference"):
        ContextPacker().pack_blocking(ctx, [c], 100)


def test_a_value_used_twice_is_not_a_cycle():
    shared = {"a": [1, 2]}
    c = chunk(metadata={"x": shared, "y": [shared, shared]})
    assert json.loads(c.to_json())["metadata"] == {"x": shared, "y": [shared, shared]}


@pytest.mark.parametrize("levels", [MAX_DEPTH + 1, 20_000])
def test_values_nested_too_deep_are_a_value_error(levels):
    # The metadata dict is the first level, the list the second.
    with pytest.raises(ValueError, match=r"nested deeper than 100 levels"):
        chunk(metadata={"deep": nested(levels - 1)})
    with pytest.raises(ValueError, match=r"block attributes\['deep'\]"):
        Block("paragraph", (0, 4), attributes={"deep": nested(levels - 1)})
    c = chunk()
    c.extra["deep"] = nested(levels - 1)
    with pytest.raises(ValueError, match=r"chunk c1: extra\['deep'\]"):
        c.to_json()


def test_the_deepest_value_allowed_round_trips():
    deepest = {"deep": nested(MAX_DEPTH - 1)}
    c = chunk(metadata=deepest)
    assert Chunk.from_json(c.to_json()).metadata == deepest
    assert Chunk.from_dict(c.to_dict()).metadata == deepest
    assert c.to_dict()["metadata"] == deepest


def test_json_nested_too_deep_for_python_is_a_value_error():
    # serde_json's parser takes up to 128 levels; Python's side stops at 100.
    line = json.loads(chunk().to_json())
    line["metadata"] = {"deep": nested(110)}
    c = Chunk.from_json(json.dumps(line))
    with pytest.raises(ValueError, match=r"chunk c1: metadata\['deep'\]"):
        c.metadata
    with pytest.raises(ValueError, match="not a chunk: recursion limit exceeded"):
        line["metadata"] = {"deep": nested(200)}
        Chunk.from_json(json.dumps(line))


def test_a_chunker_result_is_still_plain_json(ctx):
    chunks = HeadingAwareChunker().chunk_text_blocking(ctx, "# A\n\nB.\n", source_uri="a.md")
    assert chunks[1].metadata["heading_path"] == ["A"]


def test_deep_metadata_does_not_kill_the_interpreter():
    # The crash this guards against kills the process, so it runs in one of its own.
    probe = (
        "from rag_core import Chunk\n"
        "m = {}\nm['self'] = m\n"
        "deep = []\n"
        "for _ in range(20000): deep = [deep]\n"
        "for value in (m, {'deep': deep}):\n"
        "    try:\n"
        "        Chunk('c', 'd', 't', 'x', metadata=value)\n"
        "    except ValueError:\n"
        "        print('ValueError')\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert (out.returncode, out.stdout.split()) == (0, ["ValueError", "ValueError"]), out.stderr
