//! Source code, chunked along its syntax tree: definitions whole when they fit, split at their
//! statements when not, small items merged, `heading_path` naming the enclosing definitions,
//! nothing lost, within budget; and bad input (syntax errors, one-line files, deep nesting).

#![allow(clippy::unwrap_used)]

mod invariants;

use std::sync::Arc;

use invariants::{check_code, cl100k, parse};
use rag_chunker::DocumentType;
use rag_chunker::parse::Language;
use rag_core::{Chunk, ChunkKind, ParsedDocument};

/// The chunks of `code` (named `name`) at `max` tokens, every promise checked.
fn chunks(name: &str, code: &str, max: usize) -> (ParsedDocument, Vec<Chunk>) {
    let doc_type = DocumentType::from_path(name).unwrap();
    let parsed = parse(doc_type, name, code.as_bytes());
    let chunks = check_code(&parsed, max);
    (parsed, chunks)
}

fn paths(chunks: &[Chunk]) -> Vec<(Option<ChunkKind>, Vec<&str>)> {
    chunks.iter().map(|c| (c.kind(), c.heading_path())).collect()
}

const PYTHON: &str = r#"import os
import sys

LIMIT = 10


class Command:
    """A command of the tool."""

    def __init__(self, name):
        self.name = name

    @property
    def title(self):
        return self.name.title()

    def invoke(self, ctx):
        # Runs every step, in order.
        for step in range(LIMIT):
            ctx.log(f"step {step} of {self.name}")
            if step % 2:
                ctx.flush()
        return ctx.result


def main():
    Command("x").invoke(None)
"#;

#[test]
fn a_small_file_is_one_chunk_and_definitions_that_fit_stay_whole() {
    let (_, all) = chunks("tool.py", PYTHON, 512);
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].kind(), Some(ChunkKind::Code));
    // At 64 tokens the class is split: its head and the methods that fit beside it are one
    // chunk, naming the class; `invoke` fits alone and names itself.
    let (_, small) = chunks("tool.py", PYTHON, 64);
    let contents: Vec<&str> = small.iter().map(|c| c.content().unwrap()).collect();
    let head = small
        .iter()
        .find(|c| c.content().unwrap().starts_with("class Command:"))
        .unwrap();
    assert_eq!(head.heading_path(), ["class Command"]);
    assert_eq!(head.kind(), Some(ChunkKind::Class));
    // The decorator belongs to its method, in the same chunk.
    assert!(
        contents
            .iter()
            .any(|c| c.contains("    @property\n    def title(self):\n        return self.name.title()")),
        "{contents:#?}"
    );
    let invoke = small
        .iter()
        .find(|c| c.content().unwrap().contains("def invoke"))
        .unwrap();
    assert!(invoke.content().unwrap().starts_with("def invoke(self, ctx):"));
    assert!(invoke.content().unwrap().ends_with("return ctx.result"));
    assert_eq!(invoke.heading_path(), ["class Command", "def invoke"]);
    assert_eq!(invoke.kind(), Some(ChunkKind::Function));
    // The imports and the constant share a chunk at module level.
    assert_eq!(small[0].content(), Some("import os\nimport sys\n\nLIMIT = 10"));
    assert_eq!(paths(&small[..1]), [(Some(ChunkKind::Code), vec![])]);
}

#[test]
fn a_definition_over_the_budget_is_split_at_its_statements_and_each_part_names_it() {
    let (_, small) = chunks("tool.py", PYTHON, 24);
    let parts: Vec<&Chunk> = small
        .iter()
        .filter(|c| c.heading_path() == ["class Command", "def invoke"])
        .collect();
    assert!(parts.len() >= 2, "{:#?}", paths(&small));
    for part in &parts {
        let start = part.span.unwrap().start;
        let line_start = PYTHON[..start].rfind('\n').map_or(0, |i| i + 1);
        assert!(PYTHON[line_start..start].trim().is_empty(), "starts mid-line: {part:?}");
        assert_eq!(part.kind(), Some(ChunkKind::Function));
    }
    // The comment above the loop stays with the definition's statements, not alone.
    assert!(
        small
            .iter()
            .all(|c| c.content() != Some("# Runs every step, in order."))
    );
}

