//! `rag-eval`: how often the answer to a question is in the context `ragctl pack` builds (run it
//! through `cargo xtask eval`, which builds `ragctl` in release and passes `--ragctl`).
//!
//! ```text
//! rag-eval [--ragctl PATH] [--corpus DIR]... [--questions FILE] [--json FILE] [--threads N]
//!          [--strategies S,S,...] [--budgets N,N,...] [--work DIR] [--fold-headings]
//! ```
//!
//! Each corpus directory holds `docs/` (the Markdown) and `questions.jsonl`; without `--corpus`
//! every directory under `eval/corpus/` is a corpus. For each one the harness checks every gold
//! answer against its file, chunks `docs/` once with `ragctl chunk docs --format jsonl` (defaults,
//! as a user would; `--fold-headings` adds that flag), then for every question, strategy and budget runs `ragctl pack` twice, with
//! `--format context` (is the answer in it, how many tokens is it) and `--format json` (what was
//! packed). Results are the same for the same binary and inputs whatever the thread count.
//!
//! A corpus may have format variants: every directory beside `docs/` (say `html/`) holds the same
//! documents in another format, one file per document of `docs/` with the same path and name and
//! another extension (`fs.md`, `fs.html`). Each is chunked and packed for the same questions, and
//! its recall is compared with that of `docs/` on the answers' words (a rendering changes
//! punctuation and markup, not words), at every strategy and budget.
#![allow(clippy::print_stdout, clippy::print_stderr)] // a command-line tool reports on the terminal

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

use rag_bench::eval::answer::{contains_answer, contains_answer_words};
use rag_bench::eval::questions::{Origin, Question, load_questions};
use rag_bench::eval::report::{
    HybridRow, PackOutcome, VariantRow, format_hybrid_table, format_table, format_variant_table, question_json,
    summarise,
};
use rag_chunker::TiktokenCounter;
use rag_core::TokenCounter;
use serde_json::{Value, json};

struct Args {
    ragctl: PathBuf,
    corpora: Vec<PathBuf>,
    questions: Option<PathBuf>,
    json: Option<PathBuf>,
    threads: usize,
    strategies: Vec<String>,
    budgets: Vec<u64>,
    work: PathBuf,
    /// Chunk with `ragctl chunk --fold-headings`.
    fold_headings: bool,
    /// A model2vec folder: every cell is also packed with `ragctl pack --embedder` (hybrid
    /// scoring), the chunks written with their vectors, and the two are compared.
    embedder: Option<PathBuf>,
    /// More flags for the hybrid packs (`--bm25-weight 0.6`, `--fusion rrf`).
    hybrid_args: Vec<String>,
}

/// The suffix of a cell's strategy that packs it with hybrid scoring.
const HYBRID: &str = "+hybrid";

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        ragctl: PathBuf::from("target/release/ragctl"),
        corpora: Vec::new(),
        questions: None,
        json: None,
        threads: 2,
        strategies: ["greedy", "knapsack", "optimal"].map(String::from).to_vec(),
        budgets: vec![500, 1000, 2000],
        work: PathBuf::from("target/eval"),
        fold_headings: false,
        embedder: None,
        hybrid_args: Vec::new(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = |name: &str| it.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "--ragctl" => args.ragctl = value("--ragctl")?.into(),
            "--corpus" => args.corpora.push(value("--corpus")?.into()),
            "--questions" => args.questions = Some(value("--questions")?.into()),
            "--json" => args.json = Some(value("--json")?.into()),
            "--threads" => {
                args.threads = match value("--threads")?.parse() {
                    Ok(n) if n >= 1 => n,
                    _ => return Err("--threads needs a whole number of at least 1".to_owned()),
                }
            }
            "--strategies" => args.strategies = value("--strategies")?.split(',').map(str::to_owned).collect(),
            "--budgets" => {
                args.budgets = value("--budgets")?
                    .split(',')
                    .map(|b| b.parse().map_err(|_| format!("--budgets: {b:?} is not a whole number")))
                    .collect::<Result<_, _>>()?
            }
            "--work" => args.work = value("--work")?.into(),
            "--fold-headings" => args.fold_headings = true,
            "--embedder" => args.embedder = Some(value("--embedder")?.into()),
            "--hybrid-arg" => args.hybrid_args.push(value("--hybrid-arg")?),
            "-h" | "--help" => {
                println!("{}", USAGE);
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument {other:?}\n\n{USAGE}")),
        }
    }
    // `ragctl chunk` runs in the corpus directory, so a relative path must not be taken from there.
    args.ragctl = std::path::absolute(&args.ragctl).map_err(|e| format!("--ragctl {}: {e}", args.ragctl.display()))?;
    if let Some(dir) = &args.embedder {
        args.embedder = Some(std::path::absolute(dir).map_err(|e| format!("--embedder {}: {e}", dir.display()))?);
    }
    if args.corpora.is_empty() {
        args.corpora = corpus_dirs(Path::new("eval/corpus"))?;
    }
    if args.questions.is_some() && args.corpora.len() != 1 {
        return Err("--questions needs exactly one --corpus".to_owned());
    }
    if args.strategies.iter().any(String::is_empty) || args.budgets.is_empty() {
        return Err("--strategies and --budgets need at least one value each".to_owned());
    }
    Ok(args)
}

