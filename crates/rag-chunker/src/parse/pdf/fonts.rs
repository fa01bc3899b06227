//! Fonts: how the codes of a text-showing string become characters, how wide each one is, and
//! what style the font is (bold, monospaced), from the font's dictionary alone (its program is
//! only read for a Type 1 font's built-in encoding).

use std::collections::BTreeMap;

use lopdf::{Dictionary, Document, Object};

use super::glyphs;
use super::standard_widths::{self, Metrics};

/// What the reader needs of one font.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Font {
    /// Composite (Type0) fonts read two-byte codes; simple fonts one byte.
    two_byte: bool,
    /// The font's ToUnicode map, when it has one (it wins over the encoding).
    to_unicode: Option<ToUnicode>,
    /// A simple font's characters by code, from its encoding (`'\0'`: none).
    encoding: Option<Box<[char; 256]>>,
    /// Widths in glyph units by code, and the width of codes not listed.
    widths: BTreeMap<u32, f64>,
    default_width: f64,
    /// Glyph space to text space: 1/1000 except for Type 3 fonts, which give their own.
    pub(super) scale: f64,
    /// Ascent and descent in glyph units (descent negative).
    pub(super) ascent: f64,
    pub(super) descent: f64,
    pub(super) bold: bool,
    pub(super) mono: bool,
}

/// One code of a string: the code, whether it is one byte, and its width in glyph units.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Glyph {
    pub(super) code: u32,
    pub(super) single_byte: bool,
    pub(super) width: f64,
}

/// Past this many codes a ToUnicode map or a `/W` array is read no further: real fonts hold a
/// few thousand, and a hostile one must not cost more than this.
const MAX_MAP_ENTRIES: usize = 100_000;

impl Font {
    /// The font that `dict` describes, as far as it can be read (a font the reader cannot read
    /// decodes nothing, but still advances the text position by a default width).
    pub(super) fn from_dict(doc: &Document, dict: &Dictionary, stream_limit: usize) -> Font {
        let subtype = name_of(doc, dict.get(b"Subtype").ok());
        let two_byte = subtype.as_deref() == Some(b"Type0".as_slice());
        let descendant = two_byte
            .then(|| {
                deref(doc, dict.get(b"DescendantFonts").ok())
                    .and_then(|o| o.as_array().ok())
                    .and_then(|a| a.first())
                    .and_then(|o| deref(doc, Some(o)))
                    .and_then(|o| o.as_dict().ok())
            })
            .flatten();
        let descriptor_owner = descendant.unwrap_or(dict);
        let descriptor = deref(doc, descriptor_owner.get(b"FontDescriptor").ok()).and_then(|o| o.as_dict().ok());
        let base_font = name_of(doc, dict.get(b"BaseFont").ok()).unwrap_or_default();
        let base_name = String::from_utf8_lossy(strip_subset(&base_font)).to_lowercase();
        let standard = standard_metrics(strip_subset(&base_font));
        let flags = descriptor
            .and_then(|d| number(doc, d.get(b"Flags").ok()))
            .unwrap_or(0.0) as i64;
        let weight = descriptor.and_then(|d| number(doc, d.get(b"FontWeight").ok()));
        let is_type3 = subtype.as_deref() == Some(b"Type3".as_slice());
        let scale = if is_type3 {
            deref(doc, dict.get(b"FontMatrix").ok())
                .and_then(|o| o.as_array().ok())
                .and_then(|a| number(doc, a.first()))
                .filter(|s| s.is_finite() && *s != 0.0)
                .map_or(0.001, f64::abs)
        } else {
            0.001
        };
        let mono = flags & 1 != 0 || MONO_NAMES.iter().any(|n| base_name.contains(n));
        let bold = flags & (1 << 18) != 0
            || weight.is_some_and(|w| w >= 600.0)
            || BOLD_NAMES.iter().any(|n| base_name.contains(n));
        // Type 3 glyph units are the font matrix's; 1000-unit metrics assume the usual matrix.
        let unit = 0.001 / scale;
        let ascent = descriptor
            .and_then(|d| number(doc, d.get(b"Ascent").ok()))
            .filter(|a| *a > 0.0 && *a < 2000.0)
            .unwrap_or(800.0)
            * unit;
        let descent = descriptor
            .and_then(|d| number(doc, d.get(b"Descent").ok()))
            .filter(|d| *d <= 0.0 && *d > -1000.0)
            .unwrap_or(-200.0)
            * unit;
        let to_unicode = deref(doc, dict.get(b"ToUnicode").ok())
            .and_then(|o| o.as_stream().ok())
            .and_then(|s| s.decompressed_content_with_limit(stream_limit).ok())
            .map(|bytes| ToUnicode::parse(&bytes));
        let (mut widths, default_width) = if two_byte {
            descendant.map_or((BTreeMap::new(), 1000.0), |d| cid_widths(doc, d))
        } else {
            let missing = descriptor
                .and_then(|d| number(doc, d.get(b"MissingWidth").ok()))
                .filter(|w| *w > 0.0);
            let fallback = if mono { 600.0 } else { 500.0 } * unit;
            (simple_widths(doc, dict), missing.unwrap_or(fallback))
        };
        let encoding = (!two_byte).then(|| Box::new(simple_encoding(doc, dict, descriptor, standard, stream_limit)));
        // A standard font may be drawn without `/Widths` (fpdf2 and reportlab write none): its
        // codes take their glyphs' widths from the font's metrics, through its encoding.
        if let (Some(metrics), Some(encoding)) = (standard, &encoding)
            && !is_type3
        {
            for code in 0..=255u8 {
                widths
                    .entry(u32::from(code))
                    .or_insert_with(|| f64::from(metrics.width(code, encoding[usize::from(code)])));
            }
        }
        Font {
            two_byte,
            to_unicode,
            encoding,
            widths,
            default_width,
            scale,
            ascent,
            descent,
            bold,
            mono,
        }
    }

