//! The dedup against its definition: all pairs on small inputs, an exact inverted index on large
//! ones, and every parallel path.

use std::collections::{BTreeSet, HashMap};

use proptest::prelude::*;

use super::blocks::PARALLEL_MIN_BYTES;
use super::hashing::finish;
use super::near::PARALLEL_MIN_HINTS;
use super::*;

/// The definition, pair by pair, with the public string functions: what the index must equal.
fn all_pairs(texts: &[Option<&str>], anchors: usize, threshold: f64, size: usize) -> Vec<DedupVerdict> {
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
    // The same paragraph in two document versions, the case near dedup is for.
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
fn headings_that_differ_in_one_long_word_are_not_near_duplicates() {
    // Their word hashes once collided, which made the second a near duplicate at similarity 1.
    let texts = [
        Some("## `dns.resolveCaa(hostname, callback)`"),
        Some("## `dns.resolveSoa(hostname, callback)`"),
    ];
    for size in [1, 3, 5] {
        let verdicts = jaccard_dedup(&texts, 0, 0.8, size).unwrap();
        assert_eq!(
            verdicts,
            [DedupVerdict::Kept, DedupVerdict::Kept],
            "shingle size {size}"
        );
        assert_eq!(verdicts, all_pairs(&texts, 0, 0.8, size));
    }
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

/// The definition, with an inverted index from shingle string to kept texts instead of all
/// pairs (a text sharing no shingle with a kept one has similarity 0): fast enough for
/// thousands of texts in a debug build.
fn indexed_reference(texts: &[Option<&str>], anchors: usize, threshold: f64, size: usize) -> Vec<DedupVerdict> {
    let sets: Vec<BTreeSet<String>> = texts
        .iter()
        .map(|t| shingles(&normalised_words(t.unwrap_or("")), size))
        .collect();
    let mut kept_text: HashMap<String, usize> = HashMap::new();
    let mut postings: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut out = Vec::new();
    for (i, text) in texts.iter().enumerate() {
        let Some(text) = text else {
            out.push(DedupVerdict::Kept);
            continue;
        };
        let norm = normalise(text);
        let verdict = if i < anchors {
            DedupVerdict::Kept
        } else if let Some(&of) = kept_text.get(&norm) {
            DedupVerdict::ExactDuplicate { of }
        } else {
            let mut candidates: Vec<usize> = sets[i]
                .iter()
                .flat_map(|s| postings.get(s.as_str()).into_iter().flatten().copied())
                .collect();
            candidates.sort_unstable();
            candidates.dedup();
            candidates
                .into_iter()
                .map(|k| (k, jaccard(&sets[i], &sets[k])))
                .find(|&(_, j)| j >= threshold)
                .map_or(DedupVerdict::Kept, |(of, similarity)| DedupVerdict::NearDuplicate {
                    of,
                    similarity,
                })
        };
        if verdict == DedupVerdict::Kept {
            kept_text.entry(norm).or_insert(i);
            for s in &sets[i] {
                postings.entry(s.as_str()).or_default().push(i);
            }
        }
        out.push(verdict);
    }
    out
}

/// Deterministic random words for the tests at scale (SplitMix64 from a seed).
struct RandomWords(u64);

impl RandomWords {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = finish(self.0.wrapping_add(1));
        self.0 % n
    }

    /// `len` words from `w0` to `w{vocabulary - 1}`.
    fn words(&mut self, len: u64, vocabulary: u64) -> Vec<String> {
        (0..len).map(|_| format!("w{}", self.below(vocabulary))).collect()
    }

    /// Replaces `edits` words of `words`, each by one of `{prefix}0` to `{prefix}{choices - 1}`.
    fn edit(&mut self, words: &mut [String], edits: u64, prefix: &str, choices: u64) {
        for _ in 0..edits {
            let at = self.below(words.len() as u64) as usize;
            words[at] = format!("{prefix}{}", self.below(choices));
        }
    }
}

#[test]
fn every_parallel_path_equals_the_definition_at_scale() {
    // Enough texts and bytes for the parallel per-text pass, the parallel shared-token search
    // and the first verifications ahead; a boilerplate sentence in a third of the texts, so
    // some shingles are common; near copies, exact and re-cased copies, `None`s, empty texts.
    let mut random = RandomWords(0x2545_f491_4f6c_dd1d);
    let boilerplate = "see the documentation for more details about the refund window";
    let bases: Vec<Vec<String>> = (0..300)
        .map(|_| {
            let len = 20 + random.below(20);
            random.words(len, 4000)
        })
        .collect();
    let texts: Vec<Option<String>> = (0..2600)
        .map(|i| {
            let mut words = bases[random.below(300) as usize].clone();
            let edits = random.below(10);
            random.edit(&mut words, edits, "x", 80);
            let mut text = words.join(" ");
            if i % 3 == 0 {
                text = format!("{boilerplate} {text}");
            }
            match i % 211 {
                0 => None,
                1 => Some(String::new()),
                2 => Some(text.to_uppercase()),
                _ => Some(text),
            }
        })
        .collect();
    let refs: Vec<Option<&str>> = texts.iter().map(|t| t.as_deref()).collect();
    assert!(refs.len() >= PARALLEL_MIN_HINTS);
    assert!(refs.iter().flatten().map(|t| t.len()).sum::<usize>() >= PARALLEL_MIN_BYTES);
    for (anchors, threshold, size) in [(0, 0.8, 5), (7, 0.6, 2)] {
        let got = jaccard_dedup(&refs, anchors, threshold, size).unwrap();
        assert!(got.iter().any(|v| matches!(v, DedupVerdict::NearDuplicate { .. })));
        assert_eq!(
            got,
            indexed_reference(&refs, anchors, threshold, size),
            "{threshold} {size}"
        );
    }
}

#[test]
fn verifying_first_candidates_ahead_changes_no_verdict() {
    // Clusters of near copies (some below the threshold, some exact, some empty) so that
    // first candidates are kept, dropped, above and below the threshold.
    let mut random = RandomWords(0x9e37_79b9_7f4a_7c15);
    let bases: Vec<Vec<String>> = (0..40).map(|_| random.words(30, 3000)).collect();
    let texts: Vec<Option<String>> = (0..600)
        .map(|i| {
            let mut words = bases[random.below(40) as usize].clone();
            let edits = random.below(8);
            random.edit(&mut words, edits, "x", 50);
            match i % 97 {
                0 => None,
                1 => Some(String::new()),
                _ => Some(words.join(" ")),
            }
        })
        .collect();
    let refs: Vec<Option<&str>> = texts.iter().map(|t| t.as_deref()).collect();
    let order: Vec<usize> = (0..refs.len()).collect();
    for (anchors, threshold, size) in [(0, 0.8, 3), (5, 0.7, 2), (0, 0.95, 1)] {
        let prepared = PreparedTexts::new(&refs, Some((threshold, size)));
        let (hinted, fallback) = prepared.verdicts_with(&refs, &order, anchors, true, None);
        assert_eq!(fallback, None);
        assert_eq!(hinted, prepared.verdicts_with(&refs, &order, anchors, false, None).0);
        assert_eq!(hinted, all_pairs(&refs, anchors, threshold, size), "{threshold} {size}");
        assert!(hinted.iter().any(|v| matches!(v, DedupVerdict::NearDuplicate { .. })));
    }
}

#[test]
fn the_parallel_pass_equals_the_all_pairs_definition() {
    // Enough text to cross PARALLEL_MIN_BYTES, so blocks are analysed on the rayon pool: a few
    // base texts, each repeated with a growing number of words replaced, so similarities
    // spread around the threshold, plus exact copies (some in a different case) and `None`s.
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let bases: Vec<Vec<String>> = (0..12)
        .map(|_| (0..160).map(|_| format!("w{}", next() % 5_000)).collect())
        .collect();
    let mut texts: Vec<Option<String>> = Vec::new();
    for i in 0..360 {
        let mut words = bases[i % bases.len()].clone();
        for _ in 0..(i / bases.len()) % 15 {
            let at = (next() % words.len() as u64) as usize;
            words[at] = format!("new{}", next() % 100);
        }
        let text = words.join(" ");
        let previous = texts.last().cloned().flatten();
        texts.push(match i % 29 {
            0 => None,
            7 => previous.map(|t| t.to_uppercase()),
            13 => previous,
            _ => Some(text),
        });
    }
    let refs: Vec<Option<&str>> = texts.iter().map(|t| t.as_deref()).collect();
    assert!(refs.iter().flatten().map(|t| t.len()).sum::<usize>() > PARALLEL_MIN_BYTES);
    for (anchors, threshold, size) in [(0, 0.8, 5), (3, 0.9, 3), (0, 0.5, 1)] {
        let verdicts = jaccard_dedup(&refs, anchors, threshold, size).unwrap();
        assert!(verdicts.iter().any(|v| matches!(v, DedupVerdict::NearDuplicate { .. })));
        assert!(
            verdicts
                .iter()
                .any(|v| matches!(v, DedupVerdict::ExactDuplicate { .. }))
        );
        assert_eq!(
            verdicts,
            all_pairs(&refs, anchors, threshold, size),
            "{threshold} {size}"
        );
        assert_eq!(hash_dedup(&refs, anchors), all_pairs(&refs, anchors, 2.0, size));
    }
}

/// What near dedup promises past its work bound, checked against the definition: the texts before
/// the fallback get the definition's verdicts; after it, exact duplicates are still exact, and a
/// near duplicate always reaches the threshold, at the similarity it reports, with a text kept
/// before it (it may be missed, never made up).
fn assert_sound(
    texts: &[Option<&str>],
    anchors: usize,
    threshold: f64,
    size: usize,
    verdicts: &[DedupVerdict],
    exact: usize,
) {
    assert_eq!(verdicts[..exact], all_pairs(&texts[..exact], anchors, threshold, size));
    let norm: Vec<Option<String>> = texts.iter().map(|t| t.map(normalise)).collect();
    let set = |p: usize| shingles(&normalised_words(texts[p].unwrap_or("")), size);
    let kept_before = |p: usize| (0..p).filter(|&q| verdicts[q] == DedupVerdict::Kept && norm[q].is_some());
    for p in exact..texts.len() {
        let first_equal = kept_before(p).find(|&q| norm[q] == norm[p]);
        match verdicts[p] {
            _ if norm[p].is_none() || p < anchors => assert_eq!(verdicts[p], DedupVerdict::Kept, "{p}"),
            DedupVerdict::ExactDuplicate { of } => assert_eq!(Some(of), first_equal, "{p}"),
            DedupVerdict::NearDuplicate { of, similarity } => {
                assert_eq!(first_equal, None, "{p}");
                assert!(of < p && verdicts[of] == DedupVerdict::Kept, "{p} of {of}");
                assert_eq!(similarity, jaccard(&set(p), &set(of)), "{p} of {of}");
                assert!(similarity >= threshold, "{p} of {of}: {similarity}");
            }
            DedupVerdict::Kept => assert_eq!(first_equal, None, "{p}"),
        }
    }
}

/// `count` texts of 10 sentences each, drawn from a pool of 40 sentences of 12 to 20 words: every
/// shingle is common, which makes the exact search verify nearly every pair.
fn boilerplate(random: &mut RandomWords, count: usize) -> Vec<String> {
    let pool: Vec<String> = (0..40)
        .map(|_| {
            let len = 12 + random.below(9);
            random.words(len, 300).join(" ")
        })
        .collect();
    (0..count)
        .map(|_| {
            let sentences: Vec<&str> = (0..10).map(|_| pool[random.below(40) as usize].as_str()).collect();
            sentences.join(". ")
        })
        .collect()
}

#[test]
fn past_its_work_bound_near_dedup_goes_approximate_and_says_where() {
    let mut random = RandomWords(0x5eed_0b01);
    let mut texts = boilerplate(&mut random, 300);
    // Some exact copies, so that exact duplicates are decided past the bound too.
    for i in (0..300).step_by(37) {
        texts.push(texts[i].to_uppercase());
    }
    let refs: Vec<Option<&str>> = texts.iter().map(|t| Some(t.as_str())).collect();
    let order: Vec<usize> = (0..refs.len()).collect();
    let (anchors, threshold, size) = (3, 0.5, 3);
    let prepared = PreparedTexts::new(&refs, Some((threshold, size)));

    let (exact, fallback) = prepared.verdicts_with(&refs, &order, anchors, false, None);
    assert_eq!(fallback, None, "below the default bound");
    assert_eq!(exact, all_pairs(&refs, anchors, threshold, size));
    assert!(exact.iter().any(|v| matches!(v, DedupVerdict::NearDuplicate { .. })));

    let (verdicts, fallback) = prepared.verdicts_with(&refs, &order, anchors, false, Some(200_000));
    let fallback = fallback.expect("past a bound of 200,000 units");
    assert!(fallback.exact > anchors && fallback.exact < 300, "{}", fallback.exact);
    assert_eq!((fallback.texts, fallback.bound), (refs.len(), 200_000));
    assert!(
        fallback.to_string().starts_with(&format!(
            "near dedup fell back to MinHash LSH after the first {} of {} chunks in rank order: the exact search \
             passed its work bound of 200000 units; later chunks were compared through 42 bands of 3 of 128 hashes",
            fallback.exact,
            refs.len()
        )),
        "{fallback}"
    );
    assert_sound(&refs, anchors, threshold, size, &verdicts, fallback.exact);
    assert!(
        verdicts[fallback.exact..]
            .iter()
            .any(|v| matches!(v, DedupVerdict::ExactDuplicate { .. }))
    );
}

#[test]
fn the_approximate_search_finds_near_copies() {
    // Near copies (one word in a hundred replaced: J about 0.9 for 5-word shingles) among
    // unrelated texts, decided past a bound of zero: each is proposed and verified.
    let mut random = RandomWords(0xc0_91e5);
    let originals: Vec<Vec<String>> = (0..200).map(|_| random.words(100, 50_000)).collect();
    // Each of the first 100 originals followed by its copy: the first copy is the first text that
    // costs the exact search any work, so every later one is decided by the approximate search.
    let mut texts: Vec<String> = Vec::new();
    for (i, original) in originals.iter().enumerate() {
        texts.push(original.join(" "));
        if i < 100 {
            let mut copy = original.clone();
            random.edit(&mut copy, 1, "new", 1_000);
            texts.push(copy.join(" "));
        }
    }
    let refs: Vec<Option<&str>> = texts.iter().map(|t| Some(t.as_str())).collect();
    let order: Vec<usize> = (0..refs.len()).collect();
    let prepared = PreparedTexts::new(&refs, Some((0.5, 5)));
    let (verdicts, fallback) = prepared.verdicts_with(&refs, &order, 0, false, Some(0));
    let exact = fallback.expect("past a bound of zero").exact;
    assert_eq!(exact, 2);
    assert_sound(&refs, 0, 0.5, 5, &verdicts, exact);
    assert_eq!(verdicts, all_pairs(&refs, 0, 0.5, 5));
    assert_eq!(
        verdicts
            .iter()
            .filter(|v| matches!(v, DedupVerdict::NearDuplicate { .. }))
            .count(),
        100
    );
}

#[test]
fn the_fallback_gives_the_same_verdicts_on_any_number_of_threads() {
    // Large enough for every parallel path (the per-text pass, the shared tokens, the first
    // verifications ahead, the band keys of several windows).
    let mut random = RandomWords(0x7_4ead5);
    let texts = boilerplate(&mut random, 5_000);
    let refs: Vec<Option<&str>> = texts.iter().map(|t| Some(t.as_str())).collect();
    assert!(refs.iter().flatten().map(|t| t.len()).sum::<usize>() >= PARALLEL_MIN_BYTES);
    let order: Vec<usize> = (0..refs.len()).rev().collect();
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| {
            PreparedTexts::new(&refs, Some((0.5, 5))).verdicts_with(&refs, &order, 0, true, Some(1_000_000))
        })
    };
    let (one, fallback) = run(1);
    assert!(fallback.as_ref().is_some_and(|f| f.exact < 1_000));
    assert_eq!(run(3), (one, fallback));
}

