//! `ragctl chunk`: parse files and cut them into chunks.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use rag_chunker::ingest::{self, ParseOptions, WalkOptions};
use rag_chunker::parse::thousands;
use rag_chunker::{DocumentType, HeadingAwareChunker};
use rag_core::{
    Chunk, ChunkKind, CorpusId, DocumentId, ParsedDocument, Principal, RequestContext, SourceBytes, TokenCounter,
};

use rag_tokens::{HuggingFaceCounter, SUPPORTED_ENCODINGS, TiktokenCounter};

use crate::diagnostics::{self, escape_control as esc};
use crate::input::read_file_limited;
use crate::library_values;
use crate::output::{Spool, excerpt};
use crate::walk::{Input, expand_inputs};

/// Arguments of `ragctl chunk`.
#[derive(Debug, Args)]
#[command(
    after_help = "Files that fail are reported on stderr; the others are still chunked (exit status 1).",
    after_long_help = CHUNK_EXAMPLES
)]
pub(crate) struct ChunkArgs {
    /// Files, directories (walked recursively in sorted order, as ripgrep walks them), or - for
    /// stdin.
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// Maximum tokens per chunk.
    #[arg(long, default_value_t = HeadingAwareChunker::DEFAULT_MAX_TOKENS as u32, value_parser = clap::value_parser!(u32).range(1..))]
    max_tokens: u32,
    /// Tokens of overlap between consecutive body chunks of one section (must be below
    /// --max-tokens; source code has none, its chunks follow the syntax) [default: 64, or
    /// --max-tokens / 8 when that is smaller].
    #[arg(long, value_name = "N")]
    overlap_tokens: Option<u32>,
    /// Fold each heading into the first body chunk of its section (the chunk starts at the heading
    /// line) instead of giving it a chunk of its own: what a vector store wants.
    #[arg(long)]
    fold_headings: bool,
    /// Tokenizer that counts tokens: cl100k_base, o200k_base, or the path of a Hugging Face
    /// tokenizer.json (Llama, Mistral, Qwen, ...).
    #[arg(long, default_value = "cl100k_base", value_parser = parse_tokenizer, value_name = "NAME|FILE")]
    tokenizer: Tokenizer,
    /// Document type, overriding the file extension; required for stdin.
    #[arg(long = "type", value_name = "TYPE")]
    #[arg(value_parser = library_values(&DocumentType::ALL, |document_type| document_type.as_str()))]
    doc_type: Option<DocumentType>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ChunkFormat::Text)]
    format: ChunkFormat,
    /// Keep site chrome (navigation, tables of contents, page headers, footers, sidebars) in the
    /// text of HTML pages instead of leaving it out; scripts, styles and comments stay out.
    #[arg(long)]
    keep_chrome: bool,
    /// Keep text the document hides instead of leaving it out: HTML elements with the `hidden`
    /// attribute, `aria-hidden="true"` or an inline `display: none` / `visibility: hidden`, DOCX
    /// hidden runs (`w:vanish`), PDF invisible text.
    #[arg(long)]
    keep_hidden: bool,
    /// Chunks previewed per file in text format.
    #[arg(short = 'n', long, default_value_t = 5, value_name = "N")]
    show: usize,
    /// Tenant the chunks belong to.
    #[arg(long, default_value = "ragctl-local")]
    tenant: String,
    /// Corpus the documents belong to.
    #[arg(long, default_value = "local")]
    corpus: String,
    /// Largest input read (each file, and stdin), in bytes (K, M and G suffixes accepted). Real
    /// documents are under 100 MB; past this, the input is more likely a device or a log than
    /// something to chunk.
    #[arg(long, value_name = "SIZE", default_value = "256M", value_parser = crate::input::parse_size)]
    max_input_bytes: u64,
    /// Walk directories without honouring .gitignore, .ignore and git's exclude files.
    #[arg(long)]
    no_ignore: bool,
    /// Walk hidden files and directories (names starting with a dot) too.
    #[arg(long)]
    hidden: bool,
    /// List each file a directory walk skipped, not only their number.
    #[arg(short = 'v', long)]
    verbose: bool,
    /// A model2vec folder (config.json, model.safetensors, tokenizer.json): each chunk of the
    /// JSONL output carries its vector (`embedding`) and the model's id (`embedding_model`), for
    /// `ragctl pack --embedder` or a vector store. Nothing is downloaded.
    #[arg(long, value_name = "DIR")]
    embedder: Option<PathBuf>,
}

