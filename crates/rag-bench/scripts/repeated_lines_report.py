#!/usr/bin/env python3
"""Page furniture against content that repeats: PDFs written by reportlab (the standard fonts,
as report and invoice generators write them) whose pages repeat lines that are content, and
what of them the PDF parser keeps.

    python3 repeated_lines_report.py --ragctl RAGCTL OUT_DIR

Writes three PDFs to OUT_DIR and chunks each with `RAGCTL chunk FILE --format text` and
`--format rendition`:

* `invoices.pdf`: four invoices, one a page, each headed "Invoice 1017 for customer 5511" (the
  numbers grow by ten, not with the page), a header row "Date Description Amount", five rows, a
  total, and the footer "Page n of 4";
* `report.pdf`: one table of 120 rows over several pages, its header row repeated at the top of
  each (reportlab's `repeatRows`), under the title "Quarterly expenses", a footer "Page n";
* `same-pages.pdf`: three pages that carry the same head and foot and nothing else.

For each it prints the lines drawn that are content (all but the footers), how many of them
the rendition holds (their letters and digits in order, together), which it misses, the bytes left out as page furniture, the
chunks and the warnings. Needs `pip install reportlab` (checked with 5.1.0). The output is the
same for the same version: reportlab's `invariant` mode fixes dates and ids.
"""

import argparse
import pathlib
import re
import subprocess

from reportlab.lib import colors
from reportlab.lib.pagesizes import letter
from reportlab.lib.styles import getSampleStyleSheet
from reportlab.platypus import PageBreak, Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle

STYLE = TableStyle([("FONTNAME", (0, 0), (-1, 0), "Helvetica-Bold"), ("LINEBELOW", (0, 0), (-1, 0), 0.5, colors.black)])


def footer(text):
    def draw(canvas, doc):
        canvas.saveState()
        canvas.setFont("Helvetica", 8)
        canvas.drawCentredString(letter[0] / 2, 36, text.format(page=doc.page))
        canvas.restoreState()

    return draw


def invoices(path):
    styles = getSampleStyleSheet()
    story, content = [], []
    for n in range(4):
        title = f"Invoice {1017 + 10 * n} for customer {5511 + 10 * n}"
        rows = [["Date", "Description", "Amount"]]
        rows += [[f"2026-0{n + 1}-{10 + r}", f"Service item {n}{r}", f"{100 + 10 * r + n}.00"] for r in range(5)]
        total = f"Total due: {sum(100 + 10 * r + n for r in range(5))}.00"
        story += [Paragraph(title, styles["Heading2"]), Table(rows, style=STYLE), Spacer(1, 12), Paragraph(total, styles["Normal"])]
        if n < 3:
            story.append(PageBreak())
        content += [title, *(" ".join(row) for row in rows), total]
    doc = SimpleDocTemplate(str(path), pagesize=letter, invariant=1)
    doc.build(story, onFirstPage=footer("Page {page} of 4"), onLaterPages=footer("Page {page} of 4"))
    return content


def report(path):
    styles = getSampleStyleSheet()
    rows = [["Date", "Description", "Amount"]]
    rows += [[f"2026-{1 + i // 40:02}-{1 + i % 28:02}", f"Expense line {i} for project {i % 7}", f"{(37 * i) % 500 + 20}.00"] for i in range(120)]
    story = [Paragraph("Quarterly expenses", styles["Heading1"]), Table(rows, style=STYLE, repeatRows=1)]
    doc = SimpleDocTemplate(str(path), pagesize=letter, invariant=1)
    doc.build(story, onFirstPage=footer("Page {page}"), onLaterPages=footer("Page {page}"))
    return ["Quarterly expenses", *(" ".join(row) for row in rows)]


def same_pages(path):
    # A letterhead printed without a letter: the same head and foot on every page, nothing else.
    from reportlab.pdfgen.canvas import Canvas

    canvas = Canvas(str(path), pagesize=letter, invariant=1)
    for _ in range(3):
        canvas.setFont("Helvetica-Bold", 12)
        canvas.drawString(72, letter[1] - 50, "ACME Corporation, 1 Harbour Road")
        canvas.setFont("Helvetica", 8)
        canvas.drawString(72, 40, "Confidential: for the addressee only")
        canvas.showPage()
    canvas.save()
    return ["ACME Corporation, 1 Harbour Road", "Confidential: for the addressee only"]


def letters(text):
    """`text`'s letters and digits, lower-cased: a line is found when they appear in order and
    together, whatever the spaces between its words (the standard fonts' widths are guessed, so
    two cells can be read without the space between them)."""
    return re.sub(r"\W", "", text.replace("`", "").lower())


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ragctl", required=True)
    parser.add_argument("out_dir", type=pathlib.Path)
    args = parser.parse_args()
    args.out_dir.mkdir(parents=True, exist_ok=True)
    for make in (invoices, report, same_pages):
        path = args.out_dir / f"{make.__name__.replace('_', '-')}.pdf"
        content = make(path)
        summary = subprocess.run([args.ragctl, "chunk", str(path), "--format", "text"], capture_output=True, text=True)
        rendition = subprocess.run([args.ragctl, "chunk", str(path), "--format", "rendition"], capture_output=True, text=True).stdout
        held = letters(rendition)
        missed = [line for line in content if letters(line) not in held]
        left_out = re.search(r"left out:\s+(.*)", summary.stdout)
        chunks = re.search(r"chunks:\s+(\d+)", summary.stdout) or re.search(r"(\d+) chunks", summary.stdout)
        print(f"== {path.name}: {len(content) - len(missed)}/{len(content)} content lines in the rendition")
        print(f"   left out: {left_out[1] if left_out else 'nothing'}; chunks: {chunks[1] if chunks else '?'}; exit {summary.returncode}")
        for line in missed:
            print(f"   missed: {line}")
        for line in summary.stderr.splitlines():
            print(f"   stderr: {line}")


if __name__ == "__main__":
    main()
