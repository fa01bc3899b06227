//! One window's parse: what its events say about where it may be cut, and what the next window
//! must resume.

use std::ops::Range;

use rag_core::{Block, BlockType, Span};

use super::lines::{
    closes_metadata, has_blank_line, is_plain_text, line_content, line_end, line_start, may_close_fence,
    metadata_opener, strip_quote_marker, trim_line_breaks,
};
use super::shape::{LastClosers, Shape, TopKind, inline_text};

/// The state a window leaves for the next: the lines in front of it, and the block they resume.
pub(super) struct Resumed {
    pub(super) prefix: String,
    /// The block the resumed one continues, in the finished list (none for a table: its rows are
    /// blocks of their own).
    pub(super) block: Option<usize>,
    /// For a table: its header and delimiter rows, and the cells pulldown-cmark filled in so far.
    pub(super) table: Option<TableRows>,
}

#[derive(Clone)]
pub(super) struct TableRows {
    pub(super) header: String,
    pub(super) columns: usize,
    pub(super) filled: usize,
}

/// One window: `body` is the resuming prefix (`prefix_len` bytes) and `text[start..end]`.
pub(super) struct Window<'a> {
    pub(super) text: &'a str,
    pub(super) body: &'a str,
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) prefix_len: usize,
}

impl Window<'_> {
    /// The text offset of a body offset past the prefix.
    pub(super) fn to_text(&self, at: usize) -> usize {
        self.start + at.saturating_sub(self.prefix_len)
    }

    /// The body offset of a text offset in the window.
    pub(super) fn to_body(&self, at: usize) -> usize {
        at - self.start + self.prefix_len
    }

    /// Moves the first `keep` raw blocks of the window into `raw` in text offsets: blocks of the
    /// prefix are dropped, and the block that starts in the prefix and goes on past it extends the
    /// block it resumes. Returns where the window's first block went in `raw`.
    pub(super) fn append(
        &self,
        window_raw: Vec<Block>,
        keep: usize,
        raw: &mut Vec<Block>,
        resumed: Option<&Resumed>,
    ) -> Option<usize> {
        let mut first = None;
        for mut block in window_raw.into_iter().take(keep) {
            let (from, to) = (block.span.start, block.span.end);
            if to <= self.prefix_len {
                continue;
            }
            if from < self.prefix_len {
                let target = resumed
                    .and_then(|r| r.block)
                    .and_then(|index| raw.get(index).map(|_| index));
                if let Some(index) = target {
                    self.extend(&mut raw[index], &block);
                    first.get_or_insert(index);
                }
                continue;
            }
            block.span = Span::new(self.to_text(from), self.to_text(to));
            first.get_or_insert(raw.len());
            raw.push(block);
        }
        first
    }

    /// [`append`](Self::append) for a forced cut at text offset `at`: the blocks that start before
    /// it, ending there at the latest.
    pub(super) fn append_before(
        &self,
        window_raw: Vec<Block>,
        at: usize,
        raw: &mut Vec<Block>,
        resumed: Option<&Resumed>,
    ) {
        let cut = self.to_body(at);
        let kept: Vec<Block> = window_raw
            .into_iter()
            .filter(|block| block.span.start < cut)
            .map(|mut block| {
                block.span.end = block.span.end.min(cut);
                block
            })
            .collect();
        self.append(kept, usize::MAX, raw, resumed);
    }

    /// Extends `target` by `resumed`, the block that goes on from it in this window; a paragraph
    /// that turns out to be a setext heading becomes one, its title read from all its windows.
    pub(super) fn extend(&self, target: &mut Block, resumed: &Block) {
        target.span.end = self.to_text(resumed.span.end);
        if resumed.block_type == BlockType::Heading && target.block_type == BlockType::Paragraph {
            let bytes = self.text.as_bytes();
            let end = trim_line_breaks(bytes, target.span.start, target.span.end);
            let underline = line_start(bytes, end.saturating_sub(1).max(target.span.start));
            target.block_type = BlockType::Heading;
            target.level = resumed.level;
            target.text = Some(inline_text(self.text, target.span.start..underline));
        }
    }

    /// The first line of the window that may open a metadata block whose closing line lies beyond
    /// the window, if any: where its line starts and where the opener starts (text offsets). No cut
    /// may pass that line.
    pub(super) fn dangling_opener(
        &self,
        shape: &Shape,
        complete_end: usize,
        closers: &LastClosers,
    ) -> Option<(usize, usize)> {
        let body = self.body.as_bytes();
        let end = self.to_body(complete_end);
        let closing_lines = |delimiter: u8| -> Vec<usize> {
            let mut lines = Vec::new();
            let mut at = self.prefix_len;
            while at < end {
                let next = line_end(body, at);
                if closes_metadata(line_content(body, at, next), delimiter) {
                    lines.push(at);
                }
                at = next;
            }
            lines
        };
        let mut closing: [Option<Vec<usize>>; 2] = [None, None];
        for &at in shape.metadata_tries.iter().filter(|&&at| at >= self.prefix_len) {
            let Some(delimiter) = metadata_opener(&body[at..]) else {
                continue;
            };
            // pulldown-cmark opens a metadata block only if its second line is neither blank nor
            // a closing line, and a closing line follows.
            let next = line_end(body, at);
            if next < end {
                let second = line_content(body, next, line_end(body, next));
                if second.iter().all(u8::is_ascii_whitespace) || closes_metadata(second, delimiter) {
                    continue;
                }
            }
            let lines = closing[usize::from(delimiter == b'+')].get_or_insert_with(|| closing_lines(delimiter));
            if lines.iter().any(|&line| line > next) {
                continue;
            }
            if closers.last(delimiter).is_some_and(|last| last >= complete_end) {
                let line = line_start(body, at).max(self.prefix_len);
                return Some((self.to_text(line), self.to_text(at)));
            }
        }
        None
    }

    /// The start of the line after the first line that closes the metadata block the line at text
    /// offset `at` may open; the end of the text if there is none.
    pub(super) fn after_closer(&self, at: usize, closers: &LastClosers) -> usize {
        let bytes = self.text.as_bytes();
        let Some(delimiter) = metadata_opener(&bytes[at..]) else {
            return bytes.len();
        };
        // The line after the opener cannot close it.
        let mut line = line_end(bytes, line_end(bytes, at));
        while line < bytes.len() && closers.last(delimiter).is_some_and(|last| line <= last) {
            let next = line_end(bytes, line);
            if closes_metadata(line_content(bytes, line, next), delimiter) {
                return next;
            }
            line = next;
        }
        bytes.len()
    }

    /// The cut to make: the last one pulldown-cmark's parse allows, up to `limit` if a line there
    /// may open a metadata block (text offsets, as `complete_end`, the end of the window's last
    /// whole line).
    pub(super) fn choose(&self, shape: &Shape, complete_end: usize, limit: Option<usize>) -> Option<Cut> {
        let complete_end = self.to_body(complete_end);
        let limit = limit.map_or(usize::MAX, |limit| self.to_body(limit));
        let body = self.body.as_bytes();
        let in_blocks = shape
            .lines
            .iter()
            .filter(|lines| lines.whole_to <= complete_end)
            .filter_map(|lines| lines.last(body, limit.min(complete_end)));
        let best = shape
            .cuts
            .iter()
            .cloned()
            .chain(in_blocks)
            .filter(|cut| cut.at > self.prefix_len && cut.at <= limit)
            // A new block (of the text or of a quote) must start on a line the window holds
            // whole; a resumed block may resume on the window's last line.
            .filter(|cut| !matches!(cut.resume, Resume::Fresh | Resume::QuoteChild) || cut.at < complete_end)
            .max_by_key(|cut| (cut.at, matches!(cut.resume, Resume::Fresh)));
        best.or_else(|| self.cut_in_line(shape, complete_end, limit))
            .or_else(|| self.cut_after_closed(shape, complete_end, limit))
    }

    /// A cut inside the window's last, partial line, where the window's only block (a paragraph,
    /// fenced code, or a quote whose last block is a paragraph) runs on through it: before a
    /// letter, which neither starts nor closes a block on the line it now begins. Offsets are body
    /// offsets.
    pub(super) fn cut_in_line(&self, shape: &Shape, complete_end: usize, limit: usize) -> Option<Cut> {
        let end = self.to_body(self.end);
        let body = self.body.as_bytes();
        let first = shape.first.as_ref()?;
        if complete_end == end || shape.tops != 1 || first.range.end < end {
            return None;
        }
        let (block, resume) = match &first.kind {
            TopKind::Paragraph => (first.range.clone(), Resume::Paragraph),
            TopKind::FencedCode => {
                let line = line_start(body, first.range.start)..line_end(body, first.range.start);
                (first.range.clone(), Resume::FirstLine(line))
            }
            TopKind::Quote {
                last_paragraph: Some(paragraph),
            } => (paragraph.clone(), Resume::QuoteParagraph),
            _ => return None,
        };
        // The window holds only the start of the partial line, but what the line is (a new block
        // or more of this one) may depend on all of it: the start must settle it.
        let line = &self.text.as_bytes()[self.to_text(complete_end)..];
        let settled = match resume {
            Resume::FirstLine(_) => !may_close_fence(line),
            Resume::QuoteParagraph => is_plain_text(strip_quote_marker(line)),
            _ => is_plain_text(line),
        };
        if !settled {
            return None;
        }
        if line_start(body, block.start) == complete_end {
            // The partial line is the block's first line: a fence's opening line cannot be cut, and
            // a paragraph's first line is a table's header if the next line is a delimiter row.
            if matches!(resume, Resume::FirstLine(_)) || self.line_has_pipe(self.to_text(complete_end)) {
                return None;
            }
        }
        let from = complete_end.max(self.prefix_len) + 1;
        let at = (from..end.min(limit.saturating_add(1)))
            .rev()
            .find(|&at| body[at].is_ascii_alphabetic() || body[at] >= 0xc0)?;
        Some(Cut {
            at,
            keep: first.keep,
            resume,
        })
    }

    /// Whether the line of the text starting at `line` holds a `|` anywhere (past the window, too).
    pub(super) fn line_has_pipe(&self, line: usize) -> bool {
        let bytes = self.text.as_bytes();
        bytes[line..line_end(bytes, line)].contains(&b'|')
    }

    /// A cut at the window's end when its only block was closed by its own last line or by a blank
    /// line, or when the window holds no block at all and ends in a blank line.
    pub(super) fn cut_after_closed(&self, shape: &Shape, complete_end: usize, limit: usize) -> Option<Cut> {
        let body = self.body.as_bytes();
        if complete_end != self.to_body(self.end) || complete_end > limit || shape.tops > 1 {
            return None;
        }
        let Some(first) = shape.first.as_ref() else {
            // Nothing but blank lines and link definitions: cut after the last blank line.
            if self.prefix_len > 0 {
                return None;
            }
            let mut at = complete_end;
            while at > self.prefix_len {
                let line = line_start(body, at - 1);
                if line_content(body, line, at).iter().all(u8::is_ascii_whitespace) {
                    return (at > self.prefix_len).then_some(Cut {
                        at,
                        keep: 0,
                        resume: Resume::Fresh,
                    });
                }
                at = line;
            }
            return None;
        };
        let after = &body[first.range.end.min(complete_end)..complete_end];
        let closed = match first.kind {
            TopKind::ClosedByItself => after.iter().all(u8::is_ascii_whitespace),
            TopKind::Paragraph | TopKind::Table { .. } | TopKind::Quote { .. } => {
                after.iter().all(u8::is_ascii_whitespace) && has_blank_line(body, first.range.end, complete_end)
            }
            _ => false,
        };
        closed.then_some(Cut {
            at: complete_end,
            keep: first.keep,
            resume: Resume::Fresh,
        })
    }

    /// Where a forced cut goes: `complete_end` (a text offset) if a line starts there after the
    /// window start, else the window's end, inside its one line.
    pub(super) fn forced_cut(&self, complete_end: usize) -> usize {
        if complete_end > self.start {
            complete_end
        } else {
            self.end
        }
    }

    /// The state the next window resumes from, after `cut`.
    pub(super) fn resume(
        &self,
        cut: &Cut,
        shape: &Shape,
        previous: Option<Resumed>,
        first: Option<usize>,
    ) -> Option<Resumed> {
        // The block a cut inside the first block resumes: the one this window resumed, if it is
        // that one, else the one it started.
        let resumes_previous = shape.first.as_ref().is_some_and(|f| f.range.start < self.prefix_len);
        let block = if resumes_previous {
            previous.as_ref().and_then(|r| r.block)
        } else {
            first
        };
        let prefix = |text: &str| -> Option<Resumed> {
            Some(Resumed {
                prefix: text.to_owned(),
                block,
                table: None,
            })
        };
        match &cut.resume {
            Resume::Fresh => None,
            Resume::Paragraph => prefix("p\n"),
            Resume::QuoteChild => prefix(">\n"),
            Resume::QuoteParagraph => prefix("> p\n"),
            Resume::FirstLine(line) => {
                if line.start < self.prefix_len {
                    previous
                } else {
                    prefix(&self.body[line.clone()])
                }
            }
            Resume::TableRow { filled } => {
                let Some(TopKind::Table { header, columns }) = shape.first.as_ref().map(|f| &f.kind) else {
                    return None;
                };
                let mut rows = match previous
                    .and_then(|r| r.table)
                    .filter(|_| header.start < self.prefix_len)
                {
                    Some(rows) => rows,
                    None => TableRows {
                        header: self.body[header.clone()].to_owned(),
                        columns: *columns,
                        filled: 0,
                    },
                };
                rows.filled += filled;
                Some(Resumed {
                    prefix: rows.header.clone(),
                    block: None,
                    table: Some(rows),
                })
            }
        }
    }
}

