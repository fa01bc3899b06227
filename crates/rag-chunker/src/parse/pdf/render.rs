//! Blocks written as the text rendition: `#` headings, `- ` items, fenced code, paragraphs, one
//! blank line between blocks, and one source-map stretch per line naming its page and box.

use rag_core::{Block, BlockType, HeadingLevel, MappedSpan, Origin, Span};
use serde_json::Value;

use super::blocks::{Hyphenation, Join, Kind, PdfBlock, list_marker};

/// The rendition's text, its blocks (spans into the text) and its source map.
#[derive(Debug, Default)]
pub(super) struct Written {
    pub(super) text: String,
    pub(super) blocks: Vec<Block>,
    pub(super) source_map: Vec<MappedSpan>,
}

/// A code line is indented by at most this many spaces, whatever its offset on the page.
const MAX_CODE_INDENT: usize = 40;

/// Writes `blocks` in order.
pub(super) fn write(blocks: &[PdfBlock]) -> Written {
    let hyphenation = Hyphenation::of(blocks);
    let capacity = blocks
        .iter()
        .flat_map(|b| &b.lines)
        .map(|l| l.text.len() + 1)
        .sum::<usize>()
        + 8 * blocks.len();
    let mut out = Written {
        text: String::with_capacity(capacity),
        ..Written::default()
    };
    for block in blocks {
        if !out.text.is_empty() {
            out.text.push_str("\n\n");
        }
        let start = out.text.len();
        match block.kind {
            Kind::Heading => {
                let level = HeadingLevel::new(block.level).unwrap_or(HeadingLevel::H1);
                for _ in 0..level.get() {
                    out.text.push('#');
                }
                out.text.push(' ');
                let title_start = out.text.len();
                write_flowing(&mut out, block, &hyphenation, None);
                let title = out.text[title_start..].to_owned();
                let end = out.text.len();
                push_block(&mut out, Block::heading(level, title, Span::new(start, end)), block);
            }
            Kind::Paragraph => {
                write_flowing(&mut out, block, &hyphenation, None);
                let end = out.text.len();
                push_block(&mut out, Block::new(BlockType::Paragraph, Span::new(start, end)), block);
            }
            Kind::ListItem { bullet } => {
                // A bullet glyph becomes `- `; a number or letter stays as the document writes it.
                let skip = if bullet {
                    out.text.push_str("- ");
                    block.lines[0].text.find(' ').map_or(0, |space| space + 1)
                } else {
                    0
                };
                debug_assert!(!bullet || list_marker(&block.lines[0].text).is_some());
                write_flowing(&mut out, block, &hyphenation, Some(skip));
                let end = out.text.len();
                push_block(&mut out, Block::new(BlockType::ListItem, Span::new(start, end)), block);
            }
            Kind::Code => {
                write_code(&mut out, block);
                let end = out.text.len();
                push_block(&mut out, Block::new(BlockType::Code, Span::new(start, end)), block);
            }
        }
    }
    out
}

fn push_block(out: &mut Written, mut block: Block, from: &PdfBlock) {
    block
        .attributes
        .insert("page".to_owned(), Value::from(from.lines[0].page));
    out.blocks.push(block);
}

/// The lines of a heading, paragraph or list item as one line of text, each line's stretch
/// mapped to its box; `skip` bytes of the first line (a list item's bullet) are left out.
fn write_flowing(out: &mut Written, block: &PdfBlock, hyphenation: &Hyphenation, skip: Option<usize>) {
    let mut previous: Option<&str> = None;
    for (index, line) in block.lines.iter().enumerate() {
        let mut text = line.text.as_str();
        if index == 0 {
            text = text.get(skip.unwrap_or(0)..).unwrap_or(text);
        }
        if let Some(prev) = previous {
            match hyphenation.join(prev, text) {
                Join::Space => out.text.push(' '),
                Join::KeepHyphen => {}
                Join::DropHyphen => {
                    let hyphen = prev.chars().next_back().map_or(0, char::len_utf8);
                    out.text.truncate(out.text.len() - hyphen);
                    // The dropped hyphen was the end of the previous line's stretch.
                    if let Some(last) = out.source_map.last_mut() {
                        last.span.end = last.span.end.saturating_sub(hyphen).max(last.span.start);
                    }
                }
            }
        }
        let start = out.text.len();
        out.text.push_str(text);
        map(out, start, line.page, line.bbox);
        previous = Some(text);
    }
}

