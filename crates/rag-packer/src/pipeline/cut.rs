//! Cut to fit, in the pipeline: after a rendered pack, the best-ranked chunk left out for lack of
//! room may be packed in part (see [`PackerConfig::cut_to_fit`]).
//!
//! The cut is made once the plan is known, so the stages themselves are untouched: the chunk's
//! best part becomes a new candidate of the same score, just below it in rank, and the context is
//! planned again. The part takes the room the chunk would have had above the chunks it outranks
//! (at most a third of the budget) only when it is as relevant as the chunk by the query's terms, or the
//! chunk fits nowhere; otherwise the room the plan left, where it displaces nothing. Without those
//! conditions a part displaced smaller chunks that held the answer more often than it found one.

use rag_core::{Chunk, ChunkId, CutFrom, DropReason, DroppedChunk, PackerError, Span, TokenCounter};

use super::PackerConfig;
use super::context::count;
use super::plan::Plan;
use crate::cut::{best_part, distinct_terms_held};
use crate::render::ContextFormat;
use crate::score::search_terms;

/// The smallest part worth cutting: below this the part is a fragment rather than a passage.
pub const MIN_CUT_TOKENS: usize = 32;

/// Tokens kept back for what joining the part to its neighbours may add (BPE across a join).
const JOIN_MARGIN: usize = 2;

/// The suffix of a cut chunk's id.
const CUT_SUFFIX: &str = "#cut";

/// The best part of the best-ranked chunk `plan` left out for lack of room, as a new chunk: the
/// original's position and the part. `None` when cutting is off or nothing qualifies.
pub(super) fn cut_for(
    config: &PackerConfig,
    format: &ContextFormat,
    chunks: &[Chunk],
    plan: &Plan,
) -> Result<Option<(usize, Chunk)>, PackerError> {
    if !config.cut_to_fit {
        return Ok(None);
    }
    let Some(original) = plan.dropped.iter().find_map(|(i, reason)| {
        (matches!(reason, DropReason::OverBudget { .. }) && can_be_cut(chunks, *i)).then_some(*i)
    }) else {
        return Ok(None);
    };
    let counter = config.token_counter.as_ref();
    let chunk = &chunks[original];
    let content = chunk.content().unwrap_or_default();
    let mut terms = config.query.as_deref().map(search_terms).unwrap_or_default();
    terms.sort_unstable();
    terms.dedup();
    let best_within = |allowance: usize| {
        best_part(content, &terms, allowance, counter).map_err(|source| PackerError::Tokenizer {
            chunk_id: chunk.id.clone(),
            source,
        })
    };
    // The room the chunk would have had, when its part is as relevant as the chunk: it keeps every
    // query term the chunk holds (or the chunk fits nowhere). Otherwise only the room left. With
    // knapsack and optimal too: the second plan still chooses by value, so the part displaces
    // the chunks below it only where it is worth more than they are.
    let mut part = None;
    if let Some(allowance) = room_above(config, format, chunks, plan, original)? {
        let candidate = best_within(allowance)?;
        let held = |range: &std::ops::Range<usize>| distinct_terms_held(&content[range.clone()], &terms);
        if let Some(range) = candidate
            && (is_best_unfit(chunks, plan, original)
                || (!terms.is_empty() && held(&range) == distinct_terms_held(content, &terms)))
        {
            part = Some(range);
        }
    }
    if part.is_none() {
        let Some(allowance) = room_for(config, format, chunks, plan, original)? else {
            return Ok(None);
        };
        part = best_within(allowance)?;
    }
    let Some(part) = part.filter(|part| part.len() < content.len()) else {
        return Ok(None);
    };
    let text = &content[part.clone()];
    let tokens = counter.count(text).map_err(|source| PackerError::Tokenizer {
        chunk_id: chunk.id.clone(),
        source,
    })?;
    let mut cut = chunk.clone();
    cut.id = cut_id(&chunk.id);
    let _ = cut.set_body(Some(text.to_owned()), None);
    cut.token_count = Some(tokens);
    cut.tokenizer = Some(counter.name().to_owned());
    // The span stays a span of the document: the chunker's content is `text[span]`.
    cut.span = chunk
        .span
        .filter(|span| span.end - span.start == content.len())
        .map(|span| Span::new(span.start + part.start, span.start + part.end));
    cut.set_cut_from(&CutFrom {
        id: chunk.id.clone(),
        start: part.start,
        end: part.end,
        tokens: plan_tokens(chunk, counter)?,
    });
    Ok(Some((original, cut)))
}

