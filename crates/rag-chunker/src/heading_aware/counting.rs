//! Counting: what the chunker hands the tokenizer, the counted stretch of text everything else is
//! built from, and how the count of any stretch is put together from counts already taken instead
//! of counting its text again.
//!
//! Two promises of the counter make counts add up (see [`TokenCounter::splits_at_line_starts`] and
//! [`TokenCounter::splits_at_spaces`]): a text cut at a line start, or just before a space that
//! follows a character that is not whitespace, counts as the sum of its two sides. Such a position
//! is a *cut*. With cuts, the count of a stretch is derived from the count of a stretch that
//! differs from it only near its ends: `count(a..b)` from `count(c..d)` by replacing the text
//! between the ends and the nearest cuts inside both, which costs a few words instead of the whole
//! stretch. Every count is exact; cuts only decide which texts the tokenizer is handed.
//!
//! [`TokenCounter::splits_at_line_starts`]: rag_core::TokenCounter::splits_at_line_starts
//! [`TokenCounter::splits_at_spaces`]: rag_core::TokenCounter::splits_at_spaces

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashMap};
use std::ops::Range;

use rag_core::{ChunkError, DocumentId, TokenCounter, counts_add_up_at, counts_add_up_at_space};

/// A stretch of text with an exact token count: a unit packing never cuts, or the overlap a chunk
/// starts with (the tail of the previous chunk).
///
/// `tokens` is the exact count of `start..until`: of the stretch alone when `until == end`, or of
/// the stretch and the whitespace after it, up to the next stretch's start, when that start is a
/// line start the counter splits at (see [`TokenCounter::splits_at_line_starts`]). Such a count
/// adds up exactly with the counts after it, so a chunk made of such stretches needs no recount;
/// the count of the last one alone is derived from it (see [`Counting::tokens_of`]).
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

    /// The text its count is of.
    fn counted(&self) -> Range<usize> {
        self.start..self.until
    }

    /// The count of the stretch without the whitespace after it.
    pub(super) fn tokens_alone(&self, counting: &Counting<'_>) -> Result<usize, ChunkError> {
        counting.count_from(self.start..self.end, self)
    }
}

/// Never hand the tokenizer more than this many bytes at once (or 16 bytes per token of budget,
/// if that is more): BPE merging is superlinear in the length of one pre-token piece, and a
/// megabyte line without spaces is one piece.
const MIN_COUNT_WINDOW: usize = 16 * 1024;

/// What one more call of the counter costs, in bytes of text counted: deriving a count pays for
/// the calls it makes as well as for the text it hands over, and a short text is cheaper counted
/// directly than derived in four calls.
const CALL_BYTES: usize = 4;

/// Texts up to this many bytes are remembered by their content, not their place: they are the
/// words at the edges of derived counts (the first word of a sentence, with and without the space
/// before it), which repeat.
const SHORT_TEXT: usize = 24;

/// The most short texts remembered at once; past it, they are forgotten all together.
const SHORT_TEXTS: usize = 4096;

