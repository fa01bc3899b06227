//! Stages 6 and 7 when the packer renders the context: the budget holds for the rendered text.
//!
//! Token counts do not add up across a rendering: template text, breadcrumb lines and delimiters
//! cost tokens, merged neighbours share their overlap, and BPE may merge tokens across a join. So
//! the selection runs on an estimate of each chunk's rendered cost, the result is rendered and
//! counted exactly, and the room is corrected by what the count says: grown by the tokens the
//! estimate over-charged (so merged overlaps and shared breadcrumbs buy more context), shrunk by
//! any overshoot. The last rendering within the budget wins; if no round finds one, the
//! lowest-ranked chunks are taken out until the rendering fits. Every round is deterministic.

use std::collections::HashMap;

use rag_core::{Chunk, Excerpt, PackOrder, PackerError, RepackError, TokenCounter};

use super::PackerConfig;
use super::plan::{Candidates, Plan, finish, selection_items};
use crate::order::{arrange, arrange_custom};
use crate::render::{ContextFormat, MergedRun, merge_adjacent};
use crate::select::{Selection, SelectionItem, select, valued};

/// Rounds of select, render, count before the fallback trims the selection.
const MAX_ROUNDS: usize = 6;

/// A rendering of one selection.
struct Rendered {
    /// Indices into the selection items.
    chosen: Vec<usize>,
    /// The selected chunks (input positions) in their final order.
    ordered: Vec<usize>,
    text: String,
    excerpts: Vec<Excerpt>,
    tokens: usize,
}

/// The plan, the rendered context and its excerpts, with the context's exact token count as
/// `tokens_used`.
pub(super) fn plan_context(
    config: &PackerConfig,
    format: &ContextFormat,
    chunks: &[Chunk],
    candidates: Candidates,
) -> Result<(Plan, String, Vec<Excerpt>), PackerError> {
    let counter = config.token_counter.as_ref();
    let budget = candidates.budget;

    // The pinned chunks alone, rendered: they must fit, whatever their counts said.
    let (pinned_text, _) = format.render(chunks, &candidates.pinned, &[]).map_err(render_error)?;
    let pinned_tokens = count(counter, &pinned_text)?;
    if pinned_tokens > budget {
        return Err(PackerError::PinnedOverBudget { pinned_tokens, budget });
    }
    let delimiter_tokens = count(counter, &format.delimiter)?;
    let joined = if candidates.pinned.is_empty() {
        0
    } else {
        delimiter_tokens
    };

    let mut items = selection_items(config, chunks, &candidates);
    let overheads = rendered_overheads(config, format, chunks, &candidates, delimiter_tokens)?;
    for (item, overhead) in items.iter_mut().zip(&overheads) {
        item.tokens += overhead;
    }
    let mut values = valued(config.objective, candidates.of_sections, &items);
    let mut counts = Counts::new(items.len());

    let render = |chosen: Vec<usize>| -> Result<Rendered, PackerError> {
        let selected: Vec<usize> = chosen.iter().map(|&s| candidates.eligible[s]).collect();
        let runs = ordered_runs(config, format, chunks, &candidates, &selected)?;
        let (text, excerpts) = format.render(chunks, &candidates.pinned, &runs).map_err(render_error)?;
        let tokens = count(counter, &text)?;
        let ordered = runs.into_iter().flat_map(|run| run.members).collect();
        Ok(Rendered {
            chosen,
            ordered,
            text,
            excerpts,
            tokens,
        })
    };

    let mut room = budget.saturating_sub(pinned_tokens + joined);
    let mut fitting: Option<Rendered> = None;
    let mut last: Option<Rendered> = None;
    let mut strategy = config.strategy;
    let mut note = None;
    for _ in 0..MAX_ROUNDS {
        let selection = select(config.strategy, &values, room, config.max_per_document);
        // A cached count is only a claim: the chosen chunks are counted before they are rendered,
        // and once one claim is found wrong, none is trusted any more.
        let settle: Vec<usize> = if counts.distrusted {
            Vec::new()
        } else {
            selection.chosen.clone()
        };
        if counts.settle(counter, chunks, &candidates, &settle, &mut items)? {
            counts.settle(
                counter,
                chunks,
                &candidates,
                &(0..items.len()).collect::<Vec<_>>(),
                &mut items,
            )?;
            counts.distrusted = true;
            values = valued(config.objective, candidates.of_sections, &items);
            continue;
        }
        if last.as_ref().is_some_and(|l| l.chosen == selection.chosen) {
            break;
        }
        (strategy, note) = (selection.strategy, selection.note);
        let rendered = render(selection.chosen)?;
        if rendered.tokens <= budget {
            let slack = budget - rendered.tokens;
            let grown = room + slack;
            let better = fitting.as_ref().is_none_or(|f| rendered.tokens >= f.tokens);
            last = Some(clone_choice(&rendered));
            if better {
                fitting = Some(rendered);
            }
            if slack == 0 {
                break;
            }
            room = grown;
        } else {
            room = room.saturating_sub(rendered.tokens - budget);
            last = Some(rendered);
        }
    }
    let fitting = match fitting {
        Some(fitting) => fitting,
        None => trim_until_it_fits(last, budget, &render)?,
    };

    let Rendered {
        chosen,
        ordered,
        text,
        excerpts,
        tokens,
    } = fitting;
    let mut chosen = chosen;
    chosen.sort_unstable();
    let selection = Selection { chosen, strategy, note };
    let lies = counts.note_for(chunks);
    let mut plan = finish(config, chunks, candidates, &items, selection, ordered, tokens);
    plan.notes.extend(lies);
    Ok((plan, text, excerpts))
}

