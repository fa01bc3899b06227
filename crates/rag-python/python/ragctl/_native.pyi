"""Type stubs of ragctl's native module. Import these names from the public modules instead:
``rag_core``, ``rag_chunker`` and ``rag_packer`` re-export them."""

import os
from typing import (
    Any,
    Awaitable,
    Coroutine,
    Dict,
    Iterable,
    Iterator,
    List,
    Literal,
    Optional,
    Sequence,
    Set,
    Tuple,
    TypeVar,
    Union,
)

from typing_extensions import Self, disjoint_base, final

from rag_chunker.tokens import TokenCounter
from rag_packer.embed import Embedder

__version__: str

__all__ = [
    "__version__",
    "Principal",
    "RequestContext",
    "Span",
    "Chunk",
    "Document",
    "Block",
    "ParsedDocument",
    "ConflictAnnotation",
    "DroppedChunk",
    "Excerpt",
    "PackedContext",
    "TiktokenCounter",
    "HuggingFaceCounter",
    "StaticEmbedder",
    "Parser",
    "OCRRegion",
    "OCRResult",
    "ParseOptions",
    "path_uri",
    "supported_suffixes",
    "walk_files",
    "parse_document",
    "parse_file",
    "detect_document_type",
    "ocr_result_to_parsed_document",
    "HeadingAwareChunker",
    "PackerConfig",
    "ContextPacker",
    "ContextConfig",
    "RepackerEngine",
    "normalise",
    "normalised_words",
    "shingles",
    "jaccard",
    "content_hash",
    "hash_dedup",
    "jaccard_dedup",
    "rank_order",
    "descending_order",
    "ascending_order",
    "lost_in_middle_order",
    "sides_order",
    "fit_to_budget",
    "knapsack_select",
    "optimal_select",
    "detect_conflicts",
    "bm25_scores",
    "bm25_chunk_scores",
    "OPTIMAL_CELL_LIMIT",
]

_T = TypeVar("_T")

BlockTypeName = Literal["heading", "paragraph", "list_item", "table_row", "code", "quote", "caption", "other"]
TrustName = Literal["trusted", "user_supplied", "untrusted"]
OrderName = Literal["lost_in_middle", "descending", "ascending", "input", "reverse", "sides"]
StrategyName = Literal["greedy", "knapsack", "optimal"]
ObjectiveName = Literal["auto", "score_sum", "rank_prior"]
DocumentTypeName = Literal["markdown", "text", "ocr", "html", "docx", "pdf"]
JSON = Any

@final
class Principal:
    """The authenticated caller: an id and the ACL labels it holds."""

    def __new__(cls, id: str, acl_labels: Sequence[str] = ...) -> Self:
        """``acl_labels`` defaults to none."""
    @property
    def id(self) -> str: ...
    @property
    def acl_labels(self) -> List[str]:
        """Labels the caller is cleared for; chunkers copy them onto the chunks they emit."""

@final
class RequestContext:
    """Who is asking, for which tenant: passed to every parse, chunk and pack call.

    >>> ctx = RequestContext("acme", Principal("alice", ["staff"]), request_id="req-42")
    >>> ctx.tenant_id, ctx.principal.acl_labels
    ('acme', ['staff'])
    """

    def __new__(
        cls, tenant_id: str, principal: Optional[Principal] = None, request_id: Optional[str] = None
    ) -> Self:
        """``principal`` defaults to ``Principal("local")``, with no labels."""
    @staticmethod
    def local(tenant_id: str) -> "RequestContext": ...
    def with_request_id(self, request_id: str) -> "RequestContext": ...
    @property
    def tenant_id(self) -> str: ...
    @property
    def principal(self) -> Principal: ...
    @property
    def request_id(self) -> Optional[str]: ...

@final
class Span:
    """A half-open byte range ``start..end`` of a document's UTF-8 text; unpacks as a pair.

    >>> start, end = Span(9, 19)
    >>> "# Title\\n\\nBody text.".encode()[start:end].decode()
    'Body text.'
    """

    def __new__(cls, start: int, end: int) -> Self: ...
    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[int]: ...

