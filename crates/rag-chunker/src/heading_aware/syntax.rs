//! Syntax: the chunks of a source file, cut along its syntax tree (the cAST rule).
//!
//! The file's top-level items are taken in order. An item that fits the budget is an atom, never
//! cut: a definition that fits (with the comments, decorators and attributes directly above it)
//! stays whole. An item over the budget is replaced by its children in the tree, which is where
//! its statements are, recursively; a definition's children carry its title on their path. A part
//! the parser could not read (an `ERROR` node) is replaced by what it recovered, joined so that
//! every piece starts a line. A node with no children (a long string, a comment), and such
//! joined text, is cut at its lines, and a line still too long by the text rules (words, then
//! characters). Neighbouring atoms with the same enclosing definitions are then merged up to the
//! budget, so small items (imports, constants, short functions) share a chunk.
//!
//! The walk keeps its own stack of items, never recursing on the depth of the input, and counts
//! an item only when its size makes a fit plausible, so that deep nesting and one-line files stay
//! linear.

use std::collections::VecDeque;
use std::ops::Range;

use rag_core::{ChunkError, ChunkKind, ParsedDocument, RequestContext};
use tree_sitter::Node;

use super::HeadingAwareChunker;
use super::counting::Counting;
use super::sections::{Emitter, path_title};
use super::units::{Split, UnitSplitter};
use crate::parse::code::grammar::{self, DefKind};
use crate::parse::code::{Language, starts_line, syntax_tree};
use crate::sentence::trim_range;

/// How many times the budget an item's estimated count (its bytes at its parent's tokens per
/// byte) may be and still be counted: an item estimated over it is split without a count. A
/// wrong guess only splits a definition that would have fit; it never lets a chunk exceed the
/// budget, since every atom is counted.
const COUNT_IF_UNDER: f64 = 2.0;

/// The most enclosing definitions a chunk's `heading_path` names: the innermost ones, so that
/// output stays linear in the input however deep definitions nest.
pub(super) const MAX_PATH_DEPTH: usize = 16;

/// How many nodes of one child each are looked through for the definition they hold.
const MAX_WRAPPING: usize = 4;

/// How far back a line start is looked for, to tell whether a chunk would start inside a line.
const LINE_LOOKBACK: usize = 256;

/// An enclosing definition, for the `heading_path` of the chunks inside it.
struct Scope {
    parent: Option<usize>,
    title: String,
    kind: DefKind,
}

/// A stretch of the file to be chunked: a syntax node (with the comments above it, for a
/// definition), or text cut at its lines.
#[derive(Clone)]
struct Item<'t> {
    range: Range<usize>,
    /// The node, or `None` for text (a gap the tree left, comments above a split definition).
    node: Option<Node<'t>>,
    /// Whether the item starts with comments that lead its definition, before `node` starts.
    leading: bool,
    /// The definitions enclosing the item.
    scope: Option<usize>,
    /// What the item defines, when it is a definition.
    def: Option<DefKind>,
    /// Whether the item is the definition a wrapper holds (the wrapper opened its scope).
    wrapped: bool,
    /// Tokens per byte of the enclosing item, as counted or estimated.
    density: f64,
}

impl Item<'_> {
    /// Text cut at its lines when over the budget.
    fn text(range: Range<usize>, scope: Option<usize>, density: f64) -> Self {
        Self {
            range,
            node: None,
            leading: false,
            scope,
            def: None,
            wrapped: false,
            density,
        }
    }
}

/// An item that fits: never cut.
struct Atom {
    range: Range<usize>,
    tokens: usize,
    scope: Option<usize>,
    /// What it defines and its title, when it is one whole definition.
    def: Option<(DefKind, String)>,
}

/// Chunks `parsed`, whose text is `language` source, along its syntax tree.
pub(super) fn chunk_code(
    chunker: &HeadingAwareChunker,
    ctx: &RequestContext,
    parsed: &ParsedDocument,
    language: Language,
    grammar: &tree_sitter::Language,
    sink: &mut dyn FnMut(rag_core::Chunk),
) -> Result<usize, ChunkError> {
    let document = &parsed.document;
    let text = document.text.as_str();
    let counting = Counting::new(text, &document.id, chunker.counter().as_ref(), chunker.max_tokens());
    let tree = syntax_tree(grammar, text).ok_or_else(|| ChunkError::MalformedBlock {
        document_id: document.id.clone(),
        block_index: 0,
        message: format!("the {language} parser gave no syntax tree"),
    })?;
    let root = tree.root_node();
    let mut walk = Walk {
        language,
        root: root.id(),
        text,
        counting: &counting,
        splitter: UnitSplitter::new(),
        scopes: Vec::new(),
        merger: Merger {
            counting: &counting,
            emitter: Emitter::new(ctx, parsed, counting.tokenizer(), sink),
            current: Vec::new(),
            estimate: 0,
            pending: VecDeque::new(),
        },
    };
    let density = 1.0 / counting.bytes_per_token();
    let mut stack = vec![Item {
        range: crate::parse::content_start(text)..text.len(),
        node: Some(root),
        leading: false,
        scope: None,
        def: None,
        wrapped: false,
        density,
    }];
    while let Some(item) = stack.pop() {
        walk.step(item, &mut stack)?;
    }
    walk.merger.flush_all(&walk.scopes)?;
    Ok(walk.merger.emitter.emitted())
}

