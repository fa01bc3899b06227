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

use rag_core::Block;

use super::raw_blocks;
use crate::parse::{content_start, finish_blocks};

mod lines;
mod shape;
mod window;

use lines::{is_char_start, is_line_start};
use shape::LastClosers;
pub(super) use shape::Shape;
use window::{Cut, FILLED_CELLS_LIMIT, Resumed, Window, table_prefix};

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

#[cfg(test)]
mod tests {
    use rag_core::BlockType;

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
