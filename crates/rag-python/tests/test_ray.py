"""The Ray Data recipe on a local Ray cluster (2 CPUs): a directory chunked into JSON Lines and
Parquet equals `ragctl chunk DIR --format jsonl`, byte for byte."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")
pq = pytest.importorskip("pyarrow.parquet")

from rag_core import Chunk  # noqa: E402
from ragctl.integrations.ray import chunk_directory  # noqa: E402

FILES = {
    "guide.md": "# Guide\n\nIntro.\n\n## Install\n\n" + "Run the installer, then check it. " * 120 + "\n",
    "nested/api.markdown": "# API\n\n| name | kind |\n|---|---|\n" + "".join(f"| f{i} | fn |\n" for i in range(60)),
    "nested/notes.txt": "Plain text notes.\n\nSecond paragraph with ünïcödé and 日本語.\n",
    "nested/deeper/scan.ocr.json": '{"engine": "e", "regions": [{"text": "INVOICE 42", "confidence": 0.9, "bbox": [0, 0, 1, 1]}]}',
    "ignored.json": '{"not": "a document"}',
    # Names Ray's own reader drops or renames: `?` (its extension filter cuts the name there),
    # `%` (ragctl writes it `%25` in ids), a leading `_` (its listing skips it).
    "What is RAG?.md": "# What is RAG?\n\nRetrieval, then generation.\n",
    "100%.md": "# Complete\n\nEvery chunk, 100% of them.\n",
    "_drafts/next.md": "# Next\n\nA draft.\n",
    # Hidden names, which ragctl skips when it walks a directory.
    ".cache/skipped.md": "# Skipped\n",
    "nested/.skipped.md": "# Skipped too\n",
}


@pytest.fixture(scope="module")
def local_ray():
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield
    ray.shutdown()


def ragctl_lines(ragctl_bin: str, cwd: Path, *args: str) -> list:
    out = subprocess.run(
        [ragctl_bin, "chunk", *args, "corpus", "--format", "jsonl", "--quiet"],
        cwd=cwd, check=True, capture_output=True, text=True,
    )
    return out.stdout.splitlines()


def test_ray_chunks_equal_ragctl_byte_for_byte(tmp_path, local_ray, ragctl_bin):
    corpus = tmp_path / "corpus"
    for name, text in FILES.items():
        path = corpus / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    expected = ragctl_lines(ragctl_bin, tmp_path, "--max-tokens", "128", "--overlap-tokens", "16")
    assert len(expected) > 15

    options = dict(id_prefix="corpus", max_tokens=128, overlap_tokens=16)
    chunk_directory(str(corpus), str(tmp_path / "jsonl"), format="jsonl", **options)
    chunk_directory(str(corpus), str(tmp_path / "parquet"), format="parquet", **options)

    lines = [line for f in sorted((tmp_path / "jsonl").glob("*.jsonl")) for line in f.read_text(encoding="utf-8").splitlines()]
    table = pq.read_table(tmp_path / "parquet")
    # Ray may write the files' chunks in any order; each chunk's line is ragctl's, and each
    # document's chunks are in ragctl's order once sorted by position.
    assert sorted(lines) == sorted(expected)
    assert sorted(table.column("json").to_pylist()) == sorted(expected)
    rows = sorted(table.to_pylist(), key=lambda r: (r["document_id"], r["position"]))
    by_document = sorted(expected, key=lambda line: (Chunk.from_json(line).document_id, expected.index(line)))
    assert [r["json"] for r in rows] == by_document
    guide = [r for r in rows if r["document_id"] == "corpus/guide.md"]
    assert guide[3]["heading_path"] == ["Guide", "Install"] and guide[3]["kind"] == "body"
    data = (corpus / "guide.md").read_bytes()
    assert all(data[r["span_start"] : r["span_end"]].decode() == r["content"] for r in guide)
    assert not any(r["document_id"].endswith("ignored.json") for r in rows)
    ids = {r["document_id"] for r in rows}
    assert {"corpus/What is RAG?.md", "corpus/100%25.md", "corpus/_drafts/next.md"} <= ids
    assert not any("skipped" in i for i in ids)


def test_ray_defaults_and_folded_headings_equal_ragctl(tmp_path, local_ray, ragctl_bin):
    # No overlap given: the library's default for the budget, as `ragctl chunk` (128 -> 16).
    corpus = tmp_path / "corpus"
    for name, text in FILES.items():
        path = corpus / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    expected = ragctl_lines(ragctl_bin, tmp_path, "--max-tokens", "128", "--fold-headings")
    chunk_directory(str(corpus), str(tmp_path / "jsonl"), format="jsonl",
                    id_prefix="corpus", max_tokens=128, fold_headings=True)
    lines = [line for f in sorted((tmp_path / "jsonl").glob("*.jsonl")) for line in f.read_text(encoding="utf-8").splitlines()]
    assert sorted(lines) == sorted(expected)
    assert not any(Chunk.from_json(line).metadata.get("kind") == "heading" and "\n" not in Chunk.from_json(line).content
                   and Chunk.from_json(line).document_id == "corpus/guide.md" for line in lines)
