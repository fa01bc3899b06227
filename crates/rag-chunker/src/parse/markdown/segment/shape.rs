//! What the segmenter learns from pulldown-cmark's events about the blocks of a window.

use std::ops::Range;

use pulldown_cmark::{CodeBlockKind, Event, Tag, TagEnd};

use super::MAX_PREFIX_BYTES;
use super::lines::{
    closes_metadata, follows_block_or_blank_line, is_line_start, line_content, line_end, line_start,
    may_start_definition, metadata_opener, trim_line_breaks,
};
use super::window::{Cut, LineCuts, Resume};
use super::window_end;
use crate::parse::markdown::options;

/// What the segmenter learns about a window from pulldown-cmark's events (see [`raw_blocks`]).
pub(in crate::parse::markdown) struct Shape {
    pub(super) prefix_len: usize,
    /// Tags open.
    pub(super) depth: usize,
    /// Top-level blocks seen.
    pub(super) tops: usize,
    /// The top-level block open, and where it started.
    pub(super) top: Option<(TopKind, usize)>,
    pub(super) first: Option<First>,
    pub(super) cuts: Vec<Cut>,
    /// Cuts at any line of a block past its first.
    pub(super) lines: Vec<LineCuts>,
    /// Where pulldown-cmark looked for a metadata block on a line that may open one.
    pub(super) metadata_tries: Vec<usize>,
    /// Whether the last event started a list item or ended a block.
    pub(super) after_block: bool,
    /// How far the blocks seen reach: the ends of all but lists and footnote definitions, whose
    /// ends may take in link reference definitions that follow them.
    pub(super) covered_end: usize,
    /// The row of the first block (a table) open: its end, and whether it lies past the prefix.
    pub(super) row: Option<(usize, bool)>,
    /// Cells pulldown-cmark filled in, in the first block's rows past the prefix.
    pub(super) filled: usize,
    /// Blocks of the first block (a quote) seen, and the paragraph open in it.
    pub(super) quote_children: usize,
    pub(super) quote_paragraph: Option<usize>,
}

/// The window's first top-level block.
pub(super) struct First {
    pub(super) kind: TopKind,
    pub(super) range: Range<usize>,
    /// Raw blocks up to and including it.
    pub(super) keep: usize,
}

/// What kind of top-level block, as far as cutting goes.
#[derive(Debug, Clone)]
pub(super) enum TopKind {
    Paragraph,
    FencedCode,
    /// Indented code and HTML blocks: resumed from their first line, never cut inside a line.
    FirstLineSets,
    Table {
        header: Range<usize>,
        columns: usize,
    },
    Quote {
        /// The range of the quote's last paragraph, when it is still the quote's last block.
        last_paragraph: Option<Range<usize>>,
    },
    /// Headings, rules and metadata blocks end on their own last line.
    ClosedByItself,
    /// Lists, footnote definitions: only their items are cut between.
    Other,
}

impl Shape {
    pub(in crate::parse::markdown) fn new(prefix_len: usize) -> Self {
        Self {
            prefix_len,
            depth: 0,
            tops: 0,
            top: None,
            first: None,
            cuts: Vec::new(),
            lines: Vec::new(),
            metadata_tries: Vec::new(),
            after_block: false,
            covered_end: prefix_len,
            row: None,
            filled: 0,
            quote_children: 0,
            quote_paragraph: None,
        }
    }

    /// Sees one event of the window's parse; `blocks` raw blocks were made before it.
    pub(in crate::parse::markdown) fn observe(
        &mut self,
        body: &str,
        event: &Event<'_>,
        range: Range<usize>,
        blocks: usize,
    ) {
        let bytes = body.as_bytes();
        // Where a block's text starts on a line like `---` or `+++`, pulldown-cmark looked for a
        // metadata block: at a paragraph (or the setext heading it became), a rule, or text right
        // after a block in a tight list item (whose paragraphs have no events).
        let tight_paragraph = self.after_block && matches!(event, Event::Text(_));
        let block = matches!(event, Event::Start(Tag::Paragraph | Tag::Heading { .. }) | Event::Rule);
        if (block || tight_paragraph) && metadata_opener(&bytes[range.start..]).is_some() {
            self.metadata_tries.push(range.start);
        }
        match event {
            Event::End(TagEnd::List(_) | TagEnd::FootnoteDefinition) => {}
            Event::End(_) | Event::Rule => self.covered_end = self.covered_end.max(range.end),
            _ => {}
        }
        self.after_block = match event {
            Event::Start(tag) => matches!(tag, Tag::Item),
            Event::End(end) => !matches!(
                end,
                TagEnd::Emphasis
                    | TagEnd::Strong
                    | TagEnd::Strikethrough
                    | TagEnd::Superscript
                    | TagEnd::Subscript
                    | TagEnd::Link
                    | TagEnd::Image
            ),
            Event::Rule => true,
            _ => false,
        };
        match event {
            Event::Start(tag) => {
                let depth = self.depth;
                self.depth += 1;
                match depth {
                    0 => self.top_start(bytes, tag, range, blocks),
                    1 => self.child_start(bytes, tag, range, blocks),
                    2 => self.cell(tag, &range),
                    _ => {}
                }
            }
            Event::End(_) => {
                self.depth = self.depth.saturating_sub(1);
                match self.depth {
                    0 => self.top_end(bytes, range, blocks),
                    1 => self.child_end(bytes, range, blocks),
                    _ => {}
                }
            }
            Event::Rule if self.depth == 0 => {
                self.tops += 1;
                self.boundary(bytes, range.start, blocks);
                if self.tops == 1 {
                    self.first = Some(First {
                        kind: TopKind::ClosedByItself,
                        range,
                        keep: blocks + 1,
                    });
                }
            }
            _ => {}
        }
    }

