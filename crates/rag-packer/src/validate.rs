//! Stage 1: refusing input the packer cannot pack safely or exactly. The tenant and access checks
//! run first, over every chunk ([`check_tenant`], [`HeldLabels`]); the pipeline then hands only
//! the visible chunks to [`validate_chunks`] and every later stage.

use std::collections::HashSet;

use rag_core::{Chunk, ChunkId, PackerError, RequestContext, TokenCounter};
use rayon::prelude::*;

/// What validation found out about a chunk that passed it: what the later stages need.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Checked {
    pub(crate) tokens: usize,
    pub(crate) score: f64,
}

/// What validation found, by position among the chunks it was given: each chunk's tokens and
/// score, and how the token counts were established.
pub(crate) struct Validated {
    pub(crate) checked: Vec<Checked>,
    /// Counts recomputed because the chunk's count was made with another tokenizer.
    pub(crate) recounted: usize,
    /// Counts recomputed because the packer was asked to verify every count.
    pub(crate) verified: usize,
    /// Of the recomputed counts, the claims that were wrong: the first chunk, its claim and its
    /// real count, and how many there were.
    pub(crate) wrong: Option<(ChunkId, usize, usize)>,
    pub(crate) wrong_count: usize,
}

/// The budget as a count of tokens; zero or negative is an error.
pub(crate) fn validate_budget(budget: i64) -> Result<usize, PackerError> {
    match usize::try_from(budget) {
        Ok(tokens) if tokens > 0 => Ok(tokens),
        _ => Err(PackerError::InvalidBudget { budget }),
    }
}

/// The tokens a chunk counts for: its cached `token_count`, else `counter` on its content.
///
/// A cached count is trusted (a retriever may send only a `content_ref`),
/// unless the chunk says it was made with another tokenizer (`tokenizer` differs from
/// `counter.name()`): then the content is counted again, and a chunk without content to count is
/// refused ([`PackerError::ForeignTokenCount`]). The packer never fetches content, so a chunk
/// known only by its `content_ref` must carry its count; a chunk of 0 tokens is refused, since it
/// could not carry any information; and a counter that fails is [`PackerError::Tokenizer`]
/// naming the chunk.
///
/// ```
/// use rag_core::{Chunk, TokenCounter, TokenizerError};
/// use rag_packer::chunk_tokens;
///
/// struct Words;
/// impl TokenCounter for Words {
///     fn count(&self, text: &str) -> Result<usize, TokenizerError> { Ok(text.split_whitespace().count()) }
///     fn name(&self) -> &str { "words" }
/// }
///
/// let mut chunk = Chunk::with_content("c", "d", "t", "three little words");
/// assert_eq!(chunk_tokens(&chunk, &Words)?, 3);
/// chunk.token_count = Some(5); // cached at ingest: trusted, the counter is not called
/// assert_eq!(chunk_tokens(&chunk, &Words)?, 5);
/// chunk.tokenizer = Some("tiktoken:o200k_base".into()); // counted with another tokenizer: recounted
/// assert_eq!(chunk_tokens(&chunk, &Words)?, 3);
/// let remote = Chunk::with_content_ref("r", "d", "t", "s3://bucket/r.txt");
/// assert!(chunk_tokens(&remote, &Words).is_err());
/// # Ok::<(), rag_core::PackerError>(())
/// ```
pub fn chunk_tokens(chunk: &Chunk, counter: &dyn TokenCounter) -> Result<usize, PackerError> {
    let recount = chunk
        .tokenizer
        .as_deref()
        .is_some_and(|made_with| made_with != counter.name());
    tokens_of(chunk, counter, recount)
}

/// The chunk's tokens: counted when `recount` or when it has no cached count, else the cache.
fn tokens_of(chunk: &Chunk, counter: &dyn TokenCounter, recount: bool) -> Result<usize, PackerError> {
    let tokens = match (chunk.token_count, chunk.content()) {
        (Some(cached), _) if !recount => cached,
        (_, Some(content)) => counter.count(content).map_err(|source| PackerError::Tokenizer {
            chunk_id: chunk.id.clone(),
            source,
        })?,
        (Some(_), None) => {
            return Err(PackerError::ForeignTokenCount {
                chunk_id: chunk.id.clone(),
                tokenizer: chunk.tokenizer.clone().unwrap_or_default(),
                expected: counter.name().to_owned(),
            });
        }
        (None, None) => {
            return Err(PackerError::MissingTokenCount {
                chunk_id: chunk.id.clone(),
            });
        }
    };
    if tokens == 0 {
        return Err(PackerError::ZeroTokens {
            chunk_id: chunk.id.clone(),
        });
    }
    Ok(tokens)
}

/// The labels a principal holds, as a set: the access check looks up each label of each chunk,
/// so with a list it cost the chunks' labels times the principal's (10,000 chunks of 50 labels
/// against 8,000 held labels took 14 s; as a set, one lookup per chunk label).
pub(crate) struct HeldLabels<'a> {
    labels: HashSet<&'a str>,
}

impl<'a> HeldLabels<'a> {
    pub(crate) fn of(ctx: &'a RequestContext) -> Self {
        Self {
            labels: ctx.principal.acl_labels.iter().map(String::as_str).collect(),
        }
    }

    /// Whether the principal may see `chunk`: it holds every one of the chunk's `acl_labels`.
    pub(crate) fn may_see(&self, chunk: &Chunk) -> bool {
        chunk
            .acl_labels
            .iter()
            .all(|label| self.labels.contains(label.as_str()))
    }
}