/// How one document is counted: its text, the counter, the budget, what the counter promises, and
/// the counts taken so far.
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
    /// Whether the counter's counts add up across spaces after a character that is not whitespace.
    splits_at_spaces: bool,
    /// The counts taken or derived since the last [`forget_before`](Self::forget_before), by the
    /// range counted: no stretch is handed to the counter twice.
    known: RefCell<BTreeMap<(usize, usize), usize>>,
    /// The counts of short texts, by their content (see [`SHORT_TEXT`]).
    short: RefCell<HashMap<&'a str, usize>>,
    /// Bytes handed to the counter and the tokens they had, for guesses of what a text holds.
    seen: Cell<(usize, usize)>,
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
            splits_at_spaces: counter.splits_at_spaces(),
            known: RefCell::new(BTreeMap::new()),
            short: RefCell::new(HashMap::new()),
            seen: Cell::new((0, 0)),
        }
    }

    /// The counter's name, which every chunk carries as its `tokenizer`.
    pub(super) fn tokenizer(&self) -> &'a str {
        self.counter.name()
    }

    /// The exact count of `text[range]`, counted unless it was counted before; a failing counter
    /// is an error naming the document and where the counted text starts.
    pub(super) fn count(&self, range: Range<usize>) -> Result<usize, ChunkError> {
        let text = &self.text[range.clone()];
        let short = text.len() <= SHORT_TEXT;
        let known = match short {
            true => self.short.borrow().get(text).copied(),
            false => self.known.borrow().get(&(range.start, range.end)).copied(),
        };
        if let Some(tokens) = known {
            return Ok(tokens);
        }
        let offset = range.start;
        let tokens = self.counter.count(text).map_err(|source| ChunkError::TokenCount {
            document_id: self.document_id.clone(),
            offset: Some(offset),
            source,
        })?;
        let (bytes, seen) = self.seen.get();
        self.seen.set((bytes + range.len(), seen + tokens));
        if short {
            let mut texts = self.short.borrow_mut();
            if texts.len() >= SHORT_TEXTS {
                texts.clear();
            }
            texts.insert(text, tokens);
        } else {
            self.remember(range, tokens);
        }
        Ok(tokens)
    }

    fn remember(&self, range: Range<usize>, tokens: usize) {
        self.known.borrow_mut().insert((range.start, range.end), tokens);
    }

    /// Forgets the counts of stretches that start before `at`: the chunks built from them have
    /// gone out, so that the counts kept stay as few as the stretches of one chunk.
    pub(super) fn forget_before(&self, at: usize) {
        let mut known = self.known.borrow_mut();
        let kept = known.split_off(&(at, 0));
        *known = kept;
    }

    /// The bytes per token of the text counted so far (4 before any count), to guess how many
    /// tokens a text has before counting it.
    pub(super) fn bytes_per_token(&self) -> f64 {
        match self.seen.get() {
            (bytes, tokens) if tokens > 0 && bytes >= 256 => bytes as f64 / tokens as f64,
            _ => 4.0,
        }
    }

    /// Whether the counter promises that counts add up somewhere, so that counts can be derived
    /// from other counts at all.
    pub(super) fn derives(&self) -> bool {
        self.splits_at_line_starts || self.splits_at_spaces
    }

    /// Whether the counter's count of a text that is cut at `at` is the sum of the counts of the
    /// two sides: `at` starts a line (after `\n` or `\r`) with a character that is not whitespace.
    pub(super) fn splits_at(&self, at: usize) -> bool {
        self.splits_at_line_starts && counts_add_up_at(self.text, at)
    }

    /// Whether `at` is a cut: a line start the counter splits at, or a space after a character
    /// that is not whitespace, if the counter splits there.
    fn cuts_at(&self, at: usize) -> bool {
        let bytes = self.text.as_bytes();
        let (Some(&before), Some(&after)) = (at.checked_sub(1).and_then(|i| bytes.get(i)), bytes.get(at)) else {
            return false;
        };
        if matches!(before, b'\n' | b'\r') {
            return self.splits_at(at);
        }
        // A space cut needs whitespace at `at`: an ASCII space, tab, vertical tab or form feed, or
        // the first byte of a longer character (a no-break or ideographic space, say).
        self.splits_at_spaces
            && matches!(after, b' ' | b'\t' | 0x0b | 0x0c | 0x80..)
            && counts_add_up_at_space(self.text, at)
    }

    /// The first cut in `from + 1..=to`, looking at most `scan` bytes past `from`.
    fn first_cut(&self, from: usize, to: usize, scan: usize) -> Option<usize> {
        (from + 1..=to.min(from.saturating_add(scan))).find(|&at| self.cuts_at(at))
    }

    /// The last cut in `from + 1..=to`, looking at most `scan` bytes before `to`.
    fn last_cut(&self, from: usize, to: usize, scan: usize) -> Option<usize> {
        (from.max(to.saturating_sub(scan)) + 1..=to)
            .rev()
            .find(|&at| self.cuts_at(at))
    }

    /// The exact count of `want`, derived from the count of `known` where that costs less than
    /// counting `want` (see the module documentation), else counted.
    pub(super) fn count_from(&self, want: Range<usize>, known: &Stretch) -> Result<usize, ChunkError> {
        match self.derived(want.clone(), known.counted(), known.tokens)? {
            Some(tokens) => Ok(tokens),
            None => self.count(want),
        }
    }

    /// The count of `want` derived from the count of `known` (see [`count_from`](Self::count_from)),
    /// if that costs less than counting `want`; `None` otherwise.
    pub(super) fn derive_from(&self, want: Range<usize>, known: &Stretch) -> Result<Option<usize>, ChunkError> {
        self.derived(want, known.counted(), known.tokens)
    }

    /// The count of `want` derived from `tokens`, the count of `known`, if the two share a cut near
    /// each end where they differ and the texts between (counted on both sides) are shorter than
    /// `want`; `None` otherwise.
    ///
    /// With `k1` the first cut where their starts differ and `k2` the last where their ends do,
    /// `count(want) = tokens - count(known.start..k1) + count(want.start..k1) - count(k2..known.end)
    /// + count(k2..want.end)`: both texts are the same from `k1` to `k2`, and each adds up at both.
    fn derived(&self, want: Range<usize>, known: Range<usize>, tokens: usize) -> Result<Option<usize>, ChunkError> {
        if want == known {
            return Ok(Some(tokens));
        }
        if let Some(&tokens) = self.known.borrow().get(&(want.start, want.end)) {
            return Ok(Some(tokens));
        }
        let (lo, hi) = (want.start.max(known.start), want.end.min(known.end));
        if !self.derives() || lo >= hi {
            return Ok(None);
        }
        let calls = |differ: bool| if differ { 2 * CALL_BYTES } else { 0 };
        let (left, right) = (want.start != known.start, want.end != known.end);
        let fixed = want.start.abs_diff(known.start) + want.end.abs_diff(known.end) + calls(left) + calls(right);
        // Each byte between an end and its cut is counted twice, once on each side.
        let Some(slack) = want.len().checked_sub(fixed) else {
            return Ok(None);
        };
        let k1 = match left {
            true => match self.first_cut(lo, hi, slack / 2) {
                Some(k1) => k1,
                None => return Ok(None),
            },
            false => lo,
        };
        let k2 = match right {
            // With the start moved, `k1` is a cut too, and may serve the end as well.
            true => match self.last_cut(if left { k1 - 1 } else { lo }, hi, (slack - 2 * (k1 - lo)) / 2) {
                Some(k2) => k2,
                None => return Ok(None),
            },
            false => hi,
        };
        let edges = [
            (known.start..k1, false),
            (want.start..k1, true),
            (k2..known.end, false),
            (k2..want.end, true),
        ];
        let mut total = tokens;
        for (range, add) in edges {
            let counted = if range.is_empty() { 0 } else { self.count(range)? };
            total = match add {
                true => total + counted,
                // Never below zero while the promises hold; a count that broke one is not used.
                false => match total.checked_sub(counted) {
                    Some(total) => total,
                    None => return Ok(None),
                },
            };
        }
        self.remember(want, total);
        Ok(Some(total))
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
    pub(super) fn chunk_tokens(
        &self,
        start: usize,
        units: &[Stretch],
        overlap: Option<Stretch>,
    ) -> Result<usize, ChunkError> {
        let Some(last) = units.last() else {
            return Ok(0);
        };
        match overlap {
            Some(overlap) => {
                let mut pieces = Vec::with_capacity(units.len() + 1);
                pieces.push(overlap);
                pieces.extend_from_slice(units);
                self.tokens_of(start..last.end, &pieces)
            }
            None => self.tokens_of(start..last.end, units),
        }
    }

    /// The exact count of `range`, made of `pieces` (counted stretches in order, the first of
    /// which may start before `range`, and whitespace between them).
    ///
    /// The range is cut where one piece ends and the next begins: at the next one's start if it
    /// is a line start the counter splits at, else at the end of the first if a space follows it,
    /// else at the last cut inside the first and the first cut inside the next (the few words
    /// between are counted). Each part is then derived from the count of the one piece it holds
    /// (see [`count_from`](Self::count_from)), or counted if it holds several. Without a promise
    /// of the counter, the range is one part: a chunk of a single unit reuses the unit's count,
    /// any other is counted whole.
    pub(super) fn tokens_of(&self, range: Range<usize>, pieces: &[Stretch]) -> Result<usize, ChunkError> {
        let mut total = 0;
        let mut from = range.start;
        // The pieces of the part that starts at `from`.
        let mut first = 0;
        for (i, piece) in pieces.iter().enumerate() {
            let (to, next_from) = match pieces.get(i + 1) {
                Some(next) => match self.junction(piece, next) {
                    Some((to, next_from)) if to > from => (to, next_from),
                    _ => continue,
                },
                None => (range.end, range.end),
            };
            total += match &pieces[first..=i] {
                [only] => self.count_from(from..to, only)?,
                _ => self.count(from..to)?,
            };
            if next_from > to {
                total += self.count(to..next_from)?;
            }
            (from, first) = (next_from, i + 1);
        }
        if pieces.is_empty() {
            return self.count(range);
        }
        self.remember(range, total);
        Ok(total)
    }

    /// Where text that runs from `piece` on into `next` can be cut: the end of the part holding
    /// `piece` and the start of the part holding `next`, with the words between them counted on
    /// their own when the two differ (see [`tokens_of`](Self::tokens_of)); `None` if the counter
    /// offers no cut there.
    fn junction(&self, piece: &Stretch, next: &Stretch) -> Option<(usize, usize)> {
        /// How far into a piece to look for a cut near its end or start: a few words.
        const SCAN: usize = 48;
        if !self.derives() {
            return None;
        }
        if self.cuts_at(next.start) && next.start >= piece.end {
            return Some((next.start, next.start));
        }
        if self.cuts_at(piece.end) && piece.end <= next.start {
            return Some((piece.end, piece.end));
        }
        let left = self.last_cut(piece.start, piece.end, SCAN)?;
        let right = self.first_cut(next.start, next.end, SCAN)?;
        (left < right).then_some((left, right))
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use rag_contract::testing::SpyCounter;
    use rag_tokens::TiktokenCounter;

    use super::*;

    fn stretch(range: Range<usize>, tokens: usize) -> Stretch {
        Stretch::alone(range.start, range.end, tokens, Place::new(Boundary::Block, false))
    }

    #[test]
    fn a_count_with_the_whitespace_after_gives_the_count_alone_from_the_last_words() {
        let text =
            "A paragraph of several words, long enough to be worth deriving, that ends with punctuation.\n\nNext";
        let spy = SpyCounter::new(TiktokenCounter::cl100k());
        let id = DocumentId::from("d");
        let counting = Counting::new(text, &id, &spy, 512);
        let unit = text.find("\n\n").unwrap();
        let joined = stretch(0..unit + 2, counting.count(0..unit + 2).unwrap());
        let before = spy.bytes();
        let alone = counting.count_from(0..unit, &joined).unwrap();
        assert_eq!(alone, TiktokenCounter::cl100k().count(&text[..unit]).unwrap());
        // " punctuation." and " punctuation.\n\n", not the paragraph again.
        assert_eq!(spy.bytes() - before, " punctuation.".len() * 2 + 2);
        // A sentence after a space, from its count alone: its first word is counted twice.
        let sentence = text.find("of").unwrap()..unit;
        let known = stretch(sentence.clone(), counting.count(sentence.clone()).unwrap());
        let before = spy.bytes();
        let with_space = counting.count_from(sentence.start - 1..unit, &known).unwrap();
        assert_eq!(
            with_space,
            TiktokenCounter::cl100k()
                .count(&text[sentence.start - 1..unit])
                .unwrap()
        );
        assert_eq!(spy.bytes() - before, "of".len() + " of".len());
    }

    #[test]
    fn without_a_promise_nothing_is_derived() {
        let text = "one two three four five six seven.\n\nNext";
        let spy = SpyCounter::new(TiktokenCounter::cl100k()).promising(false);
        let id = DocumentId::from("d");
        let counting = Counting::new(text, &id, &spy, 512);
        let joined = stretch(0..36, counting.count(0..36).unwrap());
        assert_eq!(counting.derive_from(0..34, &joined).unwrap(), None);
        // The line-start promise alone finds no cut near the end of a line.
        let lines = SpyCounter::new(TiktokenCounter::cl100k()).promising_spaces(false);
        let counting = Counting::new(text, &id, &lines, 512);
        assert_eq!(counting.derive_from(0..34, &joined).unwrap(), None);
    }

    fn text_strategy() -> impl Strategy<Value = String> {
        prop::collection::vec(
            prop::sample::select(
                &[
                    "word", " ", "  ", "\t", "\n", "\n\n", "\r\n", ".", "!", "'s", "1", "23", "東京", "👍", "\u{301}",
                    "/", "-", "(", ")", "\u{a0}", "The", " a", ". ", ".\n", "x!\n/",
                ][..],
            ),
            1..40,
        )
        .prop_map(|parts| parts.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn a_derived_count_is_the_count(
            text in text_strategy(),
            bounds in prop::collection::vec(0usize..400, 4),
            o200k in proptest::bool::ANY,
        ) {
            let counter = if o200k { TiktokenCounter::new("o200k_base").unwrap() } else { TiktokenCounter::cl100k() };
            let mut at: Vec<usize> = bounds.iter().map(|&b| text.floor_char_boundary(b % (text.len() + 1))).collect();
            let (want, known) = {
                let (a, b) = (at[0].min(at[1]), at[0].max(at[1]));
                at.drain(..2);
                (a..b, at[0].min(at[1])..at[0].max(at[1]))
            };
            let id = DocumentId::from("d");
            let counting = Counting::new(&text, &id, &counter, 512);
            let known = stretch(known.clone(), counter.count(&text[known]).unwrap());
            let whole = counter.count(&text[want.clone()]).unwrap();
            if let Some(derived) = counting.derive_from(want.clone(), &known).unwrap() {
                prop_assert_eq!(derived, whole, "{:?} from {:?} of {:?}", want, known, text);
            }
            // And a range made of pieces sums to its count.
            let pieces = [known];
            let start = want.start.min(known.start);
            let end = want.end.max(known.end);
            prop_assert_eq!(counting.tokens_of(start..end, &pieces).unwrap(), counter.count(&text[start..end]).unwrap());
        }
    }
}