/// The walk over the tree: the items left, the scopes opened, the atoms found.
struct Walk<'a> {
    language: Language,
    /// The id of the tree's root node.
    root: usize,
    text: &'a str,
    counting: &'a Counting<'a>,
    splitter: UnitSplitter,
    scopes: Vec<Scope>,
    merger: Merger<'a>,
}

/// Whether an item fits, with its count, or is over, with its tokens per byte.
enum Fit {
    Fits(usize),
    Over(f64),
}

impl Walk<'_> {
    /// Takes one item: an atom if it fits, else its children (or its lines) onto `stack`.
    fn step<'t>(&mut self, item: Item<'t>, stack: &mut Vec<Item<'t>>) -> Result<(), ChunkError> {
        let range = trim_range(self.text, item.range.clone());
        if range.is_empty() {
            return Ok(());
        }
        // The file itself is always taken apart, so that each top-level definition names
        // itself even when the whole file would fit.
        let root = item.node.is_some_and(|node| node.id() == self.root);
        let fit = match root {
            true => Fit::Over(item.density),
            false => self.fit(&range, item.density)?,
        };
        let density = match fit {
            Fit::Fits(tokens) => {
                let def = match (item.def, item.node) {
                    (Some(kind), Some(node)) => Some((kind, self.title(node))),
                    (None, Some(node)) => self.sole_definition(node, &range),
                    _ => None,
                };
                return self.merger.add(
                    Atom {
                        range,
                        tokens,
                        scope: item.scope,
                        def,
                    },
                    &self.scopes,
                );
            }
            Fit::Over(density) => density,
        };
        match item.node {
            Some(node) if node.child_count() > 0 => {
                let scope = match (item.def, item.wrapped) {
                    (Some(kind), false) => {
                        self.scopes.push(Scope {
                            parent: item.scope,
                            title: self.title(node),
                            kind,
                        });
                        Some(self.scopes.len() - 1)
                    }
                    _ => item.scope,
                };
                let inner = item
                    .def
                    .and_then(|_| grammar::definition(self.language, node, self.text))
                    .map(|(_, inner)| inner)
                    .filter(|inner| inner.id() != node.id());
                let from = if item.leading {
                    node.start_byte()
                } else {
                    item.range.start
                };
                let to = if item.leading { node.end_byte() } else { item.range.end };
                let mut children = self.children(node, from..to, scope, density, inner);
                if item.leading {
                    children.insert(0, Item::text(item.range.start..node.start_byte(), scope, density));
                }
                stack.extend(children.into_iter().rev());
            }
            _ => {
                // A leaf, text, or a part the parser could not read: its lines, then the text
                // rules for a line still too long.
                for unit in self.splitter.units(self.counting, range, Split::Lines, None)? {
                    let tokens = unit.tokens_alone(self.counting)?;
                    self.merger.add(
                        Atom {
                            range: unit.start..unit.end,
                            tokens,
                            scope: item.scope,
                            def: None,
                        },
                        &self.scopes,
                    )?;
                }
            }
        }
        Ok(())
    }

    /// Whether `range` fits the budget: counted only when its size at `density` makes a fit
    /// plausible and it is within one count window.
    fn fit(&self, range: &Range<usize>, density: f64) -> Result<Fit, ChunkError> {
        let max = self.counting.max_tokens;
        let bytes = range.len();
        if bytes > self.counting.window || bytes as f64 * density > max as f64 * COUNT_IF_UNDER {
            return Ok(Fit::Over(density));
        }
        let tokens = self.counting.count(range.clone())?;
        if tokens <= max {
            Ok(Fit::Fits(tokens))
        } else {
            Ok(Fit::Over(tokens as f64 / bytes.max(1) as f64))
        }
    }

    /// The definition `node` is made of alone (a class body holding one method), if any: what
    /// it defines and its title.
    fn sole_definition(&self, node: Node<'_>, range: &Range<usize>) -> Option<(DefKind, String)> {
        let mut at = node;
        for _ in 0..MAX_WRAPPING {
            if at.named_child_count() != 1 {
                return None;
            }
            at = at.named_child(0)?;
            if trim_range(self.text, at.start_byte()..at.end_byte()) != *range {
                return None;
            }
            if let Some((definition, _)) = grammar::definition(self.language, at, self.text) {
                return Some((definition.kind, path_title(&definition.title)));
            }
        }
        None
    }

    /// The title of the definition `node` is.
    fn title(&self, node: Node<'_>) -> String {
        grammar::definition(self.language, node, self.text)
            .map(|(definition, _)| path_title(&definition.title))
            .unwrap_or_default()
    }

    /// The items of `node`'s children, within `bounds`: comments and attributes that directly
    /// lead a definition join it, and any text between children that is not whitespace (which
    /// the tree does not leave, but nothing may be lost) is an item of its own.
    fn children<'t>(
        &self,
        node: Node<'t>,
        bounds: Range<usize>,
        scope: Option<usize>,
        density: f64,
        inner: Option<Node<'t>>,
    ) -> Vec<Item<'t>> {
        let text = self.text;
        let mut items: Vec<Item<'t>> = Vec::new();
        // Where the run of leading comments that may belong to the next definition starts.
        let mut lead: Option<usize> = None;
        let mut previous_end = bounds.start;
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            let (start, end) = (child.start_byte().max(previous_end), child.end_byte().max(previous_end));
            let gap = &text[previous_end..start];
            if !gap.trim().is_empty() {
                items.push(Item::text(previous_end..start, scope, density));
                lead = None;
            }
            if gap.matches('\n').nth(1).is_some() {
                lead = None;
            }
            let definition = grammar::definition(self.language, child, text);
            let wrapped = inner.is_some_and(|inner| inner.id() == child.id());
            if definition.is_none() && grammar::is_leading(child) && starts_line(text, previous_end, start) {
                lead.get_or_insert(items.len());
                items.push(Item {
                    range: start..end,
                    node: Some(child),
                    leading: false,
                    scope,
                    def: None,
                    wrapped: false,
                    density,
                });
            } else {
                let from = match (lead.take(), &definition) {
                    (Some(first), Some(_)) if !wrapped => {
                        let from = items[first].range.start;
                        items.truncate(first);
                        Some(from)
                    }
                    _ => None,
                };
                items.push(Item {
                    range: from.unwrap_or(start)..end,
                    node: Some(child),
                    leading: from.is_some(),
                    scope,
                    def: definition.map(|(definition, _)| definition.kind),
                    wrapped,
                    density,
                });
            }
            previous_end = end;
        }
        if !text[previous_end..bounds.end.max(previous_end)].trim().is_empty() {
            items.push(Item::text(previous_end..bounds.end, scope, density));
        }
        if node.is_error() {
            return line_items(text, items);
        }
        items
    }
}

