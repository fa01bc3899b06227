//! Lines in reading order grouped into blocks: headings by font size and weight relative to the
//! body text, list items by their marker, code by its monospaced font, paragraphs by spacing,
//! indentation and style, monospaced words inside a sentence kept in it as inline code;
//! hyphenated line ends joined.

use std::collections::{BTreeMap, BTreeSet};

use super::lines::{BodyStyle, ReadLine, body_style, size_key};

/// What a block is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// A heading; its level is decided once every heading of the document is known.
    Heading,
    Paragraph,
    /// A list item; `bullet` when its marker is a bullet glyph (rendered `- `), not a number.
    ListItem {
        bullet: bool,
    },
    Code,
}

/// A block: its kind, its lines in reading order, and the style it was recognised by.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct PdfBlock {
    pub(super) kind: Kind,
    pub(super) lines: Vec<ReadLine>,
    /// The heading level (1..=6), for headings.
    pub(super) level: u8,
}

/// The characters that open a bulleted list item when followed by a space.
const BULLETS: &[char] = &[
    '•', '◦', '▪', '▫', '●', '○', '■', '□', '‣', '⁃', '∙', '·', '–', '—', '-', '*', '➢', '►', '▶', '✓', '\u{f0b7}',
];

/// Whether `text` starts with a list marker, and whether that marker is a bullet (rather than a
/// number or a letter: `1.`, `2)`, `(iv)`, `a.`).
pub(super) fn list_marker(text: &str) -> Option<bool> {
    let (marker, rest) = text.split_once(' ')?;
    if rest.trim().is_empty() {
        return None;
    }
    let mut chars = marker.chars();
    let first = chars.next()?;
    if chars.as_str().is_empty() && BULLETS.contains(&first) {
        return Some(true);
    }
    let inner = marker
        .strip_prefix('(')
        .and_then(|m| m.strip_suffix(')'))
        .or_else(|| marker.strip_suffix('.'))
        .or_else(|| marker.strip_suffix(')'))?;
    let numbered = !inner.is_empty() && inner.len() <= 3 && inner.chars().all(|c| c.is_ascii_digit());
    let lettered = inner.len() == 1 && inner.chars().all(|c| c.is_ascii_lowercase());
    let roman = marker.starts_with('(') && !inner.is_empty() && inner.chars().all(|c| "ivxl".contains(c));
    (numbered || lettered || roman).then_some(false)
}

/// A line is a heading by size when its font is at least this much larger than the body's.
const HEADING_SIZE_RATIO: f64 = 1.15;

/// A bold line at body size is a heading only when it is at most this long.
const BOLD_HEADING_MAX_CHARS: usize = 100;

/// A bold monospaced line is a heading when its font is at least this much larger than the body's.
const BOLD_CODE_HEADING_RATIO: f64 = 1.05;

/// A heading has at most this many lines; a longer run of large text is a paragraph.
const HEADING_MAX_LINES: usize = 3;

/// A line's kind on its own, before its neighbours are seen.
fn line_kind(line: &ReadLine, body: BodyStyle) -> Kind {
    let has_letters = line.text.chars().any(char::is_alphabetic);
    let chars = line.text.chars().count();
    if has_letters && line.size >= body.size * HEADING_SIZE_RATIO && chars <= 200 {
        return Kind::Heading;
    }
    let code = !body.mono && line.mono_share >= 0.9;
    // A bold line is a heading before it is a numbered item: "2. Results" is a section. A bold
    // monospaced line is one when it is larger than the body (a heading that names an option);
    // at the body size or smaller it is code.
    let ends_as_sentence = line.text.ends_with(['.', ',', ';']);
    let min_size = if code { BOLD_CODE_HEADING_RATIO } else { 0.95 };
    if has_letters
        && line.bold_share >= 0.9
        && line.size >= body.size * min_size
        && chars <= BOLD_HEADING_MAX_CHARS
        && !ends_as_sentence
    {
        return Kind::Heading;
    }
    if code {
        return Kind::Code;
    }
    if let Some(bullet) = list_marker(&line.text) {
        return Kind::ListItem { bullet };
    }
    Kind::Paragraph
}

