//! Stages 6 and 7 and the accounting: the one driver that selects, orders and fits the
//! candidates, and the [`Plan`] it makes.
//!
//! What "fits" means is the [`Fit`]: by the sum of the chunks' counts (`pack`,
//! [`Counted`]), or by the exact count of the rendered text (see `context.rs`). The driver runs
//! rounds of select, arrange, measure: with counts one round settles it, since the counts add up
//! and the selection was made within the room they leave; a rendering is corrected round by round.

use rag_core::{Chunk, ChunkId, DropReason, DroppedChunk, PackOrder, PackerError, SelectionStrategy};

use super::candidates::{Candidates, Fate};
use super::config::PackerConfig;
use super::drops::drop_reasons;
use crate::order::{arrange, arrange_custom};
use crate::select::{SelectionItem, is_valued_by_rank, select, valued};

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

/// A selection arranged and measured.
pub(super) struct Fitted<T> {
    /// The selected chunks (input positions) in their final order.
    pub(super) ordered: Vec<usize>,
    /// What the pack costs with them, pinned chunks included.
    pub(super) tokens: usize,
    /// What the fit made besides (the rendered text).
    pub(super) output: T,
}

/// What a pack's budget holds for, and how a selection is measured against it.
pub(super) trait Fit {
    /// What a fitted selection carries besides its order and tokens.
    type Output;

    /// Rounds of select and measure before the driver trims the selection instead.
    const ROUNDS: usize;

    /// The room for the first round; may add what the fit costs around each chunk to the
    /// candidates' `cost`.
    fn room(&mut self, candidates: &mut Candidates) -> Result<usize, PackerError>;

    /// Checks what the fit relies on for the `chosen` contenders (indices into `contenders`,
    /// themselves indices into `candidates.list`) and corrects their costs; returns whether any
    /// cost changed, so that the round must select again.
    fn settle(
        &mut self,
        candidates: &mut Candidates,
        contenders: &[usize],
        chosen: &[usize],
    ) -> Result<bool, PackerError>;

    /// Arranges and measures the `selected` candidates (indices into `candidates.list`, best
    /// first).
    fn measure(&mut self, candidates: &Candidates, selected: &[usize]) -> Result<Fitted<Self::Output>, PackerError>;

    /// What the fit found that the caller should be told.
    fn note(&self) -> Option<String>;
}

/// The fit of `pack`: a pack costs the sum of its chunks' counts.
pub(super) struct Counted<'a> {
    pub(super) config: &'a PackerConfig,
    pub(super) chunks: &'a [Chunk],
}

impl Fit for Counted<'_> {
    type Output = ();

    // The counts add up, and the selection stays within the room they leave: the first round fits.
    const ROUNDS: usize = 1;

    fn room(&mut self, candidates: &mut Candidates) -> Result<usize, PackerError> {
        Ok(candidates.room)
    }

    fn settle(&mut self, _: &mut Candidates, _: &[usize], _: &[usize]) -> Result<bool, PackerError> {
        // Validation checked the counts already, as far as the configuration asks.
        Ok(false)
    }

    fn measure(&mut self, candidates: &Candidates, selected: &[usize]) -> Result<Fitted<()>, PackerError> {
        let in_rank_order: Vec<usize> = selected.iter().map(|&k| candidates.list[k].position).collect();
        let tokens = candidates.pinned_tokens + selected.iter().map(|&k| candidates.list[k].tokens).sum::<usize>();
        Ok(Fitted {
            ordered: order_selection(self.config, self.chunks, in_rank_order)?,
            tokens,
            output: (),
        })
    }

    fn note(&self) -> Option<String> {
        None
    }
}

/// A fitted selection and the contenders it chose.
struct Round<T> {
    chosen: Vec<usize>,
    fitted: Fitted<T>,
}

/// What the rounds found: the best selection that fits, if any did, the last one tried, and the
/// strategy that ran with what it had to say.
struct Rounds<T> {
    fitting: Option<Round<T>>,
    last: Option<Vec<usize>>,
    strategy: SelectionStrategy,
    note: Option<String>,
}

/// Stages 6 and 7 and the accounting, for any fit: the plan, and what the fit made of it.
pub(super) fn plan<F: Fit>(
    config: &PackerConfig,
    chunks: &[Chunk],
    mut candidates: Candidates,
    mut fit: F,
) -> Result<(Plan, F::Output), PackerError> {
    let room = fit.room(&mut candidates)?;
    let contenders = candidates.contenders();
    let rounds = run_rounds(config, &mut candidates, &contenders, &mut fit, room)?;
    let Round { mut chosen, fitted } = match rounds.fitting {
        Some(fitting) => fitting,
        None => trim_until_it_fits(&candidates, &contenders, &mut fit, rounds.last.unwrap_or_default())?,
    };
    chosen.sort_unstable();
    for &s in &chosen {
        candidates.list[contenders[s]].fate = Fate::Selected;
    }
    let dropped = drop_reasons(chunks, &candidates, config.max_per_document, rounds.strategy);
    let mut notes = std::mem::take(&mut candidates.notes);
    notes.extend(rounds.note);
    if let PackOrder::Custom(custom) = &config.order {
        notes.push(format!("custom order: {}", custom.name()));
    }
    notes.extend(fit.note());
    let mut scores = vec![0.0; chunks.len()];
    for candidate in &candidates.list {
        scores[candidate.position] = candidate.score;
    }
    let plan = Plan {
        packed: candidates
            .pinned_positions()
            .into_iter()
            .chain(fitted.ordered)
            .collect(),
        dropped,
        tokens_used: fitted.tokens,
        budget: candidates.budget,
        strategy: rounds.strategy,
        notes,
        scores,
    };
    Ok((plan, fitted.output))
}