@final
class Chunk:
    """A piece of a document, sized for a model's context.

    A chunk has ``content``, ``content_ref`` or both (a ``ValueError`` otherwise). Every field can
    be read and assigned; ``metadata`` and ``extra`` are dicts you may change in place. The JSON
    form (:meth:`to_json`) is byte for byte what ``ragctl chunk --format jsonl`` writes.

    >>> chunk = Chunk("guide#3", "guide", "acme", "Rerankers score pairs.", score=0.82)
    >>> chunk.metadata["kind"] = "body"
    >>> chunk.to_json()
    '{"id":"guide#3","document_id":"guide","tenant_id":"acme","position":0,"parent_id":null,"content":"Rerankers score pairs.","score":0.82,"metadata":{"kind":"body"}}'
    """

    def __new__(
        cls,
        id: str,
        document_id: str,
        tenant_id: str,
        content: Optional[str] = None,
        *,
        content_ref: Optional[str] = None,
        position: int = 0,
        parent_id: Optional[str] = None,
        token_count: Optional[int] = None,
        tokenizer: Optional[str] = None,
        span: Union[Span, Tuple[int, int], None] = None,
        source_uri: Optional[str] = None,
        score: Optional[float] = None,
        trust: TrustName = "trusted",
        pinned: bool = False,
        acl_labels: Optional[Sequence[str]] = None,
        metadata: Optional[Dict[str, JSON]] = None,
        extra: Optional[Dict[str, JSON]] = None,
    ) -> Self: ...
    id: str
    document_id: str
    tenant_id: str
    position: int
    """0-based position within its document."""
    parent_id: Optional[str]
    """The enclosing chunk (for a chunker's output: the closest enclosing heading)."""
    content: Optional[str]
    content_ref: Optional[str]
    """Where the text is stored when the chunk does not carry it."""
    token_count: Optional[int]
    """Tokens of ``content``, cached at ingest (the chunker sets the exact count)."""
    tokenizer: Optional[str]
    """The tokenizer ``token_count`` was counted with, e.g. ``tiktoken:cl100k_base``."""
    span: Optional[Span]
    """Byte range of ``content`` in the source text: ``content == text.encode()[start:end].decode()``."""
    source_uri: Optional[str]
    score: Optional[float]
    """Relevance from retrieval or reranking; higher is better; ``None`` counts as 0.0."""
    trust: TrustName
    pinned: bool
    """Always packed, ahead of every other chunk (system prompt, user question)."""
    acl_labels: Tuple[str, ...]
    metadata: Dict[str, JSON]
    """Producer data; the heading-aware chunker sets ``kind``, ``level`` and ``heading_path``."""
    extra: Dict[str, JSON]
    """Fields of the JSON form this version does not know, kept on a round trip; a key that names
    a field of the chunk (``tenant_id``, ``content``, ...) is a ``ValueError``."""
    @property
    def heading_path(self) -> List[str]:
        """Titles of the enclosing headings, outermost first (from ``metadata``)."""
    @property
    def embedding(self) -> Optional[List[float]]:
        """The chunk's vector (JSON ``embedding``), or ``None``."""
    @property
    def embedding_model(self) -> Optional[str]:
        """The id of the model that made the vector (JSON ``embedding_model``), or ``None``."""
    def set_embedding(self, model: Optional[str], vector: Optional[Sequence[float]]) -> None:
        """Sets the vector and its model together (both ``None`` removes them)."""
    @property
    def provenance(self) -> List[Dict[str, JSON]]:
        """Where the chunk's text is in the original file when the document's text is a rendition
        (HTML: ``{"kind": "bytes", "start", "end"}``; DOCX: ``{"kind": "paragraphs", "part",
        "first", "last"}``; PDF and OCR: ``{"kind": "page", "page", "bbox"}``); empty for
        Markdown and text, whose ``span`` is already into the file."""
    def to_dict(self) -> Dict[str, JSON]: ...
    def to_json(self) -> str: ...
    @staticmethod
    def from_dict(data: Dict[str, JSON]) -> "Chunk": ...
    @staticmethod
    def from_json(line: str) -> "Chunk": ...
    def copy(self) -> "Chunk": ...
    def __copy__(self) -> Self: ...
    def __deepcopy__(self, memo: Optional[Dict[int, Any]] = None) -> Self: ...