#[test]
fn rust_impls_name_their_type_and_doc_comments_and_attributes_go_with_their_item() {
    let code = r#"use std::fmt;

/// Finds needles.
pub struct Searcher {
    needle: String,
}

impl Searcher {
    /// A searcher for `needle`.
    #[must_use]
    pub fn new(needle: &str) -> Self {
        Self { needle: needle.to_owned() }
    }

    /// Where the needle is in `haystack`.
    pub fn find(&self, haystack: &str) -> Option<usize> {
        let first = self.needle.chars().next()?;
        for (at, c) in haystack.char_indices() {
            if c == first && haystack[at..].starts_with(&self.needle) {
                return Some(at);
            }
        }
        None
    }
}

impl fmt::Display for Searcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.needle)
    }
}
"#;
    let (_, small) = chunks("search.rs", code, 60);
    let find = small.iter().find(|c| c.content().unwrap().contains("fn find")).unwrap();
    assert!(
        find.content()
            .unwrap()
            .starts_with("/// Where the needle is in `haystack`.\n    pub fn find"),
        "{find:?}"
    );
    // The brace that closes the impl does not make a chunk of its own.
    assert!(small.iter().all(|c| c.content() != Some("}")));
    assert_eq!(find.heading_path(), ["impl Searcher", "fn find"]);
    let new = small.iter().find(|c| c.content().unwrap().contains("fn new")).unwrap();
    assert!(
        new.content()
            .unwrap()
            .contains("/// A searcher for `needle`.\n    #[must_use]\n    pub fn new")
    );
    assert!(
        small
            .iter()
            .any(|c| c.heading_path().first() == Some(&"impl fmt::Display for Searcher")
                || c.content().unwrap().starts_with("impl fmt::Display for Searcher"))
    );
}

#[test]
fn every_language_is_read_with_its_definitions_named() {
    let cases: [(&str, &str, &str); 9] = [
        ("a.py", "def run():\n    return 1\n", "def run"),
        ("a.rs", "fn run() -> u8 {\n    1\n}\n", "fn run"),
        ("a.js", "export function run() {\n  return 1;\n}\n", "function run"),
        ("a.ts", "interface Shape {\n  area(): number;\n}\n", "interface Shape"),
        ("a.tsx", "const App = () => <div>hi</div>;\n", "const App"),
        ("a.go", "package main\n\nfunc Run() int {\n\treturn 1\n}\n", "func Run"),
        ("A.java", "class A {\n  int run() { return 1; }\n}\n", "class A"),
        ("a.c", "int run(void) {\n  return 1;\n}\n", "run()"),
        ("a.cpp", "namespace n {\nint run() { return 1; }\n}\n", "namespace n"),
    ];
    for (name, code, title) in cases {
        let Some(DocumentType::Code(language)) = DocumentType::from_path(name) else {
            panic!("{name} is not code");
        };
        assert!(language.is_built(), "{language}");
        let parsed = parse(DocumentType::Code(language), name, code.as_bytes());
        assert!(parsed.warnings().is_empty(), "{name}: {:?}", parsed.warnings());
        // At a budget this small, each definition is a chunk of its own or split.
        let (_, all) = chunks(name, code, 12);
        let chunk = all.iter().find(|c| c.heading_path().contains(&title));
        assert!(chunk.is_some(), "{name}: {:?}", paths(&all));
    }
    assert_eq!(Language::ALL.len(), 9);
}

#[test]
fn a_file_that_does_not_parse_still_chunks_and_says_where() {
    let code = "def ok():\n    return 1\n\n\ndef broken(:\n    x = [1, 2\n    y = }\n\n\ndef fine():\n    return 2\n";
    let parsed = parse(DocumentType::Code(Language::Python), "bad.py", code.as_bytes());
    let warnings = parsed.warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].starts_with("syntax errors at"), "{warnings:?}");
    assert!(warnings[0].contains("line 5"), "{warnings:?}");
    let (_, small) = chunks("bad.py", code, 8);
    let contents: Vec<&str> = small.iter().map(|c| c.content().unwrap()).collect();
    // What parses is chunked along the syntax; inside the error, chunks start at lines.
    assert_eq!(contents[0], "def ok():\n    return 1");
    for chunk in &small {
        let start = chunk.span.unwrap().start;
        assert!(
            start == 0 || code.as_bytes()[start - 1] == b'\n' || code[..start].ends_with("    "),
            "{contents:#?}"
        );
    }
}

#[test]
fn a_minified_two_megabyte_line_is_chunked_whole_and_within_budget() {
    let statement = "var a=function(b){return b*2+c[d]};";
    let line = statement.repeat(2 * 1024 * 1024 / statement.len());
    let (_, all) = chunks("bundle.min.js", &line, 512);
    assert!(all.len() > 100);
    // Linear output: the chunks hold the line once (no overlap in code).
    let total: usize = all.iter().map(|c| c.span.unwrap().len()).sum();
    assert!(total <= line.len());
}

#[test]
fn ten_thousand_nested_brackets_neither_overflow_the_stack_nor_fail() {
    let depth = 10_000;
    let code = format!("x = {}1{}\n", "[".repeat(depth), "]".repeat(depth));
    let (_, all) = chunks("deep.py", &code, 128);
    assert!(all.len() > 1);
    let code = format!("fn f() {{ {}1{} }}\n", "(".repeat(depth), ")".repeat(depth));
    chunks("deep.rs", &code, 128);
}

#[test]
fn chunking_is_deterministic() {
    let (_, a) = chunks("tool.py", PYTHON, 40);
    let (_, b) = chunks("tool.py", PYTHON, 40);
    assert_eq!(serde_json::to_string(&a).unwrap(), serde_json::to_string(&b).unwrap());
    let counter: Arc<dyn rag_core::TokenCounter> = cl100k();
    assert!(a.iter().all(|c| c.tokenizer.as_deref() == Some(counter.name())));
}
