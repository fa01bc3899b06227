"""Writes src/parse/pdf/standard_widths.rs: the glyph widths of the PDF standard 14 fonts.

Usage, from this directory:
    python3 standard_font_widths.py AFM_DIR ZAPFDINGBATS_TXT > ../src/parse/pdf/standard_widths.rs
    cargo fmt -p rag-chunker

AFM_DIR holds Adobe's Core 14 AFM files and their MustRead.html (the crate pdf-core-14-font-afms
0.1.1 ships them in src/afms); ZAPFDINGBATS_TXT is zapfdingbats.txt of Adobe's agl-aglfn
repository (the ITC Zapf Dingbats glyph list, BSD-3-Clause). Glyph names become characters as
src/parse/pdf/glyphs.rs reads them (its NAMES table), then through fontTools' Adobe Glyph List;
a name neither knows, or one of the private-use area, has no character.
"""

import os
import re
import sys

from fontTools import agl

HERE = os.path.dirname(os.path.abspath(__file__))
GLYPHS = os.path.join(HERE, "..", "src", "parse", "pdf", "glyphs.rs")

# The fonts whose widths are written; the obliques share their upright's widths (checked below)
# and the four Couriers are 600 units throughout.
FONTS = [
    ("HELVETICA", "Helvetica", "Helvetica-Oblique"),
    ("HELVETICA_BOLD", "Helvetica-Bold", "Helvetica-BoldOblique"),
    ("TIMES_ROMAN", "Times-Roman", None),
    ("TIMES_BOLD", "Times-Bold", None),
    ("TIMES_ITALIC", "Times-Italic", None),
    ("TIMES_BOLD_ITALIC", "Times-BoldItalic", None),
    ("SYMBOL", "Symbol", None),
    ("ZAPF_DINGBATS", "ZapfDingbats", None),
]
OWN_ENCODING = {"Symbol", "ZapfDingbats"}


def rust_char(body):
    if body.startswith("\\u{"):
        return chr(int(body[3:-1], 16))
    return {"\\0": "\0", "\\\\": "\\", "\\'": "'", '\\"': '"'}.get(body, body)


def our_names():
    src = open(GLYPHS, encoding="utf-8").read()
    block = re.search(r"const NAMES: &\[\(&str, char\)\] = &\[(.*?)\];", src, re.S).group(1)
    pairs = re.findall(r"\(\"([^\"]+)\", '(\\u\{[0-9a-f]+\}|\\.|[^'\\])'\)", block)
    return {name: rust_char(c) for name, c in pairs}


def read_afm(directory, font):
    glyphs = []
    notice = None
    for line in open(os.path.join(directory, font + ".afm"), encoding="latin-1"):
        if line.startswith("C "):
            fields = dict(p.strip().split(" ", 1) for p in line.split(";") if p.strip())
            glyphs.append((int(fields["C"]), int(fields["WX"]), fields["N"]))
        elif line.startswith("Notice "):
            notice = line[len("Notice ") :].strip()
    return glyphs, notice


def rust_literal(c):
    if c == "\0":
        return "'\\0'"
    if c in "\\'":
        return "'\\" + c + "'"
    if 0x20 <= ord(c) < 0x7F:
        return "'" + c + "'"
    return "'\\u{%04x}'" % ord(c)


def wrap(items, width=116):
    """The items, comma-separated, in lines indented by four spaces and at most `width` long."""
    lines, line = [], ""
    for item in items:
        piece = item + ","
        if line and len(line) + 1 + len(piece) > width - 4:
            lines.append("    " + line)
            line = piece
        else:
            line = f"{line} {piece}" if line else piece
    if line:
        lines.append("    " + line)
    return "\n".join(lines) + "\n"


