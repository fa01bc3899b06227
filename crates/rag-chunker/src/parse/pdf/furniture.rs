//! Page furniture: running headers, footers and page numbers that repeat on most pages, found by
//! their text with digits normalised, near the top or the bottom of the page.

use std::collections::{BTreeMap, BTreeSet};

use super::layout::Segment;

/// Only the first and last lines of a page can be furniture: at most this many lines from each
/// edge, and only within [`EDGE_SHARE`] of the page height from it.
const EDGE_LINES: usize = 3;

/// The share of the page height, from the top or the bottom edge, where furniture can sit.
const EDGE_SHARE: f64 = 0.12;

/// A text is furniture when it appears at the same edge on at least this share of the pages (and
/// on two pages at least): two-sided documents alternate two running heads, each on half of them.
const MIN_PAGE_SHARE: f64 = 0.4;

/// Which edge of the page a segment sits at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Edge {
    Top,
    Bottom,
}

/// The text that identifies a furniture candidate across pages: lower-case, white space collapsed,
/// each run of digits (page numbers, dates) replaced by one `#`, so "Page 3 of 40" and "Page 12
/// of 40" are one text.
pub(super) fn normalised(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_digits = false;
    let mut in_space = false;
    for c in text.trim().chars() {
        if c.is_ascii_digit() {
            if !in_digits {
                out.push('#');
            }
            in_digits = true;
            in_space = false;
        } else if c.is_whitespace() {
            if !in_space {
                out.push(' ');
            }
            in_space = true;
            in_digits = false;
        } else {
            out.extend(c.to_lowercase());
            in_digits = false;
            in_space = false;
        }
    }
    out
}

/// A running head sits at the same height on every page, give or take this many points.
const SAME_PLACE: f64 = 4.0;

/// Which segments of each page are furniture: for every page (in the order given), the indices
/// of its segments to leave out.
///
/// A segment is a candidate when its line is one of the [`EDGE_LINES`] first or last of its page
/// and sits within [`EDGE_SHARE`] of the page height from that edge; a candidate is furniture
/// when its normalised text is a candidate at the same edge and the same height ([`SAME_PLACE`]
/// from the text's median height) on at least [`MIN_PAGE_SHARE`] of the pages, and on two pages at
/// least. A title that repeats the running head further down its page is not furniture.
pub(super) fn furniture(pages: &[(f64, &[Segment])]) -> Vec<BTreeSet<usize>> {
    let candidates: Vec<Vec<Candidate>> = pages
        .iter()
        .map(|&(height, segments)| edge_candidates(height, segments))
        .collect();
    let mut places: BTreeMap<(Edge, &str), Vec<(usize, f64)>> = BTreeMap::new();
    for (page, page_candidates) in candidates.iter().enumerate() {
        for candidate in page_candidates {
            places
                .entry((candidate.edge, candidate.text.as_str()))
                .or_default()
                .push((page, candidate.y0));
        }
    }
    let needed = ((pages.len() as f64 * MIN_PAGE_SHARE).ceil() as usize).max(2);
    // For each text, the height it repeats at, when it repeats on enough pages.
    let mut repeated: BTreeMap<(Edge, &str), f64> = BTreeMap::new();
    for (key, mut at) in places {
        at.sort_by(|a, b| a.1.total_cmp(&b.1));
        let median = at[at.len() / 2].1;
        let mut on_pages: Vec<usize> = at
            .iter()
            .filter(|(_, y0)| (y0 - median).abs() <= SAME_PLACE)
            .map(|&(page, _)| page)
            .collect();
        on_pages.dedup();
        on_pages.sort_unstable();
        on_pages.dedup();
        if on_pages.len() >= needed {
            repeated.insert(key, median);
        }
    }
    candidates
        .iter()
        .map(|page| {
            page.iter()
                .filter(|c| {
                    repeated
                        .get(&(c.edge, c.text.as_str()))
                        .is_some_and(|median| (c.y0 - median).abs() <= SAME_PLACE)
                })
                .map(|c| c.index)
                .collect()
        })
        .collect()
}

