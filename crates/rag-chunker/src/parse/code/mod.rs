//! Source code, read along its syntax tree (tree-sitter, one grammar per cargo feature:
//! `code-python`, `code-rust`, `code-javascript`, `code-typescript` (TypeScript and TSX),
//! `code-go`, `code-java`, `code-c`, `code-cpp`; `code-all` builds them all).
//!
//! The document's text is the file itself. Its blocks are the top-level items of the file (a
//! definition with the comments and attributes directly above it, an import, a statement), each a
//! [`BlockType::Code`] block marked with the language (`attributes.code_language`), which tells
//! the chunker to cut it along the syntax tree (see `HeadingAwareChunker`). A file that does not
//! parse still reads: tree-sitter recovers around the error, and the document carries a warning
//! saying where (`ParsedDocument::warnings`).

#[cfg(feature = "code")]
pub(crate) mod grammar;

use std::fmt;

#[cfg(feature = "code")]
use rag_core::{Block, Rendition, Span};
use rag_core::{BlockType, ParseError, ParsedDocument, RequestContext, SourceBytes};

/// The attribute of a code document's blocks that names its language.
pub const LANGUAGE_ATTRIBUTE: &str = "code_language";

/// A programming language the code parser reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Language {
    /// Python (`.py`, `.pyi`).
    Python,
    /// Rust (`.rs`).
    Rust,
    /// JavaScript, JSX included (`.js`, `.mjs`, `.cjs`, `.jsx`).
    JavaScript,
    /// TypeScript (`.ts`, `.mts`, `.cts`).
    TypeScript,
    /// TypeScript with JSX (`.tsx`).
    Tsx,
    /// Go (`.go`).
    Go,
    /// Java (`.java`).
    Java,
    /// C (`.c`, `.h`).
    C,
    /// C++ (`.cc`, `.cpp`, `.cxx`, `.hpp`, `.hh`, `.hxx`).
    Cpp,
}

impl Language {
    /// Every language, in the order help texts list them.
    pub const ALL: [Language; 9] = [
        Self::Python,
        Self::Rust,
        Self::JavaScript,
        Self::TypeScript,
        Self::Tsx,
        Self::Go,
        Self::Java,
        Self::C,
        Self::Cpp,
    ];

    /// The name `--type` takes and messages use: `python`, `rust`, `javascript`, `typescript`,
    /// `tsx`, `go`, `java`, `c` or `cpp`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Python => "python",
            Self::Rust => "rust",
            Self::JavaScript => "javascript",
            Self::TypeScript => "typescript",
            Self::Tsx => "tsx",
            Self::Go => "go",
            Self::Java => "java",
            Self::C => "c",
            Self::Cpp => "cpp",
        }
    }

    /// The file-name suffixes of the language (see `DocumentType::suffixes`).
    pub const fn suffixes(self) -> &'static [&'static str] {
        match self {
            Self::Python => &[".py", ".pyi"],
            Self::Rust => &[".rs"],
            Self::JavaScript => &[".js", ".mjs", ".cjs", ".jsx"],
            Self::TypeScript => &[".ts", ".mts", ".cts"],
            Self::Tsx => &[".tsx"],
            Self::Go => &[".go"],
            Self::Java => &[".java"],
            Self::C => &[".c", ".h"],
            Self::Cpp => &[".cc", ".cpp", ".cxx", ".hpp", ".hh", ".hxx"],
        }
    }

    /// The cargo feature of rag-chunker that builds the language's grammar.
    pub const fn feature(self) -> &'static str {
        match self {
            Self::Python => "code-python",
            Self::Rust => "code-rust",
            Self::JavaScript => "code-javascript",
            Self::TypeScript | Self::Tsx => "code-typescript",
            Self::Go => "code-go",
            Self::Java => "code-java",
            Self::C => "code-c",
            Self::Cpp => "code-cpp",
        }
    }

    /// Whether this build reads the language (its feature is on).
    pub fn is_built(self) -> bool {
        #[cfg(feature = "code")]
        {
            grammar::grammar(self).is_some()
        }
        #[cfg(not(feature = "code"))]
        {
            false
        }
    }

    /// The language a name of [`as_str`](Self::as_str) names.
    pub fn from_name(name: &str) -> Option<Language> {
        Self::ALL.into_iter().find(|language| language.as_str() == name)
    }
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The parser of one language's source files: the file is the text, its top-level items the
/// blocks.
///
/// ```
/// use rag_chunker::parse::{CodeParser, Language};
/// use rag_core::{Parser, RequestContext, SourceBytes};
///
/// let code = b"import os\n\n\ndef main():\n    print(os.getcwd())\n";
/// let source = SourceBytes { document_id: &"d".into(), corpus_id: &"c".into(), source_uri: "main.py", bytes: code };
/// let parsed = CodeParser::new(Language::Python).parse(&RequestContext::local("acme"), source);
/// # #[cfg(feature = "code-python")]
/// # {
/// let parsed = parsed?;
/// assert_eq!(parsed.blocks.len(), 2); // the import, the function
/// assert!(parsed.warnings().is_empty());
/// # }
/// # Ok::<(), rag_core::ParseError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CodeParser {
    language: Language,
}

