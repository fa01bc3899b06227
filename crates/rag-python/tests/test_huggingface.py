"""HuggingFaceCounter on a tokenizer.json that a registry package ships, cross-checked against
Hugging Face's own Python `tokenizers`.

The file is the Claude tokenizer the `anthropic` SDK shipped up to version 0.34 (a byte-level
BPE with an NFKC normalizer, the scheme of GPT-2, Llama 3 and Qwen). The test environment installs
that one version without its dependencies, for this file only; nothing is fetched from a model
hub.
"""

from __future__ import annotations

import importlib.util
import pickle
from pathlib import Path

import pytest

from rag_chunker import HeadingAwareChunker, HuggingFaceCounter, TokenCounter
from rag_core import TokenizerError
from rag_core import Chunk
from rag_packer import ContextPacker

from conftest import NODEJS_DOCS

tokenizers = pytest.importorskip("tokenizers")


@pytest.fixture(scope="module")
def tokenizer_json() -> Path:
    spec = importlib.util.find_spec("anthropic")
    if spec is None or spec.origin is None:
        pytest.fail("the test environment needs anthropic==0.34.2 (pip install --no-deps) for its tokenizer.json")
    path = Path(spec.origin).with_name("tokenizer.json")
    assert path.is_file(), f"{path} is missing: anthropic 0.34.2 ships it"
    return path


@pytest.fixture(scope="module")
def reference(tokenizer_json):
    tokenizer = tokenizers.Tokenizer.from_file(str(tokenizer_json))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return lambda text: len(tokenizer.encode(text, add_special_tokens=False).ids)


def test_counts_equal_the_python_tokenizers_package(tokenizer_json, reference):
    counter = HuggingFaceCounter.from_file(tokenizer_json)
    assert isinstance(counter, TokenCounter)
    assert counter.name().startswith("hf:tokenizer.json@")
    texts = ["", "hello world", "ﬁne ligatures and ① circled digits (NFKC)", "日本語のテキスト 🎉\r\n\ttabs"]
    texts += [p.read_text(encoding="utf-8")[:20000] for p in sorted(NODEJS_DOCS.glob("*.md"))[:15]]
    for text in texts:
        assert counter.count(text) == reference(text), text[:40]


def test_chunks_counted_with_it_have_exact_counts(ctx, tokenizer_json, reference):
    counter = HuggingFaceCounter.from_file(tokenizer_json)
    text = (NODEJS_DOCS / "url.md").read_text(encoding="utf-8")
    chunks = HeadingAwareChunker(256, 32, token_counter=counter).chunk_text_blocking(ctx, text, source_uri="url.md")
    assert len(chunks) > 20
    for chunk in chunks:
        assert chunk.token_count == reference(chunk.content) <= 256
        assert chunk.tokenizer == counter.name()
    packed = ContextPacker(token_counter=counter).pack_blocking(
        ctx, [Chunk("a", "d", ctx.tenant_id, "Rerankers score pairs.", score=1.0)], 100
    )
    assert packed.tokens_used == reference("Rerankers score pairs.")
    assert pickle.loads(pickle.dumps(counter)).name() == counter.name()


def test_a_file_that_is_not_a_tokenizer_is_a_tokenizer_error(tmp_path):
    with pytest.raises(TokenizerError, match="cannot read"):
        HuggingFaceCounter.from_file(tmp_path / "missing.json")
    bad = tmp_path / "tokenizer.json"
    bad.write_text("{}", encoding="utf-8")
    with pytest.raises(TokenizerError, match="not a Hugging Face tokenizer.json") as caught:
        HuggingFaceCounter.from_file(bad)
    assert caught.value.tokenizer == str(bad)
