//! `ragctl chunk`: parse files and cut them into chunks.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use rag_chunker::{DocumentType, HeadingAwareChunker, TiktokenCounter, parse_document, parse_document_owned};
use rag_core::{Chunk, CorpusId, DocumentId, ParsedDocument, Principal, RequestContext, SourceBytes, TokenCounter};

use crate::output::excerpt;

/// Arguments of `ragctl chunk`.
#[derive(Debug, Args)]
#[command(after_help = "Files that fail are reported on stderr; the others are still chunked (exit status 1).")]
pub(crate) struct ChunkArgs {
    /// Files, directories (walked recursively in sorted order), or - for stdin.
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// Maximum tokens per chunk.
    #[arg(long, default_value_t = 512, value_parser = clap::value_parser!(u32).range(1..))]
    max_tokens: u32,
    /// Tokens of overlap between consecutive body chunks of one section (must be below --max-tokens).
    #[arg(long, default_value_t = 64)]
    overlap_tokens: u32,
    /// Tokenizer that counts tokens.
    #[arg(long, value_enum, default_value_t = Tokenizer::Cl100kBase)]
    tokenizer: Tokenizer,
    /// Document type, overriding the file extension; required for stdin.
    #[arg(long = "type", value_enum, value_name = "TYPE")]
    doc_type: Option<TypeArg>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ChunkFormat::Text)]
    format: ChunkFormat,
    /// Chunks previewed per file in text format.
    #[arg(short = 'n', long, default_value_t = 5, value_name = "N")]
    show: usize,
    /// Tenant the chunks belong to.
    #[arg(long, default_value = "ragctl-local")]
    tenant: String,
    /// Corpus the documents belong to.
    #[arg(long, default_value = "local")]
    corpus: String,
}

/// A tokenizer name as the CLI spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Tokenizer {
    /// GPT-4 / GPT-3.5 and OpenAI embeddings.
    #[value(name = "cl100k_base")]
    Cl100kBase,
    /// GPT-4o.
    #[value(name = "o200k_base")]
    O200kBase,
}

