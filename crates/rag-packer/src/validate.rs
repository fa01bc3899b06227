//! Stage 1: refusing input the packer cannot pack safely or exactly.

use std::collections::HashSet;

use rag_core::{Chunk, ChunkId, PackerError, RequestContext, TokenCounter};

/// What validation found out about a chunk that passed it: what the later stages need.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Checked {
    pub(crate) tokens: usize,
    pub(crate) score: f64,
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
/// The packer never fetches content, so a chunk known only by its `content_ref` must carry its
/// count; a chunk of 0 tokens is refused, since it could not carry any information; and a counter
/// that fails is [`PackerError::Tokenizer`] naming the chunk.
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
/// let remote = Chunk::with_content_ref("r", "d", "t", "s3://bucket/r.txt");
/// assert!(chunk_tokens(&remote, &Words).is_err());
/// # Ok::<(), rag_core::PackerError>(())
/// ```
pub fn chunk_tokens(chunk: &Chunk, counter: &dyn TokenCounter) -> Result<usize, PackerError> {
    let tokens = match (chunk.token_count, chunk.content()) {
        (Some(cached), _) => cached,
        (None, Some(content)) => counter.count(content).map_err(|source| PackerError::Tokenizer {
            chunk_id: chunk.id.clone(),
            source,
        })?,
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

/// Checks every chunk, in input order, and reports the first problem found; on success, returns
/// each chunk's tokens and score, by input position.
///
/// Per chunk the checks run in this order: tenant, duplicate id, score, tokens. The tenant check
/// comes first because a foreign chunk must be refused whatever else is wrong with it.
pub(crate) fn validate_chunks(
    ctx: &RequestContext,
    chunks: &[Chunk],
    counter: &dyn TokenCounter,
) -> Result<Vec<Checked>, PackerError> {
    // The set holds references, not a clone of every id; only an error clones what it names.
    let mut seen: HashSet<&ChunkId> = HashSet::with_capacity(chunks.len());
    let mut checked = Vec::with_capacity(chunks.len());
    for chunk in chunks {
        if chunk.tenant_id != ctx.tenant_id {
            return Err(PackerError::ForeignTenant {
                chunk_id: chunk.id.clone(),
                chunk_tenant: chunk.tenant_id.clone(),
                expected: ctx.tenant_id.clone(),
            });
        }
        if !seen.insert(&chunk.id) {
            return Err(PackerError::DuplicateChunkId {
                chunk_id: chunk.id.clone(),
            });
        }
        let score = chunk.score_or_zero();
        if !score.is_finite() {
            return Err(PackerError::NonFiniteScore {
                chunk_id: chunk.id.clone(),
                score,
            });
        }
        checked.push(Checked {
            tokens: chunk_tokens(chunk, counter)?,
            score,
        });
    }
    Ok(checked)
}
