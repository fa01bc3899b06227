"""The peers' chunks of a directory of source code, as JSON Lines `code-quality` reads.

    code_peers.py --peer text-splitter|langchain --max-tokens 512 DIR > chunks.jsonl

(tiktoken reads cl100k_base from `TIKTOKEN_CACHE_DIR` when set: offline, point it at a copy of
tiktoken-rs's `assets/cl100k_base.tiktoken` named by the SHA-1 of its download URL.)

`text-splitter` is text-splitter's `CodeSplitter` (PyPI `semantic-text-splitter`, with the
tree-sitter grammar wheels); `langchain` is LangChain's `RecursiveCharacterTextSplitter` with the
language's separators (`from_language`), its length measured in cl100k_base tokens
(`from_tiktoken_encoder`). Both count with tiktoken's cl100k_base at the same budget as ragctl, and
neither overlaps. Each chunk is located in its file (both return slices of it, the first from its
character offset, the second from `add_start_index`), and written with its byte span.
"""

import argparse
import json
import os
import sys

EXTENSIONS = {
    ".py": "python",
    ".rs": "rust",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".hpp": "cpp",
}


def text_splitter(language, max_tokens):
    import importlib

    from semantic_text_splitter import CodeSplitter

    grammar = importlib.import_module(f"tree_sitter_{language}").language()
    splitter = CodeSplitter.from_tiktoken_model(grammar, "gpt-3.5-turbo", max_tokens)

    def split(text):
        for char_offset, chunk in splitter.chunk_indices(text):
            yield char_offset, chunk

    return split


def langchain(language, max_tokens):
    from langchain_text_splitters import Language, RecursiveCharacterTextSplitter

    names = {"python": Language.PYTHON, "rust": Language.RUST, "javascript": Language.JS,
             "c": Language.C, "cpp": Language.CPP}
    splitter = RecursiveCharacterTextSplitter.from_tiktoken_encoder(
        encoding_name="cl100k_base",
        chunk_size=max_tokens,
        chunk_overlap=0,
        separators=RecursiveCharacterTextSplitter.get_separators_for_language(names[language]),
        add_start_index=True,
    )

    def split(text):
        for document in splitter.create_documents([text]):
            yield document.metadata["start_index"], document.page_content

    return split


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--peer", choices=["text-splitter", "langchain"], required=True)
    parser.add_argument("--max-tokens", type=int, default=512)
    parser.add_argument("root")
    args = parser.parse_args()
    make = text_splitter if args.peer == "text-splitter" else langchain
    splitters = {}
    for directory, dirs, files in sorted(os.walk(args.root)):
        dirs.sort()
        for name in sorted(files):
            language = EXTENSIONS.get(os.path.splitext(name)[1])
            if language is None:
                continue
            path = os.path.join(directory, name)
            try:
                with open(path, encoding="utf-8", newline="") as f:
                    text = f.read()
            except UnicodeDecodeError:
                continue
            if language not in splitters:
                splitters[language] = make(language, args.max_tokens)
            document_id = "./" + os.path.relpath(path, args.root)
            for char_offset, chunk in splitters[language](text):
                if text[char_offset:char_offset + len(chunk)] != chunk:
                    found = text.find(chunk)
                    if found < 0:
                        print(f"{path}: a chunk is not a slice of the file", file=sys.stderr)
                        continue
                    char_offset = found
                start = len(text[:char_offset].encode("utf-8"))
                end = start + len(chunk.encode("utf-8"))
                print(json.dumps({"document_id": document_id, "span": {"start": start, "end": end}}))


if __name__ == "__main__":
    main()
