"""A LlamaIndex ``NodeParser`` on ragctl's heading-aware chunker.

Each node is one chunk: its text exactly a slice of the document (``start_char_idx`` and
``end_char_idx`` exact), within ``max_tokens`` under the real tokenizer, with ``heading_path``,
``span`` (UTF-8 byte offsets) and ``token_count`` in its metadata. Headings fold into the first
body node of their section by default (``fold_headings``), so a node is a heading with its text,
not a heading alone; with ``fold_headings=False`` each heading is a node of its own and a body
node has a ``PARENT`` relationship to the node of its enclosing heading::

    from ragctl.integrations.llamaindex import RagctlNodeParser

    nodes = RagctlNodeParser(max_tokens=512, overlap_tokens=64).get_nodes_from_documents(documents)

Requires ``llama-index-core`` (``pip install "ragctl[llamaindex]"``).
"""

from __future__ import annotations

from typing import Any, Dict, List, Literal, Optional, Sequence, Tuple

from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.node_parser import NodeParser
from llama_index.core.schema import BaseNode, Document, MetadataMode, NodeRelationship, TextNode

from ragctl._native import HeadingAwareChunker, RequestContext
from ragctl.integrations import char_offsets, chunk_metadata

__all__ = ["RagctlNodeParser"]


class RagctlNodeParser(NodeParser):
    """Parses documents into nodes along their headings, each within ``max_tokens`` tokens."""

    max_tokens: int = Field(default=512, description="The most tokens a node may have.", gt=0)
    overlap_tokens: Optional[int] = Field(
        default=None,
        description="Tokens a body node repeats from the previous one of its section "
        "(default 64, or max_tokens // 8 when that is smaller).",
        ge=0,
    )
    document_type: Literal["markdown", "text", "ocr"] = Field(default="markdown", description="markdown or text.")
    fold_headings: bool = Field(
        default=True, description="Whether each heading folds into the first body node of its section."
    )
    include_headings: bool = Field(default=True, description="Whether a heading alone is a node.")
    tenant_id: str = Field(default="llamaindex", description="The tenant the chunks belong to.")

    _chunker: HeadingAwareChunker = PrivateAttr()
    _offsets: Dict[str, Tuple[int, int]] = PrivateAttr(default_factory=dict)

    def __init__(self, token_counter: Optional[Any] = None, **data: Any) -> None:
        super().__init__(**data)
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
            text = node.get_content(metadata_mode=MetadataMode.NONE)
            chunks = self._chunker.chunk_text_blocking(
                ctx, text, source_uri=node.node_id, document_type=self.document_type
            )
            source = node.as_related_node_info()
            to_chars = char_offsets(text)
            by_chunk_id: Dict[str, TextNode] = {}
            for chunk in chunks:
                if not self.include_headings and chunk.metadata.get("kind") == "heading":
                    continue
                span = chunk.span
                start = to_chars(span.start) if span is not None else None
                end = to_chars(span.end) if span is not None else None
                child = TextNode(
                    id_=f"{node.node_id}#{chunk.position}",
                    text=chunk.content or "",
                    metadata=chunk_metadata(chunk),
                    start_char_idx=start,
                    end_char_idx=end,
                    excluded_embed_metadata_keys=list(node.excluded_embed_metadata_keys),
                    excluded_llm_metadata_keys=list(node.excluded_llm_metadata_keys),
                    relationships={NodeRelationship.SOURCE: source},
                )
                parent = by_chunk_id.get(chunk.parent_id or "")
                if parent is not None:
                    child.relationships[NodeRelationship.PARENT] = parent.as_related_node_info()
                by_chunk_id[chunk.id] = child
                if start is not None and end is not None:
                    self._offsets[child.node_id] = (start, end)
                out.append(child)
        return out

    def _postprocess_parsed_nodes(self, nodes: List[BaseNode], parent_doc_map: Dict[str, Document]) -> List[BaseNode]:
        nodes = super()._postprocess_parsed_nodes(nodes, parent_doc_map)
        # The base class finds each node's text in its document again; the spans are exact, so
        # they win wherever the text occurs more than once.
        for node in nodes:
            offsets = self._offsets.pop(node.node_id, None)
            if offsets is not None and isinstance(node, TextNode):
                node.start_char_idx, node.end_char_idx = offsets
        return nodes
