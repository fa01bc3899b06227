//! Page geometry: positioned text runs grouped into lines and line segments, and the reading order
//! of the segments (recursive XY-cut), all in points from the page's top-left corner.

/// A box `[x0, y0, x1, y1]` in points, y growing downwards.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Rect {
    pub(super) x0: f64,
    pub(super) y0: f64,
    pub(super) x1: f64,
    pub(super) y1: f64,
}

impl Rect {
    pub(super) const fn new(x0: f64, y0: f64, x1: f64, y1: f64) -> Self {
        Self { x0, y0, x1, y1 }
    }

    pub(super) fn width(&self) -> f64 {
        self.x1 - self.x0
    }

    pub(super) fn height(&self) -> f64 {
        self.y1 - self.y0
    }

    fn center_y(&self) -> f64 {
        (self.y0 + self.y1) / 2.0
    }

    pub(super) fn union(&self, other: &Rect) -> Rect {
        Rect::new(
            self.x0.min(other.x0),
            self.y0.min(other.y0),
            self.x1.max(other.x1),
            self.y1.max(other.y1),
        )
    }

    pub(super) fn to_array(self) -> [f64; 4] {
        [self.x0, self.y0, self.x1, self.y1].map(|v| (v * 100.0).round() / 100.0)
    }
}

/// A piece of text the page draws in one font: its text (spaces included), box and style.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct TextRun {
    pub(super) text: String,
    pub(super) bbox: Rect,
    /// The font size in points, as drawn (text matrix and CTM applied).
    pub(super) size: f64,
    pub(super) bold: bool,
    pub(super) mono: bool,
}

/// The text of one page: its 1-based number, its size, and its runs in content-stream order.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct PageText {
    pub(super) number: u32,
    pub(super) width: f64,
    pub(super) height: f64,
    pub(super) runs: Vec<TextRun>,
    /// Bytes of text the page draws outside its visible box, which no run holds.
    pub(super) off_page_bytes: usize,
}

/// Runs of one line of a page that sit together: no gap wider than [`SEGMENT_GAP_EM`] between
/// them. A line of a two-column page is two segments; reading order is decided over segments.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Segment {
    /// Index of the line (runs sharing a baseline) on its page, top to bottom.
    pub(super) line: usize,
    pub(super) bbox: Rect,
    pub(super) runs: Vec<TextRun>,
}

impl Segment {
    /// The segment's text: its runs left to right, a space where the gap between two runs is wider
    /// than a fifth of the font size and neither run brings its own.
    pub(super) fn text(&self) -> String {
        self.pieces().into_iter().map(|(text, _)| text).collect()
    }

    /// The segment's text as [`Segment::text`] gives it, in pieces: each run's text with whether
    /// its font is monospaced, and the spaces put between runs (never monospaced: they are ours).
    pub(super) fn pieces(&self) -> Vec<(&str, bool)> {
        let mut pieces: Vec<(&str, bool)> = Vec::with_capacity(self.runs.len());
        let mut previous: Option<&TextRun> = None;
        for run in &self.runs {
            if let Some(prev) = previous {
                let gap = run.bbox.x0 - prev.bbox.x1;
                let spaced = prev.text.ends_with(char::is_whitespace) || run.text.starts_with(char::is_whitespace);
                if !spaced && gap > WORD_GAP_EM * prev.size.max(run.size) {
                    pieces.push((" ", false));
                }
            }
            pieces.push((&run.text, run.mono));
            previous = Some(run);
        }
        pieces
    }
}

/// A gap between two runs of one line wider than this many font sizes separates words.
const WORD_GAP_EM: f64 = 0.2;

/// A gap between two runs of one line wider than this many font sizes separates segments (columns,
/// table cells, a page number set apart). Justified text stretches spaces to about half an em;
/// LaTeX's narrowest column gap is one em.
pub(super) const SEGMENT_GAP_EM: f64 = 0.8;

/// Two runs are on one line when they overlap vertically by at least this share of the shorter
/// one's height (a superscript does, the next line of text does not).
const SAME_LINE_SHARE: f64 = 0.5;

