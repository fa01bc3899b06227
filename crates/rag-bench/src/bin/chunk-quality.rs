//! `chunk-quality`: what a user keeps of chunking, measured on the JSON Lines of `ragctl chunk`
//! (definitions in [`rag_bench::quality`]).
//!
//! ```text
//! (cd CORPUS && ragctl chunk . --format jsonl) | chunk-quality --root CORPUS [--name NAME] [--max-tokens N]
//! ```
//!
//! Each chunk's `document_id` is read as a path under `--root` (where `ragctl chunk` ran), the
//! file is parsed as Markdown, and one Markdown table row is printed for the corpus (with
//! `--header`, the table's header first).
#![allow(clippy::print_stdout, clippy::print_stderr)] // a command-line tool reports on the terminal

use std::io::Read as _;
use std::path::PathBuf;
use std::process::ExitCode;

use rag_bench::quality::{Document, Tally};
use rag_chunker::TiktokenCounter;
use rag_core::Chunk;

const USAGE: &str = "\
usage: chunk-quality --root DIR [--name NAME] [--max-tokens N] [--header] [--list] [CHUNKS.jsonl]

  --root DIR      the directory `ragctl chunk` ran in: document ids are paths under it
  --name NAME     the corpus's name in the table (default: the last part of DIR)
  --max-tokens N  the budget the chunks were cut for (default 512): a cut is forced when the
                  sentence or code block it falls in has more tokens
  --header        print the table's header first
  --list          also list, on stderr, each chunk that starts mid-sentence, starts with a
                  closing fence or cuts a fenced code block
  CHUNKS.jsonl    the chunks (default: stdin)";

struct Args {
    root: PathBuf,
    name: String,
    max_tokens: usize,
    header: bool,
    list: bool,
    input: Option<PathBuf>,
}

fn parse_args() -> Result<Args, String> {
    let mut root = None;
    let mut name = None;
    let mut max_tokens = 512;
    let mut header = false;
    let mut list = false;
    let mut input = None;
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = |flag: &str| it.next().ok_or(format!("{flag} needs a value"));
        match arg.as_str() {
            "--root" => root = Some(PathBuf::from(value("--root")?)),
            "--name" => name = Some(value("--name")?),
            "--max-tokens" => {
                max_tokens = value("--max-tokens")?
                    .parse()
                    .map_err(|_| "--max-tokens needs a whole number".to_owned())?
            }
            "--header" => header = true,
            "--list" => list = true,
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other if other.starts_with('-') => return Err(format!("unknown argument {other:?}\n\n{USAGE}")),
            other => input = Some(PathBuf::from(other)),
        }
    }
    let root = root.ok_or(format!("--root is required\n\n{USAGE}"))?;
    let name = name.unwrap_or_else(|| {
        root.file_name()
            .map_or_else(|| root.display().to_string(), |n| n.to_string_lossy().into_owned())
    });
    Ok(Args {
        root,
        name,
        max_tokens,
        header,
        list,
        input,
    })
}

/// The chunks of the input, grouped by document in order of first appearance, each group in
/// position order.
fn read_chunks(args: &Args) -> Result<Vec<Vec<Chunk>>, String> {
    let mut jsonl = String::new();
    match &args.input {
        Some(path) => {
            jsonl = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        }
        None => {
            std::io::stdin()
                .read_to_string(&mut jsonl)
                .map_err(|e| format!("stdin: {e}"))?;
        }
    }
    let mut documents: Vec<Vec<Chunk>> = Vec::new();
    let mut index = std::collections::HashMap::new();
    for (n, line) in jsonl.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let chunk: Chunk = serde_json::from_str(line).map_err(|e| format!("line {}: {e}", n + 1))?;
        let at = *index.entry(chunk.document_id.clone()).or_insert_with(|| {
            documents.push(Vec::new());
            documents.len() - 1
        });
        documents[at].push(chunk);
    }
    for chunks in &mut documents {
        chunks.sort_by_key(|c| c.position);
    }
    Ok(documents)
}

fn run(args: &Args) -> Result<Tally, String> {
    let counter = TiktokenCounter::cl100k();
    let mut tally = Tally::default();
    for chunks in read_chunks(args)? {
        let Some(first) = chunks.first() else { continue };
        let uri = first.document_id.as_str();
        let path = args.root.join(uri);
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let document = Document::markdown(uri, &text).map_err(|e| e.to_string())?;
        tally
            .add_document(&document, &chunks, args.max_tokens, &counter)
            .map_err(|e| e.to_string())?;
    }
    if tally.unmeasured > 0 {
        eprintln!(
            "chunk-quality: {} chunks without a span that is a slice of their file were not measured",
            tally.unmeasured
        );
    }
    Ok(tally)
}

fn main() -> ExitCode {
    match parse_args().and_then(|args| Ok((run(&args)?, args))) {
        Ok((tally, args)) => {
            if args.list {
                for finding in &tally.findings {
                    eprintln!("{finding}");
                }
            }
            if args.header {
                println!("{}", Tally::header());
            }
            println!("{}", tally.row(&args.name));
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("chunk-quality: {err}");
            ExitCode::FAILURE
        }
    }
}
