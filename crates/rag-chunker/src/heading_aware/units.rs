//! Units: the stretches of text packing never cuts (each a counted [`Stretch`]). A block that fits
//! the budget is one unit; an oversize one is cut at its sentences (code at its lines), and any of
//! those still too large is hard-split by token count into the longest prefixes that fit.

use std::ops::Range;

use rag_core::ChunkError;

use super::counting::{Counting, Stretch};
use crate::sentence::{ceil_boundary, floor_boundary, last_word_start, line_ranges, sentence_ranges, trim_range};

/// The natural boundaries of an oversize block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Split {
    /// Prose, lists, tables, quotes, headings: UAX #29 sentences.
    Sentences,
    /// Code: lines.
    Lines,
}

/// Cuts blocks into units.
pub(super) struct UnitSplitter {
    /// Bytes per token seen in the last hard split, the first guess for the next one.
    bytes_per_token: f64,
}

impl UnitSplitter {
    pub(super) fn new() -> Self {
        Self { bytes_per_token: 4.0 }
    }

    /// The units of a block: the block itself if it fits, else its sentences (or lines), and any
    /// of those still too large hard-split by token count.
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
        if let Some(unit) = joined_unit(counting, range.clone(), next)? {
            return Ok(vec![unit]);
        }
        let mut whole_tokens = None;
        if range.len() <= counting.window && !next.is_some_and(|n| counting.splits_at(n)) {
            let tokens = counting.count(range.clone())?;
            if tokens <= counting.max_tokens {
                return Ok(vec![Stretch::alone(range.start, range.end, tokens)]);
            }
            whole_tokens = Some(tokens);
        }
        let parts = match split {
            Split::Sentences => sentence_ranges(counting.text, range.clone()),
            Split::Lines => line_ranges(counting.text, range.clone()),
        };
        let mut units = Vec::new();
        for (i, part) in parts.iter().enumerate() {
            let part = part.clone();
            if part != range {
                let part_next = parts.get(i + 1).map(|p| p.start).or(next);
                if let Some(unit) = joined_unit(counting, part.clone(), part_next)? {
                    units.push(unit);
                    continue;
                }
            }
            // A block that is one sentence was counted already: go straight to the hard split.
            let known = if part == range { whole_tokens } else { None };
            if known.is_none() && part.len() <= counting.window {
                let tokens = counting.count(part.clone())?;
                if tokens <= counting.max_tokens {
                    units.push(Stretch::alone(part.start, part.end, tokens));
                    continue;
                }
            }
            self.hard_split(counting, part, &mut units)?;
        }
        Ok(units)
    }

    /// Cuts `range` into units of at most `max_tokens`, each as long as the budget allows, ending
    /// at a word boundary where one lies in the second half of the piece.
    pub(super) fn hard_split(
        &mut self,
        counting: &Counting<'_>,
        range: Range<usize>,
        out: &mut Vec<Stretch>,
    ) -> Result<(), ChunkError> {
        let text = counting.text;
        let mut start = trim_range(text, range.clone()).start;
        while start < range.end {
            let (cut, tokens) = self.fit(counting, start, range.end)?;
            let mut unit = Stretch::alone(start, cut, tokens);
            if cut < range.end {
                let half = floor_boundary(text, start + (cut - start) / 2);
                if let Some(word) = last_word_start(text, half.max(start), cut) {
                    let shorter = trim_range(text, start..word);
                    if !shorter.is_empty() {
                        let tokens = counting.count(shorter.clone())?;
                        if tokens <= counting.max_tokens {
                            unit = Stretch::alone(start, shorter.end, tokens);
                        }
                    }
                }
            }
            let trimmed = trim_range(text, unit.start..unit.end);
            if !trimmed.is_empty() && trimmed.end != unit.end {
                let tokens = counting.count(trimmed.clone())?;
                if tokens <= counting.max_tokens {
                    unit = Stretch::alone(unit.start, trimmed.end, tokens);
                }
            }
            if unit.tokens > 0 {
                self.bytes_per_token = (unit.end - unit.start) as f64 / unit.tokens as f64;
            }
            out.push(unit);
            start = trim_range(text, unit.end..range.end).start;
        }
        Ok(())
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

/// `range` as one unit counted up to `next`, if `next` starts a line the counter splits at and the
/// count is within budget. A count over budget says the range is (about) too large: the caller
/// splits it, or counts it alone.
fn joined_unit(
    counting: &Counting<'_>,
    range: Range<usize>,
    next: Option<usize>,
) -> Result<Option<Stretch>, ChunkError> {
    let Some(next) = next.filter(|&n| n >= range.end && n - range.start <= counting.window && counting.splits_at(n))
    else {
        return Ok(None);
    };
    let tokens = counting.count(range.start..next)?;
    Ok((tokens <= counting.max_tokens).then_some(Stretch {
        start: range.start,
        end: range.end,
        until: next,
        tokens,
    }))
}