/// Which selection items' token counts have been checked against their text, and what was found.
struct Counts {
    exact: Vec<bool>,
    /// A claim was found wrong: every count has been checked since.
    distrusted: bool,
    wrong: usize,
    first_wrong: Option<(usize, usize, usize)>,
}

impl Counts {
    fn new(items: usize) -> Self {
        Self {
            exact: vec![false; items],
            distrusted: false,
            wrong: 0,
            first_wrong: None,
        }
    }

    /// Counts the text of `chosen` items not checked yet and corrects their tokens (the rendered
    /// overhead is kept); returns whether any claim was wrong.
    fn settle(
        &mut self,
        counter: &dyn TokenCounter,
        chunks: &[Chunk],
        candidates: &Candidates,
        chosen: &[usize],
        items: &mut [SelectionItem],
    ) -> Result<bool, PackerError> {
        let mut wrong = false;
        for &s in chosen {
            if std::mem::replace(&mut self.exact[s], true) {
                continue;
            }
            let i = candidates.eligible[s];
            let Some(content) = chunks[i].content() else { continue };
            let claimed = candidates.checked[i].tokens;
            let real = counter.count(content).map_err(|source| PackerError::Tokenizer {
                chunk_id: chunks[i].id.clone(),
                source,
            })?;
            if real != claimed {
                wrong = true;
                self.wrong += 1;
                self.first_wrong.get_or_insert((i, claimed, real));
                items[s].tokens = items[s].tokens - claimed + real;
            }
        }
        Ok(wrong)
    }

    /// The note that says the counts were wrong, if any was.
    fn note_for(&self, chunks: &[Chunk]) -> Option<String> {
        let (i, claimed, real) = self.first_wrong?;
        Some(format!(
            "{} token counts did not match their text (first: chunk {} claimed {claimed}, has {real}); \
             the context was fitted on the real counts",
            self.wrong, chunks[i].id
        ))
    }
}

/// Takes the lowest-ranked chunks out of `last` until its rendering fits the budget.
fn trim_until_it_fits(
    last: Option<Rendered>,
    budget: usize,
    render: &dyn Fn(Vec<usize>) -> Result<Rendered, PackerError>,
) -> Result<Rendered, PackerError> {
    let mut chosen = last.map(|l| l.chosen).unwrap_or_default();
    chosen.sort_unstable();
    loop {
        let rendered = render(chosen.clone())?;
        if rendered.tokens <= budget || chosen.is_empty() {
            return Ok(rendered);
        }
        // Items are in rank order: the highest index is the weakest chunk.
        chosen.pop();
    }
}

/// A copy of a rendering's choice alone, to compare the next round's selection with.
fn clone_choice(rendered: &Rendered) -> Rendered {
    Rendered {
        chosen: rendered.chosen.clone(),
        ordered: Vec::new(),
        text: String::new(),
        excerpts: Vec::new(),
        tokens: rendered.tokens,
    }
}

