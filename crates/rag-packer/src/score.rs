//! Scoring chunks that arrive without a retriever's score, so a local pipeline still ranks: Okapi
//! BM25 over each chunk's heading path and text, with the analysis a search engine applies.
//!
//! The analysis ([`search_terms`]): words are runs of letters and digits; an identifier also
//! counts as its parts (`readLines` is `readlines`, `read` and `lines`; `read_file` is `read` and
//! `file`); words are lower-cased, English stop words (NLTK's list) are dropped and the rest
//! reduced by the Snowball English stemmer, so "how do I read a file line by line" searches for
//! `read`, `file` and `line`, and finds `filehandle.readLines()`.

use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

use rag_core::Chunk;
use rayon::prelude::*;
use rust_stemmers::{Algorithm, Stemmer};

/// BM25's term-frequency saturation.
pub const BM25_K1: f64 = 1.2;
/// BM25's length normalisation.
pub const BM25_B: f64 = 0.75;
/// How many times a term of a chunk's heading path counts, against once in its text. The heading
/// path names what a section is about (the API, the task), so a body chunk that never repeats its
/// method's name still matches it; weighting it more than the text made every chunk of a matching
/// section outrank the passage that answers (see `docs/quality.md`), so it counts once.
pub const HEADING_WEIGHT: usize = 1;

/// Below this many texts, scoring stays on the calling thread.
const PARALLEL_MIN_TEXTS: usize = 512;

static STEMMER: LazyLock<Stemmer> = LazyLock::new(|| Stemmer::create(Algorithm::English));

static STOP_WORDS: LazyLock<HashSet<&'static str>> =
    LazyLock::new(|| stop_words::lookup("en").unwrap_or_default().iter().copied().collect());

/// The word stem BM25 compares: the Snowball English stem of the lower-cased word.
///
/// ```
/// use rag_packer::stem;
///
/// assert_eq!(stem("reranking"), "rerank");
/// assert_eq!(stem("Rerankers"), "rerank");
/// assert_eq!(stem("lines"), "line");
/// assert_eq!(stem("class"), "class");
/// ```
pub fn stem(word: &str) -> String {
    STEMMER.stem(&word.to_lowercase()).into_owned()
}

/// Whether `word` (lower-case) is an English stop word, which carries no meaning to search for.
fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.contains(word)
}

/// Calls `emit` with each lower-cased word of `text` and, for an identifier made of parts
/// (`readLines`, `HTTP2Server`), each part too. Parts break where a lower-case letter or a digit
/// is followed by an upper-case one, and before the last capital of a run of capitals followed by a
/// lower-case letter (`HTTPServer` is `http` and `server`).
fn for_each_word(text: &str, mut emit: impl FnMut(&str)) {
    let mut lower = String::new();
    for word in text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
        lower.clear();
        lower.extend(word.chars().flat_map(char::to_lowercase));
        emit(&lower);
        let chars: Vec<(usize, char)> = word.char_indices().collect();
        let mut start = 0;
        for k in 1..chars.len() {
            let (at, c) = chars[k];
            let prev = chars[k - 1].1;
            let next_is_lower = chars.get(k + 1).is_some_and(|&(_, n)| n.is_lowercase());
            let boundary = c.is_uppercase()
                && (prev.is_lowercase() || prev.is_numeric() || (prev.is_uppercase() && next_is_lower));
            if boundary {
                emit(&word[start..at].to_lowercase());
                start = at;
            }
        }
        if start > 0 {
            emit(&word[start..].to_lowercase());
        }
    }
}

/// The search terms of `text`, in order: words and identifier parts, lower-cased, stop words
/// dropped, stemmed. A query's terms are these, de-duplicated.
///
/// ```
/// use rag_packer::search_terms;
///
/// assert_eq!(search_terms("How do I read a file line by line?"), ["read", "file", "line", "line"]);
/// assert_eq!(search_terms("filehandle.readLines()"), ["filehandl", "readlin", "read", "line"]);
/// ```
pub fn search_terms(text: &str) -> Vec<String> {
    let mut terms = Vec::new();
    for_each_word(text, |word| {
        if !is_stop_word(word) {
            terms.push(STEMMER.stem(word).into_owned());
        }
    });
    terms
}

