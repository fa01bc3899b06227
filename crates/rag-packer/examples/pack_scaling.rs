//! How packing time grows with the number of candidates (the packing targets of
//! `docs/performance.md`).
//!
//! ```text
//! cargo run --release -p rag-packer --example pack_scaling              # 1k, 10k, 100k
//! cargo run --release -p rag-packer --example pack_scaling -- 1000000   # any sizes
//! cargo run --release -p rag-packer --example pack_scaling -- --runs 9 --jsonl 100000 > chunks.jsonl
//! ```
//!
//! Each size gets a deterministic synthetic corpus: chunks of 50-400 tokens (`token_count` given,
//! about 0.75 words per token) drawn from a Zipf-like vocabulary with some shared boilerplate
//! sentences and numeric claims, of which 10% are near duplicates (a few words changed) of an
//! earlier chunk. The packer runs `knapsack` at an 8,000-token budget with near dedup at Jaccard
//! 0.8 over 5-word shingles and conflict detection on. Printed per size: the median and minimum
//! wall time of `pack_blocking` over several runs (the input clone is not timed), the median
//! CPU time of all threads (from `/proc/self/task/*/schedstat`: the per-text dedup pass runs on
//! the rayon pool), and the ratio to the previous size. A separate line times `optimal` on 200 candidates at an 8,000-token room.
//!
//! `--jsonl N` writes N such chunks as JSON Lines to stdout instead (for timing `ragctl pack`).
//! `--dump N` packs N such chunks once and writes the `PackedContext` as JSON to stdout, so that
//! the output of two builds can be compared byte for byte.

#![allow(clippy::print_stdout, clippy::print_stderr, clippy::unwrap_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use rag_contract::testing::WordCounter;
use rag_core::{Chunk, RequestContext, SelectionStrategy, TokenCounter};
use rag_packer::{ContextPacker, PackerConfig};

/// A deterministic generator (SplitMix64): the corpus must be the same on every run and machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const SYLLABLES: [&str; 24] = [
    "ka", "lo", "mi", "ran", "te", "vo", "sul", "ne", "pri", "da", "go", "sha", "tor", "el", "bi", "qu", "ix", "ze",
    "wa", "fen", "ro", "mu", "ly", "cé",
];
const VOCABULARY: usize = 40_000;
const BOILERPLATE: [&str; 4] = [
    "See the documentation for more details.",
    "All rights reserved by the respective owners.",
    "Note: this section applies to version 2 and later.",
    "The refund window is 30 days for most orders;",
];

fn word(rank: usize) -> String {
    let mut n = rank + 1;
    let mut w = String::new();
    while n > 0 {
        w.push_str(SYLLABLES[n % SYLLABLES.len()]);
        n /= SYLLABLES.len();
    }
    w
}

/// `n` chunks of the synthetic corpus described in the module documentation.
fn corpus(n: usize, seed: u64) -> Vec<Chunk> {
    let mut rng = Rng(seed);
    let vocabulary: Vec<String> = (0..VOCABULARY).map(word).collect();
    // Log-uniform ranks approximate Zipf's law (s = 1): a few very common words, a long tail.
    let ln_v = (VOCABULARY as f64).ln();
    let mut originals: Vec<Vec<String>> = Vec::new();
    let mut chunks = Vec::with_capacity(n);
    for i in 0..n {
        let tokens = 50 + rng.below(351);
        let words_wanted = tokens * 3 / 4;
        let words: Vec<String> = if i > 10 && rng.below(10) == 0 {
            // A near duplicate: an earlier original with about one word in 60 replaced.
            let mut copy = originals[rng.below(originals.len())].clone();
            let changes = (copy.len() / 60).max(1);
            for _ in 0..changes {
                let at = rng.below(copy.len());
                copy[at] = vocabulary[rng.below(VOCABULARY)].clone();
            }
            copy
        } else {
            let mut words = Vec::with_capacity(words_wanted + 16);
            while words.len() < words_wanted {
                let roll = rng.below(100);
                if roll < 2 {
                    let sentence = BOILERPLATE[rng.below(BOILERPLATE.len())];
                    words.extend(sentence.split(' ').map(str::to_owned));
                } else if roll < 4 {
                    words.push(format!("{}", rng.below(500)));
                } else {
                    let rank = (rng.unit() * ln_v).exp() as usize - 1;
                    let mut w = vocabulary[rank.min(VOCABULARY - 1)].clone();
                    if rng.below(12) == 0 {
                        w.push(if rng.below(3) == 0 { '.' } else { ',' });
                    }
                    words.push(w);
                }
            }
            originals.push(words.clone());
            words
        };
        let mut chunk = Chunk::with_content(format!("c{i:07}"), format!("doc{}", i / 20), "bench", words.join(" "));
        chunk.token_count = Some(tokens);
        chunk.score = Some((rng.unit() * 1000.0).round() / 1000.0);
        chunk.position = i % 20;
        chunks.push(chunk);
    }
    chunks
}

