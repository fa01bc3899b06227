//! Units: the stretches of text packing never cuts (each a counted [`Stretch`]). A block that fits
//! the budget is one unit; an oversize one is cut at its sentences (code at its lines), a sentence
//! still too large at its lines, and any of those still too large is hard-split by token count
//! into the longest prefixes that fit. Each unit records where it starts ([`Place`]), so that
//! overlap can prefer the best boundaries.

use std::ops::Range;

use rag_core::ChunkError;

use super::counting::{Boundary, Counting, Place, Stretch};
use crate::sentence::{
    ceil_boundary, fence_of, floor_boundary, last_word_start, line_ranges, sentence_ranges, trim_range,
};

/// How much longer than the budget at the bytes per token seen a block must be to be guessed over
/// it: a block guessed over and not is cut into sentences for nothing (about a third of a count);
/// one guessed within it and not is counted twice.
const OVER_GUESS: f64 = 1.0;

/// The natural boundaries of an oversize block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Split {
    /// Prose, lists, tables, quotes, headings: sentences (UAX #29, soft line breaks read as
    /// spaces), then lines.
    Sentences,
    /// Code: lines; a fence line stays with the line next to it.
    Lines,
}

/// Cuts blocks into units.
pub(super) struct UnitSplitter {
    /// Bytes per token seen in the last hard split, the first guess for the next one.
    bytes_per_token: f64,
}

/// The parts of an oversize stretch being cut into units, and what is known of it.
struct Parts {
    parts: Vec<Range<usize>>,
    /// The stretch they cut.
    whole: Range<usize>,
    /// The count of the whole stretch, if it was taken.
    whole_tokens: Option<usize>,
    /// Where the unit after the stretch starts, if it is of the same section.
    next: Option<usize>,
    /// What every part but the first starts at (the first starts where the whole does).
    starts: Boundary,
    /// Where the whole starts.
    whole_starts: Boundary,
    code: bool,
}

impl UnitSplitter {
    pub(super) fn new() -> Self {
        Self { bytes_per_token: 4.0 }
    }

    /// Whether `range` probably has more tokens than the budget, at the bytes per token counted
    /// so far: a guess that only decides what is counted first, never what the units are.
    fn probably_over(&self, counting: &Counting<'_>, range: &Range<usize>) -> bool {
        range.len() as f64 > counting.bytes_per_token() * counting.max_tokens as f64 * OVER_GUESS
    }

    /// The units of a block: the block itself if it fits, else its sentences (or lines), and any
    /// of those still too large cut finer.
    ///
    /// `next` is where the next unit of the section starts, if a body block follows. A unit whose
    /// successor starts a line the counter splits at is counted together with the whitespace up to
    /// it (see [`Stretch`]), instead of alone: then its chunk needs no recount.
    pub(super) fn units(
        &mut self,
        counting: &Counting<'_>,
        range: Range<usize>,
        split: Split,
        next: Option<usize>,
    ) -> Result<Vec<Stretch>, ChunkError> {
        let code = split == Split::Lines;
        let place = Place::new(Boundary::Block, code);
        // A block that is probably over the budget is cut into sentences first, and its counts
        // are derived from theirs: then no sentence of it is counted twice.
        let sentences = match split {
            Split::Sentences if counting.derives() && self.probably_over(counting, &range) => {
                let sentences = sentence_ranges(counting.text, range.clone());
                if sentences.len() > 1 {
                    count_whole_from_parts(counting, &range, &sentences, next)?;
                }
                Some(sentences)
            }
            _ => None,
        };
        let joined = match joined_unit(counting, range.clone(), next, place)? {
            Joined::Fits(unit) => return Ok(vec![unit]),
            Joined::Over(joined) => Some(joined),
            Joined::Not => None,
        };
        let mut whole_tokens = None;
        // Counted alone even when the joined count was over: the whitespace after a block can
        // add a token, and a block that fits alone must not be cut.
        if range.len() <= counting.window {
            let tokens = match &joined {
                Some(joined) => counting.count_from(range.clone(), joined)?,
                None => counting.count(range.clone())?,
            };
            if tokens <= counting.max_tokens {
                return Ok(vec![Stretch::alone(range.start, range.end, tokens, place)]);
            }
            whole_tokens = Some(tokens);
        }
        let (parts, starts) = match split {
            Split::Sentences => (
                sentences.unwrap_or_else(|| sentence_ranges(counting.text, range.clone())),
                Boundary::Sentence,
            ),
            Split::Lines => (code_lines(counting.text, range.clone()), Boundary::Line),
        };
        let parts = Parts {
            parts,
            whole: range,
            whole_tokens,
            next,
            starts,
            whole_starts: Boundary::Block,
            code,
        };
        let mut units = Vec::new();
        self.cut_parts(counting, parts, &mut units)?;
        Ok(units)
    }