impl ChunkArgs {
    /// The parse options the flags set.
    fn parse_options(&self) -> ParseOptions {
        let mut options = ParseOptions::default().keep_hidden(self.keep_hidden);
        options.html.keep_chrome = self.keep_chrome;
        options.max_input_bytes = self.max_input_bytes;
        options
    }
}

const CHUNK_EXAMPLES: &str = "\
Examples:
  Preview the chunks of a file:
    ragctl chunk docs/architecture.md -n 3
  Chunk a directory to JSON Lines, 256-token chunks:
    ragctl chunk docs/ --format jsonl --max-tokens 256 > chunks.jsonl
  Read stdin as Markdown:
    curl -s https://example.com/README.md | ragctl chunk - --type markdown
  Chunk and pack in one pipe:
    ragctl chunk docs/ --format jsonl | ragctl pack \"how are duplicates dropped\"";

/// A tokenizer as the CLI names it: an OpenAI encoding, or a Hugging Face `tokenizer.json`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Tokenizer {
    /// `cl100k_base` (GPT-4, GPT-3.5, OpenAI embeddings) or `o200k_base` (GPT-4o).
    Encoding(&'static str),
    /// The path of a Hugging Face `tokenizer.json`, read when the command starts.
    HuggingFace(PathBuf),
}

impl Tokenizer {
    /// The counter; a `tokenizer.json` that cannot be read or parsed is an error naming it.
    pub(crate) fn counter(&self) -> anyhow::Result<Arc<dyn TokenCounter>> {
        Ok(match self {
            Self::Encoding(name) => Arc::new(TiktokenCounter::new(name)?),
            Self::HuggingFace(path) => Arc::new(HuggingFaceCounter::from_file(path)?),
        })
    }
}

