//! Markdown on `pulldown-cmark`: CommonMark plus tables, footnotes and front matter.

use std::ops::Range;

use pulldown_cmark::{Event, Options, Tag};
use rag_core::{Block, BlockType, HeadingLevel, ParseError, ParsedDocument, RequestContext, SourceBytes, Span};

use super::{decode, parsed_text};

mod segment;

builtin_parser! {
    /// Reads Markdown (`.md`, `.markdown`) into headings, paragraphs, list items, table rows, code,
    /// quotes and `other` blocks.
    ///
    /// - ATX (`## Title`) and setext (`Title` over `===`) headings are [`BlockType::Heading`] with their
    ///   level; the block's text is the title without markup, its span the whole heading line(s).
    /// - Each list item is one [`BlockType::ListItem`]. An item that holds a nested list owns only its
    ///   own text: the part before the nested list is one block, the nested items are blocks of their
    ///   own, and any text of the item after the nested list is another `list_item` block. So blocks
    ///   never overlap, and a long list can be split between items.
    /// - Each table row is one [`BlockType::TableRow`]; the header row's block also covers the
    ///   delimiter row (`|---|`), so the header never travels without it.
    /// - Fenced and indented code is one [`BlockType::Code`] block (a `#` in code is never a heading).
    /// - A top-level block quote is one [`BlockType::Quote`] block, whatever it contains.
    /// - Headings, code and quotes inside a list item are part of the item.
    /// - Everything else is [`BlockType::Other`]: HTML blocks, thematic breaks, front matter (YAML `---`
    ///   or TOML `+++`), footnote definitions, and any text no event covers (link reference
    ///   definitions), one block per blank-line-separated stretch.
    ///
    /// ```
    /// use rag_chunker::parse::MarkdownParser;
    /// use rag_core::{BlockType, CorpusId, DocumentId, Parser, RequestContext, SourceBytes};
    ///
    /// let (id, corpus) = (DocumentId::from("d"), CorpusId::from("c"));
    /// let bytes = "Intro\n=====\n\n- one\n- two\n\n[home]: https://example.com\n".as_bytes();
    /// let parsed = MarkdownParser.parse(&RequestContext::local("t"),
    ///     SourceBytes { document_id: &id, corpus_id: &corpus, source_uri: "d.md", bytes })?;
    /// let types: Vec<BlockType> = parsed.blocks.iter().map(|b| b.block_type).collect();
    /// assert_eq!(types, [BlockType::Heading, BlockType::ListItem, BlockType::ListItem, BlockType::Other]);
    /// assert_eq!(parsed.blocks[0].text.as_deref(), Some("Intro"));
    /// # Ok::<(), rag_core::ParseError>(())
    /// ```
    MarkdownParser("markdown") => parse_markdown
}

fn parse_markdown(_ctx: &RequestContext, source: SourceBytes<'_>) -> Result<ParsedDocument, ParseError> {
    Ok(parsed_text(&source, decode(&source)?, markdown_blocks))
}

/// Where the event walk is, for the containers whose children become blocks of their own.
enum Frame {
    /// Inside a list: each item is a block.
    List,
    /// Inside a list item: its own text runs from `cursor`; a nested list cuts it.
    Item { cursor: usize },
    /// Inside a table: each row is a block; `head` is the header row's block until a body row
    /// (or the table's end) tells where the delimiter row ends.
    Table { head: Option<usize> },
}

/// The title of the heading being read: its block's index and the nesting depth of inline tags.
struct OpenHeading {
    block: usize,
    depth: usize,
    title: String,
}

fn options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_YAML_STYLE_METADATA_BLOCKS
        | Options::ENABLE_PLUSES_DELIMITED_METADATA_BLOCKS
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
}

/// The blocks of a Markdown text, keeping the parser promises (see [`super::finish_blocks`]).
///
/// pulldown-cmark builds a tree of its whole input before its first event, six to forty times the
/// size of the text, so a long text is parsed a window at a time, cut only where that cannot
/// change the blocks (see [`segment`]).
pub(crate) fn markdown_blocks(text: &str) -> Vec<Block> {
    let segmented = segment::markdown_blocks_in_windows(text, segment::Windows::DEFAULT);
    let stats = segmented.stats;
    tracing::debug!(
        bytes = text.len(),
        parses = stats.parses,
        largest_parse = stats.largest_parse,
        parsed_bytes = stats.parsed_bytes,
        forced_cuts = stats.forced_cuts,
        "markdown parsed in windows"
    );
    segmented.blocks
}

/// The raw blocks of `body` parsed by pulldown-cmark in one piece, in `body`'s offsets and not yet
/// cleaned up by [`super::finish_blocks`]. Every event is shown to `shape` first, with the number
/// of blocks before it, so that the segmenter learns where it may cut. Text in the first
/// `prefix_len` bytes (lines put in front of a window to resume a block, see [`segment`]) never
/// enters a heading's title.
fn raw_blocks(body: &str, prefix_len: usize, shape: &mut segment::Shape) -> Vec<Block> {
    let mut walk = BlockWalk {
        raw: Vec::new(),
        frames: Vec::new(),
        opaque_depth: 0,
        heading: None,
        prefix_len,
    };
    for (event, range) in pulldown_cmark::Parser::new_ext(body, options()).into_offset_iter() {
        shape.observe(body, &event, range.clone(), walk.raw.len());
        walk.event(event, range);
    }
    walk.raw
}

