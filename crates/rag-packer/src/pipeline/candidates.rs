//! Stages 1 to 5 on borrowed chunks: one typed record per admitted chunk, saying what happened to
//! it before selection.
//!
//! The chunks are the admitted ones (see `admit.rs`): those the principal may see, scored by the
//! policy when the packer has the query. No stage moves a chunk: each works on records that name
//! their chunk by input position, so that no chunk (several hundred bytes each) is moved more than
//! once, at the hand-over.

use std::sync::atomic::{AtomicBool, Ordering};

use rag_core::{Chunk, PackerError};

use super::admit::Request;
use super::config::PackerConfig;
use crate::dedup::{DedupVerdict, PARALLEL_MIN_BYTES, PreparedTexts};
use crate::diversity::{MMR_WINDOW, mmr_order};
use crate::rank::rank_by;
use crate::sections::{Sections, are_sections_of_documents, has_sections, lift_to_headings};
use crate::select::{SelectionItem, document_numbers};
use crate::validate::validate_chunks;

/// What happened to a candidate, as far as the packer has got with it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Fate {
    /// Pinned: packed first, whatever its score.
    Pinned,
    /// A heading whose section's chunks are candidates (see [`crate::sections`]).
    HeadingOnly,
    /// Its score is not above the relevance floor.
    NotRelevant,
    /// Its normalised text equals that of the kept chunk at input position `of`.
    ExactDuplicate { of: usize },
    /// Its shingles are this similar to those of the kept chunk at input position `of`.
    NearDuplicate { of: usize, similarity: f64 },
    /// Still in the running when selection starts.
    Eligible,
    /// Cut to fit: its part is a candidate just below it, so it keeps its rank (the part and the
    /// chunks after it are valued as ranked below it) but is never chosen: packing both would
    /// repeat the part's text.
    CutFrom,
    /// Chosen by selection.
    Selected,
}

/// One admitted chunk as the pipeline sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Candidate {
    /// Its position in the admitted chunks.
    pub(super) position: usize,
    /// Its own tokens, as validation found them.
    pub(super) tokens: usize,
    /// What it costs selection: its tokens, plus what a rendering adds around it.
    pub(super) cost: usize,
    /// The score it ranks by: its own, or its section heading's when that is higher.
    pub(super) score: f64,
    /// Its document's number in order of first appearance among the eligible candidates, when a
    /// per-document cap applies (0 otherwise: without a cap documents matter to no strategy).
    pub(super) document: usize,
    pub(super) fate: Fate,
}

impl Candidate {
    /// The candidate as the selection strategies see it.
    pub(super) fn item(&self) -> SelectionItem {
        SelectionItem {
            // A chunk set aside for its part fits no room, so no strategy chooses it.
            tokens: if self.fate == Fate::CutFrom {
                usize::MAX
            } else {
                self.cost
            },
            score: self.score,
            document: self.document,
        }
    }
}

/// What stages 1 to 5 found: the candidates selection chooses from.
pub(super) struct Candidates {
    pub(super) budget: usize,
    /// The pinned chunks in input order, then every other chunk best first.
    pub(super) list: Vec<Candidate>,
    /// How many of `list` are pinned.
    pub(super) pinned: usize,
    pub(super) pinned_tokens: usize,
    /// The budget the pinned chunks leave, by their counts.
    pub(super) room: usize,
    /// The section structure, when the chunks carry one and the packer is section-aware.
    pub(super) sections: Option<Sections>,
    /// Whether the candidates are sections of documents and the packer is section-aware (for
    /// [`Objective::Auto`](crate::Objective::Auto)).
    pub(super) of_sections: bool,
    /// A candidate is dropped as not relevant unless its score is above this.
    pub(super) relevance_floor: Option<f64>,
    /// What validation and dedup have to tell the caller (recounted token counts, approximate
    /// near dedup).
    pub(super) notes: Vec<String>,
}

impl Candidates {
    /// The pinned candidates, in input order.
    pub(super) fn pinned(&self) -> &[Candidate] {
        &self.list[..self.pinned]
    }

    /// The input positions of the pinned candidates, in input order.
    pub(super) fn pinned_positions(&self) -> Vec<usize> {
        self.pinned().iter().map(|c| c.position).collect()
    }

    /// Every candidate that is not pinned, best first.
    pub(super) fn ranked(&self) -> &[Candidate] {
        &self.list[self.pinned..]
    }

    /// Sets the chunk at input position `position` aside because a part of it was added to the
    /// chunks (cut to fit), unless it is pinned or already out: see [`Fate::CutFrom`].
    pub(super) fn set_aside_for_its_part(&mut self, position: usize) {
        for candidate in self.list.iter_mut().filter(|c| c.position == position) {
            if candidate.fate == Fate::Eligible {
                candidate.fate = Fate::CutFrom;
            }
        }
    }

    /// Indices into `list` of the candidates in the running, best first: what selection items
    /// are built from, in this order.
    pub(super) fn contenders(&self) -> Vec<usize> {
        (self.pinned..self.list.len())
            .filter(|&k| matches!(self.list[k].fate, Fate::Eligible | Fate::Selected | Fate::CutFrom))
            .collect()
    }
}

