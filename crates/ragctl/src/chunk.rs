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
use rag_chunker::{DocumentType, HeadingAwareChunker, TiktokenCounter, parse_document};
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
    /// The text format: a summary, rendered.
    Text(String),
    /// The JSONL format of a file of ordinary size, serialised by the worker, so that the writer
    /// does nothing but copy bytes and the workers scale.
    Jsonl(Vec<u8>),
    /// The JSONL format of a large file, serialised as it is written, so that its JSON text never
    /// sits in memory next to its chunks.
    Chunks(Vec<Chunk>),
}

/// Above this much chunk content, a file's JSONL is serialised by the writer, chunk by chunk.
const SERIALISE_IN_WORKER_LIMIT: usize = 8 << 20;

impl Rendered {
    fn jsonl(chunks: Vec<Chunk>) -> serde_json::Result<Self> {
        let content: usize = chunks.iter().map(|c| c.content().map_or(0, str::len)).sum();
        if content > SERIALISE_IN_WORKER_LIMIT {
            return Ok(Self::Chunks(chunks));
        }
        let mut buf = Vec::with_capacity(content + content / 16 + chunks.len() * 320);
        for chunk in chunks {
            serde_json::to_writer(&mut buf, &chunk)?;
            buf.push(b'\n');
        }
        Ok(Self::Jsonl(buf))
    }

    fn write_to(self, out: &mut impl Write) -> anyhow::Result<()> {
        match self {
            Self::Text(text) => out.write_all(text.as_bytes()).context("writing to stdout"),
            Self::Jsonl(json) => out.write_all(&json).context("writing to stdout"),
            Self::Chunks(chunks) => {
                for chunk in chunks {
                    serde_json::to_writer(&mut *out, &chunk).context("writing to stdout")?;
                    out.write_all(b"\n").context("writing to stdout")?;
                }
                Ok(())
            }
        }
    }
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
            match result {
                Ok(rendered) => rendered.write_to(&mut out)?,
                Err(err) => {
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

fn chunk_input(input: &Input, settings: &Settings) -> anyhow::Result<Rendered> {
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
    let result = chunk_traced(input, &uri, settings, &span);
    if let Err(err) = &result {
        span.record("otel.status_code", "ERROR");
        span.record("otel.status_description", format!("{err:#}"));
    }
    result
}

fn chunk_traced(input: &Input, uri: &str, settings: &Settings, span: &tracing::Span) -> anyhow::Result<Rendered> {
    // The file's bytes are freed when parsing returns, and the parsed document (its text and the
    // blocks' texts, each about the size of the file) before the output is rendered: peak memory
    // is then the larger of parse + chunks and chunks + output, not all four at once.
    let (parsed, doc_type) = read_and_parse(input, uri, settings, span)?;
    let chunks = settings.chunker.chunk_document(&settings.ctx, &parsed)?;
    let blocks = parsed.blocks.len();
    drop(parsed);
    span.record("rag.chunk.blocks", blocks as i64);
    span.record("rag.chunk.chunks", chunks.len() as i64);
    Ok(match settings.format {
        ChunkFormat::Jsonl => Rendered::jsonl(chunks).with_context(|| format!("{uri}: writing JSON"))?,
        ChunkFormat::Text => Rendered::Text(render_text(uri, doc_type, blocks, &chunks, settings)),
    })
}

fn read_and_parse(
    input: &Input,
    uri: &str,
    settings: &Settings,
    span: &tracing::Span,
) -> anyhow::Result<(ParsedDocument, DocumentType)> {
    let owned;
    let bytes: &[u8] = match input {
        Input::Stdin => settings.stdin.as_deref().unwrap_or_default(),
        Input::File(path) => {
            owned = std::fs::read(path).map_err(|source| rag_core::ParseError::Io {
                source_uri: uri.to_owned(),
                source,
            })?;
            &owned
        }
    };
    span.record("rag.chunk.bytes", bytes.len() as i64);
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
        bytes,
    };
    Ok((parse_document(&settings.ctx, doc_type, source)?, doc_type))
}

fn render_text(uri: &str, doc_type: DocumentType, blocks: usize, chunks: &[Chunk], settings: &Settings) -> String {
    let mut kinds: Vec<(&str, usize)> = Vec::new();
    for chunk in chunks {
        let kind = chunk.metadata_str("kind").unwrap_or("other");
        match kinds.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, n)) => *n += 1,
            None => kinds.push((kind, 1)),
        }
    }
    let tally = kinds
        .iter()
        .map(|(k, n)| format!("{k}: {n}"))
        .collect::<Vec<_>>()
        .join(", ");
    let mut s = String::new();
    let _ = writeln!(s, "{uri}");
    let _ = writeln!(s, "  parser:     {doc_type}");
    let _ = writeln!(s, "  blocks:     {blocks}");
    let _ = writeln!(
        s,
        "  chunks:     {}{}",
        chunks.len(),
        if tally.is_empty() {
            String::new()
        } else {
            format!("  ({tally})")
        }
    );
    let _ = writeln!(s, "  tokenizer:  {}", settings.chunker.counter().name());
    let positions: HashMap<&rag_core::ChunkId, usize> = chunks.iter().map(|c| (&c.id, c.position)).collect();
    for chunk in chunks.iter().take(settings.show) {
        let kind = chunk.metadata_str("kind").unwrap_or("-");
        let level = chunk
            .metadata
            .get("level")
            .and_then(serde_json::Value::as_u64)
            .map_or(String::new(), |l| format!("h{l}"));
        let parent = chunk
            .parent_id
            .as_ref()
            .and_then(|p| positions.get(p))
            .map_or(String::new(), |p| format!("↳ #{p}"));
        let tokens = chunk.token_count.map_or("?".to_owned(), |t| t.to_string());
        let text = excerpt(chunk.content().unwrap_or_default(), 60);
        let _ = writeln!(
            s,
            "  #{:<4} {kind:<7} {level:<2} {tokens:>5} tok  {parent:<7} {text}",
            chunk.position
        );
    }
    if chunks.len() > settings.show {
        let _ = writeln!(s, "  ... {} more", chunks.len() - settings.show);
    }
    s
}
