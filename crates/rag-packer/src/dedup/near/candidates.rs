//! Candidates: the prefix tokens that can propose a pair.
//!
//! Prefix filtering (see `prefix.rs`) says two texts can reach the threshold only if their
//! prefixes share a token. A token found in the prefix of one text only can therefore never
//! propose anything, and with rare-first prefixes that is nearly every token. [`SharedTokens`]
//! finds, before the sequential pass, the tokens found in two or more prefixes and numbers them
//! densely, so that the index is a plain vector by number instead of a hash table of every prefix
//! token (which missed the cache on nearly every lookup).

use std::ops::Range;

use rayon::prelude::*;

use crate::dedup::table::StampedTable;

/// In [`SharedTokens::ids`]: a token no other text's prefix has.
pub(super) const UNSHARED: u32 = u32::MAX;

/// Below this many prefix tokens in all, shared tokens are found on the calling thread.
const PARALLEL_MIN_TOKENS: usize = 1 << 15;

/// Prefix tokens per partition, on average: a partition's table then stays in the L1 cache.
const TOKENS_PER_PARTITION: usize = 512;

/// Prefix tokens renamed to dense numbers, keeping only those found in two or more prefixes.
///
/// Text and position numbers are `u32`, as in the index: 4 billion prefix tokens would be more
/// than 30 GB of shingles, far beyond what a packer is handed.
pub(super) struct SharedTokens {
    /// Per text, where its prefix's entries start in `ids`; one more at the end.
    starts: Vec<usize>,
    /// Per prefix token of every text, in text order: its number, or [`UNSHARED`].
    ids: Vec<u32>,
    /// How many distinct shared tokens there are (numbers are `0..count`).
    count: usize,
    /// Per shared token, the first text whose prefix has it.
    first_text: Vec<u32>,
}

/// One range of texts' prefix tokens, grouped by partition.
struct Scattered {
    /// Partition `p` holds entries `bounds[p]..bounds[p + 1]`.
    bounds: Vec<usize>,
    tokens: Vec<u64>,
    /// Where each token is in [`SharedTokens::ids`].
    positions: Vec<u32>,
}

/// Prefix tokens split by their top `bits` bits into `1 << bits` partitions.
#[derive(Clone, Copy)]
struct Partitions {
    bits: u32,
}

impl Partitions {
    /// Partitions for `total` tokens: about [`TOKENS_PER_PARTITION`] each, at most 65,536.
    fn for_tokens(total: usize) -> Self {
        let bits = (total / TOKENS_PER_PARTITION)
            .max(1)
            .next_power_of_two()
            .trailing_zeros()
            .min(16);
        Self { bits }
    }

    fn count(self) -> usize {
        1 << self.bits
    }

    fn of(self, token: u64) -> usize {
        token.checked_shr(64 - self.bits).unwrap_or(0) as usize
    }
}

impl SharedTokens {
    /// Finds the tokens shared by two or more of `prefixes` (one per text; empty for a text that
    /// is not looked up).
    ///
    /// The prefix tokens are grouped by partition (the top bits of the token) and each partition
    /// is counted in a table small enough to stay in cache, partitions in parallel. Numbers
    /// follow the partitions in order and, within one, the first occurrence in text order, so
    /// the result does not depend on the number of threads.
    pub(super) fn find(prefixes: &[&[u64]]) -> Self {
        let mut starts = Vec::with_capacity(prefixes.len() + 1);
        let mut total = 0;
        starts.push(0);
        for prefix in prefixes {
            total += prefix.len();
            starts.push(total);
        }
        let partitions = Partitions::for_tokens(total);
        let parallel = total >= PARALLEL_MIN_TOKENS;

        let scatter = |texts: Range<usize>| scatter(prefixes, &starts, partitions, texts);
        let scattered: Vec<Scattered> = if parallel {
            text_ranges(&starts, rayon::current_num_threads() * 4)
                .into_par_iter()
                .map(scatter)
                .collect()
        } else {
            vec![scatter(0..prefixes.len())]
        };
        let count = |table: &mut StampedTable<Occurrence>, p: usize| count_partition(&scattered, table, p);
        let found: Vec<(Vec<(u32, u32)>, usize)> = if parallel {
            (0..partitions.count())
                .into_par_iter()
                .map_init(StampedTable::default, count)
                .collect()
        } else {
            let mut table = StampedTable::default();
            (0..partitions.count()).map(|p| count(&mut table, p)).collect()
        };
        Self::number(starts, total, found)
    }

