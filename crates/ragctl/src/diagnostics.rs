//! Diagnostics on stderr: errors, warnings and notes, escaped and optionally coloured.
//!
//! Every message that echoes input (a file name, a chunk id, a tenant) goes through
//! [`escape_control`] first, so a hostile name cannot drive the terminal. `--quiet` silences
//! warnings and notes, never errors; `--color` decides whether the prefixes are coloured.
#![allow(clippy::print_stderr)] // this module is where the binary writes to stderr

use std::borrow::Cow;
use std::io::IsTerminal as _;
use std::sync::OnceLock;

use clap::ValueEnum;

/// When to colour output, as ripgrep spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ColorChoice {
    /// Colour when the stream is a terminal and `NO_COLOR` is unset or empty.
    Auto,
    /// Always colour, `NO_COLOR` notwithstanding.
    Always,
    /// Never colour.
    Never,
}

impl ColorChoice {
    /// Whether to colour a stream that is (or is not) a terminal.
    pub(crate) fn enabled(self, is_terminal: bool) -> bool {
        match self {
            Self::Always => true,
            Self::Never => false,
            Self::Auto => is_terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Settings {
    quiet: bool,
    color: bool,
}

static SETTINGS: OnceLock<Settings> = OnceLock::new();

/// Sets how diagnostics are written; called once, before any diagnostic.
pub(crate) fn init(quiet: bool, color: ColorChoice) {
    let _ = SETTINGS.set(Settings {
        quiet,
        color: color.enabled(std::io::stderr().is_terminal()),
    });
}

fn settings() -> Settings {
    SETTINGS.get().copied().unwrap_or(Settings {
        quiet: false,
        color: false,
    })
}

/// Whether `--quiet` was given: progress bars and other chatter stay off too.
pub(crate) fn quiet() -> bool {
    settings().quiet
}

fn print(prefix: &str, ansi: &str, message: &str) {
    let message = escape_control(message);
    if settings().color {
        eprintln!("\x1b[{ansi}m{prefix}:\x1b[0m {message}");
    } else {
        eprintln!("{prefix}: {message}");
    }
}

/// `error: MESSAGE`, always printed.
pub(crate) fn error(message: &str) {
    print("error", "1;31", message);
}

/// `warning: MESSAGE`, unless `--quiet`.
pub(crate) fn warning(message: &str) {
    if !quiet() {
        print("warning", "1;33", message);
    }
}

/// `note: MESSAGE`, unless `--quiet`.
pub(crate) fn note(message: &str) {
    if !quiet() {
        print("note", "1;36", message);
    }
}

/// The message of an error and its causes, each cause once: a cause whose text the message
/// already includes (an io error that a library error prints in its own message) is not repeated.
pub(crate) fn error_chain(err: &anyhow::Error) -> String {
    let mut message = String::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if message.contains(&text) {
            continue;
        }
        if !message.is_empty() {
            message.push_str(": ");
        }
        message.push_str(&text);
    }
    message
}

/// `text` with every control character written as an escape (`\x1b`, `\u{9b}`), so that it prints
/// as what it is instead of acting on the terminal. Escaped: C0 controls (line breaks and tabs
/// too), DEL, C1 controls, and the Unicode bidirectional overrides and isolates, which reorder
/// what a reader sees. A backslash is left alone: the output is for people, not for parsing.
pub(crate) fn escape_control(text: &str) -> Cow<'_, str> {
    if !text.chars().any(needs_escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for ch in text.chars() {
        if needs_escape(ch) {
            let code = u32::from(ch);
            if code < 0x80 {
                out.push_str(&format!("\\x{code:02x}"));
            } else {
                out.push_str(&format!("\\u{{{code:x}}}"));
            }
        } else {
            out.push(ch);
        }
    }
    Cow::Owned(out)
}

fn needs_escape(ch: char) -> bool {
    ch.is_control() || matches!(ch, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_and_text_is_kept() {
        assert_eq!(escape_control("plain é 日本"), "plain é 日本");
        assert!(matches!(escape_control("plain"), Cow::Borrowed(_)));
        assert_eq!(
            escape_control("\x1b]0;pwned\x07 a\tb\nc\u{7f}\u{9b}31m"),
            "\\x1b]0;pwned\\x07 a\\x09b\\x0ac\\x7f\\u{9b}31m"
        );
        assert_eq!(escape_control("abc\u{202e}fed"), "abc\\u{202e}fed");
    }

    #[test]
    fn a_cause_already_in_the_message_is_not_repeated() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "No such file or directory (os error 2)");
        let message = format!("a.md: cannot read: {io}");
        #[derive(Debug)]
        struct WithSource(String, std::io::Error);
        impl std::fmt::Display for WithSource {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }
        impl std::error::Error for WithSource {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.1)
            }
        }
        let err = anyhow::Error::new(WithSource(message, io));
        assert_eq!(
            error_chain(&err),
            "a.md: cannot read: No such file or directory (os error 2)"
        );
        let err = anyhow::anyhow!("inner").context("outer");
        assert_eq!(error_chain(&err), "outer: inner");
    }

    #[test]
    fn color_auto_follows_the_terminal() {
        assert!(ColorChoice::Always.enabled(false));
        assert!(!ColorChoice::Never.enabled(true));
        assert!(!ColorChoice::Auto.enabled(false));
    }
}
