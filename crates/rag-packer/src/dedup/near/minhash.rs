//! The approximate fallback of the near search: MinHash signatures banded into an LSH index.
//!
//! The exact search is bounded (see `near/mod.rs`); past its bound, candidates come from
//! locality-sensitive hashing instead of prefix filtering. Each set gets a signature of
//! [`HASHES`] minima on which two sets agree, position by position, with probability equal to
//! their Jaccard similarity `J`. The signature is cut into `bands` bands of `rows` minima, and
//! two sets become candidates when they agree on a whole band, which happens with probability
//! about `1 - (1 - J^rows)^bands`: an S-curve that [`Bands::for_threshold`] places below the
//! threshold.
//!
//! The signature is a one-permutation MinHash: shingle hashes are uniform, so their top bits
//! split them into [`HASHES`] bins and a bin's minimum is one MinHash; a bin a set leaves empty
//! takes the minimum of the next non-empty bin, mixed with the distance (densification by
//! rotation, which keeps the agreement probability at `J`). That costs one operation per shingle
//! instead of one per shingle and hash. A band is a run of consecutive bins: in a small set most
//! bins are filled from a few neighbours, and two similar small sets differ in a few runs of bins,
//! which a band of consecutive bins mostly avoids, while a band of bins spread around the
//! signature meets them in every band.
//!
//! A candidate is only a proposal: it is verified on the full shingle sets like an exact
//! proposal, so the fallback never drops a chunk below the threshold. What it can do is miss a
//! pair (a false negative): when the pair agrees on no band, or when its buckets or candidate list
//! are crowded past the caps that keep the work per text bounded ([`BUCKET_WALK`],
//! [`MOST_VERIFIED`]).

use std::hash::Hasher;

use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHasher};

use super::verify::{load, verify};
use crate::dedup::hashing::finish;
use crate::dedup::table::TokenSet;

/// Hash functions per signature.
pub(super) const HASHES: usize = 128;

/// The kept texts read per bucket a text falls in, best-ranked first: a bucket that holds more
/// stops proposing its later members through that band.
pub(super) const BUCKET_WALK: usize = 64;

/// The candidates verified per text: those that agree with it on the most bands (then the
/// best-ranked), in rank order.
pub(super) const MOST_VERIFIED: usize = 16;

/// The bits of a shingle hash above this many pick its bin.
const BIN_SHIFT: u32 = 64 - HASHES.trailing_zeros();

/// How the [`HASHES`] minima are cut into bands for a threshold.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Bands {
    /// Minima per band.
    pub(super) rows: usize,
    /// Bands (`HASHES / rows`; minima left over are not used).
    pub(super) bands: usize,
}

impl Bands {
    /// The most rows per band (the fewest false candidates) that still propose a pair at exactly
    /// the threshold with probability at least 99%; a pair above it is proposed more surely.
    pub(super) fn for_threshold(threshold: f64) -> Self {
        let with_rows = |rows: usize| Self {
            rows,
            bands: HASHES / rows,
        };
        (1..=HASHES)
            .rev()
            .map(with_rows)
            .find(|bands| bands.proposal_probability(threshold) >= 0.99)
            .unwrap_or(with_rows(1))
    }

    /// The probability that a pair at similarity `similarity` agrees on at least one band, when
    /// the minima are independent (sets that fill most bins; densified bins of smaller sets agree
    /// together, which proposes similar small sets more surely).
    pub(super) fn proposal_probability(self, similarity: f64) -> f64 {
        1.0 - (1.0 - similarity.powi(self.rows as i32)).powi(self.bands as i32)
    }
}

/// Appends the band keys of `set` to `keys`: per band, a hash of the band's number and its
/// minima. An empty set has no keys (it is never a near duplicate). `minima` is scratch space.
pub(super) fn push_band_keys(set: &[u64], bands: Bands, minima: &mut [u64; HASHES], keys: &mut Vec<u64>) {
    if set.is_empty() {
        return;
    }
    minima.fill(u64::MAX);
    for &token in set {
        let bin = (token >> BIN_SHIFT) as usize;
        minima[bin] = minima[bin].min(token);
    }
    densify(minima);
    for (band, rows) in minima.chunks_exact(bands.rows).take(bands.bands).enumerate() {
        let mut key = FxHasher::default();
        key.write_usize(band);
        for &minimum in rows {
            key.write_u64(minimum);
        }
        keys.push(key.finish());
    }
}

