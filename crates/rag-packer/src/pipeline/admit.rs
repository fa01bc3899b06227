//! Admission, before every other stage: the budget, the tenant check over every chunk, the access
//! check, and the scoring policy over the chunks the principal may see.
//!
//! The rule is that nothing is computed from what the principal cannot see. So the chunks it may
//! not see are not merely skipped by each stage: they are removed here, and every later stage
//! (scoring, validation, sections, ranking, dedup, selection, conflicts, notes) is handed the
//! visible chunks alone, as if the others had never been sent. Only their number survives.

use std::borrow::Cow;

use rag_core::{Chunk, PackerError, RequestContext, ScoreParts, Scoring};

use super::config::PackerConfig;
use crate::score::{given_scoring, relevance_floor, score_missing, score_missing_hybrid};
use crate::validate::{HeldLabels, check_tenant, validate_budget};

/// What the stages after admission know of the request, besides the visible chunks.
pub(super) struct Request {
    pub(super) budget: usize,
    /// How many chunks the principal may not see (left out, never named).
    pub(super) hidden: usize,
    /// Which scoring rule applied, when the packer has the query.
    pub(super) scoring: Option<Scoring>,
    /// The configured floor, else the one the scoring rule brings (0 for BM25 scores).
    pub(super) relevance_floor: Option<f64>,
    /// Each admitted chunk's BM25 score and cosine, by position, when hybrid scoring applied.
    pub(super) score_parts: Vec<ScoreParts>,
}

impl Request {
    fn new(config: &PackerConfig, budget: usize, hidden: usize, scored: Scored) -> Self {
        let (scoring, score_parts) = scored;
        let relevance_floor = config
            .relevance_floor
            .or_else(|| scoring.as_ref().and_then(relevance_floor));
        Self {
            budget,
            hidden,
            scoring,
            relevance_floor,
            score_parts,
        }
    }
}

/// The scoring rule that applied (when the packer has the query), and the parts of hybrid scores.
type Scored = (Option<Scoring>, Vec<ScoreParts>);

/// The packer's scoring policy over the visible chunks: hybrid with an embedder, BM25 without.
fn score(config: &PackerConfig, chunks: &mut [Chunk]) -> Result<Scored, PackerError> {
    let Some(query) = config.query.as_deref() else {
        return Ok((None, Vec::new()));
    };
    match &config.embedder {
        Some(embedder) => {
            let hybrid = score_missing_hybrid(query, chunks, embedder.as_ref(), config.fusion)?;
            Ok((Some(hybrid.scoring), hybrid.parts))
        }
        None => Ok((Some(score_missing(query, chunks)?), Vec::new())),
    }
}

/// The budget, the tenant check, and which chunks the principal may see.
fn check(ctx: &RequestContext, chunks: &[Chunk], budget: i64) -> Result<(usize, Vec<bool>, usize), PackerError> {
    let budget = validate_budget(budget)?;
    check_tenant(ctx, chunks)?;
    let held = HeldLabels::of(ctx);
    let visible: Vec<bool> = chunks.iter().map(|c| held.may_see(c)).collect();
    let hidden = visible.iter().filter(|&&v| !v).count();
    Ok((budget, visible, hidden))
}

/// Admits owned chunks: the hidden ones are dropped here, the visible ones scored by the policy
/// when the packer has the query.
pub(super) fn admit(
    config: &PackerConfig,
    ctx: &RequestContext,
    mut chunks: Vec<Chunk>,
    budget: i64,
) -> Result<(Vec<Chunk>, Request), PackerError> {
    let (budget, visible, hidden) = check(ctx, &chunks, budget)?;
    if hidden > 0 {
        let mut position = 0;
        chunks.retain(|_| {
            position += 1;
            visible[position - 1]
        });
    }
    let scored = score(config, &mut chunks)?;
    Ok((chunks, Request::new(config, budget, hidden, scored)))
}

/// Admits borrowed chunks: the slice itself when every chunk is visible and the policy leaves the
/// scores as they are; otherwise a copy of the visible chunks, which the policy may score.
pub(super) fn admit_borrowed<'a>(
    config: &PackerConfig,
    ctx: &RequestContext,
    chunks: &'a [Chunk],
    budget: i64,
) -> Result<(Cow<'a, [Chunk]>, Request), PackerError> {
    let (budget, visible, hidden) = check(ctx, chunks, budget)?;
    if hidden == 0 {
        let scoring = match &config.query {
            None => Some(None),
            Some(_) => given_scoring(chunks).map(Some),
        };
        if let Some(scoring) = scoring {
            return Ok((
                Cow::Borrowed(chunks),
                Request::new(config, budget, 0, (scoring, Vec::new())),
            ));
        }
    }
    let mut owned: Vec<Chunk> = chunks
        .iter()
        .zip(&visible)
        .filter(|(_, visible)| **visible)
        .map(|(chunk, _)| chunk.clone())
        .collect();
    let scored = score(config, &mut owned)?;
    Ok((Cow::Owned(owned), Request::new(config, budget, hidden, scored)))
}
