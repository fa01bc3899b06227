//! Byte-level facts about lines that the cut rules ask: metadata delimiters, fences, quote
//! markers, line starts and ends.

/// The delimiter of the metadata block a line starting at `line` may open, as pulldown-cmark
/// decides on its first line: exactly three `-` or `+`, then only white space.
pub(super) fn metadata_opener(line: &[u8]) -> Option<u8> {
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
pub(super) fn closes_metadata(line: &[u8], delimiter: u8) -> bool {
    let closer = |c: u8| {
        let run = line.iter().take_while(|&&b| b == c).count();
        run == 3 && line[run..].iter().all(|&b| b == b' ')
    };
    closer(delimiter) || (delimiter == b'-' && closer(b'.'))
}

/// Whether a line starting with `line` is text that can only start or go on with a paragraph: after
/// at most three spaces, a letter (or any non-ASCII character), or one of `*_+-#`~` right before
/// one. No other block starts so, nor does a line so begun end a paragraph.
pub(super) fn is_plain_text(line: &[u8]) -> bool {
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
pub(super) fn may_close_fence(line: &[u8]) -> bool {
    let indent = line.iter().take_while(|&&b| b == b' ').count();
    indent < 4 && matches!(line.get(indent), Some(b'`' | b'~'))
}

/// A line of a block quote without its marker (`>` and one space), if it has one.
pub(super) fn strip_quote_marker(line: &[u8]) -> &[u8] {
    let indent = line.iter().take_while(|&&b| b == b' ').count().min(3);
    match line[indent..].strip_prefix(b">") {
        Some(rest) => rest.strip_prefix(b" ").unwrap_or(rest),
        None => line,
    }
}

/// Whether a paragraph starting with `text` may begin with a link reference definition, whose
/// extent pulldown-cmark finds by reading on (a title may run over lines): a `[` whose label is
/// followed by `:`, or does not close on the line.
pub(super) fn may_start_definition(text: &[u8]) -> bool {
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
pub(super) fn follows_block_or_blank_line(bytes: &[u8], block_end: usize, line: usize, markers: &[u8]) -> bool {
    let blank = |text: &[u8]| text.iter().all(|b| b.is_ascii_whitespace() || markers.contains(b));
    blank(bytes.get(block_end.min(line)..line).unwrap_or_default())
        || line > 0 && blank(line_content(bytes, line_start(bytes, line - 1), line))
}

/// Whether a line of `bytes` in `from..to` is blank.
pub(super) fn has_blank_line(bytes: &[u8], from: usize, to: usize) -> bool {
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
pub(super) fn is_line_start(bytes: &[u8], at: usize) -> bool {
    at == 0
        || at >= bytes.len()
        || match bytes[at - 1] {
            b'\n' => true,
            b'\r' => bytes[at] != b'\n',
            _ => false,
        }
}

/// The start of the line holding `at`.
pub(super) fn line_start(bytes: &[u8], at: usize) -> usize {
    let mut at = at.min(bytes.len());
    while !is_line_start(bytes, at) {
        at -= 1;
    }
    at
}

/// The start of the next line after the one holding `at` (the end of the text if it is the last).
pub(super) fn line_end(bytes: &[u8], at: usize) -> usize {
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
pub(super) fn line_content(bytes: &[u8], from: usize, to: usize) -> &[u8] {
    let line = &bytes[from..to];
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// `to`, moved back over the line breaks that end `from..to`.
pub(super) fn trim_line_breaks(bytes: &[u8], from: usize, mut to: usize) -> usize {
    while to > from && matches!(bytes[to - 1], b'\n' | b'\r') {
        to -= 1;
    }
    to
}

pub(super) fn is_char_start(bytes: &[u8], at: usize) -> bool {
    at >= bytes.len() || (bytes[at] as i8) >= -0x40
}
