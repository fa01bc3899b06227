//! Writing data to stdout, and recognising a reader that went away.

use std::io;

/// Whether `err` (or anything in its chain) is a write to a closed pipe.
///
/// `serde_json::Error` hides its io error from `source()`, so it is asked directly.
pub(crate) fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        if let Some(io) = cause.downcast_ref::<io::Error>() {
            return io.kind() == io::ErrorKind::BrokenPipe;
        }
        if let Some(json) = cause.downcast_ref::<serde_json::Error>() {
            return json.io_error_kind() == Some(io::ErrorKind::BrokenPipe);
        }
        false
    })
}

/// Shortens `text` to one line of at most `max_chars` characters, for previews.
pub(crate) fn excerpt(text: &str, max_chars: usize) -> String {
    let mut out = String::with_capacity(max_chars + 3);
    let mut last_space = false;
    for (count, ch) in text
        .split_whitespace()
        .flat_map(|w| w.chars().chain(std::iter::once(' ')))
        .enumerate()
    {
        if count >= max_chars {
            out.truncate(out.trim_end().len());
            out.push_str("...");
            return out;
        }
        last_space = ch == ' ';
        out.push(ch);
    }
    if last_space {
        out.pop();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpts_are_one_line_and_bounded() {
        assert_eq!(excerpt("# Title\n\nBody  text", 80), "# Title Body text");
        assert_eq!(excerpt("abcdef ghij", 6), "abcdef...");
        assert_eq!(excerpt("", 10), "");
        assert_eq!(excerpt("日本語のテキスト", 3), "日本語...");
    }

    #[test]
    fn broken_pipes_are_recognised_through_context_and_json() {
        let io_err = io::Error::new(io::ErrorKind::BrokenPipe, "closed");
        assert!(is_broken_pipe(&anyhow::Error::new(io_err).context("writing chunks")));
        let json_err = serde_json::Error::io(io::Error::new(io::ErrorKind::BrokenPipe, "closed"));
        assert!(is_broken_pipe(&anyhow::Error::new(json_err)));
        assert!(!is_broken_pipe(&anyhow::anyhow!("other")));
    }
}