/// `--tokenizer`: an encoding name, or a path ending in `.json` (any other name is a usage error,
/// so a misspelt encoding is not taken for a file).
pub(crate) fn parse_tokenizer(value: &str) -> Result<Tokenizer, String> {
    if let Some(name) = SUPPORTED_ENCODINGS.iter().find(|name| **name == value) {
        Ok(Tokenizer::Encoding(name))
    } else if value.ends_with(".json") {
        Ok(Tokenizer::HuggingFace(PathBuf::from(value)))
    } else {
        Err(format!(
            "expected {} or the path of a Hugging Face tokenizer.json (ending in .json)",
            SUPPORTED_ENCODINGS.join(", ")
        ))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ChunkFormat {
    /// A summary per file and a preview of its first chunks.
    Text,
    /// One chunk JSON object per line: the input format of `ragctl pack`.
    Jsonl,
    /// The text each file's chunks are cut from, as it is (spans index it): the file itself for
    /// Markdown and text, the text rendition for HTML, DOCX, PDF and OCR. With several files, each
    /// follows a `==> FILE <==` line.
    Rendition,
}

/// What is shared by every file of the run.
struct Settings {
    ctx: RequestContext,
    corpus: CorpusId,
    chunker: HeadingAwareChunker,
    doc_type: Option<DocumentType>,
    /// How files are read and parsed (`--keep-chrome`, `--max-input-bytes`).
    parse_options: ParseOptions,
    format: ChunkFormat,
    /// Whether the rendition of each file follows a line naming it (several inputs).
    name_renditions: bool,
    show: usize,
    /// Stdin read whole (when `-` is an input), or why it could not be.
    stdin: Option<Result<Vec<u8>, String>>,
    /// Counts the chunks of a lone input as they come (hidden unless it is drawn, see
    /// [`shows_progress`]).
    chunk_progress: ProgressBar,
    /// What the text reports of every file add up to, for the totals line.
    totals: std::sync::Mutex<Totals>,
    /// Embeds each chunk of the JSONL output (`--embedder`).
    embedder: Option<Arc<dyn rag_core::Embedder>>,
}

/// The sums over the files of a text report.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Totals {
    files: usize,
    blocks: usize,
    chunks: usize,
    tokens: usize,
    bytes: usize,
}

impl Totals {
    /// The line under a text report of several files; `errors` files failed.
    fn line(&self, errors: usize) -> String {
        let files = if self.files == 1 { "file" } else { "files" };
        let errors_word = if errors == 1 { "error" } else { "errors" };
        format!(
            "total: {} {files}, {} blocks, {} chunks, {} tokens, {} B, {errors} {errors_word}\n",
            thousands(self.files),
            thousands(self.blocks),
            thousands(self.chunks),
            thousands(self.tokens),
            thousands(self.bytes),
        )
    }
}

/// The output of one file, made by a worker and written in input order by the main thread.
enum Rendered {
    /// The file's output, rendered by a worker into a spool (its first [`SPOOLED_IN_MEMORY`]
    /// bytes in memory, the rest in a temporary file), for the writer to copy, and the parser's
    /// warnings about the file, for the writer to print.
    Spooled(Spool, Vec<String>),
    /// A large file, left to the writer, which chunks it when its turn comes into a spool of
    /// its own, so that only one large input is in memory at a time.
    Deferred(Input),
}

/// Above this size, a file is chunked by the writer and streamed (see [`Rendered::Deferred`]).
const STREAM_FILES_OVER: u64 = 8 << 20;

/// Input bytes of the files being chunked or waiting to be written, whatever the number of
/// threads: memory follows the bytes in flight, not the files, so it must not grow with the cores.
/// (A file larger than this is chunked alone.)
const IN_FLIGHT_BYTES: u64 = 16 << 20;

/// Files claimed ahead of the writer, whatever the number of threads.
const FILES_AHEAD: usize = 64;

/// Output of one file held in memory while it waits for its turn; the rest goes to a temporary
/// file. A file's JSONL is often ten times its size: held whole, the output of the files in
/// flight, not their input, would set the peak (and each worker's allocator arena keeps its own
/// high-water mark, so the peak would grow with the threads).
const SPOOLED_IN_MEMORY: usize = 1 << 20;

/// Why a file produced no (complete) output.
enum Failure {
    /// The file could not be read, parsed or chunked: reported, and the run goes on.
    File(anyhow::Error),
    /// Stdout failed (a closed pipe, a full disk): the run stops.
    Output(anyhow::Error),
}

pub(crate) fn run(args: ChunkArgs) -> anyhow::Result<ExitCode> {
    let overlap_tokens = checked_overlap_tokens(&args);
    let reads_stdin = args.paths.iter().any(|p| p.as_os_str() == "-");
    if reads_stdin && args.doc_type.is_none() {
        usage_error(
            clap::error::ErrorKind::MissingRequiredArgument,
            "reading stdin (-) needs --type",
        );
    }
    if args.embedder.is_some() && args.format != ChunkFormat::Jsonl {
        usage_error(
            clap::error::ErrorKind::ArgumentConflict,
            "--embedder writes vectors into JSON Lines: add --format jsonl",
        );
    }
    let (inputs, walk_failures) = walk_inputs(&args);
    let settings = Settings::from_args(args, overlap_tokens, reads_stdin, inputs.len())?;

    let progress = progress_bar(
        inputs.len(),
        std::io::stderr().is_terminal(),
        std::io::stdout().is_terminal(),
    );
    let stdout = std::io::stdout();
    let mut writer = Writer {
        out: std::io::BufWriter::new(stdout.lock()),
        progress,
        failures: walk_failures,
    };
    // Workers take files in argument order while the input bytes in flight (being chunked or
    // waiting for their turn) stay within `IN_FLIGHT_BYTES`; large files are chunked by the
    // writer, one at a time, so their cost here is nothing.
    let costs: Vec<u64> = inputs.iter().map(|input| in_flight_cost(input, &settings)).collect();
    let threads = rayon::current_num_threads().max(1);
    crate::ordered::for_each_ordered(
        &inputs,
        &costs,
        crate::ordered::Limits {
            threads,
            window: FILES_AHEAD,
            budget: IN_FLIGHT_BYTES,
        },
        |input| chunk_input(input, &settings),
        |result| writer.write(result, &settings),
    )?;
    settings.chunk_progress.finish_and_clear();
    writer.finish(&settings, inputs.len())
}

/// Prints a usage error (with the usage line) and exits, as clap does for its own.
fn usage_error(kind: clap::error::ErrorKind, message: impl std::fmt::Display) -> ! {
    use clap::CommandFactory as _;
    crate::Cli::command().error(kind, message).exit()
}

/// `--overlap-tokens`, or the library's default for `--max-tokens`; an overlap not below
/// `--max-tokens` is a usage error.
fn checked_overlap_tokens(args: &ChunkArgs) -> usize {
    // The library's default overlap shrinks with small chunks; an overlap the user chose is
    // checked as given.
    let overlap_tokens = args.overlap_tokens.map_or_else(
        || HeadingAwareChunker::default_overlap_tokens(args.max_tokens as usize),
        |n| n as usize,
    );
    if overlap_tokens >= args.max_tokens as usize {
        usage_error(
            clap::error::ErrorKind::ArgumentConflict,
            format!(
                "--overlap-tokens ({overlap_tokens}) must be smaller than --max-tokens ({})",
                args.max_tokens
            ),
        );
    }
    overlap_tokens
}

/// The inputs the paths name, directories walked; the walk's errors and warnings are reported
/// here, and the errors counted.
fn walk_inputs(args: &ChunkArgs) -> (Vec<Input>, usize) {
    let mut options = WalkOptions::default();
    options.all_files = args.doc_type.is_some();
    options.ignore_files = !args.no_ignore;
    options.hidden = args.hidden;
    let (inputs, report) = expand_inputs(&args.paths, options);
    for message in &report.errors {
        diagnostics::error(message);
    }
    for message in &report.broken_links {
        diagnostics::warning(message);
    }
    report_unsupported(&report.unsupported, args.verbose);
    (inputs, report.errors.len())
}

impl Settings {
    /// The settings of a run over `files` inputs: the counter and the chunker, and stdin read whole
    /// when it is an input.
    fn from_args(args: ChunkArgs, overlap_tokens: usize, reads_stdin: bool, files: usize) -> anyhow::Result<Settings> {
        let counter = args.tokenizer.counter()?;
        let embedder = args.embedder.as_deref().map(crate::embedder::load).transpose()?;
        let parse_options = args.parse_options();
        let chunker = HeadingAwareChunker::new(args.max_tokens as usize, overlap_tokens, counter)?
            .with_fold_headings(args.fold_headings);
        let stdin = reads_stdin.then(|| {
            crate::input::read_limited(std::io::stdin().lock(), "-", args.max_input_bytes, "--max-input-bytes")
                .map_err(|err| diagnostics::error_chain(&err))
        });
        Ok(Settings {
            ctx: RequestContext::new(
                args.tenant.as_str(),
                Principal {
                    id: "ragctl".into(),
                    acl_labels: Vec::new(),
                },
            ),
            corpus: CorpusId::new(args.corpus),
            chunker,
            doc_type: args.doc_type,
            parse_options,
            format: args.format,
            name_renditions: files > 1,
            show: args.show,
            stdin,
            chunk_progress: chunk_spinner(files, std::io::stderr().is_terminal(), std::io::stdout().is_terminal()),
            totals: std::sync::Mutex::new(Totals::default()),
            embedder,
        })
    }
}

/// The main thread's part: writes each file's output to stdout in input order, reports the files
/// that failed and counts them.
struct Writer {
    out: std::io::BufWriter<std::io::StdoutLock<'static>>,
    /// The bar of files (hidden unless it is drawn, see [`shows_progress`]).
    progress: ProgressBar,
    /// Inputs that failed: walk errors, then files.
    failures: usize,
}

impl Writer {
    /// Writes the output of the next file, or reports why it has none; only a failure of stdout
    /// is an error.
    fn write(&mut self, result: anyhow::Result<Rendered>, settings: &Settings) -> anyhow::Result<()> {
        let result = match result {
            Ok(Rendered::Spooled(spool, warnings)) => {
                self.warn(&warnings)?;
                spool
                    .copy_to(&mut self.out)
                    .context("writing to stdout")
                    .map_err(Failure::Output)
            }
            Ok(Rendered::Deferred(input)) => chunk_deferred(&input, settings, &mut self.out)
                .and_then(|warnings| self.warn(&warnings).map_err(Failure::Output)),
            Err(err) => Err(Failure::File(err)),
        };
        match result {
            Ok(()) => {}
            Err(Failure::Output(err)) => return Err(err),
            Err(Failure::File(err)) => {
                // Keep stdout and stderr in order for a person watching both.
                self.out.flush().context("writing to stdout")?;
                // Library errors name the file (path, document id or source uri) themselves.
                self.progress
                    .suspend(|| diagnostics::error(&diagnostics::error_chain(&err)));
                self.failures += 1;
            }
        }
        self.progress.inc(1);
        Ok(())
    }

    /// Prints a file's warnings, after the output of the files before it.
    fn warn(&mut self, warnings: &[String]) -> anyhow::Result<()> {
        if !warnings.is_empty() {
            // Keep stdout and stderr in order for a person watching both.
            self.out.flush().context("writing to stdout")?;
            self.progress.suspend(|| {
                for warning in warnings {
                    diagnostics::warning(warning);
                }
            });
        }
        Ok(())
    }

    /// After the last of `files` inputs: the totals line of a text report of several files, and
    /// the exit status.
    fn finish(mut self, settings: &Settings, files: usize) -> anyhow::Result<ExitCode> {
        if settings.format == ChunkFormat::Text && files > 1 {
            let totals = *settings
                .totals
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            self.out
                .write_all(totals.line(self.failures).as_bytes())
                .context("writing to stdout")?;
        }
        self.out.flush().context("writing to stdout")?;
        self.progress.finish_and_clear();
        Ok(if self.failures > 0 {
            ExitCode::FAILURE
        } else {
            ExitCode::SUCCESS
        })
    }
}

/// Says how many files of a directory walk were skipped for their type; `-v` names them.
fn report_unsupported(skipped: &[String], verbose: bool) {
    if skipped.is_empty() {
        return;
    }
    if verbose {
        for uri in skipped {
            diagnostics::note(&format!(
                "{uri}: skipped, not a supported type (--type reads every file)"
            ));
        }
    } else {
        let files = if skipped.len() == 1 { "file" } else { "files" };
        diagnostics::note(&format!(
            "skipped {} {files} of unsupported type in directories (-v lists them, --type reads every file)",
            skipped.len()
        ));
    }
}

/// The bytes a file holds while it is in flight: its size, or nothing for a file the writer
/// streams (see [`Rendered::Deferred`]) and for one that cannot be read (it fails at once).
fn in_flight_cost(input: &Input, settings: &Settings) -> u64 {
    match input {
        Input::Stdin => settings
            .stdin
            .as_ref()
            .and_then(|read| read.as_ref().ok())
            .map_or(0, |bytes| bytes.len() as u64),
        Input::File { path, .. } => std::fs::metadata(path)
            .map(|m| m.len())
            .ok()
            .filter(|&len| len <= STREAM_FILES_OVER)
            .unwrap_or(0),
    }
}

/// Whether to draw progress: stderr a terminal, and stdout not (a bar drawn on the terminal the
/// data goes to would interleave with it), unless `--quiet`. Several files get a bar of files,
/// one file a spinner of its chunks.
fn shows_progress(stderr_is_terminal: bool, stdout_is_terminal: bool, quiet: bool) -> bool {
    stderr_is_terminal && !stdout_is_terminal && !quiet
}

/// The spinner that counts a lone input's chunks, so a large file does not look hung.
fn chunk_spinner(files: usize, stderr_is_terminal: bool, stdout_is_terminal: bool) -> ProgressBar {
    if files == 1 && shows_progress(stderr_is_terminal, stdout_is_terminal, diagnostics::quiet()) {
        let spinner = ProgressBar::new_spinner();
        if let Ok(style) = ProgressStyle::with_template("{spinner} {pos} chunks {elapsed}") {
            spinner.set_style(style);
        }
        spinner.enable_steady_tick(std::time::Duration::from_millis(120));
        spinner
    } else {
        ProgressBar::hidden()
    }
}

fn progress_bar(files: usize, stderr_is_terminal: bool, stdout_is_terminal: bool) -> ProgressBar {
    if files > 1 && shows_progress(stderr_is_terminal, stdout_is_terminal, diagnostics::quiet()) {
        let bar = ProgressBar::new(files as u64);
        if let Ok(style) = ProgressStyle::with_template("{bar:40} {pos}/{len} files {elapsed}") {
            bar.set_style(style);
        }
        bar
    } else {
        ProgressBar::hidden()
    }
}

/// The writer's part for a large file: its output goes to a spool (memory, then a temporary
/// file) and reaches stdout only once the whole file is chunked, so a file that fails half-way
/// leaves nothing behind.
fn chunk_deferred(input: &Input, settings: &Settings, out: &mut dyn Write) -> Result<Vec<String>, Failure> {
    let mut spool = Spool::new(Spool::MEMORY);
    let warnings = chunk_traced(input, settings, &mut spool)?;
    spool
        .copy_to(out)
        .context("writing to stdout")
        .map_err(Failure::Output)?;
    Ok(warnings)
}

/// A worker's part: renders the file in memory, or defers a large one to the writer.
fn chunk_input(input: &Input, settings: &Settings) -> anyhow::Result<Rendered> {
    if let Input::File { path, .. } = input
        && std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() > STREAM_FILES_OVER)
    {
        return Ok(Rendered::Deferred(input.clone()));
    }
    let mut spool = Spool::new(SPOOLED_IN_MEMORY);
    match chunk_traced(input, settings, &mut spool) {
        Ok(warnings) => Ok(Rendered::Spooled(spool, warnings)),
        Err(Failure::File(err) | Failure::Output(err)) => Err(err),
    }
}

