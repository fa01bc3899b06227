"""A LlamaIndex ``NodeParser`` on ragctl's heading-aware chunker.

Each node is one chunk: its text exactly a slice of the document (``start_char_idx`` and
``end_char_idx`` exact), with ``heading_path``, ``span`` (UTF-8 byte offsets) and ``token_count``
in its metadata. Headings fold into the first body node of their section by default
(``fold_headings``), so a node is a heading with its text, not a heading alone; with
``fold_headings=False`` each heading is a node of its own and a body node has a ``PARENT``
relationship to the node of its enclosing heading. What LlamaIndex embeds and sends to the LLM,
the node's metadata text and its text (``node.get_content(MetadataMode.EMBED)`` and
``MetadataMode.LLM``), is within ``max_tokens`` under the real tokenizer: the bookkeeping keys are
left out of both, and the chunks are cut smaller by what the remaining metadata takes::

    from ragctl.integrations.llamaindex import RagctlNodeParser

    nodes = RagctlNodeParser(max_tokens=512, overlap_tokens=64).get_nodes_from_documents(documents)

``RagctlReader`` reads files of every type ragctl reads (Markdown, text, HTML, DOCX, PDF, OCR JSON),
alone or as a ``SimpleDirectoryReader`` file extractor, into one ``Document`` per chunk, each
within the same budget and with ``provenance`` (where the chunk is in the original file) in its
metadata::

    from llama_index.core import SimpleDirectoryReader
    from ragctl.integrations.llamaindex import RagctlReader

    reader = RagctlReader(max_tokens=512)
    docs = SimpleDirectoryReader("docs/", file_extractor={".html": reader, ".docx": reader}).load_data()

``RagctlEmbedding`` is a LlamaIndex embedding model on ragctl's static embedder (a model2vec
folder; nothing is downloaded)::

    from ragctl.integrations.llamaindex import RagctlEmbedding

    embed_model = RagctlEmbedding(path="target/models/wordllama-l2-256")
    vector = embed_model.get_text_embedding("Duplicates are dropped before selection.")

Requires ``llama-index-core`` (``pip install "ragctl[llamaindex]"``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.node_parser import NodeParser
from llama_index.core.readers.base import BaseReader
from llama_index.core.schema import BaseNode, Document, MetadataMode, Node, NodeRelationship, TextNode

from ragctl._native import (
    Chunk,
    HeadingAwareChunker,
    ParsedDocument,
    ParseOptions,
    RequestContext,
    StaticEmbedder,
    parse_file,
)
from ragctl.integrations import DocumentTypeName, PathLike, char_offsets, chunk_metadata, supported_files

__all__ = ["BOOKKEEPING_METADATA_KEYS", "RagctlEmbedding", "RagctlNodeParser", "RagctlReader"]

BOOKKEEPING_METADATA_KEYS = [
    "chunk_id",
    "parent_id",
    "position",
    "token_count",
    "span",
    "kind",
    "level",
    "provenance",
]
"""The metadata keys a node carries for programs, not for the model: left out of the text LlamaIndex
embeds and sends to the LLM. ``heading_path`` stays in, as the one key that says what the text is
about."""


class RagctlNodeParser(NodeParser):
    """Parses documents into nodes along their headings; each node's embedding and LLM text
    (metadata included) is within ``max_tokens`` tokens. ``parse_options``
    (:class:`rag_chunker.ParseOptions`, a keyword of the constructor) sets how the text is parsed
    (HTML site chrome kept, ...)."""

    max_tokens: int = Field(
        default=512, description="The most tokens of a node's embedding or LLM text, metadata included.", gt=0
    )
    overlap_tokens: Optional[int] = Field(
        default=None,
        description="Tokens a body node repeats from the previous one of its section "
        "(default 64, or max_tokens // 8 when that is smaller).",
        ge=0,
    )
    document_type: DocumentTypeName = Field(
        default="markdown", description="How a document's text is read: markdown, text or html."
    )
    fold_headings: bool = Field(
        default=True, description="Whether each heading folds into the first body node of its section."
    )
    include_headings: bool = Field(default=True, description="Whether a heading alone is a node.")
    tenant_id: str = Field(default="llamaindex", description="The tenant the chunks belong to.")

    _chunker: HeadingAwareChunker = PrivateAttr()
    _offsets: Dict[str, Tuple[int, int]] = PrivateAttr(default_factory=dict)
    _parse_options: Optional[ParseOptions] = PrivateAttr(default=None)

    def __init__(
        self, token_counter: Optional[Any] = None, parse_options: Optional[ParseOptions] = None, **data: Any
    ) -> None:
        super().__init__(**data)
        self._parse_options = parse_options
        self._chunker = HeadingAwareChunker(
            self.max_tokens, self.overlap_tokens, token_counter, fold_headings=self.fold_headings
        )

    @classmethod
    def class_name(cls) -> str:
        return "RagctlNodeParser"

    def _parse_nodes(self, nodes: Sequence[BaseNode], show_progress: bool = False, **kwargs: Any) -> List[BaseNode]:
        ctx = RequestContext(self.tenant_id)
        out: List[BaseNode] = []
        for node in nodes:
            for child in self._nodes_of(ctx, node):
                if child.start_char_idx is not None and child.end_char_idx is not None:
                    self._offsets[child.node_id] = (child.start_char_idx, child.end_char_idx)
                out.append(child)
        return out

    def _nodes_of(self, ctx: RequestContext, node: BaseNode) -> List[TextNode]:
        """The nodes of one document, cut so that each one's embedding and LLM text fits."""
        text = node.get_content(metadata_mode=MetadataMode.NONE)
        return self._fitted_nodes(
            node,
            text,
            lambda chunker: chunker.chunk_text_blocking(
                ctx, text, source_uri=node.node_id, document_type=self.document_type, options=self._parse_options
            ),
        )

    def _fitted_nodes(
        self, node: BaseNode, text: str, chunk_with: Callable[[HeadingAwareChunker], List[Chunk]]
    ) -> List[TextNode]:
        """The nodes of ``text`` (the text of ``node``, or the rendition of its file), chunked by
        ``chunk_with`` and cut so that each one's embedding and LLM text fits.

        The metadata LlamaIndex puts before a node's text (the document's own and the
        ``heading_path``) differs from section to section, so it is measured on the chunks
        themselves: a first cut with ``max_tokens`` less what the document's metadata takes,
        then, while a chunk's text with its metadata is over ``max_tokens``, a cut smaller by
        the excess. Each cut is smaller than the one before, so this ends: with chunks that fit,
        or with a ``ValueError`` once the metadata leaves no room for text.
        """
        count = self._chunker.token_counter.count
        # What LlamaIndex renders depends on the text and, of a chunk's own metadata, on the
        # heading path alone (the other keys are excluded), so one node per heading path
        # measures every chunk under it, with LlamaIndex's own rendering.
        probes: Dict[Tuple[str, ...], TextNode] = {}

        def prompt_tokens(heading_path: List[str], text: str) -> int:
            probe = probes.get(tuple(heading_path))
            if probe is None:
                probe = probes[tuple(heading_path)] = self._template(node, "", {"heading_path": heading_path})
            probe.text = text
            return _prompt_tokens(count, probe)

        budget = self.max_tokens - prompt_tokens([], "")
        overlap = self._chunker.overlap_tokens
        while True:
            if budget <= overlap:
                raise ValueError(
                    f"document {node.node_id}: its metadata takes {self.max_tokens - budget} of "
                    f"max_tokens={self.max_tokens} tokens in the text LlamaIndex embeds, too many to leave room "
                    f"for chunks with overlap_tokens={overlap}; raise max_tokens, or leave metadata "
                    "keys out (excluded_embed_metadata_keys, excluded_llm_metadata_keys)"
                )
            chunker = self._chunker
            if budget != self.max_tokens:
                chunker = HeadingAwareChunker(
                    budget, overlap, chunker.token_counter, fold_headings=self.fold_headings
                )
            chunks = chunk_with(chunker)
            if not self.include_headings:
                chunks = [c for c in chunks if c.metadata.get("kind") != "heading"]
            worst = max((prompt_tokens(c.heading_path, c.content or "") for c in chunks), default=0)
            if worst <= self.max_tokens:
                return self._build(node, text, chunks)
            budget -= worst - self.max_tokens

    def _template(self, node: BaseNode, text: str, metadata: Dict[str, Any], **fields: Any) -> TextNode:
        """A node of ``node``'s document with ``text``: the document's metadata and ``metadata``
        (merged as LlamaIndex's post-processing merges them), the document's templates, and its
        excluded keys plus :data:`BOOKKEEPING_METADATA_KEYS`."""
        if isinstance(node, (TextNode, Node)):
            # Documents (a Node) and text nodes have a text template; other nodes keep TextNode's.
            fields.setdefault("text_template", node.text_template)
        return TextNode(
            text=text,
            metadata={**node.metadata, **metadata},
            excluded_embed_metadata_keys=_union(node.excluded_embed_metadata_keys, BOOKKEEPING_METADATA_KEYS),
            excluded_llm_metadata_keys=_union(node.excluded_llm_metadata_keys, BOOKKEEPING_METADATA_KEYS),
            metadata_seperator=node.metadata_separator,
            metadata_template=node.metadata_template,
            **fields,
        )

    def _build(self, node: BaseNode, text: str, chunks: List[Chunk]) -> List[TextNode]:
        """The nodes of ``chunks``, cut from ``text``, the text of ``node``."""
        source = node.as_related_node_info()
        to_chars = char_offsets(text)
        by_chunk_id: Dict[str, TextNode] = {}
        children: List[TextNode] = []
        for chunk in chunks:
            span = chunk.span
            child = self._template(
                node,
                chunk.content or "",
                chunk_metadata(chunk),
                id_=f"{node.node_id}#{chunk.position}",
                start_char_idx=to_chars(span.start) if span is not None else None,
                end_char_idx=to_chars(span.end) if span is not None else None,
                relationships={NodeRelationship.SOURCE: source},
            )
            parent = by_chunk_id.get(chunk.parent_id or "")
            if parent is not None:
                child.relationships[NodeRelationship.PARENT] = parent.as_related_node_info()
            by_chunk_id[chunk.id] = child
            children.append(child)
        return children

    def _postprocess_parsed_nodes(self, nodes: List[BaseNode], parent_doc_map: Dict[str, Document]) -> List[BaseNode]:
        nodes = super()._postprocess_parsed_nodes(nodes, parent_doc_map)
        # The base class finds each node's text in its document again; the spans are exact, so
        # they win wherever the text occurs more than once.
        for node in nodes:
            offsets = self._offsets.pop(node.node_id, None)
            if offsets is not None and isinstance(node, TextNode):
                node.start_char_idx, node.end_char_idx = offsets
        return nodes


