"""Parsers: the bytes (or text) of one document in, a :class:`rag_core.ParsedDocument` out.

``parse_document`` picks the parser from ``document_type`` or the extension of ``source_uri``
(``.md``/``.markdown``, ``.txt``/``.text``, ``.ocr.json``, ``.html``/``.htm``/``.xhtml``,
``.docx``, ``.pdf``); ``parse_file`` reads a file by path. Spans are UTF-8 byte offsets into the document's
text: for Markdown and text the input exactly as given (a byte-order mark and CRLF kept); for
HTML, DOCX, PDF and OCR a Markdown-flavoured rendition, which ``ParsedDocument.rendition`` maps back
to the file (``ParsedDocument.provenance(span)``, ``Chunk.provenance``).

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
    ParseOptions,
    Parser,
    detect_document_type,
    ocr_result_to_parsed_document,
    parse_document,
    parse_file,
    path_uri,
)

__all__ = [
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


class HtmlParser(Parser):
    """An HTML page, parsed as browsers parse it (html5ever), in the encoding the page declares:
    headings, paragraphs, list items, table rows, fenced code, quotes and captions of a
    Markdown-flavoured rendition; scripts, styles, comments and site chrome left out and counted
    (``ParsedDocument.rendition``), each stretch mapped to the bytes of the page. Elements the page
    hides (the ``hidden`` attribute, ``aria-hidden="true"``, an inline ``display: none`` or
    ``visibility: hidden``) are left out as ``hidden`` unless ``keep_hidden``."""

    def __new__(cls, *, keep_hidden: bool = False) -> "HtmlParser":
        return super().__new__(cls, "html", keep_hidden=keep_hidden)


class DocxParser(Parser):
    """A Word file (``.docx``, given as bytes): headings from its styles and outline levels,
    lists, tables, links' text, notes, in a Markdown-flavoured rendition mapped to the part and
    paragraph each stretch came from; the zip and XML read within documented limits. Hidden
    runs (``w:vanish``, on the run or by its styles) are left out as ``hidden`` unless
    ``keep_hidden``."""

    def __new__(cls, *, keep_hidden: bool = False) -> "DocxParser":
        return super().__new__(cls, "docx", keep_hidden=keep_hidden)


class PdfParser(Parser):
    """A PDF's text layer (given as bytes): reading order across columns, repeated page headers
    and footers left out and counted, hyphenation at line ends joined, headings from font size
    and weight, each stretch mapped to its page and box. A PDF without a text layer, an encrypted
    or a damaged one is a ``ParseError`` saying what to do."""

    def __new__(cls) -> "PdfParser":
        return super().__new__(cls, "pdf")
