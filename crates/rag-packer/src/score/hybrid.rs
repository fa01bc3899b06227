//! Hybrid scoring: BM25 fused with the cosine of the query's vector and each chunk's, for chunks
//! that arrive without a retriever's score when the packer has an embedder. BM25 finds the
//! document's own words, the vectors find its meaning when the question words it otherwise
//! ("going away" for "deprecated"); fused, they rank better than either (`docs/quality.md`).

use rag_core::{Chunk, EmbedError, Embedder, Fusion, PackerError, ScoreParts, Scoring, check_embeddings, embed_chunks};
use rayon::prelude::*;

use super::bm25::Query;
use super::chunk_scores;
use super::policy::given_scoring;

/// Texts per call to the embedder: large enough to amortise a call (a Python object, a service),
/// small enough that the texts of one call stay a few megabytes.
pub const EMBED_BATCH: usize = 256;

/// The fusion the packer uses unless configured: 0.7 x BM25 + 0.3 x cosine, min-max normalised
/// (chosen on the eval: `docs/quality.md`).
pub const DEFAULT_FUSION: Fusion = Fusion::Convex { bm25_weight: 0.7 };

/// What [`score_missing_hybrid`] did: the rule that applied and, when it fused, the two scores of
/// each chunk, parallel to the chunks.
#[derive(Debug, Clone, PartialEq)]
pub struct HybridScoring {
    /// The rule that applied.
    pub scoring: Scoring,
    /// Each chunk's BM25 score and cosine, when the rule is [`Scoring::Hybrid`]; empty otherwise.
    pub parts: Vec<ScoreParts>,
}

/// Scores the chunks that carry no score, as [`score_missing`](crate::score_missing) does, with
/// BM25 fused with the cosine of `embedder`'s vectors of the query and of each chunk:
///
/// - chunks that carry a score keep it, as with BM25 alone ([`Scoring::Given`],
///   [`Scoring::PartlyGiven`]);
/// - when none does, every chunk needs a vector of `embedder`'s model: a chunk that carries one
///   ([`Chunk::embedding`], written at chunk time) keeps it, the others are embedded from
///   [`Chunk::embedding_text`] (in batches of [`EMBED_BATCH`] chunks, on rayon's pool) and the vector is
///   set on the chunk. A vector of another model id, or of another dimension, is an error naming
///   the chunk ([`PackerError::ForeignEmbedding`], [`PackerError::EmbeddingDimension`]);
/// - each chunk's score is then `fusion` of its BM25 score and its cosine ([`Fusion`]), and
///   [`Scoring::Hybrid`] says so. No relevance floor goes with it: a chunk without a query term
///   may still be close in meaning.
///
/// Pass only the chunks the principal may see, as for BM25. The result is deterministic: each
/// vector depends on its text alone, and the sums run in a fixed order.
///
/// ```
/// use rag_contract::embedding::TinyEmbedder;
/// use rag_core::{Chunk, Fusion, Scoring};
/// use rag_packer::score_missing_hybrid;
///
/// let mut chunks = vec![
///     Chunk::with_content("old", "d", "acme", "The option was deprecated in 2.0."),
///     Chunk::with_content("file", "d", "acme", "Read the file line by line."),
/// ];
/// let fusion = Fusion::Convex { bm25_weight: 0.7 };
/// let hybrid = score_missing_hybrid("is this option going away", &mut chunks, &TinyEmbedder, fusion)?;
/// assert!(matches!(hybrid.scoring, Scoring::Hybrid { embedded: 2, .. }));
/// assert!(chunks[0].score > chunks[1].score);
/// assert!(hybrid.parts[0].cosine > 0.5 && hybrid.parts[1].cosine < 0.2);
/// # Ok::<(), rag_core::PackerError>(())
/// ```
pub fn score_missing_hybrid(
    query: &str,
    chunks: &mut [Chunk],
    embedder: &dyn Embedder,
    fusion: Fusion,
) -> Result<HybridScoring, PackerError> {
    if let Some(scoring) = given_scoring(chunks) {
        return Ok(HybridScoring {
            scoring,
            parts: Vec::new(),
        });
    }
    let analysed = Query::new(query)?;
    check_vectors(chunks, embedder)?;
    let embedded = embed_missing(chunks, embedder)?;
    let question = embed_checked(embedder, &[query])?
        .pop()
        .ok_or_else(|| PackerError::Embedder {
            source: EmbedError::new(embedder.id(), "it returned no vector for the query"),
        })?;
    let bm25 = chunk_scores(&analysed, chunks);
    let cosines: Vec<f64> = chunks
        .iter()
        .map(|chunk| chunk.embedding.as_ref().map_or(0.0, |e| cosine(&question, &e.vector)))
        .collect();
    let fused = fuse(&bm25, &cosines, fusion);
    for (chunk, score) in chunks.iter_mut().zip(&fused) {
        chunk.score = Some(*score);
    }
    let parts = bm25
        .iter()
        .zip(&cosines)
        .map(|(&bm25, &cosine)| ScoreParts { bm25, cosine })
        .collect();
    Ok(HybridScoring {
        scoring: Scoring::Hybrid {
            chunks: chunks.len(),
            terms: analysed.terms,
            model: embedder.id().to_owned(),
            fusion,
            embedded,
        },
        parts,
    })
}

