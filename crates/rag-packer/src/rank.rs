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
///
/// The keys are read once into a compact vector and sorted there: comparing through `key` would
/// reach into the items (large structs, scattered in memory) on every comparison. The position
/// breaks the remaining ties, so the unstable sort orders exactly as a stable one would.
pub(crate) fn rank_by<'a>(len: usize, key: impl Fn(usize) -> (f64, &'a ChunkId)) -> Vec<usize> {
    let mut keyed: Vec<(f64, &'a str, usize)> = (0..len)
        .map(|i| {
            let (score, id) = key(i);
            (score, id.as_str(), i)
        })
        .collect();
    keyed.sort_unstable_by(|(score_a, id_a, a), (score_b, id_b, b)| {
        // Scores are finite here, so `partial_cmp` is total; unlike `total_cmp` it ties -0.0 with 0.0.
        score_b
            .partial_cmp(score_a)
            .unwrap_or(Ordering::Equal)
            .then_with(|| id_a.cmp(id_b))
            .then(a.cmp(b))
    });
    keyed.into_iter().map(|(_, _, i)| i).collect()
}