/// pulldown-cmark's limit on the empty cells it fills in over one table (rows with fewer cells than
/// the header get empty ones): past it, it ends the table.
pub(super) const FILLED_CELLS_LIMIT: usize = 1 << 18;

/// A table's header and delimiter rows, then rows of one cell (and one of a few) that make
/// pulldown-cmark fill in `rows.filled` cells, as the rows before the cut made it. Only needed
/// where the table reaches [`FILLED_CELLS_LIMIT`]: short of it, the count changes nothing.
pub(super) fn table_prefix(rows: &TableRows) -> String {
    let mut prefix = rows.header.clone();
    let per_row = rows.columns.saturating_sub(1);
    let mut filled = rows.filled;
    if per_row > 0 {
        while filled >= per_row {
            prefix.push_str("x\n");
            filled -= per_row;
        }
        if filled > 0 {
            prefix.push('x');
            for _ in filled..per_row {
                prefix.push_str("|x");
            }
            prefix.push('\n');
        }
    }
    prefix
}

/// A cut a window allows, in body offsets.
#[derive(Debug, Clone)]
pub(super) struct Cut {
    /// Where the next window starts: a line start, or a letter inside a line.
    pub(super) at: usize,
    /// How many of the window's raw blocks lie before the cut (or are the block it resumes).
    pub(super) keep: usize,
    pub(super) resume: Resume,
}

