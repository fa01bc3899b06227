//! Scoring chunks that arrive without a retriever's score, so a local pipeline still ranks.

use std::collections::{HashMap, HashSet};

use crate::dedup::normalised_words;

/// BM25's term-frequency saturation.
pub const BM25_K1: f64 = 1.2;
/// BM25's length normalisation.
pub const BM25_B: f64 = 0.75;

/// Okapi BM25 scores of `texts` against `query`, computed over `texts` as the corpus and scaled so
/// the best text scores 1.0.
///
/// Terms are [normalised words](normalised_words) reduced by a light English suffix stemmer
/// ([`stem`]), so "reranking" finds "rerankers"; each distinct query term counts once. The
/// inverse document frequency is `ln(1 + (N - n + 0.5) / (n + 0.5))`, which stays positive even
/// for a term in every text. If no text shares a term with the query, every score is 0.0.
///
/// ```
/// use rag_packer::bm25_scores;
///
/// let texts = ["Rerankers score query and document together.", "Chunking splits documents.", "Packing packs."];
/// let scores = bm25_scores("how do rerankers score documents", &texts);
/// assert_eq!(scores[0], 1.0);
/// assert!(scores[1] > 0.0 && scores[1] < 1.0);
/// assert_eq!(scores[2], 0.0);
/// ```
pub fn bm25_scores(query: &str, texts: &[&str]) -> Vec<f64> {
    let terms = |text: &str| -> Vec<String> {
        normalised_words(text)
            .into_iter()
            .map(|w| stem(&w).to_owned())
            .collect()
    };
    let docs: Vec<Vec<String>> = texts.iter().map(|t| terms(t)).collect();
    let mut query_terms: Vec<String> = terms(query);
    query_terms.sort_unstable();
    query_terms.dedup();
    let query_set: HashSet<&str> = query_terms.iter().map(String::as_str).collect();

    // Only query terms matter, so term frequencies are counted for those alone.
    let frequencies: Vec<HashMap<&str, usize>> = docs
        .iter()
        .map(|words| {
            let mut tf = HashMap::new();
            for word in words.iter().map(String::as_str).filter(|w| query_set.contains(w)) {
                *tf.entry(word).or_insert(0) += 1;
            }
            tf
        })
        .collect();
    let n = docs.len() as f64;
    let average_length = if docs.is_empty() {
        0.0
    } else {
        docs.iter().map(Vec::len).sum::<usize>() as f64 / n
    };
    let idf: HashMap<&str, f64> = query_terms
        .iter()
        .map(|term| {
            let containing = frequencies.iter().filter(|tf| tf.contains_key(term.as_str())).count() as f64;
            (term.as_str(), (1.0 + (n - containing + 0.5) / (containing + 0.5)).ln())
        })
        .collect();
    let raw: Vec<f64> = docs
        .iter()
        .zip(&frequencies)
        .map(|(words, tf)| {
            let length_ratio = if average_length > 0.0 {
                words.len() as f64 / average_length
            } else {
                0.0
            };
            query_terms
                .iter()
                .map(|term| {
                    let f = tf.get(term.as_str()).copied().unwrap_or(0) as f64;
                    let weight = idf.get(term.as_str()).copied().unwrap_or(0.0);
                    weight * f * (BM25_K1 + 1.0) / (f + BM25_K1 * (1.0 - BM25_B + BM25_B * length_ratio))
                })
                .sum()
        })
        .collect();
    let max = raw.iter().copied().fold(0.0f64, f64::max);
    if max > 0.0 {
        raw.into_iter().map(|s| s / max).collect()
    } else {
        raw
    }
}

/// Strips one common English inflection (`-ing`, `-ers`, `-er`, `-ed`, `-s`) from a lower-case
/// word, keeping at least three characters, so that a query matches the forms documents use
/// ("reranking", "rerankers" and "reranker" all become "rerank").
///
/// Deliberately crude: it is a recall aid for the local BM25 fallback, not a linguistic stemmer;
/// retrieval systems bring their own scores.
///
/// ```
/// use rag_packer::stem;
///
/// assert_eq!(stem("reranking"), "rerank");
/// assert_eq!(stem("chunkers"), "chunk");
/// assert_eq!(stem("packed"), "pack");
/// assert_eq!(stem("class"), "class");
/// assert_eq!(stem("ring"), "ring");
/// ```
pub fn stem(word: &str) -> &str {
    const SUFFIXES: [&str; 5] = ["ing", "ers", "er", "ed", "s"];
    for suffix in SUFFIXES {
        if let Some(base) = word.strip_suffix(suffix)
            && base.chars().count() >= 3
        {
            if suffix == "s" && (base.ends_with('s') || base.ends_with('u') || base.ends_with('i')) {
                // "class", "status", "analysis": the s is part of the word.
                return word;
            }
            return base;
        }
    }
    word
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inflections_of_a_query_term_match() {
        let texts = ["Rerankers score pairs.", "A reranker helps.", "Chunking text."];
        let scores = bm25_scores("explain reranking", &texts);
        assert!(scores[0] > 0.0 && scores[1] > 0.0, "{scores:?}");
        assert_eq!(scores[2], 0.0);
    }

    #[test]
    fn scores_are_normalised_and_deterministic() {
        let texts = ["apple banana", "apple apple apple", "cherry"];
        let scores = bm25_scores("apple", &texts);
        assert_eq!(scores.iter().copied().fold(0.0, f64::max), 1.0);
        assert!(scores[1] > scores[0], "more occurrences score higher: {scores:?}");
        assert_eq!(scores[2], 0.0);
        assert_eq!(
            scores,
            bm25_scores("APPLE apple!", &texts),
            "query terms are normalised and distinct"
        );
    }

    #[test]
    fn matches_a_hand_computed_value() {
        // Two texts, one term in one of them: idf = ln(1 + 1.5 / 1.5) = ln 2; the lone hit is the max.
        let scores = bm25_scores("cat", &["the cat", "a dog"]);
        assert_eq!(scores, [1.0, 0.0]);
        let texts = ["cat", "cat dog dog dog"];
        let raw = |len: f64| 2.2 / (1.0 + 1.2 * (0.25 + 0.75 * len / 2.5));
        let scores = bm25_scores("cat", &texts);
        assert!((scores[1] - raw(4.0) / raw(1.0)).abs() < 1e-12, "{scores:?}");
    }

    #[test]
    fn empty_inputs_score_zero() {
        assert_eq!(bm25_scores("", &["text"]), [0.0]);
        assert_eq!(bm25_scores("query", &[]), Vec::<f64>::new());
        assert_eq!(bm25_scores("query", &["", "other"]), [0.0, 0.0]);
    }
}
