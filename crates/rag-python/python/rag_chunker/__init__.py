"""Structure-aware chunking: parsers, the heading-aware chunker, token counters, the OCR adapter.

>>> import asyncio
>>> from rag_core import RequestContext
>>> from rag_chunker import HeadingAwareChunker, parse_document
>>> ctx = RequestContext("acme")
>>> parsed = parse_document(ctx, "# Guide\\n\\n## Install\\n\\nRun `make install`.\\n", source_uri="guide.md")
>>> chunker = HeadingAwareChunker(max_tokens=512, overlap_tokens=64)
>>> chunks = asyncio.run(chunker.chunk(ctx, parsed))
>>> [(c.id, c.metadata["kind"]) for c in chunks]
[('guide.md#0', 'heading'), ('guide.md#1', 'heading'), ('guide.md#2', 'body')]
>>> chunks[2].heading_path
['Guide', 'Install']
"""

from __future__ import annotations

# A literal ``__all__`` (the names of ``parse.__all__`` and ``tokens.__all__`` and the chunker) so
# that type checkers, which do not evaluate ``__all__ += module.__all__``, see the re-exports;
# tests/test_exports.py checks it lists exactly the submodules' names.
from ragctl._native import HeadingAwareChunker
from rag_chunker.parse import *  # noqa: F403
from rag_chunker.tokens import *  # noqa: F403

__all__ = [
    "HeadingAwareChunker",
    # rag_chunker.parse
    "DocxParser",
    "HtmlParser",
    "MarkdownParser",
    "OCRRegion",
    "OCRResult",
    "OcrJsonParser",
    "ParseOptions",
    "Parser",
    "PdfParser",
    "PlainTextParser",
    "detect_document_type",
    "ocr_result_to_parsed_document",
    "parse_document",
    "parse_file",
    "path_uri",
    # rag_chunker.tokens
    "HuggingFaceCounter",
    "TiktokenCounter",
    "TokenCounter",
]