/// Fills each empty bin (`u64::MAX`; at least one bin is not) from the nearest non-empty bin after
/// it, circularly, mixed with the distance: two sets then agree on a bin with the probability
/// they agree on a filled one, and a filled value never equals a value of its own.
fn densify(minima: &mut [u64; HASHES]) {
    let filled = *minima;
    // One pass backwards over two turns of the circle finds, for every bin of the first turn, the
    // nearest non-empty bin after it.
    let mut nearest = None;
    for at in (0..2 * HASHES).rev() {
        if filled[at % HASHES] != u64::MAX {
            nearest = Some(at);
        } else if let (true, Some(source)) = (at < HASHES, nearest) {
            // A bin's own values have its number in the top bits; a mixed value almost surely
            // does not, and the mix is a bijection for each distance.
            let distance = (source - at) as u64;
            minima[at] = finish(filled[source % HASHES] ^ distance.rotate_right(BIN_SHIFT));
        }
    }
}

/// The LSH index of the kept texts, and the scratch space of its queries.
pub(super) struct LshIndex {
    threshold: f64,
    buckets: Buckets,
    /// Per text, the last query that met it, and in how many bands.
    met_by: Vec<(u32, u32)>,
    query: u32,
    candidates: Vec<u32>,
    query_set: TokenSet,
}

/// Per band key, the first [`BUCKET_WALK`] kept texts with that key, in rank order (later ones are
/// never read, so they are not stored).
#[derive(Default)]
struct Buckets {
    /// Band key -> the one kept text with that key, or ([`CROWD`] set) the index of its crowd:
    /// most keys belong to one text, and a plain number keeps their entries small.
    keys: FxHashMap<u64, u32>,
    crowds: Vec<Crowd>,
}

/// In [`Buckets::keys`], the bit that marks a crowd (texts are numbered below it).
const CROWD: u32 = 1 << 31;

/// The first kept texts of a band key that has two or more.
#[derive(Clone, Copy)]
struct Crowd {
    len: u32,
    texts: [u32; BUCKET_WALK],
}

impl Buckets {
    /// Files `text` under `key`, after the texts filed before it.
    fn file(&mut self, key: u64, text: u32) {
        let Some(entry) = self.keys.get_mut(&key) else {
            self.keys.insert(key, text);
            return;
        };
        if *entry & CROWD == 0 {
            let mut texts = [0; BUCKET_WALK];
            texts[..2].copy_from_slice(&[*entry, text]);
            *entry = CROWD | self.crowds.len() as u32;
            self.crowds.push(Crowd { len: 2, texts });
        } else {
            let crowd = &mut self.crowds[(*entry & !CROWD) as usize];
            if let Some(free) = crowd.texts.get_mut(crowd.len as usize) {
                *free = text;
                crowd.len += 1;
            }
        }
    }

    /// The texts filed under `key` that a query reads, best-ranked first.
    fn get(&self, key: u64) -> &[u32] {
        match self.keys.get(&key) {
            None => &[],
            Some(entry) if entry & CROWD == 0 => std::slice::from_ref(entry),
            Some(entry) => {
                let crowd = &self.crowds[(entry & !CROWD) as usize];
                &crowd.texts[..crowd.len as usize]
            }
        }
    }
}

impl LshIndex {
    pub(super) fn new(threshold: f64, texts: usize) -> Self {
        Self {
            threshold,
            buckets: Buckets::default(),
            met_by: vec![(u32::MAX, 0); texts],
            query: 0,
            candidates: Vec::new(),
            query_set: TokenSet::default(),
        }
    }

    /// Files the kept `text` under each of its band `keys`.
    pub(super) fn insert(&mut self, text: usize, keys: &[u64]) {
        for &key in keys {
            self.buckets.file(key, text as u32);
        }
    }

