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
from collections import Counter
from typing import Any, Dict, Iterable, List, Literal, Optional, Sequence

from langchain_core.documents import Document
from langchain_text_splitters import TextSplitter

from ragctl._native import Chunk, HeadingAwareChunker, RequestContext
from ragctl.integrations import char_offsets, chunk_metadata
from rag_chunker.tokens import TokenCounter

__all__ = ["RagctlTextSplitter", "document_ids"]


def document_ids(sources: Sequence[str]) -> List[str]:
    """The document id of each text of one call, given each text's source: the source itself
    where no other text of the call has it; where several do, each gets its order among them,
    ``source[0]``, ``source[1]``, ... (for a PDF's pages, their page order). The ids are
    distinct, and so are the ``id#position`` chunk ids made from them."""
    ids = list(sources)
    while True:
        counts = Counter(ids)
        if all(n == 1 for n in counts.values()):
            return ids
        seen: Counter[str] = Counter()
        for i, name in enumerate(ids):
            if counts[name] > 1:
                ids[i] = f"{name}[{seen[name]}]"
                seen[name] += 1
        # A qualified id can meet a source that was already written so (``a[0]`` beside two
        # ``a``): the next round qualifies those again; every round lengthens them, so it ends.


class RagctlTextSplitter(TextSplitter):
    """Splits text along its headings into chunks of at most ``max_tokens`` tokens.

    Args:
        max_tokens: the most tokens a chunk may have (LangChain's ``chunk_size``).
        overlap_tokens: about how many tokens a body chunk repeats from the previous one of its
            section; overlap never crosses a heading (LangChain's ``chunk_overlap``).
        token_counter: the tokenizer budgets are in (default ``TiktokenCounter("cl100k_base")``;
            any object with ``count(text)`` and ``name()``).
        document_type: how text is read: ``markdown`` (default) or ``text``.
        include_headings: whether a heading alone is a document of its own (default ``True``: with
            it, the chunks cover every character of the text; the body chunks carry their
            ``heading_path`` either way).
        add_start_index: add ``start_index``, the chunk's character offset in the text.
        tenant_id: the tenant the chunks belong to.
    """

    def __init__(
        self,
        max_tokens: int = 512,
        overlap_tokens: int = 64,
        *,
        token_counter: Optional[TokenCounter] = None,
        document_type: Literal["markdown", "text", "ocr"] = "markdown",
        include_headings: bool = True,
        add_start_index: bool = False,
        tenant_id: str = "langchain",
    ) -> None:
        self._chunker = HeadingAwareChunker(max_tokens, overlap_tokens, token_counter)
        counter = self._chunker.token_counter
        super().__init__(
            chunk_size=max_tokens,
            chunk_overlap=overlap_tokens,
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
        (``heading_path``, ``span``, ``token_count``, ``chunk_id``, ...).

        A text's ``source`` metadata, when it has one, names its chunks (``source#position``);
        ``chunk_id`` is unique within the call: texts that share a source (the pages a PDF
        loader emits) are told apart by their order among them (``report.pdf[1]#0``, see
        :func:`document_ids`)."""
        metadatas_ = metadatas or [{} for _ in texts]
        sources = [str(metadatas_[i].get("source", f"text-{i}")) for i in range(len(texts))]
        documents = []
        for i, (text, document_id) in enumerate(zip(texts, document_ids(sources))):
            base = metadatas_[i]
            to_chars = char_offsets(text)
            for chunk in self._chunks(text, document_id):
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
