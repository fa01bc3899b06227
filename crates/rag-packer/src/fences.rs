//! Fenced code blocks cut by a chunk boundary.
//!
//! The chunker cuts a long code block between lines, so a chunk can open a fence it does not
//! close (the rest of the block is in the next chunk) or start inside a block and close a fence it
//! never opened. Rendered as they are, the first turns everything after it in the prompt into
//! code, and the second opens a code block at its closing fence. [`balanced_fences`] gives the
//! text as the context renders it, with the missing fence added; [`code_prefix_end`] tells the
//! conflict detector where a chunk that starts inside a block leaves it.
//!
//! A fence line is optional indentation (spaces or tabs: fences nest in list items), then three
//! or more backticks or tildes, then an info string. It closes an open block when it uses the
//! same character, is at least as long, and has no info string (CommonMark's rule).
//!
//! Whether a chunk starts inside a block cannot be seen from its first line, so both readings
//! are tried: from outside a block, and (when the first fence is bare and comes after some text)
//! from inside one. A reading is inconsistent where a fence with an info string appears inside a
//! block (it cannot close it, and fenced blocks in documentation almost always have one when they
//! open) or where it ends inside a block; the reading with fewer inconsistencies wins, ties to
//! "outside".

use std::borrow::Cow;

/// One fence line of a text.
#[derive(Debug, Clone, Copy)]
struct Fence {
    /// Byte offset of the line's start.
    start: usize,
    /// Byte offset one past the line's end (its line break included).
    end: usize,
    marker: u8,
    len: usize,
    /// Whether an info string follows the marker.
    has_info: bool,
}

/// How a text's fences read: whether it starts inside a block (and where that block's closing
/// fence is), and the fence it leaves open at its end.
#[derive(Debug, Clone, Copy)]
struct Reading {
    /// The closing fence of the block the text starts in.
    starts_inside: Option<Fence>,
    /// The opening fence of the block still open at the end.
    open_at_end: Option<Fence>,
}

fn fence_lines(text: &str) -> Vec<Fence> {
    let mut fences = Vec::new();
    let mut start = 0;
    for line in text.split_inclusive('\n') {
        let end = start + line.len();
        let body = line.trim_start_matches([' ', '\t']);
        let marker = body.as_bytes().first().copied();
        if let Some(marker @ (b'`' | b'~')) = marker {
            let len = body.bytes().take_while(|&b| b == marker).count();
            let info = body[len..].trim();
            // A backtick fence's info string may not contain a backtick (that is inline code).
            if len >= 3 && !(marker == b'`' && info.contains('`')) {
                fences.push(Fence {
                    start,
                    end,
                    marker,
                    len,
                    has_info: !info.is_empty(),
                });
            }
        }
        start = end;
    }
    fences
}

/// Reads `fences` from the state `open`, returning the inconsistencies and the block open at the
/// end.
fn simulate(fences: &[Fence], mut open: Option<Fence>) -> (usize, Option<Fence>) {
    let mut inconsistencies = 0;
    for fence in fences {
        match open {
            Some(block) if fence.marker == block.marker && fence.len >= block.len && !fence.has_info => open = None,
            // A fence with an info string that would otherwise close the block cannot: a chunk that
            // started inside a block reads so. A shorter one is content (a fence shown in a fence).
            Some(block) => {
                if fence.has_info && fence.marker == block.marker && fence.len >= block.len {
                    inconsistencies += 1;
                }
            }
            None => open = Some(*fence),
        }
    }
    if open.is_some() {
        inconsistencies += 1;
    }
    (inconsistencies, open)
}

fn read(text: &str) -> Reading {
    let fences = fence_lines(text);
    let (outside_cost, outside_open) = simulate(&fences, None);
    let outside = Reading {
        starts_inside: None,
        open_at_end: outside_open,
    };
    let Some(&first) = fences.first() else {
        return outside;
    };
    if first.has_info || outside_cost == 0 {
        return outside;
    }
    // Inside a block the first fence closes; one as long as it, of its character, is assumed.
    let (inside_cost, inside_open) = simulate(&fences[1..], None);
    let prefix = &text[..first.start];
    // A sentence right before the fence introduces a block; a paragraph of prose right after it
    // follows one that ended. Without either sign, a fence at the very start may open as well as
    // close: then only a clear inconsistency (a fence with an info string inside a block)
    // overrules "outside".
    let introduced = prefix
        .lines()
        .rev()
        .find(|line| !line.trim().is_empty())
        .is_some_and(is_prose_line);
    let followed_by_prose = is_prose_paragraph(&paragraph_after(&text[first.end..]));
    let starts_inside = if followed_by_prose && !introduced {
        inside_cost <= outside_cost
    } else {
        let margin = usize::from(introduced || prefix.trim().is_empty());
        inside_cost + margin < outside_cost
    };
    if starts_inside {
        Reading {
            starts_inside: Some(first),
            open_at_end: inside_open,
        }
    } else {
        outside
    }
}

/// Whether `line` reads as a sentence of prose: it starts with a capital letter and ends with
/// `.`, `!`, `?` or `:` (a line of code seldom does both), or it ends with `:`.
fn is_prose_line(line: &str) -> bool {
    let line = line.trim();
    line.ends_with(':') || (line.chars().next().is_some_and(char::is_uppercase) && line.ends_with(['.', '!', '?']))
}