/// What the rendering adds to each eligible chunk's own tokens: what the template puts around
/// its text, a delimiter, and its breadcrumb line (as if it started a section).
fn rendered_overheads(
    config: &PackerConfig,
    format: &ContextFormat,
    chunks: &[Chunk],
    candidates: &Candidates,
    delimiter_tokens: usize,
) -> Result<Vec<usize>, PackerError> {
    let counter = config.token_counter.as_ref();
    let mut breadcrumbs: HashMap<String, usize> = HashMap::new();
    candidates
        .eligible
        .iter()
        .map(|&i| {
            let chunk = &chunks[i];
            let mut overhead = delimiter_tokens;
            if !format.template.is_content_only() {
                let mut bare = chunk.clone();
                // The chunk's own tokens are counted already; what is left is the template's.
                let _ = bare.set_body(Some(String::new()), None);
                overhead += count(counter, &format.template.render(&bare).map_err(render_error)?)?;
            }
            if let Some(line) = format.breadcrumb_line(chunk) {
                overhead += match breadcrumbs.get(&line) {
                    Some(&tokens) => tokens,
                    None => {
                        let tokens = count(counter, &line)?;
                        breadcrumbs.insert(line, tokens);
                        tokens
                    }
                };
            }
            Ok(overhead)
        })
        .collect()
}

/// The selected chunks (input positions) as runs in their final order: merged neighbours form one
/// run (members in document order), and runs are arranged by the configured order, each ranking
/// as its best member.
fn ordered_runs(
    config: &PackerConfig,
    format: &ContextFormat,
    chunks: &[Chunk],
    candidates: &Candidates,
    selected: &[usize],
) -> Result<Vec<MergedRun>, PackerError> {
    let mut rank = vec![usize::MAX; chunks.len()];
    for (r, &i) in candidates.ranked.iter().enumerate() {
        rank[i] = r;
    }
    let mut in_rank_order = selected.to_vec();
    in_rank_order.sort_unstable_by_key(|&i| rank[i]);
    let runs: Vec<MergedRun> = if format.merge_adjacent {
        let refs: Vec<&Chunk> = in_rank_order.iter().map(|&i| &chunks[i]).collect();
        merge_adjacent(&refs)
            .into_iter()
            .map(|run| MergedRun {
                members: run.members.into_iter().map(|k| in_rank_order[k]).collect(),
                ..run
            })
            .collect()
    } else {
        in_rank_order
            .iter()
            .map(|&i| MergedRun {
                members: vec![i],
                span: chunks[i].span,
                text: chunks[i].content().map(str::to_owned),
            })
            .collect()
    };
    // The runs are in rank order of their best member: `merge_adjacent` returns them by their
    // first index, and the indices were ranks.
    match (config.order, &config.custom_order) {
        (PackOrder::Custom, Some(custom)) => {
            let representatives: Vec<usize> = runs
                .iter()
                .map(|run| {
                    run.members
                        .iter()
                        .copied()
                        .min_by_key(|&m| rank[m])
                        .unwrap_or(run.members[0])
                })
                .collect();
            let order = arrange_custom(custom.as_ref(), chunks, representatives.clone())?;
            let mut by_representative: HashMap<usize, MergedRun> = representatives.into_iter().zip(runs).collect();
            Ok(order.into_iter().filter_map(|r| by_representative.remove(&r)).collect())
        }
        (order, _) => {
            let first_input = |run: &MergedRun| run.members.iter().copied().min().unwrap_or(0);
            Ok(arrange(order, runs, first_input))
        }
    }
}

/// Tokens of `text` under the packer's counter.
fn count(counter: &dyn TokenCounter, text: &str) -> Result<usize, PackerError> {
    counter
        .count(text)
        .map_err(|source| PackerError::ContextCount { source })
}

/// A rendering failure as the packer reports it.
fn render_error(err: RepackError) -> PackerError {
    match err {
        RepackError::MissingContent { chunk_id } => PackerError::MissingContent { chunk_id },
        other => PackerError::InvalidConfig {
            message: other.to_string(),
        },
    }
}