/// Reads, parses and chunks one file inside its `rag.chunk` span, writing its output to `out` as
/// the chunks come; returns the parser's warnings, each naming the file.
fn chunk_traced(input: &Input, settings: &Settings, out: &mut dyn Write) -> Result<Vec<String>, Failure> {
    let uri = input.uri();
    let span = tracing::info_span!(
        "rag.chunk",
        rag.tenant_id = settings.ctx.tenant_id.as_str(),
        rag.document_id = uri,
        rag.tokenizer = settings.chunker.counter().name(),
        rag.chunk.max_tokens = settings.chunker.max_tokens() as i64,
        rag.chunk.overlap_tokens = settings.chunker.overlap_tokens() as i64,
        rag.chunk.doc_type = tracing::field::Empty,
        rag.chunk.bytes = tracing::field::Empty,
        rag.chunk.blocks = tracing::field::Empty,
        rag.chunk.chunks = tracing::field::Empty,
        otel.status_code = tracing::field::Empty,
        otel.status_description = tracing::field::Empty,
    );
    let _entered = span.enter();
    let result = chunk_into(input, uri, settings, &span, out);
    if let Err(Failure::File(err) | Failure::Output(err)) = &result {
        span.record("otel.status_code", "ERROR");
        span.record("otel.status_description", format!("{err:#}"));
    }
    result
}

