//! Inline styles: what an element's `style` attribute says about whether it is shown.
//!
//! Only the two properties that hide text from every reader are read, `display: none` and
//! `visibility: hidden` (or `collapse`), as a browser reads a declaration block: property names
//! and keywords in any case, comments and escapes allowed, `!important`, the last declaration of
//! a property winning unless an earlier one is important. Stylesheets are not read: a class that
//! hides an element is not seen.

use super::tree::Node;

/// What a `style` attribute says about showing its element.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct InlineStyle {
    /// `display: none`: the element and everything in it are not rendered.
    pub(crate) display_none: bool,
    /// `visibility`: `Some(false)` for `hidden` or `collapse`, `Some(true)` for `visible` (which
    /// shows an element inside a hidden one), `None` when the element inherits its parent's.
    pub(crate) visible: Option<bool>,
}

/// How an element's own markup shows it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Shown {
    /// Not rendered, nor anything in it: the `hidden` attribute, `aria-hidden="true"` (hidden from
    /// assistive technology, and so from a reader that is not looking at the page), or an inline
    /// `display: none`.
    pub(crate) removed: bool,
    /// The inline `visibility`, as [`InlineStyle::visible`].
    pub(crate) visible: Option<bool>,
}

/// How `node`'s attributes show it.
pub(crate) fn shown(node: &Node) -> Shown {
    let style = node.attr("style").map(parse).unwrap_or_default();
    Shown {
        removed: node.attr("hidden").is_some()
            || node
                .attr("aria-hidden")
                .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
            || style.display_none,
        visible: style.visible,
    }
}

/// A declaration's value, and whether it is `!important`.
#[derive(Debug, Clone, Copy)]
struct Declared<T> {
    value: T,
    important: bool,
}

/// Keeps `next` over `kept` unless `kept` is important and `next` is not.
fn cascade<T>(kept: &mut Option<Declared<T>>, next: Declared<T>) {
    if !kept.as_ref().is_some_and(|k| k.important && !next.important) {
        *kept = Some(next);
    }
}

/// Reads the `style` attribute `style`.
pub(crate) fn parse(style: &str) -> InlineStyle {
    let mut display: Option<Declared<bool>> = None;
    let mut visibility: Option<Declared<Option<bool>>> = None;
    for declaration in declarations(&without_comments(style)) {
        let Some((name, value)) = declaration.split_once(':') else {
            continue;
        };
        let name = unescape(name.trim()).to_ascii_lowercase();
        let (value, important) = important(value);
        let value = unescape(value).to_ascii_lowercase();
        match name.as_str() {
            "display" => cascade(
                &mut display,
                Declared {
                    value: value == "none",
                    important,
                },
            ),
            "visibility" => {
                let visible = match value.as_str() {
                    "hidden" | "collapse" => Some(false),
                    "visible" | "initial" => Some(true),
                    // `inherit`, `unset`, `revert`: the parent's; anything else is invalid and
                    // ignored, as a browser ignores it.
                    "inherit" | "unset" | "revert" | "revert-layer" => None,
                    _ => continue,
                };
                cascade(
                    &mut visibility,
                    Declared {
                        value: visible,
                        important,
                    },
                );
            }
            _ => {}
        }
    }
    InlineStyle {
        display_none: display.is_some_and(|d| d.value),
        visible: visibility.and_then(|v| v.value),
    }
}

/// `style` without its `/* ... */` comments (an unclosed one runs to the end), each replaced by
/// nothing, as CSS reads them between tokens.
fn without_comments(style: &str) -> String {
    let mut out = String::with_capacity(style.len());
    let mut rest = style;
    while let Some(start) = rest.find("/*") {
        out.push_str(&rest[..start]);
        rest = match rest[start + 2..].find("*/") {
            Some(end) => &rest[start + 2 + end + 2..],
            None => "",
        };
    }
    out.push_str(rest);
    out
}

/// `style` with its CSS escapes resolved: `\` and one to six hex digits (and one white space
/// after them) is that code point, `\` and any other character is the character.
fn unescape(style: &str) -> String {
    if !style.contains('\\') {
        return style.to_owned();
    }
    let mut out = String::with_capacity(style.len());
    let mut chars = style.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let mut code = 0u32;
        let mut digits = 0;
        while digits < 6
            && let Some(digit) = chars.peek().and_then(|d| d.to_digit(16))
        {
            code = code * 16 + digit;
            digits += 1;
            chars.next();
        }
        if digits > 0 {
            out.push(char::from_u32(code).filter(|&c| c != '\0').unwrap_or('\u{fffd}'));
            if chars.peek().is_some_and(|c| c.is_ascii_whitespace()) {
                chars.next();
            }
        } else if let Some(escaped) = chars.next() {
            out.push(escaped);
        }
    }
    out
}

/// The declarations of a block: split at `;` outside strings and parentheses.
fn declarations(style: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut start, mut depth, mut quote) = (0, 0usize, None::<char>);
    for (at, c) in style.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '(') => depth += 1,
            (None, ')') => depth = depth.saturating_sub(1),
            (None, ';') if depth == 0 => {
                out.push(&style[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    out.push(&style[start..]);
    out
}

/// A value without a trailing `!important` (any case, white space around the `!`), and whether
/// it had one.
fn important(value: &str) -> (&str, bool) {
    let value = value.trim();
    let lower = value.to_ascii_lowercase();
    if let Some(before) = lower.strip_suffix("important")
        && let Some(bang) = before.trim_end().strip_suffix('!')
    {
        return (value[..bang.len()].trim_end(), true);
    }
    (value, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hides(style: &str) -> bool {
        let parsed = parse(style);
        parsed.display_none || parsed.visible == Some(false)
    }

    #[test]
    fn display_none_and_visibility_hidden_hide_in_any_spelling() {
        for style in [
            "display:none",
            "display: none;",
            "DISPLAY : NONE !important",
            "color: red; Display:None",
            "visibility:hidden",
            "visibility: COLLAPSE",
            "display:/* a comment */none",
            "display: n\\6f ne",
            "d\\isplay: none",
            "display: none ! IMPORTANT; display: block",
            "font-family: \"a;b\"; display: none",
            "background: url(a;b); visibility: hidden",
        ] {
            assert!(hides(style), "{style}");
        }
        for style in [
            "",
            "display: block",
            "display: none; display: block",
            "display: nonesuch",
            "visibility: visible",
            "visibility: hidden; visibility: visible",
            "visibility: bogus",
            "color: none",
            "/* display: none */",
            "content: 'display: none'",
        ] {
            assert!(!hides(style), "{style}");
        }
    }

    #[test]
    fn visibility_says_whether_it_is_inherited() {
        assert_eq!(parse("visibility: visible").visible, Some(true));
        assert_eq!(parse("visibility: inherit").visible, None);
        assert_eq!(parse("color: red").visible, None);
        assert_eq!(
            parse("visibility: hidden !important; visibility: visible").visible,
            Some(false)
        );
    }
}