@final
class Document:
    """A document as a parser read it: identity, origin, and its source text."""

    def __new__(cls, id: str, text: str, corpus_id: str = "local", source_uri: Optional[str] = None) -> Self:
        """``source_uri`` defaults to ``id``."""
    @property
    def id(self) -> str: ...
    @property
    def corpus_id(self) -> str: ...
    @property
    def source_uri(self) -> str: ...
    @property
    def text(self) -> str: ...

@final
class Block:
    """One structural unit of a parsed document."""

    def __new__(
        cls,
        block_type: BlockTypeName,
        span: Union[Span, Tuple[int, int]],
        *,
        level: Optional[int] = None,
        text: Optional[str] = None,
        attributes: Optional[Dict[str, JSON]] = None,
    ) -> Self: ...
    @property
    def block_type(self) -> BlockTypeName: ...
    @property
    def level(self) -> Optional[int]:
        """1 to 6, on headings only."""
    @property
    def text(self) -> Optional[str]:
        """The text where it differs from the source slice (a heading's title), else ``None``."""
    @property
    def span(self) -> Span: ...
    @property
    def attributes(self) -> Dict[str, JSON]: ...

@final
class ParsedDocument:
    """A document and its blocks in reading order: what a chunker consumes.

    Build one yourself to chunk the output of a parser of your own:

    >>> text = "# Setup\\n\\nInstall it."
    >>> parsed = ParsedDocument(Document("doc", text), [Block("heading", (0, 7), level=1, text="Setup"), Block("paragraph", (9, 20))])
    """

    def __new__(cls, document: Document, blocks: Sequence[Block]) -> Self: ...
    @property
    def document(self) -> Document: ...
    @property
    def blocks(self) -> List[Block]: ...
    @property
    def text(self) -> str: ...
    def block_text(self, block: Block) -> Optional[str]: ...
    @property
    def rendition(self) -> Optional[Dict[str, JSON]]:
        """How the text was derived from the file (HTML, DOCX, PDF, OCR): ``format``,
        ``original_bytes``, ``source_map``, ``left_out`` (bytes left out, by kind) and
        ``warnings``; ``None`` when the text is the file itself."""
    @property
    def warnings(self) -> List[str]:
        """What the parser must tell you because the text may not be the whole file (a repaired
        PDF, skipped content), one sentence each, and last, for a document that gave no text,
        why (``no text: ...``); empty when there is nothing to say."""
    def provenance(self, span: Union[Span, Tuple[int, int]]) -> List[Dict[str, JSON]]:
        """Where the text of ``span`` came from in the original (see ``Chunk.provenance``); a
        span past the end of the text, or reversed, is a ``ValueError``."""
    def __len__(self) -> int: ...

@final
class ConflictAnnotation:
    """An advisory note that some packed chunks disagree."""

    @property
    def kind(self) -> Literal["numeric_disagreement", "trust_mismatch"]: ...
    @property
    def chunk_ids(self) -> List[str]: ...
    @property
    def detail(self) -> str: ...

@final
class DroppedChunk:
    """An input chunk that was not packed, and why."""

    @property
    def id(self) -> str: ...
    @property
    def reason(
        self,
    ) -> Literal[
        "exact_duplicate",
        "near_duplicate",
        "over_budget",
        "negative_score",
        "heading_only",
        "not_relevant",
        "over_document_cap",
    ]: ...
    @property
    def details(self) -> Dict[str, JSON]:
        """The reason's fields: ``of``, ``similarity``, ``tokens``, ``document_id``, ``cap``, ..."""
    @property
    def message(self) -> str:
        """The reason as a sentence, e.g. ``exact duplicate of doc#3``."""