fn small_text() -> impl Strategy<Value = Option<String>> {
    // A tiny vocabulary makes near duplicates frequent, so the property is exercised.
    let word = prop::sample::select(vec!["a", "b", "c", "d", "e", "Ab", "x"]);
    prop::option::weighted(0.95, prop::collection::vec(word, 0..9).prop_map(|w| w.join(" ")))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn near_dedup_equals_the_all_pairs_definition_and_past_a_bound_drops_only_real_duplicates(
        texts in prop::collection::vec(small_text(), 0..24),
        anchors in 0usize..4,
        threshold in prop::sample::select(vec![0.1, 0.34, 0.5, 0.6, 0.75, 0.8, 0.9, 1.0]),
        size in 1usize..4,
        bound in 0u64..40,
    ) {
        let refs: Vec<Option<&str>> = texts.iter().map(|t| t.as_deref()).collect();
        prop_assert_eq!(jaccard_dedup(&refs, anchors, threshold, size).unwrap(), all_pairs(&refs, anchors, threshold, size));
        let order: Vec<usize> = (0..refs.len()).collect();
        let prepared = PreparedTexts::new(&refs, Some((threshold, size)));
        let (verdicts, fallback) = prepared.verdicts_with(&refs, &order, anchors, false, Some(bound));
        assert_sound(&refs, anchors, threshold, size, &verdicts, fallback.map_or(refs.len(), |f| f.exact));
    }

    #[test]
    fn prepared_texts_in_any_order_give_the_verdicts_of_that_order(
        texts in prop::collection::vec(small_text(), 0..24),
        anchors in 0usize..4,
        rotate in 0usize..24,
        threshold in prop::sample::select(vec![0.34, 0.6, 0.8, 1.0]),
        near in any::<bool>(),
    ) {
        // The packer prepares texts in input order and asks for verdicts in priority order.
        let refs: Vec<Option<&str>> = texts.iter().map(|t| t.as_deref()).collect();
        let mut order: Vec<usize> = (0..refs.len()).rev().collect();
        let by = rotate.min(order.len());
        order.rotate_left(by);
        let in_priority: Vec<Option<&str>> = order.iter().map(|&i| refs[i]).collect();
        let (settings, want) = if near {
            (Some((threshold, 2)), jaccard_dedup(&in_priority, anchors, threshold, 2).unwrap())
        } else {
            (None, hash_dedup(&in_priority, anchors))
        };
        prop_assert_eq!(PreparedTexts::new(&refs, settings).verdicts(&refs, &order, anchors).0, want);
    }

    #[test]
    fn near_dedup_equals_all_pairs_on_long_mutated_texts(
        base in prop::collection::vec(long_word(), 10..60),
        edits in prop::collection::vec(prop::collection::vec((any::<prop::sample::Index>(), long_word()), 0..6), 1..20),
        anchors in 0usize..3,
        threshold in prop::sample::select(vec![0.3, 0.5, 0.7, 0.8, 0.85, 0.9, 0.95]),
        size in 1usize..6,
    ) {
        // Variants of one text, a few words replaced each: sets long enough that prefixes are
        // much shorter than the sets, with similarities spread around every threshold.
        let texts: Vec<Option<String>> = edits
            .iter()
            .map(|edit| {
                let mut words = base.clone();
                for (at, word) in edit {
                    let at = at.index(words.len());
                    words[at] = word.clone();
                }
                Some(words.join(" "))
            })
            .collect();
        let refs: Vec<Option<&str>> = texts.iter().map(|t| t.as_deref()).collect();
        prop_assert_eq!(jaccard_dedup(&refs, anchors, threshold, size).unwrap(), all_pairs(&refs, anchors, threshold, size));
        prop_assert_eq!(hash_dedup(&refs, anchors), all_pairs(&refs, anchors, 2.0, size));
    }

}

/// Words whose normalisation is not the identity (case, accents, dotted capitals, `ß`), with
/// punctuation and digits, and one long enough to span several hash words.
fn long_word() -> impl Strategy<Value = String> {
    let words = "alpha Beta gamma DELTA épée Straße İzmir naïve x y z 3.5 ab-cd verylongwordindeed ÇA über";
    prop::sample::select(words.split(' ').collect::<Vec<_>>()).prop_map(str::to_owned)
}
