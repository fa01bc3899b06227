//! Stages 4 and 5: exact and near-duplicate removal.
//!
//! Both passes walk texts in priority order (pinned first, then rank order) and compare each text
//! with the texts *kept so far*: a text is dropped if it duplicates one that survived, never one that
//! was itself dropped. The first `anchors` texts (the pinned chunks) are always kept and never
//! compared with each other.
//!
//! Exact dedup compares the SHA-256 of the [normalised](normalise) text. Near dedup compares word
//! [shingles] with the [Jaccard](jaccard) similarity. It is exact (it finds every pair at or above the
//! threshold, as the all-pairs loop would) but does not compare all pairs: an inverted index over the
//! rarest shingles of each kept text (prefix filtering) proposes the only texts that can reach the
//! threshold, and each proposal is verified on the full shingle sets. Shingles are compared as
//! 64-bit hashes (see [`shingle_hashes`] for what a collision would mean).

use std::collections::hash_map::Entry;
use std::collections::{BTreeSet, HashMap};
use std::hash::{BuildHasherDefault, Hasher};

use rag_core::PackerError;
use sha2::{Digest, Sha256};

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
    let mut out: Vec<u8> = Vec::with_capacity(text.len());
    // Whether a word boundary was seen since the last pushed character; emitted lazily so the
    // result has neither leading nor trailing spaces nor runs of them.
    let mut pending_space = false;
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b.is_ascii() {
            // The common case, byte by byte: most retrieved text is mostly ASCII.
            if b.is_ascii_alphanumeric() {
                if pending_space && !out.is_empty() {
                    out.push(b' ');
                }
                pending_space = false;
                out.push(b.to_ascii_lowercase());
            } else {
                pending_space = true;
            }
            i += 1;
            continue;
        }
        let Some(c) = text[i..].chars().next() else { break };
        i += c.len_utf8();
        // Lower-casing first, then classifying, keeps `normalise` idempotent: a lower-case
        // expansion that contains a combining mark splits the word the same way every time.
        for lower in c.to_lowercase() {
            if lower.is_alphanumeric() {
                if pending_space && !out.is_empty() {
                    out.push(b' ');
                }
                pending_space = false;
                let mut buf = [0u8; 4];
                out.extend_from_slice(lower.encode_utf8(&mut buf).as_bytes());
            } else {
                pending_space = true;
            }
        }
    }
    // Only whole characters were copied, so the bytes are valid UTF-8.
    String::from_utf8(out).unwrap_or_default()
}

/// The words of the [normalised](normalise) text.
///
/// ```
/// use rag_packer::normalised_words;
///
/// assert_eq!(normalised_words("Hello, World!"), ["hello", "world"]);
/// ```
pub fn normalised_words(text: &str) -> Vec<String> {
    normalise(text)
        .split(' ')
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The word `size`-shingles of `words`: every run of `size` consecutive words, joined by one space.
///
/// A text of fewer than `size` words (but at least one) is a single shingle of all its words, so
/// short texts still compare; no words give the empty set. A `size` of 0 is treated as 1.
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
fn similarity_from_counts(overlap: usize, len_a: usize, len_b: usize) -> f64 {
    let union = len_a + len_b - overlap;
    if union == 0 { 0.0 } else { overlap as f64 / union as f64 }
}

/// The SHA-256 of the [normalised](normalise) text: the key of exact dedup.
pub fn content_hash(text: &str) -> [u8; 32] {
    Sha256::digest(normalise(text).as_bytes()).into()
}

/// What dedup decided for one text; `of` is an index into the same slice.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DedupVerdict {
    /// The text survives (it may still be left out later for lack of room).
    Kept,
    /// Its normalised text equals that of the kept text `of` (the first such kept text).
    ExactDuplicate {
        /// Index of the kept text it duplicates.
        of: usize,
    },
    /// Its shingle set has Jaccard similarity at least the threshold with the kept text `of`.
    NearDuplicate {
        /// Index of the first kept text (pinned first, then rank order) at or above the threshold.
        of: usize,
        /// The similarity with that text.
        similarity: f64,
    },
}

