//! Stage 3: the one ranking every later stage relies on.

use std::cmp::Ordering;

use rag_core::{Chunk, ChunkId};

/// Positions of `chunks` from best to worst: score descending (a missing score is 0.0), ties by id
/// ascending. Ids are unique in a packer's input, so the ranking is a total order and does not
/// depend on the input order.
///
/// ```
/// use rag_core::Chunk;
/// use rag_packer::rank_order;
///
/// let chunk = |id: &str, score| {
///     let mut c = Chunk::with_content(id, "d", "t", "text");
///     c.score = score;
///     c
/// };
/// let chunks = [chunk("b", Some(0.5)), chunk("c", None), chunk("a", Some(0.5)), chunk("d", Some(0.9))];
/// assert_eq!(rank_order(&chunks), [3, 2, 0, 1]);
/// ```
pub fn rank_order(chunks: &[Chunk]) -> Vec<usize> {
    rank_by(chunks.len(), |i| (chunks[i].score_or_zero(), &chunks[i].id))
}

/// The ranking over any indexable input: `key(i)` gives item `i`'s score and id.
pub(crate) fn rank_by<'a>(len: usize, key: impl Fn(usize) -> (f64, &'a ChunkId)) -> Vec<usize> {
    let mut order: Vec<usize> = (0..len).collect();
    order.sort_by(|&a, &b| {
        let ((score_a, id_a), (score_b, id_b)) = (key(a), key(b));
        // Scores are finite here, so `partial_cmp` is total; unlike `total_cmp` it ties -0.0 with 0.0.
        score_b
            .partial_cmp(&score_a)
            .unwrap_or(Ordering::Equal)
            .then_with(|| id_a.cmp(id_b))
    });
    order
}