    /// The glyphs a string shows, code by code (lazily: a string of millions of codes costs no
    /// memory of its own).
    pub(super) fn glyphs<'a>(&'a self, bytes: &'a [u8]) -> impl Iterator<Item = Glyph> + 'a {
        let step = if self.two_byte { 2 } else { 1 };
        bytes.chunks(step).map(move |chunk| {
            let code = chunk.iter().fold(0u32, |code, &b| code << 8 | u32::from(b));
            Glyph {
                code,
                single_byte: step == 1,
                width: self.widths.get(&code).copied().unwrap_or(self.default_width),
            }
        })
    }

    /// Appends the text of `code` to `out` (nothing when the font cannot say what it is); returns
    /// the bytes appended.
    pub(super) fn decode(&self, code: u32, out: &mut String) -> usize {
        let before = out.len();
        if let Some(text) = self.to_unicode.as_ref().and_then(|map| map.get(code)) {
            out.push_str(&text);
        }
        if out.len() == before
            && let Some(encoding) = &self.encoding
        {
            let c = encoding[code as usize & 0xff];
            if c != '\0' {
                out.push(c);
            }
        }
        out.len() - before
    }
}

/// Parts of a font's name that say it is bold (TeX's Computer Modern bold faces are `CMBX`, `CMB`,
/// `CMSSBX` and their EC twins `SFBX`; URW's Times bold, used by LaTeX's times packages, is
/// `NimbusRomNo9L-Medi`).
const BOLD_NAMES: &[&str] = &[
    "bold", "black", "heavy", "demi", "semibold", "-medi", "cmbx", "cmb10", "cmssbx", "sfbx",
];

/// Parts of a font's name that say it is monospaced.
const MONO_NAMES: &[&str] = &[
    "mono",
    "courier",
    "consol",
    "typewriter",
    "menlo",
    "inconsolata",
    "cmtt",
    // Slanted and italic typewriter (Texinfo's `@var` inside code), and their EC twins.
    "cmsltt",
    "cmitt",
    "sftt",
    "sfsltt",
    "sfitt",
    "lmmono",
    "txtt",
    "code",
];

impl Metrics {
    /// The width of `code`, which the font's encoding maps to `c`: the width of the code in the
    /// font's own encoding when that is where `c` comes from, else of the glyph for `c`.
    fn width(&self, code: u8, c: char) -> u16 {
        if let Some((chars, widths)) = self.builtin
            && chars[usize::from(code)] == c
            && widths[usize::from(code)] > 0
        {
            return widths[usize::from(code)];
        }
        self.widths
            .binary_search_by_key(&c, |&(glyph, _)| glyph)
            .map_or(self.missing, |i| self.widths[i].1)
    }
}