impl CodeParser {
    /// The parser of `language`.
    pub const fn new(language: Language) -> Self {
        Self { language }
    }

    /// The language it reads.
    pub const fn language(&self) -> Language {
        self.language
    }
}

impl rag_core::Parser for CodeParser {
    fn name(&self) -> &str {
        self.language.as_str()
    }

    fn parse(&self, _ctx: &RequestContext, source: SourceBytes<'_>) -> Result<ParsedDocument, ParseError> {
        let text = super::decode(&source)?;
        parse_code(self.language, &source, text)
    }
}

/// The language of a code document: the one its blocks are marked with, when every block is a
/// code block of that language; `None` for any other document.
pub fn language_of(parsed: &ParsedDocument) -> Option<Language> {
    let first = parsed.blocks.first()?;
    let name = first.attributes.get(LANGUAGE_ATTRIBUTE)?.as_str()?;
    let language = Language::from_name(name)?;
    parsed
        .blocks
        .iter()
        .all(|block| {
            block.block_type == BlockType::Code
                && block.attributes.get(LANGUAGE_ATTRIBUTE).and_then(|v| v.as_str()) == Some(name)
        })
        .then_some(language)
}

/// A code block of `language` over `range`.
#[cfg(feature = "code")]
fn code_block(language: Language, start: usize, end: usize) -> Block {
    let mut block = Block::new(BlockType::Code, rag_core::Span::new(start, end));
    block
        .attributes
        .insert(LANGUAGE_ATTRIBUTE.into(), serde_json::Value::from(language.as_str()));
    block
}

/// Parses `text` (the whole file) as `language`.
pub(crate) fn parse_code(
    language: Language,
    source: &SourceBytes<'_>,
    text: String,
) -> Result<ParsedDocument, ParseError> {
    #[cfg(feature = "code")]
    if let Some(grammar) = grammar::grammar(language) {
        let tree = syntax_tree(&grammar, &text).ok_or_else(|| ParseError::Malformed {
            source_uri: source.source_uri.to_owned(),
            line: None,
            column: None,
            message: format!("the {language} parser gave no syntax tree"),
        })?;
        let blocks = top_level_blocks(language, &tree, &text);
        let mut rendition = Rendition::new(language.as_str(), None);
        if let Some(warning) = syntax_error_warning(&tree, &text) {
            rendition.warn(warning);
        }
        let mut parsed = ParsedDocument::new(super::document(source, text), blocks);
        parsed.rendition = Some(rendition);
        return Ok(parsed);
    }
    let _ = text;
    Err(ParseError::NotBuilt {
        source_uri: source.source_uri.to_owned(),
        format: language.as_str().to_owned(),
        feature: language.feature().to_owned(),
    })
}

/// The syntax tree of `text` under `grammar`; `None` only if tree-sitter refuses the grammar (a
/// version mismatch, caught by the tests) or gives up.
#[cfg(feature = "code")]
pub(crate) fn syntax_tree(grammar: &tree_sitter::Language, text: &str) -> Option<tree_sitter::Tree> {
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(grammar).ok()?;
    parser.parse(text, None)
}