/// Exact dedup: drops each text whose normalised form equals that of a text kept before it.
///
/// `texts` are in priority order; the first `anchors` (pinned chunks) are always kept. A `None` text
/// (a chunk known only by its `content_ref`) cannot be compared and is always kept.
///
/// ```
/// use rag_packer::{DedupVerdict, hash_dedup};
///
/// let texts = [Some("Refunds take 30 days."), Some("refunds TAKE 30 days"), Some("Other.")];
/// assert_eq!(
///     hash_dedup(&texts, 0),
///     [DedupVerdict::Kept, DedupVerdict::ExactDuplicate { of: 0 }, DedupVerdict::Kept]
/// );
/// ```
pub fn hash_dedup(texts: &[Option<&str>], anchors: usize) -> Vec<DedupVerdict> {
    let mut kept: HashMap<[u8; 32], usize> = HashMap::with_capacity(texts.len());
    texts
        .iter()
        .enumerate()
        .map(|(i, text)| {
            let Some(text) = text else { return DedupVerdict::Kept };
            match kept.entry(content_hash(text)) {
                Entry::Occupied(first) if i >= anchors => DedupVerdict::ExactDuplicate { of: *first.get() },
                Entry::Occupied(_) => DedupVerdict::Kept,
                Entry::Vacant(slot) => {
                    slot.insert(i);
                    DedupVerdict::Kept
                }
            }
        })
        .collect()
}

/// Exact and near dedup in one pass: each text is first checked for an exact duplicate, then for a
/// kept text whose word `shingle_size`-shingles reach Jaccard `threshold` with its own.
///
/// The result equals the all-pairs definition: text `i` (not an anchor) is a near duplicate of the
/// first kept `j < i` with `jaccard(shingles(i), shingles(j)) >= threshold`. Errors if `threshold`
/// is not in `(0, 1]` or `shingle_size` is 0.
///
/// ```
/// use rag_packer::{DedupVerdict, jaccard_dedup};
///
/// let texts = [
///     Some("the quick brown fox jumps over the lazy dog"),
///     Some("the quick brown fox jumps over the lazy cat"),
/// ];
/// let verdicts = jaccard_dedup(&texts, 0, 0.5, 3)?;
/// assert_eq!(verdicts[1], DedupVerdict::NearDuplicate { of: 0, similarity: 6.0 / 8.0 });
/// # Ok::<(), rag_core::PackerError>(())
/// ```
pub fn jaccard_dedup(
    texts: &[Option<&str>],
    anchors: usize,
    threshold: f64,
    shingle_size: usize,
) -> Result<Vec<DedupVerdict>, PackerError> {
    check_near_config(threshold, shingle_size)?;
    let normalised: Vec<Option<String>> = texts.iter().map(|t| t.map(normalise)).collect();
    let sets = ShingleSets::build(&normalised, shingle_size, threshold);
    let expected_postings = sets.prefixes.iter().map(Vec::len).sum();
    let mut index = PrefixIndex::new(threshold, texts.len(), expected_postings);
    let mut exact: HashMap<[u8; 32], usize> = HashMap::with_capacity(texts.len());
    let mut verdicts = Vec::with_capacity(texts.len());
    for (i, text) in normalised.iter().enumerate() {
        let Some(text) = text else {
            verdicts.push(DedupVerdict::Kept);
            continue;
        };
        let hash: [u8; 32] = Sha256::digest(text.as_bytes()).into();
        let (set, prefix) = (&sets.sets[i], &sets.prefixes[i]);
        if i < anchors {
            exact.entry(hash).or_insert(i);
            index.insert(i, prefix);
            verdicts.push(DedupVerdict::Kept);
            continue;
        }
        if let Some(&of) = exact.get(&hash) {
            verdicts.push(DedupVerdict::ExactDuplicate { of });
            continue;
        }
        if let Some((of, similarity)) = index.first_match(set, prefix, &sets.sets) {
            verdicts.push(DedupVerdict::NearDuplicate { of, similarity });
            continue;
        }
        exact.insert(hash, i);
        index.insert(i, prefix);
        verdicts.push(DedupVerdict::Kept);
    }
    Ok(verdicts)
}

/// The near-dedup settings must make sense: a threshold of 0 would call every pair a duplicate.
pub(crate) fn check_near_config(threshold: f64, shingle_size: usize) -> Result<(), PackerError> {
    if !(threshold > 0.0 && threshold <= 1.0) {
        return Err(PackerError::InvalidConfig {
            message: format!("jaccard threshold must be in (0, 1], got {threshold}"),
        });
    }
    if shingle_size == 0 {
        return Err(PackerError::InvalidConfig {
            message: "shingle size must be at least 1".to_owned(),
        });
    }
    Ok(())
}

/// Every text's shingle set as 64-bit shingle hashes, sorted by hash, plus its prefix: the tokens
/// that come first in the global order prefix filtering needs.
struct ShingleSets {
    sets: Vec<Vec<u64>>,
    prefixes: Vec<Vec<u64>>,
}