/// The state of [`raw_blocks`]' walk over pulldown-cmark's events.
struct BlockWalk {
    raw: Vec<Block>,
    frames: Vec<Frame>,
    /// Inside a block that is one block as a whole (paragraph, code, quote, ...): how many tags
    /// are open; its inner events are skipped. Counting rather than recursing keeps a 1000-deep
    /// nesting harmless.
    opaque_depth: usize,
    heading: Option<OpenHeading>,
    prefix_len: usize,
}

impl BlockWalk {
    fn event(&mut self, event: Event<'_>, range: Range<usize>) {
        if self.opaque_depth > 0 {
            match event {
                Event::Start(_) => self.opaque_depth += 1,
                Event::End(_) => self.opaque_depth -= 1,
                _ => {}
            }
            return;
        }
        if self.heading.is_some() {
            self.heading_event(event, range.end);
            return;
        }
        let span = Span::new(range.start, range.end);
        match event {
            Event::Start(tag) => match self.frames.last_mut() {
                Some(Frame::Item { cursor }) => {
                    let cursor = *cursor;
                    self.start_in_item(&tag, cursor, span);
                }
                Some(Frame::Table { head }) => {
                    start_in_table(&tag, head, &mut self.raw, span);
                    self.opaque_depth = 1;
                }
                Some(Frame::List) | None => self.start_top_level(tag, span),
            },
            Event::End(_) => self.end_frame(span),
            // Loose text of a tight list item belongs to the item; cells belong to their row.
            _ if matches!(self.frames.last(), Some(Frame::Item { .. } | Frame::Table { .. })) => {}
            // Rules, block HTML and anything else standing alone.
            _ => self.raw.push(Block::new(BlockType::Other, span)),
        }
    }

    /// An event inside a heading, whose text ends at `end`: inline text goes into its title.
    fn heading_event(&mut self, event: Event<'_>, end: usize) {
        let Some(open) = self.heading.as_mut() else {
            return;
        };
        match event {
            Event::Start(_) => open.depth += 1,
            Event::End(_) if open.depth > 0 => open.depth -= 1,
            Event::End(_) => {
                if let Some(block) = self.raw.get_mut(open.block) {
                    block.text = Some(open.title.trim().to_owned());
                }
                self.heading = None;
            }
            _ if end <= self.prefix_len => {}
            Event::Text(t) | Event::Code(t) | Event::InlineMath(t) | Event::DisplayMath(t) => {
                open.title.push_str(&t);
            }
            Event::SoftBreak | Event::HardBreak => open.title.push(' '),
            _ => {}
        }
    }

    /// A tag that starts inside a list item whose own text runs from `cursor`: a nested list cuts
    /// that text.
    fn start_in_item(&mut self, tag: &Tag<'_>, cursor: usize, span: Span) {
        if matches!(tag, Tag::List(_)) {
            self.raw
                .push(Block::new(BlockType::ListItem, Span::new(cursor, span.start)));
            self.frames.push(Frame::List);
        } else {
            // Paragraphs, code, quotes (even headings) inside an item are the item's text.
            self.opaque_depth = 1;
        }
    }

    /// A tag that starts at the top level or in a list: a heading, a container, or a block that is
    /// one block as a whole.
    fn start_top_level(&mut self, tag: Tag<'_>, span: Span) {
        match tag {
            Tag::Heading { level, .. } => {
                let level = HeadingLevel::new(level as u8).unwrap_or(HeadingLevel::H1);
                self.heading = Some(OpenHeading {
                    block: self.raw.len(),
                    depth: 0,
                    title: String::new(),
                });
                self.raw.push(Block::heading(level, "", span));
            }
            Tag::List(_) => self.frames.push(Frame::List),
            Tag::Item => self.frames.push(Frame::Item { cursor: span.start }),
            Tag::Table(_) => self.frames.push(Frame::Table { head: None }),
            tag => {
                self.raw.push(Block::new(opaque_block_type(&tag), span));
                self.opaque_depth = 1;
            }
        }
    }

    /// The end of the innermost container (list, item, table).
    fn end_frame(&mut self, span: Span) {
        match self.frames.pop() {
            Some(Frame::Item { cursor }) => {
                self.raw
                    .push(Block::new(BlockType::ListItem, Span::new(cursor, span.end)));
            }
            Some(Frame::List) => {
                if let Some(Frame::Item { cursor }) = self.frames.last_mut() {
                    *cursor = span.end;
                }
            }
            Some(Frame::Table { head }) => {
                if let Some(index) = head
                    && let Some(block) = self.raw.get_mut(index)
                {
                    block.span.end = span.end;
                }
            }
            // The end of a heading or opaque block is consumed above; nothing else is open.
            None => {}
        }
    }
}

