"""Reading documents from paths: the options every parse call takes, the walk, the name rule.

These are the CLI's own definitions (``rag_chunker::ingest``), so each test compares with what
``ragctl chunk`` does or asserts what a user relies on when they switch between the two."""

from __future__ import annotations

import pickle
import re
import subprocess
import warnings
from pathlib import Path

import pytest

from rag_chunker import HeadingAwareChunker, ParseOptions, parse_document, parse_file, path_uri
from rag_core.errors import ParseError
from ragctl.integrations import supported_files

# The flags of `ragctl chunk` that set how a file is read or parsed, and the ParseOptions
# keyword that sets the same thing from Python.
CLI_PARSE_FLAGS = {
    "--keep-chrome": "keep_chrome",
    "--keep-hidden": "keep_hidden",
    "--max-input-bytes": "max_input_bytes",
}

PAGE = b"<html><body><nav><a href='/'>Home</a> | <a href='/blog'>Blog</a></nav><main><h1>Install</h1><p>Run the installer.</p></main></body></html>"


def test_python_sets_every_parse_option_the_cli_has(ragctl_bin: str) -> None:
    help_text = subprocess.run([ragctl_bin, "chunk", "--help"], capture_output=True, text=True, check=True).stdout
    for flag, keyword in CLI_PARSE_FLAGS.items():
        assert re.search(rf"\s{flag}\b", help_text), f"ragctl chunk has no {flag}"
        assert hasattr(ParseOptions(), keyword), f"ParseOptions has no {keyword} for {flag}"
    # The defaults are the CLI's.
    assert ParseOptions().max_input_bytes == 256 << 20
    assert ParseOptions().keep_chrome is False
    assert ParseOptions().keep_hidden is False


def test_keep_hidden_keeps_what_html_and_docx_hide(ctx) -> None:
    page = b'<p>Shown.</p><p style="display: none">Hidden.</p>'
    assert parse_document(ctx, page, source_uri="p.html").text == "Shown."
    kept = parse_document(ctx, page, source_uri="p.html", options=ParseOptions(keep_hidden=True))
    assert kept.text == "Shown.\n\nHidden."
    chunker = HeadingAwareChunker(max_tokens=64)
    chunks = chunker.chunk_text_blocking(ctx, page, source_uri="p.html", options=ParseOptions(keep_hidden=True))
    assert "Hidden." in "".join(chunk.content for chunk in chunks)


def test_keep_chrome_keeps_an_html_pages_navigation(ctx) -> None:
    left_out = parse_document(ctx, PAGE, source_uri="page.html")
    kept = parse_document(ctx, PAGE, source_uri="page.html", options=ParseOptions(keep_chrome=True))
    assert "Blog" not in left_out.text
    assert "Blog" in kept.text
    assert "Run the installer." in left_out.text


def test_a_file_over_max_input_bytes_is_refused_before_it_is_parsed(ctx, tmp_path: Path) -> None:
    page = tmp_path / "guide.md"
    page.write_text("# Guide\n\n" + "word " * 100)
    with pytest.raises(ParseError, match="exceeds the limit of 100 bytes") as raised:
        parse_file(ctx, page, options=ParseOptions(max_input_bytes=100))
    assert raised.value.source_uri == str(page)
    chunker = HeadingAwareChunker(max_tokens=64)
    with pytest.raises(ParseError, match="exceeds the limit"):
        chunker.chunk_file_blocking(ctx, page, options=ParseOptions(max_input_bytes=100))
    assert chunker.chunk_file_blocking(ctx, page, options=ParseOptions(max_input_bytes=1000))


def test_pdf_limits_are_settable_and_enforced(ctx) -> None:
    pdf = (Path(__file__).resolve().parents[3] / "eval" / "corpus" / "nodejs-api" / "pdf").glob("*.pdf")
    first = sorted(pdf)[0]
    with pytest.raises(ParseError, match="exceeds the limit of 1"):
        parse_file(ctx, first, options=ParseOptions(pdf_max_pages=1))
    with pytest.raises(ValueError, match="pdf_max_pages must be at least 1"):
        ParseOptions(pdf_max_pages=0)


