//! Long Markdown parsed a window at a time, with the blocks of one parse of the whole.
//!
//! pulldown-cmark builds a tree of its whole input before its first event: about six times the
//! size of ordinary text, thirteen times for a table, forty for text dense with emphasis. So a long
//! text is parsed a window of about [`Windows::bytes`] at a time, and each window is cut where
//! pulldown-cmark's own parse of it shows that the blocks cannot change:
//!
//! - **Between top-level blocks**, at the start of the line of a block that starts at the top
//!   level: there pulldown-cmark has nothing open (the block before it was closed by its line or
//!   earlier) and parses the rest exactly as it would parse a new text.
//! - **Between the items of a top-level list**: the next window starts a list of its own, which
//!   differs from one parse only in whether the list is loose, which no block depends on.
//! - **Inside the first block of a window, when it runs on**: the next window starts with a few
//!   lines that leave pulldown-cmark in the state the cut left it in, and the blocks of those
//!   lines are dropped (the resumed block keeps growing): `p` for a paragraph, the opening line
//!   of a fence or an HTML block, the header and delimiter rows of a table (and as many short rows
//!   as the table had cells to fill in, for pulldown-cmark's limit on them), `>` or `> p` inside a
//!   block quote.
//!
//! Every block whose lines all lie before the cut is then the block of one parse of the whole,
//! since pulldown-cmark looks at most one line ahead, except for a metadata block: a line `---`
//! or `+++` opens one only if a closing line follows anywhere later. So a cut is never made past
//! such a line whose closing line might lie beyond the window; when it is the window's first line,
//! the window runs to that closing line instead (a metadata block's lines cost pulldown-cmark
//! little).
//!
//! A window that offers no cut grows, doubling, up to [`Windows::max_bytes`]; past that (a single
//! list item or footnote longer than that, say) it is cut at its last line start anyway and the
//! rest is parsed as a new text: a *forced* cut, the only place where the blocks may differ from
//! one parse. A line longer than a window is cut inside a paragraph or a fenced code block before
//! a letter, which cannot start a new block or close one.
//!
//! What differs from one parse is inline, and only in headings' titles: a reference link or
//! footnote in a heading whose definition lies in another window keeps its brackets, and in a
//! setext heading longer than a window, emphasis or a link that spans a cut keeps its marks.

use std::borrow::Cow;
use std::ops::{ControlFlow, Range};

use pulldown_cmark::{CodeBlockKind, Event, Tag, TagEnd};
use rag_core::{Block, BlockType, Span};

use super::{options, raw_blocks};
use crate::parse::{content_start, finish_blocks};

/// How much text one pulldown-cmark parse may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Windows {
    /// Bytes a window takes before its end moves on to the next line start.
    pub(super) bytes: usize,
    /// The most a window grows to, doubling, while it offers no cut that keeps the blocks.
    pub(super) max_bytes: usize,
}

impl Windows {
    /// 1 MiB windows, grown to 4 MiB at most: a parse holds tens of MB, not the text's multiple.
    pub(super) const DEFAULT: Windows = Windows {
        bytes: 1 << 20,
        max_bytes: 4 << 20,
    };
}

/// The blocks of a text, and what parsing it took.
pub(super) struct Segmented {
    pub(super) blocks: Vec<Block>,
    pub(super) stats: Stats,
}

/// What parsing a text in windows took, for tests that bound it.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct Stats {
    /// pulldown-cmark parses.
    pub(super) parses: usize,
    /// The longest text handed to pulldown-cmark at once: a window and the lines that resume it.
    pub(super) largest_parse: usize,
    /// Bytes handed to pulldown-cmark in all.
    pub(super) parsed_bytes: usize,
    /// Cuts made where a window of `max_bytes` offered none that keeps the blocks.
    pub(super) forced_cuts: usize,
}

impl Stats {
    /// Counts a parse of `bytes` bytes.
    fn count_parse(&mut self, bytes: usize) {
        self.parses += 1;
        self.parsed_bytes += bytes;
        self.largest_parse = self.largest_parse.max(bytes);
    }
}

/// A prefix longer than this is not copied: the block it would resume is cut by force instead.
const MAX_PREFIX_BYTES: usize = 64 << 10;

/// The blocks of `text` (finished, see [`finish_blocks`]), parsed a window at a time.
pub(super) fn markdown_blocks_in_windows(text: &str, windows: Windows) -> Segmented {
    let mut segmenter = Segmenter {
        text,
        windows,
        closers: LastClosers::of(text.as_bytes()),
        stats: Stats::default(),
        raw: Vec::new(),
        start: content_start(text),
        resumed: None,
        width: windows.bytes.max(1),
        min_end: 0,
        fill_in: false,
    };
    while segmenter.start < text.len() {
        if segmenter.parse_window().is_break() {
            break;
        }
    }
    Segmented {
        blocks: finish_blocks(text, segmenter.raw),
        stats: segmenter.stats,
    }
}

