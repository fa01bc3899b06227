//! `ragctl`: chunk documents along their structure and pack retrieved chunks into a token budget.
//!
//! Data goes to stdout, diagnostics to stderr. Exit status: 0 on success (a closed stdout counts as
//! success: `ragctl chunk big.md | head` is fine), 1 when the work failed, 2 for usage errors.
#![allow(clippy::print_stderr)] // the binary reports errors on stderr; data goes through `output`

mod chunk;
mod demo;
mod ordered;
mod output;
mod pack;
mod telemetry;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Chunk documents along their structure and pack retrieved chunks into a model's token budget.
#[derive(Debug, Parser)]
#[command(name = "ragctl", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Parse files and cut them into token-budgeted chunks along their headings.
    Chunk(chunk::ChunkArgs),
    /// Pack the best chunks for a query into a token budget.
    Pack(pack::PackArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let telemetry = telemetry::init();
    let result = match cli.command {
        Command::Chunk(args) => chunk::run(args),
        Command::Pack(args) => pack::run(args),
    };
    telemetry.shutdown();
    match result {
        Ok(code) => code,
        Err(err) if output::is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}
