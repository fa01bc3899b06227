//! Shingling: a text's set of word shingles as 64-bit hashes, rolled from its word hashes.

use std::hash::Hasher;

use rustc_hash::FxHasher;

use super::hashing::{finish, key_start, sequence_key};
use super::table::TokenSet;

/// Appends the distinct shingle hashes of a text given as its word hashes, in order of first
/// occurrence.
///
/// A shingle's hash is the XOR of its word hashes, the `k`-th rotated left by `k` bits, so the
/// next window's hash follows from the last one in three operations whatever the shingle size.
/// Word hashes are finalised (uniform over 64 bits), so two different shingles collide with
/// probability about 2^-64; a shingle that repeats words still stays within 2^-60, since the
/// rotations are distinct as long as the size is at most 64. Larger sizes hash each window with
/// FxHash instead, finalised.
///
/// Returns the text's [`sequence_key`], computed in the same loop: on its own, that loop's chain
/// of multiplications is pure latency, while here other work fills it.
pub(super) fn push_shingles(words: &[u64], size: usize, seen: &mut TokenSet, tokens: &mut Vec<u64>) -> u64 {
    if words.is_empty() {
        return sequence_key(words);
    }
    let window = size.min(words.len());
    // Eight slots per shingle: at a load of at most 1/8, a probe almost always finds a free slot
    // first, which keeps the branch predictable.
    seen.clear(8 * (words.len() - window + 1));
    let mut push = |shingle: u64| {
        if seen.insert(shingle) {
            tokens.push(shingle);
        }
    };
    if window > 64 {
        for w in words.windows(window) {
            let mut h = FxHasher::default();
            for &word in w {
                h.write_u64(word);
            }
            push(finish(h.finish()));
        }
        return sequence_key(words);
    }
    let last = (window - 1) as u32;
    let mut key = key_start(words.len());
    for &word in &words[..window] {
        key.write_u64(word);
    }
    let mut shingle = words[..window]
        .iter()
        .zip(0u32..)
        .fold(0u64, |h, (&word, k)| h ^ word.rotate_left(k));
    push(shingle);
    for (&leaving, &entering) in words.iter().zip(&words[window..]) {
        key.write_u64(entering);
        shingle = (shingle ^ leaving).rotate_right(1) ^ entering.rotate_left(last);
        push(shingle);
    }
    key.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rolling_shingle_hashes_equal_the_direct_definition() {
        let words: Vec<u64> = (1..=40u64).map(|i| finish(i % 7)).collect();
        for size in 1..=12 {
            let mut tokens = Vec::new();
            let key = push_shingles(&words, size, &mut TokenSet::default(), &mut tokens);
            assert_eq!(key, sequence_key(&words), "size {size}");
            let mut direct: Vec<u64> = Vec::new();
            for w in words.windows(size) {
                let h = w.iter().zip(0u32..).fold(0, |h, (&x, k)| h ^ x.rotate_left(k));
                if !direct.contains(&h) {
                    direct.push(h);
                }
            }
            assert_eq!(tokens, direct, "size {size}");
            // The words repeat with period 7: so do the shingles, which the set keeps once.
            assert_eq!(tokens.len(), 7.min(words.len() - size + 1), "size {size}");
        }
    }
}