class RagctlReader(BaseReader):
    """Reads files of every type ragctl reads into one ``Document`` per chunk.

    Each document's embedding and LLM text (metadata included) is within ``max_tokens``, as
    :class:`RagctlNodeParser`'s nodes are; its metadata is the file's (``file_path``, and what
    ``extra_info`` adds) and :func:`ragctl.integrations.chunk_metadata`, ``provenance``
    included, the bookkeeping keys left out of the embedding and LLM text. A file that cannot be
    read or parsed raises a ``ParseError`` naming it. Directories are walked as ``ragctl chunk``
    walks them (:func:`ragctl.integrations.supported_files`); ``parse_options``
    (:class:`rag_chunker.ParseOptions`) sets how files are read and parsed.
    """

    def __init__(
        self,
        max_tokens: int = 512,
        overlap_tokens: Optional[int] = None,
        token_counter: Optional[Any] = None,
        *,
        document_type: Optional[DocumentTypeName] = None,
        fold_headings: bool = True,
        include_headings: bool = True,
        tenant_id: str = "llamaindex",
        corpus_id: str = "local",
        parse_options: Optional[ParseOptions] = None,
    ) -> None:
        super().__init__()
        self._parse_options = parse_options
        self._parser = RagctlNodeParser(
            token_counter=token_counter,
            max_tokens=max_tokens,
            overlap_tokens=overlap_tokens,
            fold_headings=fold_headings,
            include_headings=include_headings,
            tenant_id=tenant_id,
        )
        self._document_type = document_type
        self._corpus_id = corpus_id

    def load_data(
        self, file: Union[PathLike, Sequence[PathLike]], extra_info: Optional[Dict[str, Any]] = None, **kwargs: Any
    ) -> List[Document]:
        """The chunks of ``file`` (a file or directory, or several), in document order, as
        documents; ``extra_info`` is added to every document's metadata."""
        ctx = RequestContext(self._parser.tenant_id)
        documents: List[Document] = []
        for path in supported_files(file, all_files=self._document_type is not None):
            parsed: ParsedDocument = parse_file(
                ctx, path, document_type=self._document_type, corpus_id=self._corpus_id, options=self._parse_options
            )
            base = Document(
                text="",
                id_=parsed.document.id,
                metadata={"file_path": path, "file_name": Path(path).name, **(extra_info or {})},
            )
            nodes = self._parser._fitted_nodes(base, parsed.text, lambda chunker: chunker.chunk_blocking(ctx, parsed))
            for node in nodes:
                documents.append(
                    Document(
                        text=node.text,
                        id_=node.node_id,
                        metadata=node.metadata,
                        excluded_embed_metadata_keys=node.excluded_embed_metadata_keys,
                        excluded_llm_metadata_keys=node.excluded_llm_metadata_keys,
                        start_char_idx=node.start_char_idx,
                        end_char_idx=node.end_char_idx,
                    )
                )
        return documents


