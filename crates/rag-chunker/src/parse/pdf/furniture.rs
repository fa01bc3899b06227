//! Page furniture: the running heads, footers and page numbers of a document, found line by line
//! near the top and bottom of its pages by how they repeat: verbatim, or differing only in the
//! page number.

use std::collections::{BTreeMap, BTreeSet};

use super::layout::Segment;
use super::lines::{BodyStyle, body_style_of};

/// Only the first and last lines of a page can be furniture: at most this many lines from each
/// edge, and only within [`EDGE_SHARE`] of the page height from it.
const EDGE_LINES: usize = 3;

/// The share of the page height, from the top or the bottom edge, where furniture can sit.
const EDGE_SHARE: f64 = 0.12;

/// A running head sits at the same height on every page, give or take this many points.
const SAME_PLACE: f64 = 4.0;

/// Two pages that carry the same line verbatim are a run of running heads when they are at most
/// this many pages apart: consecutive pages, or every other page, for the heads of two-sided
/// documents that alternate between even and odd pages.
const MAX_VERBATIM_STEP: usize = 2;

/// A line repeated verbatim is furniture only on a run of at least this many pages (or on every
/// page of a shorter document): a sentence or a heading can open two pages near each other
/// ("For example, on POSIX:"), a running head opens them all.
const MIN_VERBATIM_PAGES: usize = 3;

/// A line at least this much larger than the body text, or bold, is a heading, not furniture.
const HEADING_SIZE_RATIO: f64 = 1.15;

/// One page as the furniture finder sees it: its number, its height and its segments.
pub(super) struct PageEdges<'a> {
    pub(super) number: u32,
    pub(super) height: f64,
    pub(super) segments: &'a [Segment],
}

/// What to leave out of each page, and what to tell the user about it.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Furniture {
    /// For every page (in the order given), the indices of its segments to leave out.
    pub(super) dropped: Vec<BTreeSet<usize>>,
    /// Pages emptied by the removal, or a document that is nothing but repeated lines.
    pub(super) warnings: Vec<String>,
}

