//! `ragctl`: chunk documents along their structure and pack retrieved chunks into a token budget.
//!
//! Data goes to stdout, diagnostics to stderr. Exit status: 0 on success, 1 when the work failed,
//! 2 for usage errors (clap's own).

use std::process::ExitCode;

use clap::Parser;

/// Chunk documents along their structure and pack retrieved chunks into a model's token budget.
#[derive(Debug, Parser)]
#[command(name = "ragctl", version, about, long_about = None)]
struct Cli {}

fn main() -> ExitCode {
    let _cli = Cli::parse();
    ExitCode::SUCCESS
}