fn chunk_into(
    input: &Input,
    uri: &str,
    settings: &Settings,
    span: &tracing::Span,
    out: &mut dyn Write,
) -> Result<Vec<String>, Failure> {
    let (parsed, doc_type) = read_and_parse(input, uri, settings, span).map_err(Failure::File)?;
    span.record("rag.chunk.blocks", parsed.blocks.len() as i64);
    // The parser's warnings, and the one a document without text gets, which says why.
    let warnings: Vec<String> = parsed
        .warnings()
        .iter()
        .cloned()
        .chain(rag_chunker::parse::no_text_warning(&parsed))
        .map(|warning| format!("{uri}: {warning}"))
        .collect();
    if settings.format == ChunkFormat::Rendition {
        let header = if settings.name_renditions {
            format!("==> {} <==\n", esc(uri))
        } else {
            String::new()
        };
        return out
            .write_all(header.as_bytes())
            .and_then(|()| out.write_all(parsed.document.text.as_bytes()))
            .and_then(|()| {
                if settings.name_renditions {
                    out.write_all(b"\n")
                } else {
                    Ok(())
                }
            })
            .map(|()| warnings)
            .context("writing the output")
            .map_err(Failure::Output);
    }
    // Chunks are written (JSONL) or summarised (text) as the chunker emits them, and dropped: a
    // document's chunks are never all in memory.
    let mut write_error: Option<std::io::Error> = None;
    let mut embed_error: Option<rag_core::EmbedError> = None;
    let mut preview = Preview::new(settings.show);
    let mut emitted = 0usize;
    let chunked = settings
        .chunker
        .chunk_document_each(&settings.ctx, &parsed, &mut |mut chunk| {
            emitted += 1;
            settings.chunk_progress.inc(1);
            if let Some(embedder) = &settings.embedder
                && embed_error.is_none()
                && let Err(err) = rag_core::embed_chunks(embedder.as_ref(), std::slice::from_mut(&mut chunk))
            {
                embed_error = Some(err);
            }
            match settings.format {
                ChunkFormat::Jsonl if write_error.is_none() && embed_error.is_none() => {
                    let written = serde_json::to_writer(&mut *out, &chunk)
                        .map_err(std::io::Error::from)
                        .and_then(|()| out.write_all(b"\n"));
                    write_error = written.err();
                }
                ChunkFormat::Jsonl | ChunkFormat::Rendition => {}
                ChunkFormat::Text => preview.add(chunk),
            }
        });
    if let Some(err) = write_error {
        return Err(Failure::Output(anyhow::Error::new(err).context("writing the output")));
    }
    if let Some(err) = embed_error {
        return Err(Failure::File(err.into()));
    }
    chunked.map_err(|err| Failure::File(err.into()))?;
    span.record("rag.chunk.chunks", emitted as i64);
    if settings.format == ChunkFormat::Text {
        let bytes = parsed
            .rendition
            .as_ref()
            .and_then(|rendition| rendition.original_bytes)
            .unwrap_or(parsed.document.text.len());
        let mut totals = settings
            .totals
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        totals.files += 1;
        totals.blocks += parsed.blocks.len();
        totals.chunks += preview.total;
        totals.tokens += preview.tokens;
        totals.bytes += bytes;
        drop(totals);
        let text = preview.render(uri, doc_type, &parsed, settings);
        out.write_all(text.as_bytes())
            .context("writing the output")
            .map_err(Failure::Output)?;
    }
    Ok(warnings)
}

