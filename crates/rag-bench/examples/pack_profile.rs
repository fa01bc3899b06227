//! Packs the benchmark's synthetic candidates many times, for a profiler to look at.
//!
//! ```text
//! cargo build --release -p rag-bench --example pack_profile
//! perf record target/release/examples/pack_profile 10000 50
//! ```
//!
//! Arguments: candidates (default 10,000), repetitions (default 20) and optionally `owned`.
//! Prints the fastest and the median wall time of `pack_borrowed` on candidates generated once,
//! or with `owned`, of `pack_blocking` on a fresh clone each time (the clone is not timed).

#![allow(clippy::print_stdout, clippy::unwrap_used)]

use std::time::{Duration, Instant};

use rag_bench::packing;
use rag_core::{RequestContext, SelectionStrategy};
use rag_packer::{ContextPacker, PackerConfig};

fn main() {
    let mut args = std::env::args().skip(1).take(2).map(|a| a.parse::<usize>().unwrap());
    let n = args.next().unwrap_or(10_000);
    let reps = args.next().unwrap_or(20);
    let owned = std::env::args().nth(3).is_some_and(|a| a == "owned");
    let chunks = packing::chunks(n);
    let packer = ContextPacker::new(
        PackerConfig::builder()
            .with_strategy(SelectionStrategy::Knapsack)
            .with_jaccard_threshold(Some(0.8))
            .build()
            .unwrap(),
    );
    let ctx = RequestContext::local("bench");
    let mut walls: Vec<Duration> = (0..reps)
        .map(|_| {
            let input = owned.then(|| chunks.clone());
            let start = Instant::now();
            let packed = match input {
                Some(input) => packer.pack_blocking(&ctx, input, 8000),
                None => packer.pack_borrowed(&ctx, &chunks, 8000),
            }
            .unwrap();
            let wall = start.elapsed();
            drop(packed);
            wall
        })
        .collect();
    walls.sort();
    println!(
        "{n} candidates, {reps} runs: fastest {:.2} ms, median {:.2} ms",
        walls[0].as_secs_f64() * 1e3,
        walls[reps / 2].as_secs_f64() * 1e3
    );
}
