"""Parsers: the bytes (or text) of one document in, a :class:`rag_core.ParsedDocument` out.

``parse_document`` picks the parser from ``document_type`` or the extension of ``source_uri``
(``.md``/``.markdown``, ``.txt``/``.text``, ``.ocr.json``). Spans are UTF-8 byte offsets into the
document's text, which is the input exactly as given (a byte-order mark and CRLF kept).

>>> from rag_core import RequestContext
>>> from rag_chunker import parse_document
>>> parsed = parse_document(RequestContext("acme"), "# Install\\n\\nRun it.\\n", source_uri="guide.md")
>>> [b.block_type for b in parsed.blocks]
['heading', 'paragraph']
"""

from __future__ import annotations

from ragctl._native import (
    OCRRegion,
    OCRResult,
    Parser,
    detect_document_type,
    ocr_result_to_parsed_document,
    parse_document,
)

__all__ = [
    "MarkdownParser",
    "OCRRegion",
    "OCRResult",
    "OcrJsonParser",
    "Parser",
    "PlainTextParser",
    "detect_document_type",
    "ocr_result_to_parsed_document",
    "parse_document",
]


class MarkdownParser(Parser):
    """CommonMark with tables, footnotes and front matter: headings, paragraphs, list items,
    table rows, code, quotes, and ``other`` for the rest, so nothing is lost."""

    def __new__(cls) -> "MarkdownParser":
        return super().__new__(cls, "markdown")


class PlainTextParser(Parser):
    """Plain text: one paragraph block per run of non-blank lines."""

    def __new__(cls) -> "PlainTextParser":
        return super().__new__(cls, "text")


class OcrJsonParser(Parser):
    """An OCR result as JSON (an ``.ocr.json`` file): one paragraph block per region."""

    def __new__(cls) -> "OcrJsonParser":
        return super().__new__(cls, "ocr")