    /// The shared tokens numbered across partitions, in partition order, from what each
    /// partition found.
    fn number(starts: Vec<usize>, total: usize, found: Vec<(Vec<(u32, u32)>, usize)>) -> Self {
        let mut ids = vec![UNSHARED; total];
        let mut count = 0;
        let mut first_text = Vec::new();
        for (shared, numbered) in found {
            first_text.resize(count + numbered, u32::MAX);
            for (position, number) in shared {
                let id = count + number as usize;
                ids[position as usize] = id as u32;
                // A token's first occurrence comes first among its pairs.
                if first_text[id] == u32::MAX {
                    first_text[id] = (starts.partition_point(|&start| start <= position as usize) - 1) as u32;
                }
            }
            count += numbered;
        }
        Self {
            starts,
            ids,
            count,
            first_text,
        }
    }

    /// The first text (in the order of `prefixes`) whose prefix has the shared token `id`.
    pub(super) fn first_text(&self, id: u32) -> usize {
        self.first_text[id as usize] as usize
    }

    /// How many distinct shared tokens there are.
    pub(super) fn count(&self) -> usize {
        self.count
    }

    /// The numbers of `text`'s prefix tokens, in prefix order, [`UNSHARED`] for most.
    pub(super) fn of(&self, text: usize) -> &[u32] {
        &self.ids[self.starts[text]..self.starts[text + 1]]
    }
}

/// The prefix tokens of `texts`, grouped by partition, each with its place in
/// [`SharedTokens::ids`] (`starts` gives each text's first place).
fn scatter(prefixes: &[&[u64]], starts: &[usize], partitions: Partitions, texts: Range<usize>) -> Scattered {
    let mut bounds = vec![0usize; partitions.count() + 1];
    for prefix in &prefixes[texts.clone()] {
        for &token in *prefix {
            bounds[partitions.of(token) + 1] += 1;
        }
    }
    for p in 1..=partitions.count() {
        bounds[p] += bounds[p - 1];
    }
    let len = bounds[partitions.count()];
    let (mut tokens, mut positions) = (vec![0u64; len], vec![0u32; len]);
    let mut cursor = bounds[..partitions.count()].to_vec();
    for text in texts {
        for (&token, position) in prefixes[text].iter().zip(starts[text]..) {
            let at = &mut cursor[partitions.of(token)];
            tokens[*at] = token;
            positions[*at] = position as u32;
            *at += 1;
        }
    }
    Scattered {
        bounds,
        tokens,
        positions,
    }
}

/// Partition `p`'s shared tokens, in one pass: (place, number within the partition) of each
/// occurrence of a token found twice or more (a token's second occurrence numbers it and records
/// its first), and how many such tokens there are.
fn count_partition(
    scattered: &[Scattered],
    table: &mut StampedTable<Occurrence>,
    p: usize,
) -> (Vec<(u32, u32)>, usize) {
    // Four slots per token: a load of at most 1/4 keeps most probes at their first slot.
    table.clear(
        4 * scattered
            .iter()
            .map(|part| part.bounds[p + 1] - part.bounds[p])
            .sum::<usize>(),
    );
    let mut shared = Vec::new();
    let mut numbered = 0u32;
    for part in scattered {
        let range = part.bounds[p]..part.bounds[p + 1];
        for (&token, &position) in part.tokens[range.clone()].iter().zip(&part.positions[range]) {
            let slot = match table.find(token) {
                Ok(slot) => slot,
                Err(free) => {
                    let seen_once = Occurrence {
                        first: position,
                        number: UNSHARED,
                    };
                    table.occupy(free, token, seen_once);
                    continue;
                }
            };
            let occurrence = table.value_mut(slot);
            let number = match occurrence.number {
                UNSHARED => {
                    occurrence.number = numbered;
                    shared.push((occurrence.first, numbered));
                    numbered += 1;
                    numbered - 1
                }
                number => number,
            };
            shared.push((position, number));
        }
    }
    (shared, numbered as usize)
}