const USAGE: &str = "\
usage: rag-eval [--ragctl PATH] [--corpus DIR]... [--questions FILE] [--json FILE] [--threads N]
                [--strategies greedy,knapsack,optimal] [--budgets 500,1000,2000] [--work DIR]
                [--fold-headings] [--embedder DIR [--hybrid-arg ARG]...]

  --ragctl PATH     the ragctl binary to evaluate (default target/release/ragctl)
  --corpus DIR      a corpus: DIR/docs/ is chunked, DIR/questions.jsonl asked (default: every
                    directory of eval/corpus/); repeatable
  --questions FILE  another question file for the one --corpus
  --json FILE       also write every question's raw results (what was packed, answered or not)
  --threads N       pack invocations run at once (default 2)
  --work DIR        where the chunks are written (default target/eval)
  --fold-headings   chunk with `ragctl chunk --fold-headings` (headings fold into their
                    section's first body chunk)
  --embedder DIR    a model2vec folder (cargo xtask wordllama writes one): chunk with its vectors
                    and pack every cell twice, BM25 and hybrid (`ragctl pack --embedder DIR`), side
                    by side; without it the hybrid comparison is skipped
  --hybrid-arg ARG  a flag for the hybrid packs only, repeatable: --hybrid-arg --bm25-weight
                    --hybrid-arg 0.6";

/// The directories of `root`, sorted by name.
fn corpus_dirs(root: &Path) -> Result<Vec<PathBuf>, String> {
    let entries = std::fs::read_dir(root).map_err(|e| format!("{}: cannot list corpora: {e}", root.display()))?;
    let mut dirs = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| format!("{}: {e}", root.display()))?;
        if entry
            .file_type()
            .map_err(|e| format!("{}: {e}", entry.path().display()))?
            .is_dir()
        {
            dirs.push(entry.path());
        }
    }
    dirs.sort();
    if dirs.is_empty() {
        return Err(format!("{}: no corpus directories", root.display()));
    }
    Ok(dirs)
}

fn corpus_name(dir: &Path) -> String {
    dir.file_name()
        .map_or_else(|| dir.display().to_string(), |n| n.to_string_lossy().into_owned())
}

/// Runs `cmd`; its stdout on success, otherwise an error with the command's stderr.
fn run(cmd: &mut Command, what: &str) -> Result<Vec<u8>, String> {
    let Output { status, stdout, stderr } = cmd.output().map_err(|e| format!("{what}: cannot start: {e}"))?;
    if status.success() {
        Ok(stdout)
    } else {
        Err(format!("{what}: {status}: {}", String::from_utf8_lossy(&stderr).trim()))
    }
}

/// The chunks `ragctl chunk` made of a corpus, as far as the evaluation needs them.
struct Chunks {
    count: usize,
    headings: usize,
    /// (document id, byte span) of every chunk that reports both.
    spans: Vec<(String, usize, usize)>,
}

fn read_chunks(jsonl: &str) -> Result<Chunks, String> {
    let mut chunks = Chunks {
        count: 0,
        headings: 0,
        spans: Vec::new(),
    };
    for (index, line) in jsonl.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let chunk: Value =
            serde_json::from_str(line).map_err(|e| format!("ragctl chunk output line {}: {e}", index + 1))?;
        chunks.count += 1;
        if chunk["metadata"]["kind"] == "heading" {
            chunks.headings += 1;
        }
        if let (Some(document), Some(start), Some(end)) = (
            chunk["document_id"].as_str(),
            chunk["span"]["start"].as_u64(),
            chunk["span"]["end"].as_u64(),
        ) {
            chunks.spans.push((document.to_owned(), start as usize, end as usize));
        }
    }
    Ok(chunks)
}