@final
class Excerpt:
    """A piece of a rendered context: packed chunks of one document shown as one text."""

    @property
    def chunk_ids(self) -> List[str]: ...
    @property
    def document_id(self) -> str: ...
    @property
    def span(self) -> Optional[Span]: ...
    @property
    def heading_path(self) -> List[str]: ...
    @property
    def breadcrumb(self) -> bool: ...

@final
class PackedContext:
    """The result of packing: packed chunks in prompt order and an account of every other input."""

    @property
    def chunks(self) -> List[Chunk]:
        """The packed chunks, pinned first: the objects that were passed in, and a new chunk
        ``ID#cut`` (``metadata["cut_from"]``) for a part ``pack_context`` cut to fit."""
    @property
    def tokens_used(self) -> int: ...
    @property
    def tokens_budget(self) -> int: ...
    @property
    def tokenizer(self) -> str: ...
    @property
    def order(self) -> OrderName: ...
    @property
    def strategy(self) -> StrategyName: ...
    @property
    def conflicts(self) -> List[ConflictAnnotation]: ...
    @property
    def dropped(self) -> List[DroppedChunk]: ...
    @property
    def hidden_by_acl(self) -> int:
        """Input chunks the principal may not see (named nowhere, not even in ``dropped``)."""
    @property
    def notes(self) -> List[str]: ...
    @property
    def context(self) -> Optional[str]:
        """The rendered prompt context (``pack_context`` only)."""
    @property
    def scoring(self) -> Optional[str]:
        """How the chunks were scored when the packer was given a ``query``, as ``ragctl pack``
        prints it; ``None`` without a query."""
    @property
    def excerpts(self) -> List[Excerpt]: ...
    @property
    def effective_scores(self) -> List[float]:
        """The score each packed chunk was ranked by (its section heading's when that lifted it),
        parallel to ``chunks``."""
    @property
    def score_parts(self) -> List[Optional[Tuple[float, float]]]:
        """With hybrid scoring (``embedder=``), each packed chunk's ``(bm25, cosine)``, parallel
        to ``chunks`` (``None`` for a part cut to fit); empty otherwise."""
    def dropped_dedup(self) -> int: ...
    def dropped_budget(self) -> int: ...

@final
class TiktokenCounter:
    """Counts tokens with an OpenAI BPE encoding; the tables ship inside the package.

    >>> TiktokenCounter().count("hello world")
    2
    """

    def __new__(cls, encoding: Literal["cl100k_base", "o200k_base"] = "cl100k_base") -> Self:
        """An unknown encoding is a ``TokenizerError`` listing the supported ones."""
    def count(self, text: str) -> int: ...
    def encode(self, text: str) -> List[int]: ...
    def name(self) -> str: ...
    def splits_at_line_starts(self) -> bool: ...
    @property
    def encoding(self) -> str: ...

@final
class HuggingFaceCounter:
    """Counts tokens with a Hugging Face ``tokenizer.json`` (Llama, Mistral, Qwen, ...), read from
    a file; nothing is downloaded. Special tokens are not added.

    >>> counter = HuggingFaceCounter.from_file("tokenizer.json")  # doctest: +SKIP
    """

    @staticmethod
    def from_file(path: Union[str, "os.PathLike[str]"]) -> "HuggingFaceCounter":
        """A ``TokenizerError`` names the file when it cannot be read or parsed."""
    def count(self, text: str) -> int: ...
    def encode(self, text: str) -> List[int]: ...
    def name(self) -> str:
        """``hf:`` and the file name, e.g. ``hf:tokenizer.json``."""
    def splits_at_line_starts(self) -> bool: ...
    @property
    def path(self) -> str: ...

