"""Corpus-scale chunking with Ray Data: chunking is a pure map over documents.

Chunk a directory (local, or any filesystem pyarrow reads: ``s3://``, ``gs://``, ...) into
Parquet or JSON Lines on a Ray cluster::

    from ragctl.integrations.ray import chunk_directory

    chunk_directory("s3://bucket/docs", "s3://bucket/chunks", format="parquet",
                    max_tokens=512, overlap_tokens=64)

or compose the steps with your own pipeline::

    import ray
    from ragctl.integrations.ray import chunk_batch

    ds = ray.data.read_binary_files("docs/", include_paths=True)
    chunks = ds.map_batches(chunk_batch, batch_format="pyarrow",
                            fn_kwargs={"root": "docs", "id_prefix": "docs"})

Each output row is one chunk with the chunk's fields as columns (see :data:`CHUNK_SCHEMA`) and
``json``, the chunk's JSON line, byte for byte what ``ragctl chunk --format jsonl`` writes for
the same file, id prefix and settings. Files are chunked as ``ragctl chunk`` chunks them, with
the same ids when ``id_prefix`` is the path ``ragctl`` was given. A local directory is walked
by ``ragctl chunk``'s own walk (``.gitignore`` honoured, hidden names skipped); on another
filesystem, where there is no ``.gitignore`` to read, hidden names and unsupported types are
skipped by the same rules. See ``docs/ray.md``.

Requires ``ray[data]`` and ``pyarrow`` (``pip install "ragctl[ray]"``).
"""

from __future__ import annotations

import os
import posixpath
from typing import Any, Dict, List, Literal, Optional, Tuple, Union

import pyarrow as pa
import pyarrow.fs as pafs
import ray.data
from ray.data.datasource import BlockBasedFileDatasink

from ragctl._native import (
    HeadingAwareChunker,
    ParseOptions,
    RequestContext,
    TiktokenCounter,
    detect_document_type,
    path_uri,
    supported_suffixes,
    walk_files,
)
from rag_core.errors import ParseError

__all__ = [
    "CHUNK_SCHEMA",
    "JsonLinesDatasink",
    "SUPPORTED_SUFFIXES",
    "chunk_batch",
    "chunk_directory",
    "read_chunks",
    "write_chunks",
]

SUPPORTED_SUFFIXES = supported_suffixes()
"""The file names the reader takes from a directory (case-insensitive), as ``ragctl chunk`` does."""

CHUNK_SCHEMA = pa.schema(
    [
        pa.field("id", pa.string(), nullable=False),
        pa.field("document_id", pa.string(), nullable=False),
        pa.field("tenant_id", pa.string(), nullable=False),
        pa.field("position", pa.int64(), nullable=False),
        pa.field("parent_id", pa.string()),
        pa.field("content", pa.string()),
        pa.field("token_count", pa.int64()),
        pa.field("span_start", pa.int64()),
        pa.field("span_end", pa.int64()),
        pa.field("source_uri", pa.string()),
        pa.field("kind", pa.string()),
        pa.field("level", pa.int64()),
        pa.field("heading_path", pa.list_(pa.string())),
        pa.field("json", pa.string(), nullable=False),
    ]
)
"""The columns of a chunk row."""


def _strip_scheme(path: str) -> str:
    scheme, sep, rest = path.partition("://")
    return rest if sep else path


def _document_id(path: str, root: str, id_prefix: str) -> str:
    """``id_prefix`` joined with ``path`` relative to ``root``, with ``/`` separators, written as
    ``ragctl chunk`` writes paths (:func:`rag_chunker.path_uri`)."""
    root = _strip_scheme(root).rstrip("/")
    path = _strip_scheme(path)
    if path.startswith(root + "/"):
        relative = path[len(root) + 1 :]
    elif path == root:
        relative = posixpath.basename(path)
    else:
        relative = path
    return path_uri(posixpath.join(id_prefix, relative) if id_prefix else relative)


def _is_supported(name: str) -> bool:
    """Whether ``ragctl chunk`` takes a file of this name from a directory it walks."""
    try:
        detect_document_type(name)
    except ParseError:
        return False
    return True