/// Lines in reading order grouped into blocks.
///
/// A line continues the open block when it is of the same kind and style, in the same region,
/// close enough below the previous line (no more than the document's usual line gap plus
/// [`PARAGRAPH_GAP_EM`]), not indented like a paragraph's first line and not after a short line
/// that ends a sentence. A paragraph that ends a region without closing its sentence continues in
/// the next region (the next column or page) when that starts in lower case. A line that
/// continues a paragraph is never a heading (see [`continues_paragraph`]), and a monospaced line
/// that continues a sentence stays in it (see [`continues_block`]).
pub(super) fn group(mut lines: Vec<ReadLine>) -> Vec<PdfBlock> {
    let body = body_style(&lines);
    if body.mono {
        // In a monospaced document nothing stands out as code.
        for line in &mut lines {
            line.mono_spans.clear();
        }
    }
    let usual_gap = usual_line_gap(&lines, body);
    let region_right: BTreeMap<usize, f64> = lines.iter().fold(BTreeMap::new(), |mut right, line| {
        let entry = right.entry(line.region).or_insert(f64::MIN);
        *entry = entry.max(line.bbox.x1);
        right
    });
    let mut kinds: Vec<Kind> = lines.iter().map(|line| line_kind(line, body)).collect();
    let mut run_start = 0;
    for index in 1..=lines.len() {
        let linked =
            index < lines.len() && continues_paragraph(&lines[index - 1], &lines[index], usual_gap, &region_right);
        if !linked {
            if is_prose(&lines[run_start..index]) {
                for kind in &mut kinds[run_start..index] {
                    if *kind == Kind::Heading {
                        *kind = Kind::Paragraph;
                    }
                }
            }
            run_start = index;
        }
    }
    let mut blocks: Vec<PdfBlock> = Vec::new();
    for (line, kind) in lines.into_iter().zip(kinds) {
        let kind = match blocks.last() {
            Some(block) if kind == Kind::Paragraph && is_code_in_context(block, &line, usual_gap) => Kind::Code,
            _ => kind,
        };
        let continues = blocks
            .last()
            .is_some_and(|block| continues_block(block, &line, kind, usual_gap, &region_right));
        match blocks.last_mut() {
            Some(block) if continues => block.lines.push(line),
            _ => blocks.push(PdfBlock {
                kind,
                lines: vec![line],
                level: 0,
            }),
        }
    }
    assign_heading_levels(&mut blocks);
    blocks
}

/// Whether `run`, lines that each continue the one above (see [`continues_paragraph`]), is
/// running text rather than a heading that wraps: it has more lines than a heading, or a sentence
/// ends at the end of one of its lines.
fn is_prose(run: &[ReadLine]) -> bool {
    run.len() > HEADING_MAX_LINES
        || (run.len() > 1
            && run
                .iter()
                .any(|line| line.text.ends_with(['.', '!', '?', ':', ';', ','])))
}

/// A line is full when it ends within this many font sizes of its region's right edge.
const FULL_LINE_EM: f64 = 1.0;

/// Whether `next` continues the paragraph of `line`: `line` is full (its text ran on to the
/// next line rather than ending), `next` is close below it in the same region and both are in
/// the same font (size, weight and monospacing). A run of such lines that reads as running text
/// ([`is_prose`]) is a paragraph whatever its size: a heading ends before the margin, is
/// followed by text in another font, or wraps once or twice without ending a sentence.
fn continues_paragraph(line: &ReadLine, next: &ReadLine, usual_gap: f64, region_right: &BTreeMap<usize, f64>) -> bool {
    if line.region != next.region {
        return false;
    }
    let right = region_right.get(&line.region).copied().unwrap_or(line.bbox.x1);
    let full = line.bbox.x1 >= right - FULL_LINE_EM * line.size;
    let same_font = (line.size - next.size).abs() < 0.5
        && (line.bold_share >= 0.5) == (next.bold_share >= 0.5)
        && (line.mono_share >= 0.5) == (next.mono_share >= 0.5);
    let gap = next.bbox.y0 - line.bbox.y1;
    let close = gap > -line.size && gap <= usual_gap.max(0.25 * line.size) + PARAGRAPH_GAP_EM * line.size;
    full && same_font && close
}

/// Extra space between two lines, beyond the usual line gap, that ends a paragraph, in font sizes.
const PARAGRAPH_GAP_EM: f64 = 0.3;

/// A line indented this many font sizes past the line above starts a new paragraph.
const INDENT_EM: f64 = 0.8;

