//! Okapi BM25 over sparse postings: each text keeps only the query terms it holds, so the work and
//! the memory grow with the texts and the query, never with their product.

use std::collections::HashMap;

use rag_core::PackerError;
use rayon::prelude::*;

use super::analysis::{Piece, for_each_piece, search_terms, word_term};

/// BM25's term-frequency saturation.
pub const BM25_K1: f64 = 1.2;
/// BM25's length normalisation.
pub const BM25_B: f64 = 0.75;

/// The most distinct search terms a query may have (Lucene's default limit on the clauses of a
/// query). A longer query is refused ([`PackerError::TooManyQueryTerms`]) rather than cut: which
/// of its terms to drop would be a guess, and the scoring report lists every term searched.
pub const MAX_QUERY_TERMS: usize = 1024;

/// Below this many texts, scoring stays on the calling thread.
const PARALLEL_MIN_TEXTS: usize = 512;

/// A query's distinct search terms, sorted; a term's number is its place in that order.
pub(super) struct Query {
    pub(super) terms: Vec<String>,
    number: HashMap<String, u32>,
}

impl Query {
    /// The terms of `query`; more than [`MAX_QUERY_TERMS`] distinct ones are refused.
    pub(super) fn new(query: &str) -> Result<Self, PackerError> {
        let mut terms = search_terms(query);
        terms.sort_unstable();
        terms.dedup();
        if terms.len() > MAX_QUERY_TERMS {
            return Err(PackerError::TooManyQueryTerms {
                terms: terms.len(),
                limit: MAX_QUERY_TERMS,
            });
        }
        let number = terms.iter().zip(0u32..).map(|(term, n)| (term.clone(), n)).collect();
        Ok(Self { terms, number })
    }
}

/// A text as BM25 sees it: its length in terms and, for each query term it holds, how often.
pub(super) struct Analysed {
    pub(super) length: usize,
    /// `(term number, frequency)` for the query terms the text holds, by term number.
    pub(super) postings: Vec<(u32, u32)>,
}

/// Analyses texts against one query, remembering each word's verdict: a corpus repeats its
/// vocabulary, and stemming is the costly step.
struct Analyser<'q> {
    query: &'q Query,
    /// Piece -> `None` when it is no term (a stop word), else the number of the query term it
    /// is, if any.
    seen: HashMap<String, Option<Option<u32>>>,
}

impl<'q> Analyser<'q> {
    fn new(query: &'q Query) -> Self {
        Self {
            query,
            seen: HashMap::new(),
        }
    }

    /// Adds `text`'s terms, each counted `weight` times, to `into`; `hits` collects the query terms
    /// found, with their weights, until [`finish`](Self::finish).
    fn add(&mut self, text: &str, weight: usize, into: &mut Analysed, hits: &mut Vec<(u32, u32)>) {
        let Self { query, seen } = self;
        for_each_piece(text, |piece| {
            let key = match piece {
                Piece::Word(word) | Piece::Gram(word) => word,
            };
            let verdict = match seen.get(key) {
                Some(verdict) => *verdict,
                None => {
                    let term = match piece {
                        Piece::Word(word) => word_term(word),
                        Piece::Gram(gram) => Some(gram.to_owned()),
                    };
                    let verdict = term.map(|term| query.number.get(&term).copied());
                    seen.insert(key.to_owned(), verdict);
                    verdict
                }
            };
            if let Some(term) = verdict {
                into.length += weight;
                if let Some(t) = term {
                    hits.push((t, weight as u32));
                }
            }
        });
    }

    /// Turns the collected hits into `into`'s postings.
    fn finish(hits: &mut Vec<(u32, u32)>, into: &mut Analysed) {
        hits.sort_unstable_by_key(|&(t, _)| t);
        for &(t, weight) in hits.iter() {
            match into.postings.last_mut() {
                Some((last, frequency)) if *last == t => *frequency += weight,
                _ => into.postings.push((t, weight)),
            }
        }
        hits.clear();
    }
}

/// Analyses each document (the parts of one text and their weights) against `query`, on the
/// thread pool when there are many: the result is the same.
pub(super) fn analyse<D: Sync>(
    query: &Query,
    docs: &[D],
    parts: impl Fn(&D, &mut dyn FnMut(&str, usize)) + Sync,
) -> Vec<Analysed> {
    analyse_on(docs.len() >= PARALLEL_MIN_TEXTS, query, docs, parts)
}

