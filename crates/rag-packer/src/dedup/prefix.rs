//! Prefix selection: which shingles of a set go into the index.
//!
//! Prefix filtering needs, for every set, its first few tokens in one global order: how many is
//! [`prefix_len`], the order is "rare shingles first" ([`CommonShingles`]), and
//! [`move_prefix_first`] finds them without sorting the set.

use rayon::prelude::*;

use super::blocks::{BLOCK_TEXTS, PARALLEL_MIN_BYTES};
use super::scanner::push_word_hashes;
use super::shingling::push_shingles;
use super::table::TokenSet;

/// How many leading tokens (in the global order) of a set of `len` tokens prefix filtering needs.
///
/// For Jaccard `J(x, y) >= t` the overlap is at least `ceil(t * max(|x|, |y|))`, so the first
/// `|x| - ceil(t * |x|) + 1` tokens of `x` and the corresponding prefix of `y` must share a token.
#[inline]
pub(super) fn prefix_len(threshold: f64, len: usize) -> usize {
    // The small slack makes floating-point rounding err towards a longer prefix: that costs a
    // little filtering, never a missed pair. It grows with the set, as the rounding error of
    // `threshold * len` does, so sets of millions of shingles stay safe too.
    let slack = 1e-9 * (len as f64).max(1.0);
    let min_overlap = ((threshold * len as f64) - slack).ceil().max(1.0) as usize;
    (len - min_overlap.min(len) + 1).min(len)
}

/// Shingles common enough across the texts to go last in the global order of prefix filtering;
/// the order is (common or not, then the hash).
///
/// Prefix filtering needs one global order of shingles, and common ones last keeps the indexed
/// prefixes, and so the posting lists probed, short: in plain hash order, the shingles of a
/// boilerplate sentence land in a large share of all prefixes and the index degrades towards all
/// pairs (`docs/performance.md` has the figures). *Any* order is correct as long as it is the same
/// for every text, so "common" may be an estimate: it is counted on every 16th text, in a sketch
/// (a collision only makes a shingle count as common too, which costs nothing but a little
/// filtering), and a shingle seen 4 times there (in about 64 texts in all) is common.
pub(super) struct CommonShingles {
    /// One bit per sketch bucket, set for the buckets of common shingles.
    bits: Vec<u64>,
    mask: u64,
}

impl CommonShingles {
    /// Texts are sampled one in this many, by position.
    const SAMPLE_EVERY: usize = 16;
    /// The sample count from which a shingle is common.
    const COMMON_AT: u8 = 4;

    /// Counts the shingles of every [`SAMPLE_EVERY`](Self::SAMPLE_EVERY)-th text of `texts`.
    pub(super) fn sample(texts: &[Option<&str>], shingle_size: usize) -> Self {
        let sampled: Vec<&str> = texts.iter().step_by(Self::SAMPLE_EVERY).flatten().copied().collect();
        let shingles_of = |group: &[&str]| {
            let (mut words, mut lower, mut bits, mut seen) =
                (Vec::new(), String::new(), Vec::new(), TokenSet::default());
            let mut tokens = Vec::new();
            for text in group {
                words.clear();
                push_word_hashes(text, &mut lower, &mut bits, &mut words);
                push_shingles(&words, shingle_size, &mut seen, &mut tokens);
            }
            tokens
        };
        let bytes: usize = sampled.iter().map(|t| t.len()).sum();
        let tokens: Vec<Vec<u64>> = if bytes < PARALLEL_MIN_BYTES {
            vec![shingles_of(&sampled)]
        } else {
            sampled.par_chunks(BLOCK_TEXTS).map(shingles_of).collect()
        };
        // A load of at most a quarter keeps chance collisions of four rare shingles negligible;
        // the cap (16 Mi buckets, 16 MiB of counts) is reached only past about 60,000 sampled
        // texts, where the load stays below one.
        let total: usize = tokens.iter().map(Vec::len).sum();
        let buckets = (total * 4).next_power_of_two().clamp(1 << 10, 1 << 24);
        let mask = (buckets - 1) as u64;
        let mut counts = vec![0u8; buckets];
        let mut bits = vec![0u64; buckets / 64];
        for &token in tokens.iter().flatten() {
            let bucket = (token & mask) as usize;
            counts[bucket] = counts[bucket].saturating_add(1);
            if counts[bucket] == Self::COMMON_AT {
                bits[bucket / 64] |= 1 << (bucket % 64);
            }
        }
        Self { bits, mask }
    }

    #[inline]
    pub(super) fn contains(&self, token: u64) -> bool {
        let bucket = (token & self.mask) as usize;
        self.bits[bucket / 64] >> (bucket % 64) & 1 == 1
    }
}

/// Buffers [`move_prefix_first`] reuses from set to set.
#[derive(Default)]
pub(super) struct ArrangeScratch {
    rare: Vec<u64>,
    common: Vec<u64>,
    low: Vec<u64>,
    high: Vec<u64>,
}

/// Moves the first `p` tokens of `set` (fewer than all) in the global order of [`CommonShingles`]
/// (rare before common, then by value) to its front, in no particular order.
///
/// One branch-free pass splits rare from common tokens; the `p` smallest rare ones (or all rare
/// ones and the smallest common ones) are then found by [`move_smallest_first`].
#[inline]
pub(super) fn move_prefix_first(set: &mut [u64], p: usize, common: &CommonShingles, scratch: &mut ArrangeScratch) {
    let n = set.len();
    let ArrangeScratch {
        rare,
        common: frequent,
        low,
        high,
    } = scratch;
    // Every slot is written before it is read, so the buffers only grow, never get zeroed again.
    grow_to(rare, n);
    grow_to(frequent, n);
    let (mut r, mut f) = (0, 0);
    for &token in set.iter() {
        // Written to both, kept by one: no branch on a coin flip.
        let is_common = common.contains(token);
        rare[r] = token;
        frequent[f] = token;
        r += usize::from(!is_common);
        f += usize::from(is_common);
    }
    let (rare, frequent) = (&mut rare[..r], &mut frequent[..f]);
    if r >= p {
        move_smallest_first(rare, p, low, high);
    } else {
        move_smallest_first(frequent, p - r, low, high);
    }
    set[..r].copy_from_slice(rare);
    set[r..].copy_from_slice(frequent);
}

