//! Preparation: the per-text pass, which reads each text once and leaves its sequence key and (for
//! near dedup) its shingle set with the prefix first. It does not depend on the ranking, so it runs
//! on the rayon pool in fixed blocks of texts.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;

use super::blocks::{BLOCK_TEXTS, PARALLEL_MIN_BYTES};
use super::hashing::sequence_key;
use super::prefix::{ArrangeScratch, CommonShingles, move_prefix_first, prefix_len};
use super::scanner::push_word_hashes;
use super::shingling::push_shingles;
use super::table::TokenSet;

/// What the per-text pass found for a block of [`BLOCK_TEXTS`] consecutive texts.
#[derive(Default)]
pub(super) struct Block {
    /// Per text, the key of its normalised word sequence (see [`sequence_key`]); `None` for a
    /// `None` text.
    pub(super) keys: Vec<Option<u64>>,
    /// With shingling, the shingle sets of the block's texts (as hashes), one after the other.
    tokens: Vec<u64>,
    /// With shingling, per text, where its set ends in `tokens`.
    ends: Vec<usize>,
    /// With shingling, a copy of each text's prefix (see [`move_prefix_first`]), one after the
    /// other, so that the shared-token search reads them from one compact array: read from all
    /// over `tokens`, nearly every prefix would be a cache miss.
    prefixes: Vec<u64>,
    /// Per text, where its prefix ends in `prefixes`.
    prefix_ends: Vec<usize>,
}

impl Block {
    fn range(&self, local: usize) -> Range<usize> {
        let start = match local.checked_sub(1) {
            Some(previous) => self.ends[previous],
            None => 0,
        };
        start..self.ends[local]
    }

    fn prefix(&self, local: usize) -> &[u64] {
        let start = match local.checked_sub(1) {
            Some(previous) => self.prefix_ends[previous],
            None => 0,
        };
        &self.prefixes[start..self.prefix_ends[local]]
    }
}

/// Buffers the per-text pass reuses from text to text, one set per worker.
#[derive(Default)]
pub(super) struct Scratch {
    pub(super) words: Vec<u64>,
    pub(super) lower: String,
    pub(super) bits: Vec<u64>,
    /// Removes repeated shingles within one text.
    pub(super) seen: TokenSet,
    /// For [`move_prefix_first`].
    arrange: ArrangeScratch,
}

/// The per-text pass: reads each text once, hashing its normalised words, and derives its
/// sequence key and, with `near = Some((threshold, shingle_size))`, its shingle set with its
/// prefix (see [`prefix_len`]) moved to the front and copied out. Texts are independent, so large
/// inputs are spread over the rayon pool, a block of texts per task.
///
/// The prefixes are taken in one global order of shingles, common ones last (see
/// [`CommonShingles`]), which a sample of the texts decides before the pass: each set's prefix is
/// then selected while its shingles are still in cache.
///
/// Once `cancel` is set, the remaining blocks are left empty.
pub(super) fn analyse(texts: &[Option<&str>], near: Option<(f64, usize)>, cancel: &AtomicBool) -> Vec<Block> {
    let bytes: usize = texts.iter().flatten().map(|t| t.len()).sum();
    let common = near.map(|(_, size)| CommonShingles::sample(texts, size));
    let common = common.as_ref();
    if bytes < PARALLEL_MIN_BYTES {
        let mut scratch = Scratch::default();
        texts
            .chunks(BLOCK_TEXTS)
            .map(|block| analyse_block(block, near, common, &mut scratch))
            .collect()
    } else {
        texts
            .par_chunks(BLOCK_TEXTS)
            .map_init(Scratch::default, |scratch, block| {
                if cancel.load(Ordering::Relaxed) {
                    return Block::default();
                }
                analyse_block(block, near, common, scratch)
            })
            .collect()
    }
}

/// The per-text pass over one block (see [`analyse`]); `common` is given exactly when `near` is.
fn analyse_block(
    texts: &[Option<&str>],
    near: Option<(f64, usize)>,
    common: Option<&CommonShingles>,
    scratch: &mut Scratch,
) -> Block {
    let Scratch {
        words,
        lower,
        bits,
        seen,
        arrange,
    } = scratch;
    let mut block = Block {
        keys: Vec::with_capacity(texts.len()),
        tokens: Vec::new(),
        ends: Vec::new(),
        prefixes: Vec::new(),
        prefix_ends: Vec::new(),
    };
    if near.is_some() {
        // About one shingle per word and a word per six bytes.
        let bytes: usize = texts.iter().flatten().map(|t| t.len()).sum();
        block.tokens.reserve(bytes / 6);
        block.ends.reserve(texts.len());
        block.prefix_ends.reserve(texts.len());
    }
    // The texts are separate allocations, so the hardware prefetcher cannot see the next one
    // coming: its first cache lines are read one text ahead, which overlaps their misses with
    // the work on the current text.
    let mut touched = 0u8;
    for (k, text) in texts.iter().enumerate() {
        if let Some(Some(next)) = texts.get(k + 1) {
            for line in next.as_bytes().iter().step_by(64).take(16) {
                touched ^= line;
            }
        }
        let start = block.tokens.len();
        match text {
            None => block.keys.push(None),
            Some(text) => {
                words.clear();
                push_word_hashes(text, lower, bits, words);
                let key = match near {
                    Some((_, size)) => push_shingles(words, size, seen, &mut block.tokens),
                    None => sequence_key(words),
                };
                block.keys.push(Some(key));
            }
        }
        if let (Some((threshold, _)), Some(common)) = (near, common) {
            let set = &mut block.tokens[start..];
            let p = prefix_len(threshold, set.len());
            if p < set.len() {
                move_prefix_first(set, p, common, arrange);
            }
            block.prefixes.extend_from_slice(&set[..p]);
            block.prefix_ends.push(block.prefixes.len());
            block.ends.push(block.tokens.len());
        }
    }
    std::hint::black_box(touched);
    block
}

/// The shingle sets of every text, as 64-bit shingle hashes, in the blocks of the per-text pass.
///
/// Shingles are compared by these hashes, not by their text. Two different shingles collide with
/// probability 2^-64 per pair, so among a million distinct shingles the chance that any collision
/// exists at all is about 3 in 100 million; a collision could shift one similarity by one shingle.
///
/// A set is stored in no particular order except that its prefix (see [`prefix_len`]) comes
/// first.
pub(super) struct ShingleSets {
    pub(super) blocks: Vec<Block>,
}

impl ShingleSets {
    #[inline]
    pub(super) fn set(&self, text: usize) -> &[u64] {
        let block = &self.blocks[text / BLOCK_TEXTS];
        &block.tokens[block.range(text % BLOCK_TEXTS)]
    }

    /// How many shingles all the sets hold together.
    pub(super) fn shingles(&self) -> usize {
        self.blocks.iter().map(|block| block.tokens.len()).sum()
    }

    /// The prefix of `text`'s set.
    pub(super) fn prefix(&self, text: usize) -> &[u64] {
        self.blocks[text / BLOCK_TEXTS].prefix(text % BLOCK_TEXTS)
    }
}
