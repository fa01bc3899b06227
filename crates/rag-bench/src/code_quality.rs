//! What a user keeps of chunking source code, measured from the syntax tree (tree-sitter, parsed
//! here and read with this module's own lists of node kinds, not the chunker's):
//!
//! - **definitions kept whole**: of the definitions (functions, methods, classes, structs, impls,
//!   traits, interfaces, enums, Go types) whose text fits the budget, the share that lies inside
//!   one chunk;
//! - **starts at a statement boundary**: of the chunks, the share whose first character that is
//!   not whitespace starts a statement or declaration (a named node whose parent is the file or a
//!   body: `block`, `class_body`, `declaration_list`, a preprocessor conditional, ...), a
//!   comment, or an element of an array, list or table literal (where a long data table can only
//!   be cut);
//! - **inside a definition, named**: of the chunks that lie inside a definition, the share whose
//!   `heading_path` has an entry naming the innermost such definition (for chunkers that write
//!   one);
//! - **bytes lost**: bytes that are not whitespace and lie in no chunk.

use std::ops::Range;

use rag_core::TokenCounter;
use tree_sitter::{Node, Tree};

/// The grammar of a file name's extension, or `None` for a file that is not measured.
pub fn grammar_of(name: &str) -> Option<tree_sitter::Language> {
    let extension = name.rsplit('.').next()?;
    Some(match extension {
        "py" | "pyi" => tree_sitter_python::LANGUAGE.into(),
        "rs" => tree_sitter_rust::LANGUAGE.into(),
        "js" | "mjs" | "cjs" | "jsx" => tree_sitter_javascript::LANGUAGE.into(),
        "ts" | "mts" | "cts" => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
        "tsx" => tree_sitter_typescript::LANGUAGE_TSX.into(),
        "go" => tree_sitter_go::LANGUAGE.into(),
        "java" => tree_sitter_java::LANGUAGE.into(),
        "c" | "h" => tree_sitter_c::LANGUAGE.into(),
        "cc" | "cpp" | "cxx" | "hpp" | "hh" | "hxx" => tree_sitter_cpp::LANGUAGE.into(),
        _ => return None,
    })
}

/// The node kinds that are definitions, in every grammar measured.
const DEFINITIONS: &[&str] = &[
    "function_definition",
    "class_definition",
    "decorated_definition",
    "function_item",
    "impl_item",
    "struct_item",
    "enum_item",
    "trait_item",
    "function_declaration",
    "generator_function_declaration",
    "class_declaration",
    "abstract_class_declaration",
    "method_definition",
    "interface_declaration",
    "enum_declaration",
    "method_declaration",
    "constructor_declaration",
    "record_declaration",
    "type_declaration",
    "class_specifier",
];

/// The node kinds whose children are statements or declarations.
const BODIES: &[&str] = &[
    "module",
    "preproc_if",
    "preproc_ifdef",
    "preproc_else",
    "preproc_elif",
    "linkage_specification",
    "program",
    "source_file",
    "translation_unit",
    "block",
    "statement_block",
    "compound_statement",
    "declaration_list",
    "field_declaration_list",
    "statement_list",
    "class_body",
    "interface_body",
    "enum_body",
    "constructor_body",
    "switch_body",
    "enum_variant_list",
    "enumerator_list",
    // Data: an element of an array, list or table literal is where a long one can be cut.
    "array_expression",
    "array",
    "list",
    "dictionary",
    "initializer_list",
];

/// A definition of a file: where it is (with a Python decorator, the decorated whole) and its
/// name.
#[derive(Debug, Clone)]
pub struct Definition {
    /// Its bytes.
    pub range: Range<usize>,
    /// The text of its `name` field (empty if it has none).
    pub name: String,
}

/// What the measures need of one file's syntax tree.
#[derive(Debug, Default)]
pub struct Outline {
    /// The definitions, outer before inner.
    pub definitions: Vec<Definition>,
    /// Where statements, declarations and comments start, sorted.
    pub boundaries: Vec<usize>,
}

/// The outline of `text` under `grammar`, walked with a cursor (no recursion on depth).
pub fn outline(grammar: &tree_sitter::Language, text: &str) -> Option<Outline> {
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(grammar).ok()?;
    let tree: Tree = parser.parse(text, None)?;
    let mut out = Outline::default();
    let mut cursor = tree.walk();
    // The kinds of the nodes on the way down, to know each node's parent.
    let mut parents: Vec<&str> = Vec::new();
    'walk: loop {
        let node = cursor.node();
        let parent = parents.last().copied();
        if node.is_named() && (node.kind().contains("comment") || parent.is_some_and(|p| BODIES.contains(&p))) {
            out.boundaries.push(node.start_byte());
        }
        if DEFINITIONS.contains(&node.kind()) && parent != Some("decorated_definition") && !is_bodiless(node) {
            let named = if node.kind() == "decorated_definition" {
                node.child_by_field_name("definition").unwrap_or(node)
            } else {
                node
            };
            // A name, a C function's declarator, or an impl block's type.
            let name = named
                .child_by_field_name("name")
                .or_else(|| declarator(named))
                .or_else(|| named.child_by_field_name("type"))
                .and_then(|n| text.get(n.start_byte()..n.end_byte()))
                .unwrap_or("");
            out.definitions.push(Definition {
                range: node.start_byte()..node.end_byte(),
                name: name.to_owned(),
            });
        }
        if cursor.goto_first_child() {
            parents.push(node.kind());
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                break 'walk;
            }
            parents.pop();
        }
    }
    out.boundaries.sort_unstable();
    out.boundaries.dedup();
    Some(out)
}

