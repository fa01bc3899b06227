//! The text rendition of a page's tree: Markdown-flavoured text, its blocks, the source of each
//! stretch of it, and what of the page it leaves out.

use rag_core::{Block, BlockType, HeadingLevel, Span};

use std::cell::OnceCell;

use super::chrome::{self, Chrome};
use super::role::{self, Role, flat_role, heading_level, is_flow, skipped_kind};
use super::style::{self, Shown};
use super::tree::{DOCUMENT, NodeData, NodeId, Tree};

mod output;

/// Line prefixes (list indentation, quote markers) stop growing past this many bytes: a page
/// nested a thousand lists deep must not make every line a thousand spaces long.
const MAX_PREFIX: usize = 32;

/// What the walk made of a page.
#[derive(Debug, Default)]
pub(crate) struct Rendered {
    pub(crate) text: String,
    /// Raw blocks over `text`, in order (to be finished).
    pub(crate) blocks: Vec<Block>,
    /// Stretches of `text` and the decoded-source range they came from, in text order.
    pub(crate) mapped: Vec<(Span, (usize, usize))>,
    /// Decoded-source ranges of what was left out, by kind.
    pub(crate) left_out: Vec<(&'static str, (usize, usize))>,
}

/// What to do when the walk leaves an element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Exit {
    Nothing,
    /// Close the open block (a flow element's end).
    Break,
    /// End the element of this role.
    End(Role),
}

enum Frame {
    Enter(NodeId),
    Exit(NodeId, Exit),
}

/// A context pushed by a container.
#[derive(Debug, Clone, Copy)]
enum Context {
    /// A list: its kind and the next item's number.
    List { ordered: bool, next: u64 },
    /// A list item: blocks inside it are list items too.
    Item,
    /// A data table's row: whether a cell was written, how many.
    Row { cells: usize, header: bool },
    /// A data table: whether the header row is written.
    Table { rows: usize },
    /// A block of a given type for text inside (captions).
    Typed(BlockType),
    /// A top-level quote (everything inside is one block) or a nested one.
    Quote,
    /// Preformatted text: written as it is.
    Pre,
    /// Flat: inside a table cell or a heading, everything is inline.
    Flat,
}

/// The block being written.
#[derive(Debug)]
struct Open {
    block_type: BlockType,
    level: Option<HeadingLevel>,
    /// The text's length before the block's separator: where to cut back to if it stays empty.
    before: usize,
    /// Where the block starts (its marker included).
    start: usize,
    /// Whether content was written (a block without any is removed).
    has_content: bool,
    /// The heading's title, without markers.
    title: String,
    serial: usize,
}

struct Marker {
    text: &'static str,
    /// The serial of the block its opening was written in, or `None` while it waits for content.
    written_in: Option<usize>,
}

struct Writer<'t> {
    tree: &'t Tree,
    chrome: &'t Chrome,
    out: Rendered,
    open: Option<Open>,
    serial: usize,
    contexts: Vec<Context>,
    prefix: String,
    /// Prefix lengths to restore, one per pushed prefix.
    prefixes: Vec<usize>,
    /// The start of the top-level quote being written, whose inner blocks are one block.
    quote: Option<(usize, usize)>,
    pending_space: bool,
    /// A line break (`br`, a paragraph inside a list item) waits for the next character.
    pending_break: bool,
    markers: Vec<Marker>,
    /// The block type of the last block closed, for tight separators.
    last_closed: Option<BlockType>,
    /// Whether hidden elements are walked like the others (`HtmlParser::keep_hidden`).
    keep_hidden: bool,
    /// The elements being walked whose inline style sets `visibility`, innermost last, and
    /// whether it shows them.
    visibility: Vec<(NodeId, bool)>,
    /// Per node: whether an element inside it sets `visibility: visible`, computed the first
    /// time an element sets `visibility: hidden`.
    visible_inside: OnceCell<Vec<bool>>,
}

/// Renders `tree`, leaving out `chrome`, and hidden elements unless `keep_hidden`.
pub(crate) fn render(tree: &Tree, chrome: &Chrome, keep_hidden: bool) -> Rendered {
    let mut writer = Writer {
        tree,
        chrome,
        out: Rendered::default(),
        open: None,
        serial: 0,
        contexts: Vec::new(),
        prefix: String::new(),
        prefixes: Vec::new(),
        quote: None,
        pending_space: false,
        pending_break: false,
        markers: Vec::new(),
        last_closed: None,
        keep_hidden,
        visibility: Vec::new(),
        visible_inside: OnceCell::new(),
    };
    writer.walk();
    writer.out
}