def _list_files(src: str) -> Tuple[pafs.FileSystem, str, List[str]]:
    """The filesystem of ``src``, ``src``'s path on it, and the files to chunk: ``src`` itself if
    it is a file, else the supported files under it, sorted: on the local filesystem as
    ``ragctl chunk`` walks it (``walk_files``: ``.gitignore`` honoured, hidden names skipped), on
    another one the supported files, hidden ones (a name starting with ``.``, or inside such a
    directory) left out.

    The listing is ours, not Ray's, because Ray's differs from ``ragctl chunk``'s: its
    extension filter cuts a name at ``?`` as if it were a URL's query (``What is RAG?.md`` has
    no extension to it), and its directory listing skips names that start with ``_``.
    """
    if "://" in src:
        filesystem, path = pafs.FileSystem.from_uri(src)
    else:
        filesystem, path = pafs.LocalFileSystem(), os.path.abspath(src)
    info = filesystem.get_file_info(path)
    if info.type == pafs.FileType.NotFound:
        raise FileNotFoundError(f"{src}: cannot read: no such file or directory")
    if info.type != pafs.FileType.Directory:
        return filesystem, path, [path]
    if isinstance(filesystem, pafs.LocalFileSystem):
        walked, _broken_links = walk_files([path])
        return filesystem, path, sorted(found for found, _name in walked)
    files = []
    for entry in filesystem.get_file_info(pafs.FileSelector(path, recursive=True)):
        if entry.type != pafs.FileType.File:
            continue
        relative = entry.path[len(path.rstrip("/")) + 1 :]
        if any(part.startswith(".") for part in relative.split("/")):
            continue
        if _is_supported(entry.base_name):
            files.append(entry.path)
    files.sort()
    return filesystem, path, files


def chunk_batch(
    batch: pa.Table,
    *,
    root: str,
    id_prefix: Optional[str] = None,
    max_tokens: int = 512,
    overlap_tokens: Optional[int] = None,
    encoding: Literal["cl100k_base", "o200k_base"] = "cl100k_base",
    tenant_id: str = "ragctl-local",
    corpus_id: str = "local",
    fold_headings: bool = False,
    parse_options: Optional[ParseOptions] = None,
) -> pa.Table:
    """The chunks of a batch of files (columns ``bytes`` and ``path``, as
    ``ray.data.read_binary_files(..., include_paths=True)`` gives them), one row per chunk.

    A file's id is ``id_prefix`` (default ``root`` as given) joined with its path relative to
    ``root``. A file that cannot be parsed or chunked raises, naming it. ``overlap_tokens``
    defaults to the library's rule (64, or ``max_tokens // 8`` when smaller), as ``ragctl chunk``;
    ``fold_headings=True`` is ``ragctl chunk --fold-headings`` (each heading folded into the first
    body chunk of its section, for vector stores); ``parse_options`` (:class:`rag_chunker.ParseOptions`)
    are ``ragctl chunk``'s parse flags (``--keep-chrome``, ...).
    """
    chunker = HeadingAwareChunker(
        max_tokens, overlap_tokens, TiktokenCounter(encoding), fold_headings=fold_headings
    )
    ctx = RequestContext(tenant_id)
    prefix = root.rstrip("/") if id_prefix is None else id_prefix
    rows: Dict[str, List[Any]] = {field.name: [] for field in CHUNK_SCHEMA}
    for data, path in zip(batch.column("bytes").to_pylist(), batch.column("path").to_pylist()):
        if path.lower().endswith(".json") and not path.lower().endswith(".ocr.json"):
            continue
        uri = _document_id(path, root, prefix)
        for chunk in chunker.chunk_text_blocking(
            ctx,
            data,
            source_uri=uri,
            document_type=detect_document_type(uri),
            corpus_id=corpus_id,
            options=parse_options,
        ):
            span = chunk.span
            metadata = chunk.metadata
            rows["id"].append(chunk.id)
            rows["document_id"].append(chunk.document_id)
            rows["tenant_id"].append(chunk.tenant_id)
            rows["position"].append(chunk.position)
            rows["parent_id"].append(chunk.parent_id)
            rows["content"].append(chunk.content)
            rows["token_count"].append(chunk.token_count)
            rows["span_start"].append(span.start if span is not None else None)
            rows["span_end"].append(span.end if span is not None else None)
            rows["source_uri"].append(chunk.source_uri)
            rows["kind"].append(metadata.get("kind"))
            rows["level"].append(metadata.get("level"))
            rows["heading_path"].append(chunk.heading_path)
            rows["json"].append(chunk.to_json())
    return pa.Table.from_pydict(rows, schema=CHUNK_SCHEMA)