    /// Cuts each of `parts` into units: the part itself if it fits, else (for a sentence of
    /// several lines) its lines, else a hard split.
    fn cut_parts(&mut self, counting: &Counting<'_>, cut: Parts, out: &mut Vec<Stretch>) -> Result<(), ChunkError> {
        for (i, part) in cut.parts.iter().enumerate() {
            let part = part.clone();
            let starts = if part.start == cut.whole.start {
                cut.whole_starts
            } else {
                cut.starts
            };
            let place = Place::new(starts, cut.code);
            let part_next = cut.parts.get(i + 1).map(|p| p.start).or(cut.next);
            let mut joined = None;
            if part != cut.whole {
                match joined_unit(counting, part.clone(), part_next, place)? {
                    Joined::Fits(unit) => {
                        out.push(unit);
                        continue;
                    }
                    Joined::Over(over) => joined = Some(over),
                    Joined::Not => {}
                }
            }
            // A stretch that is one part was counted already: go straight to the finer cut.
            let known = if part == cut.whole { cut.whole_tokens } else { None };
            if known.is_none() && part.len() <= counting.window {
                let tokens = match &joined {
                    Some(joined) => counting.count_from(part.clone(), joined)?,
                    None => counting.count(part.clone())?,
                };
                if tokens <= counting.max_tokens {
                    out.push(Stretch::alone(part.start, part.end, tokens, place));
                    continue;
                }
            }
            let lines: Vec<Range<usize>> = if cut.code {
                Vec::new()
            } else {
                line_ranges(counting.text, part.clone())
                    .into_iter()
                    .map(|line| trim_range(counting.text, line))
                    .collect()
            };
            if lines.len() > 1 {
                let finer = Parts {
                    parts: lines,
                    whole: part,
                    whole_tokens: known,
                    next: part_next,
                    starts: Boundary::Line,
                    whole_starts: starts,
                    code: cut.code,
                };
                self.cut_parts(counting, finer, out)?;
            } else {
                self.hard_split(counting, part, place, out)?;
            }
        }
        Ok(())
    }

    /// Cuts `range` into units of at most `max_tokens`, each as long as the budget allows, ending
    /// at a word boundary where one lies in the second half of the piece. The first piece starts
    /// at `place`; the others inside a line.
    pub(super) fn hard_split(
        &mut self,
        counting: &Counting<'_>,
        range: Range<usize>,
        place: Place,
        out: &mut Vec<Stretch>,
    ) -> Result<(), ChunkError> {
        let text = counting.text;
        let mut start = trim_range(text, range.clone()).start;
        let mut place = place;
        while start < range.end {
            let (cut, tokens) = self.fit(counting, start, range.end)?;
            let mut unit = Stretch::alone(start, cut, tokens, place);
            if cut < range.end {
                let half = floor_boundary(text, start + (cut - start) / 2);
                if let Some(word) = last_word_start(text, half.max(start), cut) {
                    let shorter = trim_range(text, start..word);
                    if !shorter.is_empty() {
                        let tokens = counting.count(shorter.clone())?;
                        if tokens <= counting.max_tokens {
                            unit = Stretch::alone(start, shorter.end, tokens, place);
                        }
                    }
                }
            }
            if place.code {
                unit = self.keep_fences_with_code(counting, unit, cut, range.end)?;
            }
            let trimmed = trim_range(text, unit.start..unit.end);
            if !trimmed.is_empty() && trimmed.end != unit.end {
                let tokens = counting.count(trimmed.clone())?;
                if tokens <= counting.max_tokens {
                    unit = Stretch::alone(unit.start, trimmed.end, tokens, place);
                }
            }
            if unit.tokens > 0 {
                self.bytes_per_token = (unit.end - unit.start) as f64 / unit.tokens as f64;
            }
            out.push(unit);
            start = trim_range(text, unit.end..range.end).start;
            place = Place::new(Boundary::Inside, place.code);
        }
        Ok(())
    }