/// The metrics of the standard font a font's name stands for: one of the 14 by its own name, or
/// the names PDF writers and viewers take for them (`Arial,Bold`, `ArialMT`,
/// `TimesNewRomanPS-BoldMT`, `CourierNew,Italic`: Arial and Times New Roman have the widths of
/// Helvetica and Times).
fn standard_metrics(name: &[u8]) -> Option<&'static Metrics> {
    if let Some(metrics) = standard_widths::metrics(name) {
        return Some(metrics);
    }
    const FAMILIES: &[(&str, &str)] = &[
        ("timesnewromanpsmt", "Times"),
        ("timesnewromanps", "Times"),
        ("timesnewroman", "Times"),
        ("times", "Times"),
        ("couriernewpsmt", "Courier"),
        ("couriernewps", "Courier"),
        ("couriernew", "Courier"),
        ("courier", "Courier"),
        ("arialmt", "Helvetica"),
        ("arial", "Helvetica"),
        ("helvetica", "Helvetica"),
    ];
    let lower = String::from_utf8_lossy(name).to_ascii_lowercase();
    let &(prefix, family) = FAMILIES.iter().find(|(prefix, _)| lower.starts_with(prefix))?;
    let style: String = lower[prefix.len()..]
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect();
    let (bold, italic) = match style.strip_suffix("mt").unwrap_or(&style) {
        "" | "roman" | "regular" => (false, false),
        "bold" => (true, false),
        "italic" | "oblique" => (false, true),
        "bolditalic" | "boldoblique" => (true, true),
        _ => return None,
    };
    let standard = match (family, bold, italic) {
        ("Times", false, false) => "Times-Roman".to_owned(),
        ("Times", _, _) => format!(
            "Times-{}{}",
            if bold { "Bold" } else { "" },
            if italic { "Italic" } else { "" }
        ),
        (_, false, false) => family.to_owned(),
        _ => format!(
            "{family}-{}{}",
            if bold { "Bold" } else { "" },
            if italic { "Oblique" } else { "" }
        ),
    };
    standard_widths::metrics(standard.as_bytes())
}

/// A subset font's name without its `ABCDEF+` tag.
fn strip_subset(name: &[u8]) -> &[u8] {
    match name.get(6) {
        Some(b'+') if name[..6].iter().all(u8::is_ascii_uppercase) => &name[7..],
        _ => name,
    }
}

pub(super) fn deref<'a>(doc: &'a Document, object: Option<&'a Object>) -> Option<&'a Object> {
    let object = object?;
    doc.dereference(object).ok().map(|(_, o)| o)
}

fn name_of(doc: &Document, object: Option<&Object>) -> Option<Vec<u8>> {
    deref(doc, object).and_then(|o| o.as_name().ok()).map(<[u8]>::to_vec)
}

pub(super) fn number(doc: &Document, object: Option<&Object>) -> Option<f64> {
    deref(doc, object)
        .and_then(|o| o.as_float().ok())
        .map(f64::from)
        .filter(|v| v.is_finite())
}

/// A simple font's `/FirstChar` and `/Widths`.
fn simple_widths(doc: &Document, dict: &Dictionary) -> BTreeMap<u32, f64> {
    let first = number(doc, dict.get(b"FirstChar").ok())
        .unwrap_or(0.0)
        .clamp(0.0, 255.0) as u32;
    let Some(widths) = deref(doc, dict.get(b"Widths").ok()).and_then(|o| o.as_array().ok()) else {
        return BTreeMap::new();
    };
    widths
        .iter()
        .take(256)
        .enumerate()
        .filter_map(|(i, w)| Some((first + i as u32, number(doc, Some(w))?)))
        .collect()
}

/// A CID font's `/W` array (`c [w1 w2 ...]` and `c_first c_last w`) and `/DW`.
fn cid_widths(doc: &Document, dict: &Dictionary) -> (BTreeMap<u32, f64>, f64) {
    let default = number(doc, dict.get(b"DW").ok()).unwrap_or(1000.0);
    let mut widths = BTreeMap::new();
    let Some(array) = deref(doc, dict.get(b"W").ok()).and_then(|o| o.as_array().ok()) else {
        return (widths, default);
    };
    let mut i = 0;
    while i < array.len() && widths.len() < MAX_MAP_ENTRIES {
        let Some(first) = number(doc, array.get(i)) else { break };
        let first = first.max(0.0) as u32;
        match deref(doc, array.get(i + 1)) {
            Some(Object::Array(list)) => {
                for (k, w) in list.iter().enumerate().take(MAX_MAP_ENTRIES) {
                    if let Some(w) = number(doc, Some(w)) {
                        widths.insert(first.saturating_add(k as u32), w);
                    }
                }
                i += 2;
            }
            Some(_) => {
                let (Some(last), Some(w)) = (number(doc, array.get(i + 1)), number(doc, array.get(i + 2))) else {
                    break;
                };
                let last = (last.max(0.0) as u32).min(first.saturating_add(MAX_MAP_ENTRIES as u32));
                for code in first..=last {
                    widths.insert(code, w);
                }
                i += 3;
            }
            None => break,
        }
    }
    (widths, default)
}