    /// The first candidate (smallest index) of the text with band `keys` and shingle `set` whose
    /// similarity reaches the threshold, among the [`MOST_VERIFIED`] candidates that agree with it
    /// on the most bands. `set_of` gives the shingle set of an earlier text.
    pub(super) fn first_match<'s>(
        &mut self,
        keys: &[u64],
        set: &[u64],
        set_of: impl Fn(usize) -> &'s [u64],
    ) -> Option<(usize, f64)> {
        self.query = self.query.wrapping_add(1);
        self.candidates.clear();
        for &key in keys {
            for &text in self.buckets.get(key) {
                let met = &mut self.met_by[text as usize];
                if met.0 == self.query {
                    met.1 += 1;
                } else {
                    *met = (self.query, 1);
                    self.candidates.push(text);
                }
            }
        }
        if self.candidates.is_empty() {
            return None;
        }
        let met_by = &self.met_by;
        let most_bands_first = |&text: &u32| (std::cmp::Reverse(met_by[text as usize].1), text);
        if self.candidates.len() > MOST_VERIFIED {
            self.candidates
                .select_nth_unstable_by_key(MOST_VERIFIED, most_bands_first);
            self.candidates.truncate(MOST_VERIFIED);
        }
        self.candidates.sort_unstable();
        load(&mut self.query_set, set);
        self.candidates.iter().find_map(|&other| {
            verify(self.threshold, &self.query_set, set.len(), set_of(other as usize))
                .map(|similarity| (other as usize, similarity))
        })
    }
}

/// Texts whose band keys are computed together, on the pool, ahead of the sequential pass (each
/// text's keys depend on its set alone); a window at a time keeps their memory bounded.
const WINDOW: usize = 4096;

/// The fallback's part of the sequential pass: the LSH index of the kept texts, and the band keys
/// of the texts ahead.
pub(super) struct Approximate {
    bands: Bands,
    index: LshIndex,
    /// The position of `keys[0]`.
    window_start: usize,
    /// Band keys of the positions from `window_start` (none for a text that is not looked up).
    keys: Vec<Vec<u64>>,
}

impl Approximate {
    /// Starts the fallback among `texts` texts, filing the `kept` texts (positions, in order)
    /// decided before it; `set_at` gives the shingle set at a position.
    pub(super) fn start<'s>(
        threshold: f64,
        texts: usize,
        kept: &[usize],
        set_at: &(impl Fn(usize) -> &'s [u64] + Sync),
    ) -> Self {
        let bands = Bands::for_threshold(threshold);
        let mut index = LshIndex::new(threshold, texts);
        for window in kept.chunks(WINDOW) {
            for (&text, keys) in window.iter().zip(band_keys(window, bands, set_at)) {
                index.insert(text, &keys);
            }
        }
        Self {
            bands,
            index,
            window_start: 0,
            keys: Vec::new(),
        }
    }

    /// How the signatures are banded.
    pub(super) fn bands(&self) -> Bands {
        self.bands
    }

    /// Decides the text at position `p` (positions come in increasing order, each a group's
    /// first text): the first kept text it is a near duplicate of, if `look_up` (false for an
    /// anchor) and one is found; a text that is kept is filed. `is_representative` says which
    /// positions ahead will come here, so that only their keys are computed.
    pub(super) fn decide<'s>(
        &mut self,
        p: usize,
        look_up: bool,
        set_at: &(impl Fn(usize) -> &'s [u64] + Sync),
        is_representative: impl Fn(usize) -> bool,
        texts: usize,
    ) -> Option<(usize, f64)> {
        if p < self.window_start || p >= self.window_start + self.keys.len() {
            let window: Vec<usize> = (p..texts.min(p + WINDOW)).collect();
            let wanted: Vec<usize> = window.iter().copied().filter(|&q| is_representative(q)).collect();
            let mut computed = band_keys(&wanted, self.bands, set_at).into_iter();
            self.keys = window
                .iter()
                .map(|&q| {
                    if is_representative(q) {
                        computed.next().unwrap_or_default()
                    } else {
                        Vec::new()
                    }
                })
                .collect();
            self.window_start = p;
        }
        let keys = std::mem::take(&mut self.keys[p - self.window_start]);
        let found = if look_up {
            self.index.first_match(&keys, set_at(p), set_at)
        } else {
            None
        };
        if found.is_none() {
            self.index.insert(p, &keys);
        }
        found
    }
}