/// The page furniture of a document.
///
/// A candidate is a line (its segments together) among the [`EDGE_LINES`] first or last of its
/// page, within [`EDGE_SHARE`] of the page height from that edge. Its text with every number
/// (a run of digits, or a Roman numeral word) replaced by a placeholder is its template;
/// candidates of one template at one edge, at one height ([`SAME_PLACE`] of their median), are
/// compared page by page:
///
/// - lines equal but for numbers that grow with the page (`Page 3 of 40`, `Page 4 of 40`; `iv`,
///   `v`) are a running head or footer with the page number, on any pages;
/// - lines equal word for word on a run of [`MIN_VERBATIM_PAGES`] pages or more (every page of a
///   shorter document), each at most [`MAX_VERBATIM_STEP`] from the next, with a letter in them,
///   are a running head or footer; runs of pages are judged apart, so a head that changes per
///   chapter, or alternates between even and odd pages, is found within each run;
/// - a line that differs in any other way is content (`Invoice 1017`, `Invoice 1027`), and so is
///   a monospaced line (code repeats; running heads are not code) unless the whole document is
///   monospaced.
///
/// A line that repeats verbatim but is a heading (bold or larger than the body text) or a table's
/// header row (cells above another row of cells) is kept where it first appears and left out
/// where it repeats. A heading is never taken for a numbered running head. A line that is the
/// only one of its template, at the height where the document's furniture sits and carrying its
/// page's number (known from the pages around it) set apart as a segment of its own, is
/// furniture too: the running head of a chapter one page long. Removal that would empty the whole document keeps its first page with
/// text whole; a page it empties is named in a warning.
pub(super) fn furniture(pages: &[PageEdges<'_>]) -> Furniture {
    let body = body_style_of(
        pages
            .iter()
            .flat_map(|page| page.segments.iter().flat_map(|s| &s.runs))
            .map(|run| {
                (
                    run.size,
                    run.text.chars().filter(|c| !c.is_whitespace()).count(),
                    run.mono,
                )
            }),
    );
    let candidates: Vec<Vec<Candidate>> = pages.iter().map(|page| edge_candidates(page, body)).collect();
    let mut groups: BTreeMap<(Edge, &str), Vec<(usize, usize)>> = BTreeMap::new();
    for (page, page_candidates) in candidates.iter().enumerate() {
        for (index, candidate) in page_candidates.iter().enumerate() {
            groups
                .entry((candidate.edge, candidate.template.as_str()))
                .or_default()
                .push((page, index));
        }
    }
    let first_seen = first_pages_of_lines(pages);
    let mut verdicts: Vec<Vec<Verdict>> = candidates.iter().map(|c| vec![Verdict::Content; c.len()]).collect();
    let mut labels = PageLabels::default();
    let mut heights: BTreeSet<(Edge, i64)> = BTreeSet::new();
    for members in groups.values() {
        let at = |&(page, index): &(usize, usize)| &candidates[page][index];
        let mut by_height: Vec<f64> = members.iter().map(|m| at(m).y0).collect();
        by_height.sort_by(f64::total_cmp);
        let median = by_height[by_height.len() / 2];
        let mut placed: Vec<(usize, usize)> = Vec::new();
        for &member in members {
            // One line a page: a second line of the same template lower down is content.
            if (at(&member).y0 - median).abs() <= SAME_PLACE && placed.last().is_none_or(|last| last.0 != member.0) {
                placed.push(member);
            }
        }
        // Kept once where it first appears: on the first page of its first run, unless an earlier
        // page already has it (a table's header row under the title of its first page).
        let mut kept_once = placed.first().is_some_and(|&(page, index)| {
            first_seen
                .get(&text_key(&at(&(page, index)).text))
                .is_some_and(|&p| p < page)
        });
        for run in runs(&placed, |m| at(m)) {
            let first = at(&run.members[0]);
            let numbered = run.follows.is_some();
            // Code repeats (`const fs = require('node:fs');` opens many pages); running heads are
            // not set in a monospaced font, unless the whole document is.
            if (numbered && first.heading) || (first.mono && !body.mono) {
                continue;
            }
            let verbatim_run = run.members.len() >= MIN_VERBATIM_PAGES.min(pages.len());
            if !numbered && (!verbatim_run || !first.text.chars().any(char::is_alphabetic)) {
                continue;
            }
            heights.insert((first.edge, (median * 2.0).round() as i64));
            for (position, member) in run.members.iter().enumerate() {
                let keep = !numbered && (first.heading || first.header_row) && !kept_once && position == 0;
                verdicts[member.0][member.1] = if keep { Verdict::KeptOnce } else { Verdict::Furniture };
                if let Some(slot) = run.follows {
                    labels.record(member.0, at(member).numbers[slot]);
                }
            }
            kept_once |= !numbered && (first.heading || first.header_row);
        }
    }
    // The running head of a one-page run: where heads sit, with its page's number.
    for (page, page_candidates) in candidates.iter().enumerate() {
        for (index, candidate) in page_candidates.iter().enumerate() {
            let at_head_height = heights.contains(&(candidate.edge, (candidate.y0 * 2.0).round() as i64))
                || heights
                    .iter()
                    .any(|&(edge, y)| edge == candidate.edge && (y as f64 / 2.0 - candidate.y0).abs() <= SAME_PLACE);
            if verdicts[page][index] == Verdict::Content
                && !candidate.heading
                && at_head_height
                && candidate.lone_numbers.iter().any(|&n| labels.is_label_of(page, n))
            {
                verdicts[page][index] = Verdict::Furniture;
            }
        }
    }
    let mut dropped: Vec<BTreeSet<usize>> = candidates
        .iter()
        .zip(&verdicts)
        .map(|(page_candidates, page_verdicts)| {
            page_candidates
                .iter()
                .zip(page_verdicts)
                .filter(|(_, verdict)| **verdict == Verdict::Furniture)
                .flat_map(|(candidate, _)| candidate.segments.iter().copied())
                .collect()
        })
        .collect();
    let mut warnings = Vec::new();
    let has_text = |page: usize| !pages[page].segments.is_empty();
    let emptied: Vec<usize> = (0..pages.len())
        .filter(|&page| has_text(page) && dropped[page].len() == pages[page].segments.len())
        .collect();
    let with_text = (0..pages.len()).filter(|&page| has_text(page)).count();
    if with_text > 0 && emptied.len() == with_text {
        let first = emptied[0];
        dropped[first].clear();
        warnings.push(format!(
            "every line of the document repeats from page to page like a running head or page number: page {} is kept whole and the repeats on the other pages are left out as page furniture",
            pages[first].number
        ));
    } else if !emptied.is_empty() {
        let numbers: Vec<u32> = emptied.iter().map(|&page| pages[page].number).collect();
        warnings.push(format!(
            "{} all of {} text repeats on other pages as running heads, footers or page numbers and is left out as page furniture",
            page_list(&numbers),
            if numbers.len() == 1 { "its" } else { "their" }
        ));
    }
    Furniture { dropped, warnings }
}

/// A line's text as the key of [`first_pages_of_lines`]: a hash, so that the document's text is
/// not held twice.
fn text_key(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    // The default hasher's keys are fixed, so the key is the same in every run.
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut hasher);
    hasher.finish()
}