    /// `unit`, a piece of a code line being hard-split, moved so that no piece holds a fence line
    /// alone: a piece that is only the opening fence takes the longest prefix that fits (`cut`)
    /// instead of ending at a word, and a piece that would leave only the closing fence after it
    /// (up to `end`) gives its last word, or its last character, to the fence. A chunk opening
    /// with a lone closing fence reads as a new code block to a renderer.
    fn keep_fences_with_code(
        &self,
        counting: &Counting<'_>,
        unit: Stretch,
        cut: usize,
        end: usize,
    ) -> Result<Stretch, ChunkError> {
        let text = counting.text;
        let mut unit = unit;
        if unit.end < cut && is_lone_fence(text, unit.start..unit.end) {
            unit = Stretch::alone(unit.start, cut, counting.count(unit.start..cut)?, unit.place);
        }
        let rest = trim_range(text, unit.end..end);
        if rest.is_empty() || !is_lone_fence(text, rest) {
            return Ok(unit);
        }
        let before_break = trim_range(text, unit.start..unit.end).end;
        let last_char = || {
            text[unit.start..before_break]
                .char_indices()
                .next_back()
                .map(|(at, _)| unit.start + at)
        };
        let shorter = last_word_start(text, unit.start, before_break)
            .or_else(last_char)
            .map(|at| trim_range(text, unit.start..at))
            .filter(|shorter| !shorter.is_empty());
        match shorter {
            Some(shorter) => {
                let tokens = counting.count(shorter.clone())?;
                Ok(Stretch::alone(shorter.start, shorter.end, tokens, unit.place))
            }
            None => Ok(unit),
        }
    }

    /// The end of the longest prefix of `start..end` (found approximately, within the count
    /// window) that has at most `max_tokens` tokens, and its count.
    ///
    /// Guesses the length from the bytes per token seen so far and corrects it in proportion to
    /// each count; if that does not get close to the budget in a few counts, bisects.
    fn fit(&self, counting: &Counting<'_>, start: usize, end: usize) -> Result<(usize, usize), ChunkError> {
        let text = counting.text;
        // The longest prefix ever counted: one window, or the first character if that is longer.
        let cap = {
            let cap = floor_boundary(text, start.saturating_add(counting.window).min(end));
            if cap > start {
                cap
            } else {
                ceil_boundary(text, start + 1)
            }
        };
        let mut bracket = self.guess_prefix(counting, start, cap)?;
        if bracket
            .fits
            .is_none_or(|(at, tokens)| !nearly_full(tokens, counting.max_tokens) && at < cap)
        {
            bisect_prefix(counting, start, &mut bracket, cap)?;
        }
        bracket.fits.ok_or_else(|| {
            let ch = text[start..].chars().next().unwrap_or('\u{fffd}');
            ChunkError::InvalidConfig {
                message: format!(
                    "max_tokens {} is too small: the character {ch:?} at byte {start} of document {} alone \
                     has more tokens",
                    counting.max_tokens, counting.document_id
                ),
            }
        })
    }

    /// Up to six counts of prefixes of `start..cap`, the first guessed from the bytes per token
    /// seen so far and each next one corrected in proportion to the last count; stops at a prefix
    /// that is nearly full or reaches `cap`.
    fn guess_prefix(&self, counting: &Counting<'_>, start: usize, cap: usize) -> Result<Bracket, ChunkError> {
        let (text, max) = (counting.text, counting.max_tokens);
        let mut bracket = Bracket::default();
        let mut guess = start + (max as f64 * self.bytes_per_token) as usize;
        for _ in 0..6 {
            let lo = bracket.fits.map_or(start, |g| g.0);
            let hi = bracket.too_long.unwrap_or(cap);
            let mut at = floor_boundary(text, guess.max(lo).min(hi));
            if at <= lo {
                at = ceil_boundary(text, lo + 1);
            }
            if at > hi || (at == hi && bracket.too_long.is_some()) {
                break;
            }
            let tokens = counting.count(start..at)?;
            let scale = max as f64 / tokens.max(1) as f64;
            if tokens <= max {
                bracket.fits = Some((at, tokens));
                if at >= cap || nearly_full(tokens, max) {
                    break;
                }
                guess = start + ((at - start) as f64 * scale * 0.97) as usize;
            } else {
                bracket.too_long = Some(at);
                guess = start + ((at - start) as f64 * scale * 0.95) as usize;
            }
        }
        Ok(bracket)
    }
}

/// What a search for the longest prefix within the budget knows so far.
#[derive(Debug, Default)]
struct Bracket {
    /// The end of the longest prefix known to fit, and its count.
    fits: Option<(usize, usize)>,
    /// The end of the shortest prefix known not to fit.
    too_long: Option<usize>,
}

/// Whether a prefix of `tokens` is close enough to the budget to stop looking for a longer one.
fn nearly_full(tokens: usize, max: usize) -> bool {
    tokens * 10 >= max * 9
}

