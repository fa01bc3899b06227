//! The document tree html5ever builds, in an arena, with the place in the source of every text
//! node's pieces.
//!
//! html5ever reports no offsets, so the source is fed to its tokenizer in pieces cut around every
//! `<`, `>`, `&` and `;`: text between two tags is one piece, a character reference is fed as
//! `&`, its name, `;`. The tokenizer emits the characters of a piece while the piece is fed, and
//! the tree builder appends them to the tree at once, so the text a [`TreeSink::append`] call
//! brings comes from the pieces fed since the previous call of the sink or the previous `>`:
//! from the start of the first of them to the end of the current one. That is exact for text between tags and for
//! character references, and never narrower than the text's source where the tree builder holds
//! text back (table text, which it flushes at the next tag).

use std::borrow::Cow;
use std::cell::{Cell, Ref, RefCell};
use std::collections::HashSet;

use html5ever::interface::{ElementFlags, NodeOrText, QuirksMode, TreeSink};
use html5ever::tendril::StrTendril;
use html5ever::tokenizer::{BufferQueue, Tokenizer, TokenizerOpts};
use html5ever::tree_builder::{TreeBuilder, TreeBuilderOpts};
use html5ever::{Attribute, QualName, TokenizerResult, local_name, ns};

/// A node of the arena: its index.
pub(crate) type NodeId = usize;

/// The document node.
pub(crate) const DOCUMENT: NodeId = 0;

#[derive(Debug)]
pub(crate) enum NodeData {
    Document,
    Element {
        name: QualName,
        attrs: Vec<Attribute>,
    },
    /// A text node: its text, and where it came from in the decoded source: from the start of
    /// the first stretch appended to it to the end of the last (the markup between stretches
    /// the tree builder merged, foster-parented table text, included).
    Text {
        text: String,
        source: (usize, usize),
    },
    /// A comment, with its place in the decoded source.
    Comment {
        source: (usize, usize),
    },
    /// A doctype, a processing instruction, a template's contents.
    Other,
}

/// What [`Sink::elem_name`] gives for a node that is not an element.
static NO_NAME: QualName = QualName {
    prefix: None,
    ns: ns!(),
    local: local_name!(""),
};

/// No parent.
const ROOT: u32 = u32::MAX;

/// A node of the arena. Indices are stored as `u32` (the node limit is far below) and the name
/// only on elements: a page can hold millions of nodes, and their size is most of its memory.
#[derive(Debug)]
pub(crate) struct Node {
    parent: u32,
    /// Elements between this node and the document.
    depth: u32,
    children: Vec<u32>,
    pub(crate) data: NodeData,
}

impl Node {
    fn new(data: NodeData) -> Self {
        Self {
            parent: ROOT,
            depth: 0,
            children: Vec::new(),
            data,
        }
    }

    pub(crate) fn parent(&self) -> Option<NodeId> {
        (self.parent != ROOT).then_some(self.parent as NodeId)
    }

    /// The children, in order.
    pub(crate) fn children(&self) -> impl DoubleEndedIterator<Item = NodeId> + ExactSizeIterator + '_ {
        self.children.iter().map(|&child| child as NodeId)
    }

    pub(crate) fn attr(&self, name: &str) -> Option<&str> {
        match &self.data {
            NodeData::Element { attrs, .. } => attrs
                .iter()
                .find(|a| a.name.ns == ns!() && &*a.name.local == name)
                .map(|a| &*a.value),
            _ => None,
        }
    }

    /// The element's name; an empty name for other nodes.
    pub(crate) fn name(&self) -> &QualName {
        match &self.data {
            NodeData::Element { name, .. } => name,
            _ => &NO_NAME,
        }
    }

    /// The element's local name if it is an HTML element, else `""`.
    pub(crate) fn html_name(&self) -> &str {
        match &self.data {
            NodeData::Element { name, .. } if name.ns == ns!(html) => &name.local,
            _ => "",
        }
    }

    pub(crate) fn is_element(&self) -> bool {
        matches!(self.data, NodeData::Element { .. })
    }
}

/// The tree of a parsed page.
#[derive(Debug)]
pub(crate) struct Tree {
    pub(crate) nodes: Vec<Node>,
    /// Children examined to find a node among its siblings, all moves together: the tests hold
    /// it linear in the size of the page.
    #[cfg_attr(not(test), expect(dead_code, reason = "the tests count the work"))]
    pub(crate) sibling_steps: usize,
}

