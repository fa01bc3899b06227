//! Boundaries inside a block: sentences and words (UAX #29 via `unicode-segmentation`), lines, and
//! character boundaries.
//!
//! Every function works on byte ranges of one source text and returns byte ranges of the same text,
//! so offsets stay exact for any script and the chunker never copies text to find a cut.

use std::ops::Range;

use unicode_segmentation::UnicodeSegmentation;

mod ascii;

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

/// The sentences of `range` as a reader sees them, trimmed, whitespace-only ones left out: UAX #29
/// sentences of the text with every soft line break read as a space.
///
/// A soft line break is a single line break between two lines that are not blank: Markdown and
/// plain text wrap prose at a line width, and UAX #29 ends a sentence at every line break, which
/// would make each wrapped line a sentence of its own. A blank line still ends one.
///
/// ASCII text is split by [`ascii::sentence_bounds`], the same rules without `unicode-segmentation`'s
/// per-character table search. Other text is cut first at every [sure start](sure_start_after),
/// where a sentence ends whatever comes before or after it, and each stretch between two of them is
/// split on its own, by whichever of the two fits it: that gives the sentences a split of the
/// whole gives, since no rule looks back past the start of a sentence or ahead past a capital
/// letter.
pub(crate) fn sentence_ranges(text: &str, range: Range<usize>) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    if text[range.clone()].is_ascii() {
        push_sentences(text, range, &mut out);
        return out;
    }
    let bytes = text.as_bytes();
    let mut from = range.start;
    let mut terminator = range.start;
    while let Some(at) = bytes[terminator..range.end]
        .iter()
        .position(|b| matches!(b, b'.' | b'!' | b'?'))
    {
        terminator += at;
        if let Some(start) = sure_start_after(bytes, terminator, range.end) {
            push_sentences(text, from..start, &mut out);
            from = start;
        }
        terminator += 1;
    }
    push_sentences(text, from..range.end, &mut out);
    out
}

/// The sentences of `span`, which starts and ends where sentences do, onto `out`.
fn push_sentences(text: &str, span: Range<usize>, out: &mut Vec<Range<usize>>) {
    let base = span.start;
    let softened = soften_line_breaks(&text[span]);
    let sentence = |(at, end): (usize, usize)| trim_range(text, base + at..base + end);
    if softened.is_ascii() {
        let bounds = ascii::sentence_bounds(softened.as_bytes());
        out.extend(
            bounds
                .windows(2)
                .map(|pair| sentence((pair[0], pair[1])))
                .filter(|r| !r.is_empty()),
        );
    } else {
        out.extend(
            softened
                .split_sentence_bound_indices()
                .map(|(at, s)| sentence((at, at + s.len())))
                .filter(|r| !r.is_empty()),
        );
    }
}

/// A closing mark UAX #29 lets follow a terminator inside its sentence (class Close).
fn is_closing(byte: &u8) -> bool {
    matches!(byte, b')' | b']' | b'"' | b'\'')
}

/// Where a sentence surely starts after the terminator (`.`, `!` or `?`) at `terminator`: at an
/// ASCII capital after closing marks and one or more spaces, all before `end`. UAX #29 always ends
/// a sentence there: rule SB11 breaks after a terminator, closing marks and spaces, and none of the
/// rules before it that keep a sentence going (SB6 to SB10) applies before a capital letter.
fn sure_start_after(bytes: &[u8], terminator: usize, end: usize) -> Option<usize> {
    let closing = bytes[terminator + 1..end].iter().take_while(|b| is_closing(b)).count();
    let spaces_from = terminator + 1 + closing;
    let spaces = bytes[spaces_from..end].iter().take_while(|&&b| b == b' ').count();
    let start = spaces_from + spaces;
    (spaces > 0 && bytes.get(start).is_some_and(u8::is_ascii_uppercase) && start < end).then_some(start)
}

