//! Lines as read: the segments of one region sharing a baseline joined into one line of text, its
//! style measured (size, bold and monospaced shares) and its monospaced stretches kept, and the
//! body style of the document, which headings and code are told apart from.

use std::collections::BTreeMap;
use std::ops::Range;

use super::layout::{Rect, Segment};

/// One line of a page as read: the segments of one region sharing a baseline, joined.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct ReadLine {
    pub(super) page: u32,
    /// The region (column or band) of the page the line was read in, numbered across the document.
    pub(super) region: usize,
    pub(super) bbox: Rect,
    /// The text, white space collapsed, control characters and ligatures resolved.
    pub(super) text: String,
    /// The stretches of `text` drawn in a monospaced font (inline code), in order; a space
    /// between two monospaced runs belongs to the stretch, one beside proportional text does not.
    pub(super) mono_spans: Vec<Range<usize>>,
    /// The font size most of its characters are drawn in.
    pub(super) size: f64,
    /// The share of its characters in a bold font.
    pub(super) bold_share: f64,
    /// The share of its letters and digits in a monospaced font (of all its characters when it
    /// has no letter or digit): the punctuation of a code line is often set in the text font.
    pub(super) mono_share: f64,
    /// Its characters, white space left out, that are not in a monospaced font.
    pub(super) prose_chars: usize,
    /// The width of one character of its monospaced runs, when it has some (for code indentation).
    pub(super) mono_advance: Option<f64>,
}

/// The segments of one region of a page (in reading order) as lines: consecutive segments of one
/// line join with a space.
pub(super) fn read_lines(page: u32, region: usize, segments: &[&Segment]) -> Vec<ReadLine> {
    let mut lines: Vec<ReadLine> = Vec::new();
    let mut last_line: Option<usize> = None;
    let mut pending: Vec<&Segment> = Vec::new();
    for &segment in segments {
        if last_line.is_some_and(|line| line != segment.line) {
            lines.extend(read_line(page, region, &pending));
            pending.clear();
        }
        last_line = Some(segment.line);
        pending.push(segment);
    }
    lines.extend(read_line(page, region, &pending));
    lines
}

fn read_line(page: u32, region: usize, segments: &[&Segment]) -> Option<ReadLine> {
    let first = segments.first()?;
    let mut pieces: Vec<(&str, bool)> = Vec::new();
    let mut bbox = first.bbox;
    let mut chars_by_size: BTreeMap<i64, usize> = BTreeMap::new();
    let (mut chars, mut bold, mut mono) = (0usize, 0usize, 0usize);
    let (mut alnum, mut mono_alnum) = (0usize, 0usize);
    let (mut mono_width, mut mono_chars) = (0.0f64, 0usize);
    for segment in segments {
        if !pieces.is_empty() {
            pieces.push((" ", false));
        }
        pieces.extend(segment.pieces());
        bbox = bbox.union(&segment.bbox);
        for run in &segment.runs {
            let n = run.text.chars().filter(|c| !c.is_whitespace()).count();
            let letters = run.text.chars().filter(|c| c.is_alphanumeric()).count();
            chars += n;
            alnum += letters;
            *chars_by_size.entry(size_key(run.size)).or_default() += n;
            if run.bold {
                bold += n;
            }
            if run.mono {
                mono += n;
                mono_alnum += letters;
                mono_width += run.bbox.width();
                mono_chars += run.text.chars().count();
            }
        }
    }
    let (text, mono_spans) = clean_pieces(&pieces);
    if text.is_empty() || chars == 0 {
        return None;
    }
    let size = chars_by_size
        .iter()
        .max_by_key(|&(size, n)| (*n, *size))
        .map_or(first.runs[0].size, |(&size, _)| size_of_key(size));
    let mono_share = if alnum > 0 {
        mono_alnum as f64 / alnum as f64
    } else {
        mono as f64 / chars as f64
    };
    Some(ReadLine {
        page,
        region,
        bbox,
        text,
        mono_spans,
        size,
        bold_share: bold as f64 / chars as f64,
        mono_share,
        prose_chars: chars - mono,
        mono_advance: (mono_chars > 0 && mono_width > 0.0).then(|| mono_width / mono_chars as f64),
    })
}

/// Font sizes are compared in half points.
pub(super) fn size_key(size: f64) -> i64 {
    (size * 2.0).round() as i64
}

pub(super) fn size_of_key(key: i64) -> f64 {
    key as f64 / 2.0
}

/// `raw` with control characters dropped, typographic ligatures spelt out, and white space runs
/// collapsed to one space and trimmed.
#[cfg(test)]
pub(super) fn clean_text(raw: &str) -> String {
    clean_pieces(&[(raw, false)]).0
}

