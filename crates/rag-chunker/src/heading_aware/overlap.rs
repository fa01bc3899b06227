//! Overlap: the tail of a flushed body chunk that starts the next chunk of the same section, cut at
//! the best boundary the tail offers.

use std::ops::Range;

use rag_core::ChunkError;

use super::counting::{Boundary, Counting, Place, Stretch};
use crate::sentence::{ceil_boundary, line_starts, nested_fences, sentence_starts_from, word_starts};

/// The flushed chunk an overlap is taken from, and the unit the next chunk starts with.
pub(super) struct Flushed<'a> {
    /// Where the chunk starts (at its own overlap, if it has one).
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) tokens: usize,
    /// The chunk's units; the overlap is taken from them, never from the chunk's own overlap, and
    /// only from those at or after `floor` (the end of a heading folded into the chunk).
    pub(super) units: &'a [Stretch],
    pub(super) floor: usize,
    /// The first unit of the next chunk.
    pub(super) next: Stretch,
}

/// A place the overlap may start at, and how good a start it is.
#[derive(Debug, Clone, Copy)]
struct Candidate {
    at: usize,
    place: Place,
}

/// The largest tail of the flushed chunk within `want` tokens that starts at the best boundary it
/// has, if any.
///
/// Starts are taken in this order of preference, the longest tail that fits within each:
/// 1. a block start or a sentence start (soft line breaks read as spaces); inside a code block,
///    only where the next chunk continues that block, a line start;
/// 2. the start of a wrapped line of prose;
/// 3. only when the next chunk itself starts inside a line (a hard-split sentence longer than the
///    budget continues), the start of a word.
///
/// Never inside a code block the next chunk does not continue (or a fence nested in a list item
/// or quote), so an overlap never starts with a closing fence or opens a block it does not close.
/// With no start of an allowed kind whose tail fits, there is no overlap.
///
/// Only the tail's window (about twice `want` tokens at the chunk's bytes per token) is searched,
/// and counts are of tails only, starting from the one the chunk's bytes per token suggest. When the next chunk's first unit
/// starts a line the counter splits at, the tail is counted up to it, so that the next chunk can
/// add that count to its units'.
pub(super) fn tail(counting: &Counting<'_>, want: usize, flushed: &Flushed<'_>) -> Result<Option<Stretch>, ChunkError> {
    let end = flushed.end;
    let next = flushed.next;
    let until = if next.start >= end && counting.splits_at(next.start) {
        next.start
    } else {
        end
    };
    let len = end.saturating_sub(flushed.start);
    if want == 0 || len < 2 {
        return Ok(None);
    }
    let bytes_per_token = len as f64 / flushed.tokens.max(1) as f64;
    let window = (bytes_per_token * want as f64 * 2.0).ceil() as usize + 64;
    let lo = ceil_boundary(
        counting.text,
        end.saturating_sub(window).max(flushed.floor).max(flushed.start + 1),
    );
    let candidates = candidates(counting.text, flushed, lo);
    let mut tails = Tails {
        counting,
        units: flushed.units,
        until,
        counted: Vec::new(),
    };
    let ranks: &[&[Boundary]] = &[
        &[Boundary::Block, Boundary::Sentence],
        &[Boundary::Line],
        &[Boundary::Inside],
    ];
    for rank in ranks {
        let of_rank: Vec<Candidate> = candidates
            .iter()
            .copied()
            .filter(|c| rank.contains(&tier(c.place)))
            .collect();
        if let Some((candidate, tokens)) = longest_fitting(&mut tails, &of_rank, want, bytes_per_token)? {
            let (candidate, tokens) = if rank[0] == Boundary::Block {
                reach_back(&mut tails, &of_rank, (candidate, tokens), want, next)?
            } else {
                (candidate, tokens)
            };
            return Ok(Some(Stretch {
                start: candidate.at,
                end,
                until,
                tokens,
                place: candidate.place,
            }));
        }
    }
    Ok(None)
}

