//! The fast word scanner: the words of [`for_each_word`](super::definition::for_each_word) found 64 bytes at a time with bit masks,
//! and hashed as they are found.
//!
//! Its oracle stands beside it: `is_word_byte` is the byte-by-byte rule [`word_bits`] computes
//! eight bytes at a time, and the tests compare [`push_word_hashes`] with the general path
//! (`for_each_word` and `hash_word`) on every kind of text.

use super::definition::lower_words;
#[cfg(test)]
use super::definition::{Word, for_each_word};
use super::hashing::{ASCII_LOWER, hash_long_word, hash_short_word, hash_word, load_8, load_tail};

/// Whether `b` can be part of a word: an ASCII alphanumeric, or a byte of a non-ASCII character
/// (which the Unicode rules then decide). Everything else is an ASCII separator.
/// The scanner uses [`word_byte_flags`], eight bytes at a time; this is its readable definition.
#[cfg(test)]
fn is_word_byte(b: u8) -> bool {
    (b | 0x20).wrapping_sub(b'a') < 26 || b.wrapping_sub(b'0') < 10 || b >= 0x80
}

/// One bit per byte of `text` (bit `i % 64` of word `i / 64`): set for a byte that can be part
/// of a word: an ASCII alphanumeric or any byte of a non-ASCII character.
///
/// Eight bytes at a time (SWAR): the scanner then steps from word to word with bit operations
/// instead of branching on every byte. A unit test checks it against the byte-by-byte rule.
///
/// Returns whether `text` is all ASCII, found on the way (it saves a pass over the text).
pub(super) fn word_bits(text: &[u8], bits: &mut Vec<u64>) -> bool {
    bits.clear();
    let mut mask = 0u64;
    let mut high = 0u64;
    let mut blocks = text.chunks_exact(8);
    for (k, block) in (&mut blocks).enumerate() {
        let x = load_8(block);
        high |= x;
        mask |= word_byte_flags(x) << (8 * (k % 8));
        if k % 8 == 7 {
            bits.push(mask);
            mask = 0;
        }
    }
    let rest = blocks.remainder();
    let full = text.len() / 8;
    if !rest.is_empty() {
        // Zero padding is a separator, so it adds no flags.
        let x = load_tail(rest);
        high |= x;
        mask |= word_byte_flags(x) << (8 * (full % 8));
    }
    if !full.is_multiple_of(8) || !rest.is_empty() {
        bits.push(mask);
    }
    high & 0x8080_8080_8080_8080 == 0
}

/// The word-byte flags of the eight bytes of `x` (little-endian), as eight bits.
fn word_byte_flags(x: u64) -> u64 {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let ones = |b: u8| u64::from(b) * 0x0101_0101_0101_0101;
    let high = x & HIGH;
    let t = x & !HIGH;
    // Each sum stays below 0x100 per byte (t <= 0x7f), so no carry crosses into the next byte;
    // bit 7 of a byte of `t + (0x80 - lo)` is set exactly when the byte is at least `lo`.
    let lower = t | ones(0x20);
    let letter = (lower + ones(0x80 - b'a')) & !(lower + ones(0x7f - b'z'));
    let digit = (t + ones(0x80 - b'0')) & !(t + ones(0x7f - b'9'));
    let flags = (letter | digit | high) & HIGH;
    // Gather the eight bit-7s into the top byte, then down.
    ((flags >> 7).wrapping_mul(0x0102_0408_1020_4080)) >> 56
}

/// The maximal runs of word bytes, as `(start, end)` in order, given the [`word_bits`] of a text
/// of `len` bytes.
///
/// Starts and ends are found 64 bytes at a time with bit operations: one mispredicted branch per
/// block rather than one per word. An iterator rather than a callback, so that the caller's loop
/// body is compiled into the loop.
pub(super) struct Segments<'b> {
    bits: &'b [u64],
    len: usize,
    /// The next block of `bits` to load.
    next_block: usize,
    /// Where the current block starts in the text.
    base: usize,
    /// The current block's segment starts and ends not taken yet. A start is a word byte after a
    /// separator; an end is a separator after a word byte. They alternate, beginning with an end
    /// when a segment is still open from the previous block.
    starts: u64,
    ends: u64,
    /// Whether the last byte of the previous block was a word byte.
    carry: u64,
    /// The start of the segment in progress, or `usize::MAX`.
    open: usize,
}

impl<'b> Segments<'b> {
    pub(super) fn new(bits: &'b [u64], len: usize) -> Self {
        Self {
            bits,
            len,
            next_block: 0,
            base: 0,
            starts: 0,
            ends: 0,
            carry: 0,
            open: usize::MAX,
        }
    }
}

impl Iterator for Segments<'_> {
    type Item = (usize, usize);

    #[inline]
    fn next(&mut self) -> Option<(usize, usize)> {
        loop {
            if self.open == usize::MAX {
                if self.starts != 0 {
                    self.open = self.base + self.starts.trailing_zeros() as usize;
                    self.starts &= self.starts - 1;
                    continue;
                }
            } else if self.ends != 0 {
                let end = self.base + self.ends.trailing_zeros() as usize;
                self.ends &= self.ends - 1;
                return Some((std::mem::replace(&mut self.open, usize::MAX), end));
            }
            let Some(&mask) = self.bits.get(self.next_block) else {
                // Bits past the end are zero, so only a segment ending exactly at a 64-byte
                // boundary is still open here.
                return (self.open != usize::MAX).then(|| (std::mem::replace(&mut self.open, usize::MAX), self.len));
            };
            let before = (mask << 1) | self.carry;
            self.starts = mask & !before;
            self.ends = !mask & before;
            self.carry = mask >> 63;
            self.base = 64 * self.next_block;
            self.next_block += 1;
        }
    }
}

