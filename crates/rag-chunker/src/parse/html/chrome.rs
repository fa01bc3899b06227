//! Site chrome: the parts of a page around its content (navigation, tables of contents, page
//! headers and footers, sidebars), found as documented in the chunker reference.

use super::tree::{DOCUMENT, NodeData, NodeId, Tree};

/// Words of an `id` or `class` (split at `-`, `_` and spaces, lowercased) that name chrome.
const CHROME_WORDS: [&str; 12] = [
    "nav",
    "navbar",
    "navigation",
    "menu",
    "sidebar",
    "toc",
    "gtoc",
    "breadcrumb",
    "breadcrumbs",
    "footer",
    "masthead",
    "skiplink",
];

/// Words of an `id` or `class` that name chrome inside a page's marked main content too.
const CHROME_WORDS_IN_CONTENT: [&str; 4] = ["toc", "gtoc", "breadcrumb", "breadcrumbs"];

/// A block at least this link-dense ...
const LINK_DENSITY: f64 = 0.9;
/// ... with at least this many links, and no heading or code, is navigation.
const DENSE_LINKS: usize = 10;

/// Landmark roles that are chrome.
const CHROME_ROLES: [&str; 5] = ["navigation", "banner", "contentinfo", "complementary", "search"];

/// Which nodes are chrome, decided once per page.
pub(crate) struct Chrome {
    /// Per node: the subtree is chrome.
    chrome: Vec<bool>,
    /// Whether headings' permalinks (`¶`, `#`) are chrome.
    permalinks: bool,
}

impl Chrome {
    /// Nothing is chrome.
    pub(crate) fn none(tree: &Tree) -> Self {
        Self {
            chrome: vec![false; tree.nodes.len()],
            permalinks: false,
        }
    }

    /// The chrome of `tree`: everything outside the elements that mark the main content (`main`
    /// or `role=main`, else `article`), when the page has them; inside them, and on pages without
    /// them, the elements the rules of [`is_chrome`] name.
    pub(crate) fn find(tree: &Tree) -> Self {
        let n = tree.nodes.len();
        let order = preorder(tree);
        let roots = content_roots(tree, &order, |id| {
            let node = &tree.nodes[id];
            node.html_name() == "main" || node.attr("role").is_some_and(|r| r.eq_ignore_ascii_case("main"))
        });
        let roots = if roots.is_empty() {
            content_roots(tree, &order, |id| tree.nodes[id].html_name() == "article")
        } else {
            roots
        };
        let stats = link_stats(tree, &order);
        let mut chrome = vec![false; n];
        // Inside a root, or an ancestor of one: marked top-down in tree order.
        let mut inside = vec![false; n];
        let mut holds_root = vec![false; n];
        for &root in &roots {
            let mut at = Some(root);
            while let Some(node) = at {
                holds_root[node] = true;
                at = tree.nodes[node].parent();
            }
        }
        let mut is_root = vec![false; n];
        for &root in &roots {
            is_root[root] = true;
        }
        let mut head = vec![false; n];
        for &id in &order {
            let parent = tree.nodes[id].parent();
            let parent_chrome = parent.is_some_and(|p| chrome[p]);
            inside[id] = is_root[id] || parent.is_some_and(|p| inside[p]);
            head[id] = tree.nodes[id].html_name() == "head" || parent.is_some_and(|p| head[p]);
            chrome[id] = parent_chrome
                || if roots.is_empty() {
                    is_chrome(tree, id, &stats, false)
                } else if inside[id] {
                    !is_root[id] && is_chrome(tree, id, &stats, true)
                } else {
                    // Outside the marked content, everything but the way to it is chrome; the
                    // document's head is the head, not chrome.
                    !holds_root[id] && !head[id]
                };
        }
        Self {
            chrome,
            permalinks: true,
        }
    }

    /// Whether headings' permalinks are chrome.
    pub(crate) fn drops_permalinks(&self) -> bool {
        self.permalinks
    }

    /// Whether `node` (and so its subtree) is chrome.
    pub(crate) fn is(&self, node: NodeId) -> bool {
        self.chrome.get(node).copied().unwrap_or(false)
    }
}

/// The nodes in tree order.
pub(crate) fn preorder(tree: &Tree) -> Vec<NodeId> {
    let mut order = Vec::with_capacity(tree.nodes.len());
    let mut stack = vec![DOCUMENT];
    while let Some(node) = stack.pop() {
        order.push(node);
        stack.extend(tree.nodes[node].children().rev());
    }
    order
}