/// Bisects over character boundaries between the longest prefix known to fit and the shortest
/// known not to (or `cap`).
fn bisect_prefix(counting: &Counting<'_>, start: usize, bracket: &mut Bracket, cap: usize) -> Result<(), ChunkError> {
    let text = counting.text;
    let mut lo = bracket.fits.map_or(start, |g| g.0);
    let mut hi = bracket.too_long.unwrap_or(cap);
    loop {
        let mut mid = floor_boundary(text, lo + (hi - lo) / 2);
        if mid <= lo {
            mid = ceil_boundary(text, lo + 1);
        }
        if mid >= hi {
            break;
        }
        let tokens = counting.count(start..mid)?;
        if tokens <= counting.max_tokens {
            bracket.fits = Some((mid, tokens));
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(())
}

/// Whether `range` of `text` is one line holding a code fence, and nothing else.
fn is_lone_fence(text: &str, range: Range<usize>) -> bool {
    let line = &text[trim_range(text, range)];
    !line.contains(['\n', '\r']) && fence_of(line).is_some()
}

/// The lines of the code block `range`, its fence lines (if it is fenced) joined to the line next
/// to them: a chunk that ends with an opening fence or starts with a closing one holds a fence
/// and no code, and a renderer would take the closing fence for an opening one.
fn code_lines(text: &str, range: Range<usize>) -> Vec<Range<usize>> {
    let mut lines = line_ranges(text, range);
    let is_fence = |line: &Range<usize>| fence_of(&text[line.clone()]).is_some();
    if lines.len() > 2 && lines.first().is_some_and(is_fence) {
        let opening = lines.remove(0);
        lines[0].start = opening.start;
    }
    if lines.len() > 1
        && lines.last().is_some_and(is_fence)
        && let Some(closing) = lines.pop()
        && let Some(last) = lines.last_mut()
    {
        last.end = closing.end;
    }
    lines
}

/// What counting a stretch together with the whitespace after it gave.
enum Joined {
    /// The stretch, counted up to the next one's start, fits the budget.
    Fits(Stretch),
    /// Counted up to the next one's start, it is over the budget: the caller splits it, or
    /// counts it alone (from this count).
    Over(Stretch),
    /// The next stretch does not start a line the counter splits at (or there is none).
    Not,
}

/// `range` as one unit counted up to `next`, if `next` starts a line the counter splits at: within
/// the budget or not.
fn joined_unit(
    counting: &Counting<'_>,
    range: Range<usize>,
    next: Option<usize>,
    place: Place,
) -> Result<Joined, ChunkError> {
    let Some(next) = next.filter(|&n| n >= range.end && n - range.start <= counting.window && counting.splits_at(n))
    else {
        return Ok(Joined::Not);
    };
    let tokens = counting.count(range.start..next)?;
    let unit = Stretch {
        start: range.start,
        end: range.end,
        until: next,
        tokens,
        place,
    };
    Ok(if tokens <= counting.max_tokens {
        Joined::Fits(unit)
    } else {
        Joined::Over(unit)
    })
}

/// Counts the sentences `parts` of the block `whole` as [`UnitSplitter::units`] will count them
/// when it cuts the block (up to the next sentence's start, and alone when that is over the
/// budget), and derives from their counts the counts of the whole block that `units` takes first
/// (up to `next`, and alone). Every count is kept by `counting`, so none of them is taken again;
/// a sentence longer than the count window, which `units` never counts, stops the derivation.
fn count_whole_from_parts(
    counting: &Counting<'_>,
    whole: &Range<usize>,
    parts: &[Range<usize>],
    next: Option<usize>,
) -> Result<(), ChunkError> {
    let place = Place::new(Boundary::Sentence, false);
    let mut pieces = Vec::with_capacity(parts.len());
    for (i, part) in parts.iter().enumerate() {
        let part_next = parts.get(i + 1).map(|p| p.start).or(next);
        let piece = match joined_unit(counting, part.clone(), part_next, place)? {
            Joined::Fits(unit) => unit,
            _ if part.len() > counting.window => return Ok(()),
            Joined::Over(joined) => {
                Stretch::alone(part.start, part.end, counting.count_from(part.clone(), &joined)?, place)
            }
            Joined::Not => Stretch::alone(part.start, part.end, counting.count(part.clone())?, place),
        };
        pieces.push(piece);
    }
    if let Some(next) = next.filter(|&n| n >= whole.end && n - whole.start <= counting.window && counting.splits_at(n))
    {
        counting.tokens_of(whole.start..next, &pieces)?;
    }
    counting.tokens_of(whole.clone(), &pieces)?;
    Ok(())
}