/// The first paragraph of `text`: its lines from the first non-blank one up to a blank line or a
/// fence line, joined by spaces.
fn paragraph_after(text: &str) -> String {
    text.lines()
        .skip_while(|line| line.trim().is_empty())
        .take_while(|line| {
            let body = line.trim();
            !body.is_empty() && !body.starts_with("```") && !body.starts_with("~~~")
        })
        .map(str::trim)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether a paragraph reads as prose: its first letter a capital and its end a sentence's (`.`,
/// `!`, `?`, `:`), a list marker, emphasis, links and code marks aside.
fn is_prose_paragraph(paragraph: &str) -> bool {
    let unlisted = paragraph.trim_start_matches(|c: char| c.is_ascii_digit());
    let unlisted = match unlisted.strip_prefix(['.', ')']) {
        Some(rest) if unlisted.len() < paragraph.len() => rest,
        _ => paragraph.strip_prefix(['-', '+']).unwrap_or(paragraph),
    };
    let body = unlisted.trim_start().trim_start_matches(['*', '_', '[', '(', '`']);
    let end = paragraph.trim_end_matches(['*', '_', ')', '`']);
    body.chars().next().is_some_and(char::is_uppercase) && end.ends_with(['.', '!', '?', ':'])
}

/// `text` with its fences balanced, as the rendered context shows it: a bare opening fence
/// before a text that starts inside a code block, a closing fence after one that ends inside
/// one (the same character and length as the fence it closes). Borrowed when nothing is missing.
///
/// ```
/// use rag_packer::balanced_fences;
///
/// assert_eq!(balanced_fences("Run it:\n```sh\nnpm test"), "Run it:\n```sh\nnpm test\n```");
/// assert_eq!(balanced_fences("npm test\n```\nThen read the log."), "```\nnpm test\n```\nThen read the log.");
/// assert_eq!(balanced_fences("No code here."), "No code here.");
/// ```
pub fn balanced_fences(text: &str) -> Cow<'_, str> {
    let reading = read(text);
    if reading.starts_inside.is_none() && reading.open_at_end.is_none() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    if let Some(close) = reading.starts_inside {
        out.push_str(&fence_text(close));
        out.push('\n');
    }
    out.push_str(text);
    if let Some(open) = reading.open_at_end {
        if !text.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&fence_text(open));
    }
    Cow::Owned(out)
}

/// The byte offset where a text that starts inside a code block leaves it (just past its closing
/// fence line); `None` when it starts outside one.
pub(crate) fn code_prefix_end(text: &str) -> Option<usize> {
    read(text).starts_inside.map(|fence| fence.end)
}

fn fence_text(fence: Fence) -> String {
    String::from_utf8(vec![fence.marker; fence.len]).unwrap_or_else(|_| "```".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unclosed_fence_is_closed_with_its_own_marker() {
        assert_eq!(balanced_fences("~~~~js\ncode\n"), "~~~~js\ncode\n~~~~");
        assert_eq!(balanced_fences("```\ncode\n```\n"), "```\ncode\n```\n");
    }

    #[test]
    fn a_chunk_that_starts_inside_a_block_is_reopened() {
        let text = "code();\n```\nProse, then another block:\n```js\nmore();\n```";
        assert_eq!(balanced_fences(text), format!("```\n{text}"));
        assert_eq!(code_prefix_end(text), Some("code();\n```\n".len()));
        // Bare blocks after prose read from outside.
        let bare = "Prose.\n```\ncode\n```\nMore prose.";
        assert_eq!(balanced_fences(bare), bare);
        assert_eq!(code_prefix_end(bare), None);
        // A sentence before a bare fence introduces the block: it reads from outside.
        assert_eq!(balanced_fences("Intro.\n```\ncode"), "Intro.\n```\ncode\n```");
        // Inline code with three backticks is not a fence.
        assert_eq!(balanced_fences("```a ` b```"), "```a ` b```");
    }

    #[test]
    fn a_closing_fence_on_the_first_line_before_prose_is_read_as_closing() {
        let text = "```\n\nYou can configure it too.\n\n```console\n$ git config x\n```\n";
        assert_eq!(balanced_fences(text), format!("```\n{text}"));
        let listed =
            "```\n\n7. Run `make`, which builds it.\n\n   ```none\n   # make\n   ```\n\n8. Start it.\n\n   ```none\n";
        assert_eq!(balanced_fences(listed), format!("```\n{listed}```"));
        // A bare fence on the first line before code opens a block.
        assert_eq!(balanced_fences("```\ncode\n"), "```\ncode\n```");
    }

    #[test]
    fn a_fence_shown_inside_a_longer_fence_is_content() {
        let nested = "Example:\n\n````md\n```python\nprint(1)\n```\n````\n\nMore.";
        assert_eq!(balanced_fences(nested), nested);
        assert_eq!(code_prefix_end(nested), None);
    }

    #[test]
    fn a_chunk_inside_a_block_on_both_ends_is_closed_and_reopened() {
        let text = "end();\n```\nText.\n```sh\nstart";
        assert_eq!(balanced_fences(text), format!("```\n{text}\n```"));
    }
}
