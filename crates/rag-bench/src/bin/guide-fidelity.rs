//! `guide-fidelity`: how much of a Markdown guide a PDF rendering of it gives back, sentence by
//! sentence.
//!
//! ```text
//! guide-fidelity --markdown DIR --pdf DIR [--misses] [--json FILE]
//! ```
//!
//! For every `DIR/<path>.md` of `--markdown`, the PDF is `<path>.pdf` under `--pdf` (what
//! `scripts/render_guide_pdf.py` writes). The Markdown is read with pulldown-cmark (CommonMark and
//! tables, as the renderer reads it): the text of its paragraphs, list items, quotes and table
//! cells is cut into sentences (UAX #29), its headings and its code blocks' lines are kept apart.
//! Each is reduced to its words (runs of letters and digits, lower-cased), and the PDF's
//! rendition to its word sequence. A sentence is **recovered** when its words appear in the
//! rendition consecutively and in order (word for word); a heading when a heading block of the
//! rendition has exactly its words; a code line when its words are consecutive inside one of the
//! rendition's code blocks (fenced). `off_page` and `page_furniture` are the bytes of text the
//! parser counted under those kinds, which should hold nothing of the body and only the footers.
//! `--misses` prints every sentence, heading and code line not recovered, to see why.
#![allow(clippy::print_stdout, clippy::print_stderr)] // a command-line tool reports on the terminal

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
use rag_chunker::{DocumentType, parse_document};
use rag_core::{BlockType, CorpusId, DocumentId, RequestContext, SourceBytes};
use serde_json::json;
use unicode_segmentation::UnicodeSegmentation;

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
    let (mut markdown, mut pdf, mut json_out, mut misses) = (None, None, None, false);
    let mut args = std::env::args_os().skip(1);
    while let Some(arg) = args.next() {
        match arg.to_str() {
            Some("--markdown") => markdown = args.next().map(PathBuf::from),
            Some("--pdf") => pdf = args.next().map(PathBuf::from),
            Some("--json") => json_out = args.next().map(PathBuf::from),
            Some("--misses") => misses = true,
            Some("-h" | "--help") => {
                println!("usage: guide-fidelity --markdown DIR --pdf DIR [--misses] [--json FILE]");
                return Ok(ExitCode::SUCCESS);
            }
            _ => return Err(format!("unexpected argument {}", arg.to_string_lossy())),
        }
    }
    let markdown = markdown.ok_or("--markdown DIR is required")?;
    let pdf = pdf.ok_or("--pdf DIR is required")?;
    let mut sources = Vec::new();
    markdown_files(&markdown, &mut sources)?;
    sources.sort();
    if sources.is_empty() {
        return Err(format!("no Markdown file under {}", markdown.display()));
    }
    let mut total = Tally::default();
    let mut rows = Vec::new();
    let mut failures = 0;
    println!(
        "{:<52} {:>11} {:>9} {:>11} {:>8} {:>9}",
        "file", "sentences", "headings", "code lines", "off_page", "furniture"
    );
    for source in &sources {
        let relative = source.strip_prefix(&markdown).unwrap_or(source);
        let name = relative.display().to_string();
        let target = pdf.join(relative).with_extension("pdf");
        match measure(source, &target) {
            Ok((tally, missed)) => {
                println!("{name:<52} {}", tally.row());
                if misses {
                    for line in &missed {
                        println!("  missed {line}");
                    }
                }
                rows.push(tally.to_json(&name));
                total.add(&tally);
            }
            Err(message) => {
                failures += 1;
                println!("{name:<52} error: {message}");
                rows.push(json!({"file": name, "error": message}));
            }
        }
    }
    println!("{:<52} {}", "overall", total.row());
    println!(
        "sentences recovered word for word: {:.1}%, headings as headings: {:.1}%, code lines fenced: {:.1}%",
        percent(total.sentences_found, total.sentences),
        percent(total.headings_found, total.headings),
        percent(total.code_found, total.code_lines)
    );
    if let Some(path) = json_out {
        let report = json!({"files": rows, "overall": total.to_json("overall"), "failures": failures});
        let text = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(if failures > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries {
        let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
        if path.is_dir() {
            markdown_files(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "md") {
            out.push(path);
        }
    }
    Ok(())
}

fn percent(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        100.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

/// What one file (or all of them) gave back.
#[derive(Debug, Default, Clone, PartialEq)]
struct Tally {
    sentences: usize,
    sentences_found: usize,
    headings: usize,
    headings_found: usize,
    code_lines: usize,
    code_found: usize,
    off_page: usize,
    furniture: usize,
}

impl Tally {
    fn add(&mut self, other: &Tally) {
        self.sentences += other.sentences;
        self.sentences_found += other.sentences_found;
        self.headings += other.headings;
        self.headings_found += other.headings_found;
        self.code_lines += other.code_lines;
        self.code_found += other.code_found;
        self.off_page += other.off_page;
        self.furniture += other.furniture;
    }

    fn row(&self) -> String {
        format!(
            "{:>11} {:>9} {:>11} {:>8} {:>9}",
            format!("{}/{}", self.sentences_found, self.sentences),
            format!("{}/{}", self.headings_found, self.headings),
            format!("{}/{}", self.code_found, self.code_lines),
            self.off_page,
            self.furniture
        )
    }

    fn to_json(&self, name: &str) -> serde_json::Value {
        json!({"file": name, "sentences": self.sentences, "sentences_recovered": self.sentences_found,
            "headings": self.headings, "headings_as_headings": self.headings_found,
            "code_lines": self.code_lines, "code_lines_fenced": self.code_found,
            "off_page_bytes": self.off_page, "page_furniture_bytes": self.furniture})
    }
}

/// The measurable text of a Markdown file: prose (to be cut into sentences), headings and code
/// lines, in document order within each kind.
#[derive(Debug, Default, PartialEq)]
struct Guide {
    prose: Vec<String>,
    headings: Vec<String>,
    code_lines: Vec<String>,
}

/// Reads `markdown` into what is measured. Raw HTML is left out (the renderer does not draw it);
/// an image counts as its alt text, which the renderer draws in its place.
fn guide_of(markdown: &str) -> Guide {
    let mut guide = Guide::default();
    let mut text = String::new();
    let (mut in_heading, mut in_code) = (false, false);
    let mut code = String::new();
    let flush = |text: &mut String, into: &mut Vec<String>| {
        if !text.trim().is_empty() {
            into.push(std::mem::take(text));
        }
        text.clear();
    };
    for event in Parser::new_ext(markdown, Options::ENABLE_TABLES) {
        match event {
            Event::Start(Tag::Heading { .. }) => {
                flush(&mut text, &mut guide.prose);
                in_heading = true;
            }
            Event::End(TagEnd::Heading(_)) => {
                flush(&mut text, &mut guide.headings);
                in_heading = false;
            }
            Event::Start(Tag::CodeBlock(_)) => {
                flush(&mut text, &mut guide.prose);
                in_code = true;
            }
            Event::End(TagEnd::CodeBlock) => {
                guide
                    .code_lines
                    .extend(code.lines().filter(|l| !l.trim().is_empty()).map(str::to_owned));
                code.clear();
                in_code = false;
            }
            Event::Start(Tag::Paragraph | Tag::Item | Tag::List(_) | Tag::TableCell | Tag::BlockQuote(_))
            | Event::End(
                TagEnd::Paragraph | TagEnd::Item | TagEnd::List(_) | TagEnd::TableCell | TagEnd::BlockQuote(_),
            ) if !in_heading => flush(&mut text, &mut guide.prose),
            Event::Text(t) if in_code => code.push_str(&t),
            Event::Text(t) | Event::Code(t) => text.push_str(&t),
            Event::SoftBreak | Event::HardBreak => text.push(' '),
            _ => {}
        }
    }
    flush(&mut text, &mut guide.prose);
    guide
}

/// Runs of letters and digits, lower-cased, each followed by one space, after a leading space:
/// `" a b c "`, so that a word sequence is found in another by a substring search. Backticks are
/// left out first: the rendition writes inline code in them, inside words too (`` `dict`s ``).
fn word_line(text: &str) -> String {
    let mut out = String::from(" ");
    let text = text.replace('`', "");
    for word in text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
        out.push_str(&word.to_lowercase());
        out.push(' ');
    }
    out
}

fn measure(markdown: &Path, pdf: &Path) -> Result<(Tally, Vec<String>), String> {
    let source = std::fs::read_to_string(markdown).map_err(|e| format!("{}: {e}", markdown.display()))?;
    let bytes = std::fs::read(pdf).map_err(|e| format!("{}: {e}", pdf.display()))?;
    let uri = pdf.display().to_string();
    let (id, corpus) = (DocumentId::from(uri.as_str()), CorpusId::from("guide"));
    let parsed = parse_document(
        &RequestContext::local("guide-fidelity"),
        DocumentType::Pdf,
        SourceBytes {
            document_id: &id,
            corpus_id: &corpus,
            source_uri: &uri,
            bytes: &bytes,
        },
    )
    .map_err(|e| e.to_string())?;
    let text = &parsed.document.text;
    let all_words = word_line(text);
    let block_words = |kind: BlockType| -> Vec<String> {
        parsed
            .blocks
            .iter()
            .filter(|b| b.block_type == kind)
            .map(|b| word_line(&text[b.span.range()]))
            .collect()
    };
    let pdf_headings: Vec<String> = parsed
        .blocks
        .iter()
        .filter(|b| b.block_type == BlockType::Heading)
        .map(|b| word_line(b.text.as_deref().unwrap_or_default()))
        .collect();
    let pdf_code = block_words(BlockType::Code);
    let guide = guide_of(&source);
    let mut tally = Tally::default();
    let mut missed = Vec::new();
    for sentence in guide.prose.iter().flat_map(|p| p.unicode_sentences()) {
        let words = word_line(sentence);
        if words.trim().is_empty() {
            continue;
        }
        tally.sentences += 1;
        if all_words.contains(&words) {
            tally.sentences_found += 1;
        } else {
            missed.push(format!("sentence: {}", sentence.trim()));
        }
    }
    for heading in &guide.headings {
        let words = word_line(heading);
        if words.trim().is_empty() {
            continue;
        }
        tally.headings += 1;
        if pdf_headings.contains(&words) {
            tally.headings_found += 1;
        } else {
            let why = if all_words.contains(&words) {
                "in the text, not a heading"
            } else {
                "not in the text"
            };
            missed.push(format!("heading ({why}): {}", heading.trim()));
        }
    }
    for line in &guide.code_lines {
        let words = word_line(line);
        if words.trim().is_empty() {
            continue;
        }
        tally.code_lines += 1;
        if pdf_code.iter().any(|block| block.contains(&words)) {
            tally.code_found += 1;
        } else {
            let why = if all_words.contains(&words) {
                "in the text, not in a code block"
            } else {
                "not in the text"
            };
            missed.push(format!("code line ({why}): {}", line.trim()));
        }
    }
    if let Some(rendition) = &parsed.rendition {
        tally.off_page = rendition.left_out.get("off_page").copied().unwrap_or(0);
        tally.furniture = rendition.left_out.get("page_furniture").copied().unwrap_or(0);
    }
    Ok((tally, missed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_is_read_into_prose_headings_and_code_lines() {
        let guide = guide_of(
            "# The `black` guide\n\nIt formats code. It is *fast*.\n\n- one item\n- two\n\n```sh\nblack .\n\n  --check\n```\n\n<div>raw html</div>\n\n| a | b |\n|---|---|\n| cell | `x` |\n",
        );
        assert_eq!(guide.headings, ["The black guide"]);
        assert_eq!(
            guide.prose,
            ["It formats code. It is fast.", "one item", "two", "a", "b", "cell", "x"]
        );
        assert_eq!(guide.code_lines, ["black .", "  --check"]);
    }

    #[test]
    fn a_sentence_is_recovered_only_word_for_word_and_in_order() {
        let text = word_line("## Usage\n\nRun `black` on the\nfile, then commit.");
        assert!(text.contains(&word_line("Run black on the file, then commit.")));
        assert!(!text.contains(&word_line("Run black on file")));
        assert!(!text.contains(&word_line("then commit file")));
        // A word is never matched by the inside of another one.
        assert!(!text.contains(&word_line("lack on")));
        assert!(word_line("the `dict`s here").contains(&word_line("the dicts")));
    }
}
