//! Cut to fit: the best part of a chunk that does not fit whole.
//!
//! When the best-ranked chunk is a few tokens too long for the room a pack has left, skipping it
//! loses the answer it most likely holds. [`best_part`] finds the part worth packing instead: an
//! exact sub-span of the chunk's text (so a cut chunk's `content` is still a slice of its source),
//! cut at sentence and line boundaries, that holds the most query terms within the allowance and,
//! among parts that hold as many, opens a paragraph rather than starting inside one.
//!
//! The boundaries are UAX #29 sentence boundaries, which include every line break, so code and
//! lists are cut between lines. rag-packer does not depend on the chunker, whose sentence rules
//! are richer; these are enough to cut between units a reader recognises.

use std::ops::Range;

use rag_core::{TokenCounter, TokenizerError};
use unicode_segmentation::UnicodeSegmentation as _;

use crate::score::search_terms;

/// The best part of `content` within `allowance` tokens under `counter`: the byte range of a run
/// of whole sentences or lines (leading and trailing white space left out) that holds the most
/// distinct `query_terms` (search terms, as [`search_terms`](crate::search_terms) makes them);
/// among those, one that starts a block (a paragraph, list item, heading, table row, quote or
/// code block) over one that starts inside it, then the most occurrences; ties go to the earliest.
/// Each candidate run is as long as the allowance permits, so among equals the part is the
/// longest from its start.
///
/// Why a block start outranks occurrences: a part that opens with the second sentence of a
/// paragraph reads as a fragment ("If it is false, an error occurs" without what "it" is), and
/// the extra occurrences a later start buys are mostly the same term repeated in the code that
/// follows.
///
/// The whole text when it fits; `None` when no sentence or line fits on its own (or the text is
/// blank). The part's exact count under `counter` is within `allowance`.
///
/// ```
/// use rag_packer::{best_part, search_terms};
/// use rag_tokens::TiktokenCounter;
///
/// let text = "Streams are fast. They buffer data.\nCall end() to close a writable stream.";
/// let terms = search_terms("how do I close a stream");
/// let counter = TiktokenCounter::cl100k();
/// let part = best_part(text, &terms, 12, &counter)?.expect("a line fits");
/// assert_eq!(&text[part], "Call end() to close a writable stream.");
/// # Ok::<(), rag_core::TokenizerError>(())
/// ```
pub fn best_part(
    content: &str,
    query_terms: &[String],
    allowance: usize,
    counter: &dyn TokenCounter,
) -> Result<Option<Range<usize>>, TokenizerError> {
    let whole = trimmed(content, 0..content.len());
    if whole.is_empty() {
        return Ok(None);
    }
    if counter.count(&content[whole.clone()])? <= allowance {
        return Ok(Some(whole));
    }
    let (units, opens) = units(content);
    let mut tokens = Vec::with_capacity(units.len());
    let mut hits: Vec<Vec<usize>> = Vec::with_capacity(units.len());
    for unit in &units {
        tokens.push(counter.count(&content[unit.clone()])?);
        hits.push(term_hits(&content[unit.clone()], query_terms));
    }

    // Two pointers over the units: for each start, the longest run whose summed counts fit.
    // Summed counts are an estimate (a join can merge or split a token); the winner is counted
    // exactly below and shortened until it fits.
    let mut held = vec![0usize; query_terms.len()];
    let (mut distinct, mut occurrences) = (0usize, 0usize);
    let (mut end, mut sum) = (0usize, 0usize);
    let mut best: Option<((usize, bool, usize), Range<usize>)> = None;
    for start in 0..units.len() {
        if end < start {
            end = start;
            sum = 0;
        }
        while end < units.len() && sum + tokens[end] <= allowance {
            sum += tokens[end];
            for &term in &hits[end] {
                held[term] += 1;
                occurrences += 1;
                if held[term] == 1 {
                    distinct += 1;
                }
            }
            end += 1;
        }
        let is_blank = content[units[start].clone()].trim().is_empty();
        if end > start && !is_blank {
            let key = (distinct, opens[start], occurrences);
            if best.as_ref().is_none_or(|(best_key, _)| key > *best_key) {
                best = Some((key, start..end));
            }
        }
        if end > start {
            sum -= tokens[start];
            for &term in &hits[start] {
                held[term] -= 1;
                occurrences -= 1;
                if held[term] == 0 {
                    distinct -= 1;
                }
            }
        }
    }
    let Some((_, mut run)) = best else {
        return Ok(None);
    };
    while run.end > run.start {
        let part = trimmed(content, units[run.start].start..units[run.end - 1].end);
        if !part.is_empty() && counter.count(&content[part.clone()])? <= allowance {
            return Ok(Some(part));
        }
        run.end -= 1;
    }
    Ok(None)
}