/// `text` with every soft line break (see [`sentence_ranges`]) replaced by as many spaces, so that
/// a byte offset into the result is the same offset into `text`.
fn soften_line_breaks(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(['\n', '\r']) {
        let len = if rest[at..].starts_with("\r\n") { 2 } else { 1 };
        let line = &rest[..at];
        let following = &rest[at + len..];
        let next_line = following.find(['\n', '\r']).map_or(following, |end| &following[..end]);
        out.push_str(line);
        if line.trim().is_empty() || next_line.trim().is_empty() {
            out.push_str(&rest[at..at + len]);
        } else {
            out.push_str(&"  "[..len]);
        }
        rest = following;
    }
    out.push_str(rest);
    out
}

/// Where the sentences of `range` (see [`sentence_ranges`]) start.
pub(crate) fn sentence_starts(text: &str, range: Range<usize>) -> Vec<usize> {
    sentence_ranges(text, range).into_iter().map(|r| r.start).collect()
}

/// Where the sentences of `range` (see [`sentence_ranges`]) start, at `lo` or after it: the same
/// positions as `sentence_starts(text, range)` gives there, found from the last place before `lo`
/// where a sentence surely starts, instead of from the start of `range`.
///
/// That place is a [sure start](sure_start_after): the sentences after it do not depend on the text
/// before it, since the rules of UAX #29 never look back past the end of the sentence before, and
/// soft line breaks are read the same from there, the line it is on not being blank either way.
pub(crate) fn sentence_starts_from(text: &str, range: Range<usize>, lo: usize) -> Vec<usize> {
    let from = surely_starts_sentence_before(text, range.start, lo.min(range.end));
    let mut starts = sentence_starts(text, from..range.end);
    starts.retain(|&at| at >= lo);
    starts
}

/// The last position in `floor..=at` where a sentence surely starts (see [`sure_start_after`]),
/// or `floor`.
fn surely_starts_sentence_before(text: &str, floor: usize, at: usize) -> usize {
    let bytes = text.as_bytes();
    let end = (at + 1).clamp(floor, text.len());
    let mut terminator = end;
    while let Some(t) = bytes[floor..terminator]
        .iter()
        .rposition(|b| matches!(b, b'.' | b'!' | b'?'))
    {
        terminator = floor + t;
        if let Some(start) = sure_start_after(bytes, terminator, end) {
            return start;
        }
    }
    floor
}

/// Where the lines of `range` after its first start: the first character of each line that is not
/// whitespace (its indentation skipped), blank lines left out.
pub(crate) fn line_starts(text: &str, range: Range<usize>) -> Vec<usize> {
    let slice = &text[range.clone()];
    let mut out = Vec::new();
    for (i, byte) in slice.bytes().enumerate() {
        if byte != b'\n' && byte != b'\r' {
            continue;
        }
        // `i` is an ASCII byte, so `i + 1` is a character boundary.
        let after = &slice[i + 1..];
        let at = i + 1 + (after.len() - after.trim_start_matches([' ', '\t']).len());
        if slice[at..].chars().next().is_some_and(|c| !c.is_whitespace()) {
            out.push(range.start + at);
        }
    }
    out
}

/// Where the words of `range` that begin with a letter or digit start (UAX #29), after its start.
pub(crate) fn word_starts(text: &str, range: Range<usize>) -> Vec<usize> {
    text[range.clone()]
        .split_word_bound_indices()
        .filter(|(offset, word)| *offset > 0 && word.chars().next().is_some_and(char::is_alphanumeric))
        .map(|(offset, _)| range.start + offset)
        .collect()
}