/// Whether `node` is a C++ class declared without a body (`class Foo;`).
fn is_bodiless(node: Node<'_>) -> bool {
    node.kind() == "class_specifier" && node.child_by_field_name("body").is_none()
}

/// The innermost declarator of a C or C++ function (its name).
fn declarator(node: Node<'_>) -> Option<Node<'_>> {
    let mut at = node.child_by_field_name("declarator")?;
    for _ in 0..8 {
        match at.child_by_field_name("declarator") {
            Some(inner) => at = inner,
            None => break,
        }
    }
    Some(at)
}

/// The counts behind the four figures, summed over files.
#[derive(Debug, Default, Clone)]
pub struct CodeTally {
    /// Files measured.
    pub files: usize,
    /// Chunks measured.
    pub chunks: usize,
    /// Definitions whose text fits the budget.
    pub fitting: usize,
    /// Of those, the ones inside one chunk.
    pub whole: usize,
    /// Chunks that start at a statement boundary.
    pub at_boundary: usize,
    /// Chunks inside a definition.
    pub inside: usize,
    /// Of those, the ones whose heading path names it.
    pub named: usize,
    /// Bytes that are not whitespace and lie in no chunk.
    pub lost: usize,
    /// The first line of each chunk that does not start at a statement boundary, and of each
    /// chunk inside a definition that does not name it (with the definition's name).
    pub findings: Vec<String>,
}

impl CodeTally {
    /// Adds one file: its text, its outline and its chunks (spans, each with its heading path).
    pub fn add(
        &mut self,
        text: &str,
        outline: &Outline,
        chunks: &[(Range<usize>, Vec<String>)],
        max_tokens: usize,
        counter: &dyn TokenCounter,
    ) -> Result<(), rag_core::TokenizerError> {
        self.files += 1;
        self.chunks += chunks.len();
        for definition in &outline.definitions {
            let Some(body) = text.get(definition.range.clone()) else {
                continue;
            };
            if counter.count(body)? > max_tokens {
                continue;
            }
            self.fitting += 1;
            if chunks
                .iter()
                .any(|(span, _)| span.start <= definition.range.start && definition.range.end <= span.end)
            {
                self.whole += 1;
            }
        }
        for (span, path) in chunks {
            let Some(content) = text.get(span.clone()) else {
                continue;
            };
            let start = span.start + (content.len() - content.trim_start().len());
            let first_line = || {
                text[start..]
                    .lines()
                    .next()
                    .unwrap_or("")
                    .chars()
                    .take(70)
                    .collect::<String>()
            };
            if outline.boundaries.binary_search(&start).is_ok() {
                self.at_boundary += 1;
            } else {
                self.findings.push(format!("start: {}", first_line()));
            }
            let innermost = outline
                .definitions
                .iter()
                .filter(|d| d.range.start <= span.start && span.end <= d.range.end)
                .min_by_key(|d| d.range.len());
            if let Some(definition) = innermost {
                self.inside += 1;
                if !definition.name.is_empty() && path.iter().any(|title| title.contains(definition.name.as_str())) {
                    self.named += 1;
                } else {
                    self.findings
                        .push(format!("unnamed {:?} in {path:?}: {}", definition.name, first_line()));
                }
            }
        }
        let mut covered = vec![false; text.len()];
        for (span, _) in chunks {
            if let Some(slice) = covered.get_mut(span.clone()) {
                slice.fill(true);
            }
        }
        self.lost += text
            .char_indices()
            .filter(|&(at, c)| !c.is_whitespace() && !covered[at])
            .map(|(_, c)| c.len_utf8())
            .sum::<usize>();
        Ok(())
    }

    /// The table's header.
    pub fn header() -> &'static str {
        "| corpus | chunker | files | chunks | definitions that fit kept whole | chunk starts at a statement boundary | chunks inside a definition naming it | bytes lost |\n|---|---|--:|--:|--:|--:|--:|--:|"
    }

    /// The table's row for `corpus` and `chunker`.
    pub fn row(&self, corpus: &str, chunker: &str) -> String {
        let share = |part: usize, whole: usize| match whole {
            0 => "-".to_owned(),
            _ => format!("{:.1}% ({part}/{whole})", 100.0 * part as f64 / whole as f64),
        };
        format!(
            "| {corpus} | {chunker} | {} | {} | {} | {} | {} | {} |",
            self.files,
            self.chunks,
            share(self.whole, self.fitting),
            share(self.at_boundary, self.chunks),
            share(self.named, self.inside),
            self.lost
        )
    }
}