/// A text as BM25 sees it: its length in terms and how often it holds each query term.
struct Analysed {
    length: usize,
    frequencies: Vec<u32>,
}

/// Analyses texts against one query's terms, remembering each word's verdict: a corpus repeats
/// its vocabulary, and stemming is the costly step.
struct Analyser<'q> {
    query: &'q [String],
    /// Word -> `None` for a stop word (not a term at all), else the index of the query term it
    /// stems to, if any.
    seen: HashMap<String, Option<Option<usize>>>,
}

impl<'q> Analyser<'q> {
    fn new(query: &'q [String]) -> Self {
        Self {
            query,
            seen: HashMap::new(),
        }
    }

    /// Adds `text`'s terms, each counted `weight` times, to `into`.
    fn add(&mut self, text: &str, weight: usize, into: &mut Analysed) {
        let query = self.query;
        let seen = &mut self.seen;
        for_each_word(text, |word| {
            let verdict = match seen.get(word) {
                Some(verdict) => *verdict,
                None => {
                    let verdict = (!is_stop_word(word)).then(|| {
                        let stem = STEMMER.stem(word);
                        query.iter().position(|term| *term == stem)
                    });
                    seen.insert(word.to_owned(), verdict);
                    verdict
                }
            };
            if let Some(term) = verdict {
                into.length += weight;
                if let Some(t) = term {
                    into.frequencies[t] += weight as u32;
                }
            }
        });
    }
}

/// The distinct search terms of `query`, sorted.
fn query_terms(query: &str) -> Vec<String> {
    let mut terms = search_terms(query);
    terms.sort_unstable();
    terms.dedup();
    terms
}

/// Analyses each document (the parts of one text and their weights) against `query`.
fn analyse<D: Sync>(
    query: &[String],
    docs: &[D],
    parts: impl Fn(&D, &mut dyn FnMut(&str, usize)) + Sync,
) -> Vec<Analysed> {
    analyse_on(docs.len() >= PARALLEL_MIN_TEXTS, query, docs, parts)
}

/// [`analyse`], on the thread pool or on the calling thread: the result is the same.
fn analyse_on<D: Sync>(
    parallel: bool,
    query: &[String],
    docs: &[D],
    parts: impl Fn(&D, &mut dyn FnMut(&str, usize)) + Sync,
) -> Vec<Analysed> {
    let one = |analyser: &mut Analyser<'_>, doc: &D| {
        let mut analysed = Analysed {
            length: 0,
            frequencies: vec![0; query.len()],
        };
        parts(doc, &mut |text, weight| analyser.add(text, weight, &mut analysed));
        analysed
    };
    if !parallel {
        let mut analyser = Analyser::new(query);
        docs.iter().map(|doc| one(&mut analyser, doc)).collect()
    } else {
        docs.par_iter()
            .map_init(|| Analyser::new(query), |analyser, doc| one(analyser, doc))
            .collect()
    }
}

/// BM25 of the analysed texts, scaled so the best scores 1.0 (all 0.0 when none matches).
fn bm25(query: &[String], docs: &[Analysed]) -> Vec<f64> {
    let n = docs.len() as f64;
    let average_length = if docs.is_empty() {
        0.0
    } else {
        docs.iter().map(|d| d.length).sum::<usize>() as f64 / n
    };
    let idf: Vec<f64> = (0..query.len())
        .map(|t| {
            let containing = docs.iter().filter(|d| d.frequencies[t] > 0).count() as f64;
            (1.0 + (n - containing + 0.5) / (containing + 0.5)).ln()
        })
        .collect();
    let raw: Vec<f64> = docs
        .iter()
        .map(|doc| {
            let length_ratio = if average_length > 0.0 {
                doc.length as f64 / average_length
            } else {
                0.0
            };
            doc.frequencies
                .iter()
                .zip(&idf)
                .map(|(&f, idf)| {
                    let f = f64::from(f);
                    idf * f * (BM25_K1 + 1.0) / (f + BM25_K1 * (1.0 - BM25_B + BM25_B * length_ratio))
                })
                // Not `sum()`: the float sum of no terms is -0.0, which prints as a negative score.
                .fold(0.0, |total, term| total + term)
        })
        .collect();
    let max = raw.iter().copied().fold(0.0f64, f64::max);
    if max > 0.0 {
        raw.into_iter().map(|s| s / max).collect()
    } else {
        raw
    }
}

