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

use html5ever::interface::{ElementFlags, NodeOrText, QuirksMode, TreeSink};
use html5ever::tendril::StrTendril;
use html5ever::tokenizer::{BufferQueue, Tokenizer, TokenizerOpts};
use html5ever::tree_builder::{TreeBuilder, TreeBuilderOpts};
use html5ever::{Attribute, QualName, TokenizerResult, local_name, ns};

/// A node of the arena: its index.
pub(crate) type NodeId = usize;

/// The document node.
pub(crate) const DOCUMENT: NodeId = 0;

/// One stretch of a text node and where it came from: `len` bytes of the node's text, from
/// `source` (offsets of the decoded source text).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Piece {
    pub(crate) len: usize,
    pub(crate) source: (usize, usize),
}

#[derive(Debug)]
pub(crate) enum NodeData {
    Document,
    Element {
        attrs: Vec<Attribute>,
    },
    Text {
        text: String,
        pieces: Vec<Piece>,
    },
    /// A comment, with its place in the decoded source.
    Comment {
        source: (usize, usize),
    },
    /// A doctype, a processing instruction, a template's contents.
    Other,
}

#[derive(Debug)]
pub(crate) struct Node {
    pub(crate) parent: Option<NodeId>,
    pub(crate) children: Vec<NodeId>,
    /// The element's name; an empty name for other nodes.
    pub(crate) name: QualName,
    pub(crate) data: NodeData,
    /// Elements between this node and the document.
    pub(crate) depth: usize,
}

impl Node {
    pub(crate) fn attr(&self, name: &str) -> Option<&str> {
        match &self.data {
            NodeData::Element { attrs } => attrs
                .iter()
                .find(|a| a.name.ns == ns!() && &*a.name.local == name)
                .map(|a| &*a.value),
            _ => None,
        }
    }

