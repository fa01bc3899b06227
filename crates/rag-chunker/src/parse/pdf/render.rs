//! Blocks written as the text rendition: `#` headings, `- ` items, fenced code, paragraphs, one
//! blank line between blocks, and one source-map stretch per line naming its page and box.

use rag_core::{Block, BlockType, HeadingLevel, MappedSpan, Origin, Span};
use serde_json::Value;

use super::blocks::{Hyphenation, Join, Kind, PdfBlock, list_marker};
use super::lines::ReadLine;

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
                write_flowing(&mut out, block, &hyphenation, None, false);
                let title = out.text[title_start..].to_owned();
                let end = out.text.len();
                push_block(&mut out, Block::heading(level, title, Span::new(start, end)), block);
            }
            Kind::Paragraph => {
                write_flowing(&mut out, block, &hyphenation, None, true);
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
                write_flowing(&mut out, block, &hyphenation, Some(skip), true);
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

/// The lines of a heading, paragraph or list item as one line of text, each piece of a line
/// mapped to its box; `skip` bytes of the first line (a list item's bullet) are left out. With
/// `inline_code`, each monospaced stretch is written as Markdown inline code (in backticks, the
/// spaces between monospaced stretches of consecutive lines inside it).
fn write_flowing(
    out: &mut Written,
    block: &PdfBlock,
    hyphenation: &Hyphenation,
    skip: Option<usize>,
    inline_code: bool,
) {
    let mut pieces: Vec<Piece<'_>> = Vec::new();
    let mut previous: Option<(&str, bool)> = None;
    for (index, line) in block.lines.iter().enumerate() {
        let skip = if index == 0 { skip.unwrap_or(0) } else { 0 };
        let from = if line.text.is_char_boundary(skip) { skip } else { 0 };
        let text = &line.text[from..];
        let starts_mono = inline_code && line.mono_spans.iter().any(|s| s.start <= from && s.end > from);
        if let Some((prev, ends_mono)) = previous {
            // Code is not hyphenated: a hyphen that ends a monospaced line before more code is
            // the code's own, and the two halves are one word.
            let join = if ends_mono && starts_mono && prev.ends_with('-') {
                Join::KeepHyphen
            } else {
                hyphenation.join(prev, text)
            };
            match join {
                Join::Space => pieces.push(Piece::Space),
                Join::KeepHyphen => {}
                Join::DropHyphen => drop_last_char(&mut pieces),
            }
        }
        let mut at = from;
        let spans = line.mono_spans.iter().filter(|_| inline_code);
        for span in spans.filter(|s| s.end > from) {
            let start = span.start.max(from);
            if start > at {
                pieces.push(Piece::Text {
                    text: &line.text[at..start],
                    mono: false,
                    line,
                });
            }
            pieces.push(Piece::Text {
                text: &line.text[start..span.end],
                mono: true,
                line,
            });
            at = span.end;
        }
        if at < line.text.len() {
            pieces.push(Piece::Text {
                text: &line.text[at..],
                mono: false,
                line,
            });
        }
        let ends_mono = inline_code && line.mono_spans.last().is_some_and(|s| s.end == line.text.len());
        previous = Some((text, ends_mono));
    }
    let mut index = 0;
    while index < pieces.len() {
        match pieces[index] {
            Piece::Space => out.text.push(' '),
            Piece::Text {
                mono: false,
                text,
                line,
            } => write_mapped(out, text, line),
            Piece::Text { mono: true, .. } => {
                // The monospaced pieces from here, with the spaces between them.
                let mut end = index + 1;
                while end < pieces.len() {
                    let next_is_code = matches!(pieces.get(end + 1), Some(Piece::Text { mono: true, .. }));
                    match pieces[end] {
                        Piece::Text { mono: true, .. } => end += 1,
                        Piece::Space if next_is_code => end += 2,
                        _ => break,
                    }
                }
                write_inline_code(out, &pieces[index..end]);
                index = end;
                continue;
            }
        }
        index += 1;
    }
}

/// A piece of a flowing block: a stretch of one line's text, or the space that joins two lines.
#[derive(Clone, Copy)]
enum Piece<'a> {
    Text {
        text: &'a str,
        mono: bool,
        line: &'a ReadLine,
    },
    Space,
}