/// Why tree building stopped early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Overflow {
    /// More nodes than the limit.
    Nodes,
    /// An element nested deeper than the limit.
    Depth,
}

/// The sink html5ever builds into: the arena, and where the feed is.
struct Sink<'s> {
    /// The decoded source.
    source: &'s str,
    nodes: RefCell<Vec<Node>>,
    /// Start of the first piece fed since the sink was last called.
    pending_start: Cell<usize>,
    /// Whether the sink was called while the current piece was fed.
    called_in_piece: Cell<bool>,
    /// The current piece.
    piece: Cell<(usize, usize)>,
    /// Where in the current piece the text appended so far ends.
    piece_cursor: Cell<usize>,
    max_nodes: usize,
    max_depth: usize,
    overflow: Cell<Option<Overflow>>,
    sibling_steps: Cell<usize>,
    /// The attribute names of the elements later tags added attributes to (see
    /// [`TreeSink::add_attrs_if_missing`]).
    merged_names: RefCell<Vec<(NodeId, HashSet<QualName>)>>,
}

impl Sink<'_> {
    /// Where `text`, appended now, came from: where it stands in the current piece after the
    /// text appended from it already (two text nodes can come from one piece: white space in the
    /// head and text the tree builder moves to the body), else from the pending pieces.
    fn source_of(&self, text: &str) -> (usize, usize) {
        let (_, end) = self.piece.get();
        let cursor = self.piece_cursor.get();
        if !text.is_empty()
            && !self.piece_is_lookahead()
            && let Some(found) = self.source.get(cursor..end).and_then(|piece| piece.find(text))
        {
            let start = cursor + found;
            self.piece_cursor.set(start + text.len());
            return (start, start + text.len());
        }
        self.source_now()
    }

    /// Where what the tokenizer emits now came from.
    fn source_now(&self) -> (usize, usize) {
        let (start, end) = self.piece.get();
        let from = if self.called_in_piece.get() {
            start
        } else {
            self.pending_start.get()
        };
        if self.piece_is_lookahead() && from < start {
            return (from, start);
        }
        (from.min(start), end)
    }

    /// Whether the current piece is a lone `<` or `&`: never text while it is fed, since the
    /// tokenizer must see the character after it to know what it opens. What the tokenizer emits
    /// while it is fed (a named character reference it finished by looking at this character, a
    /// `<` or `&` before it that opened nothing, and what it read after that) came from the
    /// pending pieces before it.
    fn piece_is_lookahead(&self) -> bool {
        let (start, end) = self.piece.get();
        end == start + 1 && matches!(self.source.as_bytes().get(start), Some(b'<' | b'&'))
    }

    fn touched(&self) {
        // What is emitted while a lookahead piece is fed comes from the pieces before it, which
        // stay pending: the tokenizer may emit them in several calls (a `&` that opened nothing,
        // then the name it read after it), and each call is given all of them.
        if !self.piece_is_lookahead() {
            self.called_in_piece.set(true);
        }
    }

    fn new_node(&self, data: NodeData) -> NodeId {
        let mut nodes = self.nodes.borrow_mut();
        if nodes.len() >= self.max_nodes && self.overflow.get().is_none() {
            self.overflow.set(Some(Overflow::Nodes));
        }
        nodes.push(Node::new(data));
        nodes.len() - 1
    }

    /// Detaches `child` from its parent, if it has one. The tree builder moves nodes it made
    /// recently, so the search runs from the last child: a page of a hundred thousand misnested
    /// tags stays linear.
    fn detach(&self, nodes: &mut [Node], child: NodeId) {
        if let Some(parent) = nodes[child].parent() {
            nodes[child].parent = ROOT;
            let children = &mut nodes[parent].children;
            if let Some(at) = self.find_child(children, child) {
                children.remove(at);
            }
        }
    }

    /// Where `child` is among `children`, searched from the end (and counted).
    fn find_child(&self, children: &[u32], child: NodeId) -> Option<usize> {
        let at = children.iter().rposition(|&c| c as NodeId == child);
        let steps = at.map_or(children.len(), |at| children.len() - at);
        self.sibling_steps.set(self.sibling_steps.get() + steps);
        at
    }

    /// Sets the depth of `child` under `parent`. A subtree the tree builder moves keeps the
    /// depths of its descendants: the depth only bounds how deep the tree builder's stack of open
    /// elements grows, and moving a subtree does not grow it.
    fn set_depth(&self, nodes: &mut [Node], child: NodeId, parent: NodeId) {
        let depth = nodes[parent].depth + 1;
        nodes[child].depth = depth;
        if depth as usize > self.max_depth && self.overflow.get().is_none() {
            self.overflow.set(Some(Overflow::Depth));
        }
    }

    /// Inserts text at `index` of `parent`'s children, merging it into a text node just before.
    fn insert_text(&self, parent: NodeId, index: usize, text: &str) {
        let source = self.source_of(text);
        {
            let mut nodes = self.nodes.borrow_mut();
            if let Some(&previous) = index.checked_sub(1).and_then(|i| nodes[parent].children.get(i))
                && let NodeData::Text {
                    text: existing,
                    source: (_, end),
                } = &mut nodes[previous as NodeId].data
            {
                // One range per node, however many stretches it is made of: a page of ten
                // million `a;` is one text node of ten million stretches.
                existing.push_str(text);
                *end = (*end).max(source.1);
                return;
            }
        }
        let node = self.new_node(NodeData::Text {
            text: text.to_owned(),
            source,
        });
        let mut nodes = self.nodes.borrow_mut();
        nodes[node].parent = parent as u32;
        nodes[node].depth = nodes[parent].depth + 1;
        let index = index.min(nodes[parent].children.len());
        nodes[parent].children.insert(index, node as u32);
    }

    fn insert_node(&self, parent: NodeId, index: Option<usize>, child: NodeId) {
        let mut nodes = self.nodes.borrow_mut();
        self.detach(&mut nodes, child);
        nodes[child].parent = parent as u32;
        let children = &mut nodes[parent].children;
        match index {
            Some(index) => children.insert(index.min(children.len()), child as u32),
            None => children.push(child as u32),
        }
        self.set_depth(&mut nodes, child, parent);
    }
}