    /// A cut before a top-level block (or list item) starting at `at`, if only indentation
    /// precedes it on its line, it lies past the prefix, and it does not follow a link reference
    /// definition directly (the line after one is read as the rest of a paragraph, where a line
    /// such as `</pre>` starts no HTML block).
    pub(super) fn boundary(&mut self, bytes: &[u8], at: usize, blocks: usize) {
        let line = line_start(bytes, at);
        if at >= self.prefix_len
            && bytes[line..at].iter().all(|&b| b == b' ' || b == b'\t')
            && follows_block_or_blank_line(bytes, self.covered_end, line, b"")
        {
            self.cuts.push(Cut {
                at: line,
                keep: blocks,
                resume: Resume::Fresh,
            });
        }
    }

    pub(super) fn top_start(&mut self, bytes: &[u8], tag: &Tag<'_>, range: Range<usize>, blocks: usize) {
        self.tops += 1;
        self.boundary(bytes, range.start, blocks);
        let line = line_start(bytes, range.start);
        let kind = match tag {
            Tag::Paragraph => TopKind::Paragraph,
            Tag::CodeBlock(CodeBlockKind::Fenced(_)) => TopKind::FencedCode,
            Tag::CodeBlock(CodeBlockKind::Indented) | Tag::HtmlBlock => TopKind::FirstLineSets,
            Tag::Table(alignments) => {
                let header_end = line_end(bytes, line_end(bytes, line));
                TopKind::Table {
                    header: line..header_end,
                    columns: alignments.len(),
                }
            }
            Tag::BlockQuote(_) => TopKind::Quote { last_paragraph: None },
            Tag::Heading { .. } | Tag::MetadataBlock(_) => TopKind::ClosedByItself,
            _ => TopKind::Other,
        };
        self.top = Some((kind, range.start));
    }

    pub(super) fn top_end(&mut self, bytes: &[u8], range: Range<usize>, blocks: usize) {
        let Some((kind, start)) = self.top.take() else {
            return;
        };
        if self.tops != 1 {
            return;
        }
        let block = start..range.end;
        match &kind {
            TopKind::Paragraph if !may_start_definition(&bytes[start..]) => {
                self.resume_cuts(bytes, block.clone(), blocks, &Resume::Paragraph, false);
            }
            TopKind::FencedCode | TopKind::FirstLineSets => {
                let first_line = line_start(bytes, start)..line_end(bytes, start);
                if first_line.len() <= MAX_PREFIX_BYTES {
                    let skip_blank = matches!(kind, TopKind::FirstLineSets);
                    self.resume_cuts(bytes, block.clone(), blocks, &Resume::FirstLine(first_line), skip_blank);
                }
            }
            _ => {}
        }
        let kind = match kind {
            TopKind::Quote { .. } => TopKind::Quote {
                last_paragraph: self.quote_paragraph.map(|paragraph| paragraph..range.end),
            },
            kind => kind,
        };
        self.first = Some(First {
            kind,
            range: block,
            keep: blocks,
        });
    }

    /// Cuts at the lines of `block` past its first, resumed as `resume`.
    pub(super) fn resume_cuts(
        &mut self,
        bytes: &[u8],
        block: Range<usize>,
        keep: usize,
        resume: &Resume,
        skip_blank: bool,
    ) {
        let end = trim_line_breaks(bytes, block.start, block.end);
        let second = line_end(bytes, block.start);
        if second < end {
            // A paragraph's first line is a table's header if its second line is a delimiter row:
            // the window must hold that line whole.
            let paragraph = matches!(resume, Resume::Paragraph | Resume::QuoteParagraph);
            self.lines.push(LineCuts {
                lines: second..line_start(bytes, end - 1),
                whole_to: if paragraph { line_end(bytes, second) } else { second },
                keep,
                resume: resume.clone(),
                skip_blank,
            });
        }
    }