impl Writer<'_> {
    fn in_context(&self, wanted: impl Fn(&Context) -> bool) -> bool {
        self.contexts.iter().any(wanted)
    }

    fn flat(&self) -> bool {
        self.in_context(|c| matches!(c, Context::Flat))
    }

    fn raw(&self) -> bool {
        self.in_context(|c| matches!(c, Context::Pre))
    }

    /// Whether text now is hidden by a `visibility: hidden` around it.
    fn invisible(&self) -> bool {
        self.visibility.last().is_some_and(|&(_, visible)| !visible)
    }

    /// Whether an element inside `id` sets `visibility: visible`, and so is shown inside a hidden
    /// `id`.
    fn shows_inside(&self, id: NodeId) -> bool {
        let inside = self.visible_inside.get_or_init(|| {
            let nodes = &self.tree.nodes;
            let mut inside = vec![false; nodes.len()];
            for node in chrome::preorder(self.tree).into_iter().rev() {
                let shown =
                    inside[node] || (nodes[node].is_element() && style::shown(&nodes[node]).visible == Some(true));
                if shown && let Some(parent) = nodes[node].parent() {
                    inside[parent] = true;
                }
            }
            inside
        });
        inside.get(id).copied().unwrap_or(false)
    }

    fn role(&self, id: NodeId, shown: Shown) -> Role {
        let node = &self.tree.nodes[id];
        let name = node.html_name();
        if !node.is_element() {
            return Role::Inline;
        }
        if node.name().ns != html5ever::ns!(html) {
            // SVG and MathML: pictures and formulas, not prose.
            return Role::Skip("embedded");
        }
        if let Some(kind) = skipped_kind(name) {
            return Role::Skip(kind);
        }
        // An element hidden with all it holds is left out at once; one whose `visibility: hidden`
        // an element inside it overrides is walked, its own text left out.
        if shown.removed || (shown.visible == Some(false) && !self.shows_inside(id)) {
            return Role::Skip("hidden");
        }
        if self.chrome.is(id) || (name == "a" && self.chrome.drops_permalinks() && role::is_permalink(self.tree, id)) {
            return Role::Skip("chrome");
        }
        if self.raw() {
            return if name == "br" { Role::LineBreak } else { Role::Inline };
        }
        if self.flat() {
            return flat_role(name);
        }
        if let Some(level) = heading_level(name) {
            return if self.in_context(|c| matches!(c, Context::Item)) {
                Role::Flow
            } else {
                Role::Heading(level)
            };
        }
        self.block_role(id, name)
    }

    /// The role of an element outside flat and preformatted contexts, once it is known to be
    /// neither left out nor a heading: containers by the context they are in (a row only in a data
    /// table, a cell only in a row), inline elements by their marker.
    fn block_role(&self, id: NodeId, name: &str) -> Role {
        match name {
            "ul" | "menu" | "dir" => Role::List { ordered: false },
            "ol" => Role::List { ordered: true },
            "li" => Role::Item,
            "blockquote" => Role::Quote,
            "pre" | "listing" | "xmp" | "plaintext" => Role::Pre,
            "table" if !role::is_layout_table(self.tree, id) => Role::Table,
            "tr" if self.in_context(|c| matches!(c, Context::Table { .. })) => Role::Row,
            "td" | "th" if self.in_context(|c| matches!(c, Context::Row { .. })) => Role::Cell,
            "caption" | "figcaption" => Role::Typed(BlockType::Caption),
            "br" => Role::LineBreak,
            "code" | "kbd" | "samp" | "tt" => Role::Marked("`"),
            "strong" | "b" => Role::Marked("**"),
            "table" | "tr" | "td" | "th" => Role::Flow,
            _ if is_flow(name) => Role::Flow,
            _ => Role::Inline,
        }
    }

    fn walk(&mut self) {
        let mut stack = vec![Frame::Enter(DOCUMENT)];
        while let Some(frame) = stack.pop() {
            match frame {
                Frame::Enter(id) => {
                    if let Some(exit) = self.enter(id) {
                        stack.push(Frame::Exit(id, exit));
                        stack.extend(self.tree.nodes[id].children().rev().map(Frame::Enter));
                    }
                }
                Frame::Exit(id, exit) => self.exit(id, exit),
            }
        }
        self.close_block();
    }

    /// Enters `id`; `None` when its children are not to be walked.
    fn enter(&mut self, id: NodeId) -> Option<Exit> {
        match &self.tree.nodes[id].data {
            NodeData::Text { text, source } => {
                self.enter_text(id, text, *source);
                return None;
            }
            NodeData::Comment { source } => {
                self.out.left_out.push(("comment", *source));
                return None;
            }
            NodeData::Document => return Some(Exit::Nothing),
            NodeData::Other => return None,
            NodeData::Element { .. } => {}
        }
        let shown = if self.keep_hidden {
            Shown::default()
        } else {
            style::shown(&self.tree.nodes[id])
        };
        let role = self.role(id, shown);
        if let Some(visible) = shown.visible
            && !matches!(role, Role::Skip(_) | Role::LineBreak)
        {
            self.visibility.push((id, visible));
        }
        match role {
            Role::Skip(kind) => {
                self.leave_out(id, kind);
                return None;
            }
            Role::Inline => return Some(Exit::Nothing),
            Role::LineBreak => {
                self.line_break();
                return None;
            }
            Role::Flow => {
                self.flow_break();
                return Some(Exit::Break);
            }
            Role::Marked(marker) => self.open_marker(id, marker),
            Role::Heading(level) => self.open_heading(level),
            Role::List { ordered } => self.open_list(id, ordered),
            Role::Item => self.open_item(),
            Role::Quote => self.open_quote(),
            Role::Pre => self.open_pre(id),
            Role::Table => {
                self.close_block();
                self.contexts.push(Context::Table { rows: 0 });
            }
            Role::Row => self.open_row(),
            Role::Cell => self.open_cell(),
            Role::Typed(block_type) => {
                self.close_block();
                self.contexts.push(Context::Typed(block_type));
                self.contexts.push(Context::Flat);
            }
        }
        Some(Exit::End(role))
    }

    /// A text node, whose text comes from `source`: left out as chrome, or written as it is
    /// (preformatted) or as inline text.
    fn enter_text(&mut self, id: NodeId, text: &str, source: (usize, usize)) {
        if self.chrome.is(id) {
            self.out.left_out.push(("chrome", source));
        } else if self.invisible() {
            self.out.left_out.push(("hidden", source));
        } else if self.raw() {
            self.write_raw(text, source);
        } else {
            self.write_inline(text, source);
        }
    }

    /// A `br`: a line of preformatted text ends, a flat context gets a space, a block a line break.
    fn line_break(&mut self) {
        if self.raw() {
            self.write_raw("\n", (0, 0));
        } else if self.flat() {
            self.want_space();
        } else if self.has_content() {
            self.pending_break = true;
        }
    }

    /// An inline element wrapped in `marker`; inline code gets a marker longer than the longest
    /// run of backticks in it.
    fn open_marker(&mut self, id: NodeId, marker: &'static str) {
        let marker = if marker == "`" {
            match role::longest_backticks(self.tree, id) {
                0 => "`",
                1 => "``",
                _ => "```",
            }
        } else {
            marker
        };
        self.markers.push(Marker {
            text: marker,
            written_in: None,
        });
    }

    fn open_heading(&mut self, level: u8) {
        self.close_block();
        let marker = "#".repeat(usize::from(level));
        self.start_block(BlockType::Heading, HeadingLevel::new(level), &format!("{marker} "));
        self.contexts.push(Context::Flat);
    }

    /// A list: an ordered one numbers its items from its `start` attribute, else from 1.
    fn open_list(&mut self, id: NodeId, ordered: bool) {
        self.close_block();
        let start = if ordered {
            self.tree.nodes[id]
                .attr("start")
                .and_then(|s| s.trim().parse::<u64>().ok())
                .unwrap_or(1)
        } else {
            1
        };
        self.contexts.push(Context::List { ordered, next: start });
    }

    /// A list item: its marker is the next number of the nearest ordered list, else a bullet.
    fn open_item(&mut self) {
        self.close_block();
        let marker = match self
            .contexts
            .iter_mut()
            .rev()
            .find(|c| matches!(c, Context::List { .. }))
        {
            Some(Context::List { ordered: true, next }) => {
                let marker = format!("{next}. ");
                *next += 1;
                marker
            }
            _ => "- ".to_owned(),
        };
        self.start_block(BlockType::ListItem, None, &marker);
        self.contexts.push(Context::Item);
        self.push_prefix("  ");
    }

    fn open_quote(&mut self) {
        self.close_block();
        if self.quote.is_none() {
            // The whole quote is one block: it starts with its first line's marker.
            let before = self.out.text.len();
            self.separate(BlockType::Quote);
            self.quote = Some((before, self.out.text.len()));
        }
        self.contexts.push(Context::Quote);
        self.push_prefix("> ");
    }

    /// Preformatted text: a code block fenced with more backticks than it holds in a row, with
    /// the language the page names for it.
    fn open_pre(&mut self, id: NodeId) {
        self.close_block();
        let fence = "`".repeat((role::longest_backticks(self.tree, id) + 1).max(3));
        let language = role::language(self.tree, id);
        self.start_block(BlockType::Code, None, &format!("{fence}{language}"));
        // The fence line is content: a code block of only a fence still shows it was code.
        self.out.text.push('\n');
        self.out.text.push_str(&self.prefix);
        self.contexts.push(Context::Pre);
    }

    /// A row of a data table; the table's first row is its header.
    fn open_row(&mut self) {
        self.close_block();
        let header = matches!(self.contexts.last(), Some(Context::Table { rows: 0 }));
        self.start_block(BlockType::TableRow, None, "|");
        self.mark_content();
        self.contexts.push(Context::Row { cells: 0, header });
    }

    fn open_cell(&mut self) {
        if let Some(Context::Row { cells, .. }) = self.contexts.last_mut() {
            *cells += 1;
        }
        self.out.text.push(' ');
        self.pending_space = false;
        self.contexts.push(Context::Flat);
    }

    fn exit(&mut self, id: NodeId, exit: Exit) {
        if self.visibility.last().is_some_and(|&(node, _)| node == id) {
            self.visibility.pop();
        }
        let role = match exit {
            Exit::Nothing => return,
            Exit::Break => {
                self.flow_break();
                return;
            }
            Exit::End(role) => role,
        };
        match role {
            Role::Marked(_) => self.close_marker(),
            Role::Heading(_) => {
                self.contexts.pop();
                self.close_block();
            }
            Role::List { .. } | Role::Table => {
                self.close_block();
                self.contexts.pop();
            }
            Role::Item => {
                self.close_block();
                self.pop_prefix();
                self.contexts.pop();
            }
            Role::Quote => self.close_quote(),
            Role::Pre => self.close_pre(),
            Role::Row => self.close_row(),
            Role::Cell => {
                self.contexts.pop();
                self.out.text.push_str(" |");
                self.pending_space = false;
            }
            Role::Typed(_) => {
                self.contexts.pop();
                self.contexts.pop();
                self.close_block();
            }
            Role::Skip(_) | Role::Inline | Role::LineBreak | Role::Flow => {}
        }
    }

    /// The end of an inline marker: written when its opening was written in the open block.
    fn close_marker(&mut self) {
        if let Some(marker) = self.markers.pop()
            && marker.written_in.is_some()
            && marker.written_in == self.open.as_ref().map(|o| o.serial)
        {
            self.out.text.push_str(marker.text);
        }
    }

    /// The end of a quote; the end of the outermost one writes the whole quote as one block, or
    /// removes it when it holds nothing but its markers.
    fn close_quote(&mut self) {
        self.close_block();
        self.pop_prefix();
        self.contexts.pop();
        if !self.in_context(|c| matches!(c, Context::Quote))
            && let Some((before, start)) = self.quote.take()
        {
            let end = self.out.text.len();
            if self.out.text[start..end]
                .trim_start_matches(['>', ' ', '\n'])
                .is_empty()
            {
                self.out.text.truncate(before);
            } else {
                self.out
                    .blocks
                    .push(Block::new(BlockType::Quote, Span::new(start, end)));
                self.last_closed = Some(BlockType::Quote);
            }
        }
    }

    /// The end of preformatted text: the closing fence, as long as the opening one.
    fn close_pre(&mut self) {
        self.contexts.pop();
        let line_end = format!("\n{}", self.prefix);
        if self.out.text.ends_with(&line_end) {
            // The line break before `</pre>` ends the last line; the fence follows it.
            let cut = self.out.text.len() - line_end.len();
            self.out.text.truncate(cut);
            self.trim_mapped(cut);
        }
        let fence = self.open.as_ref().map_or(String::new(), |open| {
            self.out.text[open.start..].chars().take_while(|&c| c == '`').collect()
        });
        self.out.text.push('\n');
        self.out.text.push_str(&self.prefix);
        self.out.text.push_str(&fence);
        self.close_block();
    }

    /// The end of a table row: an empty row still gets a cell, the header row its delimiter row.
    fn close_row(&mut self) {
        let (cells, header) = match self.contexts.pop() {
            Some(Context::Row { cells, header }) => (cells, header),
            _ => (0, false),
        };
        if cells == 0 {
            self.out.text.push_str(" |");
        }
        if header {
            self.out.text.push('\n');
            self.out.text.push_str(&self.prefix);
            self.out.text.push('|');
            for _ in 0..cells.max(1) {
                self.out.text.push_str(" --- |");
            }
        }
        self.close_block();
        if let Some(Context::Table { rows }) = self.contexts.last_mut() {
            *rows += 1;
        }
    }

    /// Counts the subtree of `id` as left out under `kind`: its text, and its comments (scripts and
    /// styles inside it count as what they are).
    fn leave_out(&mut self, id: NodeId, kind: &'static str) {
        let mut stack = vec![(id, kind)];
        while let Some((node, kind)) = stack.pop() {
            let node = &self.tree.nodes[node];
            let kind = match node.html_name() {
                "script" | "noscript" => "script",
                "style" => "style",
                _ => kind,
            };
            match &node.data {
                NodeData::Text { source, .. } => self.out.left_out.push((kind, *source)),
                NodeData::Comment { source } => self.out.left_out.push(("comment", *source)),
                _ => {}
            }
            stack.extend(node.children().map(|c| (c, kind)));
        }
    }
}