impl Tokenizer {
    pub(crate) fn encoding(self) -> &'static str {
        match self {
            Self::Cl100kBase => "cl100k_base",
            Self::O200kBase => "o200k_base",
        }
    }

    pub(crate) fn counter(self) -> anyhow::Result<TiktokenCounter> {
        Ok(TiktokenCounter::new(self.encoding())?)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum TypeArg {
    Markdown,
    Text,
    Ocr,
}

impl From<TypeArg> for DocumentType {
    fn from(arg: TypeArg) -> Self {
        match arg {
            TypeArg::Markdown => Self::Markdown,
            TypeArg::Text => Self::Text,
            TypeArg::Ocr => Self::Ocr,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ChunkFormat {
    /// A summary per file and a preview of its first chunks.
    Text,
    /// One chunk JSON object per line: the input format of `ragctl pack`.
    Jsonl,
}

/// One thing to chunk: a file, or stdin.
#[derive(Debug, Clone)]
enum Input {
    Stdin,
    File(PathBuf),
}

impl Input {
    /// The name the chunks and messages use: the path as given, or `-`.
    fn uri(&self) -> String {
        match self {
            Self::Stdin => "-".to_owned(),
            Self::File(path) => path.display().to_string(),
        }
    }
}

/// What is shared by every file of the run.
struct Settings {
    ctx: RequestContext,
    corpus: CorpusId,
    chunker: HeadingAwareChunker,
    doc_type: Option<DocumentType>,
    format: ChunkFormat,
    show: usize,
    stdin: Option<Vec<u8>>,
}

/// The output of one file, made by a worker and written in input order by the main thread.
enum Rendered {
    /// The file's output, rendered in memory by a worker, for the writer to copy.
    Bytes(Vec<u8>),
    /// A large file, left to the writer, which chunks it when its turn comes and streams each chunk
    /// straight to stdout: its output never sits in memory.
    Deferred(Input),
}

/// Above this size, a file is chunked by the writer and streamed (see [`Rendered::Deferred`]).
const STREAM_FILES_OVER: u64 = 8 << 20;

/// Why a file produced no (complete) output.
enum Failure {
    /// The file could not be read, parsed or chunked: reported, and the run goes on.
    File(anyhow::Error),
    /// Stdout failed (a closed pipe, a full disk): the run stops.
    Output(anyhow::Error),
}

pub(crate) fn run(args: ChunkArgs) -> anyhow::Result<ExitCode> {
    use clap::CommandFactory as _;
    if args.overlap_tokens >= args.max_tokens {
        crate::Cli::command()
            .error(
                clap::error::ErrorKind::ArgumentConflict,
                format!(
                    "--overlap-tokens ({}) must be smaller than --max-tokens ({})",
                    args.overlap_tokens, args.max_tokens
                ),
            )
            .exit();
    }
    let reads_stdin = args.paths.iter().any(|p| p.as_os_str() == "-");
    if reads_stdin && args.doc_type.is_none() {
        crate::Cli::command()
            .error(
                clap::error::ErrorKind::MissingRequiredArgument,
                "reading stdin (-) needs --type",
            )
            .exit();
    }

    let mut failures = 0usize;
    let (inputs, walk_errors) = expand_inputs(&args.paths, args.doc_type.is_some());
    for (path, err) in &walk_errors {
        eprintln!("error: {path}: {err}");
        failures += 1;
    }

    let counter: Arc<dyn TokenCounter> = Arc::new(args.tokenizer.counter()?);
    let chunker = HeadingAwareChunker::new(args.max_tokens as usize, args.overlap_tokens as usize, counter)?;
    let stdin = if reads_stdin {
        let mut buf = Vec::new();
        std::io::stdin().read_to_end(&mut buf).context("reading stdin")?;
        Some(buf)
    } else {
        None
    };
    let settings = Settings {
        ctx: RequestContext::new(
            args.tenant.as_str(),
            Principal {
                id: "ragctl".into(),
                acl_labels: Vec::new(),
            },
        ),
        corpus: CorpusId::new(args.corpus),
        chunker,
        doc_type: args.doc_type.map(DocumentType::from),
        format: args.format,
        show: args.show,
        stdin,
    };

    let progress = progress_bar(inputs.len());
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    // Files are chunked on all cores and written in argument order; at most four files per thread
    // are in flight, so memory holds a few files' output, not the whole directory's.
    let threads = rayon::current_num_threads().max(1);
    crate::ordered::for_each_ordered(
        &inputs,
        threads,
        threads * 4,
        |input| chunk_input(input, &settings),
        |result| -> anyhow::Result<()> {
            let result = match result {
                Ok(Rendered::Bytes(bytes)) => out
                    .write_all(&bytes)
                    .context("writing to stdout")
                    .map_err(Failure::Output),
                Ok(Rendered::Deferred(input)) => chunk_traced(&input, &settings, &mut out),
                Err(err) => Err(Failure::File(err)),
            };
            match result {
                Ok(()) => {}
                Err(Failure::Output(err)) => return Err(err),
                Err(Failure::File(err)) => {
                    // Keep stdout and stderr in order for a person watching both.
                    out.flush().context("writing to stdout")?;
                    // Library errors name the file (path, document id or source uri) themselves.
                    progress.suspend(|| eprintln!("error: {err:#}"));
                    failures += 1;
                }
            }
            progress.inc(1);
            Ok(())
        },
    )?;
    out.flush().context("writing to stdout")?;
    progress.finish_and_clear();
    Ok(if failures > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn progress_bar(files: usize) -> ProgressBar {
    if files > 1 && std::io::stderr().is_terminal() {
        let bar = ProgressBar::new(files as u64);
        if let Ok(style) = ProgressStyle::with_template("{bar:40} {pos}/{len} files {elapsed}") {
            bar.set_style(style);
        }
        bar
    } else {
        ProgressBar::hidden()
    }
}

/// Expands directories into their files, sorted; returns the inputs and the paths that failed.
///
/// In a directory, only files with a supported extension are taken, unless `--type` is given, in
/// which case every file is. Hidden files and directories (leading `.`) are skipped.
fn expand_inputs(paths: &[PathBuf], take_all_files: bool) -> (Vec<Input>, Vec<(String, String)>) {
    let mut inputs = Vec::new();
    let mut errors = Vec::new();
    for path in paths {
        if path.as_os_str() == "-" {
            inputs.push(Input::Stdin);
        } else if path.is_dir() {
            walk(path, take_all_files, &mut inputs, &mut errors);
        } else {
            // A missing file is reported when it is read, with the reader's error.
            inputs.push(Input::File(path.clone()));
        }
    }
    (inputs, errors)
}

fn walk(dir: &Path, take_all_files: bool, inputs: &mut Vec<Input>, errors: &mut Vec<(String, String)>) {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(err) => {
            errors.push((dir.display().to_string(), format!("cannot read directory: {err}")));
            return;
        }
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .map(|e| e.path())
        .collect();
    paths.sort();
    for path in paths {
        // Symlinked directories are not followed, so a link cycle cannot loop forever.
        let is_symlink = path
            .symlink_metadata()
            .map(|m| m.file_type().is_symlink())
            .unwrap_or(false);
        if path.is_dir() {
            if !is_symlink {
                walk(&path, take_all_files, inputs, errors);
            }
        } else if path.is_file() && (take_all_files || DocumentType::from_path(&path.to_string_lossy()).is_some()) {
            inputs.push(Input::File(path));
        }
    }
}

/// A worker's part: renders the file in memory, or defers a large one to the writer.
fn chunk_input(input: &Input, settings: &Settings) -> anyhow::Result<Rendered> {
    if let Input::File(path) = input
        && std::fs::metadata(path).is_ok_and(|m| m.len() > STREAM_FILES_OVER)
    {
        return Ok(Rendered::Deferred(input.clone()));
    }
    let mut bytes = Vec::new();
    match chunk_traced(input, settings, &mut bytes) {
        Ok(()) => Ok(Rendered::Bytes(bytes)),
        Err(Failure::File(err) | Failure::Output(err)) => Err(err),
    }
}

/// Reads, parses and chunks one file inside its `rag.chunk` span, writing its output to `out` as
/// the chunks come.
fn chunk_traced(input: &Input, settings: &Settings, out: &mut dyn Write) -> Result<(), Failure> {
    let uri = input.uri();
    let span = tracing::info_span!(
        "rag.chunk",
        rag.tenant_id = settings.ctx.tenant_id.as_str(),
        rag.document_id = uri.as_str(),
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
    let result = chunk_into(input, &uri, settings, &span, out);
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
) -> Result<(), Failure> {
    let (parsed, doc_type) = read_and_parse(input, uri, settings, span).map_err(Failure::File)?;
    span.record("rag.chunk.blocks", parsed.blocks.len() as i64);
    // Chunks are written (JSONL) or summarised (text) as the chunker emits them, and dropped: a
    // document's chunks are never all in memory.
    let mut write_error: Option<std::io::Error> = None;
    let mut preview = Preview::new(settings.show);
    let mut emitted = 0usize;
    let chunked = settings
        .chunker
        .chunk_document_each(&settings.ctx, &parsed, &mut |chunk| {
            emitted += 1;
            match settings.format {
                ChunkFormat::Jsonl if write_error.is_none() => {
                    let written = serde_json::to_writer(&mut *out, &chunk)
                        .map_err(std::io::Error::from)
                        .and_then(|()| out.write_all(b"\n"));
                    write_error = written.err();
                }
                ChunkFormat::Jsonl => {}
                ChunkFormat::Text => preview.add(chunk),
            }
        });
    if let Some(err) = write_error {
        return Err(Failure::Output(anyhow::Error::new(err).context("writing to stdout")));
    }
    chunked.map_err(|err| Failure::File(err.into()))?;
    span.record("rag.chunk.chunks", emitted as i64);
    if settings.format == ChunkFormat::Text {
        let text = preview.render(uri, doc_type, parsed.blocks.len(), settings);
        out.write_all(text.as_bytes())
            .context("writing to stdout")
            .map_err(Failure::Output)?;
    }
    Ok(())
}

fn read_and_parse(
    input: &Input,
    uri: &str,
    settings: &Settings,
    span: &tracing::Span,
) -> anyhow::Result<(ParsedDocument, DocumentType)> {
    let doc_type = match settings.doc_type {
        Some(doc_type) => doc_type,
        None => DocumentType::detect(uri)?,
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
            let bytes = settings.stdin.as_deref().unwrap_or_default();
            span.record("rag.chunk.bytes", bytes.len() as i64);
            parse_document(&settings.ctx, doc_type, SourceBytes { bytes, ..source })?
        }
        Input::File(path) => {
            let bytes = std::fs::read(path).map_err(|source| rag_core::ParseError::Io {
                source_uri: uri.to_owned(),
                source,
            })?;
            span.record("rag.chunk.bytes", bytes.len() as i64);
            // The bytes become the document's text: a large file is in memory once, not twice.
            parse_document_owned(&settings.ctx, doc_type, source, bytes)?
        }
    };
    Ok((parsed, doc_type))
}

/// What the text format shows of a file: a tally of every chunk, and the first few in full.
struct Preview {
    show: usize,
    total: usize,
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
            kinds: Vec::new(),
            first: Vec::new(),
            heading_positions: HashMap::new(),
        }
    }

    fn add(&mut self, chunk: Chunk) {
        self.total += 1;
        let kind = chunk.metadata_str("kind").unwrap_or("other");
        match self.kinds.iter_mut().find(|(k, _)| k == kind) {
            Some((_, n)) => *n += 1,
            None => self.kinds.push((kind.to_owned(), 1)),
        }
        if self.first.len() < self.show {
            if kind == "heading" {
                self.heading_positions.insert(chunk.id.clone(), chunk.position);
            }
            self.first.push(chunk);
        }
    }

    fn render(&self, uri: &str, doc_type: DocumentType, blocks: usize, settings: &Settings) -> String {
        let tally = self
            .kinds
            .iter()
            .map(|(k, n)| format!("{k}: {n}"))
            .collect::<Vec<_>>()
            .join(", ");
        let mut s = String::new();
        let _ = writeln!(s, "{uri}");
        let _ = writeln!(s, "  parser:     {doc_type}");
        let _ = writeln!(s, "  blocks:     {blocks}");
        let tally = if tally.is_empty() {
            String::new()
        } else {
            format!("  ({tally})")
        };
        let _ = writeln!(s, "  chunks:     {}{tally}", self.total);
        let _ = writeln!(s, "  tokenizer:  {}", settings.chunker.counter().name());
        for chunk in &self.first {
            let kind = chunk.metadata_str("kind").unwrap_or("-");
            let level = chunk
                .metadata
                .get("level")
                .and_then(serde_json::Value::as_u64)
                .map_or(String::new(), |l| format!("h{l}"));
            let parent = chunk
                .parent_id
                .as_ref()
                .and_then(|p| self.heading_positions.get(p))
                .map_or(String::new(), |p| format!("↳ #{p}"));
            let tokens = chunk.token_count.map_or("?".to_owned(), |t| t.to_string());
            let text = excerpt(chunk.content().unwrap_or_default(), 60);
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