fn read_and_parse(
    input: &Input,
    uri: &str,
    settings: &Settings,
    span: &tracing::Span,
) -> anyhow::Result<(ParsedDocument, DocumentType)> {
    let doc_type = match settings.doc_type {
        Some(doc_type) => doc_type,
        None => DocumentType::detect(uri).map_err(|err| match err {
            rag_core::ParseError::UnsupportedType { kind, supported, .. } if kind.is_empty() => anyhow::anyhow!(
                "{uri}: no file extension to tell the type by; name it with --type (supported: {supported})"
            ),
            err => err.into(),
        })?,
    };
    span.record("rag.chunk.doc_type", doc_type.as_str());
    let document_id = DocumentId::new(uri);
    let source = SourceBytes {
        document_id: &document_id,
        corpus_id: &settings.corpus,
        source_uri: uri,
        bytes: &[],
    };
    let parsed = match input {
        Input::Stdin => {
            let bytes = match &settings.stdin {
                Some(Ok(bytes)) => bytes.as_slice(),
                Some(Err(message)) => anyhow::bail!("{message}"),
                None => &[],
            };
            span.record("rag.chunk.bytes", bytes.len() as i64);
            ingest::parse_bytes(
                &settings.ctx,
                doc_type,
                SourceBytes { bytes, ..source },
                &settings.parse_options,
            )?
        }
        Input::File { path, .. } => {
            let bytes = read_file_limited(path, uri, settings.parse_options.max_input_bytes, "--max-input-bytes")?;
            span.record("rag.chunk.bytes", bytes.len() as i64);
            // The bytes become the document's text: a large file is in memory once, not twice.
            ingest::parse_owned(&settings.ctx, doc_type, source, bytes, &settings.parse_options)?
        }
    };
    Ok((parsed, doc_type))
}