/// A simple font's characters by code: its base encoding (named, or the Type 1 program's own, or
/// a standard font's own: Symbol's, ZapfDingbats', else the standard one) with its
/// `/Differences` applied.
fn simple_encoding(
    doc: &Document,
    dict: &Dictionary,
    descriptor: Option<&Dictionary>,
    standard: Option<&Metrics>,
    limit: usize,
) -> [char; 256] {
    let encoding = deref(doc, dict.get(b"Encoding").ok());
    let base_name = match encoding {
        Some(Object::Name(name)) => Some(name.as_slice()),
        Some(Object::Dictionary(d)) => deref(doc, d.get(b"BaseEncoding").ok()).and_then(|o| o.as_name().ok()),
        _ => None,
    };
    let subtype = name_of(doc, dict.get(b"Subtype").ok());
    let mut table = match base_name {
        Some(b"WinAnsiEncoding") => glyphs::WIN_ANSI,
        Some(b"MacRomanEncoding") => glyphs::MAC_ROMAN,
        Some(_) => glyphs::STANDARD,
        None if subtype.as_deref() == Some(b"TrueType".as_slice()) => glyphs::WIN_ANSI,
        None => descriptor
            .and_then(|d| builtin_encoding(doc, d, limit))
            .or_else(|| standard.and_then(|m| m.builtin).map(|(chars, _)| *chars))
            .unwrap_or(glyphs::STANDARD),
    };
    if let Some(Object::Dictionary(d)) = encoding
        && let Some(differences) = deref(doc, d.get(b"Differences").ok()).and_then(|o| o.as_array().ok())
    {
        let mut code = 0usize;
        for item in differences {
            match deref(doc, Some(item)) {
                Some(Object::Integer(n)) => code = (*n).clamp(0, 255) as usize,
                Some(Object::Name(name)) => {
                    if code < 256 {
                        table[code] = glyph_char(name).unwrap_or('\0');
                    }
                    code += 1;
                }
                _ => {}
            }
        }
    }
    table
}