/// A segment near the top or bottom edge of its page.
struct Candidate {
    index: usize,
    edge: Edge,
    text: String,
    y0: f64,
}

fn edge_candidates(height: f64, segments: &[Segment]) -> Vec<Candidate> {
    let mut lines: Vec<usize> = segments.iter().map(|s| s.line).collect();
    lines.sort_unstable();
    lines.dedup();
    let top_lines: BTreeSet<usize> = lines.iter().take(EDGE_LINES).copied().collect();
    let bottom_lines: BTreeSet<usize> = lines.iter().rev().take(EDGE_LINES).copied().collect();
    let band = EDGE_SHARE * height;
    segments
        .iter()
        .enumerate()
        .filter_map(|(index, segment)| {
            let edge = if top_lines.contains(&segment.line) && segment.bbox.y1 <= band {
                Edge::Top
            } else if bottom_lines.contains(&segment.line) && segment.bbox.y0 >= height - band {
                Edge::Bottom
            } else {
                return None;
            };
            let text = normalised(&segment.text());
            (!text.is_empty()).then_some(Candidate {
                index,
                edge,
                text,
                y0: segment.bbox.y0,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::layout::tests::run;
    use super::super::layout::{PageText, segments};
    use super::*;

    #[test]
    fn digits_are_one_mark_and_case_and_spaces_do_not_count() {
        assert_eq!(normalised("  Page 3  of 40 "), "page # of #");
        assert_eq!(normalised("Page 12 of 40"), "page # of #");
        assert_eq!(normalised("12/1/26, 11:22 AM"), "#/#/#, #:# am");
    }

    fn page(number: u32, body: &str) -> PageText {
        PageText {
            number,
            width: 612.0,
            height: 792.0,
            runs: vec![
                run("Assert | Node.js v18.20.4 Documentation", 200.0, 20.0, 8.0),
                run(body, 72.0, 300.0, 10.0),
                run("Returns the value", 72.0, 600.0, 10.0),
                run(&format!("{number}/12"), 540.0, 770.0, 8.0),
            ],
            off_page_bytes: 0,
        }
    }

    #[test]
    fn repeated_headers_and_page_numbers_are_furniture_and_body_text_is_not() {
        let pages: Vec<PageText> = (1..=4).map(|n| page(n, &format!("Body of page {n}"))).collect();
        let segmented: Vec<_> = pages.iter().map(segments).collect();
        let input: Vec<(f64, &[Segment])> = segmented.iter().map(|s| (792.0, s.as_slice())).collect();
        let out = furniture(&input);
        for (page, dropped) in segmented.iter().zip(&out) {
            let texts: Vec<String> = dropped.iter().map(|&i| page[i].text()).collect();
            assert_eq!(texts.len(), 2, "{texts:?}");
            assert_eq!(texts[0], "Assert | Node.js v18.20.4 Documentation");
            assert!(texts[1].ends_with("/12"));
        }
        // "Returns the value" repeats too, but 180 points above the bottom edge: not furniture.
    }

    #[test]
    fn a_title_that_repeats_the_running_head_lower_on_its_page_is_kept() {
        let mut pages: Vec<PageText> = (1..=3).map(|n| page(n, &format!("Body of page {n}"))).collect();
        pages[0]
            .runs
            .push(run("Assert | Node.js v18.20.4 Documentation", 72.0, 60.0, 20.0));
        let segmented: Vec<_> = pages.iter().map(segments).collect();
        let input: Vec<(f64, &[Segment])> = segmented.iter().map(|s| (792.0, s.as_slice())).collect();
        let out = furniture(&input);
        let kept: Vec<String> = (0..segmented[0].len())
            .filter(|i| !out[0].contains(i))
            .map(|i| segmented[0][i].text())
            .collect();
        assert!(
            kept.contains(&"Assert | Node.js v18.20.4 Documentation".to_owned()),
            "{kept:?}"
        );
        assert_eq!(out[0].len(), 2);
    }

    #[test]
    fn a_single_page_has_no_furniture() {
        let p = page(1, "Only page");
        let s = segments(&p);
        assert_eq!(furniture(&[(792.0, &s)]), [BTreeSet::new()]);
    }
}