/// The first page on which each line of the document appears (by [`text_key`] of its text,
/// white space collapsed), wherever it is on the page.
fn first_pages_of_lines(pages: &[PageEdges<'_>]) -> BTreeMap<u64, usize> {
    let mut first = BTreeMap::new();
    for (page, edges) in pages.iter().enumerate() {
        let mut lines: BTreeMap<usize, Vec<String>> = BTreeMap::new();
        for segment in edges.segments {
            lines.entry(segment.line).or_default().push(segment.text());
        }
        for texts in lines.values() {
            let text = texts.join(" ").split_whitespace().collect::<Vec<_>>().join(" ");
            first.entry(text_key(&text)).or_insert(page);
        }
    }
    first
}

/// `page 3:` or `pages 3, 5-7:`.
fn page_list(numbers: &[u32]) -> String {
    let mut ranges: Vec<(u32, u32)> = Vec::new();
    for &n in numbers {
        match ranges.last_mut() {
            Some((_, end)) if *end + 1 == n => *end = n,
            _ => ranges.push((n, n)),
        }
    }
    let parts: Vec<String> = ranges
        .iter()
        .map(|&(a, b)| if a == b { a.to_string() } else { format!("{a}-{b}") })
        .collect();
    let noun = if numbers.len() == 1 { "page" } else { "pages" };
    format!("{noun} {}:", parts.join(", "))
}

/// What a candidate line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Content,
    Furniture,
    /// A repeated heading or header row, at the place it first appears.
    KeptOnce,
}

/// Which edge of the page a line sits at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Edge {
    Top,
    Bottom,
}

/// A number in a line: its value, and whether it is written in Roman numerals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Number {
    value: i64,
    roman: bool,
}

/// A line near the top or bottom edge of its page.
#[derive(Debug)]
struct Candidate {
    /// The indices of its segments on its page.
    segments: Vec<usize>,
    edge: Edge,
    y0: f64,
    /// Its text, white space collapsed.
    text: String,
    /// Its text with each number replaced by `#`.
    template: String,
    numbers: Vec<Number>,
    /// The numbers set apart as segments of their own (a page number at the end of a running
    /// head, not a footnote's mark at the start of its text).
    lone_numbers: Vec<Number>,
    /// Bold or larger than the body text.
    heading: bool,
    /// At least half its characters monospaced.
    mono: bool,
    /// Several cells, above another line of several cells.
    header_row: bool,
}