/// The band keys of the sets at `positions`, computed on the pool (the same result on any number
/// of threads: each text's keys depend on its set alone).
fn band_keys<'s>(positions: &[usize], bands: Bands, set_at: &(impl Fn(usize) -> &'s [u64] + Sync)) -> Vec<Vec<u64>> {
    positions
        .par_iter()
        .map_init(
            || [0u64; HASHES],
            |minima, &p| {
                let mut keys = Vec::with_capacity(bands.bands);
                push_band_keys(set_at(p), bands, minima, &mut keys);
                keys
            },
        )
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bands_propose_a_pair_at_the_threshold_almost_surely() {
        for (threshold, rows) in [(0.1, 1), (0.3, 2), (0.5, 3), (0.8, 6), (0.9, 10), (1.0, 128)] {
            let bands = Bands::for_threshold(threshold);
            assert_eq!(bands.rows, rows, "{threshold}");
            assert!(bands.proposal_probability(threshold) >= 0.99, "{threshold}");
            // One more row per band would miss more than 1% of the pairs at the threshold.
            if rows < HASHES {
                let more = Bands {
                    rows: rows + 1,
                    bands: HASHES / (rows + 1),
                };
                assert!(more.proposal_probability(threshold) < 0.99, "{threshold}");
            }
        }
    }

    #[test]
    fn equal_sets_share_every_band_and_disjoint_ones_none() {
        let bands = Bands::for_threshold(0.5);
        let (mut minima, mut a, mut b, mut c) = ([0; HASHES], Vec::new(), Vec::new(), Vec::new());
        let set: Vec<u64> = (1..=50u64).map(finish).collect();
        let mut reordered = set.clone();
        reordered.reverse();
        let other: Vec<u64> = (51..=100u64).map(finish).collect();
        push_band_keys(&set, bands, &mut minima, &mut a);
        push_band_keys(&reordered, bands, &mut minima, &mut b);
        push_band_keys(&other, bands, &mut minima, &mut c);
        assert_eq!(a.len(), bands.bands);
        assert_eq!(a, b);
        assert!(a.iter().all(|key| !c.contains(key)));
        let mut none = Vec::new();
        push_band_keys(&[], bands, &mut minima, &mut none);
        assert!(none.is_empty());
    }

    #[test]
    fn densifying_fills_each_empty_bin_from_the_nearest_filled_one_after_it() {
        for size in [1u64, 2, 5, 50, 300] {
            let mut minima = [u64::MAX; HASHES];
            for t in (0..size).map(|i| finish(i + 1000 * size)) {
                let bin = (t >> BIN_SHIFT) as usize;
                minima[bin] = minima[bin].min(t);
            }
            let filled = minima;
            densify(&mut minima);
            for bin in 0..HASHES {
                let want = (0..HASHES)
                    .map(|distance| (distance, filled[(bin + distance) % HASHES]))
                    .find(|&(_, value)| value != u64::MAX)
                    .map(|(distance, value)| match distance {
                        0 => value,
                        _ => finish(value ^ (distance as u64).rotate_right(BIN_SHIFT)),
                    });
                assert_eq!(Some(minima[bin]), want, "size {size}, bin {bin}");
            }
        }
    }

    #[test]
    fn the_agreement_of_minima_estimates_the_similarity() {
        // Sets sharing 3/7 of their union (J = 0.43): over many pairs the share of equal minima
        // is J within a standard error or two, for sets that fill every bin and for sets so small
        // that most bins are densified.
        for (size, shared) in [(700u64, 420u64), (35, 21)] {
            let (mut a, mut b) = ([0; HASHES], [0; HASHES]);
            let (mut agree, mut total) = (0usize, 0usize);
            for pair in 0..40u64 {
                let token = |i: u64| finish(i ^ (pair << 40));
                let first: Vec<u64> = (0..size).map(token).collect();
                let second: Vec<u64> = (size - shared..2 * size - shared).map(token).collect();
                for (set, minima) in [(&first, &mut a), (&second, &mut b)] {
                    minima.fill(u64::MAX);
                    for &t in set.iter() {
                        let bin = (t >> BIN_SHIFT) as usize;
                        minima[bin] = minima[bin].min(t);
                    }
                    densify(minima);
                }
                agree += a.iter().zip(&b).filter(|(x, y)| x == y).count();
                total += HASHES;
            }
            let j = shared as f64 / (2 * size - shared) as f64;
            let share = agree as f64 / total as f64;
            assert!((share - j).abs() < 0.04, "{size}: {share} against {j}");
        }
    }
}