/// The usual gap between two consecutive body lines of one region (the median), which the
/// paragraph rule compares against.
fn usual_line_gap(lines: &[ReadLine], body: BodyStyle) -> f64 {
    let mut gaps: Vec<f64> = lines
        .windows(2)
        .filter(|w| w[0].region == w[1].region && (w[0].size - body.size).abs() < 0.5)
        .map(|w| w[1].bbox.y0 - w[0].bbox.y1)
        .filter(|gap| *gap > -0.5 * body.size && *gap < 2.0 * body.size)
        .collect();
    if gaps.is_empty() {
        return 0.25 * body.size;
    }
    gaps.sort_by(f64::total_cmp);
    gaps[gaps.len() / 2]
}

/// Whether `line` (of kind `kind` on its own) continues `block`.
///
/// A monospaced line continues a paragraph or list item as inline code when it continues its
/// sentence: close below a line that does not end one (`.`, `!`, `?`, `:`), and not indented
/// past the text's left edge. A block of code is set apart, by space above it, by indentation
/// or after a sentence that ends, and is fenced.
fn continues_block(
    block: &PdfBlock,
    line: &ReadLine,
    kind: Kind,
    usual_gap: f64,
    region_right: &BTreeMap<usize, f64>,
) -> bool {
    let Some(prev) = block.lines.last() else { return false };
    let similar_size = (line.size - prev.size).abs() <= 0.15 * prev.size.max(1.0);
    if prev.region != line.region {
        // A sentence that runs on into the next column or page.
        let open_sentence = !prev.text.ends_with(['.', '!', '?', ':', ';']);
        let lower_start = line.text.chars().next().is_some_and(char::is_lowercase);
        return block.kind == Kind::Paragraph
            && kind == Kind::Paragraph
            && similar_size
            && open_sentence
            && lower_start;
    }
    let gap = line.bbox.y0 - prev.bbox.y1;
    let close = gap <= usual_gap + PARAGRAPH_GAP_EM * prev.size.max(line.size) && gap > -prev.size;
    let left = block.lines.iter().map(|l| l.bbox.x0).fold(f64::MAX, f64::min);
    match (block.kind, kind) {
        (Kind::Code, Kind::Code) => close,
        (Kind::Heading, Kind::Heading) => {
            let same_style =
                (line.size - prev.size).abs() < 0.5 && (line.bold_share >= 0.5) == (prev.bold_share >= 0.5);
            close && same_style && block.lines.len() < HEADING_MAX_LINES
        }
        (Kind::Paragraph, Kind::Paragraph) => {
            let indented =
                line.bbox.x0 > prev.bbox.x0 + INDENT_EM * line.size && prev.bbox.x0 <= left + 0.1 * line.size;
            let right = region_right.get(&line.region).copied().unwrap_or(prev.bbox.x1);
            let width = right - left;
            let short_end = prev.bbox.x1 < right - 0.25 * width && prev.text.ends_with(['.', '!', '?', ':']);
            close && similar_size && !indented && !short_end
        }
        (Kind::ListItem { .. }, Kind::Paragraph) => {
            // A continuation line of an item hangs right of the item's marker.
            let marker_x = block.lines[0].bbox.x0;
            close && similar_size && line.bbox.x0 > marker_x + 0.3 * line.size
        }
        (Kind::Paragraph | Kind::ListItem { .. }, Kind::Code) => {
            let open_sentence = !prev.text.ends_with(['.', '!', '?', ':']);
            let text_left = match block.kind {
                Kind::Paragraph => left,
                // The item's text hangs right of its marker: at its second line, when it has one.
                _ => block
                    .lines
                    .get(1)
                    .map_or(block.lines[0].bbox.x0 + INLINE_ITEM_HANG_EM * line.size, |l| l.bbox.x0),
            };
            let marker_x = block.lines[0].bbox.x0;
            let under_text = line.bbox.x0 <= text_left + INLINE_CODE_INDENT_EM * line.size
                && (block.kind == Kind::Paragraph || line.bbox.x0 > marker_x + 0.3 * line.size);
            close && similar_size && open_sentence && under_text
        }
        _ => false,
    }
}

/// Whether `line`, a line of mixed fonts after `block`, is a line of code: it starts in a
/// monospaced font and either continues the code block above (close below it, not left of it)
/// or is set apart as code starts are (indented [`CODE_INDENT_EM`] past the text above, at
/// least [`MIXED_CODE_SHARE`] monospaced). Listings comment their code in the text font
/// (`x <- 1  # the count`), which makes such lines too mixed to be code by their share alone.
fn is_code_in_context(block: &PdfBlock, line: &ReadLine, usual_gap: f64) -> bool {
    let Some(prev) = block.lines.last() else { return false };
    let starts_mono = line.mono_spans.first().is_some_and(|span| span.start == 0);
    if !starts_mono || prev.region != line.region {
        return false;
    }
    let left = block.lines.iter().map(|l| l.bbox.x0).fold(f64::MAX, f64::min);
    let gap = line.bbox.y0 - prev.bbox.y1;
    let close = gap <= usual_gap + PARAGRAPH_GAP_EM * prev.size.max(line.size) && gap > -prev.size;
    if block.kind == Kind::Code {
        return close && line.bbox.x0 >= left - INLINE_CODE_INDENT_EM * line.size;
    }
    line.mono_share >= MIXED_CODE_SHARE && line.bbox.x0 >= left + CODE_INDENT_EM * line.size
}