fn edge_candidates(page: &PageEdges<'_>, body: BodyStyle) -> Vec<Candidate> {
    let mut lines: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (index, segment) in page.segments.iter().enumerate() {
        lines.entry(segment.line).or_default().push(index);
    }
    let order: Vec<usize> = lines.keys().copied().collect();
    let top: BTreeSet<usize> = order.iter().take(EDGE_LINES).copied().collect();
    let bottom: BTreeSet<usize> = order.iter().rev().take(EDGE_LINES).copied().collect();
    let band = EDGE_SHARE * page.height;
    let mut out = Vec::new();
    for (position, (line, segments)) in lines.iter().enumerate() {
        let y0 = segments
            .iter()
            .map(|&i| page.segments[i].bbox.y0)
            .fold(f64::MAX, f64::min);
        let y1 = segments
            .iter()
            .map(|&i| page.segments[i].bbox.y1)
            .fold(f64::MIN, f64::max);
        let edge = if top.contains(line) && y1 <= band {
            Edge::Top
        } else if bottom.contains(line) && y0 >= page.height - band {
            Edge::Bottom
        } else {
            continue;
        };
        let raw: Vec<String> = segments.iter().map(|&i| page.segments[i].text()).collect();
        let text = raw.join(" ").split_whitespace().collect::<Vec<_>>().join(" ");
        if text.is_empty() {
            continue;
        }
        let (template, numbers) = template_of(&text);
        let lone_numbers = raw
            .iter()
            .filter_map(|segment| match template_of(segment.trim()) {
                (t, n) if t == "#" => n.first().copied(),
                _ => None,
            })
            .collect();
        let runs = || segments.iter().flat_map(|&i| &page.segments[i].runs);
        let chars = |bold_only: bool| {
            runs()
                .filter(|r| !bold_only || r.bold)
                .map(|r| r.text.chars().filter(|c| !c.is_whitespace()).count())
                .sum::<usize>()
        };
        let size = runs().map(|r| r.size).fold(0.0, f64::max);
        let heading = chars(true) as f64 >= 0.9 * chars(false) as f64 || size >= HEADING_SIZE_RATIO * body.size;
        let next_cells = lines
            .values()
            .nth(position + 1)
            .filter(|next| {
                let next_y0 = next.iter().map(|&i| page.segments[i].bbox.y0).fold(f64::MAX, f64::min);
                next_y0 - y1 < 2.0 * (y1 - y0).max(1.0)
            })
            .map_or(0, Vec::len);
        out.push(Candidate {
            segments: segments.clone(),
            edge,
            y0,
            text,
            template,
            numbers,
            lone_numbers,
            heading,
            mono: 2 * runs()
                .filter(|r| r.mono)
                .map(|r| r.text.chars().filter(|c| !c.is_whitespace()).count())
                .sum::<usize>()
                >= chars(false),
            header_row: edge == Edge::Top && segments.len() >= 2 && next_cells >= 2,
        });
    }
    out
}

/// `text` with each run of digits and each Roman numeral word replaced by `#`, and the numbers.
fn template_of(text: &str) -> (String, Vec<Number>) {
    let mut template = String::with_capacity(text.len());
    let mut numbers = Vec::new();
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        let (token, number) = if c.is_ascii_digit() {
            let end = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
            let value = rest[..end].parse::<i64>().ok();
            (end, value.map(|value| Number { value, roman: false }))
        } else if c.is_alphabetic() {
            let end = rest.find(|c: char| !c.is_alphanumeric()).unwrap_or(rest.len());
            let value = roman_value(&rest[..end]);
            (end, value.map(|value| Number { value, roman: true }))
        } else {
            (c.len_utf8(), None)
        };
        match number {
            Some(number) => {
                template.push('#');
                numbers.push(number);
            }
            None => template.push_str(&rest[..token]),
        }
        rest = &rest[token..];
    }
    (template, numbers)
}

/// The value of `word` as a Roman numeral written the usual way (`xiv`, `XIV`; one case), up
/// to 3999.
fn roman_value(word: &str) -> Option<i64> {
    let lower = word.chars().all(|c| "ivxlcdm".contains(c));
    let upper = word.chars().all(|c| "IVXLCDM".contains(c));
    if word.is_empty() || word.len() > 15 || !(lower || upper) {
        return None;
    }
    let digit = |c: char| match c.to_ascii_lowercase() {
        'i' => 1,
        'v' => 5,
        'x' => 10,
        'l' => 50,
        'c' => 100,
        'd' => 500,
        _ => 1000,
    };
    let values: Vec<i64> = word.chars().map(digit).collect();
    let mut total = 0;
    for (i, &v) in values.iter().enumerate() {
        if values.get(i + 1).is_some_and(|&next| next > v) {
            total -= v;
        } else {
            total += v;
        }
    }
    // Only the canonical spelling counts: "iiii" and "ic" are words, not numbers.
    (to_roman(total) == word.to_ascii_lowercase()).then_some(total)
}

fn to_roman(mut value: i64) -> String {
    const PARTS: [(i64, &str); 13] = [
        (1000, "m"),
        (900, "cm"),
        (500, "d"),
        (400, "cd"),
        (100, "c"),
        (90, "xc"),
        (50, "l"),
        (40, "xl"),
        (10, "x"),
        (9, "ix"),
        (5, "v"),
        (4, "iv"),
        (1, "i"),
    ];
    let mut out = String::new();
    for (part, letters) in PARTS {
        while value >= part && value > 0 {
            out.push_str(letters);
            value -= part;
        }
    }
    out
}