/// Okapi BM25 scores of `texts` against `query`, computed over `texts` as the corpus and scaled so
/// the best text scores 1.0.
///
/// Terms are [`search_terms`]; each distinct query term counts once. The inverse document
/// frequency is `ln(1 + (N - n + 0.5) / (n + 0.5))`, which stays positive even for a term in every
/// text. A text that holds no query term scores exactly 0.0; if none does, every score is 0.0.
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
    let query = query_terms(query);
    let analysed = analyse(&query, texts, |text, add| add(text, 1));
    bm25(&query, &analysed)
}

/// BM25 scores of `chunks` against `query` over their heading path and text, as
/// [`bm25_scores`] computes them: a chunk's heading path ([`Chunk::heading_path`]) counts
/// [`HEADING_WEIGHT`] times, its content once. A chunk without content is scored on its heading
/// path alone.
///
/// ```
/// use rag_core::Chunk;
/// use rag_packer::bm25_chunk_scores;
///
/// let mut method = Chunk::with_content("fs#41", "fs.md", "t", "* `options` {Object}\n\nReturns an interface.");
/// method.metadata.insert("heading_path".into(), serde_json::json!(["File system", "filehandle.readLines()"]));
/// let other = Chunk::with_content("zlib#3", "zlib.md", "t", "Reading compressed files uses the thread pool.");
/// let scores = bm25_chunk_scores("how do I read a file line by line", &[method, other]);
/// assert_eq!(scores[0], 1.0, "the heading path names the API");
/// assert!(scores[1] < 0.5);
/// ```
pub fn bm25_chunk_scores(query: &str, chunks: &[Chunk]) -> Vec<f64> {
    let query = query_terms(query);
    let analysed = analyse(&query, chunks, |chunk, add| {
        for title in chunk.heading_path() {
            add(title, HEADING_WEIGHT);
        }
        add(chunk.content().unwrap_or_default(), 1);
    });
    bm25(&query, &analysed)
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
    fn a_query_without_terms_scores_every_text_zero_not_minus_zero() {
        for query in ["", "how do I do it?"] {
            let scores = bm25_scores(query, &["Read the file.", ""]);
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
        let scores = bm25_scores("how do I read a file", &["How do I do this?", "Read the file."]);
        assert_eq!(scores, [0.0, 1.0]);
    }

    #[test]
    fn identifiers_count_as_their_parts() {
        let mut parts = Vec::new();
        for_each_word("readLines HTTPServer read_file utf8Decode x", |w| {
            parts.push(w.to_owned())
        });
        assert_eq!(
            parts,
            [
                "readlines",
                "read",
                "lines",
                "httpserver",
                "http",
                "server",
                "read",
                "file",
                "utf8decode",
                "utf8",
                "decode",
                "x"
            ]
        );
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
        let scores = bm25_chunk_scores("streams", &chunks);
        // Same length in terms, one occurrence each: the title and the text weigh the same.
        assert_eq!(scores, [1.0, 1.0, 0.0]);
    }

    #[test]
    fn parallel_and_sequential_analysis_agree() {
        let texts: Vec<String> = (0..300)
            .map(|i| format!("Reading files {} line {} by lines, readLine {}", i % 7, i % 13, i % 3))
            .collect();
        let query = query_terms("read lines of a file");
        let run = |parallel| {
            analyse_on(parallel, &query, &texts, |text, add| add(text, 1))
                .into_iter()
                .map(|a| (a.length, a.frequencies))
                .collect::<Vec<_>>()
        };
        let sequential = run(false);
        assert_eq!(sequential, run(true));
        assert!(sequential.iter().all(|(_, f)| f.iter().all(|&n| n > 0)), "{query:?}");
    }

    #[test]
    fn empty_inputs_score_zero() {
        assert_eq!(bm25_scores("", &["text"]), [0.0]);
        assert_eq!(bm25_scores("query", &[]), Vec::<f64>::new());
        assert_eq!(bm25_scores("query", &["", "other"]), [0.0, 0.0]);
    }
}