/// A line that starts in a monospaced font and is indented this many font sizes past the text
/// above it starts code (Texinfo indents examples by 0.4 in, 2.6 font sizes of its 11 pt text).
const CODE_INDENT_EM: f64 = 2.0;

/// The share of monospaced letters and digits a line set apart that way needs to start code.
const MIXED_CODE_SHARE: f64 = 0.3;

/// A monospaced line indented more than this many font sizes past the text it follows is set
/// apart from it: code, not a word of its sentence.
const INLINE_CODE_INDENT_EM: f64 = 0.5;

/// Where a one-line list item's text is taken to start, in font sizes right of its marker.
const INLINE_ITEM_HANG_EM: f64 = 2.5;

/// Heading levels by style rank: the largest heading size is level 1, the next level 2, and so
/// on (bold before regular at one size), level 6 for the sixth style and below.
fn assign_heading_levels(blocks: &mut [PdfBlock]) {
    let style = |block: &PdfBlock| {
        let line = &block.lines[0];
        (size_key(line.size), line.bold_share >= 0.5)
    };
    let styles: BTreeSet<(i64, bool)> = blocks.iter().filter(|b| b.kind == Kind::Heading).map(style).collect();
    // Descending size, bold first.
    let ranked: Vec<(i64, bool)> = styles.into_iter().rev().collect();
    for block in blocks.iter_mut().filter(|b| b.kind == Kind::Heading) {
        let rank = ranked.iter().position(|s| *s == style(block)).unwrap_or(0);
        block.level = u8::try_from(rank + 1).unwrap_or(6).min(6);
    }
}

/// How two lines of one block meet: `"-"` dropped and no space when the first ends in a hyphen
/// that breaks a word (see [`Hyphenation`]), no space when a kept hyphen ends it, else one space.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Join {
    /// One space between the lines.
    Space,
    /// The first line's last character (a hyphen) is dropped and the lines meet without a space.
    DropHyphen,
    /// The lines meet without a space, the hyphen kept (a compound such as `well-known`).
    KeepHyphen,
}

/// The document's own evidence for hyphenation: the hyphenated words and the plain words it uses
/// inside lines, lower-cased.
///
/// A line that ends in a hyphen after a letter, followed by a line that starts with a lower-case
/// letter, is a word broken across lines: the hyphen is dropped and the halves joined, unless the
/// document writes the hyphenated compound (`well-known`) inside a line somewhere and never the
/// joined word (`wellknown`), in which case the hyphen is a compound's and kept. A soft hyphen
/// (U+00AD) is always dropped.
#[derive(Debug, Default)]
pub(super) struct Hyphenation {
    hyphenated: BTreeSet<String>,
    plain: BTreeSet<String>,
}

impl Hyphenation {
    /// The evidence of every line of `blocks`.
    pub(super) fn of(blocks: &[PdfBlock]) -> Self {
        let mut evidence = Self::default();
        for line in blocks.iter().flat_map(|b| &b.lines) {
            for word in line.text.split(' ') {
                let word: String = word
                    .trim_matches(|c: char| !c.is_alphanumeric() && c != '-')
                    .to_lowercase();
                if word.is_empty() {
                    continue;
                }
                if word.contains('-') {
                    evidence.hyphenated.insert(word);
                } else {
                    evidence.plain.insert(word);
                }
            }
        }
        evidence
    }