/// Drops the last character of the last piece (the hyphen of a word broken across lines).
fn drop_last_char(pieces: &mut Vec<Piece<'_>>) {
    if let Some(Piece::Text { text, .. }) = pieces.last_mut() {
        let cut = text.char_indices().next_back().map_or(0, |(at, _)| at);
        *text = &text[..cut];
        if text.is_empty() {
            pieces.pop();
        }
    }
}

fn write_mapped(out: &mut Written, text: &str, line: &ReadLine) {
    let start = out.text.len();
    out.text.push_str(text);
    map(out, start, line.page, line.bbox);
}

/// Monospaced pieces (and the spaces between them) as one Markdown code span: fenced by one more
/// backtick than the longest run of backticks inside, padded with a space when the code starts
/// or ends with a backtick, as CommonMark reads it back.
fn write_inline_code(out: &mut Written, pieces: &[Piece<'_>]) {
    let mut longest = 0;
    let mut first: Option<char> = None;
    let mut last: Option<char> = None;
    for piece in pieces {
        if let Piece::Text { text, .. } = piece {
            let mut run = 0;
            for c in text.chars() {
                run = if c == '`' { run + 1 } else { 0 };
                longest = longest.max(run);
            }
            first = first.or_else(|| text.chars().next());
            last = text.chars().next_back().or(last);
        }
    }
    let fence = "`".repeat(longest + 1);
    let pad = if first == Some('`') || last == Some('`') {
        " "
    } else {
        ""
    };
    out.text.push_str(&fence);
    out.text.push_str(pad);
    for piece in pieces {
        match piece {
            Piece::Space => out.text.push(' '),
            Piece::Text { text, line, .. } => write_mapped(out, text, line),
        }
    }
    out.text.push_str(pad);
    out.text.push_str(&fence);
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
    use super::super::layout::Rect;
    use super::*;

    fn line(text: &str, page: u32, y: f64) -> ReadLine {
        ReadLine {
            page,
            region: 0,
            bbox: Rect::new(72.0, y, 372.0, y + 10.0),
            text: text.to_owned(),
            mono_spans: Vec::new(),
            size: 10.0,
            bold_share: 0.0,
            mono_share: 0.0,
            prose_chars: text.len(),
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

    #[test]
    fn inline_code_is_written_in_backticks_across_lines_and_around_backticks() {
        let with_code = |text: &str, y: f64, spans: Vec<std::ops::Range<usize>>| ReadLine {
            mono_spans: spans,
            ..line(text, 1, y)
        };
        let blocks = vec![
            block(
                Kind::Paragraph,
                0,
                vec![
                    // `--no-same-` + `owner`: a code word broken at its own hyphen; then code that
                    // runs on to the next line, and code holding a backtick.
                    with_code("use --no-same-", 10.0, std::iter::once(4..14).collect()),
                    with_code("owner, then run R CMD", 22.0, vec![0..5, 16..21]),
                    with_code("check and quote `x` as is.", 34.0, vec![0..5, 16..19]),
                ],
            ),
            block(
                Kind::Heading,
                2,
                vec![with_code("The tar command", 50.0, std::iter::once(4..7).collect())],
            ),
        ];
        let out = write(&blocks);
        assert_eq!(
            out.text,
            "use `--no-same-owner`, then run `R CMD check` and quote `` `x` `` as is.\n\n## The tar command"
        );
        assert_eq!(out.blocks[1].text.as_deref(), Some("The tar command"));
        let pieces: Vec<&str> = out.source_map.iter().map(|m| &out.text[m.span.range()]).collect();
        assert_eq!(
            pieces,
            [
                "use ",
                "--no-same-",
                "owner",
                ", then run ",
                "R CMD",
                "check",
                " and quote ",
                "`x`",
                " as is.",
                "The tar command"
            ]
        );
    }
}