/// The items of a part the parser could not read, cut only at line starts: what it recovered
/// that starts a line stays an item (a definition there is kept whole when it fits), and anything
/// that starts inside a line joins the item before it as text, cut at its lines if too large.
fn line_items<'t>(text: &str, items: Vec<Item<'t>>) -> Vec<Item<'t>> {
    let mut out: Vec<Item<'t>> = Vec::with_capacity(items.len());
    for item in items {
        match out.last_mut() {
            Some(last) if !begins_line(text, item.range.start) => {
                *last = Item::text(last.range.start..item.range.end, last.scope, last.density);
            }
            _ => out.push(item),
        }
    }
    out
}

/// Whether only whitespace precedes `at` on its line (looked for a bounded stretch back).
fn begins_line(text: &str, at: usize) -> bool {
    let from = crate::sentence::floor_boundary(text, at.saturating_sub(LINE_LOOKBACK));
    starts_line(text, from, at)
}

/// Merges atoms into chunks: neighbours with the same enclosing definitions, up to the budget.
struct Merger<'a> {
    counting: &'a Counting<'a>,
    emitter: Emitter<'a>,
    /// The atoms of the chunk being built.
    current: Vec<Atom>,
    /// Their counts summed, one token per gap between them added: a guess, checked by a count
    /// before the chunk goes out.
    estimate: usize,
    /// Atoms a chunk gave back because its count was over the budget, to be placed again.
    pending: VecDeque<Atom>,
}

