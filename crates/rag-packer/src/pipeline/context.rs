//! The rendered fit: the budget holds for the rendered text of the context.
//!
//! Token counts do not add up across a rendering: template text, breadcrumb lines and delimiters
//! cost tokens, merged neighbours share their overlap, and BPE may merge tokens across a join. So
//! the selection runs on an estimate of each chunk's rendered cost, the result is rendered and
//! counted exactly, and the driver (`plan.rs`) corrects the room by what the count says. A cached
//! count is only a claim: the chosen chunks are counted before they are rendered, and once one
//! claim is found wrong, none is trusted any more. Every round is deterministic.

use std::collections::HashMap;

use rag_core::{Chunk, Excerpt, PackOrder, PackerError, TokenCounter, counts_add_up_at};

use super::candidates::Candidates;
use super::config::PackerConfig;
use super::plan::{Fit, Fitted};
use crate::order::{arrange, arrange_custom};
use crate::render::{ContextFormat, MergedRun, merge_adjacent};

/// The context's text and the excerpts it shows.
pub(super) type Rendering = (String, Vec<Excerpt>);

/// The fit of a rendered context: a pack costs the exact count of its rendering.
pub(super) struct Rendered<'a> {
    config: &'a PackerConfig,
    format: &'a ContextFormat,
    chunks: &'a [Chunk],
    counts: Counts,
    pieces: &'a mut PieceCounts,
}

impl<'a> Rendered<'a> {
    /// The fit of `chunks` rendered in `format`, counting the context with `pieces` (which may
    /// hold counts from an earlier plan of the same pack).
    pub(super) fn new(
        config: &'a PackerConfig,
        format: &'a ContextFormat,
        chunks: &'a [Chunk],
        pieces: &'a mut PieceCounts,
    ) -> Self {
        Self {
            config,
            format,
            chunks,
            counts: Counts::default(),
            pieces,
        }
    }

    fn counter(&self) -> &dyn TokenCounter {
        self.config.token_counter.as_ref()
    }
}

impl Fit for Rendered<'_> {
    type Output = Rendering;

    const ROUNDS: usize = 6;

    fn room(&mut self, candidates: &mut Candidates) -> Result<usize, PackerError> {
        let budget = candidates.budget;
        // The pinned chunks alone, rendered: they must fit, whatever their counts said.
        let pinned = candidates.pinned_positions();
        let (pinned_text, _) = self.format.render(self.chunks, &pinned, &[])?;
        let pinned_tokens = count(self.counter(), &pinned_text)?;
        if pinned_tokens > budget {
            return Err(PackerError::PinnedOverBudget { pinned_tokens, budget });
        }
        let delimiter_tokens = count(self.counter(), self.format.delimiter())?;
        let joined = if pinned.is_empty() { 0 } else { delimiter_tokens };
        add_rendered_overheads(
            self.config,
            self.format,
            self.chunks,
            candidates,
            delimiter_tokens,
            self.pieces,
        )?;
        Ok(budget.saturating_sub(pinned_tokens + joined))
    }

    fn settle(
        &mut self,
        candidates: &mut Candidates,
        contenders: &[usize],
        chosen: &[usize],
    ) -> Result<bool, PackerError> {
        if self.counts.distrusted {
            return Ok(false);
        }
        let counter = self.config.token_counter.as_ref();
        if !self
            .counts
            .settle(counter, self.chunks, candidates, contenders, chosen)?
        {
            return Ok(false);
        }
        let every: Vec<usize> = (0..contenders.len()).collect();
        self.counts
            .settle(counter, self.chunks, candidates, contenders, &every)?;
        self.counts.distrusted = true;
        Ok(true)
    }

    fn measure(&mut self, candidates: &Candidates, selected: &[usize]) -> Result<Fitted<Rendering>, PackerError> {
        let selected: Vec<usize> = selected.iter().map(|&k| candidates.list[k].position).collect();
        let runs = ordered_runs(self.config, self.format, self.chunks, &selected)?;
        let pinned = candidates.pinned_positions();
        let (parts, excerpts) = self.format.render_parts(self.chunks, &pinned, &runs)?;
        let text = parts.join(self.format.delimiter());
        let starts = part_starts(&parts, self.format.delimiter());
        let tokens = self.pieces.count(self.config.token_counter.as_ref(), &text, &starts)?;
        Ok(Fitted {
            ordered: runs.into_iter().flat_map(|run| run.members).collect(),
            tokens,
            output: (text, excerpts),
        })
    }

    fn note(&self) -> Option<String> {
        self.counts.note_for(self.chunks)
    }
}

/// Which contenders' token counts have been checked against their text, and what was found.
#[derive(Default)]
struct Counts {
    /// By contender index.
    exact: Vec<bool>,
    /// A claim was found wrong: every count has been checked since.
    distrusted: bool,
    wrong: usize,
    /// The input position, claimed and real count of the first wrong claim.
    first_wrong: Option<(usize, usize, usize)>,
}