/// The outermost elements `is_root` accepts, in tree order.
fn content_roots(tree: &Tree, order: &[NodeId], is_root: impl Fn(NodeId) -> bool) -> Vec<NodeId> {
    let mut roots = Vec::new();
    let mut under = vec![false; tree.nodes.len()];
    for &id in order {
        let parent_under = tree.nodes[id].parent().is_some_and(|p| under[p]);
        if parent_under {
            under[id] = true;
        } else if tree.nodes[id].is_element() && is_root(id) {
            under[id] = true;
            roots.push(id);
        }
    }
    roots
}

/// Per element: non-whitespace characters of its text, those inside links, its links, and
/// whether it holds a heading or code. Counts are `u32` (a page's characters fit): there is one
/// per node, and a page can have millions.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct LinkStats {
    chars: u32,
    link_chars: u32,
    links: u32,
    has_structure: bool,
}

fn link_stats(tree: &Tree, order: &[NodeId]) -> Vec<LinkStats> {
    let mut stats = vec![LinkStats::default(); tree.nodes.len()];
    // Children come after their parent in tree order: sum up from the end.
    for &id in order.iter().rev() {
        let node = &tree.nodes[id];
        let mut own = stats[id];
        match &node.data {
            NodeData::Text { text, .. } => {
                own.chars = u32::try_from(text.chars().filter(|c| !c.is_whitespace()).count()).unwrap_or(u32::MAX);
            }
            NodeData::Element { .. } => match node.html_name() {
                "script" | "style" | "template" | "head" => own = LinkStats::default(),
                "a" if node.attr("href").is_some() => {
                    own.links += 1;
                    own.link_chars = own.chars;
                }
                "h1" | "h2" | "h3" | "h4" | "h5" | "h6" | "pre" => own.has_structure = true,
                _ => {}
            },
            _ => {}
        }
        stats[id] = own;
        if let Some(parent) = node.parent() {
            let p = &mut stats[parent];
            p.chars = p.chars.saturating_add(own.chars);
            p.link_chars = p.link_chars.saturating_add(own.link_chars);
            p.links = p.links.saturating_add(own.links);
            p.has_structure |= own.has_structure;
        }
    }
    stats
}

/// Whether the element `id` is chrome by itself:
///
/// - `nav`, `role=navigation` or `search` (anywhere); outside marked content also `aside`,
///   `header` and `footer` that belong to the page (not inside `article`, `section`, `main`,
///   `aside` or `nav`), and `role=banner`, `contentinfo` or `complementary`;
/// - a container (`div`, `ul`, `section`, ...) with an `id` or `class` word that names chrome (`toc`, `breadcrumb`; outside marked content also
///   `nav`, `menu`, `sidebar`, `footer`, ...);
/// - outside marked content, a block whose text is at least 90% link text over at least ten
///   links, with no heading or code in it: a list of links to elsewhere.
fn is_chrome(tree: &Tree, id: NodeId, stats: &[LinkStats], in_content: bool) -> bool {
    let node = &tree.nodes[id];
    if !node.is_element() {
        return false;
    }
    let name = node.html_name();
    if name == "nav" {
        return true;
    }
    if let Some(role) = node.attr("role") {
        let role = role.trim().to_ascii_lowercase();
        if role == "navigation" || role == "search" || (!in_content && CHROME_ROLES.contains(&role.as_str())) {
            return true;
        }
    }
    let words = CHROME_WORDS_IN_CONTENT.as_slice();
    let words = if in_content { words } else { CHROME_WORDS.as_slice() };
    let named = |value: Option<&str>| {
        value.is_some_and(|v| {
            v.split(|c: char| c.is_whitespace() || c == '-' || c == '_')
                .any(|w| words.iter().any(|chrome| w.eq_ignore_ascii_case(chrome)))
        })
    };
    // Containers only: a link or a span of class `toc-backref` is part of what it is in.
    let container = matches!(
        name,
        "div" | "nav" | "ul" | "ol" | "section" | "aside" | "details" | "header" | "footer" | "table" | "dl" | "form"
    );
    if container && (named(node.attr("id")) || named(node.attr("class"))) {
        return true;
    }
    if in_content {
        return false;
    }
    if name == "aside" || ((name == "header" || name == "footer") && !in_section(tree, id)) {
        return true;
    }
    let s = stats[id];
    matches!(name, "div" | "ul" | "ol" | "table" | "details" | "section" | "p" | "dl")
        && s.links as usize >= DENSE_LINKS
        && !s.has_structure
        && s.link_chars as f64 >= LINK_DENSITY * s.chars as f64
}

/// Whether `id` sits inside sectioning content, where `header` and `footer` are the section's.
fn in_section(tree: &Tree, id: NodeId) -> bool {
    let mut at = tree.nodes[id].parent();
    while let Some(node) = at {
        if matches!(
            tree.nodes[node].html_name(),
            "article" | "section" | "main" | "aside" | "nav"
        ) {
            return true;
        }
        at = tree.nodes[node].parent();
    }
    false
}