/// Pages that carry one line of a template, in a row that repeats it: `follows` is the number
/// slot that grows with the page, for a numbered run.
struct Run<T> {
    members: Vec<T>,
    follows: Option<usize>,
}

/// How a number slot changes from one page of a run to the next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    Same,
    /// Grows as the page number does.
    Follows,
}

/// `members` (page-ordered, one a page) cut into runs of two or more members whose numbers keep
/// one pattern: each slot the same on every page, or growing with the page; a run of lines
/// equal throughout spans pages at most [`MAX_VERBATIM_STEP`] apart.
fn runs<'a, T: Copy>(members: &[(usize, T)], at: impl Fn(&(usize, T)) -> &'a Candidate) -> Vec<Run<(usize, T)>> {
    let pattern = |a: &(usize, T), b: &(usize, T)| -> Option<Vec<Slot>> {
        let (x, y) = (at(a), at(b));
        if x.numbers.len() != y.numbers.len() {
            return None;
        }
        let step = i64::try_from(b.0 - a.0).ok()?;
        x.numbers
            .iter()
            .zip(&y.numbers)
            .map(|(m, n)| match (m.roman == n.roman, n.value - m.value) {
                (true, 0) => Some(Slot::Same),
                (true, d) if d == step => Some(Slot::Follows),
                _ => None,
            })
            .collect()
    };
    let mut out = Vec::new();
    let mut start = 0;
    while start < members.len() {
        let mut end = start + 1;
        let mut run_pattern: Option<Vec<Slot>> = None;
        while end < members.len() {
            let Some(pair) = pattern(&members[end - 1], &members[end]) else {
                break;
            };
            let verbatim = pair.iter().all(|s| *s == Slot::Same);
            if verbatim && members[end].0 - members[end - 1].0 > MAX_VERBATIM_STEP {
                break;
            }
            if run_pattern.as_ref().is_some_and(|p| *p != pair) {
                break;
            }
            run_pattern = Some(pair);
            end += 1;
        }
        if let Some(pattern) = run_pattern {
            out.push(Run {
                members: members[start..end].to_vec(),
                follows: pattern.iter().position(|s| *s == Slot::Follows),
            });
            start = end;
        } else {
            start += 1;
        }
    }
    out
}

/// The page numbers the furniture shows, as offsets from the page's place in the file (a
/// document's pages `i`, `ii`, ... then `1`, `2`, ...), by page.
#[derive(Debug, Default)]
struct PageLabels {
    offsets: BTreeMap<usize, (bool, i64)>,
}

impl PageLabels {
    fn record(&mut self, page: usize, number: Number) {
        let place = i64::try_from(page).unwrap_or(i64::MAX);
        self.offsets.insert(page, (number.roman, number.value - place));
    }

    /// Whether `number` is the page number of `page`: the labelled page nearest before it or
    /// the one nearest after it numbers its pages so (either: the numbering may change between
    /// them, from `iii` to `1`).
    fn is_label_of(&self, page: usize, number: Number) -> bool {
        let place = i64::try_from(page).unwrap_or(i64::MAX);
        let wanted = (number.roman, number.value - place);
        let before = self.offsets.range(..=page).next_back().map(|(_, offset)| *offset);
        let after = self.offsets.range(page..).next().map(|(_, offset)| *offset);
        before == Some(wanted) || after == Some(wanted)
    }
}

#[cfg(test)]
mod tests {
    use super::super::layout::tests::run;
    use super::super::layout::{PageText, segments};
    use super::*;

    fn page(number: u32, runs: Vec<super::super::layout::TextRun>) -> PageText {
        PageText {
            number,
            width: 612.0,
            height: 792.0,
            runs,
            off_page_bytes: 0,
        }
    }

    /// The texts of the segments `furniture` leaves out, and keeps, page by page.
    fn split(pages: &[PageText]) -> (Vec<Vec<String>>, Vec<String>) {
        let segmented: Vec<Vec<Segment>> = pages.iter().map(segments).collect();
        let input: Vec<PageEdges<'_>> = pages
            .iter()
            .zip(&segmented)
            .map(|(p, s)| PageEdges {
                number: p.number,
                height: p.height,
                segments: s,
            })
            .collect();
        let out = furniture(&input);
        let dropped = segmented
            .iter()
            .zip(&out.dropped)
            .map(|(s, d)| d.iter().map(|&i| s[i].text()).collect())
            .collect();
        (dropped, out.warnings)
    }

