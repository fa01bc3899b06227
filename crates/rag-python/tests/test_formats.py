"""Documents as users have them, from Python: HTML and DOCX by path or bytes, their renditions,
and each chunk's provenance in the original file."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

import rag_chunker
from rag_chunker import DocxParser, HeadingAwareChunker, HtmlParser, detect_document_type, parse_file
from rag_core import RequestContext
from rag_core.errors import ParseError
from ragctl.integrations import supported_files

from conftest import REPO

DOCX = REPO / "crates" / "rag-chunker" / "tests" / "fixtures" / "docx" / "pandoc-stack-ls.docx"

PAGE = """<!doctype html>
<html><head><meta charset="windows-1252"><title>Guide</title><script>var x = 1;</script></head>
<body><nav><a href="/">Home</a></nav>
<main>
<h1>Install</h1>
<p>Run the installer, then restart the caf\xe9 service.</p>
<h2>Configure</h2>
<p>Set <code>PORT</code> before the first start.</p>
<pre><code class="language-sh">export PORT=8080
</code></pre>
</main></body></html>
""".encode("latin-1")


def write_page(tmp_path: Path, name: str = "guide.html") -> Path:
    path = tmp_path / name
    path.write_bytes(PAGE)
    return path


def test_an_html_file_by_path_is_chunked_along_its_headings_with_byte_provenance(
    ctx: RequestContext, tmp_path: Path
) -> None:
    path = write_page(tmp_path)
    parsed = parse_file(ctx, path)
    chunks = HeadingAwareChunker(max_tokens=64, overlap_tokens=0).chunk_file_blocking(ctx, path)
    assert [c.heading_path for c in chunks if c.metadata["kind"] == "body"][:2] == [
        ["Install"],
        ["Install", "Configure"],
    ]
    assert all("var x" not in (c.content or "") and "Home" not in (c.content or "") for c in chunks)
    for chunk in chunks:
        assert chunk.span is not None
        text = parsed.text.encode("utf-8")
        assert text[chunk.span.start : chunk.span.end].decode("utf-8") == chunk.content
        assert chunk.document_id == str(path)
    # Each body chunk's provenance names bytes of the page (as read, in windows-1252) that hold
    # its words.
    cafe = next(c for c in chunks if "café" in (c.content or ""))
    [origin] = cafe.provenance
    assert origin["kind"] == "bytes"
    original = PAGE[origin["start"] : origin["end"]].decode("latin-1")
    assert "Run the installer" in original and "café" in original
    rendition = parsed.rendition
    assert rendition is not None and rendition["format"] == "html"
    assert rendition["original_bytes"] == len(PAGE)
    assert rendition["left_out"]["script"] > 0 and rendition["left_out"]["chrome"] > 0
    assert parsed.provenance(cafe.span) == cafe.provenance


def test_a_docx_by_path_or_bytes_gives_the_same_chunks_with_paragraph_provenance(
    ctx: RequestContext, tmp_path: Path
) -> None:
    chunker = HeadingAwareChunker(max_tokens=128, overlap_tokens=16)
    by_path = chunker.chunk_file_blocking(ctx, DOCX, document_id="stack.docx")
    by_bytes = chunker.chunk_text_blocking(ctx, DOCX.read_bytes(), source_uri="stack.docx", document_type="docx")
    assert by_path
    assert [c.content for c in by_path] == [c.content for c in by_bytes]
    assert [c.id for c in by_path] == [c.id for c in by_bytes]
    kinds = {o["kind"] for c in by_path for o in c.provenance}
    assert kinds == {"paragraphs"}
    assert all(o["part"] == "word/document.xml" and o["first"] <= o["last"] for c in by_path for o in c.provenance)
    assert any(c.metadata["kind"] == "heading" for c in by_path)
    # The provenance survives the chunk's JSON form.
    assert type(by_path[1]).from_json(by_path[1].to_json()).provenance == by_path[1].provenance
    # The parser classes read the same formats.
    assert DocxParser().parse(ctx, DOCX.read_bytes(), source_uri="stack.docx").text == parse_file(ctx, DOCX).text
    assert HtmlParser().name() == "html"


def test_the_async_twin_reads_the_file_off_the_event_loop(ctx: RequestContext, tmp_path: Path) -> None:
    path = write_page(tmp_path)
    chunker = HeadingAwareChunker(max_tokens=64, overlap_tokens=0)
    chunks = asyncio.run(chunker.chunk_file(ctx, str(path)))
    assert [c.content for c in chunks] == [c.content for c in chunker.chunk_file_blocking(ctx, path)]


def test_unreadable_paths_are_parse_errors_naming_them(ctx: RequestContext, tmp_path: Path) -> None:
    chunker = HeadingAwareChunker()
    missing = tmp_path / "missing.md"
    with pytest.raises(ParseError, match="missing.md: cannot read") as err:
        chunker.chunk_file_blocking(ctx, missing)
    assert err.value.source_uri == str(missing)
    with pytest.raises(ParseError, match="cannot read"):
        parse_file(ctx, tmp_path, document_type="markdown")
    with pytest.raises(ParseError, match=r'unsupported file type "pptx"'):
        chunker.chunk_file_blocking(ctx, tmp_path / "deck.pptx")
    broken = tmp_path / "broken.docx"
    broken.write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(ParseError, match="broken.docx: not a DOCX"):
        chunker.chunk_file_blocking(ctx, broken)


def test_a_path_is_named_as_ragctl_chunk_names_it(ctx: RequestContext, tmp_path: Path) -> None:
    path = tmp_path / "100%.md"
    path.write_text("# A\n\nB.\n")
    chunks = HeadingAwareChunker().chunk_file_blocking(ctx, path)
    assert chunks[0].id == f"{str(path).replace('%', '%25')}#0"


def test_supported_files_walk_a_directory_as_ragctl_chunk_does(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / ".hidden").mkdir()
    write_page(tmp_path / "sub", "b.HTML")
    shutil.copy(DOCX, tmp_path / "a.docx")
    (tmp_path / "c.md").write_text("# C\n")
    (tmp_path / "logo.png").write_bytes(b"\x89PNG")
    (tmp_path / ".hidden" / "d.md").write_text("# D\n")
    found = supported_files(tmp_path)
    assert [Path(p).relative_to(tmp_path).as_posix() for p in found] == ["a.docx", "c.md", "sub/b.HTML"]
    # A file named explicitly is taken whatever its name.
    assert supported_files([tmp_path / "logo.png"]) == [str(tmp_path / "logo.png")]
    with pytest.raises(FileNotFoundError, match="nope"):
        supported_files(tmp_path / "nope")


def test_the_ray_recipe_takes_every_type_ragctl_chunk_takes() -> None:
    ray = pytest.importorskip("ragctl.integrations.ray")
    for suffix in ray.SUPPORTED_SUFFIXES:
        detect_document_type(f"x{suffix}")
    for name in ("x.html", "x.htm", "x.xhtml", "x.docx"):
        assert any(name.endswith(s) for s in ray.SUPPORTED_SUFFIXES)


def test_a_pdf_is_chunked_with_pages_and_boxes(ctx: RequestContext) -> None:
    from rag_chunker import PdfParser

    pdf = REPO / "crates" / "rag-chunker" / "tests" / "fixtures" / "pdf" / "guide.pdf"
    chunks = HeadingAwareChunker(max_tokens=128).chunk_file_blocking(ctx, pdf)
    assert len(chunks) > 3
    for chunk in chunks:
        for origin in chunk.provenance:
            assert origin["kind"] == "page" and origin["page"] >= 1
            x0, y0, x1, y1 = origin["bbox"]
            assert x0 < x1 and y0 < y1
    assert PdfParser().parse(ctx, pdf.read_bytes(), source_uri="guide.pdf").rendition["format"] == "pdf"


def test_a_directory_is_reported_as_one_with_the_api_that_reads_directories(
    ctx: RequestContext, tmp_path: Path
) -> None:
    chunker = HeadingAwareChunker()
    # Without an extension, and with one that names a type.
    for name in ("docs", "folder.html"):
        directory = tmp_path / name
        directory.mkdir()
        (directory / "a.md").write_text("# A\n")
        for call in (
            lambda: parse_file(ctx, directory),
            lambda: chunker.chunk_file_blocking(ctx, directory),
            lambda: asyncio.run(chunker.chunk_file(ctx, directory)),
            lambda: parse_file(ctx, directory, document_type="markdown"),
        ):
            with pytest.raises(ParseError, match="is a directory") as err:
                call()
            assert str(err.value).startswith(f"{directory}: cannot read: is a directory")
            assert "ragctl.integrations.supported_files" in str(err.value)
        assert supported_files(directory) == [str(directory / "a.md")]


def test_provenance_of_a_span_past_the_end_is_a_value_error(ctx: RequestContext, tmp_path: Path) -> None:
    parsed = parse_file(ctx, write_page(tmp_path))
    size = len(parsed.text.encode("utf-8"))
    assert parsed.provenance((0, size))
    for span in [(0, size + 10**6), (size, size + 1), (5, 2)]:
        with pytest.raises(ValueError, match="past the end|reversed"):
            parsed.provenance(span)
    # The same for a document that is its own text.
    markdown = rag_chunker.parse_document(ctx, "# A\n", source_uri="a.md")
    assert markdown.provenance((0, 4)) == []
    with pytest.raises(ValueError, match=r"span 0\.\.5 is past the end of the document's text \(4 bytes\)"):
        markdown.provenance((0, 5))


def docx_of(body: str, media: int = 0) -> bytes:
    """A Word file of one part, `body` the content of its body, with `media` images beside it."""
    import io
    import zipfile

    xml = (
        '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
        f"<w:body>{body}</w:body></w:document>"
    )
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as package:
        package.writestr("word/document.xml", xml)
        for i in range(media):
            package.writestr(f"word/media/image{i + 1}.png", b"\x89PNG not really")
    return out.getvalue()


def test_hidden_text_is_left_out_unless_the_parser_keeps_it(ctx: RequestContext) -> None:
    page = b'<p>Shown.</p><p style="DISPLAY : NONE !important">Hidden.</p><p aria-hidden="true">Aria.</p>'
    parsed = HtmlParser().parse(ctx, page, source_uri="p.html")
    assert parsed.text == "Shown."
    assert parsed.rendition is not None and parsed.rendition["left_out"]["hidden"] == len("Hidden.Aria.")
    kept = HtmlParser(keep_hidden=True)
    assert kept.keep_hidden and not HtmlParser().keep_hidden
    assert kept.parse(ctx, page, source_uri="p.html").text == "Shown.\n\nHidden.\n\nAria."
    docx = docx_of(
        '<w:p><w:r><w:t xml:space="preserve">Shown </w:t></w:r>'
        "<w:r><w:rPr><w:vanish/></w:rPr><w:t>hidden</w:t></w:r></w:p>"
    )
    assert DocxParser().parse(ctx, docx, source_uri="h.docx").text == "Shown"
    assert DocxParser(keep_hidden=True).parse(ctx, docx, source_uri="h.docx").text == "Shown hidden"
    assert repr(DocxParser(keep_hidden=True)) == 'Parser("docx", keep_hidden=True)'


def test_a_document_without_text_says_why_in_its_warnings(ctx: RequestContext) -> None:
    menu = rag_chunker.parse_document(ctx, b"<nav><a href=/>Home</a></nav>", source_uri="menu.html")
    assert menu.warnings == ["no text: all of the file was left out, as 4 B of chrome"]
    assert rag_chunker.parse_document(ctx, b"", source_uri="empty.md").warnings == ["no text: the file is empty"]
    scan = rag_chunker.parse_document(ctx, docx_of("<w:p><w:r><w:drawing/></w:r></w:p>" * 2, media=2), source_uri="scan.docx")
    assert scan.warnings == [
        "no text: the document is 2 images and no text; they are not read (run OCR on them to chunk their text)"
    ]
    assert rag_chunker.parse_document(ctx, b"# Notes\n", source_uri="notes.md").warnings == []


def test_chunking_a_document_warns_what_its_parser_said(ctx: RequestContext, tmp_path: Path) -> None:
    from rag_core import ParseWarning

    chunker = HeadingAwareChunker()
    scan = tmp_path / "scan.docx"
    scan.write_bytes(docx_of("<w:p><w:r><w:drawing/></w:r></w:p>", media=1))
    with pytest.warns(ParseWarning) as caught:
        assert chunker.chunk_file_blocking(ctx, scan) == []
    assert [str(w.message) for w in caught] == [
        f"{scan}: no text: the document is one image and no text; it is not read (run OCR on it to chunk its text)"
    ]
    with pytest.warns(ParseWarning, match="menu.html: no text: all of the file was left out, as 4 B of chrome"):
        assert asyncio.run(chunker.chunk_text(ctx, "<nav><a href=/>Home</a></nav>", source_uri="menu.html")) == []
    # A document with text says nothing; warnings as errors stop the call.
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert chunker.chunk_text_blocking(ctx, "# Notes\n", source_uri="notes.md")
        with pytest.raises(ParseWarning):
            chunker.chunk_file_blocking(ctx, scan)
