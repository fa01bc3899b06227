//! `ragctl`: chunk documents along their structure and pack retrieved chunks into a token budget.
//!
//! Data goes to stdout, diagnostics to stderr. Exit status: 0 on success (a closed stdout counts as
//! success: `ragctl chunk big.md | head` is fine), 1 when the work failed, 2 for usage errors.

mod chunk;
mod demo;
mod diagnostics;
mod embedder;
mod input;
mod ordered;
mod output;
mod pack;
mod telemetry;
mod walk;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{CommandFactory as _, Parser, Subcommand};

/// Chunk documents along their structure and pack retrieved chunks into a model's token budget.
#[derive(Debug, Parser)]
#[command(name = "ragctl", version, about, long_about = None, after_long_help = EXAMPLES)]
struct Cli {
    /// Print no warnings, notes or progress bar on stderr (errors are still printed).
    #[arg(short, long, global = true)]
    quiet: bool,
    /// When to colour diagnostics: auto (stderr is a terminal and NO_COLOR is unset), always or
    /// never.
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = diagnostics::ColorChoice::Auto, global = true)]
    color: diagnostics::ColorChoice,
    #[command(subcommand)]
    command: Command,
}

const EXAMPLES: &str = "\
Examples:
  Pack the built-in demo corpus (the project's docs) for a question:
    ragctl pack \"how are near duplicates detected\" --demo
  Chunk a directory and pack the best chunks into 2000 tokens:
    ragctl chunk docs/ --format jsonl | ragctl pack \"how are duplicates dropped\" --budget 2000
  Paste-ready context from a file of retrieved chunks:
    ragctl pack \"refund window\" --input hits.jsonl --format context
  Shell completions:
    ragctl completions bash > ~/.local/share/bash-completion/completions/ragctl

Exit status: 0 on success, 1 when some work failed, 2 for usage errors.
See docs/reference/cli.md for every flag, limit and default.";

#[derive(Debug, Subcommand)]
enum Command {
    /// Parse files and cut them into token-budgeted chunks along their headings.
    Chunk(chunk::ChunkArgs),
    /// Pack the best chunks for a query into a token budget.
    Pack(pack::PackArgs),
    /// Print the completion script of a shell on stdout.
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Write the man pages (ragctl.1, ragctl-chunk.1, ...) into a directory (`cargo xtask man`).
    #[command(hide = true)]
    GenerateMan {
        /// The directory, created if missing.
        dir: PathBuf,
    },
}

/// Parses a flag whose values a library names (`PackOrder`, `SelectionStrategy`, `DocumentType`):
/// it accepts the name `name` gives each value of `all`, so `--help`, completions and man pages
/// list exactly the library's values under the names JSON and messages use, and a value the
/// library adds needs no change here.
fn library_values<T: Clone + Send + Sync + 'static>(
    all: &'static [T],
    name: fn(&T) -> &'static str,
) -> impl TypedValueParser<Value = T> {
    PossibleValuesParser::new(all.iter().map(name)).map(move |chosen| {
        all.iter()
            .find(|value| name(value) == chosen)
            .cloned()
            .expect("clap passes on only the possible values, each the name of a value of `all`")
    })
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    diagnostics::init(cli.quiet, cli.color);
    let result = match cli.command {
        Command::Completions { shell } => print_completions(shell),
        Command::GenerateMan { dir } => write_man_pages(&dir),
        Command::Chunk(args) => with_runtime(|| async { chunk::run(args) }),
        Command::Pack(args) => with_runtime(|| pack::run(args)),
    };
    match result {
        Ok(code) => code,
        Err(err) if output::is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            diagnostics::error(&diagnostics::error_chain(&err));
            ExitCode::FAILURE
        }
    }
}

/// Runs a command on a current-thread Tokio runtime with telemetry installed, and flushes the
/// telemetry before returning. The heavy work runs on rayon's threads; the runtime only drives
/// the async library calls.
fn with_runtime<F>(command: impl FnOnce() -> F) -> anyhow::Result<ExitCode>
where
    F: Future<Output = anyhow::Result<ExitCode>>,
{
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .context("starting the async runtime")?;
    let telemetry = telemetry::init();
    let result = runtime.block_on(command());
    telemetry.shutdown();
    result
}

fn print_completions(shell: clap_complete::Shell) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    clap_complete::generate(shell, &mut Cli::command(), "ragctl", &mut out);
    out.flush().context("writing to stdout")?;
    Ok(ExitCode::SUCCESS)
}

/// One page for `ragctl` and one per visible subcommand, all from the clap definitions.
fn write_man_pages(dir: &Path) -> anyhow::Result<ExitCode> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let command = Cli::command();
    let mut pages = vec![("ragctl".to_owned(), command.clone())];
    for sub in command.get_subcommands().filter(|sub| !sub.is_hide_set()) {
        let page = sub
            .clone()
            .display_name(format!("ragctl-{}", sub.get_name()))
            .bin_name(format!("ragctl {}", sub.get_name()));
        pages.push((format!("ragctl-{}", sub.get_name()), page));
    }
    for (name, page) in pages {
        let path = dir.join(format!("{name}.1"));
        let mut roff = Vec::new();
        clap_mangen::Man::new(page).render(&mut roff)?;
        std::fs::write(&path, roff).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}