impl<'s> TreeSink for Sink<'s> {
    type Handle = NodeId;
    type Output = Tree;
    type ElemName<'a>
        = Ref<'a, QualName>
    where
        Self: 'a;

    fn finish(self) -> Tree {
        Tree {
            nodes: self.nodes.into_inner(),
            sibling_steps: self.sibling_steps.get(),
        }
    }

    fn parse_error(&self, _msg: Cow<'static, str>) {}

    fn get_document(&self) -> NodeId {
        DOCUMENT
    }

    fn elem_name<'a>(&'a self, target: &'a NodeId) -> Ref<'a, QualName> {
        Ref::map(self.nodes.borrow(), |nodes| nodes[*target].name())
    }

    fn create_element(&self, name: QualName, attrs: Vec<Attribute>, flags: ElementFlags) -> NodeId {
        self.touched();
        let element = self.new_node(NodeData::Element { name, attrs });
        if flags.template {
            // The template's contents hang under it, so they are walked (and left out) with it.
            let contents = self.new_node(NodeData::Other);
            self.insert_node(element, None, contents);
        }
        element
    }

    fn create_comment(&self, _text: StrTendril) -> NodeId {
        let source = self.source_now();
        self.touched();
        self.new_node(NodeData::Comment { source })
    }

    fn create_pi(&self, _target: StrTendril, _data: StrTendril) -> NodeId {
        self.touched();
        self.new_node(NodeData::Other)
    }

    fn append(&self, parent: &NodeId, child: NodeOrText<NodeId>) {
        match child {
            NodeOrText::AppendText(text) => {
                let index = self.nodes.borrow()[*parent].children.len();
                self.insert_text(*parent, index, &text);
            }
            NodeOrText::AppendNode(node) => self.insert_node(*parent, None, node),
        }
        self.touched();
    }

    fn append_based_on_parent_node(&self, element: &NodeId, prev_element: &NodeId, child: NodeOrText<NodeId>) {
        if self.nodes.borrow()[*element].parent().is_some() {
            self.append_before_sibling(element, child);
        } else {
            self.append(prev_element, child);
        }
    }

    fn append_doctype_to_document(&self, _name: StrTendril, _public_id: StrTendril, _system_id: StrTendril) {
        self.touched();
    }

    fn get_template_contents(&self, target: &NodeId) -> NodeId {
        let nodes = self.nodes.borrow();
        nodes[*target]
            .children()
            .find(|&c| matches!(nodes[c].data, NodeData::Other))
            .unwrap_or(*target)
    }

    fn same_node(&self, x: &NodeId, y: &NodeId) -> bool {
        x == y
    }

    fn set_quirks_mode(&self, _mode: QuirksMode) {}

    fn append_before_sibling(&self, sibling: &NodeId, new_node: NodeOrText<NodeId>) {
        let Some((parent, index)) = ({
            let nodes = self.nodes.borrow();
            nodes[*sibling].parent().and_then(|parent| {
                // From the end: the sibling is most often the table text is fostered before,
                // the last child so far.
                self.find_child(&nodes[parent].children, *sibling)
                    .map(|index| (parent, index))
            })
        }) else {
            return;
        };
        match new_node {
            NodeOrText::AppendText(text) => self.insert_text(parent, index, &text),
            NodeOrText::AppendNode(node) => {
                // The node may sit before `sibling` under the same parent already.
                let index = {
                    let nodes = self.nodes.borrow();
                    match nodes[node].parent() {
                        Some(old) if old == parent => self
                            .find_child(&nodes[parent].children, node)
                            .map_or(index, |at| if at < index { index - 1 } else { index }),
                        _ => index,
                    }
                };
                self.insert_node(parent, Some(index), node);
            }
        }
        self.touched();
    }

    fn add_attrs_if_missing(&self, target: &NodeId, attrs: Vec<Attribute>) {
        let mut nodes = self.nodes.borrow_mut();
        let NodeData::Element { attrs: existing, .. } = &mut nodes[*target].data else {
            return;
        };
        // The names an element holds, kept for the elements this is called on (`html` and
        // `body`, for each later `<html>` or `<body>` tag): a search of the element's attributes
        // per attribute added would be quadratic in the number of such tags.
        let mut merged = self.merged_names.borrow_mut();
        let names = match merged.iter().position(|(id, _)| id == target) {
            Some(at) => &mut merged[at].1,
            None => {
                merged.push((*target, existing.iter().map(|a| a.name.clone()).collect()));
                let last = merged.len() - 1;
                &mut merged[last].1
            }
        };
        for attr in attrs {
            if names.insert(attr.name.clone()) {
                existing.push(attr);
            }
        }
    }

    fn remove_from_parent(&self, target: &NodeId) {
        self.detach(&mut self.nodes.borrow_mut(), *target);
        self.touched();
    }

    fn reparent_children(&self, node: &NodeId, new_parent: &NodeId) {
        let children = std::mem::take(&mut self.nodes.borrow_mut()[*node].children);
        for child in children {
            self.nodes.borrow_mut()[child as NodeId].parent = ROOT;
            self.insert_node(*new_parent, None, child as NodeId);
        }
        self.touched();
    }
}

/// Where `text` is cut into pieces: around `<`, `>`, `&` and `;`.
fn is_cut(byte: u8) -> bool {
    matches!(byte, b'<' | b'>' | b'&' | b';')
}

/// Builds the tree of `text` (decoded HTML), or says which limit it overflowed.
pub(crate) fn build(text: &str, max_nodes: usize, max_depth: usize) -> Result<Tree, Overflow> {
    let sink = Sink {
        source: text,
        nodes: RefCell::new(vec![Node::new(NodeData::Document)]),
        merged_names: RefCell::new(Vec::new()),
        pending_start: Cell::new(0),
        called_in_piece: Cell::new(false),
        piece: Cell::new((0, 0)),
        piece_cursor: Cell::new(0),
        max_nodes,
        max_depth,
        overflow: Cell::new(None),
        sibling_steps: Cell::new(0),
    };
    // Scripting off: `<noscript>` content is a tree (that is left out), not one text node.
    let builder = TreeBuilder::new(
        sink,
        TreeBuilderOpts {
            scripting_enabled: false,
            ..TreeBuilderOpts::default()
        },
    );
    let tokenizer = Tokenizer::new(
        builder,
        TokenizerOpts {
            // The decoder dropped the byte-order mark already; a U+FEFF now is text.
            discard_bom: false,
            ..TokenizerOpts::default()
        },
    );
    let input = BufferQueue::default();
    let bytes = text.as_bytes();
    let mut start = 0;
    // Whether the previous piece was a `>`: a tag ended there, whether or not the tree builder
    // told the sink (it pops many elements without a call).
    let mut after_tag = false;
    while start < bytes.len() {
        // A cut byte is a piece of its own; other text runs to the next cut byte.
        let end = if is_cut(bytes[start]) {
            start + 1
        } else {
            bytes[start..]
                .iter()
                .position(|&b| is_cut(b))
                .map_or(bytes.len(), |p| start + p)
        };
        let sink = &tokenizer.sink.sink;
        if sink.called_in_piece.replace(false) || after_tag {
            sink.pending_start.set(start);
        }
        after_tag = bytes[start] == b'>';
        sink.piece.set((start, end));
        sink.piece_cursor.set(start);
        input.push_back(StrTendril::from_slice(&text[start..end]));
        while !matches!(tokenizer.feed(&input), TokenizerResult::Done) {}
        if let Some(overflow) = sink.overflow.get() {
            return Err(overflow);
        }
        start = end;
    }
    let sink = &tokenizer.sink.sink;
    if sink.called_in_piece.replace(false) {
        sink.pending_start.set(bytes.len());
    }
    sink.piece.set((bytes.len(), bytes.len()));
    sink.piece_cursor.set(bytes.len());
    tokenizer.end();
    if let Some(overflow) = tokenizer.sink.sink.overflow.get() {
        return Err(overflow);
    }
    Ok(tokenizer.sink.sink.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text nodes of `html` in tree order, each with its source.
    fn texts(html: &str) -> Vec<(String, &str)> {
        let tree = build(html, 1000, 100).unwrap_or_else(|e| panic!("{e:?}"));
        let mut out = Vec::new();
        let mut stack = vec![DOCUMENT];
        while let Some(node) = stack.pop() {
            if let NodeData::Text { text, source } = &tree.nodes[node].data {
                out.push((text.clone(), &html[source.0..source.1]));
            }
            stack.extend(tree.nodes[node].children().rev());
        }
        out
    }

    #[test]
    fn text_between_tags_maps_to_its_bytes() {
        assert_eq!(
            texts("<p>Hello <b>big</b> world</p>"),
            [
                ("Hello ".to_owned(), "Hello "),
                ("big".to_owned(), "big"),
                (" world".to_owned(), " world")
            ]
        );
    }

    #[test]
    fn character_references_map_to_the_reference() {
        let found = texts("<p>a &amp; b &#x3C;c&gt; &notit; &copy d</p>");
        assert_eq!(
            found,
            [("a & b <c> ¬it; © d".to_owned(), "a &amp; b &#x3C;c&gt; &notit; &copy d")]
        );
    }

    #[test]
    fn a_text_of_millions_of_stretches_is_one_range() {
        // The tokenizer emits `a` and `;` apart, each a stretch of its own.
        let html = format!("<p>{}</p>", "a;".repeat(10_000));
        let found = texts(&html);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].1, "a;".repeat(10_000));
    }