/// One block per top-level item of the file (a definition with its leading comments and
/// attributes, which the tree gives as separate items, is one block), and one for any other text
/// between them; whitespace stays outside blocks.
#[cfg(feature = "code")]
fn top_level_blocks(language: Language, tree: &tree_sitter::Tree, text: &str) -> Vec<Block> {
    let root = tree.root_node();
    let mut ranges: Vec<(usize, usize)> = Vec::new();
    let mut cursor = root.walk();
    let mut attach_from: Option<usize> = None;
    let mut previous_end = 0usize;
    for child in root.children(&mut cursor) {
        let (start, end) = (child.start_byte(), child.end_byte());
        let blank_before = text
            .get(previous_end..start)
            .is_some_and(|gap| gap.matches('\n').count() > 1);
        if blank_before {
            attach_from = None;
        }
        if grammar::is_leading(child) && starts_line(text, previous_end, start) {
            attach_from.get_or_insert(start);
            // A run of leading comments is one block until what it leads is known.
            match ranges.last_mut() {
                Some(last) if Some(last.0) == attach_from => last.1 = end,
                _ => ranges.push((start, end)),
            }
        } else if let Some(from) = attach_from
            .take()
            .filter(|_| grammar::definition(language, child, text).is_some())
        {
            if let Some(last) = ranges.last_mut().filter(|last| last.0 == from) {
                last.1 = end;
            }
        } else {
            attach_from = None;
            ranges.push((start, end));
        }
        previous_end = end;
    }
    let mut blocks = Vec::with_capacity(ranges.len() + 2);
    // A leading byte-order mark stays in the text but in no block, as with every format.
    let mut covered = super::content_start(text);
    for (start, end) in ranges.into_iter().chain(std::iter::once((text.len(), text.len()))) {
        // Text the tree left out (it does not, but nothing may be lost if it ever did).
        let gap = crate::sentence::trim_range(text, covered..start.max(covered));
        if !gap.is_empty() {
            blocks.push(code_block(language, gap.start, gap.end));
        }
        let span = crate::sentence::trim_range(text, start.max(covered)..end.max(covered));
        if !span.is_empty() {
            blocks.push(code_block(language, span.start, span.end));
        }
        covered = covered.max(end);
    }
    blocks
}

/// Whether only whitespace precedes `at` on its line, looking back from `at` to `from` (the end
/// of the previous sibling) and, if no line break is there, a bounded stretch before it: a
/// one-line file of megabytes is not scanned back for each node.
#[cfg(feature = "code")]
pub(crate) fn starts_line(text: &str, from: usize, at: usize) -> bool {
    /// How far back a line start is looked for before `from`.
    const LOOKBACK: usize = 256;
    let gap = &text[from..at];
    if let Some(newline) = gap.rfind('\n') {
        return gap[newline + 1..].trim().is_empty();
    }
    if !gap.trim().is_empty() {
        return false;
    }
    let back = crate::sentence::floor_boundary(text, from.saturating_sub(LOOKBACK));
    let before = &text[back..from];
    match before.rfind('\n') {
        Some(newline) => before[newline + 1..].trim().is_empty(),
        None => back == 0 && before.trim().is_empty(),
    }
}

/// The warning about the places the parser could not read, if any: how many, and the line of
/// the first.
#[cfg(feature = "code")]
fn syntax_error_warning(tree: &tree_sitter::Tree, text: &str) -> Option<String> {
    let root = tree.root_node();
    if !root.has_error() {
        return None;
    }
    let errors = error_spans(tree);
    let first = errors.first()?;
    let line = text.as_bytes()[..first.start.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1;
    Some(format!(
        "syntax errors at {} place{} (the first at line {line}): chunks there are cut at lines, not along the syntax",
        errors.len(),
        if errors.len() == 1 { "" } else { "s" }
    ))
}

/// The spans of the tree's ERROR and MISSING nodes, outermost only, in order; the walk goes down
/// only into nodes that hold an error, without recursion.
#[cfg(feature = "code")]
pub(crate) fn error_spans(tree: &tree_sitter::Tree) -> Vec<Span> {
    let mut spans = Vec::new();
    let mut cursor = tree.walk();
    'walk: loop {
        let node = cursor.node();
        if node.is_error() || node.is_missing() {
            spans.push(Span::new(node.start_byte(), node.end_byte()));
        } else if node.has_error() && cursor.goto_first_child() {
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                break 'walk;
            }
        }
    }
    spans
}

/// The built-in parser of `language`, for `DocumentType::parser`.
pub(crate) const fn parser_of(language: Language) -> &'static CodeParser {
    const PARSERS: [CodeParser; 9] = [
        CodeParser::new(Language::Python),
        CodeParser::new(Language::Rust),
        CodeParser::new(Language::JavaScript),
        CodeParser::new(Language::TypeScript),
        CodeParser::new(Language::Tsx),
        CodeParser::new(Language::Go),
        CodeParser::new(Language::Java),
        CodeParser::new(Language::C),
        CodeParser::new(Language::Cpp),
    ];
    &PARSERS[language as usize]
}