@final
class StaticEmbedder:
    """A model2vec-format static embedding model, loaded from a folder (``config.json``,
    ``model.safetensors``, ``tokenizer.json``); nothing is downloaded. A missing or malformed
    file is a ``ValueError`` naming it.

    >>> embedder = StaticEmbedder("target/models/wordllama-l2-256")  # doctest: +SKIP
    >>> vectors = embedder.embed(["is this flag going away"])  # doctest: +SKIP
    """

    def __new__(cls, path: Union[str, "os.PathLike[str]"]) -> Self: ...
    def embed(self, texts: List[str]) -> List[List[float]]:
        """One vector per text, each of ``dimension`` floats (the GIL is released)."""
    @property
    def dimension(self) -> int: ...
    @property
    def id(self) -> str:
        """``model2vec:`` and 12 hex digits of a hash of the model's files."""
    @property
    def path(self) -> str: ...

@disjoint_base
class Parser:
    """A built-in parser of one document type; ``keep_hidden`` keeps the text an HTML page or a
    Word file hides (the other types hide none)."""

    def __new__(cls, document_type: DocumentTypeName, *, keep_hidden: bool = False) -> Self: ...
    @property
    def keep_hidden(self) -> bool: ...
    def name(self) -> str: ...
    def parse(
        self,
        ctx: RequestContext,
        data: Union[bytes, str],
        *,
        source_uri: Optional[str] = None,
        document_id: Optional[str] = None,
        corpus_id: str = "local",
        options: Optional[ParseOptions] = None,
    ) -> ParsedDocument: ...

@final
class OCRRegion:
    """One region of text an OCR engine recognised."""

    def __new__(
        cls, text: str, confidence: float, bbox: Tuple[float, float, float, float], page: Optional[int] = None
    ) -> Self: ...
    @property
    def text(self) -> str: ...
    @property
    def confidence(self) -> float: ...
    @property
    def bbox(self) -> Tuple[float, float, float, float]: ...
    @property
    def page(self) -> Optional[int]: ...

@final
class OCRResult:
    """What an OCR engine recognised on a scan: its name and the regions in reading order."""

    def __new__(cls, engine: str, regions: Sequence[OCRRegion]) -> Self: ...
    @staticmethod
    def from_json(text: str) -> "OCRResult": ...
    @property
    def engine(self) -> str: ...
    @property
    def regions(self) -> List[OCRRegion]: ...

def parse_document(
    ctx: RequestContext,
    data: Union[bytes, str],
    *,
    source_uri: Optional[str] = None,
    document_type: Optional[DocumentTypeName] = None,
    document_id: Optional[str] = None,
    corpus_id: str = "local",
    options: Optional[ParseOptions] = None,
) -> ParsedDocument:
    """Parses one document; the type is ``document_type`` or detected from ``source_uri``."""

def parse_file(
    ctx: RequestContext,
    path: Union[str, "os.PathLike[str]"],
    *,
    document_type: Optional[DocumentTypeName] = None,
    document_id: Optional[str] = None,
    corpus_id: str = "local",
    options: Optional[ParseOptions] = None,
) -> ParsedDocument:
    """Reads (at most ``options.max_input_bytes``, 256 MiB by default) and parses the file at
    ``path``; the type is ``document_type`` or detected from the path's extension; the document is
    named by the path as given (:func:`path_uri`)."""

def detect_document_type(source_uri: str) -> DocumentTypeName: ...