/// Refuses a vector made by another model, or of another length, than `embedder`'s.
fn check_vectors(chunks: &[Chunk], embedder: &dyn Embedder) -> Result<(), PackerError> {
    for chunk in chunks {
        let Some(embedding) = &chunk.embedding else {
            continue;
        };
        if embedding.model != embedder.id() {
            return Err(PackerError::ForeignEmbedding {
                chunk_id: chunk.id.clone(),
                model: embedding.model.clone(),
                expected: embedder.id().to_owned(),
            });
        }
        if embedding.vector.len() != embedder.dimension() {
            return Err(PackerError::EmbeddingDimension {
                chunk_id: chunk.id.clone(),
                model: embedding.model.clone(),
                dimension: embedding.vector.len(),
                expected: embedder.dimension(),
            });
        }
    }
    Ok(())
}

/// Embeds the chunks that carry no vector and sets it on them, a batch per task on rayon's pool
/// ([`embed_chunks`]); how many there were.
fn embed_missing(chunks: &mut [Chunk], embedder: &dyn Embedder) -> Result<usize, PackerError> {
    let counts: Vec<usize> = chunks
        .par_chunks_mut(EMBED_BATCH)
        .map(|batch| embed_chunks(embedder, batch))
        .collect::<Result<_, _>>()
        .map_err(|source| PackerError::Embedder { source })?;
    Ok(counts.iter().sum())
}

/// `embedder`'s vectors of `texts`, checked against its contract.
fn embed_checked(embedder: &dyn Embedder, texts: &[&str]) -> Result<Vec<Vec<f32>>, PackerError> {
    let vectors = embedder
        .embed(texts)
        .map_err(|source| PackerError::Embedder { source })?;
    check_embeddings(embedder, texts.len(), &vectors).map_err(|source| PackerError::Embedder { source })?;
    Ok(vectors)
}

/// The cosine of `a` and `b`, summed in order in `f64`; 0 when either is the zero vector.
///
/// ```
/// use rag_packer::cosine;
///
/// assert_eq!(cosine(&[1.0, 0.0], &[2.0, 0.0]), 1.0);
/// assert_eq!(cosine(&[1.0, 0.0], &[0.0, 3.0]), 0.0);
/// assert_eq!(cosine(&[0.0, 0.0], &[1.0, 1.0]), 0.0);
/// ```
pub fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let (mut dot, mut aa, mut bb) = (0.0f64, 0.0f64, 0.0f64);
    for (&x, &y) in a.iter().zip(b) {
        let (x, y) = (f64::from(x), f64::from(y));
        dot += x * y;
        aa += x * x;
        bb += y * y;
    }
    if aa == 0.0 || bb == 0.0 {
        0.0
    } else {
        (dot / (aa.sqrt() * bb.sqrt())).clamp(-1.0, 1.0)
    }
}

