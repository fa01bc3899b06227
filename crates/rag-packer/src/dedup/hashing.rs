//! Hashing: a word's 64-bit hash and the key of a text's word sequence.

use std::hash::Hasher;

use rustc_hash::FxHasher;

/// OR-ing this into the bytes of an ASCII alphanumeric run lower-cases its letters and leaves its
/// digits as they are.
pub(super) const ASCII_LOWER: u64 = 0x2020_2020_2020_2020;

/// The hash of one normalised word, given as its bytes; `lower` is OR-ed into them first
/// ([`ASCII_LOWER`] for a run of ASCII alphanumerics as it stands in the text, 0 for a word that is
/// already lower-case), so both [`Word`](super::definition::Word) forms of one word hash alike.
///
/// A word of up to 8 bytes (most words) is its bytes as an integer, finalised: a bijection, so
/// short words never collide. Longer words are folded 8 bytes at a time by FxHash (a polynomial in an odd multiplier, in which
/// a difference in one block cannot cancel a difference in the next), then finalised.
#[inline]
pub(super) fn hash_word(bytes: &[u8], lower: u64) -> u64 {
    match bytes.len() {
        0..=7 => hash_short_word(load_tail(bytes) | lower, bytes.len()),
        8 => hash_short_word(load_8(bytes) | lower, 8),
        _ => hash_long_word(bytes, lower),
    }
}

/// [`hash_word`] of a word of 1 to 8 bytes, from `raw`: the word's bytes (lower-cased) in its
/// low `len` bytes, anything in the others.
#[inline]
pub(super) fn hash_short_word(raw: u64, len: usize) -> u64 {
    finish(raw & (u64::MAX >> (64 - 8 * len)))
}

/// [`hash_word`] of a word of more than 8 bytes.
#[inline(never)]
pub(super) fn hash_long_word(bytes: &[u8], lower: u64) -> u64 {
    // The bytes are lower-cased as they are loaded, which `Hasher::write` on the text could not do.
    let mut h = FxHasher::default();
    h.write_usize(bytes.len());
    let mut blocks = bytes.chunks_exact(8);
    for block in &mut blocks {
        h.write_u64(load_8(block) | lower);
    }
    let rest = blocks.remainder();
    if !rest.is_empty() {
        // Only the bytes present are lower-cased: the zero padding must stay zero.
        h.write_u64((load_tail(rest) | lower) & (u64::MAX >> (64 - 8 * rest.len())));
    }
    finish(h.finish())
}

/// The first 8 bytes of `bytes` (at least 8) as a little-endian integer.
#[inline]
pub(super) fn load_8(bytes: &[u8]) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(&bytes[..8]);
    u64::from_le_bytes(word)
}

/// `rest` (at most 7 bytes) as a little-endian integer padded with zeros, read without a copy into
/// a buffer (which costs a call and a stalled load on the hot path). Overlapping reads put the same
/// byte in the same place, so OR-ing them is exact.
#[inline]
pub(super) fn load_tail(rest: &[u8]) -> u64 {
    let n = rest.len();
    match n {
        0 => 0,
        1..=3 => u64::from(rest[0]) | u64::from(rest[n / 2]) << (8 * (n / 2)) | u64::from(rest[n - 1]) << (8 * (n - 1)),
        _ => {
            let low = u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]);
            let high = u32::from_le_bytes([rest[n - 4], rest[n - 3], rest[n - 2], rest[n - 1]]);
            u64::from(low) | u64::from(high) << (8 * (n - 4))
        }
    }
}

/// The SplitMix64 finaliser: makes every bit of a word's hash depend on every bit of the word.
/// The hash tables index by the low bits, MinHash bins and shared-token partitions are chosen by
/// the top bits, and the collision bound of shingles assumes all 64 uniform; FxHash's own finish
/// (a rotation) leaves the top bits of a short word's hash a function of its first five bytes.
#[inline]
pub(super) fn finish(mut h: u64) -> u64 {
    h ^= h >> 30;
    h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h ^= h >> 27;
    h = h.wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}

/// A 64-bit key of a word-hash sequence (length included), for grouping equal texts. Equal
/// sequences have equal keys; a collision only costs a comparison of the normalised texts, so
/// FxHash's quality is enough.
#[inline]
pub(super) fn sequence_key(words: &[u64]) -> u64 {
    let mut key = key_start(words.len());
    for &word in words {
        key.write_u64(word);
    }
    key.finish()
}

/// The state a [`sequence_key`] of `len` words starts from; each word is then written to it.
#[inline]
pub(super) fn key_start(len: usize) -> FxHasher {
    let mut key = FxHasher::default();
    key.write_usize(len);
    key
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_and_built_words_hash_alike() {
        for word in ["x", "abc", "abcdefg", "abcdefgh", "abcdefghijklmnopq", "r2d2"] {
            let upper = word.to_ascii_uppercase();
            assert_eq!(
                hash_word(upper.as_bytes(), ASCII_LOWER),
                hash_word(word.as_bytes(), 0),
                "{word}"
            );
        }
    }

    /// Every word of `prefix` followed by one byte of each of `last`.
    fn words(prefix: &[u8], last: [&[u8]; 3]) -> impl Iterator<Item = Vec<u8>> {
        let [a, b, c] = last;
        a.iter().flat_map(move |&x| {
            b.iter().flat_map(move |&y| {
                c.iter().map(move |&z| {
                    let mut word = prefix.to_vec();
                    word.extend([x, y, z]);
                    word
                })
            })
        })
    }

    #[test]
    fn long_words_that_differ_in_their_last_letters_hash_apart() {
        // Every 10-byte word "resolve" + three letters or digits: a difference in the top bits of
        // the 8th byte must not cancel one in the low bits of the 9th (a rotate-xor-multiply fold
        // let it, and near dedup dropped the heading `dns.resolveSoa` as a copy of `resolveCaa`).
        let alphabet = b"abcdefghijklmnopqrstuvwxyz0123456789";
        let mut hashes = std::collections::HashSet::new();
        for word in words(b"resolve", [alphabet, alphabet, alphabet]) {
            assert!(hashes.insert(hash_word(&word, 0)), "{}", String::from_utf8_lossy(&word));
        }
        assert_ne!(hash_word(b"resolvesoa", 0), hash_word(b"resolvecaa", 0));
    }

    #[test]
    fn words_that_share_a_prefix_get_unrelated_top_bits() {
        // MinHash bins and shared-token partitions are chosen by the top bits of shingle hashes,
        // and the collision bound of shingles needs all 64 bits uniform. FxHash's finish (a
        // rotation) would give words that share their first five bytes the same top 38 bits.
        let alphabet = b"abcdefghijklmnopqrstuvwxyz";
        let top_bins: std::collections::HashSet<u64> = words(b"refun", [alphabet, alphabet, &alphabet[..4]])
            .map(|word| hash_word(&word, 0) >> 57)
            .collect();
        // 2,704 words over 128 bins: a uniform hash leaves none empty but by a tiny chance.
        assert!(top_bins.len() >= 120, "{} of 128 bins", top_bins.len());
    }
}