/// The sentence and line units of `text`, in order, covering it, and per unit whether it opens a
/// block.
///
/// UAX #29 ends a sentence at every line break, but documentation is hard-wrapped: a paragraph's
/// line breaks are read as spaces (same byte length, so the offsets hold), and only a line break
/// that ends a paragraph, comes before a list item, heading, table row, quote or fence, or falls
/// inside a fenced block stays a boundary. So prose is cut between sentences, code between lines.
///
/// A unit opens a block when it starts the text, or a line outside a fenced block (a fence's
/// opening line is one) that follows a blank line or opens with a block's marker. An indented line
/// after text continues a list item or a paragraph: its line break stays a boundary, but it opens
/// no block.
fn units(text: &str) -> (Vec<Range<usize>>, Vec<bool>) {
    let mut joined = text.as_bytes().to_vec();
    let lines: Vec<(usize, &str)> = text
        .split_inclusive('\n')
        .scan(0, |start, line| {
            let at = *start;
            *start += line.len();
            Some((at, line))
        })
        .collect();
    let mut block_starts = Vec::new();
    let mut in_fence = false;
    for (k, &(start, line)) in lines.iter().enumerate() {
        let body = line.trim();
        let after_blank = k == 0 || lines[k - 1].1.trim().is_empty();
        if !in_fence && (after_blank || has_block_marker(body)) {
            block_starts.push(start);
        }
        if is_fence(body) {
            in_fence = !in_fence;
            continue;
        }
        let Some(&(_, next)) = lines.get(k + 1) else { continue };
        if in_fence || body.is_empty() || !line.ends_with('\n') || starts_a_block(next) {
            continue;
        }
        joined[start + line.len() - 1] = b' ';
    }
    // Only ASCII line breaks became ASCII spaces: the bytes are still UTF-8.
    let joined = String::from_utf8(joined).unwrap_or_else(|_| text.to_owned());
    let units: Vec<Range<usize>> = joined
        .split_sentence_bound_indices()
        .map(|(start, sentence)| start..start + sentence.len())
        .collect();
    let opens = units
        .iter()
        .map(|unit| block_starts.binary_search(&unit.start).is_ok())
        .collect();
    (units, opens)
}

/// Whether `line` starts a block of its own rather than continuing a paragraph: blank, a list
/// item, a heading, a table row, a quote, a fence, or indented code.
fn starts_a_block(line: &str) -> bool {
    let body = line.trim_start();
    body.is_empty() || line.starts_with("    ") || line.starts_with('\t') || has_block_marker(body)
}

/// Whether a line's text (its indentation left out) opens with the marker of a list item, a
/// heading, a table row, a quote or a fence.
fn has_block_marker(body: &str) -> bool {
    let numbered = body.trim_start_matches(|c: char| c.is_ascii_digit());
    body.starts_with(['-', '*', '+', '#', '|', '>'])
        || is_fence(body)
        || (numbered.len() < body.len() && numbered.starts_with(['.', ')']))
}

/// Whether a line's text opens or closes a fenced code block.
fn is_fence(body: &str) -> bool {
    body.starts_with("```") || body.starts_with("~~~")
}

/// `range` of `text` without its leading and trailing white space.
fn trimmed(text: &str, range: Range<usize>) -> Range<usize> {
    let slice = &text[range.clone()];
    let start = range.start + (slice.len() - slice.trim_start().len());
    let end = range.end - (slice.len() - slice.trim_end().len());
    if start >= end { start..start } else { start..end }
}

/// The indices of the query terms `unit` holds, once per occurrence.
/// How many of `query_terms` (search terms) `text` holds at least once.
pub(crate) fn distinct_terms_held(text: &str, query_terms: &[String]) -> usize {
    let mut hits = term_hits(text, query_terms);
    hits.sort_unstable();
    hits.dedup();
    hits.len()
}

