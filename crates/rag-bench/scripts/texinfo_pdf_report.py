#!/usr/bin/env python3
"""Two measures of the PDF parser on Texinfo manuals (pdfTeX), against references made by other
tools from the same manual:

* running heads left in the rendition: the running head of every page, as poppler's `pdftotext
  -layout` prints the page's first line ("Chapter 2: Preparation    5", "4    The Libgcrypt
  Reference Manual"), with its page number taken off; a head's text found in the rendition more
  often than in the rest of the manual's text is a running head left in;
* example blocks fenced as code: the `<pre class="example">` blocks of the HTML edition of the
  same manual (Debian's `r-doc-html` beside `r-doc-pdf`), each found in the rendition line by
  line: fenced (every line inside a fenced code block), partly, or not at all (its lines are in
  the text, out of any code block).

    python3 texinfo_pdf_report.py --ragctl RAGCTL [--html-dir DIR] MANUAL.pdf...

The rendition is `RAGCTL chunk MANUAL.pdf --format rendition`; the HTML edition is
`DIR/<name>.html` (default: beside the PDF), and a manual without one gets only the first
measure. Needs `pdftotext` (Debian `poppler-utils`).
"""

import argparse
import html
import pathlib
import re
import subprocess
import sys

HEAD_NUMBER_LAST = re.compile(r"^\s*(\S.*?\S)\s{3,}(\d+|[ivxlc]+)\s*$")
HEAD_NUMBER_FIRST = re.compile(r"^\s*(\d+|[ivxlc]+)\s{3,}(\S.*?)\s*$")
# The HTML and the PDF edition write quotes and ellipses differently.
QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2026": "...", "`": "'"})


def normalised(text):
    return re.sub(r"\s+", " ", text.translate(QUOTES)).strip()


def pages_of(pdf):
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], check=True, capture_output=True, text=True).stdout
    return text.split("\f")


def running_heads(pages):
    """The running head of each page that has one: (page index, head text without its number)."""
    heads = []
    for index, page in enumerate(pages):
        lines = [line for line in page.splitlines() if line.strip()]
        if not lines:
            continue
        match = HEAD_NUMBER_LAST.match(lines[0]) or HEAD_NUMBER_FIRST.match(lines[0])
        if match:
            head = match[1] if HEAD_NUMBER_LAST.match(lines[0]) else match[2]
            heads.append((index, normalised(head)))
    return heads


def heads_left(pages, rendition):
    heads = running_heads(pages)
    by_text = {}
    for index, head in heads:
        by_text.setdefault(head, []).append(index)
    body = normalised(" ".join(page for page in pages))
    flat = normalised(rendition)
    left = 0
    for head, on_pages in by_text.items():
        in_body = body.count(head) - len(on_pages)
        left += max(0, min(len(on_pages), flat.count(head) - max(0, in_body)))
    return len(heads), left


def examples_of(html_path):
    source = html_path.read_text(encoding="utf-8", errors="replace")
    blocks = []
    for block in re.findall(r'<pre class="example[^"]*">(.*?)</pre>', source, flags=re.S):
        text = html.unescape(re.sub(r"<[^>]+>", "", block))
        lines = [normalised(line) for line in text.splitlines() if line.strip()]
        if lines:
            blocks.append(lines)
    return blocks


def fenced_and_plain(rendition):
    """The rendition's lines inside code fences and outside them (without the backticks of
    inline code), normalised."""
    fenced, plain, inside = [], [], False
    for line in rendition.splitlines():
        if line.startswith("```"):
            inside = not inside
            continue
        if inside:
            fenced.append(normalised(line))
        else:
            plain.append(normalised(line.replace("`", "")))
    return "\n".join(fenced), "\n".join(plain)


def examples_fenced(blocks, rendition):
    fenced, plain = fenced_and_plain(rendition)
    tally = {"fenced": 0, "partly": 0, "unfenced": 0, "not found": 0}
    for lines in blocks:
        inside = sum(1 for line in lines if line in fenced)
        outside = sum(1 for line in lines if line not in fenced and line in plain)
        if inside == len(lines):
            tally["fenced"] += 1
        elif inside > 0:
            tally["partly"] += 1
        elif outside > 0:
            tally["unfenced"] += 1
        else:
            tally["not found"] += 1
    return tally


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ragctl", required=True)
    parser.add_argument("--html-dir", type=pathlib.Path)
    parser.add_argument("pdfs", nargs="+", type=pathlib.Path)
    args = parser.parse_args()
    totals = {"pages": 0, "heads": 0, "left": 0, "examples": 0, "fenced": 0, "partly": 0, "unfenced": 0, "not found": 0}
    print(f"{'manual':<14} {'pages':>5} {'heads':>6} {'left':>5} {'examples':>8} {'fenced':>7} {'partly':>6} {'unfenced':>8} {'missing':>7}")
    for pdf in args.pdfs:
        run = subprocess.run([args.ragctl, "chunk", str(pdf), "--format", "rendition"], capture_output=True, text=True)
        if run.returncode != 0:
            sys.exit(f"{pdf}: {run.stderr.strip()}")
        rendition = run.stdout
        pages = pages_of(pdf)
        heads, left = heads_left(pages, rendition)
        html_path = (args.html_dir or pdf.parent) / (pdf.stem + ".html")
        row = f"{pdf.stem:<14} {len(pages) - 1:>5} {heads:>6} {left:>5}"
        totals["pages"] += len(pages) - 1
        totals["heads"] += heads
        totals["left"] += left
        if html_path.exists():
            blocks = examples_of(html_path)
            tally = examples_fenced(blocks, rendition)
            totals["examples"] += len(blocks)
            for key, value in tally.items():
                totals[key] += value
            row += f" {len(blocks):>8} {tally['fenced']:>7} {tally['partly']:>6} {tally['unfenced']:>8} {tally['not found']:>7}"
        print(row)
    print(
        f"{'all':<14} {totals['pages']:>5} {totals['heads']:>6} {totals['left']:>5} {totals['examples']:>8} "
        f"{totals['fenced']:>7} {totals['partly']:>6} {totals['unfenced']:>8} {totals['not found']:>7}"
    )


if __name__ == "__main__":
    main()