    /// The element's local name if it is an HTML element, else `""`.
    pub(crate) fn html_name(&self) -> &str {
        if matches!(self.data, NodeData::Element { .. }) && self.name.ns == ns!(html) {
            &self.name.local
        } else {
            ""
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

    fn new_node(&self, name: QualName, data: NodeData) -> NodeId {
        let mut nodes = self.nodes.borrow_mut();
        if nodes.len() >= self.max_nodes && self.overflow.get().is_none() {
            self.overflow.set(Some(Overflow::Nodes));
        }
        nodes.push(Node {
            parent: None,
            children: Vec::new(),
            name,
            data,
            depth: 0,
        });
        nodes.len() - 1
    }

    /// Detaches `child` from its parent, if it has one. The tree builder moves nodes it made
    /// recently, so the search runs from the last child: a page of a hundred thousand misnested
    /// tags stays linear.
    fn detach(&self, nodes: &mut [Node], child: NodeId) {
        if let Some(parent) = nodes[child].parent.take() {
            let children = &mut nodes[parent].children;
            if let Some(at) = self.find_child(children, child) {
                children.remove(at);
            }
        }
    }

    /// Where `child` is among `children`, searched from the end (and counted).
    fn find_child(&self, children: &[NodeId], child: NodeId) -> Option<usize> {
        let at = children.iter().rposition(|&c| c == child);
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
        if depth > self.max_depth && self.overflow.get().is_none() {
            self.overflow.set(Some(Overflow::Depth));
        }
    }

    /// Inserts text at `index` of `parent`'s children, merging it into a text node just before.
    fn insert_text(&self, parent: NodeId, index: usize, text: &str) {
        let source = self.source_of(text);
        let piece = Piece {
            len: text.len(),
            source,
        };
        {
            let mut nodes = self.nodes.borrow_mut();
            if let Some(&previous) = index.checked_sub(1).and_then(|i| nodes[parent].children.get(i))
                && let NodeData::Text { text: existing, pieces } = &mut nodes[previous].data
            {
                existing.push_str(text);
                match pieces.last_mut() {
                    // Characters the tokenizer emitted one by one from the same piece.
                    Some(last) if last.source == piece.source => last.len += piece.len,
                    _ => pieces.push(piece),
                }
                return;
            }
        }
        let node = self.new_node(
            QualName::new(None, ns!(), local_name!("")),
            NodeData::Text {
                text: text.to_owned(),
                pieces: vec![piece],
            },
        );
        let mut nodes = self.nodes.borrow_mut();
        nodes[node].parent = Some(parent);
        nodes[node].depth = nodes[parent].depth + 1;
        let index = index.min(nodes[parent].children.len());
        nodes[parent].children.insert(index, node);
    }

    fn insert_node(&self, parent: NodeId, index: Option<usize>, child: NodeId) {
        let mut nodes = self.nodes.borrow_mut();
        self.detach(&mut nodes, child);
        nodes[child].parent = Some(parent);
        let children = &mut nodes[parent].children;
        match index {
            Some(index) => children.insert(index.min(children.len()), child),
            None => children.push(child),
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
        Ref::map(self.nodes.borrow(), |nodes| &nodes[*target].name)
    }

    fn create_element(&self, name: QualName, attrs: Vec<Attribute>, flags: ElementFlags) -> NodeId {
        self.touched();
        let element = self.new_node(name, NodeData::Element { attrs });
        if flags.template {
            // The template's contents hang under it, so they are walked (and left out) with it.
            let contents = self.new_node(QualName::new(None, ns!(), local_name!("")), NodeData::Other);
            self.insert_node(element, None, contents);
        }
        element
    }

    fn create_comment(&self, _text: StrTendril) -> NodeId {
        let source = self.source_now();
        self.touched();
        self.new_node(
            QualName::new(None, ns!(), local_name!("")),
            NodeData::Comment { source },
        )
    }

    fn create_pi(&self, _target: StrTendril, _data: StrTendril) -> NodeId {
        self.touched();
        self.new_node(QualName::new(None, ns!(), local_name!("")), NodeData::Other)
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
        if self.nodes.borrow()[*element].parent.is_some() {
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
            .children
            .iter()
            .copied()
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
            nodes[*sibling].parent.and_then(|parent| {
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
                    match nodes[node].parent {
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
        if let NodeData::Element { attrs: existing } = &mut nodes[*target].data {
            for attr in attrs {
                if !existing.iter().any(|a| a.name == attr.name) {
                    existing.push(attr);
                }
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
            self.nodes.borrow_mut()[child].parent = None;
            self.insert_node(*new_parent, None, child);
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
        nodes: RefCell::new(vec![Node {
            parent: None,
            children: Vec::new(),
            name: QualName::new(None, ns!(), local_name!("")),
            data: NodeData::Document,
            depth: 0,
        }]),
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

    /// The text nodes of `html` in tree order, each with the source of each of its pieces.
    fn texts(html: &str) -> Vec<(String, Vec<&str>)> {
        let tree = build(html, 1000, 100).unwrap_or_else(|e| panic!("{e:?}"));
        let mut out = Vec::new();
        let mut stack = vec![DOCUMENT];
        while let Some(node) = stack.pop() {
            if let NodeData::Text { text, pieces } = &tree.nodes[node].data {
                out.push((
                    text.clone(),
                    pieces.iter().map(|p| &html[p.source.0..p.source.1]).collect(),
                ));
            }
            stack.extend(tree.nodes[node].children.iter().rev());
        }
        out
    }

    #[test]
    fn text_between_tags_maps_to_its_bytes() {
        assert_eq!(
            texts("<p>Hello <b>big</b> world</p>"),
            [
                ("Hello ".to_owned(), vec!["Hello "]),
                ("big".to_owned(), vec!["big"]),
                (" world".to_owned(), vec![" world"])
            ]
        );
    }

    #[test]
    fn character_references_map_to_the_reference() {
        let found = texts("<p>a &amp; b &#x3C;c&gt; &notit; &copy d</p>");
        assert_eq!(found.len(), 1);
        let (text, pieces) = &found[0];
        assert_eq!(text, "a & b <c> ¬it; © d");
        // A reference is emitted while the piece after it is fed: its piece reaches into that
        // one, and the pieces overlap there, but together they cover exactly the source.
        let source = "a &amp; b &#x3C;c&gt; &notit; &copy d";
        assert!(pieces.iter().all(|p| source.contains(p)), "{pieces:?}");
        assert!(pieces[0].starts_with("a ") && pieces.last().is_some_and(|p| p.ends_with('d')));
        assert!(pieces.contains(&"&#x3C;"), "{pieces:?}");
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
        for (text, pieces) in texts(html) {
            let joined = pieces.concat();
            assert!(joined.contains(text.trim()), "{text:?} from {joined:?}");
        }
    }
}