/// Refuses the input if a chunk belongs to another tenant than `ctx`'s: as defence in depth, over
/// every chunk, before anything else is looked at (the first such chunk is named).
pub(crate) fn check_tenant(ctx: &RequestContext, chunks: &[Chunk]) -> Result<(), PackerError> {
    match chunks.iter().find(|c| c.tenant_id != ctx.tenant_id) {
        Some(chunk) => Err(PackerError::ForeignTenant {
            chunk_id: chunk.id.clone(),
            chunk_tenant: chunk.tenant_id.clone(),
            expected: ctx.tenant_id.clone(),
        }),
        None => Ok(()),
    }
}

/// Below this many chunks to count, counting stays on the calling thread.
const PARALLEL_MIN_COUNTS: usize = 64;

/// Checks every chunk and reports the first problem found; on success, returns each chunk's
/// tokens and score, by position.
///
/// `chunks` are the ones the principal may see, and only those: a problem in a hidden chunk is no
/// error, and nothing about it may reach the result. They are checked in order for a repeated id
/// and a non-finite score, then their tokens are established (in parallel when many must be
/// counted); the first error in order wins.
pub(crate) fn validate_chunks(
    chunks: &[Chunk],
    counter: &dyn TokenCounter,
    verify_counts: bool,
) -> Result<Validated, PackerError> {
    // The set holds references, not a clone of every id; only an error clones what it names.
    let mut seen: HashSet<&ChunkId> = HashSet::with_capacity(chunks.len());
    let mut checked = vec![Checked::default(); chunks.len()];
    for (i, chunk) in chunks.iter().enumerate() {
        if !seen.insert(&chunk.id) {
            return Err(PackerError::DuplicateChunkId {
                chunk_id: chunk.id.clone(),
            });
        }
        checked[i].score = chunk.score_or_zero();
        if !checked[i].score.is_finite() {
            return Err(PackerError::NonFiniteScore {
                chunk_id: chunk.id.clone(),
                score: checked[i].score,
            });
        }
    }

    // Which counts are recomputed: every one that has content when verifying, else those made
    // with another tokenizer.
    let name = counter.name();
    let foreign = |c: &Chunk| c.token_count.is_some() && c.tokenizer.as_deref().is_some_and(|t| t != name);
    let recount: Vec<bool> = chunks
        .iter()
        .map(|c| c.token_count.is_some() && ((verify_counts && c.content().is_some()) || foreign(c)))
        .collect();
    let to_count = (0..chunks.len())
        .filter(|&i| recount[i] || chunks[i].token_count.is_none())
        .count();
    let tokens = |i: usize| tokens_of(&chunks[i], counter, recount[i]);
    let tokens: Vec<Result<usize, PackerError>> = if to_count >= PARALLEL_MIN_COUNTS {
        (0..chunks.len()).into_par_iter().map(tokens).collect()
    } else {
        (0..chunks.len()).map(tokens).collect()
    };

    let mut validated = Validated {
        checked,
        recounted: 0,
        verified: 0,
        wrong: None,
        wrong_count: 0,
    };
    for (i, result) in tokens.into_iter().enumerate() {
        let counted = result?;
        validated.checked[i].tokens = counted;
        if !recount[i] {
            continue;
        }
        if foreign(&chunks[i]) {
            validated.recounted += 1;
        } else {
            validated.verified += 1;
        }
        let claimed = chunks[i].token_count.unwrap_or_default();
        if claimed != counted && !foreign(&chunks[i]) {
            validated.wrong_count += 1;
            validated
                .wrong
                .get_or_insert_with(|| (chunks[i].id.clone(), claimed, counted));
        }
    }
    Ok(validated)
}

impl Validated {
    /// What the caller should be told about recomputed counts, as notes.
    pub(crate) fn notes(&self, counter: &str) -> Vec<String> {
        let mut notes = Vec::new();
        if self.recounted > 0 {
            notes.push(format!(
                "recounted {} token counts made with another tokenizer than {counter}",
                self.recounted
            ));
        }
        if self.verified > 0 {
            notes.push(match &self.wrong {
                None => format!("verified {} token counts under {counter}: all were right", self.verified),
                Some((chunk, claimed, real)) => format!(
                    "verified {} token counts under {counter}: {} were wrong (first: chunk {chunk} claimed {claimed}, has {real})",
                    self.verified, self.wrong_count
                ),
            });
        }
        notes
    }
}

#[cfg(test)]
mod tests {
    use rag_core::Principal;

    use super::*;

    #[test]
    fn a_chunk_is_visible_when_every_label_is_held() {
        let held: Vec<String> = (0..8000).map(|i| format!("label{i}")).collect();
        let ctx = RequestContext::new(
            "t",
            Principal {
                id: "p".into(),
                acl_labels: held,
            },
        );
        let held = HeldLabels::of(&ctx);
        let chunk = |labels: &[&str]| {
            let mut c = Chunk::with_content("c", "d", "t", "x");
            c.acl_labels = labels.iter().map(|l| (*l).to_owned()).collect();
            c
        };
        assert!(held.may_see(&chunk(&[])), "a chunk without labels is public");
        assert!(held.may_see(&chunk(&["label0", "label7999", "label0"])));
        assert!(
            !held.may_see(&chunk(&["label0", "label8000"])),
            "one missing label hides it"
        );
        assert!(!held.may_see(&chunk(&["Label0"])), "labels compare exactly");
        let nobody = RequestContext::local("t");
        assert!(!HeldLabels::of(&nobody).may_see(&chunk(&["label0"])));
    }
}