impl ShingleSets {
    fn build(texts: &[Option<String>], size: usize, threshold: f64) -> Self {
        let sets: Vec<Vec<u64>> = texts
            .iter()
            .map(|text| {
                let mut set = text.as_deref().map(|t| shingle_hashes(t, size)).unwrap_or_default();
                set.sort_unstable();
                set.dedup();
                set
            })
            .collect();
        // Prefix filtering needs one global order of tokens; rarest first keeps the indexed
        // prefixes, and so the posting lists probed, short. Exact frequencies would need a table of
        // every distinct shingle, which dominates the run time, so a small counting sketch
        // estimates them instead: any order is correct as long as it is the same for every text,
        // and (estimated count, hash) is.
        let total: usize = sets.iter().map(Vec::len).sum();
        let buckets = (total / 8).next_power_of_two().clamp(1 << 10, 1 << 20);
        let mask = (buckets - 1) as u64;
        let mut counts = vec![0u32; buckets];
        for hash in sets.iter().flatten() {
            let bucket = &mut counts[(hash & mask) as usize];
            *bucket = bucket.saturating_add(1);
        }
        let prefix_len = |len: usize| prefix_len(threshold, len);
        let prefixes = sets
            .iter()
            .map(|set| {
                let p = prefix_len(set.len());
                let mut keyed: Vec<u128> = set
                    .iter()
                    .map(|&h| (u128::from(counts[(h & mask) as usize]) << 64) | u128::from(h))
                    .collect();
                if p < keyed.len() {
                    keyed.select_nth_unstable(p);
                    keyed.truncate(p);
                }
                keyed.into_iter().map(|k| k as u64).collect()
            })
            .collect();
        Self { sets, prefixes }
    }
}

/// How many leading tokens (in the global order) of a set of `len` tokens prefix filtering needs.
///
/// For Jaccard `J(x, y) >= t` the overlap is at least `ceil(t * max(|x|, |y|))`, so the first
/// `|x| - ceil(t * |x|) + 1` tokens of `x` and the corresponding prefix of `y` must share a token.
fn prefix_len(threshold: f64, len: usize) -> usize {
    // The small slack makes floating-point rounding err towards a longer prefix: that costs a
    // little filtering, never a missed pair.
    let min_overlap = ((threshold * len as f64) - 1e-9).ceil().max(1.0) as usize;
    (len - min_overlap.min(len) + 1).min(len)
}

/// The 64-bit hashes of the shingles of an already normalised text (duplicates included).
///
/// Shingles are compared by these hashes, not by their text. Two different shingles collide with
/// probability 2^-64 per pair, so among a million distinct shingles the chance that any collision
/// exists at all is about 3 in 100 million; a collision could shift one similarity by one shingle.
fn shingle_hashes(normalised: &str, size: usize) -> Vec<u64> {
    let bytes = normalised.as_bytes();
    let words: Vec<u64> = word_bounds(normalised)
        .into_iter()
        .map(|(s, e)| hash_word(&bytes[s..e]))
        .collect();
    if words.is_empty() {
        return Vec::new();
    }
    let window = size.min(words.len());
    words
        .windows(window)
        .map(|w| {
            finish(
                w.iter()
                    .fold(0u64, |h, word| (h.rotate_left(5) ^ word).wrapping_mul(MUL)),
            )
        })
        .collect()
}

/// Byte ranges of the words of a normalised text (words are separated by exactly one space).
fn word_bounds(normalised: &str) -> Vec<(usize, usize)> {
    let mut bounds = Vec::new();
    let mut start = 0;
    for (i, b) in normalised.bytes().enumerate() {
        if b == b' ' {
            if i > start {
                bounds.push((start, i));
            }
            start = i + 1;
        }
    }
    if normalised.len() > start {
        bounds.push((start, normalised.len()));
    }
    bounds
}

const MUL: u64 = 0x517c_c1b7_2722_0a95;

/// A fast, non-cryptographic word hash (FxHash-style over 8-byte blocks).
fn hash_word(bytes: &[u8]) -> u64 {
    let mut h = bytes.len() as u64;
    let mut blocks = bytes.chunks_exact(8);
    for block in &mut blocks {
        let mut word = [0u8; 8];
        word.copy_from_slice(block);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(word)).wrapping_mul(MUL);
    }
    let mut tail = [0u8; 8];
    tail[..blocks.remainder().len()].copy_from_slice(blocks.remainder());
    finish((h.rotate_left(5) ^ u64::from_le_bytes(tail)).wrapping_mul(MUL))
}