/// Whether one chunk holds the question's answer span whole; `None` when no chunk of its document
/// reports a span (a binary that names documents otherwise).
fn in_one_chunk(chunks: &Chunks, question: &Question) -> Option<bool> {
    let document = format!("docs/{}", question.file);
    let mut of_document = chunks.spans.iter().filter(|(d, _, _)| *d == document).peekable();
    of_document.peek()?;
    Some(of_document.any(|(_, start, end)| *start <= question.span.start && question.span.end <= *end))
}

/// One question at one strategy and budget: the context (for the answer and its tokens), then the
/// JSON (for what was packed).
fn pack(
    args: &Args,
    chunks_file: &Path,
    question: &Question,
    strategy: &str,
    budget: u64,
    counter: &TiktokenCounter,
    with_report: bool,
) -> Result<PackOutcome, String> {
    let what = format!("question {} ({strategy}, {budget})", question.id);
    let (strategy, hybrid) = match strategy.strip_suffix(HYBRID) {
        Some(strategy) => (strategy, true),
        None => (strategy, false),
    };
    let base = |format: &str| {
        let mut cmd = Command::new(&args.ragctl);
        if hybrid && let Some(dir) = &args.embedder {
            cmd.arg("pack").arg("--embedder").arg(dir).args(&args.hybrid_args);
        } else {
            cmd.arg("pack");
        }
        cmd.arg(&question.question).arg("--input").arg(chunks_file).args([
            "--budget",
            &budget.to_string(),
            "--strategy",
            strategy,
            "--format",
            format,
        ]);
        cmd
    };
    let context = run(&mut base("context"), &format!("{what}: ragctl pack --format context"))?;
    let context = String::from_utf8(context).map_err(|e| format!("{what}: the context is not UTF-8: {e}"))?;
    // The CLI ends the context with a newline for the terminal; it is not part of the prompt.
    let rendered = context.strip_suffix('\n').unwrap_or(&context);
    let rendered_tokens = counter
        .count(rendered)
        .map_err(|err| format!("{what}: counting the context: {err}"))?;
    if !with_report {
        // A format variant is compared on the answer alone: the context is all it needs.
        return Ok(PackOutcome {
            answered: contains_answer(rendered, &question.answer),
            answered_words: contains_answer_words(rendered, &question.answer),
            heading_chunks: 0,
            packed_ids: Vec::new(),
            tokens_used: 0,
            rendered_tokens,
        });
    }

    let report = run(&mut base("json"), &format!("{what}: ragctl pack --format json"))?;
    let report: Value =
        serde_json::from_slice(&report).map_err(|e| format!("{what}: ragctl pack --format json: {e}"))?;
    let packed = report["chunks"]
        .as_array()
        .ok_or(format!("{what}: ragctl pack --format json has no \"chunks\" array"))?;
    let packed_ids = packed
        .iter()
        .map(|c| {
            c["id"]
                .as_str()
                .map(str::to_owned)
                .ok_or(format!("{what}: a packed chunk has no id"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(PackOutcome {
        answered: contains_answer(rendered, &question.answer),
        answered_words: contains_answer_words(rendered, &question.answer),
        heading_chunks: packed.iter().filter(|c| c["metadata"]["kind"] == "heading").count(),
        packed_ids,
        tokens_used: report["tokens_used"]
            .as_u64()
            .ok_or(format!("{what}: ragctl pack --format json has no \"tokens_used\""))?,
        rendered_tokens,
    })
}

/// Every pack of a corpus on `args.threads` threads; outcome `[q][cell]` is question `q` at cell
/// `cell` of `strategies x budgets`; `with_report` also runs `--format json` for what was packed.
/// The first failure stops the others.
fn pack_all(
    args: &Args,
    chunks_file: &Path,
    questions: &[Question],
    cells: &[(String, u64)],
    with_report: bool,
) -> Result<Vec<Vec<PackOutcome>>, String> {
    let counter = TiktokenCounter::cl100k();
    let jobs = questions.len() * cells.len();
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let results: Mutex<Vec<Option<Result<PackOutcome, String>>>> = Mutex::new(vec![None; jobs]);
    std::thread::scope(|scope| {
        for _ in 0..args.threads {
            scope.spawn(|| {
                while !failed.load(Ordering::Relaxed) {
                    let job = next.fetch_add(1, Ordering::Relaxed);
                    if job >= jobs {
                        break;
                    }
                    let (strategy, budget) = &cells[job % cells.len()];
                    let outcome = pack(
                        args,
                        chunks_file,
                        &questions[job / cells.len()],
                        strategy,
                        *budget,
                        &counter,
                        with_report,
                    );
                    if outcome.is_err() {
                        failed.store(true, Ordering::Relaxed);
                    }
                    results.lock().unwrap_or_else(|poisoned| poisoned.into_inner())[job] = Some(outcome);
                    let finished = done.fetch_add(1, Ordering::Relaxed) + 1;
                    if finished.is_multiple_of((jobs / 10).max(1)) {
                        eprintln!("  {finished}/{jobs} packs");
                    }
                }
            });
        }
    });
    let results = results.into_inner().unwrap_or_else(|poisoned| poisoned.into_inner());
    let mut outcomes = Vec::with_capacity(questions.len());
    let mut row = Vec::with_capacity(cells.len());
    for result in results {
        match result {
            Some(Ok(outcome)) => row.push(outcome),
            Some(Err(err)) => return Err(err),
            None => return Err("a pack did not run after another failed".to_owned()),
        }
        if row.len() == cells.len() {
            outcomes.push(std::mem::replace(&mut row, Vec::with_capacity(cells.len())));
        }
    }
    Ok(outcomes)
}

fn evaluate(args: &Args, dir: &Path) -> Result<(String, Value), String> {
    let name = corpus_name(dir);
    let docs = dir.join("docs");
    let questions_file = args.questions.clone().unwrap_or_else(|| dir.join("questions.jsonl"));
    let questions = load_questions(&questions_file, &docs).map_err(|errors| {
        let lines: Vec<String> = errors.iter().map(ToString::to_string).collect();
        format!("{} bad question(s):\n{}", errors.len(), lines.join("\n"))
    })?;
    if questions.is_empty() {
        return Err(format!("{}: no questions", questions_file.display()));
    }

    let work = args.work.join(&name);
    std::fs::create_dir_all(&work).map_err(|e| format!("{}: {e}", work.display()))?;
    let chunks_file = std::path::absolute(work.join("chunks.jsonl")).map_err(|e| format!("{}: {e}", work.display()))?;
    let mut fold: Vec<String> = if args.fold_headings {
        vec!["--fold-headings".to_owned()]
    } else {
        Vec::new()
    };
    if let Some(dir) = &args.embedder {
        fold.extend(["--embedder".to_owned(), dir.display().to_string()]);
    }
    eprintln!("{name}: ragctl chunk docs --format jsonl {}", fold.join(" "));
    let jsonl = run(
        Command::new(&args.ragctl)
            .current_dir(dir)
            .args(["chunk", "docs", "--format", "jsonl"])
            .args(&fold),
        &format!("{name}: ragctl chunk"),
    )?;
    std::fs::write(&chunks_file, &jsonl).map_err(|e| format!("{}: {e}", chunks_file.display()))?;
    let chunks = read_chunks(&String::from_utf8_lossy(&jsonl))?;

    let cells = cells(args);
    eprintln!(
        "{name}: {} questions x {} cells, {} threads",
        questions.len(),
        cells.len(),
        args.threads
    );
    let started = Instant::now();
    let outcomes = pack_all(args, &chunks_file, &questions, &cells, true)?;
    eprintln!("{name}: packed in {:.0} s", started.elapsed().as_secs_f64());

    let summaries: Vec<_> = cells
        .iter()
        .enumerate()
        .map(|(c, (strategy, budget))| {
            let column: Vec<PackOutcome> = outcomes.iter().map(|row| row[c].clone()).collect();
            summarise(&questions, strategy, *budget, &column)
        })
        .collect();
    let whole: Vec<Option<bool>> = questions.iter().map(|q| in_one_chunk(&chunks, q)).collect();
    let whole_count = if whole.iter().all(Option::is_some) {
        format!(
            "{}/{}",
            whole.iter().filter(|w| **w == Some(true)).count(),
            questions.len()
        )
    } else {
        "unknown (chunk document ids are not docs/FILE)".to_owned()
    };
    let documents = {
        let mut ids: Vec<&str> = chunks.spans.iter().map(|(d, _, _)| d.as_str()).collect();
        ids.dedup();
        ids.len()
    };
    let handwritten = questions.iter().filter(|q| q.origin == Origin::Handwritten).count();
    let text = format!(
        "### {name}\n\n{documents} documents, {} chunks ({} heading-only); {} questions ({handwritten} handwritten); \
         answer whole inside one chunk: {whole_count}\n\n{}",
        chunks.count,
        chunks.headings,
        questions.len(),
        format_table(&summaries)
    );
    let mut text = text;
    text.push('\n');
    text.push_str(&hybrid_table(args, &name, &questions, &outcomes, &cells, false));
    let mut variants = Vec::new();
    for variant in variant_dirs(dir)? {
        let (table, raw) = evaluate_variant(args, dir, &variant, &questions, &outcomes, &cells)?;
        text.push('\n');
        text.push_str(&table);
        variants.push(raw);
    }
    let raw = json!({
        "corpus": name,
        "chunks": chunks.count,
        "heading_chunks": chunks.headings,
        "questions": questions.iter().zip(&outcomes).zip(&whole).map(|((q, row), w)| {
            let cells: Vec<(&str, u64, &PackOutcome)> =
                cells.iter().zip(row).map(|((s, b), o)| (s.as_str(), *b, o)).collect();
            question_json(q, *w, &cells)
        }).collect::<Vec<_>>(),
        "variants": variants,
    });
    Ok((text, raw))
}

/// Every cell: each strategy at each budget, then (with `--embedder`) the same packed with hybrid
/// scoring.
fn cells(args: &Args) -> Vec<(String, u64)> {
    let mut labels: Vec<String> = args.strategies.clone();
    if args.embedder.is_some() {
        labels.extend(args.strategies.iter().map(|s| format!("{s}{HYBRID}")));
    }
    labels
        .iter()
        .flat_map(|s| args.budgets.iter().map(move |b| (s.clone(), *b)))
        .collect()
}

/// BM25 against hybrid scoring, cell by cell, or why it was not measured.
fn hybrid_table(
    args: &Args,
    name: &str,
    questions: &[Question],
    outcomes: &[Vec<PackOutcome>],
    cells: &[(String, u64)],
    words: bool,
) -> String {
    let Some(dir) = &args.embedder else {
        return format!(
            "{name}: hybrid scoring skipped (no --embedder DIR; `cargo xtask wordllama` writes a model folder)\n"
        );
    };
    let column = |c: usize| -> Vec<PackOutcome> { outcomes.iter().map(|row| row[c].clone()).collect() };
    let rows: Vec<HybridRow> = cells
        .iter()
        .enumerate()
        .filter(|(_, (strategy, _))| !strategy.ends_with(HYBRID))
        .filter_map(|(c, (strategy, budget))| {
            let hybrid = cells
                .iter()
                .position(|(s, b)| *s == format!("{strategy}{HYBRID}") && b == budget)?;
            Some(HybridRow::new(
                strategy,
                *budget,
                questions,
                &column(c),
                &column(hybrid),
                words,
            ))
        })
        .collect();
    let judged = if words { "the answer's words" } else { "the answer" };
    format!(
        "{name}: BM25 against hybrid scoring ({judged} in the context; hybrid: ragctl pack --embedder {}{}{})\n\n{}",
        dir.display(),
        if args.hybrid_args.is_empty() { "" } else { " " },
        args.hybrid_args.join(" "),
        format_hybrid_table(&rows)
    )
}

/// The format variants of a corpus: its directories other than `docs/`, sorted by name.
fn variant_dirs(dir: &Path) -> Result<Vec<String>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| format!("{}: {e}", dir.display()))?;
        let is_dir = entry
            .file_type()
            .map_err(|e| format!("{}: {e}", entry.path().display()))?
            .is_dir();
        let name = entry.file_name().to_string_lossy().into_owned();
        if is_dir && name != "docs" {
            names.push(name);
        }
    }
    names.sort();
    Ok(names)
}

/// The file of variant `variant` that holds the document `file` of `docs/`: the same path and
/// name with another extension. `None` when the variant has no such file (a variant may hold a
/// subset of the documents, as the PDF prints do); two such files are an error.
fn variant_file(dir: &Path, variant: &str, file: &str) -> Result<Option<String>, String> {
    let path = Path::new(file);
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let parent = path.parent().unwrap_or(Path::new(""));
    let folder = dir.join(variant).join(parent);
    let entries = match std::fs::read_dir(&folder) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{}: {e}", folder.display())),
    };
    let mut found = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| format!("{}: {e}", folder.display()))?;
        let entry_path = entry.path();
        if entry_path.is_file() && entry_path.file_stem().is_some_and(|s| s.to_string_lossy() == stem) {
            found.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    found.sort();
    match found.as_slice() {
        [one] => Ok(Some(parent.join(one).to_string_lossy().replace('\\', "/"))),
        [] => Ok(None),
        many => Err(format!("{variant}: several files for {file}: {}", many.join(", "))),
    }
}