/// The lines of a page cut into segments, lines top to bottom, segments left to right.
///
/// Runs sorted by vertical centre are clustered by their overlap with the largest run of each line
/// so far (its first run among those of the largest size), so a line never drifts into the next
/// one by chaining and a superscript that opens a line (a footnote's mark) does not decide which
/// runs share its baseline; inside a line runs are ordered by their left edge.
pub(super) fn segments(page: &PageText) -> Vec<Segment> {
    let mut runs: Vec<&TextRun> = page
        .runs
        .iter()
        .filter(|run| !run.text.trim().is_empty() && run.bbox.height() > 0.0)
        .collect();
    runs.sort_by(|a, b| {
        a.bbox
            .center_y()
            .total_cmp(&b.bbox.center_y())
            .then(a.bbox.x0.total_cmp(&b.bbox.x0))
    });
    let mut lines: Vec<Vec<&TextRun>> = Vec::new();
    let mut anchor: Option<&TextRun> = None;
    for run in runs {
        let joins = anchor.is_some_and(|anchor| {
            let overlap = anchor.bbox.y1.min(run.bbox.y1) - anchor.bbox.y0.max(run.bbox.y0);
            overlap >= SAME_LINE_SHARE * anchor.bbox.height().min(run.bbox.height())
        });
        match lines.last_mut() {
            Some(line) if joins => {
                line.push(run);
                if anchor.is_some_and(|a| run.size > a.size) {
                    anchor = Some(run);
                }
            }
            _ => {
                lines.push(vec![run]);
                anchor = Some(run);
            }
        }
    }
    let mut out = Vec::new();
    for (index, mut line) in lines.into_iter().enumerate() {
        line.sort_by(|a, b| a.bbox.x0.total_cmp(&b.bbox.x0));
        let mut current: Option<Segment> = None;
        for run in line {
            if let Some(segment) = current.as_mut() {
                let gap = run.bbox.x0 - segment.bbox.x1;
                if gap <= SEGMENT_GAP_EM * run.size.max(1.0) {
                    segment.bbox = segment.bbox.union(&run.bbox);
                    segment.runs.push(run.clone());
                    continue;
                }
            }
            out.extend(current.take());
            current = Some(Segment {
                line: index,
                bbox: run.bbox,
                runs: vec![run.clone()],
            });
        }
        out.extend(current);
    }
    out
}

/// The reading order of a page's segments: indices into `segments`, grouped by the column each
/// belongs to, columns in reading order.
///
/// Recursive XY-cut: a region is split at a vertical gap that no segment crosses when both sides
/// are wide enough to be columns of text ([`MIN_COLUMN_SHARE`] of the page's text width, three
/// lines each), else at its widest horizontal gap; a region with neither is read line by line. A
/// full-width title above two columns is thus read first, then the left column, then the right.
/// Only a vertical cut starts a new column: the horizontal cuts inside one column keep it whole.
pub(super) fn reading_order(segments: &[Segment]) -> Vec<Vec<usize>> {
    if segments.is_empty() {
        return Vec::new();
    }
    let text_width = segments.iter().map(|s| s.bbox.x1).fold(f64::MIN, f64::max)
        - segments.iter().map(|s| s.bbox.x0).fold(f64::MAX, f64::min);
    let mut leaves = Vec::new();
    let all: Vec<usize> = (0..segments.len()).collect();
    let mut columns = 0;
    cut(segments, all, text_width, 0, &mut columns, &mut leaves, 0);
    let mut regions: Vec<(usize, Vec<usize>)> = Vec::new();
    for (column, leaf) in leaves {
        match regions.last_mut() {
            Some((last, region)) if *last == column => region.extend(leaf),
            _ => regions.push((column, leaf)),
        }
    }
    regions.into_iter().map(|(_, region)| region).collect()
}

/// Both sides of a column cut must be at least this share of the page's text width: narrower
/// "columns" are table cells or margin notes, which read better row by row.
const MIN_COLUMN_SHARE: f64 = 0.22;

/// A column needs at least this many lines of its own.
const MIN_COLUMN_LINES: usize = 3;

/// Past this many segments a region without columns is cut at every horizontal gap at once rather
/// than at the widest one, so a hostile page costs linear, not quadratic, work.
const CUT_ONE_GAP_UP_TO: usize = 2_000;

/// A line narrower than this share of its region, alone above or below the rest, is cut off
/// before the widest gap is looked for.
const LONE_LINE_SHARE: f64 = 0.3;

/// XY-cut recursion deeper than this reads the rest of a region line by line.
const MAX_CUT_DEPTH: usize = 64;

/// Cuts `region` of column `column`, pushing its leaves in reading order with their columns;
/// `columns` counts the columns made so far.
fn cut(
    segments: &[Segment],
    mut region: Vec<usize>,
    text_width: f64,
    column: usize,
    columns: &mut usize,
    out: &mut Vec<(usize, Vec<usize>)>,
    depth: usize,
) {
    if region.len() > 1 && depth < MAX_CUT_DEPTH {
        if let Some((left, right)) = column_cut(segments, &region, text_width) {
            for side in [left, right] {
                *columns += 1;
                let id = *columns;
                cut(segments, side, text_width, id, columns, out, depth + 1);
            }
            return;
        }
        let bands = band_cut(segments, &region);
        if bands.len() > 1 {
            for band in bands {
                cut(segments, band, text_width, column, columns, out, depth + 1);
            }
            return;
        }
    }
    region.sort_by(|&a, &b| {
        let (a, b) = (&segments[a], &segments[b]);
        a.line.cmp(&b.line).then(a.bbox.x0.total_cmp(&b.bbox.x0))
    });
    out.push((column, region));
}