/// The start of the sentence (or block) that the `want`-token window cuts, instead of `fit`, the
/// next one after it, when `fit` keeps less than half of `want` tokens: a long sentence before the
/// chunk's end would otherwise leave almost no overlap, and the passage the overlap exists to
/// repeat is often that sentence. The longer tail is taken only within twice `want` tokens and
/// when the next chunk's first unit still fits behind it.
fn reach_back(
    tails: &mut Tails<'_, '_>,
    candidates: &[Candidate],
    fit: (Candidate, usize),
    want: usize,
    next: Stretch,
) -> Result<(Candidate, usize), ChunkError> {
    let (counting, until) = (tails.counting, tails.until);
    let (candidate, tokens) = fit;
    if tokens * 2 >= want {
        return Ok(fit);
    }
    let Some(before) = candidates.iter().rev().find(|c| c.at < candidate.at) else {
        return Ok(fit);
    };
    let longer = tails.tokens(before.at)?;
    let room = counting
        .max_tokens
        .saturating_sub(next.tokens + counting.gap_tokens(until, next.start)?);
    if longer <= want * 2 && longer <= room {
        Ok((*before, longer))
    } else {
        Ok(fit)
    }
}

/// The kind a candidate is ranked as: a line start in code ranks with sentence starts (code has
/// lines, not sentences; only lines of a block the next chunk continues are candidates at all).
fn tier(place: Place) -> Boundary {
    if place.code && place.starts == Boundary::Line {
        Boundary::Sentence
    } else {
        place.starts
    }
}

/// The first candidate (the longest tail) of `candidates`, in order of position, whose tail
/// `at..until` has at most `want` tokens, and that count. Assumes a longer tail never has fewer
/// tokens (it may, rarely, with BPE: then a shorter tail than possible is taken, never one over).
///
/// The search starts at the candidate whose tail the chunk's bytes per token put just within
/// `want`, and walks from there: usually one or two counts of about `want` tokens settle it. A
/// longer tail is not counted when those bytes per token put it over 1.5 times `want`. After a
/// few steps without reaching the boundary, the search bisects what is left.
fn longest_fitting(
    tails: &mut Tails<'_, '_>,
    candidates: &[Candidate],
    want: usize,
    bytes_per_token: f64,
) -> Result<Option<(Candidate, usize)>, ChunkError> {
    let until = tails.until;
    const WALK: usize = 3;
    const LONGER: f64 = 1.5;
    let estimate = |c: &Candidate| (until - c.at) as f64 / bytes_per_token;
    let mut probe = candidates
        .iter()
        .position(|c| estimate(c) <= want as f64)
        .unwrap_or(candidates.len().saturating_sub(1));
    // Every candidate before `lo` has a tail over `want`; `fit` is the first known to fit.
    let mut lo = 0usize;
    let mut fit: Option<(usize, usize)> = None;
    for step in 0.. {
        let end = fit.map_or(candidates.len(), |(i, _)| i);
        if lo >= end {
            break;
        }
        if step > 0 {
            probe = match fit {
                // A longer tail the chunk's bytes per token put far over `want` is not counted.
                Some((i, _)) if estimate(&candidates[i - 1]) > want as f64 * LONGER => break,
                Some((i, _)) if step <= WALK => i - 1,
                _ if step <= WALK => lo,
                _ => lo + (end - lo) / 2,
            };
        }
        let tokens = tails.tokens(candidates[probe].at)?;
        if tokens <= want {
            fit = Some((probe, tokens));
        } else {
            lo = probe + 1;
        }
    }
    Ok(fit.map(|(i, tokens)| (candidates[i], tokens)))
}

/// The counts of the tails of one flushed chunk that end at `until`, each derived from a tail
/// counted before it where that is cheaper (a longer tail adds the sentence before a shorter one,
/// and a few words where they meet), else from the counts of the chunk's units (a tail that starts
/// at a unit is the sum of its units' counts).
struct Tails<'c, 'a> {
    counting: &'c Counting<'a>,
    units: &'c [Stretch],
    until: usize,
    counted: Vec<Stretch>,
}

