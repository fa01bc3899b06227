//! Scoring chunks that arrive without a retriever's score, so a local pipeline still ranks: Okapi
//! BM25 over each chunk's heading path and text, with the analysis a search engine applies, and
//! the policy that decides when the packer applies it ([`score_missing`]).
//!
//! The analysis ([`search_terms`]): words are runs of letters and digits; an identifier also
//! counts as its parts (`readLines` is `readlines`, `read` and `lines`; `read_file` is `read` and
//! `file`); words are lower-cased, English stop words (NLTK's list) are dropped and the rest
//! reduced by the Snowball English stemmer, so "how do I read a file line by line" searches for
//! `read`, `file` and `line`, and finds `filehandle.readLines()`. Scripts written without spaces
//! (Chinese, Japanese, Korean's Hangul, Thai) are cut into overlapping character bigrams, as
//! Lucene's CJK analyser does, so `首都` finds `東京は日本の首都です`.
//!
//! The files: `analysis.rs` (terms), `bm25.rs` (the scores, over sparse postings), `hybrid.rs`
//! (BM25 fused with the cosine of an embedder's vectors), `policy.rs` (when the packer scores,
//! and what it reports).

mod analysis;
mod bm25;
mod hybrid;
mod policy;

use rag_core::{Chunk, PackerError};

pub use self::analysis::{search_terms, stem};
pub use self::bm25::{BM25_B, BM25_K1, MAX_QUERY_TERMS};
use self::bm25::{Query, analyse, bm25};
pub use self::hybrid::{DEFAULT_FUSION, EMBED_BATCH, HybridScoring, cosine, fuse, score_missing_hybrid};
pub use self::policy::score_missing;
pub(crate) use self::policy::{given_scoring, relevance_floor};

/// How many times a term of a chunk's heading path counts, against once in its text. The heading
/// path names what a section is about (the API, the task), so a body chunk that never repeats its
/// method's name still matches it; weighting it more than the text made every chunk of a matching
/// section outrank the passage that answers (see `docs/quality.md`), so it counts once.
pub const HEADING_WEIGHT: usize = 1;

/// Okapi BM25 scores of `texts` against `query`, computed over `texts` as the corpus and scaled so
/// the best text scores 1.0.
///
/// Terms are [`search_terms`]; each distinct query term counts once, and a query of more than
/// [`MAX_QUERY_TERMS`] distinct terms is refused ([`PackerError::TooManyQueryTerms`]). The inverse
/// document frequency is `ln(1 + (N - n + 0.5) / (n + 0.5))`, which stays positive even for a term
/// in every text. A text that holds no query term scores exactly 0.0; if none does, every score is
/// 0.0. Each text keeps only the query terms it holds, so the cost grows with the texts plus the
/// query, not with their product.
///
/// ```
/// use rag_packer::bm25_scores;
///
/// let texts = ["Rerankers score query and document together.", "Chunking splits documents.", "Packing packs."];
/// let scores = bm25_scores("how do rerankers score documents", &texts)?;
/// assert_eq!(scores[0], 1.0);
/// assert!(scores[1] > 0.0 && scores[1] < 1.0);
/// assert_eq!(scores[2], 0.0);
/// # Ok::<(), rag_core::PackerError>(())
/// ```
pub fn bm25_scores(query: &str, texts: &[&str]) -> Result<Vec<f64>, PackerError> {
    let query = Query::new(query)?;
    let analysed = analyse(&query, texts, |text, add| add(text, 1));
    Ok(bm25(query.terms.len(), &analysed))
}

/// BM25 scores of `chunks` against `query` over their heading path and text, as
/// [`bm25_scores`] computes them: a chunk's heading path ([`Chunk::heading_path`]) counts
/// [`HEADING_WEIGHT`] times, its content once. A chunk without content is scored on its heading
/// path alone.
///
/// Pass only chunks the principal may see: the scores depend on every chunk given. The packer
/// scores the visible ones itself when it has the query ([`score_missing`]).
///
/// ```
/// use rag_core::Chunk;
/// use rag_packer::bm25_chunk_scores;
///
/// let mut method = Chunk::with_content("fs#41", "fs.md", "t", "* `options` {Object}\n\nReturns an interface.");
/// method.metadata.insert("heading_path".into(), serde_json::json!(["File system", "filehandle.readLines()"]));
/// let other = Chunk::with_content("zlib#3", "zlib.md", "t", "Reading compressed files uses the thread pool.");
/// let scores = bm25_chunk_scores("how do I read a file line by line", &[method, other])?;
/// assert_eq!(scores[0], 1.0, "the heading path names the API");
/// assert!(scores[1] < 0.5);
/// # Ok::<(), rag_core::PackerError>(())
/// ```
pub fn bm25_chunk_scores(query: &str, chunks: &[Chunk]) -> Result<Vec<f64>, PackerError> {
    Ok(chunk_scores(&Query::new(query)?, chunks))
}

