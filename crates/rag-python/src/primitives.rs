//! The packer's pure primitives for Python, one function per stage: dedup, reorder, budget fit,
//! conflicts, plus ranking and BM25 scoring.
//!
//! Functions over chunks take any iterable of `Chunk`, treat its order as the priority order
//! (best first) where one matters, and return the caller's own objects.

use std::collections::BTreeSet;
use std::sync::Arc;

use pyo3::prelude::*;
use rag_core::{Chunk, TokenCounter};
use rag_packer::{DedupVerdict, SelectionItem};

use crate::chunk::chunks_from_py;
use crate::errors;
use crate::packed::PyConflictAnnotation;
use crate::tokens::{CallCounter, CounterSource, PyTiktokenCounter};

/// Text normalised for exact dedup: lower-cased, runs of letters and digits joined by one space.
#[pyfunction]
fn normalise(text: &str) -> String {
    rag_packer::normalise(text)
}

/// The words of the normalised text.
#[pyfunction]
fn normalised_words(text: &str) -> Vec<String> {
    rag_packer::normalised_words(text)
}

/// The word `size`-shingles of `words` (fewer words than `size` give one shingle of all of them).
#[pyfunction]
#[pyo3(signature = (words, size = 5))]
fn shingles(words: Vec<String>, size: usize) -> BTreeSet<String> {
    rag_packer::shingles(&words, size)
}

/// Jaccard similarity of two sets: |a ∩ b| / |a ∪ b| (0.0 for two empty sets).
#[pyfunction]
fn jaccard(a: BTreeSet<String>, b: BTreeSet<String>) -> f64 {
    rag_packer::jaccard(&a, &b)
}