fn term_hits(unit: &str, query_terms: &[String]) -> Vec<usize> {
    if query_terms.is_empty() {
        return Vec::new();
    }
    search_terms(unit)
        .iter()
        .filter_map(|term| query_terms.iter().position(|q| q == term))
        .collect()
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use rag_contract::testing::WordCounter;

    use super::*;

    fn terms(query: &str) -> Vec<String> {
        let mut terms = search_terms(query);
        terms.sort();
        terms.dedup();
        terms
    }

    #[test]
    fn the_part_with_the_most_query_terms_wins_and_ties_go_to_the_earliest() {
        let text = "Alpha one two. Beta three four. Refund window is thirty days. Gamma five six.";
        let part = best_part(text, &terms("refund window"), 6, &WordCounter)
            .unwrap()
            .unwrap();
        assert_eq!(&text[part], "Refund window is thirty days.");
        // No term anywhere: the earliest run that fits.
        let part = best_part(text, &terms("zebra"), 6, &WordCounter).unwrap().unwrap();
        assert_eq!(&text[part], "Alpha one two. Beta three four.");
    }

    #[test]
    fn code_is_cut_between_lines_and_a_text_that_fits_is_kept_whole() {
        let code = "```sh\nnpm install\nnpm run build\nnpm test\n```\n";
        let part = best_part(code, &terms("build"), 5, &WordCounter).unwrap().unwrap();
        assert_eq!(&code[part], "npm install\nnpm run build");
        let whole = best_part("  Short text.  ", &[], 10, &WordCounter).unwrap().unwrap();
        assert_eq!(whole, 2..13);
    }

    #[test]
    fn a_hard_wrapped_paragraph_is_cut_between_sentences_not_lines() {
        let text = "One two three four five six seven\neight nine. The refund\nwindow is thirty days.\n\n- a list item";
        let part = best_part(text, &terms("refund window"), 6, &WordCounter)
            .unwrap()
            .unwrap();
        assert_eq!(&text[part], "The refund\nwindow is thirty days.");
    }

    #[test]
    fn a_part_opens_its_paragraph_when_that_keeps_every_term_it_would_hold() {
        // A later start holds the same two terms and more repeats of one of them in the code
        // that follows; the part still opens the paragraph, so it does not begin with "If ...".
        let text = "Setup first.\n\nThe optional argument sets the mode. Calling mkdir on an existing \
                    path fails. If recursive is false, EEXIST occurs.\n\n```js\nmkdir(a)\nmkdir(b)\n\
                    mkdir(c)\nmkdir(d)\nmkdir(e)\nmkdir(f)\nmkdir(g)\nmkdir(h)\n```\n";
        let part = best_part(text, &terms("mkdir EEXIST"), 24, &WordCounter)
            .unwrap()
            .unwrap();
        let cut = &text[part];
        assert!(cut.starts_with("The optional argument"), "{cut:?}");
        assert!(cut.contains("EEXIST occurs."), "{cut:?}");
        // Without a block start among the runs that hold every term, occurrences decide.
        let flat = "Alpha beta gamma delta epsilon zeta. Calling mkdir fails. If so, EEXIST occurs. Then mkdir again and mkdir.";
        let part = best_part(flat, &terms("mkdir EEXIST"), 10, &WordCounter)
            .unwrap()
            .unwrap();
        assert_eq!(&flat[part], "If so, EEXIST occurs. Then mkdir again and mkdir.");
    }

    #[test]
    fn nothing_is_cut_when_no_unit_fits() {
        let text = "one two three four five six. seven eight nine ten eleven twelve.";
        assert_eq!(best_part(text, &[], 3, &WordCounter).unwrap(), None);
        assert_eq!(best_part(" \n ", &[], 3, &WordCounter).unwrap(), None);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn every_cut_is_an_exact_sub_span_within_the_allowance(
            sentences in prop::collection::vec("[a-zé ]{0,30}[.!?\n]", 1..12),
            query in "[a-z ]{0,20}",
            allowance in 1usize..20,
        ) {
            let text: String = sentences.concat();
            let counter = rag_tokens::TiktokenCounter::cl100k();
            if let Some(part) = best_part(&text, &terms(&query), allowance, &counter).unwrap() {
                prop_assert!(part.start < part.end && part.end <= text.len());
                prop_assert!(text.is_char_boundary(part.start) && text.is_char_boundary(part.end));
                let cut = &text[part.clone()];
                prop_assert_eq!(cut.trim(), cut);
                prop_assert!(counter.count(cut).unwrap() <= allowance);
            }
        }
    }
}