/// The CPU time of all this process's threads so far (the rayon workers included), if the
/// kernel reports it: the sum over `/proc/self/task/*/schedstat`. Threads that ended are not
/// counted, but rayon's workers live as long as the process.
fn process_cpu() -> Option<Duration> {
    let mut nanos = 0u64;
    for task in std::fs::read_dir("/proc/self/task").ok()? {
        let stat = std::fs::read_to_string(task.ok()?.path().join("schedstat")).ok()?;
        nanos += stat.split_whitespace().next()?.parse::<u64>().ok()?;
    }
    Some(Duration::from_nanos(nanos))
}

struct Timing {
    median: Duration,
    min: Duration,
    cpu: Option<Duration>,
}

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

fn time_pack(packer: &ContextPacker, chunks: &[Chunk], budget: i64, runs: usize) -> (Timing, usize, usize) {
    let ctx = RequestContext::local("bench");
    let (mut walls, mut cpus) = (Vec::new(), Vec::new());
    let (mut out, mut dedup) = (0, 0);
    for _ in 0..runs {
        let input = chunks.to_vec();
        let cpu0 = process_cpu();
        let start = Instant::now();
        let packed = packer.pack_blocking(&ctx, input, budget).unwrap();
        walls.push(start.elapsed());
        if let (Some(a), Some(b)) = (cpu0, process_cpu()) {
            cpus.push(b - a);
        }
        (out, dedup) = (packed.chunks.len(), packed.dropped_dedup());
        drop(packed);
    }
    let min = walls.iter().copied().min().unwrap_or_default();
    let cpu = (!cpus.is_empty()).then(|| median(cpus));
    (
        Timing {
            median: median(walls),
            min,
            cpu,
        },
        out,
        dedup,
    )
}

/// Times the public primitives of the pipeline one by one on `chunks` (in input order), best of 5.
fn print_stages(chunks: &[Chunk]) {
    let texts: Vec<Option<&str>> = chunks.iter().map(Chunk::content).collect();
    let bytes: usize = texts.iter().flatten().map(|t| t.len()).sum();
    println!("{:>24} {:>9.2} MB", "text", bytes as f64 / 1e6);
    // The fastest of five runs: the machines are noisy, and the minimum is the least disturbed.
    let time = |name: &str, f: &mut dyn FnMut()| {
        let fastest = (0..5)
            .map(|_| {
                let start = Instant::now();
                f();
                start.elapsed()
            })
            .min()
            .unwrap_or_default();
        println!("{:>24} {:>9} ms", name, ms(fastest));
    };
    time("clone input", &mut || drop(chunks.to_vec()));
    time("rank_order", &mut || drop(rag_packer::rank_order(chunks)));
    time("normalise", &mut || {
        for t in texts.iter().flatten() {
            std::hint::black_box(rag_packer::normalise(t));
        }
    });
    time("hash_dedup", &mut || drop(rag_packer::hash_dedup(&texts, 0)));
    time("jaccard_dedup", &mut || {
        drop(rag_packer::jaccard_dedup(&texts, 0, 0.8, 5))
    });
    let packed: Vec<Chunk> = chunks.iter().take(150).cloned().collect();
    time("detect_conflicts (150)", &mut || {
        drop(rag_packer::detect_conflicts(&packed))
    });
}

