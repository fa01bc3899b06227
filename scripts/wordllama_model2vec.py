#!/usr/bin/env python3
"""Turn the wordllama wheel into a model2vec folder that `ragctl --embedder DIR` loads.

usage: wordllama_model2vec.py WHEEL OUT_DIR

The wheel (PyPI `wordllama==0.4.0.post1`, MIT) ships a static token-embedding matrix,
`wordllama/weights/l2_supercat_256.safetensors` (one F16 tensor `embedding.weight`, 32000 x 256),
and the Llama 2 tokenizer as a Hugging Face tokenizer.json,
`wordllama/tokenizers/l2_supercat_tokenizer_config.json`. A model2vec folder names its matrix
`embeddings`, so this script rewrites the safetensors header with that key (the tensor's bytes are
copied unchanged), writes `config.json` and copies the tokenizer to `tokenizer.json`.

Licences: wordllama's code and weights are MIT (the wheel's metadata and LICENSE); its matrix is
derived from the token embeddings of Meta's Llama 2, which are under the Llama 2 Community License
(https://ai.meta.com/llama/license/). The folder is written under target/ and never committed.

Standard library only: nothing is downloaded here (`cargo xtask wordllama` fetches the wheel with
pip from PyPI first).
"""

import json
import pathlib
import shutil
import struct
import sys
import zipfile

WEIGHTS = "wordllama/weights/l2_supercat_256.safetensors"
TOKENIZER = "wordllama/tokenizers/l2_supercat_tokenizer_config.json"
SOURCE_KEY = "embedding.weight"


def header_of(data: bytes) -> dict:
    """The JSON header of the safetensors file `data`."""
    (length,) = struct.unpack("<Q", data[:8])
    return json.loads(data[8 : 8 + length])


def rekeyed(data: bytes) -> bytes:
    """The safetensors file `data` with its tensor `embedding.weight` renamed `embeddings`."""
    (length,) = struct.unpack("<Q", data[:8])
    header = header_of(data)
    if SOURCE_KEY not in header:
        sys.exit(f"{WEIGHTS}: no tensor {SOURCE_KEY!r} (found {sorted(header)})")
    tensor = header.pop(SOURCE_KEY)
    if tensor.get("dtype") != "F16" or len(tensor.get("shape", [])) != 2:
        sys.exit(f"{WEIGHTS}: {SOURCE_KEY} is {tensor}, expected a 2-D F16 matrix")
    header["embeddings"] = tensor
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data[8 + length :]


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit(__doc__.split("\n\n")[1])
    wheel, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel) as archive:
        weights = archive.read(WEIGHTS)
        tokenizer = archive.read(TOKENIZER)
        licences = [n for n in archive.namelist() if n.endswith(("LICENSE", "LICENSE.txt", "METADATA"))]
        for name in licences:
            (out / ("wordllama-" + pathlib.PurePosixPath(name).name)).write_bytes(archive.read(name))
    model = rekeyed(weights)
    (out / "model.safetensors").write_bytes(model)
    (out / "tokenizer.json").write_bytes(tokenizer)
    shape = header_of(model)
    config = {
        "model_type": "model2vec",
        "architectures": ["StaticModel"],
        "hidden_dim": shape["embeddings"]["shape"][1],
        "normalize": True,
        "source": f"wordllama wheel {wheel.name}: {WEIGHTS}, {TOKENIZER}",
        "license": "MIT (wordllama); derived from Llama 2 token embeddings, Llama 2 Community License",
    }
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    print(f"{out}: model.safetensors (embeddings {shape['embeddings']['shape']}), tokenizer.json, config.json")


if __name__ == "__main__":
    main()
