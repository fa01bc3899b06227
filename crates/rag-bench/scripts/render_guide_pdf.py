#!/usr/bin/env python3
"""Render a directory of Markdown files to PDF with fpdf2, one PDF per file, the way report and
invoice generators write PDFs: the standard 14 fonts, unembedded and without `/Widths`, body text
justified with word spacing (`Tw`), code in Courier, headings larger and bold, a page-number
footer.

    python3 render_guide_pdf.py [--body helvetica|times] MARKDOWN_DIR OUT_DIR

`OUT_DIR/<path>.pdf` is written for every `MARKDOWN_DIR/<path>.md`. The Markdown is read as
CommonMark with tables (markdown-it-py), turned into HTML and drawn by fpdf2's `write_html`.
Typographic quotes and dashes are written in ASCII and characters outside Latin-1 (emoji) are
left out, since fpdf2 draws the standard fonts in Latin-1, and so is raw HTML, which
`write_html` does not draw; `guide-fidelity` compares the PDFs with their Markdown.

Needs `pip install fpdf2 markdown-it-py` (checked with fpdf2 2.8.9, markdown-it-py 4.3.0). The
output is the same for the same input and versions: the creation date is fixed.
"""

import argparse
import datetime
import html
import pathlib
import re
import sys

from fpdf import FPDF, FontFace, TextStyle
from markdown_it import MarkdownIt


class GuidePdf(FPDF):
    """A Letter page with the page number centred in the footer ("Page 3 of 12")."""

    def footer(self):
        self.set_y(-15 * 72 / 25.4)
        self.set_font(self.body_family, size=8)
        self.cell(0, 10, f"Page {self.page_no()} of {{nb}}", align="C")


# fpdf2 draws the standard fonts in Latin-1: typographic punctuation is written in ASCII.
ASCII_PUNCTUATION = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"',
                                   "\u2013": "-", "\u2014": "--", "\u2026": "...", "\u2192": "->"})


def encodable(text):
    """`text` as the standard fonts can draw it: typographic punctuation in ASCII, the other
    characters outside Latin-1 (emoji) left out."""
    text = text.translate(ASCII_PUNCTUATION)
    return "".join(c for c in text if c.encode("latin-1", errors="ignore"))


def to_html(markdown):
    md = MarkdownIt("commonmark", {"html": True}).enable("table")
    body = md.render(markdown)
    # Raw HTML blocks and comments are not drawn (write_html would print unknown tags' text).
    body = re.sub(r"<!--.*?-->", "", body, flags=re.S)
    # An image is drawn as its alt text: nothing is fetched.
    body = re.sub(r'<img\b[^>]*\balt="([^"]*)"[^>]*>', r"\1", body)
    body = re.sub(r"<img\b[^>]*>", "", body)
    # Links are drawn as their text (the guide's anchors are not PDF destinations).
    body = re.sub(r"</?a\b[^>]*>", "", body)
    # write_html draws table cells in one font: their inline markup is dropped, not their text.
    body = re.sub(
        r"<(td|th)([^>]*)>(.*?)</\1>",
        lambda m: f"<{m[1]}{m[2]}>" + re.sub(r"</?(code|em|strong|a)\b[^>]*>", "", m[3]) + f"</{m[1]}>",
        body,
        flags=re.S,
    )
    # Justified body text.
    body = body.replace("<p>", '<p align="justify">')
    return encodable(body)


def render(markdown, body_family):
    pdf = GuidePdf(unit="pt", format="letter")
    pdf.body_family = body_family
    pdf.set_creation_date(datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc))
    pdf.set_margins(72, 72, 72)
    pdf.set_auto_page_break(True, margin=72)
    pdf.add_page()
    pdf.set_font(body_family, size=10)
    heading = lambda size: TextStyle(  # noqa: E731
        font_family=body_family, font_style="B", font_size_pt=size, color="#000", t_margin=12, b_margin=4
    )
    styles = {
        "h1": heading(20),
        "h2": heading(16),
        "h3": heading(13),
        "h4": heading(12),
        "h5": heading(11),
        "h6": heading(10),
        "code": FontFace(family="Courier"),
        "pre": TextStyle(font_family="Courier", font_size_pt=9, t_margin=6, b_margin=6, l_margin=12),
    }
    pdf.write_html(
        to_html(markdown),
        font_family=body_family,
        tag_styles=styles,
        ul_bullet_char="\x95",
        li_prefix_color="#000",
        warn_on_tags_not_matching=False,
    )
    return bytes(pdf.output())


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--body", choices=["helvetica", "times"], default="helvetica")
    parser.add_argument("markdown_dir", type=pathlib.Path)
    parser.add_argument("out_dir", type=pathlib.Path)
    args = parser.parse_args()
    sources = sorted(args.markdown_dir.rglob("*.md"))
    if not sources:
        sys.exit(f"no Markdown file under {args.markdown_dir}")
    for source in sources:
        relative = source.relative_to(args.markdown_dir).with_suffix(".pdf")
        target = args.out_dir / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(render(source.read_text(encoding="utf-8"), args.body))
    print(f"{len(sources)} PDFs in {args.out_dir}")


if __name__ == "__main__":
    main()