/// Pushes the [`hash_word`] of each word [`for_each_word`](super::definition::for_each_word) yields for `text`, in order: the hot
/// path of the per-text pass.
///
/// An ASCII segment (all of them in an ASCII text) of up to 8 bytes, which is most words, is read
/// with one unaligned load and masked, instead of byte by byte; other segments go through the
/// Unicode rule.
pub(super) fn push_word_hashes(text: &str, scratch: &mut String, bits: &mut Vec<u64>, words: &mut Vec<u64>) {
    let bytes = text.as_bytes();
    let all_ascii = word_bits(bytes, bits);
    for (start, end) in Segments::new(bits, bytes.len()) {
        let segment = &bytes[start..end];
        if !all_ascii && !segment.is_ascii() {
            push_unicode_word_hashes(&text[start..end], scratch, words);
            continue;
        }
        let len = end - start;
        words.push(if len <= 8 {
            // Reading past the word is fine while still inside the text: the mask drops it.
            let raw = match bytes.get(start..start + 8) {
                Some(eight) => load_8(eight),
                None => load_tail(segment),
            };
            hash_short_word(raw | ASCII_LOWER, len)
        } else {
            hash_long_word(segment, ASCII_LOWER)
        });
    }
}

/// The slow path of [`push_word_hashes`], out of line so that the fast one stays small enough to be
/// inlined into the segment loop.
#[cold]
#[inline(never)]
fn push_unicode_word_hashes(segment: &str, scratch: &mut String, words: &mut Vec<u64>) {
    lower_words(segment, scratch, |word| words.push(hash_word(word.as_bytes(), 0)));
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn word_bits_agree_with_the_byte_rule() {
        for b in 0..=255u8 {
            let expected = b.is_ascii_alphanumeric() || !b.is_ascii();
            assert_eq!(is_word_byte(b), expected, "{b:#x}");
            assert_eq!(word_byte_flags(u64::from(b) << 24) == 1 << 3, expected, "{b:#x}");
        }
        let text: Vec<u8> = (0..200u32).map(|i| (i * 37 % 256) as u8).collect();
        for len in 0..text.len() {
            let mut bits = Vec::new();
            word_bits(&text[..len], &mut bits);
            assert_eq!(bits.len(), len.div_ceil(64));
            for (i, &b) in text[..len].iter().enumerate() {
                assert_eq!(bits[i / 64] >> (i % 64) & 1 == 1, is_word_byte(b), "len {len} at {i}");
            }
        }
    }

    /// The general path's word hashes: what the ASCII fast path must reproduce.
    fn general_word_hashes(text: &str) -> Vec<u64> {
        let mut hashes = Vec::new();
        for_each_word(text, &mut String::new(), |word| {
            hashes.push(match word {
                Word::Ascii(w) => hash_word(w.as_bytes(), ASCII_LOWER),
                Word::Lower(w) => hash_word(w.as_bytes(), 0),
            });
        });
        hashes
    }

    fn fast_word_hashes(text: &str) -> Vec<u64> {
        let mut hashes = Vec::new();
        push_word_hashes(text, &mut String::new(), &mut Vec::new(), &mut hashes);
        hashes
    }

    #[test]
    fn the_ascii_fast_path_equals_the_general_path() {
        // Words of every length from 1 to 20 ending at every offset around the 64-byte blocks.
        for len in 1..=20 {
            for pad in 0..70 {
                let word: String = (0..len).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
                let text = format!("{}{} Tail{}", " ".repeat(pad), word.to_uppercase(), "-".repeat(pad % 3));
                assert_eq!(fast_word_hashes(&text), general_word_hashes(&text), "{text:?}");
                let bare = format!("{}{word}", ".".repeat(pad));
                assert_eq!(fast_word_hashes(&bare), general_word_hashes(&bare), "{bare:?}");
            }
        }
        for text in [
            "",
            " ",
            "a",
            "-- ** --",
            "A1b2C3d4E5f6G7h8",
            &"x".repeat(64),
            &"y ".repeat(64),
        ] {
            assert_eq!(fast_word_hashes(text), general_word_hashes(text), "{text:?}");
        }
        assert_eq!(fast_word_hashes("Hello, WORLD"), general_word_hashes("hello world"));
    }

    proptest! {
        #[test]
        fn the_ascii_fast_path_equals_the_general_path_on_any_ascii(text in "[ -~\t\n]{0,300}") {
            prop_assert_eq!(fast_word_hashes(&text), general_word_hashes(&text));
        }

        #[test]
        fn the_fast_path_equals_the_general_path_on_mixed_text(text in "([ -~]{0,12}[éÄßİΣ—’\u{300}]?){0,30}") {
            prop_assert_eq!(fast_word_hashes(&text), general_word_hashes(&text));
        }

    }
}