/// Whether `line` (a whole line, container markers included) opens or closes a code fence: after
/// its indentation, block-quote markers (`>`) and one list marker (`-`, `*`, `+`, `1.`, `1)`), it
/// starts with three or more backticks or tildes. Returns the fence character.
pub(crate) fn fence_of(line: &str) -> Option<char> {
    let mut rest = line.trim_start_matches([' ', '\t', '>']);
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let marker = if digits > 0 && rest[digits..].starts_with(['.', ')']) {
        digits + 1
    } else if rest.starts_with(['-', '*', '+']) {
        1
    } else {
        0
    };
    if marker > 0 && rest[marker..].starts_with([' ', '\t']) {
        rest = rest[marker..].trim_start_matches([' ', '\t']);
    }
    ['`', '~']
        .into_iter()
        .find(|&fence| rest.chars().take(3).filter(|&c| c == fence).count() == 3)
}

/// The stretches of `range` inside code fences nested in it (a fenced block in a list item or a
/// quote): each from the end of an opening fence line to the end of its closing fence line (or of
/// `range`, if the fence is not closed in it). A cut inside one would leave a fence unbalanced.
pub(crate) fn nested_fences(text: &str, range: Range<usize>) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut open: Option<(char, usize)> = None;
    let mut line_start = range.start;
    for line in text[range.clone()].split_inclusive(['\n', '\r']) {
        let line_end = line_start + line.len();
        let content_end = line_start + line.trim_end_matches(['\n', '\r']).len();
        match (open, fence_of(line)) {
            (None, Some(fence)) => open = Some((fence, content_end)),
            (Some((fence, from)), Some(closing)) if closing == fence => {
                out.push(from..content_end);
                open = None;
            }
            _ => {}
        }
        line_start = line_end;
    }
    if let Some((_, from)) = open {
        out.push(from..range.end);
    }
    out
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
    fn a_soft_line_break_does_not_end_a_sentence_and_a_blank_line_does() {
        let text = "A sentence wrapped\nover two lines. Next\r\nwraps too.\n\nNo period\n\n  \nlast";
        assert_eq!(
            pieces(text, sentence_ranges),
            [
                "A sentence wrapped\nover two lines.",
                "Next\r\nwraps too.",
                "No period",
                "last"
            ]
        );
        assert_eq!(soften_line_breaks("a\nb\r\nc\n\nd\r\re"), "a b  c\n\nd\r\re");
        let wrapped = "The cat sat on the mat. The dog\nslept by the door.";
        assert_eq!(
            pieces(wrapped, sentence_ranges),
            ["The cat sat on the mat.", "The dog\nslept by the door."]
        );
        assert_eq!(sentence_starts(text, 0..text.len())[1], text.find("Next").unwrap());
    }

    #[test]
    fn sentence_starts_from_a_sure_start_are_those_of_the_whole_range() {
        let text = "Mr. Smith said \"Go.\" Then left!  (Quietly.) The end? yes. E.g. Foo\nBar. Baz";
        let whole: Vec<usize> = uax29_sentence_ranges(text, 0..text.len())
            .into_iter()
            .map(|r| r.start)
            .collect();
        for lo in 0..=text.len() {
            let expected: Vec<usize> = whole.iter().copied().filter(|&at| at >= lo).collect();
            assert_eq!(sentence_starts_from(text, 0..text.len(), lo), expected, "lo {lo}");
        }
        // The sure starts: a capital after a terminator, closing marks and spaces on one line.
        let sure: Vec<usize> = (0..=text.len())
            .filter(|&at| surely_starts_sentence_before(text, 0, at) == at && at > 0)
            .collect();
        let at = |s: &str| text.find(s).unwrap();
        assert_eq!(
            sure,
            [at("Smith"), at("Then"), at("The end"), at("E.g."), at("Foo"), at("Baz")]
        );
    }

    /// The definition the split must agree with: `unicode-segmentation` over the whole softened
    /// range.
    fn uax29_sentence_ranges(text: &str, range: Range<usize>) -> Vec<Range<usize>> {
        let base = range.start;
        soften_line_breaks(&text[range])
            .split_sentence_bound_indices()
            .map(|(at, s)| trim_range(text, base + at..base + at + s.len()))
            .filter(|r| !r.is_empty())
            .collect()
    }

    #[test]
    fn prose_is_split_as_uax_29_splits_it() {
        for text in [
            "One two. Three four! Five? (Six.) \"Seven.\" Eight",
            "Ends with a terminator. And spaces.  ",
            "A. B. C.) D.] E.' F",
            "Not plain: 3.5 and e.g. this. Next one.",
            "Breaks\nsoftly. Then\n\nhard. x. Y ! z. )",
            "東京。 Tokyo. Next",
            "",
            " ",
        ] {
            assert_eq!(
                sentence_ranges(text, 0..text.len()),
                uax29_sentence_ranges(text, 0..text.len()),
                "{text:?}"
            );
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

        #[test]
        fn the_split_agrees_with_uax_29(
            parts in proptest::collection::vec(proptest::sample::select(&[
                "Word", "word", "U.S.", "e.g.", " ", "  ", "\t", "\n", "\n\n", "\r\n", "\r", ".", "!", "?", "...", ")",
                "]", "\"", "'", "(", "1.5", "A", "a", "東京", "。", "\u{301}", "\u{200b}", "\u{a0}", ":", ";", ",",
                "»", "\u{85}", "\u{2029}", "\u{b}", "Ω", "ω",
            ][..]), 0..60),
        ) {
            let text = parts.concat();
            proptest::prop_assert_eq!(sentence_ranges(&text, 0..text.len()), uax29_sentence_ranges(&text, 0..text.len()));
        }

        #[test]
        fn sentence_starts_from_any_position_agree_with_the_whole(
            parts in proptest::collection::vec(proptest::sample::select(&[
                "Word", "word", "U.S.", "e.g.", " ", "  ", "\t", "\n", "\n\n", "\r\n", ".", "!", "?", "...", ")", "]",
                "\"", "'", "(", "1.5", "A", "a", "東京", "。", "\u{301}", "\u{200b}", "\u{a0}", ":", ";", ",", "»",
            ][..]), 0..60),
            lo in 0usize..400,
        ) {
            let text = parts.concat();
            let lo = text.floor_char_boundary(lo.min(text.len()));
            let expected: Vec<usize> =
                uax29_sentence_ranges(&text, 0..text.len()).into_iter().map(|r| r.start).filter(|&at| at >= lo).collect();
            proptest::prop_assert_eq!(sentence_starts_from(&text, 0..text.len(), lo), expected);
        }
    }

    #[test]
    fn line_and_word_starts_skip_indentation_and_punctuation() {
        let text = "one two\n  three, four\n\n- five";
        assert_eq!(line_starts(text, 0..text.len()), [10, 23]);
        assert_eq!(line_starts(text, 10..text.len()), [23]);
        assert_eq!(word_starts("alpha, beta (gamma)", 0..19), [7, 13]);
    }

    #[test]
    fn fences_nested_in_list_items_and_quotes_are_found() {
        for line in ["```", "~~~ rust", "  ```sh", "> ```", "- ```", "12. ~~~", "> - ````"] {
            assert!(fence_of(line).is_some(), "{line:?}");
        }
        for line in ["``", "text ```", "-```", "*emph* ```"] {
            assert_eq!(fence_of(line), None, "{line:?}");
        }
        let item = "- Run:\n\n  ```sh\n  make\n  ```\n\n  Then.\n\n  ~~~\n  open";
        let fences = nested_fences(item, 0..item.len());
        assert_eq!(fences.len(), 2);
        assert_eq!(&item[fences[0].clone()], "\n  make\n  ```");
        assert_eq!(&item[fences[1].clone()], "\n  open");
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
    }

    #[test]
    fn char_boundaries_never_split_a_character() {
        let text = "a😀b";
        assert_eq!(floor_boundary(text, 3), 1);
        assert_eq!(ceil_boundary(text, 3), 5);
        assert_eq!(ceil_boundary(text, 99), text.len());
    }
}