/// About `parts` contiguous ranges of texts with similar numbers of prefix tokens.
fn text_ranges(starts: &[usize], parts: usize) -> Vec<Range<usize>> {
    let texts = starts.len() - 1;
    let total = starts[texts];
    let per_part = total.div_ceil(parts.max(1)).max(1);
    let mut ranges = Vec::with_capacity(parts + 1);
    let mut begin = 0;
    while begin < texts {
        // The first text whose prefix starts at or past the next cut.
        let cut = starts[begin] + per_part;
        let end = starts.partition_point(|&s| s < cut).clamp(begin + 1, texts);
        ranges.push(begin..end);
        begin = end;
    }
    ranges
}

/// What the count of one partition knows about a token: where it was first seen, and its number
/// once it has been seen twice.
#[derive(Clone, Copy, Default)]
struct Occurrence {
    /// The position of the token's first occurrence.
    first: u32,
    /// The token's number, or [`UNSHARED`] while it was seen once.
    number: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_tokens_in_two_or_more_prefixes_are_numbered() {
        let (a, b, c): (&[u64], &[u64], &[u64]) = (&[5, 1 << 63, 7], &[], &[9, 7, 5, 3 << 62]);
        let shared = SharedTokens::find(&[a, b, c, &[1 << 63]]);
        assert_eq!(shared.count, 3);
        let (five, top, seven) = (shared.of(0)[0], shared.of(0)[1], shared.of(0)[2]);
        assert!(five != UNSHARED && top != UNSHARED && seven != UNSHARED);
        assert!(shared.of(1).is_empty());
        assert_eq!(shared.of(2), [UNSHARED, seven, five, UNSHARED]);
        assert_eq!(shared.of(3), [top]);
    }

    #[test]
    fn the_parallel_partitions_find_the_same_shared_tokens() {
        // Enough tokens for the parallel path and many partitions; every 7th text repeats
        // tokens of the text before it.
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let prefixes: Vec<Vec<u64>> = (0..4_000)
            .map(|_| {
                (0..20)
                    .map(|_| {
                        state = crate::dedup::hashing::finish(state.wrapping_add(1));
                        state
                    })
                    .collect()
            })
            .collect();
        let mut prefixes = prefixes;
        for i in (7..prefixes.len()).step_by(7) {
            let copy: Vec<u64> = prefixes[i - 1][..5].to_vec();
            prefixes[i][10..15].copy_from_slice(&copy);
        }
        let refs: Vec<&[u64]> = prefixes.iter().map(Vec::as_slice).collect();
        assert!(refs.iter().map(|p| p.len()).sum::<usize>() >= PARALLEL_MIN_TOKENS);
        let shared = SharedTokens::find(&refs);
        assert_eq!(shared.count, 5 * (7..prefixes.len()).step_by(7).count());
        for (i, prefix) in prefixes.iter().enumerate() {
            for (k, id) in shared.of(i).iter().enumerate() {
                let copied = (i % 7 == 6 && k < 5) || (i % 7 == 0 && i > 0 && (10..15).contains(&k));
                assert_eq!(*id != UNSHARED, copied, "text {i} token {k} ({:x})", prefix[k]);
            }
        }
        for i in (7..prefixes.len()).step_by(7) {
            assert_eq!(shared.of(i)[10..15], shared.of(i - 1)[..5]);
        }
    }

    #[test]
    fn text_ranges_cover_every_text_once() {
        let starts = [0, 3, 3, 10, 11, 30, 31];
        for parts in 1..8 {
            let ranges = text_ranges(&starts, parts);
            let covered: Vec<usize> = ranges.iter().flat_map(Clone::clone).collect();
            assert_eq!(covered, (0..6).collect::<Vec<_>>(), "{parts}");
        }
    }
}
