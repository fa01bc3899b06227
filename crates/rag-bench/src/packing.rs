//! Synthetic retrieval results for the packer, and an independent exact near-dedup to check it.

use std::collections::HashMap;

use rag_core::Chunk;
use rag_packer::{DedupVerdict, normalise, normalised_words, shingles};

use crate::corpus::Rng;

/// `n` retrieved chunks of 50 to 400 tokens (given as `token_count`, so no tokenizer is needed)
/// with scores, from 50 documents; about 10% are near duplicates (a few words changed) of an
/// earlier chunk. Deterministic in `n`.
pub fn chunks(n: usize) -> Vec<Chunk> {
    let mut rng = Rng::new(0xc0ff_ee00 ^ n as u64);
    // A large vocabulary, so that 5-word shingles repeat only where text was copied.
    let vocab: Vec<String> = (0..20_000).map(|i| format!("w{:x}", i * 7919 % 65_521)).collect();
    let mut texts: Vec<String> = Vec::with_capacity(n);
    let mut chunks = Vec::with_capacity(n);
    for i in 0..n {
        let tokens = rng.range(50, 401);
        let text = if i > 10 && rng.chance(10) {
            let original: Vec<&str> = texts[rng.range(0, i)].split(' ').collect();
            let mut words: Vec<String> = original.iter().map(|w| (*w).to_owned()).collect();
            // Change about 1 word in 150: Jaccard of 5-shingles stays near 0.85-0.97.
            for _ in 0..(words.len() / 150).max(1) {
                let at = rng.range(0, words.len());
                words[at] = vocab[rng.range(0, vocab.len())].clone();
            }
            words.join(" ")
        } else {
            let words = tokens * 3 / 4;
            (0..words)
                .map(|_| vocab[rng.range(0, vocab.len())].as_str())
                .collect::<Vec<_>>()
                .join(" ")
        };
        let mut chunk = Chunk::with_content(format!("c{i}"), format!("d{}", i % 50), "bench", text.as_str());
        chunk.token_count = Some(tokens);
        chunk.score = Some(rng.range(1, 1_000_000) as f64 / 1e6);
        texts.push(text);
        chunks.push(chunk);
    }
    chunks
}

/// The worst case of near dedup: `n` chunks of 10 sentences each, drawn with
/// repetition from one pool of 40 boilerplate sentences of 12 to 20 words, with token counts and
/// scores. Every shingle is common, any two chunks share a few sentences, and most pairs stay far
/// below a threshold of 0.5, where a prefix is half its set: the exact search has to verify nearly
/// every pair. The first `m` chunks of `boilerplate_chunks(n)` are `boilerplate_chunks(m)`.
pub fn boilerplate_chunks(n: usize) -> Vec<Chunk> {
    let mut rng = Rng::new(0x0b01_1e4f);
    let vocab: Vec<String> = (0..600).map(|i| format!("b{:x}", i * 7919 % 65_521)).collect();
    let pool: Vec<String> = (0..40)
        .map(|_| {
            let words = rng.range(12, 21);
            let words: Vec<&str> = (0..words).map(|_| vocab[rng.range(0, vocab.len())].as_str()).collect();
            format!("{}.", words.join(" "))
        })
        .collect();
    (0..n)
        .map(|i| {
            let sentences: Vec<&str> = (0..10).map(|_| pool[rng.range(0, pool.len())].as_str()).collect();
            let text = sentences.join(" ");
            let mut chunk = Chunk::with_content(format!("b{i}"), format!("d{}", i % 50), "bench", text.as_str());
            chunk.token_count = Some(text.split(' ').count() * 4 / 3);
            chunk.score = Some(rng.range(1, 1_000_000) as f64 / 1e6);
            chunk
        })
        .collect()
}