/// The pieces' text cleaned as [`clean_text`] cleans it, and the stretches of the result that come
/// from monospaced pieces.
pub(super) fn clean_pieces(pieces: &[(&str, bool)]) -> (String, Vec<Range<usize>>) {
    let mut out = String::with_capacity(pieces.iter().map(|(text, _)| text.len()).sum());
    let mut spans: Vec<Range<usize>> = Vec::new();
    let mut space = false;
    let mut last_mono = false;
    let mut emit = |c: char, mono: bool, space: &mut bool, out: &mut String, spans: &mut Vec<Range<usize>>| {
        if *space && !out.is_empty() {
            out.push(' ');
            // A space inside a monospaced stretch is part of it.
            if mono
                && last_mono
                && let Some(span) = spans.last_mut()
            {
                span.end = out.len();
            }
        }
        *space = false;
        let start = out.len();
        out.push(c);
        if mono {
            match spans.last_mut() {
                Some(span) if span.end == start => span.end = out.len(),
                _ => spans.push(start..out.len()),
            }
        }
        last_mono = mono;
    };
    for &(text, mono) in pieces {
        for c in text.chars() {
            let expansion = match c {
                '\u{fb00}' => "ff",
                '\u{fb01}' => "fi",
                '\u{fb02}' => "fl",
                '\u{fb03}' => "ffi",
                '\u{fb04}' => "ffl",
                '\u{fb05}' | '\u{fb06}' => "st",
                _ => "",
            };
            if !expansion.is_empty() {
                for e in expansion.chars() {
                    emit(e, mono, &mut space, &mut out, &mut spans);
                }
            } else if c.is_whitespace() || c == '\u{a0}' {
                space = true;
            } else if c.is_control() || c == '\u{feff}' {
                // Control characters are never text a reader sees.
            } else {
                emit(c, mono, &mut space, &mut out, &mut spans);
            }
        }
    }
    (out, spans)
}

/// The styles of the document: the body size and whether the body is set in a monospaced font.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct BodyStyle {
    pub(super) size: f64,
    pub(super) mono: bool,
}

/// A document is set in a monospaced font (a listing, a text file printed) when at least this
/// share of its characters are monospaced; below it, its proportional text is the body and its
/// monospaced text is code.
const MONO_BODY_SHARE: f64 = 0.9;

/// The body style of text drawn as `(size, characters, monospaced)` pieces: the size most of its
/// proportional characters are drawn in (most of all its characters, when nearly all are
/// monospaced), and whether it is set in a monospaced font.
///
/// Code is left out of the count because a page of code in a smaller font than the prose would
/// otherwise make the prose look large, and every line of it a heading.
pub(super) fn body_style_of(pieces: impl IntoIterator<Item = (f64, usize, bool)>) -> BodyStyle {
    let mut prose: BTreeMap<i64, usize> = BTreeMap::new();
    let mut all: BTreeMap<i64, usize> = BTreeMap::new();
    let (mut total, mut mono) = (0usize, 0usize);
    for (size, chars, is_mono) in pieces {
        *all.entry(size_key(size)).or_default() += chars;
        total += chars;
        if is_mono {
            mono += chars;
        } else {
            *prose.entry(size_key(size)).or_default() += chars;
        }
    }
    let mono_body = total > 0 && mono as f64 >= MONO_BODY_SHARE * total as f64;
    let by_size = if mono_body || prose.is_empty() { &all } else { &prose };
    let size = by_size
        .iter()
        .max_by_key(|&(size, n)| (*n, -*size))
        .map_or(10.0, |(&key, _)| size_of_key(key));
    BodyStyle { size, mono: mono_body }
}

/// The body style of `lines` (see [`body_style_of`]).
pub(super) fn body_style(lines: &[ReadLine]) -> BodyStyle {
    body_style_of(lines.iter().flat_map(|line| {
        let chars = line.text.chars().filter(|c| !c.is_whitespace()).count();
        let prose = line.prose_chars.min(chars);
        [(line.size, prose, false), (line.size, chars - prose, true)]
    }))
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A proportional line of `text` at `size`, 300 points wide, its left edge at `x0`.
    pub(in super::super) fn line(text: &str, y0: f64, x0: f64, size: f64) -> ReadLine {
        ReadLine {
            page: 1,
            region: 0,
            bbox: Rect::new(x0, y0, x0 + 300.0, y0 + size),
            text: text.to_owned(),
            mono_spans: Vec::new(),
            size,
            bold_share: 0.0,
            mono_share: 0.0,
            prose_chars: text.chars().filter(|c| !c.is_whitespace()).count(),
            mono_advance: None,
        }
    }

    /// `line`, monospaced.
    pub(in super::super) fn mono(text: &str, y0: f64, x0: f64, size: f64) -> ReadLine {
        ReadLine {
            mono_spans: std::iter::once(0..text.len()).collect(),
            mono_share: 1.0,
            prose_chars: 0,
            mono_advance: Some(0.6 * size),
            ..line(text, y0, x0, size)
        }
    }

    #[test]
    fn clean_text_collapses_space_and_spells_out_ligatures() {
        assert_eq!(clean_text("  e\u{fb03}cient\t\u{0}  \u{a0}ﬁle "), "efficient file");
    }

    #[test]
    fn monospaced_stretches_take_the_spaces_between_their_runs_only() {
        let (text, spans) = clean_pieces(&[
            ("run ", false),
            ("make", true),
            (" ", false),
            ("check", true),
            (" now, ", false),
            ("e\u{fb03}", true),
            (".", false),
        ]);
        assert_eq!(text, "run make check now, effi.");
        let code: Vec<&str> = spans.iter().map(|s| &text[s.clone()]).collect();
        assert_eq!(code, ["make check", "effi"]);
    }

    #[test]
    fn the_body_size_is_the_proportional_texts_even_when_code_is_most_of_the_page() {
        // 10 pt prose, 8 pt code with three times as many characters.
        let body = body_style_of([(10.0, 1000, false), (8.0, 3000, true), (14.0, 50, false)]);
        assert_eq!(
            body,
            BodyStyle {
                size: 10.0,
                mono: false
            }
        );
        // A listing with a proportional title is a monospaced document.
        let body = body_style_of([(14.0, 40, false), (9.0, 4000, true)]);
        assert_eq!(body, BodyStyle { size: 9.0, mono: true });
    }
}