/// Rounds of select, settle, measure: the room is grown by the slack of a selection that fits (so
/// that what the fit over-charged buys more context) and shrunk by any overshoot. The largest
/// fitting selection wins; the rounds stop when one fills the budget exactly or a selection
/// repeats.
fn run_rounds<F: Fit>(
    config: &PackerConfig,
    candidates: &mut Candidates,
    contenders: &[usize],
    fit: &mut F,
    mut room: usize,
) -> Result<Rounds<F::Output>, PackerError> {
    let budget = candidates.budget;
    let items = |candidates: &Candidates| -> Vec<SelectionItem> {
        let items: Vec<SelectionItem> = contenders.iter().map(|&k| candidates.list[k].item()).collect();
        valued(config.objective, candidates.of_sections, &items)
    };
    let mut values = items(candidates);
    let mut rounds = Rounds {
        fitting: None,
        last: None,
        strategy: config.strategy,
        note: None,
    };
    for _ in 0..F::ROUNDS {
        let by_rank = is_valued_by_rank(config.objective, candidates.of_sections);
        let selection = select(config.strategy, &values, room, config.max_per_document, by_rank);
        if fit.settle(candidates, contenders, &selection.chosen)? {
            values = items(candidates);
            continue;
        }
        if rounds.last.as_ref() == Some(&selection.chosen) {
            break;
        }
        (rounds.strategy, rounds.note) = (selection.strategy, selection.note);
        let selected: Vec<usize> = selection.chosen.iter().map(|&s| contenders[s]).collect();
        let fitted = fit.measure(candidates, &selected)?;
        rounds.last = Some(selection.chosen.clone());
        if fitted.tokens > budget {
            room = room.saturating_sub(fitted.tokens - budget);
            continue;
        }
        let slack = budget - fitted.tokens;
        if rounds.fitting.as_ref().is_none_or(|f| fitted.tokens >= f.fitted.tokens) {
            rounds.fitting = Some(Round {
                chosen: selection.chosen,
                fitted,
            });
        }
        if slack == 0 {
            break;
        }
        room += slack;
    }
    Ok(rounds)
}

/// Takes the lowest-ranked contenders out of `chosen` until its fit is within the budget.
fn trim_until_it_fits<F: Fit>(
    candidates: &Candidates,
    contenders: &[usize],
    fit: &mut F,
    mut chosen: Vec<usize>,
) -> Result<Round<F::Output>, PackerError> {
    chosen.sort_unstable();
    loop {
        let selected: Vec<usize> = chosen.iter().map(|&s| contenders[s]).collect();
        let fitted = fit.measure(candidates, &selected)?;
        if fitted.tokens <= candidates.budget || chosen.is_empty() {
            return Ok(Round { chosen, fitted });
        }
        // Contenders are in rank order: the highest index is the weakest chunk.
        chosen.pop();
    }
}

/// `in_rank_order` (input positions, best first) in the configured order.
fn order_selection(
    config: &PackerConfig,
    chunks: &[Chunk],
    in_rank_order: Vec<usize>,
) -> Result<Vec<usize>, PackerError> {
    match &config.order {
        PackOrder::Custom(custom) => arrange_custom(custom.as_ref(), chunks, in_rank_order),
        built_in => Ok(arrange(built_in, in_rank_order, |&i| i)),
    }
}

impl Plan {
    /// Moves the packed chunks out of `chunks`, and each dropped one's id into its drop record
    /// (moved, not cloned); the rest is freed here.
    pub(super) fn hand_over(mut self, chunks: Vec<Chunk>) -> (Vec<Chunk>, Vec<DroppedChunk>, Plan) {
        let mut place: Vec<u32> = vec![u32::MAX; chunks.len()];
        for (slot, &i) in self.packed.iter().enumerate() {
            place[i] = slot as u32;
        }
        let mut packed: Vec<Option<Chunk>> = vec![None; self.packed.len()];
        let mut dropped_ids: Vec<Option<ChunkId>> = vec![None; chunks.len()];
        for (i, chunk) in chunks.into_iter().enumerate() {
            match place[i] {
                u32::MAX => dropped_ids[i] = Some(chunk.id),
                slot => packed[slot as usize] = Some(chunk),
            }
        }
        let dropped = self.take_dropped(dropped_ids);
        (packed.into_iter().flatten().collect(), dropped, self)
    }

    /// The drop records, with the ids cloned out of `chunks`.
    pub(super) fn clone_dropped(&mut self, chunks: &[Chunk]) -> Vec<DroppedChunk> {
        // Ids are cloned in input order, where the chunks (and usually their ids) lie one after
        // the other in memory; in rank order nearly every clone was two cache misses.
        let mut wanted = vec![false; chunks.len()];
        for &(i, _) in &self.dropped {
            wanted[i] = true;
        }
        let ids: Vec<Option<ChunkId>> = chunks
            .iter()
            .zip(wanted)
            .map(|(chunk, wanted)| wanted.then(|| chunk.id.clone()))
            .collect();
        self.take_dropped(ids)
    }

    /// The drop records, each taking its id out of `ids` (by input position).
    fn take_dropped(&mut self, mut ids: Vec<Option<ChunkId>>) -> Vec<DroppedChunk> {
        std::mem::take(&mut self.dropped)
            .into_iter()
            .filter_map(|(i, reason)| {
                Some(DroppedChunk {
                    id: ids[i].take()?,
                    reason,
                })
            })
            .collect()
    }
}
