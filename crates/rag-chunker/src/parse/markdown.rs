//! Markdown on `pulldown-cmark`: CommonMark plus tables, footnotes and front matter.

use std::ops::Range;

use pulldown_cmark::{Event, Options, Tag};
use rag_core::{Block, BlockType, HeadingLevel, ParseError, ParsedDocument, RequestContext, SourceBytes, Span};

use super::{content_start, decode, finish_blocks, parsed_text};

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

/// Markdown longer than this is parsed a segment at a time (see [`markdown_blocks_in_segments`]).
const SEGMENT_BYTES: usize = 1 << 20;

/// The blocks of a Markdown text, keeping the parser promises (see [`finish_blocks`]).
pub(crate) fn markdown_blocks(text: &str) -> Vec<Block> {
    markdown_blocks_in_segments(text, SEGMENT_BYTES)
}

/// [`markdown_blocks`], parsing segments of at least `segment_bytes` one at a time.
///
/// pulldown-cmark builds a tree of its whole input before the first event, about six times the
/// size of the text: a 100 MB file would need 600 MB for that alone. So a long text is cut, and
/// each part parsed on its own, but only where that cannot change the blocks:
///
/// - a cut is made just before an ATX heading at column 0 whose previous line is blank: such a
///   line starts a heading whatever came before, unless a fenced code block, an HTML block or a
///   metadata block is still open there (a paragraph, a container, an HTML block of types 6-7
///   cannot run past a blank line and a column-0 `#`);
/// - whether one is still open is asked of pulldown-cmark itself: if the part before the cut
///   ends inside a code, HTML or metadata block, or has a line that may open a metadata block
///   with no closing line after it in the part (pulldown-cmark opens one only when it sees its
///   closing line, which may lie beyond the cut), the cut is not made and the rest of the text is
///   parsed in one piece.
///
/// The only difference left is inline: a reference link in a heading whose definition lies in
/// another part keeps its brackets in the heading's title.
fn markdown_blocks_in_segments(text: &str, segment_bytes: usize) -> Vec<Block> {
    let bytes = text.as_bytes();
    let mut raw: Vec<Block> = Vec::new();
    let mut start = content_start(text);
    while start < text.len() {
        let cut = next_cut(bytes, start, segment_bytes);
        let kept = raw.len();
        let open_at_end = raw_blocks(text, start..cut, &mut raw);
        if cut < text.len() && (open_at_end || metadata_may_run_past(&bytes[start..cut])) {
            // The cut may split a block: parse everything left as one piece instead.
            raw.truncate(kept);
            raw_blocks(text, start..text.len(), &mut raw);
            break;
        }
        start = cut;
    }
    finish_blocks(text, raw)
}

/// The first candidate cut at least `min_bytes` after `start`: the start of a column-0 ATX heading
/// line after a blank line; the end of the text if there is none.
fn next_cut(bytes: &[u8], start: usize, min_bytes: usize) -> usize {
    let mut at = start;
    let mut previous_blank = false;
    while at < bytes.len() {
        let end = line_end(bytes, at);
        let line = &bytes[at..end];
        if previous_blank && at > start && at - start >= min_bytes && is_atx_heading(line) {
            return at;
        }
        previous_blank = line.iter().all(u8::is_ascii_whitespace);
        at = end;
    }
    bytes.len()
}