def _union(keys: List[str], more: List[str]) -> List[str]:
    """``keys`` and then those of ``more`` not among them."""
    return list(keys) + [k for k in more if k not in keys]


def _prompt_tokens(count: Any, node: TextNode) -> int:
    """The tokens of the longer of what LlamaIndex embeds and what it sends to the LLM."""
    embed = node.get_content(metadata_mode=MetadataMode.EMBED)
    llm = node.get_content(metadata_mode=MetadataMode.LLM)
    if llm == embed:
        return int(count(embed))
    return max(int(count(embed)), int(count(llm)))


class RagctlEmbedding(BaseEmbedding):
    """A LlamaIndex embedding model from a model2vec folder (``config.json``,
    ``model.safetensors``, ``tokenizer.json``), embedded by ragctl's static embedder with the GIL
    released; nothing is downloaded. Its ``model_name`` is the model's id (``model2vec:...``)."""

    path: str = Field(description="The model2vec folder.")

    _embedder: StaticEmbedder = PrivateAttr()

    def __init__(self, path: PathLike, **data: Any) -> None:
        embedder = StaticEmbedder(path)
        data.setdefault("model_name", embedder.id)
        data["path"] = str(path)
        super().__init__(**data)
        self._embedder = embedder

    @classmethod
    def class_name(cls) -> str:
        return "RagctlEmbedding"

    def _get_query_embedding(self, query: str) -> List[float]:
        return self._embedder.embed([query])[0]

    async def _aget_query_embedding(self, query: str) -> List[float]:
        return self._get_query_embedding(query)

    def _get_text_embedding(self, text: str) -> List[float]:
        return self._embedder.embed([text])[0]

    def _get_text_embeddings(self, texts: List[str]) -> List[List[float]]:
        return self._embedder.embed(list(texts))