    fn body(number: u32) -> Vec<super::super::layout::TextRun> {
        (0..5)
            .map(|i| {
                run(
                    &format!("Body line {i} of page {number} says something new"),
                    72.0,
                    200.0 + 12.0 * f64::from(i),
                    10.0,
                )
            })
            .collect()
    }

    #[test]
    fn numbers_and_roman_numerals_make_the_template() {
        assert_eq!(
            template_of("Page 12 of 40, part iv"),
            (
                "Page # of #, part #".to_owned(),
                vec![
                    Number {
                        value: 12,
                        roman: false
                    },
                    Number {
                        value: 40,
                        roman: false
                    },
                    Number { value: 4, roman: true }
                ]
            )
        );
        assert_eq!(roman_value("XIV"), Some(14));
        assert_eq!(roman_value("mix"), Some(1009));
        for word in ["iiii", "ic", "Xi", "did", "vim", ""] {
            assert_eq!(roman_value(word), None, "{word}");
        }
    }

    #[test]
    fn heads_with_the_page_number_and_verbatim_footers_are_furniture_and_body_text_is_not() {
        let pages: Vec<PageText> = (1..=4)
            .map(|n| {
                let mut runs = vec![
                    run("Assert | Node.js v18.20.4 Documentation", 200.0, 20.0, 8.0),
                    run(&format!("{n}/12"), 540.0, 770.0, 8.0),
                ];
                runs.extend(body(n));
                page(n, runs)
            })
            .collect();
        let (dropped, warnings) = split(&pages);
        for texts in &dropped {
            assert_eq!(texts.len(), 2, "{texts:?}");
            assert_eq!(texts[0], "Assert | Node.js v18.20.4 Documentation");
            assert!(texts[1].ends_with("/12"));
        }
        assert!(warnings.is_empty());
    }

    #[test]
    fn a_line_that_differs_in_another_number_is_content() {
        // Invoice and customer numbers that grow, but not with the page.
        let pages: Vec<PageText> = (1..=4)
            .map(|n| {
                let mut runs = vec![run(
                    &format!("Invoice {} for customer {}", 1007 + 10 * n, 5501 + 10 * n),
                    72.0,
                    40.0,
                    10.0,
                )];
                runs.extend(body(n));
                page(n, runs)
            })
            .collect();
        let (dropped, _) = split(&pages);
        assert!(dropped.iter().all(Vec::is_empty), "{dropped:?}");
    }

    #[test]
    fn running_heads_that_change_per_chapter_and_alternate_with_the_title_are_found() {
        // Texinfo, two-sided: the title and the page number on even pages, the chapter and the
        // page number on odd ones; a chapter's first page has neither, and chapter 2 is three
        // pages long, so its head appears once.
        let mut pages = Vec::new();
        for n in 1..=12u32 {
            let chapter = if n < 5 {
                1
            } else if n < 8 {
                2
            } else {
                3
            };
            let opening = n == 1 || n == 5 || n == 8;
            let mut runs = body(n);
            if opening {
                runs.push(run(&format!("{n}"), 516.0, 50.0, 11.0));
            } else if n % 2 == 0 {
                runs.push(run(&format!("{n}"), 90.0, 50.0, 11.0));
                runs.push(run("The Reference Manual", 330.0, 50.0, 11.0));
            } else {
                runs.push(run(&format!("Chapter {chapter}: Part {chapter}"), 90.0, 50.0, 11.0));
                runs.push(run(&format!("{n}"), 516.0, 50.0, 11.0));
            }
            pages.push(page(n, runs));
        }
        let (dropped, warnings) = split(&pages);
        for (n, texts) in dropped.iter().enumerate() {
            assert_eq!(
                texts.len(),
                if [0, 4, 7].contains(&n) { 1 } else { 2 },
                "page {}: {texts:?}",
                n + 1
            );
        }
        // Chapter 2's only head, on page 7.
        assert_eq!(dropped[6], ["Chapter 2: Part 2", "7"]);
        assert!(warnings.is_empty());
    }