/// The drop record of the chunk that was cut: its reason says where its part went.
pub(super) fn mark_cut(dropped: &mut [DroppedChunk], original: &ChunkId, part: &ChunkId) {
    for record in dropped.iter_mut().filter(|record| record.id == *original) {
        if let DropReason::OverBudget { tokens } = record.reason {
            record.reason = DropReason::CutToFit {
                tokens,
                part: part.clone(),
            };
        }
    }
}

/// The id of the part cut from the chunk `id`.
pub(super) fn cut_id(id: &ChunkId) -> ChunkId {
    ChunkId::new(format!("{id}{CUT_SUFFIX}"))
}

/// Whether the chunk at `i` may be cut: a heading-aware chunk with its text, whose cut's id is
/// not taken.
fn can_be_cut(chunks: &[Chunk], i: usize) -> bool {
    let chunk = &chunks[i];
    chunk.kind().is_some() && chunk.content().is_some_and(|c| !c.trim().is_empty()) && !chunk.pinned && {
        let id = cut_id(&chunk.id);
        !chunks.iter().any(|c| c.id == id)
    }
}

/// Whether the chunk at `original` outranks every chunk the plan packed but the pinned ones, and
/// does not fit beside the pinned ones alone: the best chunk of the pack, left out whatever else was
/// chosen. Its best part deserves the room the chunk would have had, not only what is left.
fn is_best_unfit(chunks: &[Chunk], plan: &Plan, original: usize) -> bool {
    let Some(&best) = plan.scores.get(original) else {
        return false;
    };
    let pinned: usize = plan
        .packed
        .iter()
        .filter(|&&i| chunks[i].pinned)
        .map(|&i| chunks[i].token_count.unwrap_or(0))
        .sum();
    let too_large = plan.dropped.iter().any(|(i, reason)| {
        *i == original && matches!(reason, DropReason::OverBudget { tokens } if *tokens + pinned > plan.budget)
    });
    too_large
        && plan
            .packed
            .iter()
            .filter(|&&i| !chunks[i].pinned)
            .all(|&i| plan.scores.get(i).is_some_and(|&score| score <= best))
}

/// The tokens the part of the chunk at `original` may have in the room the chunk would have had:
/// the budget less the pinned chunks and the packed chunks it may not displace (each with a
/// delimiter), and what [`part_overhead`] adds, at most a third of the budget. The packed chunks
/// it outranks may be displaced (the second plan fills what the part leaves), except one whose own
/// score is at least the chunk's: a section-lifted rank says the section is relevant, not that a
/// part of this chunk beats a neighbour the retriever scored higher (on the Node.js evaluation at
/// 500 tokens, such displacements lost three answers and found none). The cap keeps room for the
/// next-ranked chunks, which hold the answer about as often as a part of the best one (there,
/// half the budget lost three answers for two found).
fn room_above(
    config: &PackerConfig,
    format: &ContextFormat,
    chunks: &[Chunk],
    plan: &Plan,
    original: usize,
) -> Result<Option<usize>, PackerError> {
    let counter = config.token_counter.as_ref();
    let score = plan.scores.get(original).copied().unwrap_or(f64::NEG_INFINITY);
    let scores_at_least_the_chunk =
        |i: usize| matches!((chunks[i].score, chunks[original].score), (Some(own), Some(cut)) if own >= cut);
    let kept =
        |i: usize| chunks[i].pinned || plan.scores.get(i).is_some_and(|&s| s > score) || scores_at_least_the_chunk(i);
    let delimiter = count(counter, format.delimiter())?;
    let mut used = 0;
    for &i in plan.packed.iter().filter(|&&i| kept(i)) {
        used += plan_tokens(&chunks[i], counter)? + delimiter;
        if let Some(line) = format.breadcrumb_line(&chunks[i]) {
            used += count(counter, &line)?;
        }
    }
    let Some(overhead) = part_overhead(config, format, &chunks[original])? else {
        return Ok(None);
    };
    let allowance = plan
        .budget
        .saturating_sub(used + overhead + JOIN_MARGIN)
        .min(plan.budget / 3);
    Ok((allowance >= MIN_CUT_TOKENS).then_some(allowance))
}

