//! Boundaries inside a block: sentences and words (UAX #29 via `unicode-segmentation`), lines, and
//! character boundaries.
//!
//! Every function works on byte ranges of one source text and returns byte ranges of the same text,
//! so offsets stay exact for any script and the chunker never copies text to find a cut.

use std::ops::Range;

use unicode_segmentation::UnicodeSegmentation;

/// `range` without the whitespace at either end; empty (at `range.end`) if it is all whitespace.
///
/// Whitespace is Unicode `White_Space`, the definition `char::is_whitespace` and `str::trim` use,
/// so "whitespace-only" means the same thing to the parsers, the chunker and the contract checks.
pub(crate) fn trim_range(text: &str, range: Range<usize>) -> Range<usize> {
    let slice = &text[range.clone()];
    let start = range.start + (slice.len() - slice.trim_start().len());
    let end = range.end - (slice.len() - slice.trim_end().len());
    if start >= end { range.end..range.end } else { start..end }
}

/// The largest character boundary of `text` at or below `index` (clamped to the text).
pub(crate) fn floor_boundary(text: &str, index: usize) -> usize {
    text.floor_char_boundary(index.min(text.len()))
}

/// The smallest character boundary of `text` at or above `index` (clamped to the text).
pub(crate) fn ceil_boundary(text: &str, index: usize) -> usize {
    text.ceil_char_boundary(index.min(text.len()))
}

/// The sentences of `range`, trimmed, whitespace-only ones left out.
pub(crate) fn sentence_ranges(text: &str, range: Range<usize>) -> Vec<Range<usize>> {
    let base = range.start;
    text[range.clone()]
        .split_sentence_bound_indices()
        .map(|(offset, sentence)| trim_range(text, base + offset..base + offset + sentence.len()))
        .filter(|r| !r.is_empty())
        .collect()
}

/// The lines of `range` (`\n`, `\r\n` or a lone `\r` end a line), without their line ending and
/// trailing whitespace, whitespace-only ones left out.
///
/// Leading indentation stays in the line: a code chunk that starts mid-block keeps the shape of
/// its first line.
pub(crate) fn line_ranges(text: &str, range: Range<usize>) -> Vec<Range<usize>> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut line_start = range.start;
    let mut i = range.start;
    while i < range.end {
        let b = bytes[i];
        if b == b'\n' || b == b'\r' {
            push_line(text, line_start..i, &mut out);
            i += if b == b'\r' && bytes.get(i + 1) == Some(&b'\n') && i + 1 < range.end {
                2
            } else {
                1
            };
            line_start = i;
        } else {
            i += 1;
        }
    }
    push_line(text, line_start..range.end, &mut out);
    out
}

fn push_line(text: &str, line: Range<usize>, out: &mut Vec<Range<usize>>) {
    let trimmed_end = line.start + text[line.clone()].trim_end().len();
    if text[line.start..trimmed_end].chars().any(|c| !c.is_whitespace()) {
        out.push(line.start..trimmed_end);
    }
}

/// The last start of a non-whitespace word (UAX #29) in `lo..hi`, strictly after `lo`.
///
/// Used to pull a hard cut back to a word boundary; `None` when the stretch is one unbroken word
/// (a long run of letters without spaces, say), so the caller cuts at a character boundary instead.
pub(crate) fn last_word_start(text: &str, lo: usize, hi: usize) -> Option<usize> {
    text[lo..hi]
        .split_word_bound_indices()
        .rev()
        .find(|(offset, word)| *offset > 0 && word.chars().next().is_some_and(|c| !c.is_whitespace()))
        .map(|(offset, _)| lo + offset)
}

/// Where an overlap that should start at or after `from` begins: the first sentence start in
/// `from..=sentence_until`, else the first start of a non-whitespace word at or after `from`, both
/// strictly before `hi`. Segmentation runs on `lo..hi` so that it sees some context before `from`.
///
/// `None` when `from..hi` holds no boundary at all (one unbroken word).
pub(crate) fn overlap_boundary(text: &str, lo: usize, from: usize, sentence_until: usize, hi: usize) -> Option<usize> {
    let slice = &text[lo..hi];
    let sentence = slice
        .split_sentence_bound_indices()
        .map(|(offset, s)| trim_range(text, lo + offset..lo + offset + s.len()))
        .find(|r| !r.is_empty() && r.start >= from)
        .map(|r| r.start)
        .filter(|start| *start <= sentence_until);
    if sentence.is_some() {
        return sentence;
    }
    // A word of letters or digits reads better as a first word than punctuation (", and"), so
    // punctuation is the fallback.
    let words = || {
        slice
            .split_word_bound_indices()
            .map(|(offset, w)| (lo + offset, w.chars().next()))
            .filter(|(start, _)| *start >= from)
    };
    words()
        .find(|(_, first)| first.is_some_and(char::is_alphanumeric))
        .or_else(|| words().find(|(_, first)| first.is_some_and(|c| !c.is_whitespace())))
        .map(|(start, _)| start)
}

/// The pieces `split` cuts from the whole of `text`, as text, for tests to compare.
#[cfg(test)]
pub(crate) fn pieces(text: &str, split: fn(&str, Range<usize>) -> Vec<Range<usize>>) -> Vec<&str> {
    split(text, 0..text.len()).into_iter().map(|r| &text[r]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trim_range_drops_edge_whitespace_and_collapses_blank_ranges() {
        let text = "  héllo \u{3000}\n";
        let r = trim_range(text, 0..text.len());
        assert_eq!(&text[r], "héllo");
        assert!(trim_range(" \t\r\n", 0..4).is_empty());
    }

    #[test]
    fn sentences_are_trimmed_and_cover_every_word() {
        let text = "First one. Second one!  Third?\n\n";
        assert_eq!(pieces(text, sentence_ranges), ["First one.", "Second one!", "Third?"]);
    }

    #[test]
    fn lines_handle_every_line_ending_and_keep_indentation() {
        let text = "a\r\n  b\rc\n\n   \nd  ";
        assert_eq!(pieces(text, line_ranges), ["a", "  b", "c", "d"]);
    }

    #[test]
    fn word_starts_skip_whitespace_and_unbroken_runs_have_none() {
        let text = "alpha beta gamma";
        assert_eq!(last_word_start(text, 0, text.len()), Some(11));
        assert_eq!(last_word_start("aaaaaaaa", 0, 8), None);
        assert_eq!(overlap_boundary(text, 0, 3, text.len(), text.len()), Some(6));
        let text = "One. Two. Three.";
        assert_eq!(overlap_boundary(text, 0, 2, text.len(), text.len()), Some(5));
        // A sentence start too close to the end loses to the nearest word start.
        let text = "A long first sentence here. End.";
        assert_eq!(overlap_boundary(text, 0, 3, 10, text.len()), Some(7));
        assert_eq!(overlap_boundary("aaaaaaaa", 0, 2, 8, 8), None);
        let text = "one two, three";
        assert_eq!(overlap_boundary(text, 0, 7, 7, text.len()), Some(9));
        assert_eq!(overlap_boundary("ab ,;", 0, 2, 2, 5), Some(3));
    }

    #[test]
    fn char_boundaries_never_split_a_character() {
        let text = "a😀b";
        assert_eq!(floor_boundary(text, 3), 1);
        assert_eq!(ceil_boundary(text, 3), 5);
        assert_eq!(ceil_boundary(text, 99), text.len());
    }
}