/// A code block fenced, one line per line, indented by its offset from the block's leftmost line
/// in monospaced characters.
fn write_code(out: &mut Written, block: &PdfBlock) {
    let left = block.lines.iter().map(|l| l.bbox.x0).fold(f64::MAX, f64::min);
    let advance = block
        .lines
        .iter()
        .find_map(|l| l.mono_advance)
        .unwrap_or(0.6 * block.lines[0].size)
        .max(0.1);
    out.text.push_str("```\n");
    for line in &block.lines {
        let indent = (((line.bbox.x0 - left) / advance).round().max(0.0) as usize).min(MAX_CODE_INDENT);
        out.text.extend(std::iter::repeat_n(' ', indent));
        let start = out.text.len();
        out.text.push_str(&line.text);
        map(out, start, line.page, line.bbox);
        out.text.push('\n');
    }
    out.text.push_str("```");
}

fn map(out: &mut Written, start: usize, page: u32, bbox: super::layout::Rect) {
    if out.text.len() > start {
        out.source_map.push(MappedSpan::new(
            Span::new(start, out.text.len()),
            Origin::page(page, bbox.to_array()),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::super::blocks::ReadLine;
    use super::super::layout::Rect;
    use super::*;

    fn line(text: &str, page: u32, y: f64) -> ReadLine {
        ReadLine {
            page,
            region: 0,
            bbox: Rect::new(72.0, y, 372.0, y + 10.0),
            text: text.to_owned(),
            size: 10.0,
            bold_share: 0.0,
            mono_share: 0.0,
            mono_advance: Some(6.0),
        }
    }

    fn block(kind: Kind, level: u8, lines: Vec<ReadLine>) -> PdfBlock {
        PdfBlock { kind, lines, level }
    }

    #[test]
    fn blocks_render_as_markdown_and_every_line_maps_to_its_box() {
        let mut indented = line("return 1;", 2, 150.0);
        indented.bbox.x0 += 12.0;
        let blocks = vec![
            block(Kind::Heading, 2, vec![line("Install", 1, 50.0)]),
            block(
                Kind::Paragraph,
                0,
                vec![line("Run the exam-", 1, 70.0), line("ple now.", 2, 82.0)],
            ),
            block(Kind::ListItem { bullet: true }, 0, vec![line("• one item", 2, 100.0)]),
            block(
                Kind::Code,
                0,
                vec![line("fn f() {", 2, 138.0), indented, line("}", 2, 162.0)],
            ),
        ];
        let out = write(&blocks);
        assert_eq!(
            out.text,
            "## Install\n\nRun the example now.\n\n- one item\n\n```\nfn f() {\n  return 1;\n}\n```"
        );
        let pieces: Vec<(&str, u32)> = out
            .source_map
            .iter()
            .map(|m| {
                let Origin::Page { page, .. } = m.origin else {
                    panic!("a page origin")
                };
                (&out.text[m.span.range()], page)
            })
            .collect();
        assert_eq!(
            pieces,
            [
                ("Install", 1),
                ("Run the exam", 1),
                ("ple now.", 2),
                ("one item", 2),
                ("fn f() {", 2),
                ("return 1;", 2),
                ("}", 2)
            ]
        );
        let types: Vec<BlockType> = out.blocks.iter().map(|b| b.block_type).collect();
        assert_eq!(
            types,
            [
                BlockType::Heading,
                BlockType::Paragraph,
                BlockType::ListItem,
                BlockType::Code
            ]
        );
        assert_eq!(out.blocks[0].text.as_deref(), Some("Install"));
        assert_eq!(
            &out.text[out.blocks[3].span.range()],
            "```\nfn f() {\n  return 1;\n}\n```"
        );
    }
}