    #[test]
    fn a_repeated_heading_or_header_row_is_kept_once() {
        let pages: Vec<PageText> = (1..=4)
            .map(|n| {
                let mut runs = vec![
                    run("Date", 72.0, 40.0, 10.0),
                    run("Description", 200.0, 40.0, 10.0),
                    run("Amount", 450.0, 40.0, 10.0),
                ];
                for row in 0..3 {
                    let y = 54.0 + 12.0 * f64::from(row);
                    runs.push(run(&format!("2026-0{n}-1{row}"), 72.0, y, 10.0));
                    runs.push(run(&format!("Service {n}{row}"), 200.0, y, 10.0));
                    runs.push(run(&format!("{n}{row}.00"), 450.0, y, 10.0));
                }
                runs.extend(body(n));
                page(n, runs)
            })
            .collect();
        let (dropped, _) = split(&pages);
        assert!(dropped[0].is_empty(), "{:?}", dropped[0]);
        assert_eq!(dropped[1], ["Date", "Description", "Amount"]);
        assert_eq!(dropped[2], ["Date", "Description", "Amount"]);
        assert_eq!(dropped[3], ["Date", "Description", "Amount"]);
        // A table that runs over the pages, its header row under a title on the first page and
        // at the top of the others: kept under the title only.
        let mut pages = pages;
        for run in &mut pages[0].runs {
            run.bbox.y0 += 100.0;
            run.bbox.y1 += 100.0;
        }
        pages[0].runs.push(run("Quarterly expenses", 72.0, 40.0, 18.0));
        let (dropped, _) = split(&pages);
        assert!(dropped[0].is_empty(), "{:?}", dropped[0]);
        assert_eq!(dropped[1], ["Date", "Description", "Amount"]);
        assert_eq!(dropped[2], ["Date", "Description", "Amount"]);
        assert_eq!(dropped[3], ["Date", "Description", "Amount"]);
    }

    #[test]
    fn code_and_sentences_that_open_a_few_pages_are_content() {
        // Eight pages; two near each other open with the same sentence, three with the same
        // line of code.
        let pages: Vec<PageText> = (1..=8)
            .map(|n| {
                let mut runs = body(n);
                if n == 2 || n == 4 {
                    runs.push(run("For example, on POSIX:", 72.0, 60.0, 10.0));
                }
                if (5..=7).contains(&n) {
                    let mut code = run("const process = require('node:process');", 72.0, 60.0, 10.0);
                    code.mono = true;
                    runs.push(code);
                }
                page(n, runs)
            })
            .collect();
        let (dropped, _) = split(&pages);
        assert!(dropped.iter().all(Vec::is_empty), "{dropped:?}");
    }

    #[test]
    fn a_title_that_repeats_the_running_head_lower_on_its_page_is_kept() {
        let pages: Vec<PageText> = (1..=3)
            .map(|n| {
                let mut runs = vec![run("Field guide", 200.0, 20.0, 8.0)];
                if n == 1 {
                    runs.push(run("Field guide", 72.0, 60.0, 20.0));
                }
                runs.extend(body(n));
                page(n, runs)
            })
            .collect();
        let (dropped, _) = split(&pages);
        assert_eq!(dropped, [["Field guide"], ["Field guide"], ["Field guide"]]);
    }

    #[test]
    fn removal_that_empties_pages_says_so_and_never_empties_the_document() {
        let same = |n: u32| {
            page(
                n,
                vec![
                    run("Quarterly figures", 72.0, 40.0, 10.0),
                    run("Confidential", 72.0, 760.0, 10.0),
                ],
            )
        };
        let (dropped, warnings) = split(&[same(1), same(2), same(3)]);
        assert!(dropped[0].is_empty());
        assert_eq!(dropped[1].len(), 2);
        assert_eq!(
            warnings,
            [
                "every line of the document repeats from page to page like a running head or page number: page 1 is kept whole and the repeats on the other pages are left out as page furniture"
            ]
        );
        let mut pages = vec![page(
            1,
            [vec![run("Quarterly figures", 72.0, 40.0, 10.0)], body(1)].concat(),
        )];
        pages.extend((2..=4).map(|n| page(n, vec![run("Quarterly figures", 72.0, 40.0, 10.0)])));
        let (_, warnings) = split(&pages);
        assert_eq!(
            warnings,
            [
                "pages 2-4: all of their text repeats on other pages as running heads, footers or page numbers and is left out as page furniture"
            ]
        );
    }

    #[test]
    fn a_single_page_has_no_furniture() {
        let (dropped, warnings) = split(&[page(1, body(1))]);
        assert_eq!(dropped, [Vec::<String>::new()]);
        assert!(warnings.is_empty());
    }
}
