//! `cargo xtask`: the project's automation, in Rust instead of shell scripts.
//!
//! ```text
//! cargo xtask ci         fmt check, clippy (deny warnings), all tests, the contract suite, cargo deny
//! cargo xtask contract   the contract suite alone
//! cargo xtask deny       cargo deny, offline, advisories against the RustSec snapshot
//! cargo xtask fuzz       the cargo-fuzz targets, N seconds each (`--seconds N`, target names)
//! cargo xtask bench      the performance figures in one table (`--quick`, `--corpus DIR`, `--runs N`)
//! cargo xtask eval       answer-in-context recall of `ragctl pack` on real docs (`--ragctl PATH`, `--json FILE`)
//! cargo xtask man        the man pages of ragctl, in target/man
//! cargo xtask wordllama  a model2vec folder for `--embedder` from the wordllama wheel (PyPI), in target/models
//! cargo xtask python     the Python package: wheel (release) in a venv with its test dependencies,
//!                         pytest, then stubtest and mypy on the installed package
//! ```
#![allow(clippy::print_stdout, clippy::print_stderr)] // a command-line tool reports on the terminal

mod bench;
mod ci;
mod contract;
mod deny;
mod eval;
mod fuzz;
mod man;
mod python;
mod run;
mod wordllama;

use std::process::ExitCode;

const USAGE: &str = "\
usage: cargo xtask <task>

tasks:
  ci         cargo fmt --check, clippy -D warnings, cargo test --workspace, the contract suite, deny
  contract   the contract suite alone
  deny       cargo deny --offline check (advisories against ../shared/rustsec)
  fuzz       cargo fuzz run, each target [--seconds N] [TARGET...] (needs cargo-fuzz)
  bench      performance figures with targets [--quick] [--corpus DIR] [--runs N]
  eval       answer-in-context recall of ragctl pack on eval/ [--ragctl PATH] [--json FILE]
             [--corpus DIR]... [--questions FILE] [--strategies S,..] [--budgets N,..] [--threads N]
  man        the man pages of ragctl, generated from its clap definitions, in target/man
  python     the Python package: its wheel (release) in target/python/venv with the pinned test
             dependencies, then its pytest suite, stubtest and mypy (PYTHON names the
             interpreter, default python3)
  wordllama  a model2vec folder for `ragctl --embedder` from the wordllama wheel (pip download from
             PyPI, re-keyed), in target/models/wordllama-l2-256 [OUT_DIR]";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("ci") => ci::ci(),
        Some("contract") => ci::contract(),
        Some("deny") => deny::deny(),
        Some("fuzz") => fuzz::fuzz(&args[1..]),
        Some("bench") => bench::bench(&args[1..]),
        Some("eval") => eval::eval(&args[1..]),
        Some("man") => man::man(),
        Some("python") => python::python(),
        Some("wordllama") => wordllama::wordllama(&args[1..]),
        Some("-h" | "--help" | "help") => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Some(other) => {
            eprintln!("error: unknown task {other:?}\n\n{USAGE}");
            return ExitCode::from(2);
        }
        None => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("xtask: {err}");
            ExitCode::FAILURE
        }
    }
}
