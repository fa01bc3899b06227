//! Counting: what the chunker hands the tokenizer, the counted stretch of text everything else is
//! built from, and how a chunk's exact count is put together from the counts of its stretches
//! instead of counting the chunk again.

use std::ops::Range;

use rag_core::{ChunkError, DocumentId, TokenCounter};

/// A stretch of text with an exact token count: a unit packing never cuts, or the overlap a chunk
/// starts with (the tail of the previous chunk).
///
/// `tokens` is the exact count of `start..until`: of the stretch alone when `until == end`, or of
/// the stretch and the whitespace after it, up to the next stretch's start, when that start is a
/// line start the counter splits at (see [`TokenCounter::splits_at_line_starts`]). Such a count
/// adds up exactly with the counts after it, so a chunk made of such stretches needs no recount;
/// only its last one must then be counted alone.
///
/// [`TokenCounter::splits_at_line_starts`]: rag_core::TokenCounter::splits_at_line_starts
#[derive(Debug, Clone, Copy)]
pub(super) struct Stretch {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) until: usize,
    pub(super) tokens: usize,
    pub(super) place: Place,
}

/// Where a stretch lies in the document's structure: what its start is, and whether it is code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Place {
    pub(super) starts: Boundary,
    /// Code has lines, not sentences; a chunk may start at a line inside a code block only where
    /// it continues that block anyway, since anywhere else it would cut a fence.
    pub(super) code: bool,
}

/// What a position is in the structure of its block, from the best start of a chunk to the worst.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Boundary {
    /// The start of a block.
    Block,
    /// The start of a sentence (soft line breaks read as spaces).
    Sentence,
    /// The start of a line that is not a sentence start (a wrapped line of prose, a line of code).
    Line,
    /// None of these: a word or character inside a line, where a hard split cut.
    Inside,
}

impl Place {
    /// A place that starts at `starts`, in code or not.
    pub(super) fn new(starts: Boundary, code: bool) -> Self {
        Self { starts, code }
    }
}

impl Stretch {
    /// A stretch counted alone.
    pub(super) fn alone(start: usize, end: usize, tokens: usize, place: Place) -> Self {
        Self {
            start,
            end,
            until: end,
            tokens,
            place,
        }
    }

    /// The count of the stretch without the whitespace after it.
    pub(super) fn tokens_alone(&self, counting: &Counting<'_>) -> Result<usize, ChunkError> {
        if self.until == self.end {
            Ok(self.tokens)
        } else {
            counting.count(self.start..self.end)
        }
    }
}

/// Never hand the tokenizer more than this many bytes at once (or 16 bytes per token of budget,
/// if that is more): BPE merging is superlinear in the length of one pre-token piece, and a
/// megabyte line without spaces is one piece.
const MIN_COUNT_WINDOW: usize = 16 * 1024;

/// How one document is counted: its text, the counter, the budget, and what the counter promises.
pub(super) struct Counting<'a> {
    pub(super) text: &'a str,
    pub(super) document_id: &'a DocumentId,
    counter: &'a dyn TokenCounter,
    /// The most tokens a chunk may have.
    pub(super) max_tokens: usize,
    /// The most bytes handed to the counter at once.
    pub(super) window: usize,
    /// Whether the counter's counts add up across line starts (a unit may then be counted with
    /// the whitespace after it, and a chunk summed from its units instead of counted again).
    splits_at_line_starts: bool,
}

impl<'a> Counting<'a> {
    pub(super) fn new(
        text: &'a str,
        document_id: &'a DocumentId,
        counter: &'a dyn TokenCounter,
        max_tokens: usize,
    ) -> Self {
        Self {
            text,
            document_id,
            counter,
            max_tokens,
            window: MIN_COUNT_WINDOW.max(max_tokens.saturating_mul(16)),
            splits_at_line_starts: counter.splits_at_line_starts(),
        }
    }

    /// The counter's name, which every chunk carries as its `tokenizer`.
    pub(super) fn tokenizer(&self) -> &'a str {
        self.counter.name()
    }

    /// The exact count of `text[range]`; a failing counter is an error naming the document and
    /// where the counted text starts.
    pub(super) fn count(&self, range: Range<usize>) -> Result<usize, ChunkError> {
        let offset = range.start;
        self.counter
            .count(&self.text[range])
            .map_err(|source| ChunkError::TokenCount {
                document_id: self.document_id.clone(),
                offset: Some(offset),
                source,
            })
    }

    /// Whether the counter's count of a text that is cut at `at` is the sum of the counts of the
    /// two sides: `at` starts a line (after `\n` or `\r`) with a character that is not whitespace.
    pub(super) fn splits_at(&self, at: usize) -> bool {
        self.splits_at_line_starts && rag_core::counts_add_up_at(self.text, at)
    }

    /// Estimated tokens of the whitespace between two units when they share a chunk: none for a
    /// single space (tokenizers fold it into the next word) or when the first unit's count already
    /// covers it (`from == to`), one for a line break or a blank line, and the counter's count for
    /// anything longer.
    ///
    /// Long gaps are counted, not guessed: a list nested hundreds deep separates its items by
    /// hundreds of spaces, and a guess of one token would make every chunk of it overflow at
    /// flush and be counted again and again.
    pub(super) fn gap_tokens(&self, from: usize, to: usize) -> Result<usize, ChunkError> {
        Ok(match self.text.get(from..to) {
            Some("") | Some(" ") | None => 0,
            Some(gap) if gap.len() <= 2 => 1,
            Some(_) => self.count(from..to)?.max(1),
        })
    }

    /// The exact count of a body chunk made of `units`, which starts at `start` (the start of
    /// `overlap`, if it starts with one, else of its first unit) and ends with its last unit.
    ///
    /// When the counter splits at line starts, the chunk's count is the sum of the counts of the
    /// stretches between the line starts that begin its units, and a stretch that is exactly a
    /// counted unit (or the overlap) counted up to the next unit is not counted again: usually only
    /// the last unit is, alone. Otherwise the chunk is counted whole, unless it is one unit counted
    /// alone.
    pub(super) fn chunk_tokens(
        &self,
        start: usize,
        units: &[Stretch],
        overlap: Option<Stretch>,
    ) -> Result<usize, ChunkError> {
        let Some(last) = units.last() else {
            return Ok(0);
        };
        if !self.splits_at_line_starts {
            return match units {
                [only] if only.start == start && only.until == only.end => Ok(only.tokens),
                _ => self.count(start..last.end),
            };
        }
        let mut total = 0;
        // The stretch being summed starts at `from`: at the overlap (`None`) or at a unit (`Some`).
        let (mut from, mut from_unit) = (start, overlap.is_none().then_some(0));
        if let Some(o) = overlap
            && let Some(first) = units.first()
            && self.splits_at(first.start)
        {
            total += if o.start == start && o.until == first.start {
                o.tokens
            } else {
                self.count(start..first.start)?
            };
            (from, from_unit) = (first.start, Some(0));
        }
        for k in 0..units.len() {
            let cut = match units.get(k + 1) {
                Some(next) if self.splits_at(next.start) => next.start,
                Some(_) => continue,
                None => last.end,
            };
            let known = match from_unit {
                Some(i) => units
                    .get(i)
                    .filter(|u| u.start == from && u.until == cut)
                    .map(|u| u.tokens),
                None => overlap.filter(|o| o.start == from && o.until == cut).map(|o| o.tokens),
            };
            total += match known {
                Some(tokens) => tokens,
                None => self.count(from..cut)?,
            };
            (from, from_unit) = (cut, Some(k + 1));
        }
        Ok(total)
    }
}