/// SHA-256 of the normalised text, as hex: a stable fingerprint for exact duplicates.
#[pyfunction]
fn content_hash(text: &str) -> String {
    rag_packer::content_hash(text)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The chunks that survive `verdicts`, as the caller's objects.
fn kept(py: Python<'_>, verdicts: &[DedupVerdict], objects: &[Py<PyAny>]) -> Vec<Py<PyAny>> {
    verdicts
        .iter()
        .zip(objects)
        .filter(|(v, _)| matches!(v, DedupVerdict::Kept))
        .map(|(_, o)| o.clone_ref(py))
        .collect()
}

/// Exact dedup: the chunks whose normalised text no earlier chunk has (the first one wins).
/// Chunks without `content` are kept.
#[pyfunction]
fn hash_dedup(py: Python<'_>, chunks: &Bound<'_, PyAny>) -> PyResult<Vec<Py<PyAny>>> {
    let (engine, objects) = chunks_from_py(chunks, "chunks")?;
    let verdicts = py.detach(|| {
        let texts: Vec<Option<&str>> = engine.iter().map(Chunk::content).collect();
        rag_packer::hash_dedup(&texts, 0)
    });
    Ok(kept(py, &verdicts, &objects))
}

/// Exact and near dedup: also drops a chunk whose word `shingle_size`-shingles reach Jaccard
/// `threshold` (in (0, 1]) with an earlier kept chunk.
#[pyfunction]
#[pyo3(signature = (chunks, threshold, shingle_size = 5))]
fn jaccard_dedup(
    py: Python<'_>,
    chunks: &Bound<'_, PyAny>,
    threshold: f64,
    shingle_size: usize,
) -> PyResult<Vec<Py<PyAny>>> {
    let (engine, objects) = chunks_from_py(chunks, "chunks")?;
    let verdicts = py
        .detach(|| {
            let texts: Vec<Option<&str>> = engine.iter().map(Chunk::content).collect();
            rag_packer::jaccard_dedup(&texts, 0, threshold, shingle_size)
        })
        .map_err(|e| errors::packer_error(py, &e))?;
    Ok(kept(py, &verdicts, &objects))
}

/// Positions of `chunks` in rank order: score descending (`None` counts as 0.0), ties by id.
#[pyfunction]
fn rank_order(chunks: &Bound<'_, PyAny>) -> PyResult<Vec<usize>> {
    let (engine, _) = chunks_from_py(chunks, "chunks")?;
    Ok(rag_packer::rank_order(&engine))
}

fn pick(py: Python<'_>, positions: &[usize], objects: &[Py<PyAny>]) -> Vec<Py<PyAny>> {
    positions.iter().map(|&i| objects[i].clone_ref(py)).collect()
}

/// The caller's objects in the engine's rank order (best first).
fn ranked(py: Python<'_>, chunks: &Bound<'_, PyAny>) -> PyResult<Vec<Py<PyAny>>> {
    let (engine, objects) = chunks_from_py(chunks, "chunks")?;
    Ok(pick(py, &rag_packer::rank_order(&engine), &objects))
}

/// Best first: the chunks sorted by score, highest first, ties by id.
#[pyfunction]
fn descending_order(py: Python<'_>, chunks: &Bound<'_, PyAny>) -> PyResult<Vec<Py<PyAny>>> {
    Ok(rag_packer::descending_order(ranked(py, chunks)?))
}

/// Best last, next to the user's turn: `descending_order` reversed.
#[pyfunction]
fn ascending_order(py: Python<'_>, chunks: &Bound<'_, PyAny>) -> PyResult<Vec<Py<PyAny>>> {
    Ok(rag_packer::ascending_order(ranked(py, chunks)?))
}

/// Best at both ends, weakest in the middle: items given best first, ranks 1, 3, 5, ... fill the
/// front and 2, 4, 6, ... the back from the end (`[1, 2, 3, 4, 5]` -> `[1, 3, 5, 4, 2]`). Any
/// items, not only chunks.
#[pyfunction]
fn lost_in_middle_order(items: Vec<Py<PyAny>>) -> Vec<Py<PyAny>> {
    rag_packer::lost_in_middle_order(items)
}

/// LangChain's long-context reorder of items given best first (the best lands first for an odd
/// count, last for an even one). Any items.
#[pyfunction]
fn sides_order(items: Vec<Py<PyAny>>) -> Vec<Py<PyAny>> {
    rag_packer::sides_order(items)
}

/// The counter for a budget primitive: the one given, or `cl100k_base`.
fn call_counter(token_counter: Option<&Bound<'_, PyAny>>) -> PyResult<CallCounter> {
    let source = match token_counter {
        Some(obj) if !obj.is_none() => CounterSource::from_py(obj)?,
        _ => CounterSource::Native(Arc::new(PyTiktokenCounter::cl100k().engine())),
    };
    Ok(source.for_call())
}

/// Selection items of `chunks` (tokens cached or counted, score, document), without the GIL.
fn selection_items(py: Python<'_>, engine: &[Chunk], counter: &CallCounter) -> PyResult<Vec<SelectionItem>> {
    let engine_counter: &dyn TokenCounter = counter.engine.as_ref();
    let items = py.detach(|| rag_packer::selection_items(engine, engine_counter));
    items.map_err(|e| counter.caused(py, errors::packer_error(py, &e)))
}

/// The chunks `select` chooses from the selection items of `chunks`, in the given order, as the
/// caller's objects.
fn selected(
    py: Python<'_>,
    chunks: &Bound<'_, PyAny>,
    token_counter: Option<&Bound<'_, PyAny>>,
    select: impl FnOnce(&[SelectionItem]) -> PyResult<Vec<usize>>,
) -> PyResult<Vec<Py<PyAny>>> {
    let (engine, objects) = chunks_from_py(chunks, "chunks")?;
    let counter = call_counter(token_counter)?;
    let items = selection_items(py, &engine, &counter)?;
    let mut chosen = select(&items)?;
    chosen.sort_unstable();
    Ok(pick(py, &chosen, &objects))
}

/// Declares a budget selection primitive: the Python signature `(chunks, budget, token_counter =
/// None, max_per_document = None)`, the chosen chunks returned in the given order; `$select`
/// maps the items, budget and per-document cap to the chosen positions.
macro_rules! selection_primitive {
    ($(#[doc = $doc:literal])* $name:ident, $select:expr) => {
        $(#[doc = $doc])*
        #[pyfunction]
        #[pyo3(signature = (chunks, budget, token_counter = None, max_per_document = None))]
        fn $name(
            py: Python<'_>,
            chunks: &Bound<'_, PyAny>,
            budget: usize,
            token_counter: Option<&Bound<'_, PyAny>>,
            max_per_document: Option<usize>,
        ) -> PyResult<Vec<Py<PyAny>>> {
            selected(py, chunks, token_counter, |items| {
                ($select)(py, items, budget, max_per_document)
            })
        }
    };
}

selection_primitive!(
    /// Greedy budget fit: in the given order, each chunk that still fits (tokens from
    /// `token_count`, else counted), skipping those that do not; at most `max_per_document` per
    /// document.
    fit_to_budget,
    |_, items, budget, max| Ok(rag_packer::fit_to_budget(items, budget, max))
);

selection_primitive!(
    /// Knapsack selection by score: the better of score-per-token greedy and a run that starts
    /// with the best single chunk (at least half the optimum); returned in the given order.
    knapsack_select,
    |_, items, budget, max| Ok(rag_packer::knapsack_select(items, budget, max))
);

selection_primitive!(
    /// The exact 0/1 knapsack optimum of total score within the budget (a `PackerError` above
    /// `OPTIMAL_CELL_LIMIT` table cells); returned in the given order.
    optimal_select,
    |py: Python<'_>, items, budget, max| py
        .detach(|| rag_packer::optimal_select(items, budget, max))
        .map_err(|e| errors::raise(py, errors::ErrorClass::Packer, e.to_string(), Vec::new()))
);

/// Numeric disagreements and trust mismatches among `chunks` (advisory).
#[pyfunction]
fn detect_conflicts(py: Python<'_>, chunks: &Bound<'_, PyAny>) -> PyResult<Vec<PyConflictAnnotation>> {
    let (engine, _) = chunks_from_py(chunks, "chunks")?;
    let conflicts = py.detach(|| rag_packer::detect_conflicts(&engine));
    Ok(conflicts.into_iter().map(PyConflictAnnotation::from_rust).collect())
}

/// Okapi BM25 scores of `texts` against `query` (k1 1.2, b 0.75), divided by the best; a query
/// of more than 1024 distinct terms is a `PackerError`.
#[pyfunction]
fn bm25_scores(py: Python<'_>, query: &str, texts: Vec<String>) -> PyResult<Vec<f64>> {
    py.detach(|| {
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        rag_packer::bm25_scores(query, &texts)
    })
    .map_err(|e| errors::packer_error(py, &e))
}

/// BM25 scores of chunks as `ragctl pack` computes them for unscored chunks (headings weighted,
/// stemmed terms), divided by the best; a query of more than 1024 distinct terms is a
/// `PackerError`.
#[pyfunction]
fn bm25_chunk_scores(py: Python<'_>, query: &str, chunks: &Bound<'_, PyAny>) -> PyResult<Vec<f64>> {
    let (engine, _) = chunks_from_py(chunks, "chunks")?;
    py.detach(|| rag_packer::bm25_chunk_scores(query, &engine))
        .map_err(|e| errors::packer_error(py, &e))
}

/// Registers the primitives on the native module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(normalise, m)?)?;
    m.add_function(wrap_pyfunction!(normalised_words, m)?)?;
    m.add_function(wrap_pyfunction!(shingles, m)?)?;
    m.add_function(wrap_pyfunction!(jaccard, m)?)?;
    m.add_function(wrap_pyfunction!(content_hash, m)?)?;
    m.add_function(wrap_pyfunction!(hash_dedup, m)?)?;
    m.add_function(wrap_pyfunction!(jaccard_dedup, m)?)?;
    m.add_function(wrap_pyfunction!(rank_order, m)?)?;
    m.add_function(wrap_pyfunction!(descending_order, m)?)?;
    m.add_function(wrap_pyfunction!(ascending_order, m)?)?;
    m.add_function(wrap_pyfunction!(lost_in_middle_order, m)?)?;
    m.add_function(wrap_pyfunction!(sides_order, m)?)?;
    m.add_function(wrap_pyfunction!(fit_to_budget, m)?)?;
    m.add_function(wrap_pyfunction!(knapsack_select, m)?)?;
    m.add_function(wrap_pyfunction!(optimal_select, m)?)?;
    m.add_function(wrap_pyfunction!(detect_conflicts, m)?)?;
    m.add_function(wrap_pyfunction!(bm25_scores, m)?)?;
    m.add_function(wrap_pyfunction!(bm25_chunk_scores, m)?)?;
    m.add("OPTIMAL_CELL_LIMIT", rag_packer::OPTIMAL_CELL_LIMIT)?;
    Ok(())
}
