//! The stage list on borrowed chunks: where every chunk goes, by position.
//!
//! The chunks are the admitted ones (see `admit.rs`): those the principal may see, scored by the
//! policy when the packer has the query. [`candidates`] runs the stages up to dedup, [`plan`] the
//! selection and the order after them. No stage moves a chunk: each works on positions, so that
//! no chunk (several hundred bytes each) is moved more than once, at the hand-over.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};

use rag_core::{Chunk, DropReason, PackOrder, PackerError, SelectionStrategy};

use super::PackerConfig;
use super::admit::Request;
use super::drops::{Outcome, drop_reasons};
use crate::dedup::{DedupVerdict, PARALLEL_MIN_BYTES, PreparedTexts};
use crate::order::{arrange, arrange_custom};
use crate::rank::rank_by;
use crate::sections::{Sections, are_sections_of_documents, has_sections, lift_to_headings};
use crate::select::{Selection, SelectionItem, select, valued};
use crate::validate::{Checked, validate_chunks};

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
    /// The score each chunk ranked by (section-lifted), by input position.
    pub(super) scores: Vec<f64>,
}

/// Why a candidate left before selection.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Early {
    /// A heading whose section's chunks are candidates (see [`crate::sections`]).
    HeadingOnly,
    /// Its score is not above the relevance floor.
    NotRelevant,
    /// Dedup dropped it; `of` indexes `Candidates::priority`.
    Duplicate(DedupVerdict),
}

/// What stages 1 to 5 found, by input position: the candidates selection chooses from.
pub(super) struct Candidates {
    pub(super) budget: usize,
    pub(super) checked: Vec<Checked>,
    /// The score each chunk ranks by: its own, or its section heading's when that is higher.
    pub(super) scores: Vec<f64>,
    /// The pinned chunks, in input order.
    pub(super) pinned: Vec<usize>,
    pub(super) pinned_tokens: usize,
    /// The budget the pinned chunks leave.
    pub(super) room: usize,
    /// Every other chunk, best first.
    pub(super) ranked: Vec<usize>,
    /// Why a ranked chunk left before selection, if it did.
    pub(super) early: Vec<Option<Early>>,
    /// The ranked chunks still in the running, best first.
    pub(super) eligible: Vec<usize>,
    /// Pinned, then the ranked chunks that reached dedup: what a dedup verdict's `of` indexes.
    pub(super) priority: Vec<usize>,
    /// The section structure, when the chunks carry one and the packer is section-aware.
    pub(super) sections: Option<Sections>,
    /// Whether the candidates are sections of documents and the packer is section-aware (for
    /// [`Objective::Auto`](crate::Objective::Auto)).
    pub(super) of_sections: bool,
    /// A candidate is dropped as not relevant unless its score is above this.
    pub(super) relevance_floor: Option<f64>,
    /// What validation has to tell the caller (recounted token counts).
    pub(super) notes: Vec<String>,
}