/// The widest vertical gap of `region` that no segment crosses, if both sides are columns.
fn column_cut(segments: &[Segment], region: &[usize], text_width: f64) -> Option<(Vec<usize>, Vec<usize>)> {
    let mut by_x: Vec<usize> = region.to_vec();
    by_x.sort_by(|&a, &b| segments[a].bbox.x0.total_cmp(&segments[b].bbox.x0));
    let region_x0 = segments[by_x[0]].bbox.x0;
    let region_x1 = region.iter().map(|&i| segments[i].bbox.x1).fold(f64::MIN, f64::max);
    let min_width = MIN_COLUMN_SHARE * text_width;
    let mut reach = f64::MIN;
    let mut best: Option<(f64, usize)> = None;
    for (position, &index) in by_x.iter().enumerate() {
        let segment = &segments[index];
        if position > 0 {
            let gap = segment.bbox.x0 - reach;
            let min_gap = SEGMENT_GAP_EM * segment.runs.first().map_or(1.0, |r| r.size);
            let sides_wide = reach - region_x0 >= min_width && region_x1 - segment.bbox.x0 >= min_width;
            if gap > min_gap && sides_wide && best.is_none_or(|(widest, _)| gap > widest) {
                best = Some((gap, position));
            }
        }
        reach = reach.max(segment.bbox.x1);
    }
    let (_, position) = best?;
    let (left, right) = by_x.split_at(position);
    let lines = |side: &[usize]| {
        let mut lines: Vec<usize> = side.iter().map(|&i| segments[i].line).collect();
        lines.dedup();
        lines.sort_unstable();
        lines.dedup();
        lines.len()
    };
    if lines(left) < MIN_COLUMN_LINES || lines(right) < MIN_COLUMN_LINES {
        return None;
    }
    Some((left.to_vec(), right.to_vec()))
}