/// The SplitMix64 finaliser: spreads entropy to the low bits the hash table indexes by.
fn finish(mut h: u64) -> u64 {
    h ^= h >> 30;
    h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h ^= h >> 27;
    h = h.wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}

/// A hasher for keys that are already well-mixed 64-bit hashes: it passes them through.
#[derive(Default)]
struct PremixedHasher(u64);

impl Hasher for PremixedHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only `write_u64` is used by our keys; fold anything else in so the hasher stays correct.
        for b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(*b)).wrapping_mul(MUL);
        }
    }

    fn write_u64(&mut self, value: u64) {
        self.0 = value;
    }
}

/// The inverted index over the prefixes of kept shingle sets (see [`prefix_len`]): indexing only
/// prefixes and probing with the query's prefix misses no pair that reaches the threshold.
struct PrefixIndex {
    threshold: f64,
    /// Per token, the latest posting; postings of one token are chained through `next`. Most
    /// prefix tokens occur in one text only, so a chain avoids a vector per token.
    head: HashMap<u64, u32, BuildHasherDefault<PremixedHasher>>,
    posting_text: Vec<u32>,
    next: Vec<u32>,
    /// Per text, the last query that proposed it, so each pair is verified once.
    seen_by: Vec<u32>,
    proposals: Vec<u32>,
    query: u32,
}

const END: u32 = u32::MAX;

impl PrefixIndex {
    fn new(threshold: f64, texts: usize, expected_postings: usize) -> Self {
        Self {
            threshold,
            head: HashMap::with_capacity_and_hasher(expected_postings, BuildHasherDefault::default()),
            posting_text: Vec::with_capacity(expected_postings),
            next: Vec::with_capacity(expected_postings),
            seen_by: vec![u32::MAX; texts],
            proposals: Vec::new(),
            query: 0,
        }
    }

    fn insert(&mut self, text: usize, prefix: &[u64]) {
        for token in prefix {
            let node = self.posting_text.len() as u32;
            self.posting_text.push(text as u32);
            let previous = self.head.insert(*token, node).unwrap_or(END);
            self.next.push(previous);
        }
    }

    /// The first kept text (smallest index) whose similarity with `set` reaches the threshold.
    fn first_match(&mut self, set: &[u64], prefix: &[u64], sets: &[Vec<u64>]) -> Option<(usize, f64)> {
        if set.is_empty() {
            return None;
        }
        self.query = self.query.wrapping_add(1);
        self.proposals.clear();
        for token in prefix {
            let mut node = self.head.get(token).copied().unwrap_or(END);
            while node != END {
                let other = self.posting_text[node as usize];
                let seen = &mut self.seen_by[other as usize];
                if *seen != self.query {
                    *seen = self.query;
                    self.proposals.push(other);
                }
                node = self.next[node as usize];
            }
        }
        self.proposals.sort_unstable();
        for &other in &self.proposals {
            let other_set = &sets[other as usize];
            let (short, long) = if set.len() <= other_set.len() {
                (set.len(), other_set.len())
            } else {
                (other_set.len(), set.len())
            };
            // Length filter: J <= short / long, and float division is monotone, so this rejects
            // only pairs the exact check would reject too.
            if (short as f64 / long as f64) < self.threshold {
                continue;
            }
            let similarity = similarity_from_counts(overlap(set, other_set), set.len(), other_set.len());
            if similarity >= self.threshold {
                return Some((other as usize, similarity));
            }
        }
        None
    }
}