/// Fuses BM25 scores and cosines, parallel slices, by `fusion` (see [`Fusion`]).
///
/// ```
/// use rag_core::Fusion;
/// use rag_packer::fuse;
///
/// let (bm25, cosine) = ([1.0, 0.5, 0.0], [0.2, 0.9, 0.4]);
/// let convex = fuse(&bm25, &cosine, Fusion::Convex { bm25_weight: 0.5 });
/// assert_eq!(convex, [0.5, 0.75, 0.14285714285714288]);
/// let rrf = fuse(&bm25, &cosine, Fusion::ReciprocalRank { k: 60 });
/// assert!(rrf[1] > rrf[0] && rrf[0] > rrf[2]);
/// ```
pub fn fuse(bm25: &[f64], cosine: &[f64], fusion: Fusion) -> Vec<f64> {
    match fusion {
        Fusion::Convex { bm25_weight } => {
            let (b, c) = (min_max(bm25), min_max(cosine));
            b.iter()
                .zip(&c)
                .map(|(b, c)| bm25_weight * b + (1.0 - bm25_weight) * c)
                .collect()
        }
        Fusion::ReciprocalRank { k } => {
            let (b, c) = (ranks(bm25), ranks(cosine));
            let k = f64::from(k);
            b.iter()
                .zip(&c)
                .map(|(&rb, &rc)| 1.0 / (k + rb as f64) + 1.0 / (k + rc as f64))
                .collect()
        }
        // A fusion added to rag-core later is refused by the configuration before it gets here.
        _ => bm25.to_vec(),
    }
}

/// `scores` mapped linearly onto `0..=1` (all 0 when they are equal).
fn min_max(scores: &[f64]) -> Vec<f64> {
    let min = scores.iter().copied().fold(f64::INFINITY, f64::min);
    let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let span = max - min;
    scores
        .iter()
        .map(|s| if span > 0.0 { (s - min) / span } else { 0.0 })
        .collect()
}

/// Each score's rank from 1, equal scores sharing the best rank of their group (`1, 2, 2, 4`), so
/// the input order of ties does not matter.
fn ranks(scores: &[f64]) -> Vec<usize> {
    let mut sorted: Vec<f64> = scores.to_vec();
    sorted.sort_by(|a, b| b.total_cmp(a));
    scores
        .iter()
        .map(|s| 1 + sorted.partition_point(|x| x.total_cmp(s).is_gt()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn min_max_maps_onto_zero_to_one() {
        assert_eq!(min_max(&[2.0, 4.0, 3.0]), [0.0, 1.0, 0.5]);
        assert_eq!(min_max(&[0.3, 0.3]), [0.0, 0.0]);
        assert_eq!(min_max(&[]), Vec::<f64>::new());
    }

    #[test]
    fn ties_share_the_best_rank() {
        assert_eq!(ranks(&[0.5, 1.0, 0.5, 0.0]), [2, 1, 2, 4]);
    }

    #[test]
    fn the_weight_moves_the_fusion_between_its_parts() {
        let (bm25, cosine) = ([1.0, 0.0], [0.0, 1.0]);
        assert_eq!(fuse(&bm25, &cosine, Fusion::Convex { bm25_weight: 1.0 }), [1.0, 0.0]);
        assert_eq!(fuse(&bm25, &cosine, Fusion::Convex { bm25_weight: 0.0 }), [0.0, 1.0]);
        assert_eq!(
            fuse(&bm25, &cosine, Fusion::Convex { bm25_weight: 0.7 }),
            [0.7, 0.30000000000000004]
        );
    }
}
