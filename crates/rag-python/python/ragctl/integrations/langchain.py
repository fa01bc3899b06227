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

``RagctlLoader`` reads files of every type ragctl reads (Markdown, text, HTML, DOCX, PDF, OCR JSON)
and yields one ``Document`` per chunk, with ``provenance`` pointing into the original file::

    from ragctl.integrations.langchain import RagctlLoader

    docs = RagctlLoader(["handbook.docx", "site/"], max_tokens=512).load()
    docs[0].metadata["provenance"]  # [{'kind': 'paragraphs', 'part': 'word/document.xml', 'first': 0, 'last': 2}]

``RagctlEmbeddings`` is a LangChain ``Embeddings`` on ragctl's static embedder: fast local vectors
from a model2vec folder for a vector store, the same vectors ``ragctl chunk --embedder`` writes::

    from ragctl.integrations.langchain import RagctlEmbeddings

    embeddings = RagctlEmbeddings("target/models/wordllama-l2-256")
    vectors = embeddings.embed_documents([d.page_content for d in docs])

Requires ``langchain-text-splitters`` (``pip install "ragctl[langchain]"``).
"""

from __future__ import annotations

import copy
from collections import Counter
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Union

from langchain_core.document_loaders import BaseLoader
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_text_splitters import TextSplitter

from ragctl._native import Chunk, HeadingAwareChunker, ParseOptions, RequestContext, StaticEmbedder
from ragctl.integrations import DocumentTypeName, PathLike, char_offsets, chunk_metadata, supported_files
from rag_chunker.tokens import TokenCounter

__all__ = ["RagctlEmbeddings", "RagctlLoader", "RagctlTextSplitter", "document_ids"]


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
            section; overlap never crosses a heading (LangChain's ``chunk_overlap``; default 64,
            or ``max_tokens // 8`` when that is smaller, the library's rule).
        token_counter: the tokenizer budgets are in (default ``TiktokenCounter("cl100k_base")``;
            any object with ``count(text)`` and ``name()``).
        document_type: how text is read: ``markdown`` (default), ``text`` or ``html`` (a web
            page's HTML: chunked along its headings, scripts and site chrome left out; the
            chunks are then slices of its text rendition, and ``provenance`` gives their bytes
            in the page).
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
        parse_options: how the text is parsed (:class:`rag_chunker.ParseOptions`: HTML site
            chrome kept, ...; default ``ragctl chunk``'s).
    """

    def __init__(
        self,
        max_tokens: int = 512,
        overlap_tokens: Optional[int] = None,
        *,
        token_counter: Optional[TokenCounter] = None,
        document_type: DocumentTypeName = "markdown",
        fold_headings: bool = True,
        include_headings: bool = True,
        add_start_index: bool = False,
        tenant_id: str = "langchain",
        parse_options: Optional[ParseOptions] = None,
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
        self._parse_options = parse_options

    def _chunks(self, text: str, source: str) -> List[Chunk]:
        chunks = self._chunker.chunk_text_blocking(
            self._ctx, text, source_uri=source, document_type=self._document_type, options=self._parse_options
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


class RagctlLoader(BaseLoader):
    """Loads files of every type ragctl reads and yields one ``Document`` per chunk.

    Args:
        paths: files and directories; a directory is walked as ``ragctl chunk`` walks it
            (:func:`ragctl.integrations.supported_files`: sorted, ``.gitignore`` honoured, hidden
            names and unsupported types skipped; with ``document_type``, every file is taken).
        max_tokens: the most tokens a chunk may have.
        overlap_tokens: about how many tokens a body chunk repeats from the previous one of its
            section (default 64, or ``max_tokens // 8`` when that is smaller).
        token_counter: the tokenizer budgets are in (default ``TiktokenCounter("cl100k_base")``).
        document_type: the type of every file, instead of detecting it from each extension.
        fold_headings: whether each heading folds into the first body chunk of its section
            (default ``True``, as for the splitter).
        include_headings: whether a heading chunk that could not fold is a document of its own.
        tenant_id: the tenant the chunks belong to.
        corpus_id: the corpus the files belong to.
        parse_options: how files are read and parsed (:class:`rag_chunker.ParseOptions`: HTML
            site chrome kept, the size limit, the PDF limits; default ``ragctl chunk``'s).

    Each ``Document`` has the chunk's text as ``page_content``, the chunk id as ``id``, and as
    metadata ``source`` (the path as given) and :func:`ragctl.integrations.chunk_metadata`
    (``heading_path``, ``span``, ``token_count``, ``provenance``, ...). A file that cannot be
    read or parsed raises a ``ParseError`` naming it; files are read lazily, one at a time.
    """

    def __init__(
        self,
        paths: Union[PathLike, Sequence[PathLike]],
        max_tokens: int = 512,
        overlap_tokens: Optional[int] = None,
        *,
        token_counter: Optional[TokenCounter] = None,
        document_type: Optional[DocumentTypeName] = None,
        fold_headings: bool = True,
        include_headings: bool = True,
        tenant_id: str = "langchain",
        corpus_id: str = "local",
        parse_options: Optional[ParseOptions] = None,
    ) -> None:
        self._paths = paths
        self._parse_options = parse_options
        self._chunker = HeadingAwareChunker(max_tokens, overlap_tokens, token_counter, fold_headings=fold_headings)
        self._document_type = document_type
        self._include_headings = include_headings
        self._ctx = RequestContext(tenant_id)
        self._corpus_id = corpus_id

    def lazy_load(self) -> Iterator[Document]:
        """The chunks of each file, file by file, in document order."""
        for path in supported_files(self._paths, all_files=self._document_type is not None):
            chunks = self._chunker.chunk_file_blocking(
                self._ctx,
                path,
                document_type=self._document_type,
                corpus_id=self._corpus_id,
                options=self._parse_options,
            )
            for chunk in chunks:
                if not self._include_headings and chunk.metadata.get("kind") == "heading":
                    continue
                metadata: Dict[str, Any] = {"source": path}
                metadata.update(chunk_metadata(chunk))
                yield Document(page_content=chunk.content or "", metadata=metadata, id=chunk.id)


class RagctlEmbeddings(Embeddings):
    """LangChain ``Embeddings`` from a model2vec folder (``config.json``, ``model.safetensors``,
    ``tokenizer.json``), embedded by ragctl's static embedder with the GIL released; nothing is
    downloaded. A missing or malformed file is a ``ValueError`` naming it."""

    def __init__(self, path: PathLike) -> None:
        self.embedder = StaticEmbedder(path)

    def embed_documents(self, texts: List[str]) -> List[List[float]]:
        """One vector per text, in one call."""
        return self.embedder.embed(list(texts))

    def embed_query(self, text: str) -> List[float]:
        """The vector of ``text``."""
        return self.embedder.embed([text])[0]