/// Stages 1 to 5 on the admitted chunks: validate, pin, sections, rank, relevance floor, dedup.
pub(super) fn candidates(
    config: &PackerConfig,
    chunks: &[Chunk],
    request: &Request,
) -> Result<Candidates, PackerError> {
    let budget = request.budget;
    let floor = request.relevance_floor;
    let texts: Vec<Option<&str>> = chunks.iter().map(Chunk::content).collect();
    let near = config
        .jaccard_threshold
        .map(|threshold| (threshold, config.shingle_size));

    // Stages 1-4. Most of dedup's work (reading every text once) does not depend on the ranking,
    // so on large inputs it starts on the thread pool meanwhile; a validation error stops it after
    // the blocks under way.
    let bytes: usize = texts.iter().flatten().map(|t| t.len()).sum();
    let (ranking, prepared) = if bytes >= PARALLEL_MIN_BYTES {
        let invalid = AtomicBool::new(false);
        rayon::join(
            || {
                let ranking = rank_candidates(config, chunks, budget, floor);
                invalid.store(ranking.is_err(), Ordering::Relaxed);
                ranking
            },
            || PreparedTexts::new_unless(&texts, near, &invalid),
        )
    } else {
        (
            rank_candidates(config, chunks, budget, floor),
            PreparedTexts::new(&texts, near),
        )
    };
    let mut candidates = ranking?;

    // Stage 5: exact, then near dedup, in priority order (pinned first) over the chunks still in
    // the running.
    let reached_dedup: Vec<usize> = candidates
        .ranked
        .iter()
        .copied()
        .filter(|&i| candidates.early[i].is_none())
        .collect();
    let priority: Vec<usize> = candidates.pinned.iter().chain(&reached_dedup).copied().collect();
    let (verdicts, near_fallback) = prepared.verdicts(&texts, &priority, candidates.pinned.len());
    candidates.notes.extend(near_fallback.iter().map(ToString::to_string));
    for (&i, verdict) in reached_dedup.iter().zip(&verdicts[candidates.pinned.len()..]) {
        if *verdict != DedupVerdict::Kept {
            candidates.early[i] = Some(Early::Duplicate(*verdict));
        }
    }
    candidates.eligible = reached_dedup
        .into_iter()
        .filter(|&i| candidates.early[i].is_none())
        .collect();
    candidates.priority = priority;
    Ok(candidates)
}

/// Stages 1 to 4: validation, the pinned chunks and their tokens, the section structure, the
/// ranking, and the relevance floor `floor`.
fn rank_candidates(
    config: &PackerConfig,
    chunks: &[Chunk],
    budget: usize,
    floor: Option<f64>,
) -> Result<Candidates, PackerError> {
    // Stage 1: validation of the admitted chunks (the principal may see them all).
    let validated = validate_chunks(chunks, config.token_counter.as_ref(), config.verify_counts)?;
    let notes = validated.notes(config.token_counter.name());
    let checked = validated.checked;

    // Stage 2: pinned chunks, in input order, before anything else. Saturating: token counts come
    // from input, and a wrapped sum would let pinned chunks of absurd sizes through (a saturated
    // sum is always over the budget, which is an i64).
    let (pinned, others): (Vec<usize>, Vec<usize>) = (0..chunks.len()).partition(|&i| chunks[i].pinned);
    let pinned_tokens = pinned
        .iter()
        .fold(0usize, |sum, &i| sum.saturating_add(checked[i].tokens));
    if pinned_tokens > budget {
        return Err(PackerError::PinnedOverBudget { pinned_tokens, budget });
    }

    // Stage 3: sections. A heading's relevance reaches its section's chunks, and a heading whose
    // section's chunks are candidates leaves the running.
    let own_scores: Vec<f64> = checked.iter().map(|c| c.score).collect();
    let sections = (config.section_aware && has_sections(chunks, &others)).then(|| Sections::new(chunks, &others));
    let of_sections = config.section_aware && are_sections_of_documents(chunks, &others);
    let scores = match &sections {
        Some(sections) => lift_to_headings(chunks, sections, &others, &own_scores),
        None => own_scores,
    };

    // Stage 4: one ranking for everything that follows (input positions, best first), then the
    // relevance floor.
    let ranked: Vec<usize> = rank_by(others.len(), |k| (scores[others[k]], &chunks[others[k]].id))
        .into_iter()
        .map(|k| others[k])
        .collect();
    let mut early = vec![None; chunks.len()];
    for &i in &ranked {
        if sections.as_ref().is_some_and(|s| s.is_carried(i)) {
            early[i] = Some(Early::HeadingOnly);
        } else if floor.is_some_and(|floor| scores[i] <= floor) {
            early[i] = Some(Early::NotRelevant);
        }
    }
    Ok(Candidates {
        budget,
        checked,
        scores,
        pinned,
        pinned_tokens,
        room: budget - pinned_tokens,
        ranked,
        early,
        eligible: Vec::new(),
        priority: Vec::new(),
        sections,
        of_sections,
        relevance_floor: floor,
        notes,
    })
}