/// `region` split at its widest horizontal gap (at every one, for a large region), top to bottom;
/// one band when no gap separates its segments.
fn band_cut(segments: &[Segment], region: &[usize]) -> Vec<Vec<usize>> {
    let mut by_y: Vec<usize> = region.to_vec();
    by_y.sort_by(|&a, &b| {
        segments[a]
            .bbox
            .y0
            .total_cmp(&segments[b].bbox.y0)
            .then_with(|| segments[a].line.cmp(&segments[b].line))
    });
    let mut reach = f64::MIN;
    let mut gaps: Vec<(f64, usize)> = Vec::new();
    for (position, &index) in by_y.iter().enumerate() {
        let segment = &segments[index];
        // A gap only between whole lines: the segments of one line stay in one band.
        let same_line = position > 0 && segments[by_y[position - 1]].line == segment.line;
        if position > 0 && !same_line && segment.bbox.y0 > reach {
            gaps.push((segment.bbox.y0 - reach, position));
        }
        reach = reach.max(segment.bbox.y1);
    }
    if gaps.is_empty() {
        return vec![by_y];
    }
    let region_x0 = region.iter().map(|&i| segments[i].bbox.x0).fold(f64::MAX, f64::min);
    let region_x1 = region.iter().map(|&i| segments[i].bbox.x1).fold(f64::MIN, f64::max);
    // A lone narrow line at the top or bottom (a page number, a centred label) is cut off first:
    // it would otherwise block the column cut below it.
    let lone_narrow = |part: &[usize]| {
        let first_line = segments[part[0]].line;
        let x0 = part.iter().map(|&i| segments[i].bbox.x0).fold(f64::MAX, f64::min);
        let x1 = part.iter().map(|&i| segments[i].bbox.x1).fold(f64::MIN, f64::max);
        part.iter().all(|&i| segments[i].line == first_line) && x1 - x0 < LONE_LINE_SHARE * (region_x1 - region_x0)
    };
    let (first_gap, last_gap) = (gaps[0].1, gaps[gaps.len() - 1].1);
    let cuts: Vec<usize> = if region.len() > CUT_ONE_GAP_UP_TO {
        gaps.iter().map(|&(_, position)| position).collect()
    } else if lone_narrow(&by_y[last_gap..]) {
        vec![last_gap]
    } else if lone_narrow(&by_y[..first_gap]) {
        vec![first_gap]
    } else {
        // The widest gap; among gaps as wide (a column's even line spacing), the one nearest the
        // middle, so the recursion halves the region instead of peeling one line at a time.
        let widest = gaps.iter().map(|g| g.0).fold(f64::MIN, f64::max);
        let middle = by_y.len() / 2;
        gaps.iter()
            .filter(|g| g.0 >= widest - 0.5)
            .min_by_key(|g| g.1.abs_diff(middle))
            .map(|&(_, position)| position)
            .into_iter()
            .collect()
    };
    let mut bands = Vec::with_capacity(cuts.len() + 1);
    let mut start = 0;
    for position in cuts {
        bands.push(by_y[start..position].to_vec());
        start = position;
    }
    bands.push(by_y[start..].to_vec());
    bands
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    pub(in super::super) fn run(text: &str, x0: f64, y0: f64, size: f64) -> TextRun {
        // Half an em per character, like a proportional font's average.
        let width = text.chars().count() as f64 * size * 0.5;
        TextRun {
            text: text.to_owned(),
            bbox: Rect::new(x0, y0, x0 + width, y0 + size),
            size,
            bold: false,
            mono: false,
        }
    }

    fn page(runs: Vec<TextRun>) -> PageText {
        PageText {
            number: 1,
            width: 612.0,
            height: 792.0,
            runs,
            off_page_bytes: 0,
        }
    }

    fn ordered_texts(page: &PageText) -> Vec<String> {
        let segments = segments(page);
        reading_order(&segments)
            .into_iter()
            .flatten()
            .map(|i| segments[i].text())
            .collect()
    }

    #[test]
    fn runs_on_one_baseline_form_a_line_and_gaps_make_words() {
        let p = page(vec![
            run("world", 100.0, 100.0, 10.0),
            run("Hello", 70.0, 100.0, 10.0),
            // A superscript, raised by a third of the size, is on the line.
            run("2", 126.0, 97.0, 6.0),
            run("Next line", 70.0, 114.0, 10.0),
        ]);
        assert_eq!(ordered_texts(&p), ["Hello world2", "Next line"]);
    }

    #[test]
    fn a_footnote_mark_that_opens_a_line_does_not_split_it() {
        // The mark is raised and small; a word of the note set in another font sits a little
        // lower than the note's text, too low to overlap the mark by half.
        let mut code = run("http:", 152.0, 703.0, 9.0);
        code.bbox.y0 = 704.0;
        let p = page(vec![
            run("2", 72.0, 697.0, 6.0),
            run("for some clients", 78.0, 700.0, 9.0),
            code,
            run("may appear to work.", 177.0, 700.0, 9.0),
        ]);
        assert_eq!(ordered_texts(&p), ["2 for some clients http: may appear to work."]);
    }

    #[test]
    fn two_columns_are_read_one_after_the_other_under_a_full_width_title() {
        let mut runs = vec![run("A title that spans both of the columns below it", 72.0, 60.0, 14.0)];
        for i in 0..5 {
            let y = 100.0 + 12.0 * f64::from(i);
            runs.push(run(&format!("left column line {i} of text here"), 72.0, y, 10.0));
            runs.push(run(&format!("right column line {i} of text here"), 320.0, y, 10.0));
        }
        let texts = ordered_texts(&page(runs));
        assert_eq!(texts[0], "A title that spans both of the columns below it");
        assert!(texts[1..6].iter().all(|t| t.starts_with("left")), "{texts:?}");
        assert!(texts[6..].iter().all(|t| t.starts_with("right")), "{texts:?}");
    }

    #[test]
    fn table_cells_narrower_than_a_column_are_read_row_by_row() {
        let mut runs = Vec::new();
        for i in 0..5 {
            let y = 100.0 + 12.0 * f64::from(i);
            runs.push(run(&format!("key{i}"), 72.0, y, 10.0));
            runs.push(run(
                &format!("a long description of value {i} in the table"),
                200.0,
                y,
                10.0,
            ));
        }
        let texts = ordered_texts(&page(runs));
        assert_eq!(texts[0], "key0");
        assert!(texts[1].starts_with("a long description of value 0"), "{texts:?}");
    }

    #[test]
    fn many_segments_are_ordered_in_bounded_work() {
        // 30 000 one-word lines: bands are cut all at once, the order stays top to bottom.
        let runs: Vec<TextRun> = (0..30_000).map(|i| run("w", 72.0, f64::from(i) * 12.0, 10.0)).collect();
        let p = page(runs);
        let segments = segments(&p);
        let order: Vec<usize> = reading_order(&segments).into_iter().flatten().collect();
        assert_eq!(order.len(), 30_000);
        assert!(order.windows(2).all(|w| segments[w[0]].line < segments[w[1]].line));
    }
}