    #[test]
    fn later_html_and_body_tags_add_only_the_attributes_missing() {
        let tree = build("<body a=1><p>x</p><body b a=2><body c b>", 1000, 100).unwrap_or_else(|e| panic!("{e:?}"));
        let body = tree
            .nodes
            .iter()
            .find(|n| n.html_name() == "body")
            .unwrap_or_else(|| panic!("no body"));
        let NodeData::Element { attrs, .. } = &body.data else {
            panic!("not an element")
        };
        let attrs: Vec<(&str, &str)> = attrs.iter().map(|a| (&*a.name.local, &*a.value)).collect();
        assert_eq!(attrs, [("a", "1"), ("b", ""), ("c", "")]);
    }

    #[test]
    fn limits_stop_the_build() {
        let deep = "<div>".repeat(200);
        assert_eq!(build(&deep, 10_000, 100).err(), Some(Overflow::Depth));
        let many = "<i></i>".repeat(200);
        assert_eq!(build(&many, 100, 100).err(), Some(Overflow::Nodes));
        assert!(build(&many, 1000, 100).is_ok());
    }

    #[test]
    fn fostering_and_misnesting_cost_work_linear_in_the_page() {
        // Every fostered element is inserted before the table, the last child of the body;
        // misnested formatting makes the tree builder move nodes between parents.
        for unit in ["<i>x</i>", "<b>1<p>2</b>3</p>", "<a>1<div>2</a>3</div>"] {
            let page = format!("<table>{}", unit.repeat(4000));
            let tree = build(&page, 1_000_000, 512).unwrap_or_else(|e| panic!("{e:?}"));
            assert!(tree.sibling_steps <= 8 * 4000, "{unit}: {} steps", tree.sibling_steps);
        }
    }

    #[test]
    fn foster_parented_and_misnested_text_keeps_its_source() {
        let html = "<table>lost<tr><td>cell</td></tr></table><b>1<p>2</b>3</p>";
        for (text, source) in texts(html) {
            assert!(source.contains(text.trim()), "{text:?} from {source:?}");
        }
    }
}