def test_options_pickle_for_ray_workers() -> None:
    options = ParseOptions(keep_chrome=True, keep_hidden=True, max_input_bytes=1 << 20, pdf_max_pages=7, pdf_max_operations=9)
    back = pickle.loads(pickle.dumps(options))
    assert back == options and back != ParseOptions(keep_chrome=True, max_input_bytes=1 << 20, pdf_max_pages=7)
    assert back.pdf_max_pages == 7 and back.keep_chrome and back.keep_hidden and back.pdf_max_operations == 9
    assert repr(back).startswith("ParseOptions(keep_chrome=True, keep_hidden=True, max_input_bytes=1048576, pdf_max_pages=7")


def test_names_follow_the_clis_rule() -> None:
    assert path_uri("docs/guide.md") == "docs/guide.md"
    assert path_uri("docs/100%.md") == "docs/100%25.md"
    assert path_uri(b"caf\xe9.md".decode("utf-8", "surrogateescape")) == "caf%E9.md"


def test_supported_files_walks_as_the_cli_does(tmp_path: Path, ragctl_bin: str) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "build").mkdir()
    (repo / ".hidden").mkdir()
    (repo / ".gitignore").write_text("build/\n")
    (repo / "a.md").write_text("# A\n")
    (repo / "b.txt").write_text("B\n")
    (repo / "build" / "out.md").write_text("# Out\n")
    (repo / ".hidden" / "h.md").write_text("# H\n")
    (repo / "logo.png").write_bytes(b"\x89PNG")
    found = [Path(p).relative_to(repo).as_posix() for p in supported_files(repo)]
    assert found == ["a.md", "b.txt"]
    everything = supported_files(repo, ignore_files=False, hidden=True, all_files=True)
    assert {Path(p).relative_to(repo).as_posix() for p in everything} >= {"build/out.md", ".hidden/h.md", "logo.png"}
    # The CLI chunks the same files, in the same order.
    listed = subprocess.run(
        [ragctl_bin, "chunk", str(repo), "--format", "jsonl"], capture_output=True, text=True, check=True
    ).stdout
    sources = []
    for line in listed.splitlines():
        source = re.search(r'"source_uri":"([^"]*)"', line)
        if source and source.group(1) not in sources:
            sources.append(source.group(1))
    assert sources == [str(repo / "a.md"), str(repo / "b.txt")]


def test_a_missing_path_is_file_not_found_and_a_broken_link_a_warning(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="missing.md: cannot read"):
        supported_files(tmp_path / "missing.md")
    (tmp_path / "a.md").write_text("# A\n")
    (tmp_path / "dangling.md").symlink_to(tmp_path / "nowhere.md")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        found = supported_files(tmp_path)
    assert [Path(p).name for p in found] == ["a.md"]
    assert any("dangling.md: symbolic link cannot be followed" in str(w.message) for w in caught)


def test_source_code_is_read_along_its_syntax(ctx, tmp_path: Path) -> None:
    (tmp_path / "tool.py").write_text(
        "import os\n\n\nclass Command:\n    def invoke(self, ctx):\n        return os.getcwd()\n"
    )
    (tmp_path / "main.go").write_text("package main\n\nfunc Run() int {\n\treturn 1\n}\n")
    found = [Path(p).name for p in supported_files([tmp_path])]
    assert found == ["main.go", "tool.py"]
    chunker = HeadingAwareChunker(max_tokens=12)
    chunks = chunker.chunk_file_blocking(ctx, tmp_path / "tool.py")
    [invoke] = [c for c in chunks if c.content.startswith("def invoke")]
    assert invoke.metadata["heading_path"] == ["class Command", "def invoke"]
    assert invoke.metadata["kind"] == "function"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        broken = chunker.chunk_text_blocking(ctx, b"def broken(:\n    pass\n", source_uri="bad.py")
    assert "".join(c.content for c in broken).replace("\n", "").replace(" ", "") == "defbroken(:pass"
    assert any("syntax errors at 1 place" in str(w.message) for w in caught), caught