@final
class ParseOptions:
    """How documents are read and parsed; every parse and chunk call takes one as ``options=``.
    The defaults are those of ``ragctl chunk``."""

    def __new__(
        cls,
        *,
        keep_chrome: bool = False,
        keep_hidden: bool = False,
        max_input_bytes: int = 268435456,
        pdf_max_pages: Optional[int] = None,
        pdf_max_text_bytes: Optional[int] = None,
        pdf_max_runs_per_page: Optional[int] = None,
        pdf_max_stream_bytes: Optional[int] = None,
        pdf_max_operations_per_page: Optional[int] = None,
        pdf_max_operations: Optional[int] = None,
        pdf_max_content_bytes: Optional[int] = None,
    ) -> Self: ...
    @property
    def keep_chrome(self) -> bool:
        """Whether HTML site chrome is kept (``ragctl chunk --keep-chrome``)."""
    @property
    def keep_hidden(self) -> bool:
        """Whether text a reader does not see (HTML, DOCX, PDF) is kept (``--keep-hidden``)."""
    @property
    def max_input_bytes(self) -> int:
        """The most bytes a file is read to (``--max-input-bytes``)."""
    @property
    def pdf_max_pages(self) -> int: ...
    @property
    def pdf_max_text_bytes(self) -> int: ...
    @property
    def pdf_max_runs_per_page(self) -> int: ...
    @property
    def pdf_max_stream_bytes(self) -> int: ...
    @property
    def pdf_max_operations_per_page(self) -> int: ...
    @property
    def pdf_max_operations(self) -> int: ...
    @property
    def pdf_max_content_bytes(self) -> int: ...
    def __getnewargs_ex__(self) -> Tuple[Tuple[()], Dict[str, Any]]: ...

def path_uri(path: Union[str, "os.PathLike[str]"]) -> str:
    """A path as ``ragctl chunk`` names it in chunk ids: ``%`` written ``%25`` and each byte that
    is not UTF-8 written ``%XX``."""

def supported_suffixes() -> List[str]:
    """The file-name suffixes of every type the built-in parsers read (``.md``, ``.ocr.json``, ...)."""

def walk_files(
    paths: Sequence[Union[str, "os.PathLike[str]"]],
    *,
    all_files: bool = False,
    ignore_files: bool = True,
    hidden: bool = False,
) -> Tuple[List[Tuple[str, str]], List[str]]:
    """The files ``ragctl chunk PATHS`` would chunk as ``(path, name)`` pairs, and the broken
    symbolic links it would warn about."""
def ocr_result_to_parsed_document(
    ctx: RequestContext,
    ocr_result: Union[OCRResult, Dict[str, JSON]],
    document_id: str,
    corpus_id: str,
    source_uri: str,
) -> ParsedDocument:
    """One paragraph block per region (``engine``, ``ocr_confidence``, ``bbox``, ``page``)."""

@final
class HeadingAwareChunker:
    """Cuts parsed documents into chunks along their headings, within a token budget.

    Every chunk has at most ``max_tokens`` tokens, ``token_count`` is its exact count,
    ``content`` is exactly the source bytes of ``span``, and nothing of the text is lost.

    >>> import asyncio
    >>> ctx = RequestContext("acme")
    >>> chunker = HeadingAwareChunker(max_tokens=512, overlap_tokens=64)
    >>> chunks = asyncio.run(chunker.chunk_text(ctx, "# Setup\\n\\nInstall it.", source_uri="a.md"))
    >>> [c.content for c in chunks]
    ['# Setup', 'Install it.']
    """

    def __new__(
        cls,
        max_tokens: int = 512,
        overlap_tokens: Optional[int] = None,
        token_counter: Optional[TokenCounter] = None,
        fold_headings: bool = False,
    ) -> Self:
        """``overlap_tokens`` defaults to 64, or ``max_tokens // 8`` when that is smaller (the
        library's one rule, as ``ragctl chunk``'s); ``token_counter`` defaults to
        ``TiktokenCounter("cl100k_base")``; ``fold_headings=True`` folds each heading into the first
        body chunk of its section instead of a chunk of its own. A configuration that cannot work
        is a ``ChunkerConfigError`` (a ``ValueError``)."""
    @property
    def max_tokens(self) -> int: ...
    @property
    def overlap_tokens(self) -> int: ...
    @property
    def fold_headings(self) -> bool: ...
    @property
    def token_counter(self) -> TokenCounter: ...
    def chunk(self, ctx: RequestContext, parsed: ParsedDocument) -> Coroutine[Any, Any, List[Chunk]]: ...
    def chunk_blocking(self, ctx: RequestContext, parsed: ParsedDocument) -> List[Chunk]: ...
    def chunk_text(
        self,
        ctx: RequestContext,
        data: Union[bytes, str],
        *,
        source_uri: Optional[str] = None,
        document_type: Optional[DocumentTypeName] = None,
        document_id: Optional[str] = None,
        corpus_id: str = "local",
        options: Optional[ParseOptions] = None,
    ) -> Coroutine[Any, Any, List[Chunk]]:
        """Parses and chunks in one call."""
    def chunk_text_blocking(
        self,
        ctx: RequestContext,
        data: Union[bytes, str],
        *,
        source_uri: Optional[str] = None,
        document_type: Optional[DocumentTypeName] = None,
        document_id: Optional[str] = None,
        corpus_id: str = "local",
        options: Optional[ParseOptions] = None,
    ) -> List[Chunk]: ...
    def chunk_file(
        self,
        ctx: RequestContext,
        path: Union[str, "os.PathLike[str]"],
        *,
        document_type: Optional[DocumentTypeName] = None,
        document_id: Optional[str] = None,
        corpus_id: str = "local",
        options: Optional[ParseOptions] = None,
    ) -> Coroutine[Any, Any, List[Chunk]]:
        """Reads the file at ``path`` (on a worker thread, at most ``options.max_input_bytes``) and chunks it; the type
        is ``document_type`` or detected from the extension (``.md``, ``.html``, ``.docx``, ...)."""
    def chunk_file_blocking(
        self,
        ctx: RequestContext,
        path: Union[str, "os.PathLike[str]"],
        *,
        document_type: Optional[DocumentTypeName] = None,
        document_id: Optional[str] = None,
        corpus_id: str = "local",
        options: Optional[ParseOptions] = None,
    ) -> List[Chunk]: ...
    def health(self) -> Coroutine[Any, Any, str]: ...

