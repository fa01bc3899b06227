//! Overlap: the tail of a flushed body chunk that starts the next chunk of the same section.

use rag_core::ChunkError;

use super::counting::{Counting, Stretch};
use crate::sentence::{ceil_boundary, floor_boundary, overlap_boundary};

/// About `want` tokens from the end of the chunk `start..end` (which has `tokens` tokens), starting
/// at a sentence or word boundary (a character boundary inside an unbroken word), strictly after
/// `start`.
///
/// The byte length to take back is guessed from the chunk's own bytes per token, and the guess is
/// counted (the tail only, never the chunk); a tail over the target is shortened by the same
/// ratio, a few times at most.
///
/// The tail is a [`Stretch`] ending at `end`. When `next`, the start of the next chunk's first
/// unit, starts a line the counter splits at, the tail is counted up to it, so that the next chunk
/// can add that count to its units'.
pub(super) fn tail(
    counting: &Counting<'_>,
    want: usize,
    start: usize,
    end: usize,
    tokens: usize,
    next: usize,
) -> Result<Option<Stretch>, ChunkError> {
    let text = counting.text;
    let until = if next >= end && counting.splits_at(next) {
        next
    } else {
        end
    };
    let len = end.saturating_sub(start);
    if len < 2 {
        return Ok(None);
    }
    let mut take = ((len as f64 / tokens.max(1) as f64) * want as f64).ceil() as usize;
    for _ in 0..3 {
        // Never the whole chunk: the next one must move forward.
        take = take.max(1).min(len - 1);
        let from = ceil_boundary(text, end - take);
        if from <= start || from >= end {
            return Ok(None);
        }
        let lo = floor_boundary(text, from.saturating_sub(take + 64).max(start));
        let midpoint = from + (end - from) / 2;
        let boundary = overlap_boundary(text, lo, from, midpoint, end).unwrap_or(from);
        let boundary = ceil_boundary(text, boundary);
        if boundary <= start || boundary >= end {
            return Ok(None);
        }
        let counted = counting.count(boundary..until)?;
        if counted <= want {
            return Ok(Some(Stretch {
                start: boundary,
                end,
                until,
                tokens: counted,
            }));
        }
        take = ((end - boundary) as f64 * want as f64 / counted as f64 * 0.9) as usize;
    }
    Ok(None)
}

/// The tokens of a chunk that starts with `overlap` and then `unit`, if the overlap can start it:
/// it must begin strictly before the unit (a chunk always starts after the previous one's start)
/// and fit within the budget together with it.
pub(super) fn tokens_behind(
    counting: &Counting<'_>,
    overlap: Stretch,
    unit: Stretch,
) -> Result<Option<usize>, ChunkError> {
    if overlap.start >= unit.start {
        return Ok(None);
    }
    let tokens = overlap.tokens + counting.gap_tokens(overlap.until, unit.start)? + unit.tokens;
    Ok((tokens <= counting.max_tokens).then_some(tokens))
}