/// Stages 1 to 5 on the admitted chunks: validate, pin, sections, rank, relevance floor, dedup.
pub(super) fn candidates(
    config: &PackerConfig,
    chunks: &[Chunk],
    request: &Request,
) -> Result<Candidates, PackerError> {
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
                let ranking = rank_candidates(config, chunks, request);
                invalid.store(ranking.is_err(), Ordering::Relaxed);
                ranking
            },
            || PreparedTexts::new_unless(&texts, near, &invalid),
        )
    } else {
        (
            rank_candidates(config, chunks, request),
            PreparedTexts::new(&texts, near),
        )
    };
    let mut candidates = ranking?;

    // Stage 5: exact, then near dedup, in priority order (pinned first) over the chunks still in
    // the running. A verdict's `of` is a place in that order; the record keeps the input position.
    let reached: Vec<usize> = (0..candidates.list.len())
        .filter(|&k| matches!(candidates.list[k].fate, Fate::Pinned | Fate::Eligible))
        .collect();
    let priority: Vec<usize> = reached.iter().map(|&k| candidates.list[k].position).collect();
    let (verdicts, near_fallback) = prepared.verdicts(&texts, &priority, candidates.pinned);
    candidates.notes.extend(near_fallback.iter().map(ToString::to_string));
    for (&k, verdict) in reached.iter().zip(&verdicts).skip(candidates.pinned) {
        match *verdict {
            DedupVerdict::Kept => {}
            DedupVerdict::ExactDuplicate { of } => {
                candidates.list[k].fate = Fate::ExactDuplicate { of: priority[of] };
            }
            DedupVerdict::NearDuplicate { of, similarity } => {
                candidates.list[k].fate = Fate::NearDuplicate {
                    of: priority[of],
                    similarity,
                };
            }
        }
    }
    if let Some(weight) = config.diversity {
        diversify(chunks, &mut candidates, weight);
    }
    if config.max_per_document.is_some() {
        number_documents(chunks, &mut candidates);
    }
    Ok(candidates)
}

/// Stage 5b (opt-in): the eligible candidates re-ranked by maximal marginal relevance over their
/// vectors ([`mmr_order`]), within the first [`MMR_WINDOW`] of them and four times the room; each
/// takes its marginal value as its score, and the eligible candidates after the window score no
/// more than the last of it, so the list stays best first.
fn diversify(chunks: &[Chunk], candidates: &mut Candidates, weight: f64) {
    let eligible: Vec<usize> = (candidates.pinned..candidates.list.len())
        .filter(|&k| candidates.list[k].fate == Fate::Eligible)
        .collect();
    let mut tokens = 0usize;
    let window: Vec<usize> = eligible
        .iter()
        .copied()
        .take_while(|&k| {
            let inside = tokens <= candidates.room.saturating_mul(4);
            tokens = tokens.saturating_add(candidates.list[k].tokens);
            inside
        })
        .take(MMR_WINDOW)
        .collect();
    let scores: Vec<f64> = window.iter().map(|&k| candidates.list[k].score).collect();
    let vectors: Vec<Option<&[f32]>> = window
        .iter()
        .map(|&k| {
            chunks[candidates.list[k].position]
                .embedding
                .as_ref()
                .map(|e| e.vector.as_slice())
        })
        .collect();
    let order = mmr_order(&scores, &vectors, weight);
    let before: Vec<Candidate> = window.iter().map(|&k| candidates.list[k]).collect();
    for (&slot, &(i, value)) in window.iter().zip(&order) {
        candidates.list[slot] = Candidate {
            score: value,
            ..before[i]
        };
    }
    if let Some(&(_, last)) = order.last() {
        for &k in &eligible[window.len()..] {
            candidates.list[k].score = candidates.list[k].score.min(last);
        }
    }
}

/// Stages 1 to 4: validation, the pinned chunks and their tokens, the section structure, the
/// ranking, and the request's relevance floor.
fn rank_candidates(config: &PackerConfig, chunks: &[Chunk], request: &Request) -> Result<Candidates, PackerError> {
    let (budget, floor) = (request.budget, request.relevance_floor);
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

    // Stage 4: one ranking for everything that follows (best first), then the relevance floor.
    let ranked = rank_by(others.len(), |k| (scores[others[k]], &chunks[others[k]].id))
        .into_iter()
        .map(|k| others[k]);
    let record = |position: usize, fate: Fate| Candidate {
        position,
        tokens: checked[position].tokens,
        cost: checked[position].tokens,
        score: scores[position],
        document: 0,
        fate,
    };
    let mut list: Vec<Candidate> = pinned.iter().map(|&i| record(i, Fate::Pinned)).collect();
    list.extend(ranked.map(|i| {
        let fate = if sections.as_ref().is_some_and(|s| s.is_carried(i)) {
            Fate::HeadingOnly
        } else if floor.is_some_and(|floor| scores[i] <= floor) {
            Fate::NotRelevant
        } else {
            Fate::Eligible
        };
        record(i, fate)
    }));
    Ok(Candidates {
        budget,
        list,
        pinned: pinned.len(),
        pinned_tokens,
        room: budget - pinned_tokens,
        sections,
        of_sections,
        relevance_floor: floor,
        notes,
    })
}

/// Numbers the documents of the eligible candidates in order of first appearance, for the
/// per-document cap.
fn number_documents(chunks: &[Chunk], candidates: &mut Candidates) {
    let contenders = candidates.contenders();
    let numbers = document_numbers(
        contenders
            .iter()
            .map(|&k| chunks[candidates.list[k].position].document_id.as_str()),
    );
    for (k, number) in contenders.into_iter().zip(numbers) {
        candidates.list[k].document = number;
    }
}