def main():
    afm_dir, dingbats_txt = sys.argv[1], sys.argv[2]
    names = our_names()
    dingbats = {}
    for line in open(dingbats_txt, encoding="utf-8"):
        if line.strip() and not line.startswith("#"):
            name, code = line.strip().split(";")
            dingbats[name] = chr(int(code.split()[0], 16))

    def char_of(name, font):
        if font == "ZapfDingbats" and name in dingbats:
            return dingbats[name]
        if name in names:
            return names[name]
        text = agl.toUnicode(name)
        if len(text) == 1 and not 0xE000 <= ord(text) <= 0xF8FF:
            return text
        return None

    notices = []
    for font in ["Courier", "Courier-Bold", "Courier-Oblique", "Courier-BoldOblique"]:
        glyphs, notice = read_afm(afm_dir, font)
        assert {w for _, w, _ in glyphs} == {600}, font
        notices.append(notice)
    out = []
    lookup = []
    for const, font, twin in FONTS:
        glyphs, notice = read_afm(afm_dir, font)
        notices.append(notice)
        if twin:
            twin_glyphs, twin_notice = read_afm(afm_dir, twin)
            notices.append(twin_notice)
            assert sorted((n, w) for _, w, n in glyphs) == sorted((n, w) for _, w, n in twin_glyphs), twin
        by_char = {}
        for _, width, name in glyphs:
            c = char_of(name, font)
            if c is not None and c not in by_char:
                by_char[c] = width
        mean = round(sum(w for _, w, _ in glyphs) / len(glyphs))
        entries = [f"({rust_literal(c)}, {w})" for c, w in sorted(by_char.items())]
        out.append(f"#[rustfmt::skip]\nconst {const}_WIDTHS: &[(char, u16)] = &[\n{wrap(entries)}];\n")
        builtin = "None"
        if font in OWN_ENCODING:
            chars = ["\0"] * 256
            widths = [0] * 256
            for code, width, name in glyphs:
                if 0 <= code < 256:
                    chars[code] = char_of(name, font) or "\0"
                    widths[code] = width
            out.append(f"#[rustfmt::skip]\nconst {const}_CHARS: [char; 256] = [\n{wrap(list(map(rust_literal, chars)))}];\n")
            out.append(f"#[rustfmt::skip]\nconst {const}_CODE_WIDTHS: [u16; 256] = [\n{wrap(list(map(str, widths)))}];\n")
            builtin = f"Some((&{const}_CHARS, &{const}_CODE_WIDTHS))"
        out.append(
            f"/// {font}{' and ' + twin if twin else ''}.\n"
            f"const {const}: Metrics = Metrics {{ widths: {const}_WIDTHS, missing: {mean}, builtin: {builtin} }};\n"
        )
        lookup.append(f'        b"{font}"{" | b%s" % chr(34) + twin + chr(34) if twin else ""} => &{const},')
    lines = []
    for notice in sorted(set(notices)):
        # The notices run a copyright and a trademark line together; one line each here.
        for part in re.split(r"(?<=Reserved\.)|(?<=reserved\.)", notice):
            if part.strip():
                lines.append("//! > " + re.sub(r"\s+", " ", part.strip()))
    sys.stdout.write(HEADER.format(notices="\n".join(lines)))
    sys.stdout.write(TYPES)
    sys.stdout.write(LOOKUP.format(arms="\n".join(lookup)))
    sys.stdout.write("\n".join(out))


HEADER = """//! The glyph widths of the PDF standard 14 fonts, for files that draw them without `/Widths`
//! (fpdf2, reportlab and many report generators do), and the own encodings of Symbol and
//! ZapfDingbats. Written by rag-chunker's `scripts/standard_font_widths.py` (and `cargo fmt`); do
//! not edit by hand.
//!
//! The widths (`WX`) come from Adobe's Core 14 AFM files, which carry this notice:
//!
//! > This file and the 14 PostScript(R) AFM files it accompanies may be used, copied, and
//! > distributed for any purpose and without charge, with or without modification, provided that
//! > all copyright notices are retained; that the AFM files are not distributed without this
//! > file; that all modifications to this file or any of the AFM files are prominently noted in
//! > the modified file(s); and that this paragraph is not modified. Adobe Systems has no
//! > responsibility or obligation to support the use of the AFM files.
//!
//! and these copyright notices:
//!
{notices}
//!
//! Modified: only the advance widths and the codes of the fonts' own encodings are kept, keyed
//! by the character each glyph name stands for (the Adobe Glyph List; for ZapfDingbats, Adobe's
//! ITC Zapf Dingbats glyph list, BSD-3-Clause); bounding boxes, kerning and ligatures are left
//! out. The obliques share their upright's widths, and the four Couriers are 600 units wide.

"""

TYPES = """/// What the reader needs of a standard font: the advance width of each glyph.
pub(super) struct Metrics {
    /// Advance widths in glyph units (a thousandth of the font size) by character, sorted by
    /// character; empty for Courier, whose glyphs are all [`Metrics::missing`] wide.
    pub(super) widths: &'static [(char, u16)],
    /// The width of a glyph not in `widths`: the mean width of the font's glyphs.
    pub(super) missing: u16,
    /// Symbol's and ZapfDingbats' own encodings (the base encoding of a file that names none):
    /// the character (`'\\0'`: none, or one of the private-use area) and the width by code.
    pub(super) builtin: Option<(&'static [char; 256], &'static [u16; 256])>,
}

/// The four Couriers: every glyph 600 units wide.
const COURIER: Metrics = Metrics { widths: &[], missing: 600, builtin: None };

"""

LOOKUP = """/// The metrics of the standard font named `name` exactly (`Helvetica-Bold`), if it is one.
pub(super) fn metrics(name: &[u8]) -> Option<&'static Metrics> {{
    Some(match name {{
        b"Courier" | b"Courier-Bold" | b"Courier-Oblique" | b"Courier-BoldOblique" => &COURIER,
{arms}
        _ => return None,
    }})
}}

"""

if __name__ == "__main__":
    main()