@final
class PackerConfig:
    """How a :class:`ContextPacker` packs; checked when a packer is built from it."""

    def __new__(
        cls,
        order: OrderName = "lost_in_middle",
        jaccard_threshold: Optional[float] = None,
        detect_conflicts: bool = True,
        *,
        strategy: StrategyName = "greedy",
        shingle_size: int = 5,
        max_per_document: Optional[int] = None,
        section_aware: bool = True,
        relevance_floor: Optional[float] = None,
        objective: ObjectiveName = "auto",
        verify_counts: bool = False,
        cut_to_fit: bool = True,
    ) -> Self: ...
    order: OrderName
    jaccard_threshold: Optional[float]
    detect_conflicts: bool
    strategy: StrategyName
    shingle_size: int
    max_per_document: Optional[int]
    section_aware: bool
    relevance_floor: Optional[float]
    objective: ObjectiveName
    verify_counts: bool
    cut_to_fit: bool

@final
class ContextPacker:
    """Packs retrieved chunks into a token budget: tenant check, dedup, selection, order, conflicts.

    >>> import asyncio
    >>> ctx = RequestContext("acme")
    >>> chunks = [Chunk("a", "d", "acme", "Rerankers score pairs.", score=0.9)]
    >>> packed = asyncio.run(ContextPacker().pack(ctx, chunks, budget=4000))
    >>> packed.tokens_used, packed.tokens_budget
    (5, 4000)
    """

    def __new__(cls, config: Optional[PackerConfig] = None, token_counter: Optional[TokenCounter] = None) -> Self: ...
    @property
    def config(self) -> PackerConfig: ...
    @property
    def token_counter(self) -> TokenCounter: ...
    def pack(
        self,
        ctx: RequestContext,
        chunks: Iterable[Chunk],
        budget: int,
        *,
        query: Optional[str] = None,
        embedder: Optional[Embedder] = None,
    ) -> Coroutine[Any, Any, PackedContext]:
        """Packs ``chunks`` into ``budget`` tokens. With ``query``, chunks without a score are scored
        as ``ragctl pack`` scores them (BM25 when none of the visible chunks has a score), after the
        tenant and access checks, over the chunks the principal may see only."""
    def pack_blocking(
        self,
        ctx: RequestContext,
        chunks: Iterable[Chunk],
        budget: int,
        *,
        query: Optional[str] = None,
        embedder: Optional[Embedder] = None,
    ) -> PackedContext: ...
    def pack_context(
        self,
        ctx: RequestContext,
        chunks: Iterable[Chunk],
        budget: int,
        *,
        query: Optional[str] = None,
        template: str = "{content}",
        delimiter: str = "\n\n",
        breadcrumbs: Optional[bool] = None,
        merge_adjacent: bool = True,
        embedder: Optional[Embedder] = None,
    ) -> Coroutine[Any, Any, PackedContext]:
        """Packs and renders the prompt context within ``budget`` tokens of the rendered text."""
    def pack_context_blocking(
        self,
        ctx: RequestContext,
        chunks: Iterable[Chunk],
        budget: int,
        *,
        query: Optional[str] = None,
        template: str = "{content}",
        delimiter: str = "\n\n",
        breadcrumbs: Optional[bool] = None,
        merge_adjacent: bool = True,
        embedder: Optional[Embedder] = None,
    ) -> PackedContext: ...