/// Size of the intersection of two sorted, duplicate-free slices.
fn overlap(a: &[u64], b: &[u64]) -> usize {
    let (mut i, mut j, mut count) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                count += 1;
                i += 1;
                j += 1;
            }
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// The definition, pair by pair, with the public string functions: what the index must equal.
    pub(crate) fn all_pairs(texts: &[Option<&str>], anchors: usize, threshold: f64, size: usize) -> Vec<DedupVerdict> {
        let norm: Vec<Option<String>> = texts.iter().map(|t| t.map(normalise)).collect();
        let sets: Vec<BTreeSet<String>> = norm
            .iter()
            .map(|t| {
                let words: Vec<&str> = t
                    .as_deref()
                    .unwrap_or("")
                    .split(' ')
                    .filter(|w| !w.is_empty())
                    .collect();
                shingles(&words, size)
            })
            .collect();
        let mut kept: Vec<usize> = Vec::new();
        let mut out = Vec::new();
        for i in 0..texts.len() {
            if norm[i].is_none() {
                out.push(DedupVerdict::Kept);
                continue;
            }
            if i < anchors {
                kept.push(i);
                out.push(DedupVerdict::Kept);
                continue;
            }
            if let Some(&of) = kept.iter().find(|&&k| norm[k] == norm[i]) {
                out.push(DedupVerdict::ExactDuplicate { of });
                continue;
            }
            if let Some((of, similarity)) = kept
                .iter()
                .map(|&k| (k, jaccard(&sets[i], &sets[k])))
                .find(|&(_, j)| j >= threshold)
            {
                out.push(DedupVerdict::NearDuplicate { of, similarity });
                continue;
            }
            kept.push(i);
            out.push(DedupVerdict::Kept);
        }
        out
    }

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
    fn shingles_follow_the_seed_examples() {
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

    #[test]
    fn hash_dedup_keeps_the_first_and_never_drops_anchors() {
        let texts = [
            Some("Same text."),
            Some("same TEXT"),
            None,
            Some("same text"),
            Some("new"),
        ];
        assert_eq!(
            hash_dedup(&texts, 2),
            [
                DedupVerdict::Kept,
                DedupVerdict::Kept,
                DedupVerdict::Kept,
                DedupVerdict::ExactDuplicate { of: 0 },
                DedupVerdict::Kept
            ]
        );
    }

    #[test]
    fn near_dedup_reports_the_first_kept_match() {
        // The knapsack seed's scenario: the same paragraph in two document versions.
        let v1 = "Rerankers score the query and the document together with full cross attention";
        let v2 = "Rerankers score the query and the document together with full cross attention.";
        let v3 = "Rerankers score the query and the document together with full cross attention today";
        let other = "Bi-encoders embed queries and documents separately for fast vector search";
        let texts = [Some(other), Some(v1), Some(v2), Some(v3)];
        let verdicts = jaccard_dedup(&texts, 0, 0.8, 3).unwrap();
        assert_eq!(verdicts[0], DedupVerdict::Kept);
        assert_eq!(verdicts[1], DedupVerdict::Kept);
        assert_eq!(verdicts[2], DedupVerdict::ExactDuplicate { of: 1 });
        assert_eq!(
            verdicts[3],
            DedupVerdict::NearDuplicate {
                of: 1,
                similarity: 10.0 / 11.0
            }
        );
        assert_eq!(verdicts, all_pairs(&texts, 0, 0.8, 3));
    }

    #[test]
    fn a_dropped_text_is_not_a_reference_for_later_ones() {
        // b is a near duplicate of the anchor a; c is identical to b but must point at a.
        let a = "one two three four five six seven eight nine ten";
        let b = "one two three four five six seven eight nine ten eleven";
        let texts = [Some(a), Some(b), Some(b)];
        let verdicts = jaccard_dedup(&texts, 1, 0.8, 2).unwrap();
        assert!(matches!(verdicts[1], DedupVerdict::NearDuplicate { of: 0, .. }));
        assert!(matches!(verdicts[2], DedupVerdict::NearDuplicate { of: 0, .. }));
    }

    #[test]
    fn invalid_near_settings_are_errors() {
        for threshold in [0.0, -0.5, 1.5, f64::NAN] {
            let err = jaccard_dedup(&[], 0, threshold, 5).unwrap_err();
            assert!(err.to_string().contains("jaccard threshold must be in (0, 1]"), "{err}");
        }
        let err = jaccard_dedup(&[], 0, 0.8, 0).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid packer configuration: shingle size must be at least 1"
        );
    }

    fn small_text() -> impl Strategy<Value = Option<String>> {
        // A tiny vocabulary makes near duplicates frequent, so the property is exercised.
        let word = prop::sample::select(vec!["a", "b", "c", "d", "e", "Ab", "x"]);
        prop::option::weighted(0.95, prop::collection::vec(word, 0..9).prop_map(|w| w.join(" ")))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn near_dedup_equals_the_all_pairs_definition(
            texts in prop::collection::vec(small_text(), 0..24),
            anchors in 0usize..4,
            threshold in prop::sample::select(vec![0.1, 0.34, 0.5, 0.6, 0.75, 0.8, 0.9, 1.0]),
            size in 1usize..4,
        ) {
            let refs: Vec<Option<&str>> = texts.iter().map(|t| t.as_deref()).collect();
            prop_assert_eq!(jaccard_dedup(&refs, anchors, threshold, size).unwrap(), all_pairs(&refs, anchors, threshold, size));
        }
    }
}
