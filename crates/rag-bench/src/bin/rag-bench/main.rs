//! `rag-bench`: every figure of the performance targets in one table (run it through
//! `cargo xtask bench`, which builds `ragctl` in release and passes `--ragctl`).
//!
//! ```text
//! rag-bench [--corpus DIR] [--quick] [--runs N] [--ragctl PATH] [--work DIR] [--only SECTION]
//!           [--embedder DIR]
//! ```
//!
//! `--only chunking|ragctl|near|packing|embed|access` runs one section of the table (to iterate on one figure);
//! `near` is near dedup's worst case through `ragctl`.
#![allow(clippy::print_stdout, clippy::print_stderr)] // a command-line tool reports on the terminal
#![allow(clippy::unwrap_used)] // a benchmark binary: a failed setup step should stop it loudly

use rag_bench::corpus;

mod args;
mod chunking;
mod embed_figures;
mod packing_figures;
mod ragctl_figures;
mod table;

use args::parse_args;
use chunking::chunking;
use packing_figures::{pack_one, packing_figures};
use ragctl_figures::{near_worst_figures, ragctl_figures};
use table::Table;

fn main() -> std::process::ExitCode {
    let mut raw = std::env::args().skip(1);
    if raw.next().as_deref() == Some("--pack-one") {
        let mut number = || raw.next().and_then(|v| v.parse::<usize>().ok());
        let (Some(n), Some(reps)) = (number(), number()) else {
            eprintln!("usage: rag-bench --pack-one CANDIDATES REPETITIONS");
            return std::process::ExitCode::from(2);
        };
        pack_one(n, reps);
        return std::process::ExitCode::SUCCESS;
    }
    let args = match parse_args() {
        Ok(args) => args,
        Err(err) => {
            eprintln!(
                "error: {err}\nusage: rag-bench [--corpus DIR] [--quick] [--runs N] [--ragctl PATH] [--work DIR] [--only SECTION] [--embedder DIR]"
            );
            return std::process::ExitCode::from(2);
        }
    };
    std::fs::create_dir_all(&args.work).unwrap();
    let (files, corpus_dir) = match &args.corpus {
        Some(dir) => (corpus::load(dir).unwrap(), dir.clone()),
        None => {
            let bytes = if args.quick { 1 << 20 } else { 4 << 20 };
            let files = corpus::generate(bytes);
            let dir = args.work.join(format!("corpus-{bytes}"));
            (files.clone(), corpus::write(&files, &dir).unwrap())
        }
    };
    if files.is_empty() {
        eprintln!("error: no Markdown files in {}", corpus_dir.display());
        return std::process::ExitCode::FAILURE;
    }
    let mut table = Table::default();
    let wanted = |section: &str| args.only.as_deref().is_none_or(|only| only == section);
    if wanted("chunking") {
        chunking(&mut table, &files, args.runs);
    }
    if wanted("ragctl") {
        match &args.ragctl {
            Some(ragctl) => ragctl_figures(&mut table, ragctl, &corpus_dir, &args.work, args.runs, args.quick),
            None => table.note("ragctl figures skipped: no --ragctl PATH (cargo xtask bench passes it)"),
        }
    }
    if wanted("near") {
        match &args.ragctl {
            Some(ragctl) => near_worst_figures(&mut table, ragctl, &args.work, args.runs, args.quick),
            None => table.note("near-dedup worst case skipped: no --ragctl PATH (cargo xtask bench passes it)"),
        }
    }
    if wanted("packing") {
        packing_figures(&mut table, args.runs, args.quick);
    }
    if wanted("embed") {
        // The folder `cargo xtask wordllama` writes, unless --embedder names another.
        let model = args
            .embedder
            .clone()
            .unwrap_or_else(|| std::path::PathBuf::from("target/models/wordllama-l2-256"));
        match &args.ragctl {
            Some(ragctl) if model.is_dir() => embed_figures::embed_figures(
                &mut table,
                ragctl,
                &model,
                &corpus_dir,
                &args.work,
                args.runs,
                args.quick,
            ),
            Some(_) => table.note(format!(
                "embedding figures skipped: no model folder at {} (cargo xtask wordllama writes it; or --embedder DIR)",
                model.display()
            )),
            None => table.note("embedding figures skipped: no --ragctl PATH (cargo xtask bench passes it)"),
        }
    }
    if wanted("access") {
        packing_figures::access_check_figure(&mut table, args.runs);
    }
    table.note(format!(
        "{} runs per figure (medians); {} cores; corpus {}",
        args.runs,
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        corpus_dir.display()
    ));
    println!("{}", table.render());
    std::process::ExitCode::SUCCESS
}
