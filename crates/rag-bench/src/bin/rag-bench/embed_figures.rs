//! The figures of embedding (issue 28), measured with a real model folder: embedding at chunk
//! time against plain chunking, the model's load time, and packing pre-embedded chunks against
//! packing the same chunks without vectors.

use std::io::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use rag_bench::measure::{median, ms};
use rag_bench::packing;
use rag_core::{Embedder, embed_chunks};
use rag_embed::StaticEmbedder;

use crate::ragctl_figures::run_child;
use crate::table::Table;

pub(crate) fn embed_figures(
    table: &mut Table,
    ragctl: &Path,
    model: &Path,
    corpus_dir: &Path,
    work: &Path,
    runs: usize,
    quick: bool,
) {
    eprintln!("embed: {runs} runs, model {}", model.display());
    // Chunk time: the CPU of `ragctl chunk --embedder` against `ragctl chunk`, alternated.
    let chunk = |embed: bool| {
        let mut cmd = Command::new(ragctl);
        cmd.args(["chunk", "--format", "jsonl"]).arg(corpus_dir);
        if embed {
            cmd.arg("--embedder").arg(model);
        }
        run_child(cmd)
    };
    let _ = chunk(true);
    let (mut plain, mut embedded, mut ratios) = (vec![], vec![], vec![]);
    for _ in 0..runs {
        let a = chunk(false);
        let b = chunk(true);
        ratios.push(b.cpu.as_secs_f64() / a.cpu.as_secs_f64());
        plain.push(ms(a.cpu));
        embedded.push(ms(b.cpu));
    }
    let r = median(&ratios);
    table.row(
        "ragctl chunk --embedder (wordllama) / ragctl chunk, JSONL: CPU",
        format!("{r:.2}x ({:.0} ms / {:.0} ms)", median(&embedded), median(&plain)),
        "<= 2x",
        Some(r <= 2.0),
    );

    // Model load, in process.
    let mut loads = vec![];
    for _ in 0..runs.max(5) {
        let start = Instant::now();
        let embedder = StaticEmbedder::load(model).unwrap();
        loads.push(ms(start.elapsed()));
        assert!(embedder.dimension() > 0);
    }
    let load = median(&loads);
    table.row(
        "StaticEmbedder::load (wordllama, 16 MB F16 + 1.8 MB tokenizer.json): wall",
        format!("{load:.0} ms"),
        "< 300 ms",
        Some(load < 300.0),
    );

    // Pack time: 100,000 chunks with vectors (hybrid, the query embedded) against the same
    // chunks without vectors (BM25), both read from JSONL.
    let n = if quick { 20_000 } else { 100_000 };
    let plain_file = work.join(format!("pack-{n}-plain.jsonl"));
    let embedded_file = work.join(format!("pack-{n}-embedded.jsonl"));
    let embedder = StaticEmbedder::load(model).unwrap();
    if !embedded_file.exists() {
        let mut chunks = packing::chunks(n);
        write_jsonl(&plain_file, &chunks);
        embed_chunks(&embedder, &mut chunks).unwrap();
        write_jsonl(&embedded_file, &chunks);
    }
    let pack = |input: &Path, embed: bool| {
        let mut cmd = Command::new(ragctl);
        cmd.args(["pack", "refund window", "--tenant", "bench", "--budget", "8000"])
            .args(["--max-input-bytes", "4G", "--input"])
            .arg(input);
        if embed {
            cmd.arg("--embedder").arg(model);
        }
        run_child(cmd)
    };
    let (mut bm25, mut hybrid, mut ratios) = (vec![], vec![], vec![]);
    for _ in 0..if quick { 1 } else { 3 } {
        let a = pack(&plain_file, false);
        let b = pack(&embedded_file, true);
        ratios.push(b.wall.as_secs_f64() / a.wall.as_secs_f64());
        bm25.push(ms(a.wall));
        hybrid.push(ms(b.wall));
    }
    let r = median(&ratios);
    let size = |path: &Path| std::fs::metadata(path).map_or(0, |m| m.len()) >> 20;
    table.row(
        format!("ragctl pack --embedder on {n} pre-embedded chunks / ragctl pack on them without vectors: wall"),
        format!(
            "{r:.2}x ({:.0} ms / {:.0} ms; JSONL {} MB / {} MB)",
            median(&hybrid),
            median(&bm25),
            size(&embedded_file),
            size(&plain_file)
        ),
        "<= 1.5x",
        Some(r <= 1.5),
    );
}

fn write_jsonl(path: &Path, chunks: &[rag_core::Chunk]) {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    for c in chunks {
        serde_json::to_writer(&mut out, c).unwrap();
        out.write_all(b"\n").unwrap();
    }
    out.flush().unwrap();
}