impl Tails<'_, '_> {
    /// The exact count of the tail that starts at `at`.
    fn tokens(&mut self, at: usize) -> Result<usize, ChunkError> {
        let (counting, until) = (self.counting, self.until);
        let at_unit = self.units.iter().any(|u| u.start == at);
        let nearest = self.counted.iter().min_by_key(|tail| tail.start.abs_diff(at)).copied();
        let derived = match nearest {
            Some(tail) if !at_unit => counting.derive_from(at..until, &tail)?,
            _ => None,
        };
        let tokens = match derived {
            Some(tokens) => tokens,
            None => {
                let from = self.units.partition_point(|u| u.end <= at);
                counting.tokens_of(at..until, &self.units[from..])?
            }
        };
        self.counted
            .push(Stretch::alone(at, until, tokens, Place::new(Boundary::Inside, false)));
        Ok(tokens)
    }
}

/// Every allowed start in `lo..end` of the flushed chunk's units, in order of position, each once
/// with its best kind.
fn candidates(text: &str, flushed: &Flushed<'_>, lo: usize) -> Vec<Candidate> {
    let next = flushed.next;
    let continues_code = next.place.code && next.place.starts != Boundary::Block;
    // The units of the code block the next chunk continues: the trailing run of code lines, and
    // the unit that starts the block.
    let continued_from = if continues_code {
        let run = flushed
            .units
            .iter()
            .rev()
            .take_while(|u| u.place.code && u.place.starts != Boundary::Block)
            .count();
        flushed.units.len() - (run + 1).min(flushed.units.len())
    } else {
        flushed.units.len()
    };
    let words_allowed = next.place.starts == Boundary::Inside;
    let mut out: Vec<Candidate> = Vec::new();
    for (i, unit) in flushed.units.iter().enumerate() {
        if unit.end <= lo || unit.start < flushed.floor {
            continue;
        }
        let allowed = match unit.place.starts {
            Boundary::Block => true,
            _ if unit.place.code && i < continued_from => false,
            Boundary::Inside => words_allowed,
            Boundary::Sentence | Boundary::Line => true,
        };
        if allowed && unit.start >= lo {
            out.push(Candidate {
                at: unit.start,
                place: unit.place,
            });
        }
        if !unit.place.code {
            inner_candidates(text, unit.start..unit.end, lo, words_allowed, &mut out);
        }
    }
    out.sort_by_key(|c| (c.at, c.place.starts));
    out.dedup_by_key(|c| c.at);
    out
}

/// The sentence, line and (if `words`) word starts strictly inside the prose unit `unit`, at or
/// after `lo`, outside fences nested in it.
fn inner_candidates(text: &str, unit: Range<usize>, lo: usize, words: bool, out: &mut Vec<Candidate>) {
    let fences = nested_fences(text, unit.clone());
    let inside_fence = |at: usize| fences.iter().any(|f| f.start < at && at <= f.end);
    let mut push = |at: usize, starts: Boundary| {
        if at > unit.start && at >= lo && !inside_fence(at) {
            out.push(Candidate {
                at,
                place: Place::new(starts, false),
            });
        }
    };
    for at in sentence_starts_from(text, unit.clone(), lo) {
        push(at, Boundary::Sentence);
    }
    // The line breaks before the last one before `lo` start no line at or after it.
    let last_break = text[unit.start..lo.clamp(unit.start, unit.end)].rfind(['\n', '\r']);
    for at in line_starts(text, last_break.map_or(unit.start, |b| unit.start + b)..unit.end) {
        push(at, Boundary::Line);
    }
    if words {
        for at in word_starts(text, lo.max(unit.start)..unit.end) {
            push(at, Boundary::Inside);
        }
    }
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
