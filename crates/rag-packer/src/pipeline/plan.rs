//! Stages 1 to 7 on borrowed chunks: where every chunk goes, by input position.
//!
//! [`plan`] is the stage list. No stage moves a chunk: each works on input positions, so that no
//! chunk (several hundred bytes each) is moved more than once, at the hand-over.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};

use rag_core::{Chunk, DropReason, PackOrder, PackerError, RequestContext, SelectionStrategy};

use super::PackerConfig;
use super::drops::{Outcome, drop_reasons};
use crate::dedup::{DedupVerdict, PARALLEL_MIN_BYTES, PreparedTexts};
use crate::order::{arrange, arrange_custom};
use crate::rank::rank_by;
use crate::select::{SelectionItem, select};
use crate::validate::{Checked, validate_budget, validate_chunks};

/// Where every chunk goes, by input position.
pub(super) struct Plan {
    /// The packed chunks, in their final order.
    pub(super) packed: Vec<usize>,
    /// The chunks not packed, in rank order, with their reasons.
    pub(super) dropped: Vec<(usize, DropReason)>,
    pub(super) tokens_used: usize,
    pub(super) budget: usize,
    /// The strategy that actually ran (`optimal` may fall back to `knapsack`).
    pub(super) strategy: SelectionStrategy,
    pub(super) notes: Vec<String>,
}

/// What stages 1 to 3 found, by input position.
struct Ranking {
    checked: Vec<Checked>,
    /// The pinned chunks, in input order.
    pinned: Vec<usize>,
    /// The other chunks, best first.
    ranked: Vec<usize>,
    pinned_tokens: usize,
    /// The budget the pinned chunks leave.
    room: usize,
}

/// Runs stages 1 to 7 and accounts for every chunk.
pub(super) fn plan(
    config: &PackerConfig,
    ctx: &RequestContext,
    chunks: &[Chunk],
    budget: i64,
) -> Result<Plan, PackerError> {
    let budget = validate_budget(budget)?;
    let texts: Vec<Option<&str>> = chunks.iter().map(Chunk::content).collect();
    let near = config
        .jaccard_threshold
        .map(|threshold| (threshold, config.shingle_size));

    // Stages 1-3: validate, pin, rank. Most of dedup's work (reading every text once) does not
    // depend on the ranking, so on large inputs it starts on the thread pool meanwhile; a
    // validation error stops it after the blocks under way.
    let bytes: usize = texts.iter().flatten().map(|t| t.len()).sum();
    let (ranking, prepared) = if bytes >= PARALLEL_MIN_BYTES {
        let invalid = AtomicBool::new(false);
        rayon::join(
            || {
                let ranking = validate_pin_and_rank(config, ctx, chunks, budget);
                invalid.store(ranking.is_err(), Ordering::Relaxed);
                ranking
            },
            || PreparedTexts::new_unless(&texts, near, &invalid),
        )
    } else {
        (
            validate_pin_and_rank(config, ctx, chunks, budget),
            PreparedTexts::new(&texts, near),
        )
    };
    let Ranking {
        checked,
        pinned,
        ranked,
        pinned_tokens,
        room,
    } = ranking?;

    // Stages 4-5: exact, then near dedup, in priority order (pinned first); a verdict's `of`
    // indexes this same order.
    let priority: Vec<usize> = pinned.iter().chain(&ranked).copied().collect();
    let verdicts = prepared.verdicts(&texts, &priority, pinned.len());
    drop((prepared, texts));
    let ranked_verdicts = &verdicts[pinned.len()..];

    // Stage 6: selection among the survivors, in rank order.
    let survivors: Vec<usize> = ranked
        .iter()
        .zip(ranked_verdicts)
        .filter(|(_, verdict)| matches!(verdict, DedupVerdict::Kept))
        .map(|(&i, _)| i)
        .collect();
    // Without a cap, documents matter to no strategy, so they are not even looked at.
    let documents = config.max_per_document.map(|_| number_documents(chunks, &survivors));
    let items: Vec<SelectionItem> = survivors
        .iter()
        .enumerate()
        .map(|(s, &i)| SelectionItem {
            tokens: checked[i].tokens,
            score: checked[i].score,
            document: documents.as_ref().map_or(0, |numbers| numbers[s]),
        })
        .collect();
    let selection = select(config.strategy, &items, room, config.max_per_document);
    let mut selected = vec![false; chunks.len()];
    for &s in &selection.chosen {
        selected[survivors[s]] = true;
    }

    // Stage 7: the order of the selection; pinned chunks stay first.
    let in_rank_order: Vec<usize> = ranked.iter().copied().filter(|&i| selected[i]).collect();
    let ordered = match (config.order, &config.custom_order) {
        (PackOrder::Custom, Some(custom)) => arrange_custom(custom.as_ref(), chunks, in_rank_order)?,
        (order, _) => arrange(order, in_rank_order, |&i| i),
    };
    let tokens_used = pinned_tokens + ordered.iter().map(|&i| checked[i].tokens).sum::<usize>();

    // Accounting: every candidate not selected, with its reason.
    let dropped = drop_reasons(&Outcome {
        chunks,
        checked: &checked,
        ranked: &ranked,
        ranked_verdicts,
        priority: &priority,
        survivors: &survivors,
        items: &items,
        selection: &selection,
        room,
        cap: config.max_per_document,
    });
    let mut notes: Vec<String> = selection.note.into_iter().collect();
    if let (PackOrder::Custom, Some(custom)) = (config.order, &config.custom_order) {
        notes.push(format!("custom order: {}", custom.name()));
    }
    Ok(Plan {
        packed: pinned.into_iter().chain(ordered).collect(),
        dropped,
        tokens_used,
        budget,
        strategy: selection.strategy,
        notes,
    })
}

/// Stages 1 to 3: validation, the pinned chunks and their tokens, and the ranking.
fn validate_pin_and_rank(
    config: &PackerConfig,
    ctx: &RequestContext,
    chunks: &[Chunk],
    budget: usize,
) -> Result<Ranking, PackerError> {
    let checked = validate_chunks(ctx, chunks, config.token_counter.as_ref())?;

    // Stage 2: pinned chunks, in input order, before anything else. Saturating: token counts come
    // from input, and a wrapped sum would let pinned chunks of absurd sizes through (a saturated
    // sum is always over the budget, which is an i64).
    let (pinned, candidates): (Vec<usize>, Vec<usize>) = (0..chunks.len()).partition(|&i| chunks[i].pinned);
    let pinned_tokens = pinned
        .iter()
        .fold(0usize, |sum, &i| sum.saturating_add(checked[i].tokens));
    if pinned_tokens > budget {
        return Err(PackerError::PinnedOverBudget { pinned_tokens, budget });
    }

    // Stage 3: one ranking for everything that follows (input positions, best first).
    let ranked: Vec<usize> = rank_by(candidates.len(), |k| {
        (checked[candidates[k]].score, &chunks[candidates[k]].id)
    })
    .into_iter()
    .map(|k| candidates[k])
    .collect();
    Ok(Ranking {
        checked,
        pinned,
        ranked,
        pinned_tokens,
        room: budget - pinned_tokens,
    })
}

/// Numbers the documents of `survivors` (input positions) in order of first appearance, for the
/// per-document cap.
fn number_documents(chunks: &[Chunk], survivors: &[usize]) -> Vec<usize> {
    let mut numbers: HashMap<&str, usize> = HashMap::new();
    survivors
        .iter()
        .map(|&i| {
            let next = numbers.len();
            *numbers.entry(chunks[i].document_id.as_str()).or_insert(next)
        })
        .collect()
}