/// Exact and near dedup by the definition, without the packer's index: text `i` is an exact
/// duplicate of the first kept text with the same normalised form, else a near duplicate of the
/// first kept `j < i` with `jaccard(shingles(i), shingles(j)) >= threshold`, else kept.
///
/// Shingles are compared as exact strings (interned to numbers, never hashed). With `all_pairs`,
/// every kept text is compared; otherwise an inverted index from shingle to the kept texts that
/// have it finds every kept text sharing at least one shingle (a text sharing none has similarity
/// 0), with no prefix filtering or other pruning.
pub fn reference_dedup(texts: &[&str], threshold: f64, size: usize, all_pairs: bool) -> Vec<DedupVerdict> {
    let mut ids: HashMap<String, u32> = HashMap::new();
    let mut exact: HashMap<String, usize> = HashMap::new();
    let mut sets: Vec<Vec<u32>> = Vec::with_capacity(texts.len());
    let mut kept: Vec<usize> = Vec::new();
    let mut postings: HashMap<u32, Vec<usize>> = HashMap::new();
    let mut overlap: Vec<usize> = vec![0; texts.len()];
    let mut verdicts = Vec::with_capacity(texts.len());
    for (i, text) in texts.iter().enumerate() {
        let mut set: Vec<u32> = shingles(&normalised_words(text), size)
            .into_iter()
            .map(|s| {
                let next = ids.len() as u32;
                *ids.entry(s).or_insert(next)
            })
            .collect();
        set.sort_unstable();
        sets.push(set);
        let set = &sets[i];
        let norm = normalise(text);
        if let Some(&of) = exact.get(&norm) {
            verdicts.push(DedupVerdict::ExactDuplicate { of });
            continue;
        }
        let similarity = |j: usize, common: usize| {
            let union = set.len() + sets[j].len() - common;
            if union == 0 { 0.0 } else { common as f64 / union as f64 }
        };
        let mut found: Option<(usize, f64)> = None;
        if all_pairs {
            for &j in &kept {
                let common = sorted_intersection(set, &sets[j]);
                let sim = similarity(j, common);
                if sim >= threshold {
                    found = Some((j, sim));
                    break;
                }
            }
        } else {
            let mut touched = Vec::new();
            for s in set {
                for &j in postings.get(s).map(Vec::as_slice).unwrap_or_default() {
                    if overlap[j] == 0 {
                        touched.push(j);
                    }
                    overlap[j] += 1;
                }
            }
            touched.sort_unstable();
            for &j in &touched {
                let sim = similarity(j, overlap[j]);
                if found.is_none() && sim >= threshold {
                    found = Some((j, sim));
                }
                overlap[j] = 0;
            }
        }
        match found {
            Some((of, similarity)) => verdicts.push(DedupVerdict::NearDuplicate { of, similarity }),
            None => {
                exact.insert(norm, i);
                kept.push(i);
                if !all_pairs {
                    for s in set {
                        postings.entry(*s).or_default().push(i);
                    }
                }
                verdicts.push(DedupVerdict::Kept);
            }
        }
    }
    verdicts
}

fn sorted_intersection(a: &[u32], b: &[u32]) -> usize {
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                n += 1;
                i += 1;
                j += 1;
            }
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_reference_modes_agree_with_the_packer_on_a_small_set() {
        let chunks = chunks(300);
        let texts: Vec<&str> = chunks.iter().filter_map(Chunk::content).collect();
        let pairs = reference_dedup(&texts, 0.8, 5, true);
        let index = reference_dedup(&texts, 0.8, 5, false);
        assert_eq!(pairs, index);
        let near = pairs
            .iter()
            .filter(|v| matches!(v, DedupVerdict::NearDuplicate { .. }))
            .count();
        assert!(near > 10, "the synthetic set has near duplicates: {near}");
        let options: Vec<Option<&str>> = texts.iter().map(|t| Some(*t)).collect();
        assert_eq!(rag_packer::jaccard_dedup(&options, 0, 0.8, 5).ok(), Some(pairs));
    }
}