@final
class ContextConfig:
    """A template rendering each chunk (``{content}``, ``{id}``, ``{source_uri}``, ``{score}``,
    ``{heading_path}``, ``{metadata.KEY}``; ``{{``/``}}`` for braces)."""

    def __new__(cls, template: str = "{content}") -> Self: ...
    @property
    def template(self) -> str: ...
    def render(self, chunk: Chunk) -> str: ...

@final
class RepackerEngine:
    """One checked Repacker configuration (used by :class:`rag_packer.Repacker`)."""

    def __new__(
        cls,
        *,
        method: str,
        mode: str,
        delimiter: str,
        size_limit: Optional[int],
        context_config: Optional[ContextConfig],
        pack: str,
        batch_size: Union[int, None, str],
    ) -> Self: ...
    def repack(self, chunks: List[Chunk], sizes: Optional[List[int]] = None) -> Coroutine[Any, Any, Any]: ...
    def repack_blocking(self, chunks: List[Chunk], sizes: Optional[List[int]] = None) -> Any: ...

OPTIMAL_CELL_LIMIT: int

def normalise(text: str) -> str: ...
def normalised_words(text: str) -> List[str]: ...
def shingles(words: Sequence[str], size: int = 5) -> Set[str]: ...
def jaccard(a: Set[str], b: Set[str]) -> float: ...
def content_hash(text: str) -> str: ...
def hash_dedup(chunks: Iterable[Chunk]) -> List[Chunk]: ...
def jaccard_dedup(chunks: Iterable[Chunk], threshold: float, shingle_size: int = 5) -> List[Chunk]: ...
def rank_order(chunks: Iterable[Chunk]) -> List[int]: ...
def descending_order(chunks: Iterable[Chunk]) -> List[Chunk]: ...
def ascending_order(chunks: Iterable[Chunk]) -> List[Chunk]: ...
def lost_in_middle_order(items: Sequence[_T]) -> List[_T]: ...
def sides_order(items: Sequence[_T]) -> List[_T]: ...
def fit_to_budget(
    chunks: Iterable[Chunk],
    budget: int,
    token_counter: Optional[TokenCounter] = None,
    max_per_document: Optional[int] = None,
) -> List[Chunk]: ...
def knapsack_select(
    chunks: Iterable[Chunk],
    budget: int,
    token_counter: Optional[TokenCounter] = None,
    max_per_document: Optional[int] = None,
) -> List[Chunk]: ...
def optimal_select(
    chunks: Iterable[Chunk],
    budget: int,
    token_counter: Optional[TokenCounter] = None,
    max_per_document: Optional[int] = None,
) -> List[Chunk]: ...
def detect_conflicts(chunks: Iterable[Chunk]) -> List[ConflictAnnotation]: ...
def bm25_scores(query: str, texts: Sequence[str]) -> List[float]: ...
def bm25_chunk_scores(query: str, chunks: Iterable[Chunk]) -> List[float]: ...