/// What packing a part of `chunk` costs besides the part: its breadcrumb line and its template's
/// text. `None` when the template cannot be rendered around it.
fn part_overhead(config: &PackerConfig, format: &ContextFormat, chunk: &Chunk) -> Result<Option<usize>, PackerError> {
    let counter = config.token_counter.as_ref();
    let mut used = 0;
    if let Some(line) = format.breadcrumb_line(chunk) {
        used += count(counter, &line)?;
    }
    if !format.template().is_content_only() {
        let mut bare = chunk.clone();
        let _ = bare.set_body(Some(String::new()), None);
        let Ok(around) = format.template().render(&bare) else {
            return Ok(None);
        };
        used += count(counter, &around)?;
    }
    Ok(Some(used))
}

/// The tokens the part of the chunk at `original` may have: the room the plan left (the budget
/// less its rendered context), less a delimiter, its breadcrumb line, its template text and a
/// margin for the joins. `None` when that is below [`MIN_CUT_TOKENS`] or the estimate cannot be
/// rendered.
///
/// Only the room left: a part given the room the chunk would have had displaced the smaller
/// chunks that had taken it, and on the Node.js evaluation that lost more answers (8 of 158 at
/// 500 tokens) than it found (4). In the room left, every chunk of the plan still fits beside it.
fn room_for(
    config: &PackerConfig,
    format: &ContextFormat,
    chunks: &[Chunk],
    plan: &Plan,
    original: usize,
) -> Result<Option<usize>, PackerError> {
    let counter = config.token_counter.as_ref();
    let mut used = plan.tokens_used;
    if !plan.packed.is_empty() {
        used += count(counter, format.delimiter())?;
    }
    let Some(overhead) = part_overhead(config, format, &chunks[original])? else {
        return Ok(None);
    };
    used += overhead;
    let allowance = plan.budget.saturating_sub(used + JOIN_MARGIN);
    Ok((allowance >= MIN_CUT_TOKENS).then_some(allowance))
}

