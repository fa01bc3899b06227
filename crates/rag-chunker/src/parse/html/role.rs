//! What an element is to the rendition, by its name, its attributes and what it holds: its role
//! in the walk (a heading, a list, a row, inline code, left out), whether a table is for layout,
//! whether a link is a heading's permalink, and the language a code block names.

use rag_core::BlockType;

use super::tree::{NodeData, NodeId, Tree};

/// How an element is walked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    /// Left out, counted under this kind.
    Skip(&'static str),
    Heading(u8),
    /// Breaks the flow: what follows starts a new block (`p`, `div`, `section`, ...).
    Flow,
    List {
        ordered: bool,
    },
    Item,
    Quote,
    Pre,
    Table,
    Row,
    Cell,
    /// A block of this type (`figcaption`, a table's `caption`).
    Typed(BlockType),
    LineBreak,
    /// Inline, wrapped in this marker (`` ` `` for code, `**` for strong).
    Marked(&'static str),
    Inline,
}

pub(super) fn heading_level(name: &str) -> Option<u8> {
    match name {
        "h1" => Some(1),
        "h2" => Some(2),
        "h3" => Some(3),
        "h4" => Some(4),
        "h5" => Some(5),
        "h6" => Some(6),
        _ => None,
    }
}

pub(super) fn is_flow(name: &str) -> bool {
    matches!(
        name,
        "address"
            | "article"
            | "aside"
            | "body"
            | "center"
            | "dd"
            | "details"
            | "dialog"
            | "dir"
            | "div"
            | "dl"
            | "dt"
            | "fieldset"
            | "figure"
            | "footer"
            | "form"
            | "header"
            | "hgroup"
            | "hr"
            | "html"
            | "legend"
            | "main"
            | "menu"
            | "nav"
            | "p"
            | "search"
            | "section"
            | "summary"
            | "tbody"
            | "thead"
            | "tfoot"
    )
}

/// The kind an HTML element is left out as, by its name alone: scripts, styles, templates, the
/// head, embedded content and form controls.
pub(super) fn skipped_kind(name: &str) -> Option<&'static str> {
    match name {
        "script" | "noscript" => Some("script"),
        "style" => Some("style"),
        "template" => Some("template"),
        "head" => Some("head"),
        "iframe" | "object" | "embed" | "canvas" | "video" | "audio" | "map" | "frameset" => Some("embedded"),
        "button" | "select" | "textarea" | "datalist" | "input" | "option" | "optgroup" => Some("form"),
        _ => None,
    }
}

/// The role of an element inside a flat context (a table cell, a heading): line breaks and inline
/// markers stay, every block element only breaks the flow.
pub(super) fn flat_role(name: &str) -> Role {
    match name {
        "br" => Role::LineBreak,
        "code" | "kbd" | "samp" | "tt" => Role::Marked("`"),
        "strong" | "b" => Role::Marked("**"),
        _ if is_flow(name)
            || heading_level(name).is_some()
            || matches!(
                name,
                "li" | "ul" | "ol" | "pre" | "table" | "tr" | "td" | "th" | "blockquote" | "caption" | "figcaption"
            ) =>
        {
            Role::Flow
        }
        _ => Role::Inline,
    }
}

/// A heading's permalink: a link to a fragment whose text is a sign (`#`, `¶`, `§`, `🔗`).
pub(super) fn is_permalink(tree: &Tree, id: NodeId) -> bool {
    let node = &tree.nodes[id];
    if !node.attr("href").is_some_and(|h| h.starts_with('#')) {
        return false;
    }
    let text = subtree_text(tree, id, 16);
    let text = text.trim();
    !text.is_empty() && text.chars().count() <= 2 && !text.chars().any(char::is_alphanumeric)
}

/// A table used for layout: one whose cells hold blocks (lists, code, other tables,
/// headings, several paragraphs) is walked as flow, not written as Markdown rows.
pub(super) fn is_layout_table(tree: &Tree, id: NodeId) -> bool {
    let mut stack: Vec<NodeId> = tree.nodes[id].children().collect();
    let mut paragraphs = 0;
    while let Some(node) = stack.pop() {
        let name = tree.nodes[node].html_name();
        match name {
            "table" | "pre" | "ul" | "ol" | "dl" | "blockquote" | "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => {
                return true;
            }
            "p" | "div" => {
                paragraphs += 1;
                if paragraphs > 1 {
                    return true;
                }
            }
            _ => {}
        }
        if name == "td" || name == "th" {
            paragraphs = 0;
        }
        stack.extend(tree.nodes[node].children());
    }
    false
}

/// Up to `limit` bytes of the text of `id`'s subtree.
fn subtree_text(tree: &Tree, id: NodeId, limit: usize) -> String {
    let mut out = String::new();
    let mut stack = vec![id];
    while let Some(node) = stack.pop() {
        if out.len() > limit {
            break;
        }
        if let NodeData::Text { text, .. } = &tree.nodes[node].data {
            out.push_str(text);
        }
        stack.extend(tree.nodes[node].children().rev());
    }
    out
}

/// The longest run of backticks in the text of `id`'s subtree.
pub(super) fn longest_backticks(tree: &Tree, id: NodeId) -> usize {
    let mut longest = 0;
    let mut stack = vec![id];
    while let Some(node) = stack.pop() {
        if let NodeData::Text { text, .. } = &tree.nodes[node].data {
            let mut run = 0;
            for c in text.chars() {
                run = if c == '`' { run + 1 } else { 0 };
                longest = longest.max(run);
            }
        }
        stack.extend(tree.nodes[node].children());
    }
    longest
}

/// The language a `pre` names for its code: a `data-lang` attribute, or a class of the `pre`,
/// its `code` child or the two elements around it, as generators write them: `language-X`
/// and `lang-X` (CommonMark, highlight.js, Prism), `highlight-X` and `highlight-source-X`
/// (Sphinx, GitHub), `sourceCode X` (pandoc), `code X` (docutils).
pub(super) fn language(tree: &Tree, id: NodeId) -> String {
    let nodes = &tree.nodes;
    let mut candidates = vec![id];
    candidates.extend(nodes[id].children().filter(|&c| nodes[c].html_name() == "code"));
    let parent = nodes[id].parent();
    candidates.extend(parent);
    candidates.extend(parent.and_then(|p| nodes[p].parent()));
    for node in candidates {
        let node = &nodes[node];
        if let Some(lang) = node.attr("data-lang") {
            return clean_language(lang);
        }
        let Some(class) = node.attr("class") else {
            continue;
        };
        for word in class.split_whitespace() {
            let named = word
                .strip_prefix("language-")
                .or_else(|| word.strip_prefix("lang-"))
                .or_else(|| word.strip_prefix("highlight-source-"))
                .or_else(|| word.strip_prefix("highlight-"));
            if let Some(lang) = named {
                return clean_language(lang);
            }
        }
        let words: Vec<&str> = class.split_whitespace().collect();
        if words.iter().any(|w| matches!(*w, "sourceCode" | "code")) {
            let not_language = [
                "sourceCode",
                "code",
                "literal-block",
                "highlight",
                "notranslate",
                "numberLines",
            ];
            if let Some(lang) = words.iter().find(|w| !not_language.contains(w)) {
                return clean_language(lang);
            }
        }
    }
    String::new()
}

/// A language name as a fence's info string can carry it: up to the first character that is
/// not a letter, digit or one of `+-#._`.
fn clean_language(lang: &str) -> String {
    lang.trim()
        .chars()
        .take_while(|c| c.is_alphanumeric() || matches!(c, '+' | '-' | '#' | '.' | '_'))
        .collect()
}