    /// How `first` and `next`, consecutive lines of one block, meet.
    pub(super) fn join(&self, first: &str, next: &str) -> Join {
        let mut tail = first.chars().rev();
        let (Some(last), Some(before)) = (tail.next(), tail.next()) else {
            return Join::Space;
        };
        let starts_lower = next.chars().next().is_some_and(char::is_lowercase);
        if !before.is_alphabetic() || !starts_lower {
            return Join::Space;
        }
        match last {
            '\u{ad}' => Join::DropHyphen,
            '-' | '\u{2010}' => {
                let stem: String = first[..first.len() - last.len_utf8()]
                    .rsplit(' ')
                    .next()
                    .unwrap_or("")
                    .chars()
                    .rev()
                    .take_while(|c| c.is_alphanumeric() || *c == '-')
                    .collect::<Vec<char>>()
                    .into_iter()
                    .rev()
                    .collect();
                let rest: String = next.chars().take_while(|c| c.is_alphanumeric() || *c == '-').collect();
                let compound = format!("{stem}-{rest}").to_lowercase();
                let joined = format!("{stem}{rest}").to_lowercase();
                if self.hyphenated.contains(&compound) && !self.plain.contains(&joined) {
                    Join::KeepHyphen
                } else {
                    Join::DropHyphen
                }
            }
            _ => Join::Space,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::layout::Rect;
    use super::super::lines::tests::{line, mono};
    use super::*;

    fn kinds(blocks: &[PdfBlock]) -> Vec<(Kind, usize)> {
        blocks.iter().map(|b| (b.kind, b.lines.len())).collect()
    }

    #[test]
    fn list_markers_are_bullets_numbers_and_letters() {
        assert_eq!(list_marker("• first item"), Some(true));
        assert_eq!(list_marker("12. twelfth"), Some(false));
        assert_eq!(list_marker("(iv) fourth"), Some(false));
        assert_eq!(list_marker("b) second"), Some(false));
        assert_eq!(list_marker("2024. was a year"), None);
        assert_eq!(list_marker("Version 2."), None);
        assert_eq!(list_marker("•"), None);
    }

    #[test]
    fn headings_by_size_get_levels_by_rank_and_paragraphs_split_on_gaps_and_indents() {
        let mut title = line("Big title", 50.0, 72.0, 20.0);
        title.bold_share = 1.0;
        let lines = vec![
            title,
            line("Section", 80.0, 72.0, 14.0),
            line("Body text line one that goes on", 100.0, 72.0, 10.0),
            line("and continues here.", 112.0, 72.0, 10.0),
            // A first-line indent starts a paragraph without extra space.
            line("A new paragraph starts here", 124.0, 90.0, 10.0),
            line("and goes on.", 136.0, 72.0, 10.0),
            // Extra space does too.
            line("After a gap", 160.0, 72.0, 10.0),
            line("Another section", 190.0, 72.0, 14.0),
            line("• an item that wraps", 210.0, 72.0, 10.0),
            line("onto a second line", 222.0, 84.0, 10.0),
            line("• another item", 234.0, 72.0, 10.0),
        ];
        let blocks = group(lines);
        assert_eq!(
            kinds(&blocks),
            [
                (Kind::Heading, 1),
                (Kind::Heading, 1),
                (Kind::Paragraph, 2),
                (Kind::Paragraph, 2),
                (Kind::Paragraph, 1),
                (Kind::Heading, 1),
                (Kind::ListItem { bullet: true }, 2),
                (Kind::ListItem { bullet: true }, 1),
            ]
        );
        let levels: Vec<u8> = blocks
            .iter()
            .filter(|b| b.kind == Kind::Heading)
            .map(|b| b.level)
            .collect();
        assert_eq!(levels, [1, 2, 2]);
    }

    #[test]
    fn an_open_sentence_runs_on_into_the_next_column() {
        let mut next = line("continues in the next column.", 100.0, 320.0, 10.0);
        next.region = 1;
        let mut other = line("New paragraph in the next column.", 112.0, 320.0, 10.0);
        other.region = 1;
        let blocks = group(vec![line("A sentence that", 700.0, 72.0, 10.0), next]);
        assert_eq!(kinds(&blocks), [(Kind::Paragraph, 2)]);
        let mut capital = line("Capital start.", 100.0, 320.0, 10.0);
        capital.region = 1;
        let blocks = group(vec![line("A sentence that", 700.0, 72.0, 10.0), capital, other]);
        assert_eq!(blocks.len(), 2);
    }

    #[test]
    fn hyphens_at_line_ends_join_words_unless_the_document_writes_the_compound() {
        let blocks = group(vec![
            line("a well-known method and an exam-", 100.0, 72.0, 10.0),
            line("ple of it, well-", 112.0, 72.0, 10.0),
            line("known, Pre-", 124.0, 72.0, 10.0),
            line("War, 3-", 136.0, 72.0, 10.0),
            line("d and x\u{ad}", 148.0, 72.0, 10.0),
            line("y", 160.0, 72.0, 10.0),
        ]);
        let evidence = Hyphenation::of(&blocks);
        assert_eq!(evidence.join("an exam-", "ple of it"), Join::DropHyphen);
        assert_eq!(evidence.join("of it, well-", "known, Pre-"), Join::KeepHyphen);
        assert_eq!(evidence.join("known, Pre-", "War, 3-"), Join::Space, "upper-case start");
        assert_eq!(
            evidence.join("War, 3-", "d and"),
            Join::Space,
            "digit before the hyphen"
        );
        assert_eq!(evidence.join("and x\u{ad}", "y"), Join::DropHyphen, "soft hyphen");
        assert_eq!(evidence.join("a pause -", "then"), Join::Space, "a dash after a space");
    }

    #[test]
    fn monospaced_lines_are_code_unless_the_body_is_monospaced() {
        let code = mono("let x = 1;", 100.0, 72.0, 10.0);
        let mut code2 = code.clone();
        code2.bbox = Rect::new(84.0, 112.0, 300.0, 122.0);
        let prose = line("Some prose around the code that is the body", 130.0, 72.0, 10.0);
        let prose2 = line("More prose, more than the code has characters.", 150.0, 72.0, 10.0);
        let blocks = group(vec![code.clone(), code2, prose.clone(), prose2]);
        assert_eq!(kinds(&blocks)[0], (Kind::Code, 2));
        let body: Vec<ReadLine> = (0..3)
            .map(|i| ReadLine {
                bbox: Rect::new(72.0, 100.0 + 12.0 * f64::from(i), 372.0, 110.0 + 12.0 * f64::from(i)),
                ..code.clone()
            })
            .collect();
        let blocks = group(body);
        assert_eq!(kinds(&blocks), [(Kind::Paragraph, 3)]);
        assert!(
            blocks[0].lines.iter().all(|l| l.mono_spans.is_empty()),
            "no inline code either"
        );
    }

    #[test]
    fn a_line_that_continues_a_paragraph_is_never_a_heading() {
        // Body text at 10 pt, then a passage at 12 pt (large enough for a heading) whose full lines
        // run on into the next in the same font, and a bold heading that wraps once.
        let mut lines: Vec<ReadLine> = (0..6)
            .map(|i| {
                line(
                    "Body text that sets the body size of the page at ten points",
                    60.0 + 12.0 * f64::from(i),
                    72.0,
                    10.0,
                )
            })
            .collect();
        for (i, text) in [
            "A larger passage that fills its line",
            "and the next one too, then ends",
            "its sentence.",
        ]
        .iter()
        .enumerate()
        {
            let mut l = line(text, 150.0 + 14.0 * i as f64, 72.0, 12.0);
            if i == 2 {
                l.bbox.x1 = 160.0;
            }
            lines.push(l);
        }
        for (i, text) in ["2. A bold heading long enough to wrap onto", "a second line"]
            .iter()
            .enumerate()
        {
            let mut l = line(text, 220.0 + 14.0 * i as f64, 72.0, 12.0);
            l.bold_share = 1.0;
            if i == 1 {
                l.bbox.x1 = 150.0;
            }
            lines.push(l);
        }
        lines.push(line("More body text under the heading.", 260.0, 72.0, 10.0));
        let blocks = group(lines);
        assert_eq!(
            kinds(&blocks),
            [
                (Kind::Paragraph, 6),
                (Kind::Paragraph, 3),
                (Kind::Heading, 2),
                (Kind::Paragraph, 1)
            ]
        );
    }

    #[test]
    fn a_monospaced_line_is_inline_only_where_it_continues_the_sentence_under_its_text() {
        let prose = |text: &str, y: f64| line(text, y, 72.0, 10.0);
        let blocks = group(vec![
            prose("Run the tests with", 100.0),
            mono("make check", 112.0, 72.0, 10.0),
            prose("before you push.", 124.0),
            // After a sentence that ends, or indented: set apart.
            prose("Build it first:", 150.0),
            mono("make", 162.0, 72.0, 10.0),
            prose("and then unpack it with", 190.0),
            mono("tar -xf r.tar.gz", 202.0, 100.0, 10.0),
        ]);
        assert_eq!(
            kinds(&blocks),
            [
                (Kind::Paragraph, 3),
                (Kind::Paragraph, 1),
                (Kind::Code, 1),
                (Kind::Paragraph, 1),
                (Kind::Code, 1)
            ]
        );
    }
}
