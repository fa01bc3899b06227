"""A LangChain ``TextSplitter`` on ragctl's heading-aware chunker.

Chunks follow the document's headings, each within ``max_tokens`` under the real tokenizer; every
chunk's text is exactly a slice of the input (code indentation and tables kept), and each
``Document`` says where it came from::

    from ragctl.integrations.langchain import RagctlTextSplitter

    splitter = RagctlTextSplitter(max_tokens=512, overlap_tokens=64)
    docs = splitter.split_documents(loader.load())
    docs[3].metadata["heading_path"]   # ['Guide', 'Install']
    docs[3].metadata["span"]           # {'start': 1234, 'end': 1876}, UTF-8 byte offsets
    docs[3].metadata["token_count"]    # the exact count, e.g. 141

Requires ``langchain-text-splitters`` (``pip install "ragctl[langchain]"``).
"""

from __future__ import annotations

import copy
from typing import Any, Dict, Iterable, List, Literal, Optional

from langchain_core.documents import Document
from langchain_text_splitters import TextSplitter

from ragctl._native import Chunk, HeadingAwareChunker, RequestContext
from ragctl.integrations import char_offsets, chunk_metadata
from rag_chunker.tokens import TokenCounter

__all__ = ["RagctlTextSplitter"]


class RagctlTextSplitter(TextSplitter):
    """Splits text along its headings into chunks of at most ``max_tokens`` tokens.

    Args:
        max_tokens: the most tokens a chunk may have (LangChain's ``chunk_size``).
        overlap_tokens: about how many tokens a body chunk repeats from the previous one of its
            section; overlap never crosses a heading (LangChain's ``chunk_overlap``; default 64,
            or ``max_tokens // 8`` when that is smaller, the library's rule).
        token_counter: the tokenizer budgets are in (default ``TiktokenCounter("cl100k_base")``;
            any object with ``count(text)`` and ``name()``).
        document_type: how text is read: ``markdown`` (default) or ``text``.
        fold_headings: whether each heading folds into the first body chunk of its section
            (default ``True``: the ``Document`` starts at the heading line, so a vector store
            embeds the heading with its text instead of a ``Document`` that is a heading alone).
            ``False`` gives each heading a chunk of its own, as ``ragctl chunk`` does.
        include_headings: whether a heading chunk (a heading alone: with ``fold_headings``, only
            one whose section is empty or that does not fit with its body) is a document of its own
            (default ``True``: with it, the chunks cover every character of the text; the body
            chunks carry their ``heading_path`` either way).
        add_start_index: add ``start_index``, the chunk's character offset in the text.
        tenant_id: the tenant the chunks belong to.
    """

    def __init__(
        self,
        max_tokens: int = 512,
        overlap_tokens: Optional[int] = None,
        *,
        token_counter: Optional[TokenCounter] = None,
        document_type: Literal["markdown", "text", "ocr"] = "markdown",
        fold_headings: bool = True,
        include_headings: bool = True,
        add_start_index: bool = False,
        tenant_id: str = "langchain",
    ) -> None:
        self._chunker = HeadingAwareChunker(
            max_tokens, overlap_tokens, token_counter, fold_headings=fold_headings
        )
        counter = self._chunker.token_counter
        super().__init__(
            chunk_size=max_tokens,
            chunk_overlap=self._chunker.overlap_tokens,
            length_function=counter.count,
            add_start_index=add_start_index,
            strip_whitespace=False,
        )
        self._document_type = document_type
        self._include_headings = include_headings
        self._ctx = RequestContext(tenant_id)

    def _chunks(self, text: str, source: str) -> List[Chunk]:
        chunks = self._chunker.chunk_text_blocking(
            self._ctx, text, source_uri=source, document_type=self._document_type
        )
        if self._include_headings:
            return chunks
        return [c for c in chunks if c.metadata.get("kind") != "heading"]

    def split_text(self, text: str) -> List[str]:
        """The chunks' texts, in document order."""
        return [c.content or "" for c in self._chunks(text, "text")]

    def create_documents(
        self, texts: List[str], metadatas: Optional[List[Dict[Any, Any]]] = None
    ) -> List[Document]:
        """One ``Document`` per chunk, its metadata the text's (copied) plus :func:`chunk_metadata`
        (``heading_path``, ``span``, ``token_count``, ``chunk_id``, ...). A text's ``source``
        metadata, when it has one, names the chunks (``source#position``)."""
        metadatas_ = metadatas or [{} for _ in texts]
        documents = []
        for i, text in enumerate(texts):
            base = metadatas_[i]
            source = str(base.get("source", f"text-{i}"))
            to_chars = char_offsets(text)
            for chunk in self._chunks(text, source):
                metadata = copy.deepcopy(base)
                metadata.update(chunk_metadata(chunk))
                if self._add_start_index and chunk.span is not None:
                    metadata["start_index"] = to_chars(chunk.span.start)
                documents.append(Document(page_content=chunk.content or "", metadata=metadata))
        return documents

    def split_documents(self, documents: Iterable[Document]) -> List[Document]:
        """Splits each document; its metadata is copied onto its chunks."""
        texts, metadatas = [], []
        for doc in documents:
            texts.append(doc.page_content)
            metadatas.append(doc.metadata)
        return self.create_documents(texts, metadatas=metadatas)
