//! `code-quality`: what a user keeps of chunking source code, measured against the syntax tree
//! (definitions in [`rag_bench::code_quality`]).
//!
//! ```text
//! (cd CORPUS && ragctl chunk . --format jsonl) | code-quality --root CORPUS --chunker ragctl [--name NAME] [--max-tokens N]
//! ```
//!
//! Each line is a chunk: `ragctl chunk --format jsonl`'s, or any JSON object with `document_id`
//! (a path under `--root`), `span` (`{"start", "end"}` in bytes) and, optionally,
//! `metadata.heading_path`, as `scripts/code_peers.py` writes the peers' chunks. One Markdown
//! table row is printed (with `--header`, the table's header first).
#![allow(clippy::print_stdout, clippy::print_stderr)] // a command-line tool reports on the terminal

use std::collections::BTreeMap;
use std::io::Read as _;
use std::ops::Range;
use std::path::PathBuf;
use std::process::ExitCode;

use rag_bench::code_quality::{CodeTally, grammar_of, outline};
use rag_chunker::TiktokenCounter;
use serde_json::Value;

const USAGE: &str = "\
usage: code-quality --root DIR [--name NAME] [--chunker NAME] [--max-tokens N] [--header] [CHUNKS.jsonl]

  --root DIR      the directory the chunks' document ids are paths under
  --name NAME     the corpus's name in the table (default: the last part of DIR)
  --chunker NAME  the chunker's name in the table (default: ragctl)
  --max-tokens N  the budget the chunks were cut for (default 512, cl100k_base)
  --header        print the table's header first
  CHUNKS.jsonl    the chunks (default: stdin)";

/// The chunks of each document: span and heading path, by document id.
type Chunks = BTreeMap<String, Vec<(Range<usize>, Vec<String>)>>;

fn read_chunks(input: Option<&PathBuf>) -> Result<Chunks, String> {
    let mut jsonl = String::new();
    match input {
        Some(path) => jsonl = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?,
        None => {
            std::io::stdin()
                .read_to_string(&mut jsonl)
                .map_err(|e| format!("stdin: {e}"))?;
        }
    }
    let mut documents = Chunks::new();
    for (n, line) in jsonl.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let chunk: Value = serde_json::from_str(line).map_err(|e| format!("line {}: {e}", n + 1))?;
        let field = |key: &str| chunk.get("span").and_then(|s| s.get(key)).and_then(Value::as_u64);
        let (Some(id), Some(start), Some(end)) = (chunk["document_id"].as_str(), field("start"), field("end")) else {
            return Err(format!("line {}: no document_id or span", n + 1));
        };
        let path = chunk["metadata"]["heading_path"]
            .as_array()
            .map(|titles| titles.iter().filter_map(Value::as_str).map(str::to_owned).collect())
            .unwrap_or_default();
        documents
            .entry(id.to_owned())
            .or_default()
            .push((start as usize..end as usize, path));
    }
    Ok(documents)
}

fn run() -> Result<(), String> {
    let mut root = None;
    let (mut name, mut chunker, mut max_tokens, mut header, mut input) = (None, "ragctl".to_owned(), 512, false, None);
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = |flag: &str| it.next().ok_or(format!("{flag} needs a value"));
        match arg.as_str() {
            "--root" => root = Some(PathBuf::from(value("--root")?)),
            "--name" => name = Some(value("--name")?),
            "--chunker" => chunker = value("--chunker")?,
            "--max-tokens" => {
                max_tokens = value("--max-tokens")?
                    .parse()
                    .map_err(|_| "--max-tokens needs a whole number".to_owned())?
            }
            "--header" => header = true,
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(());
            }
            other if other.starts_with('-') => return Err(format!("unknown argument {other:?}\n\n{USAGE}")),
            other => input = Some(PathBuf::from(other)),
        }
    }
    let root = root.ok_or(format!("--root is required\n\n{USAGE}"))?;
    let name = name.unwrap_or_else(|| {
        root.file_name()
            .map_or(String::new(), |n| n.to_string_lossy().into_owned())
    });
    let counter = TiktokenCounter::cl100k();
    let mut tally = CodeTally::default();
    for (id, chunks) in read_chunks(input.as_ref())? {
        let Some(grammar) = grammar_of(&id) else { continue };
        let path = root.join(&id);
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let outline = outline(&grammar, &text).ok_or(format!("{id}: no syntax tree"))?;
        tally
            .add(&text, &outline, &chunks, max_tokens, &counter)
            .map_err(|e| format!("{id}: {e}"))?;
    }
    if std::env::var_os("CODE_QUALITY_LIST").is_some() {
        for finding in &tally.findings {
            eprintln!("{finding}");
        }
    }
    if header {
        println!("{}", CodeTally::header());
    }
    println!("{}", tally.row(&name, &chunker));
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("code-quality: {err}");
            ExitCode::FAILURE
        }
    }
}