def read_chunks(src: Union[str, List[str]], *, id_prefix: Optional[str] = None, **options: Any) -> ray.data.Dataset:
    """A lazy Ray ``Dataset`` of the chunks of ``src``: a file, or the supported files under a
    directory, as ``ragctl chunk`` walks it (see :func:`_list_files`: on the local filesystem
    ``.gitignore`` is honoured), or a list of them on one filesystem, each file once. Each is a local path or
    a URL a pyarrow filesystem reads (``s3://``, ``gs://``, ...).

    A file's id is ``id_prefix`` joined with its path relative to ``src`` (for a list, their
    common directory); by default ``id_prefix`` is ``src`` as given, which makes the ids those
    of ``ragctl chunk SRC``. ``options`` are those of :func:`chunk_batch` (``max_tokens``,
    ``overlap_tokens``, ``encoding``, ``tenant_id``, ``corpus_id``, ``fold_headings``,
    ``parse_options``)."""
    sources = [src] if isinstance(src, str) else list(src)
    if not sources:
        raise ValueError("no source to chunk")
    listed = [_list_files(source) for source in sources]
    filesystem = listed[0][0]
    if any(fs.type_name != filesystem.type_name for fs, _, _ in listed):
        raise ValueError("the sources are on different filesystems; read each one on its own")
    files = sorted({path for _, _, paths in listed for path in paths})
    if not files:
        raise ValueError(f"{', '.join(sources)}: no file to chunk (supported: {', '.join(SUPPORTED_SUFFIXES)})")
    root = posixpath.commonpath([path for _, path, _ in listed])
    given = src.rstrip("/") if isinstance(src, str) else posixpath.commonpath([_strip_scheme(s) for s in sources])
    if root in files:
        # One file: it is named as given, as `ragctl chunk FILE` names it.
        root, given = posixpath.dirname(root), posixpath.dirname(given)
    ds = ray.data.read_binary_files(files, include_paths=True, filesystem=filesystem)
    kwargs = dict(options, root=root, id_prefix=given if id_prefix is None else id_prefix)
    # Ray types the function as taking the batch alone; `fn_kwargs` passes the keyword-only rest.
    return ds.map_batches(chunk_batch, batch_format="pyarrow", fn_kwargs=kwargs)  # type: ignore[arg-type]


class JsonLinesDatasink(BlockBasedFileDatasink):
    """Writes the ``json`` column of chunk rows, one chunk per line (files ``*.jsonl``)."""

    def __init__(self, path: str) -> None:
        super().__init__(path, file_format="jsonl")

    def write_block_to_file(self, block: Any, file: Any) -> None:
        lines = block.to_arrow().column("json").to_pylist()
        file.write("".join(line + "\n" for line in lines).encode("utf-8"))


def write_chunks(ds: ray.data.Dataset, dst: str, *, format: str = "parquet") -> None:
    """Writes a dataset of chunk rows to ``dst``: ``parquet`` (every column) or ``jsonl`` (the
    ``json`` column, one chunk per line, as ``ragctl chunk --format jsonl`` writes it)."""
    if format == "parquet":
        ds.write_parquet(dst)
    elif format == "jsonl":
        ds.write_datasink(JsonLinesDatasink(dst))
    else:
        raise ValueError(f"unknown format {format!r}; expected parquet or jsonl")


def chunk_directory(src: str, dst: str, *, format: str = "parquet", id_prefix: Optional[str] = None, **options: Any) -> None:
    """Chunks every supported file under ``src`` into ``dst`` (:func:`read_chunks`, then
    :func:`write_chunks`), on the Ray cluster this process is connected to (a local one if none)."""
    write_chunks(read_chunks(src, id_prefix=id_prefix, **options), dst, format=format)