/// [`analyse`], on the thread pool or on the calling thread.
pub(super) fn analyse_on<D: Sync>(
    parallel: bool,
    query: &Query,
    docs: &[D],
    parts: impl Fn(&D, &mut dyn FnMut(&str, usize)) + Sync,
) -> Vec<Analysed> {
    let one = |analyser: &mut Analyser<'_>, hits: &mut Vec<(u32, u32)>, doc: &D| {
        let mut analysed = Analysed {
            length: 0,
            postings: Vec::new(),
        };
        parts(doc, &mut |text, weight| analyser.add(text, weight, &mut analysed, hits));
        Analyser::finish(hits, &mut analysed);
        analysed
    };
    if parallel {
        docs.par_iter()
            .map_init(
                || (Analyser::new(query), Vec::new()),
                |(analyser, hits), doc| one(analyser, hits, doc),
            )
            .collect()
    } else {
        let (mut analyser, mut hits) = (Analyser::new(query), Vec::new());
        docs.iter().map(|doc| one(&mut analyser, &mut hits, doc)).collect()
    }
}

/// BM25 of the analysed texts against a query of `terms` terms, scaled so the best scores 1.0 (all
/// 0.0 when none matches).
pub(super) fn bm25(terms: usize, docs: &[Analysed]) -> Vec<f64> {
    let n = docs.len() as f64;
    let average_length = if docs.is_empty() {
        0.0
    } else {
        docs.iter().map(|d| d.length).sum::<usize>() as f64 / n
    };
    let mut containing = vec![0u32; terms];
    for doc in docs {
        for &(t, _) in &doc.postings {
            containing[t as usize] += 1;
        }
    }
    let idf: Vec<f64> = containing
        .iter()
        .map(|&c| {
            let c = f64::from(c);
            (1.0 + (n - c + 0.5) / (c + 0.5)).ln()
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
            // In term order, as a dense sum over every query term would add them: the terms a
            // text lacks add exactly 0.0, so the sum is the same to the last bit.
            doc.postings
                .iter()
                .map(|&(t, f)| {
                    let f = f64::from(f);
                    idf[t as usize] * f * (BM25_K1 + 1.0) / (f + BM25_K1 * (1.0 - BM25_B + BM25_B * length_ratio))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parallel_and_sequential_analysis_agree() {
        let texts: Vec<String> = (0..300)
            .map(|i| format!("Reading files {} line {} by lines, readLine {}", i % 7, i % 13, i % 3))
            .collect();
        let query = Query::new("read lines of a file").unwrap();
        let run = |parallel| {
            analyse_on(parallel, &query, &texts, |text, add| add(text, 1))
                .into_iter()
                .map(|a| (a.length, a.postings))
                .collect::<Vec<_>>()
        };
        let sequential = run(false);
        assert_eq!(sequential, run(true));
        assert!(
            sequential.iter().all(|(_, p)| p.len() == query.terms.len()),
            "{:?}",
            query.terms
        );
    }

    #[test]
    fn postings_hold_only_the_terms_a_text_holds() {
        // A query of 1,000 terms against 200 texts that hold two of them each: 400 postings, where
        // a table of query terms by texts would hold 200,000.
        let query_text: Vec<String> = (0..1000).map(|i| format!("term{i}")).collect();
        let query = Query::new(&query_text.join(" ")).unwrap();
        let texts: Vec<String> = (0..200)
            .map(|i| format!("term{} and term{} and other words, term{0}", i * 5, i * 5 + 1))
            .collect();
        let analysed = analyse(&query, &texts, |text, add| add(text, 1));
        let postings: usize = analysed.iter().map(|a| a.postings.len()).sum();
        assert_eq!(postings, 400);
        assert!(
            analysed
                .iter()
                .all(|a| a.postings.iter().map(|p| p.1).sum::<u32>() == 3)
        );
    }

    #[test]
    fn a_query_over_the_term_limit_is_refused() {
        let words = |n: usize| (0..n).map(|i| format!("w{i}")).collect::<Vec<_>>().join(" ");
        assert_eq!(
            Query::new(&words(MAX_QUERY_TERMS)).unwrap().terms.len(),
            MAX_QUERY_TERMS
        );
        // Repeated and stop words are not distinct terms.
        assert!(Query::new(&format!("{} the a w0 w0", words(MAX_QUERY_TERMS))).is_ok());
        let err = Query::new(&words(MAX_QUERY_TERMS + 1)).err().unwrap();
        assert_eq!(
            err.to_string(),
            "the query has 1025 distinct search terms; BM25 searches at most 1024"
        );
    }
}
