//! `pdf-fidelity`: how much of a reference extractor's text the PDF parser recovers, in order.
//!
//! ```text
//! pdf-fidelity --reference DIR [--ignore-lines REGEX] [--questions FILE] [--json FILE] [--renditions DIR] FILE.pdf...
//! ```
//!
//! For each PDF, the reference is `DIR/<name>.txt` (poppler's `pdftotext FILE.pdf DIR/FILE.pdf.txt`,
//! say). Both texts are cut into words (runs of letters and digits, lower-cased); the score of a file
//! is the longest common subsequence of the two word sequences over the reference's words: the share
//! of the reference's words the rendition holds in the reference's order. Markup the rendition adds
//! (`#`, `-`, fences) is not a word, so it costs nothing; words in another order (a column read
//! before another) count only once in order. The overall figure is the sum of the common words over
//! the sum of the reference words. Page furniture the parser leaves out on purpose counts as missing.
//! `--renditions DIR` writes each rendition to `DIR/<name>.md`, to read what was compared.
//! `--ignore-lines REGEX` drops the reference's lines that match (the whole line, trimmed), to
//! score against the body text alone when the furniture is known (a browser's print header and
//! footer, say).
//! `--questions FILE` (an eval's `questions.jsonl`) also checks, for each question about one of the
//! PDFs (`fs.md` for `fs.pdf`), that its gold answer's words are in the rendition, in order and
//! adjacent (`contains_answer_words`, as the eval scores a format variant), and names the misses.
#![allow(clippy::print_stdout, clippy::print_stderr)] // a command-line tool reports on the terminal

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use rag_chunker::{DocumentType, parse_document};
use rag_core::{CorpusId, DocumentId, RequestContext, SourceBytes};
use serde_json::json;

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<ExitCode, String> {
    let mut reference: Option<PathBuf> = None;
    let mut json_out: Option<PathBuf> = None;
    let mut renditions: Option<PathBuf> = None;
    let mut ignore: Option<regex::Regex> = None;
    let mut questions: Option<PathBuf> = None;
    let mut files = Vec::new();
    let mut args = std::env::args_os().skip(1);
    while let Some(arg) = args.next() {
        match arg.to_str() {
            Some("--reference") => reference = args.next().map(PathBuf::from),
            Some("--json") => json_out = args.next().map(PathBuf::from),
            Some("--renditions") => renditions = args.next().map(PathBuf::from),
            Some("--questions") => questions = args.next().map(PathBuf::from),
            Some("--ignore-lines") => {
                let pattern = args
                    .next()
                    .and_then(|p| p.into_string().ok())
                    .ok_or("--ignore-lines needs a REGEX")?;
                let anchored = format!("^(?:{pattern})$");
                ignore = Some(regex::Regex::new(&anchored).map_err(|e| format!("--ignore-lines: {e}"))?);
            }
            Some("-h" | "--help") => {
                println!(
                    "usage: pdf-fidelity --reference DIR [--ignore-lines REGEX] [--questions FILE] [--json FILE] [--renditions DIR] FILE.pdf..."
                );
                return Ok(ExitCode::SUCCESS);
            }
            _ => files.push(PathBuf::from(arg)),
        }
    }
    let reference = reference.ok_or("--reference DIR is required")?;
    if files.is_empty() {
        return Err("no PDF given".to_owned());
    }
    let ctx = RequestContext::local("fidelity");
    let corpus = CorpusId::from("fidelity");
    let (mut total_ref, mut total_common, mut failures) = (0usize, 0usize, 0usize);
    let mut rows = Vec::new();
    // Each rendition by the PDF's file stem, kept when questions are to be checked against it.
    let mut texts: std::collections::BTreeMap<String, String> = std::collections::BTreeMap::new();
    println!(
        "{:<40} {:>8} {:>8} {:>8} {:>8}",
        "file", "ref", "ours", "common", "recall"
    );
    for file in &files {
        let name = file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let dump = renditions.as_ref().map(|dir| dir.join(format!("{name}.md")));
        let result = score(
            &ctx,
            &corpus,
            file,
            &reference.join(format!("{name}.txt")),
            dump.as_deref(),
            ignore.as_ref(),
        );
        match result {
            Ok((score, text)) => {
                if questions.is_some()
                    && let Some(stem) = file.file_stem()
                {
                    texts.insert(stem.to_string_lossy().into_owned(), text);
                }
                total_ref += score.reference;
                total_common += score.common;
                println!(
                    "{name:<40} {:>8} {:>8} {:>8} {:>7.1}%",
                    score.reference,
                    score.ours,
                    score.common,
                    100.0 * score.recall()
                );
                rows.push(
                    json!({"file": name, "reference_words": score.reference, "words": score.ours,
                    "common_in_order": score.common, "recall": score.recall(), "parse_ms": score.parse_ms}),
                );
            }
            Err(message) => {
                failures += 1;
                println!("{name:<40} error: {message}");
                rows.push(json!({"file": name, "error": message}));
            }
        }
    }
    let overall = if total_ref == 0 {
        0.0
    } else {
        total_common as f64 / total_ref as f64
    };
    println!(
        "{:<40} {total_ref:>8} {:>8} {total_common:>8} {:>7.1}%",
        "overall",
        "",
        100.0 * overall
    );
    let answers = match &questions {
        Some(path) => Some(check_answers(path, &texts)?),
        None => None,
    };
    if let Some(path) = json_out {
        let report = json!({"files": rows, "reference_words": total_ref, "common_in_order": total_common,
            "recall": overall, "failures": failures,
            "answers": answers.map(|(found, asked, missed)| json!({"found": found, "asked": asked, "missed": missed}))});
        let text = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(if failures > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

struct Score {
    reference: usize,
    ours: usize,
    common: usize,
    parse_ms: f64,
}

impl Score {
    fn recall(&self) -> f64 {
        if self.reference == 0 {
            0.0
        } else {
            self.common as f64 / self.reference as f64
        }
    }
}

fn score(
    ctx: &RequestContext,
    corpus: &CorpusId,
    pdf: &Path,
    reference: &Path,
    dump: Option<&Path>,
    ignore: Option<&regex::Regex>,
) -> Result<(Score, String), String> {
    let bytes = std::fs::read(pdf).map_err(|e| format!("{}: {e}", pdf.display()))?;
    let reference_text = std::fs::read(reference).map_err(|e| format!("{}: {e}", reference.display()))?;
    let uri = pdf.display().to_string();
    let id = DocumentId::from(uri.as_str());
    let source = SourceBytes {
        document_id: &id,
        corpus_id: corpus,
        source_uri: &uri,
        bytes: &bytes,
    };
    let started = Instant::now();
    let parsed = parse_document(ctx, DocumentType::Pdf, source).map_err(|e| e.to_string())?;
    let parse_ms = started.elapsed().as_secs_f64() * 1000.0;
    if let Some(path) = dump {
        std::fs::write(path, &parsed.document.text).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    let ours = words(&parsed.document.text);
    let reference_text = String::from_utf8_lossy(&reference_text);
    let kept: String = reference_text
        .split(['\n', '\u{c}'])
        .filter(|line| ignore.is_none_or(|re| !re.is_match(line.trim())))
        .collect::<Vec<_>>()
        .join("\n");
    let theirs = words(&kept);
    let score = Score {
        reference: theirs.len(),
        ours: ours.len(),
        common: common_in_order(&theirs, &ours),
        parse_ms,
    };
    Ok((score, parsed.document.text))
}

/// Checks the gold answers of the questions in `path` about the parsed PDFs against their
/// renditions; prints the tally and the misses, and returns (found, asked, the ids missed).
fn check_answers(
    path: &Path,
    texts: &std::collections::BTreeMap<String, String>,
) -> Result<(usize, usize, Vec<String>), String> {
    let lines = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let (mut found, mut asked, mut missed) = (0, 0, Vec::new());
    for (number, line) in lines.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let question: serde_json::Value =
            serde_json::from_str(line).map_err(|e| format!("{}:{}: {e}", path.display(), number + 1))?;
        let field = |name: &str| question.get(name).and_then(|v| v.as_str()).unwrap_or_default();
        let stem = field("file").strip_suffix(".md").unwrap_or(field("file"));
        let Some(text) = texts.get(stem) else {
            continue;
        };
        asked += 1;
        if rag_bench::eval::answer::contains_answer_words(text, field("answer")) {
            found += 1;
        } else {
            missed.push(field("id").to_owned());
        }
    }
    println!("answers' words in the rendition: {found}/{asked}");
    if !missed.is_empty() {
        println!("missed: {}", missed.join(", "));
    }
    Ok((found, asked, missed))
}

/// Runs of letters and digits, lower-cased. Backticks are left out first: the rendition writes
/// inline code in them, inside words too (`` `SEXPREC`s ``), where the reference has none.
fn words(text: &str) -> Vec<String> {
    text.replace('`', "")
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// The length of the longest common subsequence of `a` and `b`, by Hyyrö's bit-parallel
/// algorithm: one pass over `b` with a bit vector over `a`, `|a| * |b| / 64` word operations, so a
/// 300-page manual (150,000 words a side) takes seconds, not the hours of the quadratic table.
fn common_in_order(a: &[String], b: &[String]) -> usize {
    let blocks = a.len().div_ceil(64);
    if blocks == 0 {
        return 0;
    }
    let mut positions: std::collections::HashMap<&str, Vec<u64>> = std::collections::HashMap::new();
    for (i, word) in a.iter().enumerate() {
        positions.entry(word.as_str()).or_insert_with(|| vec![0; blocks])[i / 64] |= 1 << (i % 64);
    }
    // S starts as all ones; LCS = |a| - popcount(S).
    let mut s = vec![u64::MAX; blocks];
    let tail_bits = a.len() % 64;
    if tail_bits != 0 {
        s[blocks - 1] = (1u64 << tail_bits) - 1;
    }
    for word in b {
        let Some(mask) = positions.get(word.as_str()) else {
            continue;
        };
        // S' = (S + (S & M)) | (S & !M), with the carry running across the blocks.
        let mut carry = 0u64;
        for k in 0..blocks {
            let u = s[k] & mask[k];
            let (sum, c1) = s[k].overflowing_add(u);
            let (sum, c2) = sum.overflowing_add(carry);
            carry = u64::from(c1 || c2);
            s[k] = sum | (s[k] & !mask[k]);
        }
        if tail_bits != 0 {
            s[blocks - 1] &= (1u64 << tail_bits) - 1;
        }
    }
    a.len() - s.iter().map(|w| w.count_ones() as usize).sum::<usize>()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(text: &str) -> Vec<String> {
        words(text)
    }

    /// The textbook table, for comparison.
    fn quadratic(a: &[String], b: &[String]) -> usize {
        let mut row = vec![0usize; b.len() + 1];
        for x in a {
            let mut diagonal = 0;
            for (j, y) in b.iter().enumerate() {
                let above = row[j + 1];
                row[j + 1] = if x == y { diagonal + 1 } else { above.max(row[j]) };
                diagonal = above;
            }
        }
        row[b.len()]
    }

    #[test]
    fn answers_are_looked_up_in_the_rendition_of_their_pdf_only() {
        let path = std::env::temp_dir().join(format!("pdf-fidelity-questions-{}.jsonl", std::process::id()));
        let questions = concat!(
            r#"{"id": "a", "file": "fs.md", "answer": "Opens the `file` for [reading][]."}"#,
            "\n",
            r#"{"id": "b", "file": "fs.md", "answer": "Closes it."}"#,
            "\n\n",
            r#"{"id": "c", "file": "net.md", "answer": "No PDF of net was parsed."}"#,
            "\n",
        );
        std::fs::write(&path, questions).unwrap();
        let texts = std::collections::BTreeMap::from([(
            "fs".to_owned(),
            "## fs\n\nOpens the file for reading. It never closes.".to_owned(),
        )]);
        let result = check_answers(&path, &texts);
        std::fs::remove_file(&path).unwrap();
        assert_eq!(result, Ok((1, 2, vec!["b".to_owned()])));
    }

    #[test]
    fn words_are_alphanumeric_runs_lower_cased() {
        assert_eq!(w("## Install `make`-ing, v2.0!"), ["install", "make", "ing", "v2", "0"]);
        assert_eq!(w("two `SEXPREC`s"), ["two", "sexprecs"]);
    }

    #[test]
    fn common_words_in_order_match_the_quadratic_table() {
        assert_eq!(common_in_order(&w("a b c d"), &w("a c d x")), 3);
        assert_eq!(common_in_order(&w("a b"), &w("b a")), 1);
        assert_eq!(common_in_order(&w(""), &w("a")), 0);
        // Across block boundaries (more than 64 words), against the table.
        let a: Vec<String> = (0..300).map(|i| format!("w{}", i % 37)).collect();
        let b: Vec<String> = (0..250).map(|i| format!("w{}", (i * 7) % 41)).collect();
        assert_eq!(common_in_order(&a, &b), quadratic(&a, &b));
        assert_eq!(common_in_order(&b, &a), quadratic(&b, &a));
    }
}