fn ms(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1e3)
}

fn main() {
    let mut sizes = Vec::new();
    let mut runs = 7;
    let mut jsonl = None;
    let mut dump = None;
    let mut stages = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--runs" => runs = args.next().and_then(|v| v.parse().ok()).expect("--runs N"),
            "--jsonl" => jsonl = args.next().and_then(|v| v.parse().ok()),
            "--dump" => dump = args.next().and_then(|v| v.parse().ok()),
            "--stages" => stages = true,
            size => sizes.push(size.parse::<usize>().expect("a number of candidates")),
        }
    }
    if let Some(n) = jsonl {
        use std::io::Write;
        let mut out = std::io::BufWriter::new(std::io::stdout().lock());
        for chunk in corpus(n, 42) {
            serde_json::to_writer(&mut out, &chunk).unwrap();
            out.write_all(b"\n").unwrap();
        }
        return;
    }
    if sizes.is_empty() {
        sizes = vec![1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000];
    }

    // Never called: every synthetic chunk carries its token count.
    let counter: Arc<dyn TokenCounter> = Arc::new(WordCounter);
    let packer = ContextPacker::new(
        PackerConfig::builder()
            .with_strategy(SelectionStrategy::Knapsack)
            .with_jaccard_threshold(Some(0.8))
            .with_shingle_size(5)
            .with_conflicts(true)
            .with_token_counter(Arc::clone(&counter))
            .build()
            .unwrap(),
    );
    if let Some(n) = dump {
        let packed = packer
            .pack_blocking(&RequestContext::local("bench"), corpus(n, 42), 8_000)
            .unwrap();
        serde_json::to_writer(std::io::stdout().lock(), &packed).unwrap();
        println!();
        return;
    }
    println!("knapsack, budget 8000, jaccard 0.8, shingles 5, conflicts on; {runs} runs per size");
    println!(
        "{:>10} {:>11} {:>9} {:>11} {:>13} {:>8} {:>9}",
        "candidates", "median ms", "min ms", "cpu ms", "x prev size", "packed", "dup drop"
    );
    let mut previous: Option<(usize, Duration)> = None;
    for &n in &sizes {
        let chunks = corpus(n, 42);
        let runs = if n >= 500_000 { runs.min(3) } else { runs };
        let (t, out, dedup) = time_pack(&packer, &chunks, 8_000, runs);
        let ratio = previous
            .map(|(pn, pt)| {
                format!(
                    "{:.2} / {:.1}x",
                    t.median.as_secs_f64() / pt.as_secs_f64(),
                    n as f64 / pn as f64
                )
            })
            .unwrap_or_default();
        println!(
            "{n:>10} {:>11} {:>9} {:>11} {ratio:>13} {out:>8} {dedup:>9}",
            ms(t.median),
            ms(t.min),
            t.cpu.map(ms).unwrap_or_else(|| "n/a".into())
        );
        previous = Some((n, t.median));
        if stages {
            print_stages(&chunks);
        }
    }

    let optimal = ContextPacker::new(
        PackerConfig::builder()
            .with_strategy(SelectionStrategy::Optimal)
            .with_token_counter(counter)
            .build()
            .unwrap(),
    );
    let chunks = corpus(200, 7);
    let (t, out, _) = time_pack(&optimal, &chunks, 8_000, runs.max(11));
    println!(
        "optimal, 200 candidates, 8000-token room: median {} ms, min {} ms, cpu {} ms, {out} packed",
        ms(t.median),
        ms(t.min),
        t.cpu.map(ms).unwrap_or_else(|| "n/a".into())
    );
}
