//! Diversity: maximal marginal relevance (Carbonell and Goldstein, 1998) over the candidates'
//! vectors, for packs that would otherwise repeat one point. Opt-in
//! ([`PackerConfigBuilder::with_diversity`](crate::PackerConfigBuilder::with_diversity)).

use crate::score::cosine;

/// The most candidates re-ranked: the work grows with their square, and a context holds far
/// fewer chunks than this.
pub const MMR_WINDOW: usize = 512;

/// The maximal-marginal-relevance order of candidates given best first: each step picks the
/// candidate of highest `score - weight x (its greatest cosine to the candidates picked so far)`
/// (ties: the earlier one), and that value is its new score. Returns `(index, value)` pairs in
/// pick order; the values never increase. A candidate without a vector (`None`) has cosine 0 to
/// everything.
///
/// ```
/// use rag_packer::mmr_order;
///
/// let same = vec![1.0, 0.0];
/// let other = vec![0.0, 1.0];
/// let vectors = [Some(same.as_slice()), Some(same.as_slice()), Some(other.as_slice())];
/// let order = mmr_order(&[0.9, 0.8, 0.7], &vectors, 0.5);
/// assert_eq!(order.iter().map(|(i, _)| *i).collect::<Vec<_>>(), [0, 2, 1]);
/// assert_eq!(order[1].1, 0.7);
/// assert!((order[2].1 - 0.3).abs() < 1e-12, "0.8 - 0.5 x 1.0");
/// ```
pub fn mmr_order(scores: &[f64], vectors: &[Option<&[f32]>], weight: f64) -> Vec<(usize, f64)> {
    let n = scores.len().min(vectors.len());
    let mut closest = vec![f64::NEG_INFINITY; n];
    let mut picked = vec![false; n];
    let mut order = Vec::with_capacity(n);
    for _ in 0..n {
        let mut best: Option<(usize, f64)> = None;
        for i in (0..n).filter(|&i| !picked[i]) {
            let value = scores[i] - weight * closest[i].max(0.0);
            if best.is_none_or(|(_, b)| value > b) {
                best = Some((i, value));
            }
        }
        let Some((pick, value)) = best else {
            break;
        };
        picked[pick] = true;
        order.push((pick, value));
        if let Some(v) = vectors[pick] {
            for i in (0..n).filter(|&i| !picked[i]) {
                if let Some(u) = vectors[i] {
                    closest[i] = closest[i].max(cosine(u, v));
                }
            }
        }
    }
    order
}