impl Merger<'_> {
    /// Places `atom` after the atoms before it: in the current chunk if it has the same
    /// enclosing definitions and probably fits, else in the next one.
    fn add(&mut self, atom: Atom, scopes: &[Scope]) -> Result<(), ChunkError> {
        self.pending.push_back(atom);
        self.place_pending(scopes)
    }

    fn place_pending(&mut self, scopes: &[Scope]) -> Result<(), ChunkError> {
        while let Some(atom) = self.pending.pop_front() {
            let Some(first) = self.current.first() else {
                self.estimate = atom.tokens;
                self.current.push(atom);
                continue;
            };
            let fits = self.estimate + 1 + atom.tokens <= self.counting.max_tokens;
            // Punctuation alone (the `}` that closes a split block) joins the chunk before it
            // rather than making a chunk of its own.
            let closer = !self.counting.text[atom.range.clone()]
                .chars()
                .any(char::is_alphanumeric);
            if first.scope != atom.scope && !(closer && fits) {
                self.flush(scopes)?;
            } else if !fits {
                // A chunk that would start inside a line starts at the last line start of the
                // current one instead, when there is one: a statement's head (`for x in xs:`)
                // stays with its statement.
                let at = atom.range.start;
                let text = self.counting.text;
                let inside_line = !begins_line(text, at);
                let line_start = self.current.iter().rposition(|a| begins_line(text, a.range.start));
                self.pending.push_front(atom);
                // Only worth it when the line's atoms then fit beside the new one.
                let worth = |cut: usize| {
                    estimate(&self.current[cut..]) + 1 + self.pending[0].tokens <= self.counting.max_tokens
                };
                match line_start {
                    Some(cut) if inside_line && cut > 0 && worth(cut) => {
                        for back in self.current.drain(cut..).rev() {
                            self.pending.push_front(back);
                        }
                        self.estimate = estimate(&self.current);
                        self.flush(scopes)?;
                    }
                    _ => self.flush(scopes)?,
                }
                continue;
            }
            self.estimate += atom.tokens + usize::from(!self.current.is_empty());
            self.current.push(atom);
        }
        Ok(())
    }

    /// Emits the current chunk, its count checked: atoms at its end that push it over the budget
    /// go back to be placed in the next chunk.
    fn flush(&mut self, scopes: &[Scope]) -> Result<(), ChunkError> {
        while let (Some(first), Some(last)) = (self.current.first(), self.current.last()) {
            let range = first.range.start..last.range.end;
            let tokens = match self.current.len() {
                1 => first.tokens,
                _ => self.counting.count(range.clone())?,
            };
            if tokens <= self.counting.max_tokens {
                let metadata = self.metadata(scopes);
                self.emitter.emit(range.clone(), tokens, None, metadata);
                self.counting.forget_before(range.end);
                self.current.clear();
                self.estimate = 0;
                return Ok(());
            }
            if let Some(atom) = self.current.pop() {
                self.estimate = self.estimate.saturating_sub(atom.tokens + 1);
                self.pending.push_front(atom);
            }
        }
        Ok(())
    }

    /// Emits every atom left.
    fn flush_all(&mut self, scopes: &[Scope]) -> Result<(), ChunkError> {
        loop {
            self.flush(scopes)?;
            if self.pending.is_empty() {
                return Ok(());
            }
            self.place_pending(scopes)?;
        }
    }

    /// The current chunk's `kind` and `heading_path`: whole definitions of one kind are of that
    /// kind (and one alone adds its title to the path); anything else takes the kind of its
    /// innermost enclosing definition, or is `code` outside any.
    fn metadata(&self, scopes: &[Scope]) -> serde_json::Map<String, serde_json::Value> {
        let scope = self.current.first().and_then(|atom| atom.scope);
        let mut path: Vec<&str> = Vec::new();
        let mut at = scope;
        while let Some(index) = at {
            if path.len() == MAX_PATH_DEPTH {
                break;
            }
            path.push(&scopes[index].title);
            at = scopes[index].parent;
        }
        path.reverse();
        let whole: Option<DefKind> = self
            .current
            .iter()
            .map(|atom| atom.def.as_ref().map(|(kind, _)| *kind))
            .reduce(|a, b| if a == b { a } else { None })
            .flatten();
        if let (
            [
                Atom {
                    def: Some((_, title)), ..
                },
            ],
            true,
        ) = (self.current.as_slice(), path.len() < MAX_PATH_DEPTH)
        {
            path.push(title);
        }
        let kind = match (whole, scope) {
            (Some(kind), _) => kind,
            (None, Some(index)) => scopes[index].kind,
            (None, None) => return ChunkKind::Code.metadata(None, path),
        };
        chunk_kind(kind).metadata(None, path)
    }
}

/// The atoms' counts summed, one token per gap between them added.
fn estimate(atoms: &[Atom]) -> usize {
    atoms
        .iter()
        .map(|atom| atom.tokens + 1)
        .sum::<usize>()
        .saturating_sub(1)
}

/// The chunk kind of what a definition defines.
fn chunk_kind(kind: DefKind) -> ChunkKind {
    match kind {
        DefKind::Function => ChunkKind::Function,
        DefKind::Class => ChunkKind::Class,
        DefKind::Namespace => ChunkKind::Code,
    }
}