/// The walk of [`markdown_blocks_in_windows`] over a text: where the next window starts, what it
/// resumes, how far it may grow, and the raw blocks so far (in text offsets).
struct Segmenter<'a> {
    text: &'a str,
    windows: Windows,
    closers: LastClosers,
    stats: Stats,
    raw: Vec<Block>,
    start: usize,
    resumed: Option<Resumed>,
    width: usize,
    /// A window end a metadata opener asks for: its closing line, which must be in the window.
    min_end: usize,
    /// Whether a resumed table's window is parsed after rows that fill in cells (see
    /// [`Segmenter::must_fill_in_cells`]).
    fill_in: bool,
}

impl Segmenter<'_> {
    /// Parses the window at `start` and moves on: past a cut, or to a wider window, or to the same
    /// window parsed again. Breaks after the text's last window.
    fn parse_window(&mut self) -> ControlFlow<()> {
        let text = self.text;
        let bytes = text.as_bytes();
        let (start, end) = (self.start, self.window_end());
        let (body, prefix_len) = {
            let prefix = resume_prefix(self.resumed.as_ref(), self.fill_in);
            (window_body(text, &prefix, start..end), prefix.len())
        };
        self.stats.count_parse(body.len());
        let mut shape = Shape::new(prefix_len);
        let window_raw = raw_blocks(&body, prefix_len, &mut shape);
        if self.must_fill_in_cells(&shape) {
            self.fill_in = true;
            return ControlFlow::Continue(());
        }
        let window = Window {
            text,
            body: &body,
            start,
            end,
            prefix_len,
        };
        if end == text.len() {
            window.append(window_raw, usize::MAX, &mut self.raw, self.resumed.as_ref());
            return ControlFlow::Break(());
        }
        // The end of the window's last whole line (a window resumed inside a line may have none).
        let complete_end = if is_line_start(bytes, end) {
            end
        } else {
            (start..end).rev().find(|&at| is_line_start(bytes, at)).unwrap_or(start)
        };
        let opener = window.dangling_opener(&shape, complete_end, &self.closers);
        if let Some(cut) = window.choose(&shape, complete_end, opener.map(|(line, _)| line)) {
            self.cut(&window, &cut, &shape, window_raw);
            return ControlFlow::Continue(());
        }
        // A line that may open a metadata block closed beyond the window holds every cut back:
        // the window runs to that closing line instead.
        if let Some((_, at)) = opener {
            let closer_end = window.after_closer(at, &self.closers);
            if closer_end > end {
                self.min_end = closer_end;
                return ControlFlow::Continue(());
            }
        }
        if self.width < self.windows.max_bytes {
            self.width = self.width.saturating_mul(2);
            return ControlFlow::Continue(());
        }
        self.cut_by_force(&window, complete_end, window_raw);
        ControlFlow::Continue(())
    }

    /// Where the window at `start` ends, as wide as it has grown and reaching any closing line a
    /// metadata opener asks for.
    fn window_end(&self) -> usize {
        window_end(self.text.as_bytes(), self.start, self.width)
            .max(self.min_end)
            .min(self.text.len())
    }

    /// A resumed table whose rows reach pulldown-cmark's limit on filled-in cells: the window
    /// is parsed again after rows that fill in as many cells as the rows before it did.
    fn must_fill_in_cells(&self, shape: &Shape) -> bool {
        matches!(
            &self.resumed,
            Some(Resumed { table: Some(rows), .. })
                if !self.fill_in && rows.filled > 0 && rows.filled + shape.filled >= FILLED_CELLS_LIMIT
        )
    }

    /// Keeps the window's blocks before `cut` and starts the next window there, resuming the
    /// block the cut is inside.
    fn cut(&mut self, window: &Window<'_>, cut: &Cut, shape: &Shape, window_raw: Vec<Block>) {
        let first = window.append(window_raw, cut.keep, &mut self.raw, self.resumed.as_ref());
        self.resumed = window.resume(cut, shape, self.resumed.take(), first);
        self.start = window.to_text(cut.at);
        // The resumed block ends at the cut until the next window shows how far it goes on.
        if let Some(block) = self
            .resumed
            .as_ref()
            .and_then(|r| r.block)
            .and_then(|index| self.raw.get_mut(index))
        {
            block.span.end = block.span.end.min(self.start);
        }
        self.reset_width();
    }

    /// Cuts a window of the largest width that offers no cut keeping the blocks: the rest is
    /// parsed as a new text.
    fn cut_by_force(&mut self, window: &Window<'_>, complete_end: usize, window_raw: Vec<Block>) {
        let at = window.forced_cut(complete_end);
        window.append_before(window_raw, at, &mut self.raw, self.resumed.as_ref());
        self.stats.forced_cuts += 1;
        tracing::debug!(offset = at, "markdown window cut by force: no cut keeps the blocks");
        self.resumed = None;
        self.start = at;
        self.reset_width();
    }

    /// After a cut, the next window starts at the smallest width, with nothing asked of its end.
    fn reset_width(&mut self) {
        self.width = self.windows.bytes.max(1);
        self.min_end = 0;
        self.fill_in = false;
    }
}