/// One past the `\n` that ends the line starting at `at` (or the end of the text).
fn line_end(bytes: &[u8], at: usize) -> usize {
    bytes[at..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(bytes.len(), |i| at + i + 1)
}

fn is_atx_heading(line: &[u8]) -> bool {
    let hashes = line.iter().take_while(|&&b| b == b'#').count();
    (1..=6).contains(&hashes) && line.get(hashes).is_none_or(|b| b.is_ascii_whitespace())
}

/// Whether some line of `part` may open a metadata block whose closing line is not in `part`.
///
/// pulldown-cmark opens a metadata block wherever a block starts (even inside a container) on a
/// line of exactly three `-` or `+`, but only if it finds a closing line (three of the same, or
/// `...` after `---`, at the start of a line) further on: when that line lies past the cut, the
/// whole text has a metadata block where the part has none. Every line ending in such a run
/// after nothing but container marks counts here as a possible opener, more than pulldown-cmark
/// opens, which can only cost a cut. The two delimiters are tracked apart, since a possible
/// opener of one must not hide an opener of the other.
fn metadata_may_run_past(part: &[u8]) -> bool {
    let mut waiting = [false, false];
    let mut at = 0;
    while at < part.len() {
        let end = line_end(part, at);
        let line = &part[at..end];
        let line = line.strip_suffix(b"\n").unwrap_or(line);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let opens = opens_metadata(line.trim_ascii_end());
        for (waiting, delimiter) in waiting.iter_mut().zip([b'-', b'+']) {
            // An opener counts until a later line closes it; a closing `---` opens again itself.
            if closes_metadata(line, delimiter) {
                *waiting = false;
            }
            if opens == Some(delimiter) {
                *waiting = true;
            }
        }
        at = end;
    }
    waiting.contains(&true)
}

/// The delimiter of a metadata block `line` might open (see [`metadata_may_run_past`]).
fn opens_metadata(line: &[u8]) -> Option<u8> {
    let delimiter = *line.last()?;
    if delimiter != b'-' && delimiter != b'+' {
        return None;
    }
    let run = line.iter().rev().take_while(|&&b| b == delimiter).count();
    let prefix = &line[..line.len() - run];
    let container_mark = |b: &u8| b" \t>-*+.)".contains(b) || b.is_ascii_digit();
    (run == 3 && prefix.iter().all(container_mark)).then_some(delimiter)
}

/// Whether `line` (without its line break) closes a metadata block opened with `delimiter`,
/// exactly as pulldown-cmark decides: no indentation, three delimiters (or `...` for `-`), then
/// only spaces. (Taking more lines as closers than pulldown-cmark would be unsafe.)
fn closes_metadata(line: &[u8], delimiter: u8) -> bool {
    let closer = |c: u8| {
        let run = line.iter().take_while(|&&b| b == c).count();
        run == 3 && line[run..].iter().all(|&b| b == b' ')
    };
    closer(delimiter) || (delimiter == b'-' && closer(b'.'))
}

/// Appends the raw blocks of `text[range]`, parsed on its own, to `raw`. Returns whether a code,
/// HTML or metadata block runs into the last line of the range (so may go on past it).
fn raw_blocks(text: &str, range: Range<usize>, raw: &mut Vec<Block>) -> bool {
    let base = range.start;
    let body = &text[range];
    // A block that was closed ends with the last line that is not blank; one that reaches into
    // the blank lines after it was still open when the range ended.
    let content_end = line_end(body.as_bytes(), body.trim_end().len());
    let mut open_at_end = false;
    let mut frames: Vec<Frame> = Vec::new();
    // Inside a block that is one block as a whole (paragraph, code, quote, ...): how many tags
    // are open; its inner events are skipped. Counting rather than recursing keeps a 1000-deep
    // nesting harmless.
    let mut opaque_depth = 0usize;
    let mut heading: Option<OpenHeading> = None;

    for (event, range) in pulldown_cmark::Parser::new_ext(body, options()).into_offset_iter() {
        let span = Span::new(base + range.start, base + range.end);
        if let Event::Start(Tag::CodeBlock(_) | Tag::HtmlBlock | Tag::MetadataBlock(_)) = &event
            && range.end > content_end
        {
            open_at_end = true;
        }
        if opaque_depth > 0 {
            match event {
                Event::Start(_) => opaque_depth += 1,
                Event::End(_) => opaque_depth -= 1,
                _ => {}
            }
            continue;
        }
        if let Some(open) = heading.as_mut() {
            match event {
                Event::Start(_) => open.depth += 1,
                Event::End(_) if open.depth > 0 => open.depth -= 1,
                Event::End(_) => {
                    if let Some(block) = raw.get_mut(open.block) {
                        block.text = Some(open.title.trim().to_owned());
                    }
                    heading = None;
                }
                Event::Text(t) | Event::Code(t) | Event::InlineMath(t) | Event::DisplayMath(t) => {
                    open.title.push_str(&t);
                }
                Event::SoftBreak | Event::HardBreak => open.title.push(' '),
                _ => {}
            }
            continue;
        }
        match event {
            Event::Start(tag) => match frames.last_mut() {
                Some(Frame::Item { cursor }) => {
                    if matches!(tag, Tag::List(_)) {
                        raw.push(Block::new(BlockType::ListItem, Span::new(*cursor, span.start)));
                        frames.push(Frame::List);
                    } else {
                        // Paragraphs, code, quotes (even headings) inside an item are the item's text.
                        opaque_depth = 1;
                    }
                }
                Some(Frame::Table { head }) => {
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
                    opaque_depth = 1;
                }
                Some(Frame::List) | None => match tag {
                    Tag::Heading { level, .. } => {
                        let level = HeadingLevel::new(level as u8).unwrap_or(HeadingLevel::H1);
                        heading = Some(OpenHeading {
                            block: raw.len(),
                            depth: 0,
                            title: String::new(),
                        });
                        raw.push(Block::heading(level, "", span));
                    }
                    Tag::List(_) => frames.push(Frame::List),
                    Tag::Item => frames.push(Frame::Item { cursor: span.start }),
                    Tag::Table(_) => frames.push(Frame::Table { head: None }),
                    tag => {
                        let block_type = match tag {
                            Tag::Paragraph => BlockType::Paragraph,
                            Tag::CodeBlock(_) => BlockType::Code,
                            Tag::BlockQuote(_) => BlockType::Quote,
                            _ => BlockType::Other,
                        };
                        raw.push(Block::new(block_type, span));
                        opaque_depth = 1;
                    }
                },
            },
            Event::End(_) => match frames.pop() {
                Some(Frame::Item { cursor }) => {
                    raw.push(Block::new(BlockType::ListItem, Span::new(cursor, span.end)));
                }
                Some(Frame::List) => {
                    if let Some(Frame::Item { cursor }) = frames.last_mut() {
                        *cursor = span.end;
                    }
                }
                Some(Frame::Table { head }) => {
                    if let Some(index) = head
                        && let Some(block) = raw.get_mut(index)
                    {
                        block.span.end = span.end;
                    }
                }
                // The end of a heading or opaque block is consumed above; nothing else is open.
                None => {}
            },
            // Loose text of a tight list item belongs to the item; cells belong to their row.
            _ if matches!(frames.last(), Some(Frame::Item { .. } | Frame::Table { .. })) => {}
            // Rules, block HTML and anything else standing alone.
            _ => raw.push(Block::new(BlockType::Other, span)),
        }
    }
    open_at_end
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parsing in segments as small as possible (a cut tried before every heading that follows a
    /// blank line) gives the blocks of parsing the whole.
    fn assert_segments_equal_whole(text: &str) {
        let whole = markdown_blocks_in_segments(text, usize::MAX);
        for min in [0, 1, 16, 200] {
            assert_eq!(
                markdown_blocks_in_segments(text, min),
                whole,
                "segments of {min} bytes: {text:?}"
            );
        }
    }

    #[test]
    fn cuts_are_tried_before_headings_after_blank_lines() {
        let text = "intro\n\n# A\ntext\n\n## B\n#nope\n\n#\n";
        assert_eq!(next_cut(text.as_bytes(), 0, 0), 7);
        assert_eq!(next_cut(text.as_bytes(), 7, 0), 17);
        assert_eq!(next_cut(text.as_bytes(), 17, 0), 29);
        assert_eq!(next_cut(text.as_bytes(), 0, 10), 17);
        assert_eq!(next_cut(text.as_bytes(), 29, 0), text.len());
    }

    #[test]
    fn a_cut_that_would_split_a_block_is_not_made() {
        for text in [
            "# A\n\n```\n\n# not a heading\n```\n\n# B\n",
            "~~~~\n\n# x\n~~~\n\n# still code\n~~~~\n\n# B\n",
            "# A\n\n```\n\n# unterminated fence to the end\n",
            "<!--\n\n# x\n-->\n\n# B\n",
            "<pre>\n\n# x\n</pre>\n\n# B\n",
            "<script>\n\n# x\n</style>\n\n# B\n</script>\n\n# C\n",
            "<?php\n\n# x\n?>\n\n# B\n",
            "<![CDATA[\n\n# x\n]]>\n\n# B\n",
            "<!DOCTYPE\n\n# x\n>\n\n# B\n",
            "<div>\n\n# A\n\n# B\n",
            "<div>\n# x\n\n# B\n",
            "---\ntitle: x\n\n# yaml comment\n---\n\n# A\n",
            "+++\n\n# x\n+++\n\n# A\n",
            "# A\n---\n# H\n\n# H\n---",
            "Title\n---\n```\n...\n\n# x\n```\n",
            "- item\n\n  # in item\n\n# A\n\n- b\n",
            "- ```\n\n# ends the list\n",
            "> quote\n\n# A\n> again\n",
            "    code\n\n    # code\n\n# A\n",
            "| a | b |\n|---|---|\n| 1 | 2 |\n\n# A\n",
            "Title\n=====\n\n# A\n\nSub\n---\n",
            "# A\r\n\r\n```\r\n\r\n# x\r\n```\r\n\r\n# B\r\n",
            "\u{feff}# A\n\n# B\n",
        ] {
            assert_segments_equal_whole(text);
        }
    }

    #[test]
    fn segments_of_the_fixtures_and_the_docs_equal_the_whole() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
        let mut files = vec![format!("{root}/README.md"), format!("{root}/docs/architecture.md")];
        for dir in ["docs/reference", "crates/rag-chunker/tests/fixtures"] {
            for entry in std::fs::read_dir(format!("{root}/{dir}")).unwrap() {
                files.push(entry.unwrap().path().display().to_string());
            }
        }
        for file in files.iter().filter(|f| f.ends_with(".md")) {
            let text = std::fs::read_to_string(file).unwrap();
            assert_segments_equal_whole(&text);
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]
        #[test]
        fn segments_of_generated_markdown_equal_the_whole(
            lines in proptest::collection::vec(proptest::sample::select(&[
                "# H", "## Two", "###### Six", "####### seven", "#nospace", "   # three", "    # four", "\t# tab",
                "", "", "", "  ", "para text", "```", "```rust", "~~~~", "~~~", "    indented", "<!--", "-->",
                "<pre>", "</pre>", "<div>", "<script>", "</script>", "</style>", "<?x", "?>", "<!X", ">",
                "<![CDATA[", "]]>", "- item", "  - nested", "1. one", "> quote", "> ```", "---", "+++", "...",
                "----", "--- ", "   ---", "- ---", "> ---", "1. +++", "***", "| a | b |", "|---|---|",
                "[ref]: /url", "[^1]: note", "Setext", "===", "*emph* [ref]", "  ```", "- ```",
                "> - ```", "  ~~~", "<PRE>", "<!-- x -->", "  <!--", "   ```", "\t```", "1) item", "* item",
                "+ item", "-", "  ---", "> > ---", "  +++", "+++ ", "... ", "---\t", "<textarea>",
                "</textarea>", "<style>", "[x]:", "  /url", "# H #", "#\tH", "> # quoted",
            ][..]), 0..48),
            crlf in proptest::bool::ANY,
        ) {
            let text = lines.join(if crlf { "\r\n" } else { "\n" });
            assert_segments_equal_whole(&text);
        }
    }

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