/// The selection items of `candidates.eligible`, in rank order.
pub(super) fn selection_items(config: &PackerConfig, chunks: &[Chunk], candidates: &Candidates) -> Vec<SelectionItem> {
    // Without a cap, documents matter to no strategy, so they are not even looked at.
    let documents = config
        .max_per_document
        .map(|_| number_documents(chunks, &candidates.eligible));
    candidates
        .eligible
        .iter()
        .enumerate()
        .map(|(s, &i)| SelectionItem {
            tokens: candidates.checked[i].tokens,
            score: candidates.scores[i],
            document: documents.as_ref().map_or(0, |numbers| numbers[s]),
        })
        .collect()
}

/// Stages 6 and 7 for a pack of chunks, and the accounting.
pub(super) fn plan(config: &PackerConfig, chunks: &[Chunk], candidates: Candidates) -> Result<Plan, PackerError> {
    // Stage 6: selection among the eligible candidates, in rank order.
    let items = selection_items(config, chunks, &candidates);
    let selection = select(
        config.strategy,
        &valued(config.objective, candidates.of_sections, &items),
        candidates.room,
        config.max_per_document,
    );
    let selected: Vec<usize> = selection.chosen.iter().map(|&s| candidates.eligible[s]).collect();

    // Stage 7: the order of the selection; pinned chunks stay first.
    let ordered = order_selection(config, chunks, &candidates, &selected)?;
    let tokens_used = candidates.pinned_tokens + ordered.iter().map(|&i| candidates.checked[i].tokens).sum::<usize>();
    Ok(finish(
        config,
        chunks,
        candidates,
        &items,
        selection,
        ordered,
        tokens_used,
    ))
}

/// `selected` (input positions) in the configured order.
pub(super) fn order_selection(
    config: &PackerConfig,
    chunks: &[Chunk],
    candidates: &Candidates,
    selected: &[usize],
) -> Result<Vec<usize>, PackerError> {
    let mut is_selected = vec![false; chunks.len()];
    for &i in selected {
        is_selected[i] = true;
    }
    let in_rank_order: Vec<usize> = candidates.ranked.iter().copied().filter(|&i| is_selected[i]).collect();
    match (config.order, &config.custom_order) {
        (PackOrder::Custom, Some(custom)) => arrange_custom(custom.as_ref(), chunks, in_rank_order),
        (order, _) => Ok(arrange(order, in_rank_order, |&i| i)),
    }
}

/// The plan of a finished selection: pinned chunks, then `ordered`; every other chunk with its
/// reason.
pub(super) fn finish(
    config: &PackerConfig,
    chunks: &[Chunk],
    candidates: Candidates,
    items: &[SelectionItem],
    selection: Selection,
    ordered: Vec<usize>,
    tokens_used: usize,
) -> Plan {
    let dropped = drop_reasons(&Outcome {
        chunks,
        candidates: &candidates,
        items,
        selection: &selection,
        cap: config.max_per_document,
        relevance_floor: candidates.relevance_floor.unwrap_or(f64::NEG_INFINITY),
    });
    let mut notes = candidates.notes;
    notes.extend(selection.note);
    if let (PackOrder::Custom, Some(custom)) = (config.order, &config.custom_order) {
        notes.push(format!("custom order: {}", custom.name()));
    }
    Plan {
        packed: candidates.pinned.into_iter().chain(ordered).collect(),
        scores: candidates.scores,
        dropped,
        tokens_used,
        budget: candidates.budget,
        strategy: selection.strategy,
        notes,
    }
}

/// Numbers the documents of `positions` in order of first appearance, for the per-document cap.
fn number_documents(chunks: &[Chunk], positions: &[usize]) -> Vec<usize> {
    let mut numbers: HashMap<&str, usize> = HashMap::new();
    positions
        .iter()
        .map(|&i| {
            let next = numbers.len();
            *numbers.entry(chunks[i].document_id.as_str()).or_insert(next)
        })
        .collect()
}