/// The lines a window is parsed after, to resume the block the previous window was cut inside:
/// for a table past pulldown-cmark's limit on filled-in cells, rows that fill in as many cells
/// (when `fill_in`), else the resumed state's prefix.
fn resume_prefix(resumed: Option<&Resumed>, fill_in: bool) -> Cow<'_, str> {
    match resumed {
        Some(Resumed { table: Some(rows), .. }) if fill_in => Cow::Owned(table_prefix(rows)),
        Some(resumed) => Cow::Borrowed(resumed.prefix.as_str()),
        None => Cow::Borrowed(""),
    }
}

/// The text one parse takes: `prefix`, then `text[window]`; copied only when there is a prefix.
fn window_body<'t>(text: &'t str, prefix: &str, window: Range<usize>) -> Cow<'t, str> {
    if prefix.is_empty() {
        Cow::Borrowed(&text[window])
    } else {
        Cow::Owned([prefix, &text[window]].concat())
    }
}

/// Where a window ends: the first line start at least `width` bytes after `start`; inside a line
/// longer than the window, at most `2 * width` bytes after `start` on a character boundary.
fn window_end(bytes: &[u8], start: usize, width: usize) -> usize {
    let target = start.saturating_add(width);
    if target >= bytes.len() {
        return bytes.len();
    }
    let limit = start.saturating_add(width.saturating_mul(2)).min(bytes.len());
    let mut at = target;
    while at < limit {
        if is_line_start(bytes, at) && at > start {
            return at;
        }
        at += 1;
    }
    let mut at = limit;
    while at > target && !is_char_start(bytes, at) {
        at -= 1;
    }
    at
}

/// The state a window leaves for the next: the lines in front of it, and the block they resume.
struct Resumed {
    prefix: String,
    /// The block the resumed one continues, in the finished list (none for a table: its rows are
    /// blocks of their own).
    block: Option<usize>,
    /// For a table: its header and delimiter rows, and the cells pulldown-cmark filled in so far.
    table: Option<TableRows>,
}

#[derive(Clone)]
struct TableRows {
    header: String,
    columns: usize,
    filled: usize,
}

/// One window: `body` is the resuming prefix (`prefix_len` bytes) and `text[start..end]`.
struct Window<'a> {
    text: &'a str,
    body: &'a str,
    start: usize,
    end: usize,
    prefix_len: usize,
}