/// The tokens of the whole chunk, as the cut's record of what it was cut from.
fn plan_tokens(chunk: &Chunk, counter: &dyn TokenCounter) -> Result<usize, PackerError> {
    match (chunk.token_count, chunk.content()) {
        (Some(tokens), _) => Ok(tokens),
        (None, Some(content)) => counter.count(content).map_err(|source| PackerError::Tokenizer {
            chunk_id: chunk.id.clone(),
            source,
        }),
        (None, None) => Ok(0),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use rag_contract::testing::WordCounter;
    use rag_core::{ChunkKind, RequestContext, SelectionStrategy, Span};

    use super::*;
    use crate::ContextPacker;

    /// A document of a long best section (68 words, the answer in its middle) and two short
    /// weaker ones, as the heading-aware chunker cuts it (spans into the text), counted in words.
    fn text() -> String {
        let filler = |i: usize| format!("Filler sentence {i} adds words about nothing much at all. ");
        let mut text: String = (0..3).map(filler).collect();
        text.push_str("The refund window is thirty days from delivery. ");
        text.extend((3..6).map(filler));
        text.push_str("\nShort filler one.\nShort filler two.");
        text
    }

    fn chunks() -> Vec<Chunk> {
        let text = text();
        let piece = |id: &str, start: usize, end: usize, score: f64| {
            let mut chunk = Chunk::with_content(id, "guide.md", "acme", &text[start..end]);
            chunk.span = Some(Span::new(start, end));
            chunk.score = Some(score);
            chunk.set_kind(Some(ChunkKind::Body), None);
            chunk
        };
        let one = text.find("Short filler one.").unwrap();
        let two = text.find("Short filler two.").unwrap();
        vec![
            piece("best", 0, one - 1, 0.9),
            piece("one", one, one + 17, 0.5),
            piece("two", two, two + 17, 0.4),
        ]
    }

    fn packer(cut: bool) -> ContextPacker {
        packer_with(SelectionStrategy::Greedy, cut)
    }

    fn packer_with(strategy: SelectionStrategy, cut: bool) -> ContextPacker {
        ContextPacker::new(
            PackerConfig::builder()
                .with_strategy(strategy)
                .with_token_counter(Arc::new(WordCounter))
                .with_query(Some("refund window".into()))
                .with_cut_to_fit(cut)
                .with_conflicts(false)
                .build()
                .unwrap(),
        )
    }

    #[test]
    fn the_best_chunk_that_does_not_fit_is_packed_in_part() {
        let ctx = RequestContext::local("acme");
        let format = ContextFormat::default();
        // 50 words: `best` (68) does not fit, the fillers (3 each) do, and so does a part of `best`.
        let packed = packer(true).pack_context_blocking(&ctx, chunks(), 50, &format).unwrap();
        let cut = packed
            .chunks
            .iter()
            .find(|c| c.id.as_str() == "best#cut")
            .expect("the part is packed");
        let content = cut.content().unwrap();
        assert!(
            content.contains("The refund window is thirty days from delivery."),
            "{content}"
        );
        let from = cut.cut_from().expect("the part says where it was cut from");
        assert_eq!(from.id.as_str(), "best");
        let (start, end) = (from.start, from.end);
        assert_eq!(&chunks()[0].content().unwrap()[start..end], content);
        let span = cut.span.unwrap();
        assert_eq!(
            &text()[span.start..span.end],
            content,
            "the span is still a span of the document"
        );
        let record = packed.dropped.iter().find(|d| d.id.as_str() == "best").unwrap();
        assert_eq!(
            record.reason,
            DropReason::CutToFit {
                tokens: 68,
                part: "best#cut".into()
            }
        );
        assert!(packed.tokens_used <= 50);
        assert!(packed.context.as_deref().unwrap().contains(content));

        // Off: skipped, as before.
        let whole_only = packer(false)
            .pack_context_blocking(&ctx, chunks(), 50, &format)
            .unwrap();
        assert!(whole_only.chunks.iter().all(|c| !c.id.as_str().ends_with("#cut")));
        let record = whole_only.dropped.iter().find(|d| d.id.as_str() == "best").unwrap();
        assert!(matches!(record.reason, DropReason::OverBudget { .. }));
        // `pack` never cuts.
        let plain = packer(true).pack_blocking(&ctx, chunks(), 50).unwrap();
        assert!(plain.chunks.iter().all(|c| !c.id.as_str().ends_with("#cut")));
    }

    /// A best chunk of 128 words with the answer in its middle, scored `best_score`, and two weaker
    /// chunks of `words` words each.
    fn long_best_and_fillers(words: usize, best_score: f64) -> Vec<Chunk> {
        let filler = |i: usize| format!("Filler sentence {i} adds words about nothing much at all. ");
        let mut text: String = (0..6).map(filler).collect();
        text.push_str("The refund window is thirty days from delivery. ");
        text.extend((6..12).map(filler));
        let mut best = Chunk::with_content("best", "guide.md", "acme", text.trim_end());
        best.score = Some(best_score);
        best.set_kind(Some(ChunkKind::Body), None);
        let mut chunks = vec![best];
        for i in 1..=2 {
            let text: Vec<String> = (0..words).map(|w| format!("pad{i}x{w}")).collect();
            let mut chunk = Chunk::with_content(["", "one", "two"][i], "other.md", "acme", text.join(" "));
            chunk.score = Some(0.5 - i as f64 / 10.0);
            chunk.set_kind(Some(ChunkKind::Body), None);
            chunks.push(chunk);
        }
        chunks
    }

    #[test]
    fn a_part_holding_the_chunks_query_terms_takes_room_from_weaker_chunks() {
        let ctx = RequestContext::local("acme");
        let format = ContextFormat::default();
        // 99 words: the fillers (45 each) leave too little room for a part of `best` (128), but
        // `best` outranks them, so its part gets the room first (at most a third of the budget)
        // and one filler still fits beside it. Knapsack and optimal, which would pack both
        // fillers and leave no room, give the part the same room: worth more than `two`, it
        // takes its place.
        for strategy in [
            SelectionStrategy::Greedy,
            SelectionStrategy::Knapsack,
            SelectionStrategy::Optimal,
        ] {
            let packed = packer_with(strategy, true)
                .pack_context_blocking(&ctx, long_best_and_fillers(45, 0.9), 99, &format)
                .unwrap();
            let cut = packed.chunks.iter().find(|c| c.id.as_str() == "best#cut");
            let cut = cut.unwrap_or_else(|| panic!("{strategy:?}, no part: {:?}", packed.dropped));
            assert!(cut.content().unwrap().contains("The refund window is thirty days"));
            assert!(cut.token_count.unwrap() <= 33, "{:?}", cut.token_count);
            assert!(packed.chunks.iter().any(|c| c.id.as_str() == "one"), "{strategy:?}");
            assert!(packed.tokens_used <= 99, "{}", packed.tokens_used);
        }

        // Ranked below both packed chunks, the same chunk only gets the room left: none here.
        let packed = packer(true)
            .pack_context_blocking(&ctx, long_best_and_fillers(45, 0.2), 99, &format)
            .unwrap();
        assert!(
            packed.chunks.iter().all(|c| !c.id.as_str().ends_with("#cut")),
            "{:?}",
            packed.chunks.iter().map(|c| c.id.as_str()).collect::<Vec<_>>()
        );
        assert_eq!(packed.chunks.len(), 2);
    }

    #[test]
    fn a_part_does_not_displace_a_chunk_the_retriever_scored_higher() {
        let ctx = RequestContext::local("acme");
        // `best` ranks first only because its heading matched (0.95 lifts it from 0.3); `one`
        // (85 words, scored 0.8) is packed, and a part of `best` in the room above it would push
        // it out of the 99 words.
        let mut chunks = long_best_and_fillers(85, 0.3);
        chunks.truncate(2);
        chunks[1].score = Some(0.8);
        let mut heading = Chunk::with_content("h", "guide.md", "acme", "# Refunds");
        heading.score = Some(0.95);
        heading.set_kind(Some(ChunkKind::Heading), Some(1));
        chunks[0].parent_id = Some(ChunkId::new("h"));
        chunks.push(heading);
        let packed = packer(true)
            .pack_context_blocking(&ctx, chunks.clone(), 99, &ContextFormat::default())
            .unwrap();
        let ids: Vec<&str> = packed.chunks.iter().map(|c| c.id.as_str()).collect();
        assert!(ids.contains(&"one"), "the higher-scored chunk stays: {ids:?}");

        // Scored above it on its own, the same chunk's part takes the room.
        chunks[0].score = Some(0.9);
        let packed = packer(true)
            .pack_context_blocking(&ctx, chunks, 99, &ContextFormat::default())
            .unwrap();
        let ids: Vec<&str> = packed.chunks.iter().map(|c| c.id.as_str()).collect();
        assert!(ids.contains(&"best#cut") && !ids.contains(&"one"), "{ids:?}");
    }

    #[test]
    fn chunks_without_heading_aware_metadata_are_never_cut() {
        let ctx = RequestContext::local("acme");
        let seed_chunks: Vec<Chunk> = chunks()
            .into_iter()
            .map(|mut c| {
                c.set_kind(None, None);
                c
            })
            .collect();
        let packed = packer(true)
            .pack_context_blocking(&ctx, seed_chunks, 50, &ContextFormat::default())
            .unwrap();
        assert!(packed.chunks.iter().all(|c| !c.id.as_str().ends_with("#cut")));
    }
}
