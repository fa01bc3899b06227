//! The readable definition of what dedup compares: the normalised words of a text, its word
//! shingles, the Jaccard similarity of two shingle sets, and a fingerprint of the normalised text.
//!
//! The rest of the dedup computes the same things on 64-bit hashes; its tests compare it with
//! these functions.

use std::collections::BTreeSet;

use sha2::{Digest, Sha256};

/// One normalised word, as [`for_each_word`] yields it.
#[derive(Clone, Copy)]
pub(super) enum Word<'a> {
    /// A run of ASCII alphanumerics straight from the text, not yet lower-cased.
    Ascii(&'a str),
    /// A word built character by character (the text had non-ASCII characters there), already
    /// lower-cased.
    Lower(&'a str),
}

/// Calls `emit` with each word of the [normalised](normalise) form of `text`, in order.
///
/// This is the one definition of the words: [`normalise`] joins what it yields, and the dedup
/// hashes the same words (see `scanner::push_word_hashes`, which finds the segments eight bytes
/// at a time and is tested against this). The text is cut into *segments* at ASCII characters
/// other than letters and digits (no UTF-8 multi-byte sequence contains an ASCII byte, so the cut
/// is the same byte by byte). A segment of ASCII alphanumerics is one word as it stands; a segment
/// with other characters follows the Unicode rule of [`lower_words`].
pub(super) fn for_each_word(text: &str, scratch: &mut String, mut emit: impl FnMut(Word<'_>)) {
    let separator = |c: char| c.is_ascii() && !c.is_ascii_alphanumeric();
    for segment in text.split(separator).filter(|segment| !segment.is_empty()) {
        if segment.is_ascii() {
            emit(Word::Ascii(segment));
        } else {
            lower_words(segment, scratch, |word| emit(Word::Lower(word)));
        }
    }
}

/// The words of a segment with non-ASCII characters, character by character: each character is
/// lower-cased first, and each character of the lower-case form continues the word if it is
/// alphanumeric and ends it otherwise. Lower-casing before classifying keeps [`normalise`]
/// idempotent.
pub(super) fn lower_words(segment: &str, scratch: &mut String, mut emit: impl FnMut(&str)) {
    scratch.clear();
    for c in segment.chars() {
        if c.is_ascii() {
            // Only alphanumerics reach here (separators end segments): skip the Unicode tables.
            scratch.push(c.to_ascii_lowercase());
            continue;
        }
        if let Some(lower) = latin1_lower(c) {
            scratch.push(lower);
            continue;
        }
        for lower in c.to_lowercase() {
            if lower.is_alphanumeric() {
                scratch.push(lower);
            } else if !scratch.is_empty() {
                emit(scratch);
                scratch.clear();
            }
        }
    }
    if !scratch.is_empty() {
        emit(scratch);
    }
}

/// The lower-case form of a Latin-1 letter (`À`..`ÿ` except `×` and `÷`), which is a single
/// alphanumeric character: a shortcut past the Unicode tables for the most common non-ASCII
/// letters. `None` for any other character.
pub(super) fn latin1_lower(c: char) -> Option<char> {
    match c {
        '\u{df}'..='\u{ff}' if c != '\u{f7}' => Some(c),
        '\u{c0}'..='\u{de}' if c != '\u{d7}' => char::from_u32(u32::from(c) + 0x20),
        _ => None,
    }
}

/// The normalised form of `text`: lower-cased, each run of Unicode alphanumeric characters a word,
/// the words joined by one space. Punctuation, symbols and whitespace only separate words.
///
/// ```
/// use rag_packer::normalise;
///
/// assert_eq!(normalise("  The Refund-window is 30 DAYS!  "), "the refund window is 30 days");
/// assert_eq!(normalise("Ünïcode, ÇA VA?"), "ünïcode ça va");
/// assert_eq!(normalise("-- *** --"), "");
/// ```
pub fn normalise(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut scratch = String::new();
    for_each_word(text, &mut scratch, |word| {
        if !out.is_empty() {
            out.push(' ');
        }
        match word {
            Word::Ascii(w) => {
                let start = out.len();
                out.push_str(w);
                out[start..].make_ascii_lowercase();
            }
            Word::Lower(w) => out.push_str(w),
        }
    });
    out
}

/// The words of the [normalised](normalise) text.
///
/// ```
/// use rag_packer::normalised_words;
///
/// assert_eq!(normalised_words("Hello, World!"), ["hello", "world"]);
/// ```
pub fn normalised_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut scratch = String::new();
    for_each_word(text, &mut scratch, |word| {
        words.push(match word {
            Word::Ascii(w) => w.to_ascii_lowercase(),
            Word::Lower(w) => w.to_owned(),
        });
    });
    words
}

/// The word `size`-shingles of `words`: every run of `size` consecutive words, joined by one space.
///
/// A text of fewer than `size` words (but at least one) is a single shingle of all its words, so
/// short texts still compare; no words give the empty set. A `size` of 0 is treated as 1.
///
/// This is the readable definition; the dedup computes the same sets as 64-bit hashes.
///
/// ```
/// use rag_packer::shingles;
///
/// let set = shingles(&["a", "b", "c", "d"], 3);
/// assert_eq!(set.into_iter().collect::<Vec<_>>(), ["a b c", "b c d"]);
/// assert_eq!(shingles(&["only", "two"], 5).len(), 1);
/// ```
pub fn shingles<S: AsRef<str>>(words: &[S], size: usize) -> BTreeSet<String> {
    let size = size.max(1);
    if words.is_empty() {
        return BTreeSet::new();
    }
    let join = |window: &[S]| window.iter().map(AsRef::as_ref).collect::<Vec<_>>().join(" ");
    if words.len() < size {
        return BTreeSet::from([join(words)]);
    }
    words.windows(size).map(join).collect()
}

/// The Jaccard similarity `|a ∩ b| / |a ∪ b|`, in 0..=1.
///
/// Two empty sets have similarity 0: a text without words is never a *near* duplicate (two such
/// texts normalise to the same empty string, so exact dedup already catches them).
///
/// ```
/// use std::collections::BTreeSet;
/// use rag_packer::jaccard;
///
/// let a = BTreeSet::from([1, 2, 3, 4]);
/// let b = BTreeSet::from([2, 3, 4, 5]);
/// assert_eq!(jaccard(&a, &b), 0.6);
/// ```
pub fn jaccard<T: Ord>(a: &BTreeSet<T>, b: &BTreeSet<T>) -> f64 {
    similarity_from_counts(a.intersection(b).count(), a.len(), b.len())
}

/// The one formula both the public [`jaccard`] and the index use, so they agree to the last bit.
#[inline]
pub(super) fn similarity_from_counts(overlap: usize, len_a: usize, len_b: usize) -> f64 {
    let union = len_a + len_b - overlap;
    if union == 0 { 0.0 } else { overlap as f64 / union as f64 }
}

/// The SHA-256 of the [normalised](normalise) text: a stable fingerprint of what exact dedup
/// compares (two texts are exact duplicates exactly when their normalised texts are equal).
///
/// ```
/// use rag_packer::content_hash;
///
/// assert_eq!(content_hash("Refunds: 30 days."), content_hash("refunds 30 DAYS"));
/// assert_ne!(content_hash("Refunds: 30 days."), content_hash("Refunds: 14 days."));
/// ```
pub fn content_hash(text: &str) -> [u8; 32] {
    Sha256::digest(normalise(text).as_bytes()).into()
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn normalise_lowercases_and_keeps_alphanumeric_runs() {
        assert_eq!(
            normalise("Hello,   WORLD!!\n\tfoo_bar 3.14"),
            "hello world foo bar 3 14"
        );
        assert_eq!(normalise(""), "");
        assert_eq!(normalise("ÉCOLE d'été"), "école d été");
        assert_eq!(normalise("數據 データ"), "數據 データ");
        let once = normalise("İstanbul ΣΊΣΥΦΟΣ");
        assert_eq!(normalise(&once), once, "normalise is idempotent");
    }

    #[test]
    fn the_latin1_shortcut_agrees_with_the_unicode_rule() {
        for c in (0x80..0x180).filter_map(char::from_u32) {
            if let Some(lower) = latin1_lower(c) {
                assert_eq!(c.to_lowercase().collect::<Vec<_>>(), [lower], "{c}");
                assert!(lower.is_alphanumeric(), "{c}");
            }
        }
        assert_eq!(latin1_lower('É'), Some('é'));
        assert_eq!(latin1_lower('×'), None);
    }

    #[test]
    fn words_match_the_reference_normalisation() {
        let text = "Crème BRÛLÉE, İstanbul's ΣΊΣΥΦΟΣ; naïve café-au-lait 3.14 ǅemal ﬁnance Ⅻ";
        let reference: String = text.chars().flat_map(char::to_lowercase).collect();
        let reference: Vec<&str> = reference
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .collect();
        assert_eq!(normalised_words(text), reference);
        assert_eq!(normalise(text), reference.join(" "));
    }

    #[test]
    fn shingles_of_a_five_word_sentence() {
        let words = normalised_words("The quick brown fox jumps");
        assert_eq!(shingles(&words, 5).len(), 1);
        assert_eq!(shingles(&words, 3).len(), 3);
        assert_eq!(
            shingles(&words, 9),
            BTreeSet::from(["the quick brown fox jumps".to_owned()])
        );
        assert!(shingles::<&str>(&[], 3).is_empty());
        assert_eq!(shingles(&["a", "b"], 0).len(), 2, "size 0 behaves as 1");
    }

    #[test]
    fn jaccard_of_empty_sets_is_zero() {
        let empty: BTreeSet<u8> = BTreeSet::new();
        assert_eq!(jaccard(&empty, &empty), 0.0);
        assert_eq!(jaccard(&BTreeSet::from([1]), &BTreeSet::from([1])), 1.0);
    }

    proptest! {
        #[test]
        fn normalise_equals_lowercase_then_split(text in "\\PC{0,40}") {
            let lower: String = text.chars().flat_map(char::to_lowercase).collect();
            let words: Vec<&str> = lower.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).collect();
            prop_assert_eq!(normalise(&text), words.join(" "));
        }
    }
}