impl Window<'_> {
    /// The text offset of a body offset past the prefix.
    fn to_text(&self, at: usize) -> usize {
        self.start + at.saturating_sub(self.prefix_len)
    }

    /// The body offset of a text offset in the window.
    fn to_body(&self, at: usize) -> usize {
        at - self.start + self.prefix_len
    }

    /// Moves the first `keep` raw blocks of the window into `raw` in text offsets: blocks of the
    /// prefix are dropped, and the block that starts in the prefix and goes on past it extends the
    /// block it resumes. Returns where the window's first block went in `raw`.
    fn append(
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
    fn append_before(&self, window_raw: Vec<Block>, at: usize, raw: &mut Vec<Block>, resumed: Option<&Resumed>) {
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
    fn extend(&self, target: &mut Block, resumed: &Block) {
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
    fn dangling_opener(&self, shape: &Shape, complete_end: usize, closers: &LastClosers) -> Option<(usize, usize)> {
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
    fn after_closer(&self, at: usize, closers: &LastClosers) -> usize {
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
    fn choose(&self, shape: &Shape, complete_end: usize, limit: Option<usize>) -> Option<Cut> {
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
    fn cut_in_line(&self, shape: &Shape, complete_end: usize, limit: usize) -> Option<Cut> {
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
    fn line_has_pipe(&self, line: usize) -> bool {
        let bytes = self.text.as_bytes();
        bytes[line..line_end(bytes, line)].contains(&b'|')
    }

    /// A cut at the window's end when its only block was closed by its own last line or by a blank
    /// line, or when the window holds no block at all and ends in a blank line.
    fn cut_after_closed(&self, shape: &Shape, complete_end: usize, limit: usize) -> Option<Cut> {
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
    fn forced_cut(&self, complete_end: usize) -> usize {
        if complete_end > self.start {
            complete_end
        } else {
            self.end
        }
    }

    /// The state the next window resumes from, after `cut`.
    fn resume(&self, cut: &Cut, shape: &Shape, previous: Option<Resumed>, first: Option<usize>) -> Option<Resumed> {
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
const FILLED_CELLS_LIMIT: usize = 1 << 18;

/// A table's header and delimiter rows, then rows of one cell (and one of a few) that make
/// pulldown-cmark fill in `rows.filled` cells, as the rows before the cut made it. Only needed
/// where the table reaches [`FILLED_CELLS_LIMIT`]: short of it, the count changes nothing.
fn table_prefix(rows: &TableRows) -> String {
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
struct Cut {
    /// Where the next window starts: a line start, or a letter inside a line.
    at: usize,
    /// How many of the window's raw blocks lie before the cut (or are the block it resumes).
    keep: usize,
    resume: Resume,
}

/// Cuts at every line start of a block from `lines.start` to `lines.end` (body offsets), all
/// resumed alike.
#[derive(Debug, Clone)]
struct LineCuts {
    lines: Range<usize>,
    /// The window must hold every line up to here whole.
    whole_to: usize,
    keep: usize,
    resume: Resume,
    /// Whether blank lines are left out (indented code, where a blank line may end the block).
    skip_blank: bool,
}

impl LineCuts {
    /// The last line start at most `limit`.
    fn last(&self, body: &[u8], limit: usize) -> Option<Cut> {
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
enum Resume {
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

/// What the segmenter learns about a window from pulldown-cmark's events (see [`raw_blocks`]).
pub(super) struct Shape {
    prefix_len: usize,
    /// Tags open.
    depth: usize,
    /// Top-level blocks seen.
    tops: usize,
    /// The top-level block open, and where it started.
    top: Option<(TopKind, usize)>,
    first: Option<First>,
    cuts: Vec<Cut>,
    /// Cuts at any line of a block past its first.
    lines: Vec<LineCuts>,
    /// Where pulldown-cmark looked for a metadata block on a line that may open one.
    metadata_tries: Vec<usize>,
    /// Whether the last event started a list item or ended a block.
    after_block: bool,
    /// How far the blocks seen reach: the ends of all but lists and footnote definitions, whose
    /// ends may take in link reference definitions that follow them.
    covered_end: usize,
    /// The row of the first block (a table) open: its end, and whether it lies past the prefix.
    row: Option<(usize, bool)>,
    /// Cells pulldown-cmark filled in, in the first block's rows past the prefix.
    filled: usize,
    /// Blocks of the first block (a quote) seen, and the paragraph open in it.
    quote_children: usize,
    quote_paragraph: Option<usize>,
}

/// The window's first top-level block.
struct First {
    kind: TopKind,
    range: Range<usize>,
    /// Raw blocks up to and including it.
    keep: usize,
}

/// What kind of top-level block, as far as cutting goes.
#[derive(Debug, Clone)]
enum TopKind {
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
    pub(super) fn new(prefix_len: usize) -> Self {
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
    pub(super) fn observe(&mut self, body: &str, event: &Event<'_>, range: Range<usize>, blocks: usize) {
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
    fn boundary(&mut self, bytes: &[u8], at: usize, blocks: usize) {
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

    fn top_start(&mut self, bytes: &[u8], tag: &Tag<'_>, range: Range<usize>, blocks: usize) {
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

    fn top_end(&mut self, bytes: &[u8], range: Range<usize>, blocks: usize) {
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
    fn resume_cuts(&mut self, bytes: &[u8], block: Range<usize>, keep: usize, resume: &Resume, skip_blank: bool) {
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

    fn child_start(&mut self, bytes: &[u8], tag: &Tag<'_>, range: Range<usize>, blocks: usize) {
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

    fn child_end(&mut self, bytes: &[u8], range: Range<usize>, blocks: usize) {
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
    fn cell(&mut self, tag: &Tag<'_>, range: &Range<usize>) {
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
const TITLE_PIECE_BYTES: usize = 1 << 20;

/// The inline text of `range` of `text` (a paragraph's lines), as a heading's title has it: read
/// in pieces of about [`TITLE_PIECE_BYTES`], so emphasis or a link that spans two pieces keeps its
/// marks.
fn inline_text(text: &str, range: Range<usize>) -> String {
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
struct LastClosers {
    dashes: Option<usize>,
    pluses: Option<usize>,
}

impl LastClosers {
    fn of(bytes: &[u8]) -> Self {
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

    fn last(&self, delimiter: u8) -> Option<usize> {
        if delimiter == b'+' { self.pluses } else { self.dashes }
    }
}

/// The delimiter of the metadata block a line starting at `line` may open, as pulldown-cmark
/// decides on its first line: exactly three `-` or `+`, then only white space.
fn metadata_opener(line: &[u8]) -> Option<u8> {
    let delimiter = *line.first()?;
    if delimiter != b'-' && delimiter != b'+' {
        return None;
    }
    let run = line.iter().take_while(|&&b| b == delimiter).count();
    let rest = &line[run..];
    let rest = &rest[..rest
        .iter()
        .position(|&b| b == b'\n' || b == b'\r')
        .unwrap_or(rest.len())];
    (run == 3 && rest.iter().all(u8::is_ascii_whitespace)).then_some(delimiter)
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

/// Whether a line starting with `line` is text that can only start or go on with a paragraph: after
/// at most three spaces, a letter (or any non-ASCII character), or one of `*_+-#`~` right before
/// one. No other block starts so, nor does a line so begun end a paragraph.
fn is_plain_text(line: &[u8]) -> bool {
    let indent = line.iter().take_while(|&&b| b == b' ').count();
    let letter = |b: Option<&u8>| b.is_some_and(|&b| b.is_ascii_alphabetic() || b >= 0x80);
    indent < 4
        && match line.get(indent) {
            Some(b'*' | b'_' | b'+' | b'-' | b'#' | b'`' | b'~') => letter(line.get(indent + 1)),
            other => letter(other),
        }
}

/// Whether a line starting with `line` may close a fence: it starts, after at most three spaces,
/// with a backtick or a tilde.
fn may_close_fence(line: &[u8]) -> bool {
    let indent = line.iter().take_while(|&&b| b == b' ').count();
    indent < 4 && matches!(line.get(indent), Some(b'`' | b'~'))
}

/// A line of a block quote without its marker (`>` and one space), if it has one.
fn strip_quote_marker(line: &[u8]) -> &[u8] {
    let indent = line.iter().take_while(|&&b| b == b' ').count().min(3);
    match line[indent..].strip_prefix(b">") {
        Some(rest) => rest.strip_prefix(b" ").unwrap_or(rest),
        None => line,
    }
}

/// Whether a paragraph starting with `text` may begin with a link reference definition, whose
/// extent pulldown-cmark finds by reading on (a title may run over lines): a `[` whose label is
/// followed by `:`, or does not close on the line.
fn may_start_definition(text: &[u8]) -> bool {
    if text.first() != Some(&b'[') {
        return false;
    }
    let mut at = 1;
    while let Some(&b) = text.get(at) {
        match b {
            b'\\' => at += 1,
            b'[' => return false,
            b']' => return text.get(at + 1) == Some(&b':'),
            b'\n' | b'\r' => return true,
            _ => {}
        }
        at += 1;
    }
    true
}

/// Whether the line starting at `line` follows the block that ended at `block_end` with nothing
/// but white space (and `markers`, a block quote's) between, or follows a line that is blank but
/// for them.
fn follows_block_or_blank_line(bytes: &[u8], block_end: usize, line: usize, markers: &[u8]) -> bool {
    let blank = |text: &[u8]| text.iter().all(|b| b.is_ascii_whitespace() || markers.contains(b));
    blank(bytes.get(block_end.min(line)..line).unwrap_or_default())
        || line > 0 && blank(line_content(bytes, line_start(bytes, line - 1), line))
}

/// Whether a line of `bytes` in `from..to` is blank.
fn has_blank_line(bytes: &[u8], from: usize, to: usize) -> bool {
    let mut at = if is_line_start(bytes, from) {
        from
    } else {
        line_end(bytes, from)
    };
    while at < to {
        let next = line_end(bytes, at);
        if line_content(bytes, at, next).iter().all(u8::is_ascii_whitespace) {
            return true;
        }
        at = next;
    }
    false
}

/// Whether a line starts at `at`: the start of the text, or after `\n` or a `\r` not followed by
/// `\n` (pulldown-cmark's line breaks).
fn is_line_start(bytes: &[u8], at: usize) -> bool {
    at == 0
        || at >= bytes.len()
        || match bytes[at - 1] {
            b'\n' => true,
            b'\r' => bytes[at] != b'\n',
            _ => false,
        }
}

/// The start of the line holding `at`.
fn line_start(bytes: &[u8], at: usize) -> usize {
    let mut at = at.min(bytes.len());
    while !is_line_start(bytes, at) {
        at -= 1;
    }
    at
}

/// The start of the next line after the one holding `at` (the end of the text if it is the last).
fn line_end(bytes: &[u8], at: usize) -> usize {
    match bytes[at.min(bytes.len())..]
        .iter()
        .position(|&b| b == b'\n' || b == b'\r')
    {
        None => bytes.len(),
        Some(i) => {
            let at = at + i;
            if bytes[at] == b'\r' && bytes.get(at + 1) == Some(&b'\n') {
                at + 2
            } else {
                at + 1
            }
        }
    }
}

/// The line `from..to` without its line break.
fn line_content(bytes: &[u8], from: usize, to: usize) -> &[u8] {
    let line = &bytes[from..to];
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// `to`, moved back over the line breaks that end `from..to`.
fn trim_line_breaks(bytes: &[u8], from: usize, mut to: usize) -> usize {
    while to > from && matches!(bytes[to - 1], b'\n' | b'\r') {
        to -= 1;
    }
    to
}

fn is_char_start(bytes: &[u8], at: usize) -> bool {
    at >= bytes.len() || (bytes[at] as i8) >= -0x40
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The blocks of one parse of the whole text: the reference.
    fn whole(text: &str) -> Vec<Block> {
        let unlimited = Windows {
            bytes: usize::MAX,
            max_bytes: usize::MAX,
        };
        let segmented = markdown_blocks_in_windows(text, unlimited);
        assert_eq!(segmented.stats.parses, usize::from(content_start(text) < text.len()));
        segmented.blocks
    }

    /// Windows as small as `bytes`, growing without bound where they offer no cut, give the blocks
    /// of one parse, and never cut by force.
    fn assert_windows_equal_whole(text: &str) {
        let reference = whole(text);
        for bytes in [1, 3, 16, 64, 200] {
            let windows = Windows {
                bytes,
                max_bytes: usize::MAX,
            };
            let segmented = markdown_blocks_in_windows(text, windows);
            assert_eq!(segmented.stats.forced_cuts, 0, "{bytes}-byte windows: {text:?}");
            assert_same_blocks(
                &segmented.blocks,
                &reference,
                &format!("{bytes}-byte windows: {text:?}"),
            );
        }
    }

    /// `got` are the blocks of `want`, but for the one documented difference: a heading's title
    /// keeps the brackets of a reference whose definition another window holds.
    fn assert_same_blocks(got: &[Block], want: &[Block], context: &str) {
        let unbracketed = |b: &Block| {
            let mut b = b.clone();
            if b.text.as_deref().is_some_and(|t| t.contains('[')) {
                b.text = None;
            }
            b
        };
        let got: Vec<Block> = got.iter().map(unbracketed).collect();
        let want: Vec<Block> = want
            .iter()
            .zip(&got)
            .map(|(w, g)| {
                if g.text.is_none() && w.block_type == BlockType::Heading {
                    Block {
                        text: None,
                        ..w.clone()
                    }
                } else {
                    w.clone()
                }
            })
            .chain(want.iter().skip(got.len()).cloned())
            .collect();
        assert_eq!(got, want, "{context}");
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
            // Cuts inside blocks: the next window resumes them.
            "a paragraph\nover lines\nthat ends\nas a heading\n---\nafter\n",
            "| a | b |\n|---|---|\n| 1 | 2 |\n| 3 |\n| 4 | 5 | 6 |\nnot a row? it is\n\npara\n",
            "> one\n> two\nlazy\n> three\n>\n> # h\n> - item\n>   more\n\nafter\n",
            "```rust\nfn x() {}\n\n```\nstill\n```\n\n    code\n\n    more\n  ends\n",
            "<div>\nhtml\nlines\n\nnot html\n<!--\n\n-->\nx\n",
            "- a\n- b\n\n- c\n  more\n\n\n  tail\n- d\n1. one\n2. two\n",
            "- x\n  - y\n    - z\n- x2\n  - y2\n\n    para in y2\n- x3\n",
            "[a]: /u\n[b]: /v\n'title'\ntext [a]\n\n[c]:\n/w\n\n# [a] x\n",
            "line one\nline two\n|---|---|\n| a | b |\n|---|\n",
            "---\nfront: matter\n---\n\nbody\n\n---\nnot closed\n",
            "+++\nx\n\n+++\n",
            "text\r\nmore\r\n\r\n> q\r\n> r\r\n",
            "cr only\rlines\r\rpara\r",
        ] {
            assert_windows_equal_whole(text);
        }
    }

    #[test]
    fn windows_of_the_fixtures_and_the_docs_equal_the_whole() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
        let mut files = vec![format!("{root}/README.md"), format!("{root}/docs/architecture.md")];
        for dir in ["docs/reference", "crates/rag-chunker/tests/fixtures"] {
            for entry in std::fs::read_dir(format!("{root}/{dir}")).unwrap() {
                files.push(entry.unwrap().path().display().to_string());
            }
        }
        for file in files.iter().filter(|f| f.ends_with(".md")) {
            let text = std::fs::read_to_string(file).unwrap();
            let reference = whole(&text);
            for bytes in [64, 1000] {
                let windows = Windows {
                    bytes,
                    max_bytes: usize::MAX,
                };
                let segmented = markdown_blocks_in_windows(&text, windows);
                assert_eq!(segmented.stats.forced_cuts, 0, "{file}");
                assert_eq!(segmented.blocks.len(), reference.len(), "{file}, {bytes}-byte windows");
                for (got, want) in segmented.blocks.iter().zip(&reference) {
                    assert_eq!(got, want, "{file}, {bytes}-byte windows");
                }
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]
        #[test]
        fn windows_of_generated_markdown_equal_the_whole(
            lines in proptest::collection::vec(proptest::sample::select(&[
                "# H", "## Two", "###### Six", "####### seven", "#nospace", "   # three", "    # four", "\t# tab",
                "", "", "", "  ", "para text", "more text", "```", "```rust", "~~~~", "~~~", "    indented",
                "<!--", "-->", "<pre>", "</pre>", "<div>", "<script>", "</script>", "</style>", "<?x", "?>", "<!X",
                ">", "<![CDATA[", "]]>", "- item", "  - nested", "    - deeper", "1. one", "2. two", "> quote",
                "> > deep", ">", "> ```", "---", "+++", "...", "----", "--- ", "   ---", "- ---", "> ---", "1. +++",
                "***", "| a | b |", "|---|---|", "| 1 | 2 |", "| 3 |", "x | y", "[ref]: /url", "[^1]: note",
                "Setext", "===", "*emph* [ref]", "  ```", "- ```", "> - ```", "  ~~~", "<PRE>", "<!-- x -->",
                "  <!--", "   ```", "\t```", "1) item", "* item", "+ item", "-", "  ---", "> > ---", "  +++",
                "+++ ", "... ", "---\t", "<textarea>", "</textarea>", "<style>", "[x]:", "  /url", "'title'",
                "# H #", "#\tH", "> # quoted", "  lazy", "    code", "[^1]", "- [ ] task",
                "*a* **b** _c_ `d`", "a | b | c", "|-|-|-|", "| x |", "- [x] done", "> > > x", "   - three",
                "a long line of plain words that runs on", "<div class=\"x\">", "</div>", "\\", "  \\",
            ][..]), 0..48),
            crlf in proptest::bool::ANY,
        ) {
            let text = lines.join(if crlf { "\r\n" } else { "\n" });
            assert_windows_equal_whole(&text);
        }
    }

    /// `n` lines made by `line`, after `head`, before `tail`.
    fn lines(head: &str, n: usize, line: impl Fn(usize) -> String, tail: &str) -> String {
        let mut text = head.to_owned();
        for i in 0..n {
            text.push_str(&line(i));
        }
        text.push_str(tail);
        text
    }

    /// Texts of one shape each, with no block boundary for a long way: what one parse of the whole
    /// held in memory at once.
    fn shapes() -> Vec<(&'static str, String)> {
        let word = |i: usize| ["alpha", "beta", "gamma", "delta", "epsilon"][i % 5];
        let n = 1500;
        vec![
            (
                "table",
                lines(
                    "| id | name | note |\n|---:|:---|---|\n",
                    n,
                    |i| format!("| {i} | {} | x |\n", word(i)),
                    "",
                ),
            ),
            (
                "table of short rows",
                lines("| a | b | c |\n|---|---|---|\n", n, |i| format!("| {i} |\n"), ""),
            ),
            (
                "emphasis paragraph",
                lines("", n, |i| format!("*{}* **b** _c_ `d{i}` [e](u) ~~s~~\n", word(i)), ""),
            ),
            (
                "emphasis on one line",
                lines("", n, |i| format!("*{}* **b** _c_ `d{i}` [e](u) ", word(i)), "\n"),
            ),
            ("list items", lines("", n, |i| format!("- item {i}: {}\n", word(i)), "")),
            (
                "nested lists",
                lines(
                    "",
                    n / 3,
                    |i| format!("- one {i}\n  - two\n    - three {}\n", word(i)),
                    "",
                ),
            ),
            (
                "quote lines",
                lines("", n, |i| format!("> quoted {i} {}\n", word(i)), ""),
            ),
            ("quote paragraphs", lines("", n, |i| format!("> quoted {i}\n>\n"), "")),
            (
                "lazy quote",
                lines("> start\n", n, |i| format!("lazy {i} {}\n", word(i)), ""),
            ),
            (
                "html block",
                lines("<div>\n", n, |i| format!("<p>line {i}</p>\n"), "</div>\n"),
            ),
            (
                "html comment",
                lines("<!--\n", n, |i| format!("comment {i}\n\n"), "-->\n"),
            ),
            (
                "indented code",
                lines(
                    "",
                    n,
                    |i| format!("    code {i};\n{}", if i % 7 == 0 { "\n" } else { "" }),
                    "",
                ),
            ),
            (
                "fenced code",
                lines("```rust\n", n, |i| format!("let x{i} = {};\n", i * 7), "```\n"),
            ),
            (
                "setext heading",
                lines("", n, |i| format!("heading words {i}\n"), "===\n\nafter\n"),
            ),
            (
                "crlf paragraph",
                lines("", n, |i| format!("line {i} {}\r\n", word(i)), ""),
            ),
        ]
    }

    /// The windows the shape tests use: small, so that the texts need many.
    const SMALL: Windows = Windows {
        bytes: 2 << 10,
        max_bytes: 8 << 10,
    };

    #[test]
    fn every_shape_is_parsed_a_small_window_at_a_time_with_the_blocks_of_one_parse() {
        for (name, text) in shapes() {
            let segmented = markdown_blocks_in_windows(&text, SMALL);
            let stats = segmented.stats;
            assert_eq!(stats.forced_cuts, 0, "{name}: {stats:?}");
            // A window runs to the end of its line, at most twice its size, and the lines that
            // resume a block are short.
            assert!(stats.largest_parse <= 2 * SMALL.bytes + 64, "{name}: {stats:?}");
            assert!(stats.parses >= text.len() / (2 * SMALL.bytes), "{name}: {stats:?}");
            // Each byte is parsed about once: a window's tail after its cut is parsed again.
            assert!(stats.parsed_bytes < 2 * text.len(), "{name}: {stats:?}");
            assert_same_blocks(&segmented.blocks, &whole(&text), name);
        }
    }

    #[test]
    fn a_setext_heading_longer_than_a_window_keeps_its_level_and_title() {
        let text = lines("", 400, |i| format!("word{i} "), "\nmore words\n---\n\nafter\n");
        let segmented = markdown_blocks_in_windows(
            &text,
            Windows {
                bytes: 256,
                max_bytes: 1024,
            },
        );
        assert_eq!(segmented.stats.forced_cuts, 0);
        assert!(segmented.stats.parses > 4, "{:?}", segmented.stats);
        let reference = whole(&text);
        assert_eq!(reference[0].block_type, BlockType::Heading);
        assert_eq!(segmented.blocks, reference);
    }

    #[test]
    fn a_table_past_pulldown_cmarks_limit_on_filled_in_cells_ends_where_one_parse_ends_it() {
        // 100 columns, rows of one cell: 99 cells filled in per row, so pulldown-cmark stops the
        // table after about 2,650 rows (2^18 cells) and the rest is a paragraph.
        let header = format!("{}|\n{}|\n", "| c ".repeat(100), "|---".repeat(100));
        let text = lines(&header, 3000, |i| format!("r{i}\n"), "");
        let reference = whole(&text);
        let rows = reference.iter().filter(|b| b.block_type == BlockType::TableRow).count();
        assert!((2000..3000).contains(&rows), "{rows} rows");
        let segmented = markdown_blocks_in_windows(
            &text,
            Windows {
                bytes: 1024,
                max_bytes: 4096,
            },
        );
        assert_eq!(segmented.stats.forced_cuts, 0);
        assert_eq!(segmented.blocks, reference);
    }

    #[test]
    fn a_metadata_block_is_read_to_its_closing_line_in_one_window() {
        // Its opening line opens it only if a closing line follows, however far: no cut may pass
        // it, and its lines cost pulldown-cmark little.
        let text = lines(
            "---\ntitle: x\n",
            1000,
            |i| format!("key{i}: value\n"),
            "---\n\n# After\n",
        );
        let segmented = markdown_blocks_in_windows(&text, SMALL);
        assert_eq!(segmented.stats.forced_cuts, 0);
        assert!(segmented.stats.largest_parse > text.len() - 20);
        assert_eq!(segmented.blocks, whole(&text));
        assert_eq!(segmented.blocks[0].block_type, BlockType::Other);
    }

    #[test]
    fn a_list_item_longer_than_the_largest_window_is_cut_by_force_and_nothing_is_lost() {
        let text = lines("- item\n", 2000, |i| format!("  more text {i}\n"), "\nafter\n");
        let segmented = markdown_blocks_in_windows(&text, SMALL);
        let stats = segmented.stats;
        assert!(stats.forced_cuts > 0, "{stats:?}");
        assert!(stats.largest_parse <= 2 * SMALL.max_bytes + 64, "{stats:?}");
        // The blocks still keep the parser promises: in order, not overlapping, every
        // non-whitespace byte covered.
        let blocks = &segmented.blocks;
        assert!(blocks.windows(2).all(|w| w[0].span.end <= w[1].span.start));
        let covered: usize = blocks.iter().map(|b| b.span.end - b.span.start).sum();
        let content = text.bytes().filter(|b| !b.is_ascii_whitespace()).count();
        assert!(covered >= content);
        assert_eq!(blocks[0].block_type, BlockType::ListItem);
        assert_eq!(&text[blocks.last().unwrap().span.range()], "after");
    }
}