/// The built-in encoding of an embedded Type 1 program (`dup 65 /A put` in its clear-text part).
fn builtin_encoding(doc: &Document, descriptor: &Dictionary, limit: usize) -> Option<[char; 256]> {
    let program = deref(doc, descriptor.get(b"FontFile").ok())?.as_stream().ok()?;
    let bytes = program.decompressed_content_with_limit(limit).ok()?;
    // The encoding sits in the clear-text part, before `eexec`.
    let clear = match find(&bytes, b"eexec") {
        Some(end) => &bytes[..end],
        None => &bytes[..bytes.len().min(64 << 10)],
    };
    let start = find(clear, b"/Encoding")?;
    let section = &clear[start..];
    if section[b"/Encoding".len()..]
        .trim_ascii_start()
        .starts_with(b"StandardEncoding")
    {
        return Some(glyphs::STANDARD);
    }
    let mut table = ['\0'; 256];
    let text = String::from_utf8_lossy(section);
    let mut words = text.split_ascii_whitespace().peekable();
    while let Some(word) = words.next() {
        if word == "readonly" || word == "def" {
            break;
        }
        if word != "dup" {
            continue;
        }
        let (Some(code), Some(name)) = (words.next(), words.next()) else {
            break;
        };
        if let (Ok(code), Some(name)) = (code.parse::<usize>(), name.strip_prefix('/'))
            && code < 256
        {
            table[code] = glyph_char(name.as_bytes()).unwrap_or('\0');
        }
    }
    Some(table)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The character a glyph name stands for: a name of the Adobe Glyph List, `uniXXXX`, `uXXXX`,
/// or a name with a suffix (`a.sc`) or of a ligature's parts (`f_i`, first part only).
pub(super) fn glyph_char(name: &[u8]) -> Option<char> {
    let name = std::str::from_utf8(name).ok()?;
    let base = name.split(['.', '_']).next().unwrap_or(name);
    if let Ok(i) = glyphs::NAMES.binary_search_by(|(n, _)| n.cmp(&name)) {
        return Some(glyphs::NAMES[i].1);
    }
    if let Ok(i) = glyphs::NAMES.binary_search_by(|(n, _)| n.cmp(&base)) {
        return Some(glyphs::NAMES[i].1);
    }
    let hex = base.strip_prefix("uni").or_else(|| base.strip_prefix('u'))?;
    if !(4..=6).contains(&hex.len()) {
        return None;
    }
    u32::from_str_radix(&hex[..if base.starts_with("uni") { 4 } else { hex.len() }], 16)
        .ok()
        .and_then(char::from_u32)
}

/// A ToUnicode CMap: codes to text, kept as the ranges it declares (a range of 65,536 codes
/// costs one entry).
#[derive(Debug, Clone, PartialEq, Default)]
pub(super) struct ToUnicode {
    /// `(first, last, target)`, sorted by `first`: code `first + k` is `target` with its last
    /// UTF-16 unit advanced by `k`, or `target` itself when the range is one code.
    ranges: Vec<(u32, u32, Vec<u16>)>,
}

impl ToUnicode {
    /// The `bfchar` and `bfrange` entries of a CMap; anything it cannot read is skipped.
    pub(super) fn parse(bytes: &[u8]) -> ToUnicode {
        let tokens = cmap_tokens(bytes);
        let mut ranges: Vec<(u32, u32, Vec<u16>)> = Vec::new();
        let mut i = 0;
        while i < tokens.len() && ranges.len() < MAX_MAP_ENTRIES {
            match &tokens[i] {
                CmapToken::Keyword(k) if k == "beginbfchar" => {
                    i += 1;
                    while i + 1 < tokens.len() && ranges.len() < MAX_MAP_ENTRIES {
                        match (&tokens[i], &tokens[i + 1]) {
                            (CmapToken::Hex(src), CmapToken::Hex(dst)) => {
                                let code = code_of(src);
                                ranges.push((code, code, utf16_of(dst)));
                                i += 2;
                            }
                            _ => break,
                        }
                    }
                }
                CmapToken::Keyword(k) if k == "beginbfrange" => {
                    i += 1;
                    while i + 2 < tokens.len() && ranges.len() < MAX_MAP_ENTRIES {
                        let (CmapToken::Hex(lo), CmapToken::Hex(hi)) = (&tokens[i], &tokens[i + 1]) else {
                            break;
                        };
                        let (lo, hi) = (code_of(lo), code_of(hi));
                        match &tokens[i + 2] {
                            CmapToken::Hex(dst) => {
                                if hi >= lo {
                                    ranges.push((lo, hi, utf16_of(dst)));
                                }
                                i += 3;
                            }
                            CmapToken::ArrayStart => {
                                let mut code = lo;
                                i += 3;
                                while let Some(CmapToken::Hex(dst)) = tokens.get(i) {
                                    if code <= hi && ranges.len() < MAX_MAP_ENTRIES {
                                        ranges.push((code, code, utf16_of(dst)));
                                    }
                                    code = code.saturating_add(1);
                                    i += 1;
                                }
                                if matches!(tokens.get(i), Some(CmapToken::ArrayEnd)) {
                                    i += 1;
                                }
                            }
                            _ => break,
                        }
                    }
                }
                _ => i += 1,
            }
        }
        ranges.sort_by_key(|r| (r.0, r.1));
        ToUnicode { ranges }
    }

    /// The text of `code`, if the map has it.
    pub(super) fn get(&self, code: u32) -> Option<String> {
        let after = self.ranges.partition_point(|r| r.0 <= code);
        // The nearest range starting at or before `code` that reaches it; ranges may nest, so look
        // back a little.
        let (first, _, target) = self.ranges[..after].iter().rev().take(8).find(|r| r.1 >= code)?;
        let mut units = target.clone();
        let offset = code - first;
        if offset > 0 {
            let last = units.last_mut()?;
            *last = last.wrapping_add(u16::try_from(offset).ok()?);
        }
        let text: String = char::decode_utf16(units).map(|c| c.unwrap_or('\u{fffd}')).collect();
        Some(text)
    }
}

#[derive(Debug, Clone, PartialEq)]
enum CmapToken {
    Hex(Vec<u8>),
    ArrayStart,
    ArrayEnd,
    Keyword(String),
}

/// The tokens of a CMap that matter here: hex strings, brackets and keywords (names, numbers and
/// dictionaries are skipped over as keywords).
fn cmap_tokens(bytes: &[u8]) -> Vec<CmapToken> {
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'<' if bytes.get(i + 1) != Some(&b'<') => {
                let end = bytes[i..]
                    .iter()
                    .position(|&b| b == b'>')
                    .map_or(bytes.len(), |p| i + p);
                let digits: Vec<u8> = bytes[i + 1..end]
                    .iter()
                    .filter_map(|&b| (b as char).to_digit(16).map(|d| d as u8))
                    .collect();
                let hex = digits
                    .chunks(2)
                    .map(|p| p[0] << 4 | p.get(1).copied().unwrap_or(0))
                    .collect();
                tokens.push(CmapToken::Hex(hex));
                i = end + 1;
            }
            b'[' => {
                tokens.push(CmapToken::ArrayStart);
                i += 1;
            }
            b']' => {
                tokens.push(CmapToken::ArrayEnd);
                i += 1;
            }
            b'%' => {
                while i < bytes.len() && bytes[i] != b'\n' && bytes[i] != b'\r' {
                    i += 1;
                }
            }
            b if b.is_ascii_whitespace() => i += 1,
            _ => {
                let start = i;
                while i < bytes.len() && !bytes[i].is_ascii_whitespace() && !b"<>[]%".contains(&bytes[i]) {
                    i += 1;
                }
                if i == start {
                    i += 1;
                } else {
                    tokens.push(CmapToken::Keyword(
                        String::from_utf8_lossy(&bytes[start..i]).into_owned(),
                    ));
                }
            }
        }
    }
    tokens
}