/// The renditions of `ragctl chunk DIR --format rendition`, by document: each follows a
/// `==> FILE <==` line (and ends with the line break the CLI adds after it).
fn split_renditions(output: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in output.split_inclusive('\n') {
        let bare = line.trim_end_matches('\n');
        if let Some(name) = bare.strip_prefix("==> ").and_then(|l| l.strip_suffix(" <==")) {
            out.push((name.to_owned(), String::new()));
        } else if let Some((_, text)) = out.last_mut() {
            text.push_str(line);
        }
    }
    out
}

/// One format variant of a corpus, evaluated: its table, and its raw results.
fn evaluate_variant(
    args: &Args,
    dir: &Path,
    variant: &str,
    questions: &[Question],
    primary: &[Vec<PackOutcome>],
    cells: &[(String, u64)],
) -> Result<(String, Value), String> {
    let name = format!("{}/{variant}", corpus_name(dir));
    // The questions whose document the variant holds, compared with the same questions of the
    // primary run.
    let mut asked = Vec::with_capacity(questions.len());
    let mut kept = Vec::with_capacity(questions.len());
    for (i, question) in questions.iter().enumerate() {
        if let Some(file) = variant_file(dir, variant, &question.file)? {
            asked.push(Question {
                file,
                ..question.clone()
            });
            kept.push(i);
        }
    }
    if asked.is_empty() {
        return Err(format!("{name}: no document with questions has a file in {variant}/"));
    }
    let primary: Vec<Vec<PackOutcome>> = kept.iter().map(|&i| primary[i].clone()).collect();
    let left_out = questions.len() - asked.len();
    let work = args.work.join(corpus_name(dir));
    std::fs::create_dir_all(&work).map_err(|e| format!("{}: {e}", work.display()))?;
    let chunks_file = std::path::absolute(work.join(format!("{variant}-chunks.jsonl")))
        .map_err(|e| format!("{}: {e}", work.display()))?;
    eprintln!("{name}: ragctl chunk {variant} --format jsonl");
    let jsonl = run(
        Command::new(&args.ragctl)
            .current_dir(dir)
            .args(["chunk", variant, "--format", "jsonl"])
            .args(
                args.embedder
                    .iter()
                    .flat_map(|dir| [std::ffi::OsStr::new("--embedder"), dir.as_os_str()]),
            ),
        &format!("{name}: ragctl chunk"),
    )?;
    std::fs::write(&chunks_file, &jsonl).map_err(|e| format!("{}: {e}", chunks_file.display()))?;
    let chunks = read_chunks(&String::from_utf8_lossy(&jsonl))?;
    let renditions = run(
        Command::new(&args.ragctl)
            .current_dir(dir)
            .args(["chunk", variant, "--format", "rendition"]),
        &format!("{name}: ragctl chunk --format rendition"),
    )?;
    let renditions = split_renditions(&String::from_utf8_lossy(&renditions));
    let in_rendition: Vec<bool> = asked
        .iter()
        .map(|q| {
            let uri = format!("{variant}/{}", q.file);
            renditions
                .iter()
                .find(|(name, _)| *name == uri)
                .is_some_and(|(_, text)| contains_answer_words(text, &q.answer))
        })
        .collect();
    let missing: Vec<&str> = asked
        .iter()
        .zip(&in_rendition)
        .filter(|(_, found)| !**found)
        .map(|(q, _)| q.id.as_str())
        .collect();

    eprintln!("{name}: {} questions x {} cells", asked.len(), cells.len());
    let started = Instant::now();
    let outcomes = pack_all(args, &chunks_file, &asked, cells, false)?;
    eprintln!("{name}: packed in {:.0} s", started.elapsed().as_secs_f64());
    let rows: Vec<VariantRow> = cells
        .iter()
        .enumerate()
        .map(|(c, (strategy, budget))| {
            let primary: Vec<PackOutcome> = primary.iter().map(|row| row[c].clone()).collect();
            let variant: Vec<PackOutcome> = outcomes.iter().map(|row| row[c].clone()).collect();
            VariantRow::new(strategy, *budget, &primary, &variant)
        })
        .collect();
    let documents = {
        let mut ids: Vec<&str> = chunks.spans.iter().map(|(d, _, _)| d.as_str()).collect();
        ids.dedup();
        ids.len()
    };
    let missing_note = if missing.is_empty() {
        String::new()
    } else {
        format!(" (not: {})", missing.join(", "))
    };
    let subset_note = if left_out == 0 {
        String::new()
    } else {
        format!(
            "; {} of the corpus' {} questions left out (their documents have no {variant} file)",
            left_out,
            questions.len()
        )
    };
    let text = format!(
        "#### {name}: the same questions on the {variant} variant\n\n{documents} documents, {} chunks ({} heading-only); \
         answer's words in its document's rendition: {}/{}{missing_note}{subset_note}\n\n{}",
        chunks.count,
        chunks.headings,
        in_rendition.iter().filter(|f| **f).count(),
        asked.len(),
        format_variant_table("docs", variant, &rows),
    );
    let text = format!("{text}\n{}", hybrid_table(args, &name, &asked, &outcomes, cells, true));
    let raw = json!({
        "variant": variant,
        "chunks": chunks.count,
        "questions_without_file": left_out,
        "questions": asked.iter().zip(&outcomes).zip(&in_rendition).map(|((q, row), found)| {
            let cells: Vec<(&str, u64, &PackOutcome)> =
                cells.iter().zip(row).map(|((s, b), o)| (s.as_str(), *b, o)).collect();
            let mut value = question_json(q, None, &cells);
            value["in_rendition"] = json!(found);
            value
        }).collect::<Vec<_>>(),
    });
    Ok((text, raw))
}