/// [`bm25_chunk_scores`] for a query already analysed.
fn chunk_scores(query: &Query, chunks: &[Chunk]) -> Vec<f64> {
    let analysed = analyse(query, chunks, |chunk, add| {
        for title in chunk.heading_path() {
            add(title, HEADING_WEIGHT);
        }
        add(chunk.content().unwrap_or_default(), 1);
    });
    bm25(query.terms.len(), &analysed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inflections_of_a_query_term_match() {
        let texts = ["Rerankers score pairs.", "A reranker helps.", "Chunking text."];
        let scores = bm25_scores("explain reranking", &texts).unwrap();
        assert!(scores[0] > 0.0 && scores[1] > 0.0, "{scores:?}");
        assert_eq!(scores[2], 0.0);
    }

    #[test]
    fn a_query_without_terms_scores_every_text_zero_not_minus_zero() {
        for query in ["", "how do I do it?"] {
            let scores = bm25_scores(query, &["Read the file.", ""]).unwrap();
            assert!(
                scores.iter().all(|s| *s == 0.0 && s.is_sign_positive()),
                "{query:?}: {scores:?}"
            );
        }
    }

    #[test]
    fn stop_words_are_not_terms() {
        assert_eq!(search_terms("how do I do it, and why?"), Vec::<String>::new());
        // "how", "do", "i" and "a" match every English text; alone they score nothing.
        let scores = bm25_scores("how do I read a file", &["How do I do this?", "Read the file."]).unwrap();
        assert_eq!(scores, [0.0, 1.0]);
    }

    #[test]
    fn scores_are_normalised_and_deterministic() {
        let texts = ["apple banana", "apple apple apple", "cherry"];
        let scores = bm25_scores("apple", &texts).unwrap();
        assert_eq!(scores.iter().copied().fold(0.0, f64::max), 1.0);
        assert!(scores[1] > scores[0], "more occurrences score higher: {scores:?}");
        assert_eq!(scores[2], 0.0);
        assert_eq!(
            scores,
            bm25_scores("APPLE apple!", &texts).unwrap(),
            "query terms are normalised and distinct"
        );
    }

    #[test]
    fn matches_a_hand_computed_value() {
        // Two texts, one term in one of them: idf = ln(1 + 1.5 / 1.5) = ln 2; the lone hit is the max.
        let scores = bm25_scores("cat", &["the cat", "a dog"]).unwrap();
        assert_eq!(scores, [1.0, 0.0]);
        let texts = ["cat", "cat dog dog dog"];
        let raw = |len: f64| 2.2 / (1.0 + 1.2 * (0.25 + 0.75 * len / 2.5));
        let scores = bm25_scores("cat", &texts).unwrap();
        assert!((scores[1] - raw(4.0) / raw(1.0)).abs() < 1e-12, "{scores:?}");
    }

    #[test]
    fn a_term_of_the_heading_path_matches_like_one_in_the_text() {
        let chunk = |id: &str, path: &[&str], text: &str| {
            let mut c = Chunk::with_content(id, "d", "t", text);
            c.metadata.insert("heading_path".into(), serde_json::json!(path));
            c
        };
        let chunks = [
            chunk("titled", &["Streams"], "Data flows through it."),
            chunk("mention", &["Buffers"], "Streams of data."),
            chunk("none", &["Buffers"], "Bytes in memory."),
        ];
        let scores = bm25_chunk_scores("streams", &chunks).unwrap();
        // Same length in terms, one occurrence each: the title and the text weigh the same.
        assert_eq!(scores, [1.0, 1.0, 0.0]);
    }

    #[test]
    fn empty_inputs_score_zero() {
        assert_eq!(bm25_scores("", &["text"]).unwrap(), [0.0]);
        assert_eq!(bm25_scores("query", &[]).unwrap(), Vec::<f64>::new());
        assert_eq!(bm25_scores("query", &["", "other"]).unwrap(), [0.0, 0.0]);
    }

    #[test]
    fn a_query_in_a_script_without_spaces_finds_the_text_that_holds_it() {
        // Each script's query is a word inside a run of letters that holds no space, or (Korean)
        // a word with a particle attached; before bigrams, each run was one term and nothing matched.
        let cases = [
            ("首都", ["东京是日本的首都。", "北京有很多人。"]),
            ("首都", ["東京は日本の首都です。", "大阪は大きな町です。"]),
            ("수도", ["서울은 한국의 수도입니다.", "부산은 큰 도시입니다."]),
            ("ภาษาไทย", ["ฉันพูดภาษาไทยได้", "วันนี้อากาศดี"]),
        ];
        for (query, texts) in cases {
            assert_eq!(
                bm25_scores(query, &texts).unwrap(),
                [1.0, 0.0],
                "{query:?} in {texts:?}"
            );
        }
    }

    #[test]
    fn a_query_of_more_than_the_term_limit_is_refused() {
        let query: Vec<String> = (0..=MAX_QUERY_TERMS).map(|i| format!("term{i}")).collect();
        let err = bm25_scores(&query.join(" "), &["term1"]).unwrap_err();
        assert!(
            matches!(
                err,
                PackerError::TooManyQueryTerms {
                    terms: 1025,
                    limit: 1024
                }
            ),
            "{err}"
        );
        let chunks = [Chunk::with_content("a", "d", "t", "term1")];
        assert!(bm25_chunk_scores(&query.join(" "), &chunks).is_err());
        assert_eq!(
            bm25_chunk_scores(&query[..MAX_QUERY_TERMS].join(" "), &chunks).unwrap(),
            [1.0]
        );
    }
}