fn code_of(bytes: &[u8]) -> u32 {
    bytes.iter().take(4).fold(0u32, |code, &b| code << 8 | u32::from(b))
}

fn utf16_of(bytes: &[u8]) -> Vec<u16> {
    bytes
        .chunks(2)
        .take(64)
        .map(|p| u16::from(p[0]) << 8 | u16::from(p.get(1).copied().unwrap_or(0)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn to_unicode_reads_chars_ranges_and_arrays() {
        let cmap = b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap
            1 begincodespacerange <0000> <FFFF> endcodespacerange
            2 beginbfchar <0003> <0020> <0011> <00660069> endbfchar
            2 beginbfrange <0024> <0026> <0041> <0030> <0031> [<03B1> <D835DC00>] endbfrange
            endcmap";
        let map = ToUnicode::parse(cmap);
        assert_eq!(map.get(0x03).as_deref(), Some(" "));
        assert_eq!(map.get(0x11).as_deref(), Some("fi"));
        assert_eq!(map.get(0x25).as_deref(), Some("B"));
        assert_eq!(map.get(0x30).as_deref(), Some("α"));
        assert_eq!(map.get(0x31).as_deref(), Some("𝐀"));
        assert_eq!(map.get(0x27), None);
    }

    #[test]
    fn a_huge_range_costs_one_entry() {
        let map = ToUnicode::parse(b"1 beginbfrange <0000> <FFFF> <0000> endbfrange");
        assert_eq!(map.ranges.len(), 1);
        assert_eq!(map.get(0x41).as_deref(), Some("A"));
    }

    #[test]
    fn glyph_names_are_read_with_suffixes_and_unicode_forms() {
        assert_eq!(glyph_char(b"eacute"), Some('é'));
        assert_eq!(glyph_char(b"a.sc"), Some('a'));
        assert_eq!(glyph_char(b"uni20AC"), Some('€'));
        assert_eq!(glyph_char(b"u1F600"), Some('😀'));
        assert_eq!(glyph_char(b"fi"), Some('\u{fb01}'));
        assert_eq!(glyph_char(b"g123"), None);
        assert!(glyphs::NAMES.windows(2).all(|w| w[0].0 < w[1].0), "names are sorted");
    }

    #[test]
    fn subset_tags_are_not_part_of_the_name() {
        assert_eq!(strip_subset(b"ABCDEF+LiberationSans-Bold"), b"LiberationSans-Bold");
        assert_eq!(strip_subset(b"Helvetica"), b"Helvetica");
    }
}