/// Makes `buffer` at least `len` long (new slots zero, old ones as they were).
#[inline]
pub(super) fn grow_to(buffer: &mut Vec<u64>, len: usize) {
    if buffer.len() < len {
        buffer.resize(len, 0);
    }
}

/// Moves the `p` smallest of `values` to its front, in no particular order.
///
/// Shingle hashes are uniform, so the `p`-th smallest of `n` is near `p / n` of the range: one
/// branch-free pass keeps the values under a cut a little above that, and only those (about
/// `p + 3 sqrt(p)`) are selected among, instead of all `n`. If too few fall under the cut (rarely:
/// it is three standard deviations above the expected `p`-th value), all of them are.
#[inline]
fn move_smallest_first(values: &mut [u64], p: usize, low: &mut Vec<u64>, high: &mut Vec<u64>) {
    let n = values.len();
    if p >= n {
        return;
    }
    let expected = p as f64 + 3.0 * (p as f64).sqrt() + 8.0;
    if 2.0 * expected < n as f64 {
        // Under 2^63, since expected / n is under one half.
        let cut = (expected / n as f64 * 18_446_744_073_709_551_616.0) as u64;
        grow_to(low, n);
        grow_to(high, n);
        let (mut l, mut h) = (0, 0);
        for &value in values.iter() {
            let below = value < cut;
            low[l] = value;
            high[h] = value;
            l += usize::from(below);
            h += usize::from(!below);
        }
        if l >= p {
            let low = &mut low[..l];
            if p < l {
                low.select_nth_unstable(p);
            }
            values[..l].copy_from_slice(low);
            values[l..].copy_from_slice(&high[..h]);
            return;
        }
    }
    values.select_nth_unstable(p);
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::dedup::definition::normalised_words;
    use crate::dedup::hashing::{finish, hash_word};
    use crate::dedup::table::TokenSet;

    #[test]
    fn prefix_selection_equals_the_full_order() {
        // No common shingles, about half, and all of them; sets from 2 to 600 tokens, prefixes
        // from one token to all but one.
        let patterns = [0u64, 0x5555_5555_5555_5555, u64::MAX];
        let mut scratch = ArrangeScratch::default();
        let mut state = 1u64;
        for pattern in patterns {
            let common = CommonShingles {
                bits: vec![pattern; 16],
                mask: 1023,
            };
            for n in [2usize, 5, 40, 170, 600] {
                for _ in 0..10 {
                    let set: Vec<u64> = (0..n)
                        .map(|_| {
                            state = finish(state.wrapping_add(1));
                            state
                        })
                        .collect();
                    for p in [1, n / 5 + 1, n / 2, n - 1] {
                        let mut got = set.clone();
                        move_prefix_first(&mut got, p, &common, &mut scratch);
                        let mut ordered: Vec<(bool, u64)> = set.iter().map(|&t| (common.contains(t), t)).collect();
                        ordered.sort_unstable();
                        let want: BTreeSet<u64> = ordered[..p].iter().map(|&(_, t)| t).collect();
                        assert_eq!(got[..p].iter().copied().collect::<BTreeSet<u64>>(), want, "n {n} p {p}");
                        let (mut all, mut original) = (got.clone(), set.clone());
                        all.sort_unstable();
                        original.sort_unstable();
                        assert_eq!(all, original, "the set keeps every token");
                    }
                }
            }
        }
    }

    #[test]
    fn the_smallest_values_are_found_when_the_cut_is_too_low() {
        // Values crowded at the top of the range: nothing falls under the cut, so the fallback
        // selection has to find them.
        let mut values: Vec<u64> = (0..500u64).map(|i| u64::MAX - i * 7919 % 500).collect();
        let (mut low, mut high) = (Vec::new(), Vec::new());
        move_smallest_first(&mut values, 20, &mut low, &mut high);
        let mut sorted = values.clone();
        sorted.sort_unstable();
        assert_eq!(
            values[..20].iter().copied().collect::<BTreeSet<u64>>(),
            sorted[..20].iter().copied().collect::<BTreeSet<u64>>()
        );
    }

    #[test]
    fn shingles_in_many_sampled_texts_are_common() {
        let boilerplate = "see the documentation for more details";
        let texts: Vec<String> = (0..400)
            .map(|i| format!("text number {i} with words {} {} {boilerplate}", i * 7, i * 13))
            .collect();
        let refs: Vec<Option<&str>> = texts.iter().map(|t| Some(t.as_str())).collect();
        let common = CommonShingles::sample(&refs, 3);
        let shingle = |text: &str| {
            let mut tokens = Vec::new();
            let words: Vec<u64> = normalised_words(text)
                .iter()
                .map(|w| hash_word(w.as_bytes(), 0))
                .collect();
            push_shingles(&words, 3, &mut TokenSet::default(), &mut tokens);
            tokens
        };
        assert!(shingle(boilerplate).iter().all(|&t| common.contains(t)));
        let unique = shingle("text number 5 with words 35 65");
        assert!(unique.iter().filter(|&&t| common.contains(t)).count() <= 1);
    }
}
