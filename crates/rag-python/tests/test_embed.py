"""Embedders from Python: StaticEmbedder on a tiny model folder written here, any object with
``embed`` as the packer's embedder, Chunk.embedding, and the LangChain and LlamaIndex adapters."""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path
from typing import Dict, List

import pytest

from rag_core import Chunk, PackerError
from rag_packer import ContextPacker, Embedder, StaticEmbedder

# Words by meaning: each group is one axis of the vectors (as rag_contract::embedding's tiny model).
GROUPS = [
    ["deprecated", "removed", "going", "away", "obsolete"],
    ["parameter", "argument", "option", "name", "flag"],
    ["file", "read", "write", "disk", "line"],
    ["stream", "pipe", "data", "flow", "chunks"],
]
FILLERS = ["the", "a", "is", "was", "in", "this", "by", "with", "and", "from", "2", "0", "3"]
DIMENSION = len(GROUPS) + 1


def vocabulary() -> Dict[str, List[float]]:
    words: Dict[str, List[float]] = {"[UNK]": [0.0] * DIMENSION}
    for axis, group in enumerate(GROUPS):
        for i, word in enumerate(group):
            vector = [0.0] * DIMENSION
            vector[axis] = 1.0
            vector[(axis + 1) % len(GROUPS)] = 0.05 * (i + 1)
            words[word] = vector
    for i, word in enumerate(FILLERS):
        vector = [0.0] * DIMENSION
        vector[-1] = 0.2 + 0.01 * i
        words[word] = vector
    return words


def write_model(folder: Path) -> Path:
    """A model2vec folder: a word-level tokenizer.json, config.json, an F32 model.safetensors."""
    folder.mkdir(parents=True, exist_ok=True)
    words = vocabulary()
    tokenizer = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {"id": 0, "content": "[UNK]", "single_word": False, "lstrip": False, "rstrip": False,
             "normalized": False, "special": True}
        ],
        "normalizer": {"type": "Lowercase"},
        "pre_tokenizer": {"type": "Whitespace"},
        "post_processor": None,
        "decoder": None,
        "model": {"type": "WordLevel", "vocab": {w: i for i, w in enumerate(words)}, "unk_token": "[UNK]"},
    }
    (folder / "tokenizer.json").write_text(json.dumps(tokenizer))
    (folder / "config.json").write_text(json.dumps({"normalize": True}))
    data = b"".join(struct.pack("<f", v) for vector in words.values() for v in vector)
    header = json.dumps({"embeddings": {"dtype": "F32", "shape": [len(words), DIMENSION], "data_offsets": [0, len(data)]}})
    header += " " * (-len(header) % 8)
    (folder / "model.safetensors").write_bytes(struct.pack("<Q", len(header)) + header.encode() + data)
    return folder