fn main() -> std::process::ExitCode {
    let result = parse_args().and_then(|args| {
        let version = run(Command::new(&args.ragctl).arg("--version"), "ragctl --version")?;
        let version = String::from_utf8_lossy(&version).trim().to_owned();
        println!("{version} ({})\n", args.ragctl.display());
        let mut raw = Vec::new();
        for dir in &args.corpora {
            let (text, json) = evaluate(&args, dir)?;
            println!("{text}");
            raw.push(json);
        }
        if let Some(path) = &args.json {
            let value = json!({ "ragctl": version, "corpora": raw });
            let text = serde_json::to_string_pretty(&value).map_err(|e| format!("--json: {e}"))?;
            std::fs::write(path, text + "\n").map_err(|e| format!("{}: {e}", path.display()))?;
            eprintln!("raw results: {}", path.display());
        }
        Ok(())
    });
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("rag-eval: {err}");
            std::process::ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renditions_split_at_their_file_lines() {
        let output = "==> html/a.html <==\n# A\n\ntext\n==> html/b.html <==\nB\n";
        assert_eq!(
            split_renditions(output),
            [
                ("html/a.html".to_owned(), "# A\n\ntext\n".to_owned()),
                ("html/b.html".to_owned(), "B\n".to_owned())
            ]
        );
    }

    #[test]
    fn a_variant_file_has_the_documents_name_and_another_extension() {
        let dir = std::env::temp_dir().join(format!("rag-eval-variant-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("html/sub")).unwrap_or_else(|e| panic!("{e}"));
        for file in ["html/fs.html", "html/sub/x.htm", "html/two.html", "html/two.htm"] {
            std::fs::write(dir.join(file), "<p>x</p>").unwrap_or_else(|e| panic!("{e}"));
        }
        assert_eq!(variant_file(&dir, "html", "fs.md"), Ok(Some("fs.html".to_owned())));
        assert_eq!(variant_file(&dir, "html", "sub/x.md"), Ok(Some("sub/x.htm".to_owned())));
        assert_eq!(
            variant_file(&dir, "html", "none.md"),
            Ok(None),
            "a variant may hold a subset"
        );
        assert_eq!(variant_file(&dir, "html", "nowhere/y.md"), Ok(None));
        assert!(variant_file(&dir, "html", "two.md").is_err_and(|e| e.contains("several files")));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