impl Counts {
    /// Counts the text of `chosen` contenders not checked yet and corrects their costs (the
    /// rendered overhead is kept); returns whether any claim was wrong.
    fn settle(
        &mut self,
        counter: &dyn TokenCounter,
        chunks: &[Chunk],
        candidates: &mut Candidates,
        contenders: &[usize],
        chosen: &[usize],
    ) -> Result<bool, PackerError> {
        self.exact.resize(contenders.len(), false);
        let mut wrong = false;
        for &s in chosen {
            if std::mem::replace(&mut self.exact[s], true) {
                continue;
            }
            let candidate = &mut candidates.list[contenders[s]];
            let i = candidate.position;
            let Some(content) = chunks[i].content() else { continue };
            let claimed = candidate.tokens;
            let real = counter.count(content).map_err(|source| PackerError::Tokenizer {
                chunk_id: chunks[i].id.clone(),
                source,
            })?;
            if real != claimed {
                wrong = true;
                self.wrong += 1;
                self.first_wrong.get_or_insert((i, claimed, real));
                candidate.cost = candidate.cost - claimed + real;
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

/// Counts of pieces of rendered contexts, kept across the rounds and plans of one pack.
///
/// Each round renders mostly the parts the round before rendered, and the plan made again with a
/// part cut to fit mostly the parts of the first; counting the whole context each time made the
/// tokenizer a large share of a 200,000-token pack. Where the
/// counter promises that counts add up at line starts (see
/// [`TokenCounter::splits_at_line_starts`]), the context is cut there into pieces (a part with the
/// delimiter after it, or several parts where a join is not such a line start), and its count is
/// the sum of theirs, each counted the first time it is seen. Otherwise the whole text is counted.
#[derive(Default)]
pub(super) struct PieceCounts {
    known: HashMap<String, usize>,
}

impl PieceCounts {
    /// The exact count of `text`, whose parts start at the byte offsets `starts` (ascending, the
    /// first 0).
    fn count(&mut self, counter: &dyn TokenCounter, text: &str, starts: &[usize]) -> Result<usize, PackerError> {
        if !counter.splits_at_line_starts() {
            return count(counter, text);
        }
        let mut total = 0;
        let mut piece_start = 0;
        for &start in starts.iter().skip(1) {
            if counts_add_up_at(text, start) {
                total += self.count_once(counter, &text[piece_start..start])?;
                piece_start = start;
            }
        }
        Ok(total + self.count_once(counter, &text[piece_start..])?)
    }

    /// The count of `text`, counted the first time this pack asks for it.
    fn count_once(&mut self, counter: &dyn TokenCounter, text: &str) -> Result<usize, PackerError> {
        if let Some(&tokens) = self.known.get(text) {
            return Ok(tokens);
        }
        let tokens = count(counter, text)?;
        self.known.insert(text.to_owned(), tokens);
        Ok(tokens)
    }
}

/// Where each of `parts` starts in `parts.join(delimiter)`.
fn part_starts(parts: &[String], delimiter: &str) -> Vec<usize> {
    let mut starts = Vec::with_capacity(parts.len());
    let mut at = 0;
    for part in parts {
        starts.push(at);
        at += part.len() + delimiter.len();
    }
    starts
}

/// Adds to each contender's cost what the rendering puts around its own tokens: what the template
/// puts around its text, a delimiter, and its breadcrumb line (as if it started a section; each
/// distinct line counted once, in `pieces`).
fn add_rendered_overheads(
    config: &PackerConfig,
    format: &ContextFormat,
    chunks: &[Chunk],
    candidates: &mut Candidates,
    delimiter_tokens: usize,
    pieces: &mut PieceCounts,
) -> Result<(), PackerError> {
    let counter = config.token_counter.as_ref();
    for k in candidates.contenders() {
        let chunk = &chunks[candidates.list[k].position];
        let mut overhead = delimiter_tokens;
        if !format.template().is_content_only() {
            // The chunk's own tokens are counted already; what is left is the template's.
            overhead += count(counter, &format.template().render_around(chunk))?;
        }
        if let Some(line) = format.breadcrumb_line(chunk) {
            overhead += pieces.count_once(counter, &line)?;
        }
        candidates.list[k].cost += overhead;
    }
    Ok(())
}

/// The selected chunks (input positions, best first) as runs in their final order: merged
/// neighbours form one run (members in document order), and runs are arranged by the configured
/// order, each ranking as its best member.
fn ordered_runs(
    config: &PackerConfig,
    format: &ContextFormat,
    chunks: &[Chunk],
    in_rank_order: &[usize],
) -> Result<Vec<MergedRun>, PackerError> {
    // Each run with its best member's input position. `merge_adjacent` returns runs by their
    // first index, and the indices are ranks: the runs are in rank order of their best member.
    let runs: Vec<(usize, MergedRun)> = if format.merge_adjacent() {
        let refs: Vec<&Chunk> = in_rank_order.iter().map(|&i| &chunks[i]).collect();
        merge_adjacent(&refs)
            .into_iter()
            .map(|run| {
                let best = run.members.iter().copied().min().map_or(0, |k| in_rank_order[k]);
                let members = run.members.into_iter().map(|k| in_rank_order[k]).collect();
                (best, MergedRun { members, ..run })
            })
            .collect()
    } else {
        in_rank_order
            .iter()
            .map(|&i| {
                let run = MergedRun {
                    members: vec![i],
                    span: chunks[i].span,
                    text: chunks[i].content().map(str::to_owned),
                };
                (i, run)
            })
            .collect()
    };
    match &config.order {
        PackOrder::Custom(custom) => {
            let representatives: Vec<usize> = runs.iter().map(|(best, _)| *best).collect();
            let order = arrange_custom(custom.as_ref(), chunks, representatives)?;
            let mut by_representative: HashMap<usize, MergedRun> = runs.into_iter().collect();
            Ok(order.into_iter().filter_map(|r| by_representative.remove(&r)).collect())
        }
        built_in => {
            let runs: Vec<MergedRun> = runs.into_iter().map(|(_, run)| run).collect();
            let first_input = |run: &MergedRun| run.members.iter().copied().min().unwrap_or(0);
            Ok(arrange(built_in, runs, first_input))
        }
    }
}

/// Tokens of `text` under the packer's counter (a context piece: its error is the context's).
pub(super) fn count(counter: &dyn TokenCounter, text: &str) -> Result<usize, PackerError> {
    counter
        .count(text)
        .map_err(|source| PackerError::ContextCount { source })
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use rag_core::TokenizerError;
    use rag_tokens::TiktokenCounter;

    use super::*;

    /// cl100k, metered: how many bytes it was asked to count; `splits` is what it promises.
    struct Metered {
        inner: TiktokenCounter,
        bytes: AtomicUsize,
        splits: bool,
    }

    impl Metered {
        fn new(splits: bool) -> Self {
            Self {
                inner: TiktokenCounter::cl100k(),
                bytes: AtomicUsize::new(0),
                splits,
            }
        }

        fn take_bytes(&self) -> usize {
            self.bytes.swap(0, Ordering::Relaxed)
        }
    }

    impl TokenCounter for Metered {
        fn count(&self, text: &str) -> Result<usize, TokenizerError> {
            self.bytes.fetch_add(text.len(), Ordering::Relaxed);
            self.inner.count(text)
        }

        fn name(&self) -> &str {
            self.inner.name()
        }

        fn splits_at_line_starts(&self) -> bool {
            self.splits
        }
    }

    fn parts(texts: &[&str]) -> Vec<String> {
        texts.iter().map(|&t| t.to_owned()).collect()
    }

    const DELIMITER: &str = "\n\n";

    fn measure(pieces: &mut PieceCounts, counter: &Metered, parts: &[String]) -> (usize, usize) {
        let text = parts.join(DELIMITER);
        let tokens = pieces.count(counter, &text, &part_starts(parts, DELIMITER)).unwrap();
        assert_eq!(
            tokens,
            counter.inner.count(&text).unwrap(),
            "the sum is the count of {text:?}"
        );
        (tokens, counter.take_bytes())
    }

    #[test]
    fn a_later_round_counts_only_the_pieces_it_has_not_seen_and_the_sum_stays_exact() {
        let first = parts(&[
            "Guide > Setup\nInstall it with pip.",
            "```sh\npip install ragctl\n```",
            "  an indented start joins the piece before",
            "/a slash too",
            "Last part.",
        ]);
        let counter = Metered::new(true);
        let mut pieces = PieceCounts::default();
        let whole = first.join(DELIMITER).len();
        assert_eq!(
            measure(&mut pieces, &counter, &first).1,
            whole,
            "the first round counts it all"
        );

        let mut second = first.clone();
        second.insert(0, "A new best part.".to_owned());
        assert_eq!(
            measure(&mut pieces, &counter, &second).1,
            "A new best part.\n\n".len(),
            "only the new part and its delimiter are counted"
        );
        assert_eq!(
            measure(&mut pieces, &counter, &second).1,
            0,
            "a repeated round counts nothing"
        );
    }

    #[test]
    fn a_counter_without_the_promise_counts_the_whole_context_each_round() {
        let texts = parts(&["First part.", "Second part."]);
        let counter = Metered::new(false);
        let mut pieces = PieceCounts::default();
        let whole = texts.join(DELIMITER).len();
        assert_eq!(measure(&mut pieces, &counter, &texts).1, whole);
        assert_eq!(measure(&mut pieces, &counter, &texts).1, whole);
    }
}
