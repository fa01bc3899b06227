//! The scoring policy: what the packer does with chunks that arrive without a score, given the
//! query they were retrieved for. One rule for the CLI, the library and Python.

use rag_core::{Chunk, PackerError, Scoring};

use super::bm25::Query;
use super::chunk_scores;

/// The relevance floor that goes with BM25 scores: a chunk that holds no query term scores exactly
/// 0.0 and is not packed as filler.
const BM25_FLOOR: f64 = 0.0;

/// Scores the chunks that carry no score, by the packer's policy, and says which rule applied:
///
/// - every chunk carries a score (or there is none): the scores stand ([`Scoring::Given`]);
/// - some do and some do not: the given scores stand and a missing one counts as 0.0, as
///   without a query ([`Scoring::PartlyGiven`]). BM25 scores are never mixed with given ones, whose scale is
///   unknown;
/// - none does: each chunk is scored with BM25 against `query` over its heading path and text
///   ([`bm25_chunk_scores`](crate::bm25_chunk_scores)), its `score` is set, and the relevance floor
///   of 0 keeps out every chunk that holds no query term ([`Scoring::Bm25`]). A query of more than
///   [`MAX_QUERY_TERMS`](crate::MAX_QUERY_TERMS) distinct terms is then refused.
///
/// `chunks` must be the chunks the principal may see, and only those: BM25's statistics (how many
/// chunks hold a term, their average length) and the rule itself are computed from every chunk
/// given, so a hidden chunk would change the scores of the visible ones and let a principal probe
/// its words. [`ContextPacker`](crate::ContextPacker) applies this policy itself, after its tenant
/// and access checks, when its configuration carries the query
/// ([`PackerConfigBuilder::with_query`](crate::PackerConfigBuilder::with_query)).
///
/// ```
/// use rag_core::{Chunk, Scoring};
/// use rag_packer::score_missing;
///
/// let mut chunks = vec![
///     Chunk::with_content("a", "d", "acme", "Duplicates are dropped before selection."),
///     Chunk::with_content("b", "d", "acme", "The budget counts rendered tokens."),
/// ];
/// let scoring = score_missing("how are duplicates dropped", &mut chunks)?;
/// assert_eq!(scoring, Scoring::Bm25 { chunks: 2, terms: vec!["drop".into(), "duplic".into()] });
/// assert_eq!((chunks[0].score, chunks[1].score), (Some(1.0), Some(0.0)));
///
/// chunks[1].score = None;
/// assert_eq!(score_missing("anything", &mut chunks)?, Scoring::PartlyGiven { unscored: 1, chunks: 2 });
/// # Ok::<(), rag_core::PackerError>(())
/// ```
pub fn score_missing(query: &str, chunks: &mut [Chunk]) -> Result<Scoring, PackerError> {
    if let Some(given) = given_scoring(chunks) {
        return Ok(given);
    }
    let query = Query::new(query)?;
    let scores = chunk_scores(&query, chunks);
    for (chunk, score) in chunks.iter_mut().zip(scores) {
        chunk.score = Some(score);
    }
    Ok(Scoring::Bm25 {
        chunks: chunks.len(),
        terms: query.terms,
    })
}

/// The rule of [`score_missing`] when it leaves the scores as they are ([`Scoring::Given`] or
/// [`Scoring::PartlyGiven`]); `None` when it would score `chunks` with BM25 (there is one, and
/// none carries a score).
pub(crate) fn given_scoring(chunks: &[Chunk]) -> Option<Scoring> {
    let unscored = chunks.iter().filter(|c| c.score.is_none()).count();
    if unscored == 0 {
        Some(Scoring::Given)
    } else if unscored < chunks.len() {
        Some(Scoring::PartlyGiven {
            unscored,
            chunks: chunks.len(),
        })
    } else {
        None
    }
}

/// The relevance floor the rule that applied brings with it: 0 for BM25 scores, none otherwise.
pub(crate) fn relevance_floor(scoring: &Scoring) -> Option<f64> {
    matches!(scoring, Scoring::Bm25 { .. }).then_some(BM25_FLOOR)
}