/// The report lines of a rendition: the original's size and the rendition's, and what was left
/// out by kind, largest first.
fn rendition_lines(rendition: &rag_core::Rendition, text_bytes: usize) -> String {
    let mut s = String::new();
    let original = rendition
        .original_bytes
        .map_or(String::new(), |n| format!(" of {} B", thousands(n)));
    let _ = writeln!(
        s,
        "  rendition:  {}{original}, {} B of text",
        esc(&rendition.format),
        thousands(text_bytes)
    );
    let mut kinds: Vec<(&String, &usize)> = rendition.left_out.iter().collect();
    kinds.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
    let kinds: Vec<String> = kinds
        .iter()
        .map(|(kind, bytes)| format!("{} B {}", thousands(**bytes), esc(kind)))
        .collect();
    let left_out = if kinds.is_empty() {
        "nothing".to_owned()
    } else {
        kinds.join(", ")
    };
    let _ = writeln!(s, "  left out:   {left_out}");
    s
}

/// What the text format shows of a file: a tally of every chunk, and the first few in full.
struct Preview {
    show: usize,
    total: usize,
    /// The chunks' tokens, summed.
    tokens: usize,
    kinds: Vec<(String, usize)>,
    first: Vec<Chunk>,
    /// Positions of heading chunks, for the parent arrows (parents are headings).
    heading_positions: HashMap<rag_core::ChunkId, usize>,
}

impl Preview {
    fn new(show: usize) -> Self {
        Self {
            show,
            total: 0,
            tokens: 0,
            kinds: Vec::new(),
            first: Vec::new(),
            heading_positions: HashMap::new(),
        }
    }

    fn add(&mut self, chunk: Chunk) {
        self.total += 1;
        self.tokens += chunk.token_count.unwrap_or(0);
        let kind = chunk.metadata_str(ChunkKind::KEY).unwrap_or("other");
        match self.kinds.iter_mut().find(|(k, _)| k == kind) {
            Some((_, n)) => *n += 1,
            None => self.kinds.push((kind.to_owned(), 1)),
        }
        if self.first.len() < self.show {
            if chunk.is_heading() {
                self.heading_positions.insert(chunk.id.clone(), chunk.position);
            }
            self.first.push(chunk);
        }
    }