def cosine(a: List[float], b: List[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_model(tmp_path_factory.mktemp("tiny-model"))


def chunks() -> List[Chunk]:
    texts = {
        "answer": "The flag was deprecated in 2.0 and removed in 3.0.",
        "decoy": "With this option, read the file from disk line by line.",
        "other": "Streams pipe data in chunks.",
    }
    return [Chunk(id, "guide", "acme", text, token_count=10) for id, text in texts.items()]


def test_a_static_embedder_loads_a_folder_and_puts_near_meanings_near(model: Path) -> None:
    embedder = StaticEmbedder(model)
    assert embedder.dimension == DIMENSION and embedder.id.startswith("model2vec:")
    deprecated, removed, parameter = embedder.embed(["deprecated", "removed", "parameter"])
    assert cosine(deprecated, removed) > 0.95 > 0.1 > cosine(deprecated, parameter)
    assert isinstance(embedder, Embedder)


def test_a_missing_or_broken_folder_is_a_value_error_naming_the_file(tmp_path: Path, model: Path) -> None:
    with pytest.raises(ValueError, match="no such folder"):
        StaticEmbedder(tmp_path / "nowhere")
    broken = write_model(tmp_path / "broken")
    (broken / "config.json").write_text("{")
    with pytest.raises(ValueError, match=r"config\.json: not JSON"):
        StaticEmbedder(broken)


def test_pack_context_with_an_embedder_scores_by_bm25_and_cosine(ctx, model: Path) -> None:
    packer = ContextPacker()
    question = "is this option going away"
    bm25 = packer.pack_blocking(ctx, chunks(), 10, query=question)
    assert [c.id for c in bm25.chunks] == ["decoy"], "BM25 alone: the chunk with the question's word"
    hybrid = packer.pack_context_blocking(ctx, chunks(), 200, query=question, embedder=StaticEmbedder(model))
    assert hybrid.scoring is not None and hybrid.scoring.startswith("hybrid: 0.7 x bm25")
    assert len(hybrid.score_parts) == len(hybrid.chunks) == 3
    parts = dict(zip([c.id for c in hybrid.chunks], hybrid.score_parts))
    assert parts["answer"] is not None and parts["answer"][0] == 0.0 and parts["answer"][1] > 0.5
    assert parts["other"] is not None and parts["other"][1] < parts["answer"][1]


class Recording:
    """A Python embedder (any object with embed) that delegates to the static one and records
    each batch it is given."""

    def __init__(self, inner: StaticEmbedder) -> None:
        self.inner = inner
        self.batches: List[int] = []
        self.id = "recording"
        self.dimension = inner.dimension

    def embed(self, texts: List[str]) -> List[List[float]]:
        self.batches.append(len(texts))
        return self.inner.embed(texts)


def test_any_object_with_embed_is_an_embedder_called_in_batches(ctx, model: Path) -> None:
    recording = Recording(StaticEmbedder(model))
    question = "is this option going away"
    packed = ContextPacker().pack_blocking(ctx, chunks(), 30, query=question, embedder=recording)
    static = ContextPacker().pack_blocking(ctx, chunks(), 30, query=question, embedder=StaticEmbedder(model))
    assert [c.id for c in packed.chunks] == [c.id for c in static.chunks]
    assert packed.score_parts == static.score_parts
    assert sorted(recording.batches) == [1, 3], "the three chunks in one batch, the query in another"


class Failing:
    def embed(self, texts: List[str]) -> List[List[float]]:
        raise RuntimeError("the service is down")

    dimension = 4


def test_an_embedder_that_fails_is_a_packer_error(ctx) -> None:
    with pytest.raises(PackerError, match="the service is down"):
        ContextPacker().pack_blocking(ctx, chunks(), 30, query="going away", embedder=Failing())
    with pytest.raises(TypeError, match="embed"):
        ContextPacker().pack_blocking(ctx, chunks(), 30, query="going away", embedder=object())


def test_a_chunks_embedding_round_trips_and_is_set_with_its_model() -> None:
    chunk = Chunk("a", "d", "acme", "x")
    assert chunk.embedding is None and chunk.embedding_model is None
    chunk.set_embedding("model2vec:tiny", [0.1, -0.25])
    back = Chunk.from_json(chunk.to_json())
    assert back.embedding_model == "model2vec:tiny"
    assert back.embedding == pytest.approx([0.1, -0.25]) and back.embedding == chunk.embedding
    with pytest.raises(ValueError, match="needs both its model and its vector"):
        chunk.set_embedding(None, [1.0])
    with pytest.raises(ValueError, match="finite"):
        chunk.set_embedding("m", [float("nan")])
    chunk.set_embedding(None, None)
    assert chunk.embedding is None


def test_langchain_and_llamaindex_embeddings_give_the_static_vectors(model: Path) -> None:
    static = StaticEmbedder(model)
    texts = ["deprecated flag", "read a file"]
    pytest.importorskip("langchain_core")
    from ragctl.integrations.langchain import RagctlEmbeddings

    embeddings = RagctlEmbeddings(model)
    assert embeddings.embed_documents(texts) == static.embed(texts)
    assert embeddings.embed_query("going away") == static.embed(["going away"])[0]
    pytest.importorskip("llama_index.core")
    from ragctl.integrations.llamaindex import RagctlEmbedding

    embed_model = RagctlEmbedding(model)
    assert embed_model.model_name == static.id
    assert embed_model.get_text_embedding("deprecated flag") == static.embed(["deprecated flag"])[0]
    assert embed_model.get_query_embedding("going away") == static.embed(["going away"])[0]