/// Cuts at every line start of a block from `lines.start` to `lines.end` (body offsets), all
/// resumed alike.
#[derive(Debug, Clone)]
pub(super) struct LineCuts {
    pub(super) lines: Range<usize>,
    /// The window must hold every line up to here whole.
    pub(super) whole_to: usize,
    pub(super) keep: usize,
    pub(super) resume: Resume,
    /// Whether blank lines are left out (indented code, where a blank line may end the block).
    pub(super) skip_blank: bool,
}

impl LineCuts {
    /// The last line start at most `limit`.
    pub(super) fn last(&self, body: &[u8], limit: usize) -> Option<Cut> {
        let mut at = line_start(body, limit.min(self.lines.end));
        while at >= self.lines.start {
            let blank = line_content(body, at, line_end(body, at))
                .iter()
                .all(u8::is_ascii_whitespace);
            if !(self.skip_blank && blank) {
                return Some(Cut {
                    at,
                    keep: self.keep,
                    resume: self.resume.clone(),
                });
            }
            if at == 0 {
                break;
            }
            at = line_start(body, at - 1);
        }
        None
    }
}

/// How the next window resumes after a cut.
#[derive(Debug, Clone)]
pub(super) enum Resume {
    /// It starts as a text of its own.
    Fresh,
    /// Inside a top-level paragraph, past its first line.
    Paragraph,
    /// Inside a top-level block quote, where a new block of the quote starts.
    QuoteChild,
    /// Inside a paragraph of a top-level block quote, past its first line.
    QuoteParagraph,
    /// Inside a fenced or indented code block or an HTML block, whose first line (this range of
    /// the body) sets what closes it.
    FirstLine(Range<usize>),
    /// At a row of a top-level table, after rows that had `filled` cells filled in.
    TableRow { filled: usize },
}