    pub(super) fn child_start(&mut self, bytes: &[u8], tag: &Tag<'_>, range: Range<usize>, blocks: usize) {
        let Some((kind, top_start)) = self.top.as_ref() else {
            return;
        };
        // Only for blocks of a quote or rows of a table: the children of a paragraph are inline,
        // many to a line.
        let line = || line_start(bytes, range.start);
        match kind {
            TopKind::Other if matches!(tag, Tag::Item) => self.boundary(bytes, range.start, blocks),
            TopKind::Quote { .. } if self.tops == 1 => {
                self.quote_paragraph = matches!(tag, Tag::Paragraph).then_some(range.start);
                let line = line();
                let markers = bytes[line..range.start]
                    .iter()
                    .all(|&b| b == b' ' || b == b'\t' || b == b'>');
                if self.quote_children > 0
                    && line > line_start(bytes, *top_start)
                    && markers
                    && follows_block_or_blank_line(bytes, self.covered_end, line, b">")
                {
                    self.cuts.push(Cut {
                        at: line,
                        keep: blocks,
                        resume: Resume::QuoteChild,
                    });
                }
                self.quote_children += 1;
            }
            TopKind::Table { header, .. } if self.tops == 1 && matches!(tag, Tag::TableRow) => {
                let in_body = range.start >= self.prefix_len;
                self.row = Some((range.end, in_body));
                if in_body && header.len() <= MAX_PREFIX_BYTES {
                    self.cuts.push(Cut {
                        at: line(),
                        keep: blocks,
                        resume: Resume::TableRow { filled: self.filled },
                    });
                }
            }
            _ => {}
        }
    }

    pub(super) fn child_end(&mut self, bytes: &[u8], range: Range<usize>, blocks: usize) {
        if self.tops != 1 || !matches!(self.top, Some((TopKind::Quote { .. }, _))) {
            return;
        }
        if let Some(start) = self.quote_paragraph
            && !may_start_definition(&bytes[start..])
        {
            self.resume_cuts(bytes, start..range.end, blocks, &Resume::QuoteParagraph, false);
        }
    }

    /// Counts a cell pulldown-cmark filled in (an empty cell at the end of its row, past the line
    /// break) in a row of the first block's table.
    pub(super) fn cell(&mut self, tag: &Tag<'_>, range: &Range<usize>) {
        if let (Tag::TableCell, Some((row_end, true))) = (tag, self.row)
            && range.start == range.end
            && range.start == row_end
        {
            self.filled += 1;
        }
    }
}

/// A setext heading's title is read in one piece up to this length, a piece of about this length
/// at a time past it.
pub(super) const TITLE_PIECE_BYTES: usize = 1 << 20;

/// The inline text of `range` of `text` (a paragraph's lines), as a heading's title has it: read
/// in pieces of about [`TITLE_PIECE_BYTES`], so emphasis or a link that spans two pieces keeps its
/// marks.
pub(super) fn inline_text(text: &str, range: Range<usize>) -> String {
    let bytes = text.as_bytes();
    let mut title = String::new();
    // From the line start, with the first line's indentation (a tab is four columns).
    let mut start = line_start(bytes, range.start);
    // Every piece is read as the rest of a paragraph: the first line too, since it may follow a
    // link reference definition, where an indented line is text, not code. Only a first line
    // like `===` is read on its own, since after a paragraph line it would underline it.
    let first_line = line_content(bytes, start, line_end(bytes, start));
    let mut resumed = !first_line.iter().all(|&b| b == b'=' || b == b' ' || b == b'\t');
    while start < range.end {
        let mut end = window_end(bytes, start, TITLE_PIECE_BYTES).min(range.end);
        if end < range.end && !is_line_start(bytes, end) {
            // Inside a long line: before a letter, as the blocks were cut, where there is one.
            if let Some(letter) = (start + 1..end)
                .rev()
                .find(|&at| bytes[at].is_ascii_alphabetic() || bytes[at] >= 0xc0)
            {
                end = letter;
            }
        }
        let prefix = if resumed { "p\n" } else { "" };
        let body = [prefix, &text[start..end]].concat();
        for (event, at) in pulldown_cmark::Parser::new_ext(&body, options()).into_offset_iter() {
            if at.end <= prefix.len() {
                continue;
            }
            match event {
                Event::Text(t) | Event::Code(t) | Event::InlineMath(t) | Event::DisplayMath(t) => title.push_str(&t),
                Event::SoftBreak | Event::HardBreak => title.push(' '),
                _ => {}
            }
        }
        if end < range.end && is_line_start(bytes, end) {
            title.truncate(title.trim_end().len());
            title.push(' ');
        }
        start = end;
        resumed = true;
    }
    title.trim().to_owned()
}

/// The start of the last line of the text holding a `---`, `+++` or `...` line that closes a
/// metadata block, by delimiter: a line that opens one past it cannot be closed.
pub(super) struct LastClosers {
    pub(super) dashes: Option<usize>,
    pub(super) pluses: Option<usize>,
}

impl LastClosers {
    pub(super) fn of(bytes: &[u8]) -> Self {
        let (mut dashes, mut pluses) = (None, None);
        let mut at = 0;
        while at < bytes.len() {
            let next = line_end(bytes, at);
            let line = line_content(bytes, at, next);
            if closes_metadata(line, b'-') {
                dashes = Some(at);
            }
            if closes_metadata(line, b'+') {
                pluses = Some(at);
            }
            at = next;
        }
        Self { dashes, pluses }
    }

    pub(super) fn last(&self, delimiter: u8) -> Option<usize> {
        if delimiter == b'+' { self.pluses } else { self.dashes }
    }
}