    fn render(&self, uri: &str, doc_type: DocumentType, parsed: &ParsedDocument, settings: &Settings) -> String {
        let blocks = parsed.blocks.len();
        let tally = self
            .kinds
            .iter()
            .map(|(k, n)| format!("{k}: {n}"))
            .collect::<Vec<_>>()
            .join(", ");
        let mut s = String::new();
        let _ = writeln!(s, "{}", esc(uri));
        let _ = writeln!(s, "  parser:     {doc_type}");
        // Source code is read as it is: its rendition is the file, with nothing to report but
        // the warnings, which go to stderr.
        if let Some(rendition) = parsed
            .rendition
            .as_ref()
            .filter(|_| !matches!(doc_type, DocumentType::Code(_)))
        {
            s.push_str(&rendition_lines(rendition, parsed.document.text.len()));
        }
        let _ = writeln!(s, "  blocks:     {blocks}");
        let tally = if tally.is_empty() {
            String::new()
        } else {
            format!("  ({tally})")
        };
        let _ = writeln!(s, "  chunks:     {}{tally}", self.total);
        let _ = writeln!(s, "  tokenizer:  {}", settings.chunker.counter().name());
        for chunk in &self.first {
            let kind = chunk.metadata_str(ChunkKind::KEY).unwrap_or("-");
            let level = chunk.heading_level().map_or(String::new(), |l| format!("h{l}"));
            let parent = chunk
                .parent_id
                .as_ref()
                .and_then(|p| self.heading_positions.get(p))
                .map_or(String::new(), |p| format!("↳ #{p}"));
            let tokens = chunk.token_count.map_or("?".to_owned(), |t| t.to_string());
            let text = excerpt(chunk.content().unwrap_or_default(), 60);
            let (kind, text) = (esc(kind), esc(&text));
            let _ = writeln!(
                s,
                "  #{:<4} {kind:<7} {level:<2} {tokens:>5} tok  {parent:<7} {text}",
                chunk.position
            );
        }
        if self.total > self.first.len() {
            let _ = writeln!(s, "  ... {} more", self.total - self.first.len());
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The arguments `ragctl chunk` gets from `words`.
    fn chunk_args(words: &[&str]) -> ChunkArgs {
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            args: ChunkArgs,
        }
        <Cli as clap::Parser>::try_parse_from(std::iter::once("chunk").chain(words.iter().copied()))
            .unwrap()
            .args
    }

    #[test]
    fn the_flags_defaults_are_the_librarys() {
        let args = chunk_args(&["doc.md"]);
        assert_eq!(args.parse_options(), ParseOptions::default());
        assert_eq!(args.max_tokens as usize, HeadingAwareChunker::DEFAULT_MAX_TOKENS);
        let args = chunk_args(&["doc.html", "--keep-chrome", "--keep-hidden", "--max-input-bytes", "1K"]);
        let options = args.parse_options();
        assert!(options.html.keep_chrome);
        assert!(options.html.keep_hidden && options.docx.keep_hidden && options.pdf.keep_hidden);
        assert_eq!(options.max_input_bytes, 1024);
    }

    #[test]
    fn byte_counts_have_thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }

    #[test]
    fn a_rendition_reports_what_it_left_out_largest_first() {
        let mut rendition = rag_core::Rendition::new("html", Some(48_213));
        rendition.leave_out("script", 3_210);
        rendition.leave_out("markup", 12_345);
        rendition.leave_out("chrome", 8_000);
        assert_eq!(
            rendition_lines(&rendition, 24_658),
            "  rendition:  html of 48,213 B, 24,658 B of text\n  left out:   12,345 B markup, 8,000 B chrome, 3,210 B script\n"
        );
        let ocr = rag_core::Rendition::new("ocr", None);
        assert_eq!(
            rendition_lines(&ocr, 10),
            "  rendition:  ocr, 10 B of text\n  left out:   nothing\n"
        );
    }

    #[test]
    fn the_progress_bar_is_never_drawn_on_the_terminal_the_data_goes_to() {
        // Data redirected, a person watching stderr: the bar.
        assert!(shows_progress(true, false, false));
        // Data on the same terminal: bar lines would interleave with it.
        assert!(!shows_progress(true, true, false));
        assert!(!shows_progress(false, false, false), "stderr is not a terminal");
        assert!(!shows_progress(true, false, true), "--quiet");
        // Not drawn where stderr is not a terminal, whatever the number of files.
        assert!(chunk_spinner(1, false, false).is_hidden());
        assert!(progress_bar(2, false, false).is_hidden());
    }

    #[test]
    fn the_totals_line_sums_the_files_with_their_errors() {
        let totals = Totals {
            files: 2,
            blocks: 1_200,
            chunks: 31,
            tokens: 12_345,
            bytes: 160_002,
        };
        assert_eq!(
            totals.line(1),
            "total: 2 files, 1,200 blocks, 31 chunks, 12,345 tokens, 160,002 B, 1 error\n"
        );
    }
}