/// A tag that starts inside a table: each row is a block, and the header row's block (`head`)
/// ends where the first body row starts, so that it covers the delimiter row.
fn start_in_table(tag: &Tag<'_>, head: &mut Option<usize>, raw: &mut Vec<Block>, span: Span) {
    match tag {
        Tag::TableHead => *head = Some(raw.len()),
        Tag::TableRow => {
            if let Some(index) = head.take()
                && let Some(block) = raw.get_mut(index)
            {
                block.span.end = span.start;
            }
        }
        _ => {}
    }
    if matches!(tag, Tag::TableHead | Tag::TableRow) {
        raw.push(Block::new(BlockType::TableRow, span));
    }
}

/// The type of a block that is one block as a whole, by the tag that starts it.
fn opaque_block_type(tag: &Tag<'_>) -> BlockType {
    match tag {
        Tag::Paragraph => BlockType::Paragraph,
        Tag::CodeBlock(_) => BlockType::Code,
        Tag::BlockQuote(_) => BlockType::Quote,
        _ => BlockType::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocks(text: &str) -> Vec<(BlockType, Option<u8>, String, String)> {
        markdown_blocks(text)
            .into_iter()
            .map(|b| {
                (
                    b.block_type,
                    b.level.map(HeadingLevel::get),
                    b.text.clone().unwrap_or_else(|| text[b.span.range()].to_owned()),
                    text[b.span.range()].to_owned(),
                )
            })
            .collect()
    }

    fn types(text: &str) -> Vec<BlockType> {
        blocks(text).into_iter().map(|b| b.0).collect()
    }

    #[test]
    fn headings_carry_level_and_plain_title() {
        let got = blocks("# ATX *title* #\n\nSetext two\n----------\n\n###### Six\n");
        assert_eq!(
            got,
            [
                (
                    BlockType::Heading,
                    Some(1),
                    "ATX title".into(),
                    "# ATX *title* #".into()
                ),
                (
                    BlockType::Heading,
                    Some(2),
                    "Setext two".into(),
                    "Setext two\n----------".into()
                ),
                (BlockType::Heading, Some(6), "Six".into(), "###### Six".into()),
            ]
        );
    }

    #[test]
    fn nested_list_items_own_only_their_own_text() {
        let text = "- parent\n  - child\n    more\n- next\n\n  tail of next\n";
        let got: Vec<String> = blocks(text).into_iter().map(|b| b.3).collect();
        assert_eq!(got, ["- parent", "- child\n    more", "- next\n\n  tail of next"]);
        let text = "1. outer\n   - inner\n\n   after inner\n";
        let got: Vec<String> = blocks(text).into_iter().map(|b| b.3).collect();
        assert_eq!(got, ["1. outer", "- inner", "after inner"]);
        assert!(types(text).iter().all(|t| *t == BlockType::ListItem));
    }

    #[test]
    fn table_rows_are_blocks_and_the_header_keeps_its_delimiter_row() {
        let text = "| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n";
        let got: Vec<String> = blocks(text).into_iter().map(|b| b.3).collect();
        assert_eq!(got, ["| a | b |\n|---|---|", "| 1 | 2 |", "| 3 | 4 |"]);
        let got: Vec<String> = blocks("| a |\n|---|\n").into_iter().map(|b| b.3).collect();
        assert_eq!(got, ["| a |\n|---|"]);
    }

    #[test]
    fn everything_else_is_other_and_uncovered_text_is_kept() {
        let text = "---\ntitle: x\n---\n\n[ref]: http://x\n\n<div>\nhi\n</div>\n\n***\n\nText[^1].\n\n[^1]: note\n";
        assert_eq!(
            types(text),
            [
                BlockType::Other,
                BlockType::Other,
                BlockType::Other,
                BlockType::Other,
                BlockType::Paragraph,
                BlockType::Other
            ]
        );
        assert_eq!(blocks(text)[1].3, "[ref]: http://x");
    }

    #[test]
    fn code_and_quotes_are_single_blocks_and_hashes_in_code_are_not_headings() {
        let text = "```\n# not a heading\n```\n\n    # indented code\n\n> # quoted\n> > nested\n";
        assert_eq!(types(text), [BlockType::Code, BlockType::Code, BlockType::Quote]);
        let text = "```\nunterminated\n# still code";
        assert_eq!(types(text), [BlockType::Code]);
    }

    #[test]
    fn a_byte_order_mark_is_in_no_block() {
        let text = "\u{feff}# Title\n\nBody\n";
        let got = markdown_blocks(text);
        assert_eq!(got[0].span.start, 3);
        assert_eq!(got[0].text.as_deref(), Some("Title"));
    }

    #[test]
    fn deep_nesting_does_not_overflow() {
        let quotes = format!("{} deep\n", ">".repeat(1000));
        assert_eq!(types(&quotes), [BlockType::Quote]);
        let lists: String = (0..1000).map(|i| format!("{}- item {i}\n", "  ".repeat(i))).collect();
        let got = blocks(&lists);
        assert!(!got.is_empty());
        assert!(got.iter().all(|b| b.0 == BlockType::ListItem || b.0 == BlockType::Code));
    }
}
