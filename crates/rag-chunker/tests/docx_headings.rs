//! The eval's DOCX check: the Black guide converted to DOCX by pandoc (`eval/corpus/black/docx`,
//! see `eval/README.md`) chunks into the same sections as its Markdown source: the same headings
//! at the same levels, every heading chunk with the same heading path, and every body chunk under
//! a section the Markdown has. Run with `--nocapture` to see the table.

#![allow(clippy::unwrap_used, clippy::print_stderr)]

mod invariants;

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use invariants::{chunks_of, parse};
use rag_chunker::DocumentType;
use rag_core::{BlockType, Chunk, ParsedDocument};

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../eval/corpus/black");

fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            markdown_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "md") {
            out.push(path);
        }
    }
}

fn headings(parsed: &ParsedDocument) -> Vec<(u8, String)> {
    parsed
        .blocks
        .iter()
        .filter(|b| b.block_type == BlockType::Heading)
        .map(|b| (b.level.unwrap().get(), b.text.clone().unwrap()))
        .collect()
}

fn path_of(chunk: &Chunk) -> HeadingPath {
    chunk.metadata["heading_path"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_owned())
        .collect()
}

/// A chunk's heading path.
type HeadingPath = Vec<String>;

/// The heading chunks as (level, heading path), and the heading paths of the body chunks.
fn sections(chunks: &[Chunk]) -> (Vec<(u64, HeadingPath)>, BTreeSet<HeadingPath>) {
    let heading_chunks = chunks
        .iter()
        .filter(|c| c.metadata_str("kind") == Some("heading"))
        .map(|c| (c.metadata["level"].as_u64().unwrap(), path_of(c)))
        .collect();
    let body_paths = chunks
        .iter()
        .filter(|c| c.metadata_str("kind") == Some("body"))
        .map(path_of)
        .collect();
    (heading_chunks, body_paths)
}

#[test]
fn black_guide_docx_heading_paths_equal_the_markdown_sources() {
    let docs = Path::new(CORPUS).join("docs");
    let mut files = Vec::new();
    markdown_files(&docs, &mut files);
    assert_eq!(files.len(), 25, "the corpus of eval/README.md");
    let mut table = String::from(
        "| file | headings (md / docx) | heading chunks equal | body sections equal | note |\n|---|---|---|---|---|\n",
    );
    let (mut equal, mut problems) = (0, Vec::new());
    for md_path in &files {
        let relative = md_path.strip_prefix(&docs).unwrap();
        let docx_path = Path::new(CORPUS).join("docx").join(relative).with_extension("docx");
        let markdown = parse(DocumentType::Markdown, "a.md", &std::fs::read(md_path).unwrap());
        let docx = parse(DocumentType::Docx, "a.docx", &std::fs::read(&docx_path).unwrap());
        let (md_headings, docx_headings) = (headings(&markdown), headings(&docx));
        let (md_heading_chunks, md_bodies) = sections(&chunks_of(&markdown, 512, 64));
        let (docx_heading_chunks, docx_bodies) = sections(&chunks_of(&docx, 512, 64));
        let headings_equal = md_headings == docx_headings && md_heading_chunks == docx_heading_chunks;
        let only_md: Vec<&Vec<String>> = md_bodies.difference(&docx_bodies).collect();
        let only_docx: Vec<&Vec<String>> = docx_bodies.difference(&md_bodies).collect();
        // The one difference the conversion makes: Markdown before the first heading that pandoc
        // drops (an HTML comment) leaves the Markdown a body chunk outside every section.
        let first_heading = markdown.blocks.iter().position(|b| b.block_type == BlockType::Heading);
        let preamble_is_comment = markdown.blocks[..first_heading.unwrap_or(0)]
            .iter()
            .all(|b| markdown.source_of(b).unwrap().trim_start().starts_with("<!--"));
        let note = if only_md == [&Vec::<String>::new()] && only_docx.is_empty() && preamble_is_comment {
            "an HTML comment before the first heading: pandoc drops it, so the Markdown has a body chunk under no heading"
        } else if only_md.is_empty() && only_docx.is_empty() {
            ""
        } else {
            problems.push(format!(
                "{}: body sections only in md {only_md:?}, only in docx {only_docx:?}",
                relative.display()
            ));
            "body sections differ"
        };
        if !headings_equal {
            problems.push(format!(
                "{}: headings md {md_headings:?}\n  docx {docx_headings:?}",
                relative.display()
            ));
        }
        if headings_equal && note.is_empty() {
            equal += 1;
        }
        let _ = writeln!(
            table,
            "| {} | {} / {} | {} | {} | {note} |",
            relative.display(),
            md_headings.len(),
            docx_headings.len(),
            if headings_equal { "yes" } else { "no" },
            if only_md.is_empty() && only_docx.is_empty() {
                "yes"
            } else {
                "no"
            },
        );
    }
    let _ = writeln!(table, "\n{equal} of {} files equal in every heading path", files.len());
    eprintln!("{table}");
    assert!(problems.is_empty(), "{}\n\n{table}", problems.join("\n"));
}
