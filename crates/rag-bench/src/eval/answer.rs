//! The metric: is the gold answer in the rendered context?

/// `text` with every run of white space (Unicode `White_Space`) turned into one space, and none at
/// either end.
///
/// ```
/// assert_eq!(rag_bench::eval::answer::normalise_whitespace("  a\n\n  b\tc "), "a b c");
/// ```
pub fn normalise_whitespace(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// Whether `context` holds `answer` whole, comparing with white space normalised.
///
/// Line breaks and indentation may differ (a renderer may join or re-indent lines), but nothing
/// else: an answer that a chunk boundary cuts in two counts only if the context holds both halves
/// next to each other, as the document has them.
///
/// ```
/// use rag_bench::eval::answer::contains_answer;
/// assert!(contains_answer("x\n\nThe stream ends\n  when end() is called.", "The stream ends when end() is called."));
/// assert!(!contains_answer("The stream ends\n\n[2] when end() is called.", "The stream ends when end() is called."));
/// ```
pub fn contains_answer(context: &str, answer: &str) -> bool {
    normalise_whitespace(context).contains(&normalise_whitespace(answer))
}

/// HTML elements whose tags a Markdown source may hold inline (`<kbd>Ctrl</kbd>`): their tags are
/// markup, not words. Only lowercase names: Node.js writes its types `<Object>`, `<string>`, which
/// are words.
const INLINE_TAGS: [&str; 24] = [
    "a", "abbr", "b", "br", "code", "del", "div", "em", "i", "img", "ins", "kbd", "li", "ol", "p", "pre", "s", "samp",
    "span", "strong", "sub", "sup", "ul", "var",
];

/// The words a reader sees in `text`, Markdown or a text rendition of HTML, PDF or DOCX: maximal
/// runs of alphanumeric characters, in order, joined by single spaces, with a space at either end
/// (so that [`str::contains`] on two results matches whole words only).
///
/// What a rendering changes is left out first, so that the same passage gives the same words in
/// every format: HTML comments, Markdown link destinations (`](url)`) and reference labels
/// (`][label]`), character references (`&nbsp;`), and the tags of common inline HTML elements.
/// Punctuation, which renderings change too (quotes, dashes, list markers, table pipes), is not a
/// word.
///
/// ```
/// use rag_bench::eval::answer::rendered_words;
/// assert_eq!(rendered_words("See [`fs.open()`][open] &amp; <kbd>Ctrl</kbd>, <!-- x --> `<string>`."),
///     " See fs open Ctrl string ");
/// ```
pub fn rendered_words(text: &str) -> String {
    let mut kept = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(['<', ']', '&']) {
        kept.push_str(&rest[..at]);
        let tail = &rest[at..];
        let skip = if let Some(comment) = tail.strip_prefix("<!--") {
            comment.find("-->").map(|end| 4 + end + 3)
        } else if tail.starts_with("](") || tail.starts_with("][") {
            let close = if tail.as_bytes()[1] == b'(' { ')' } else { ']' };
            // The bracket itself stays: it ends the link text.
            tail[2..]
                .find(close)
                .filter(|&end| !tail[2..2 + end].contains('\n'))
                .map(|end| 2 + end + 1)
        } else if let Some(reference) = tail.strip_prefix('&') {
            let name = reference.find(';').filter(|&end| {
                end > 0 && end <= 10 && reference[..end].chars().all(|c| c.is_ascii_alphanumeric() || c == '#')
            });
            name.map(|end| 1 + end + 1)
        } else {
            inline_tag_len(tail)
        };
        match skip {
            Some(len) => {
                kept.push(' ');
                rest = &tail[len..];
            }
            None => {
                kept.push_str(&tail[..1]);
                rest = &tail[1..];
            }
        }
    }
    kept.push_str(rest);
    let mut out = String::with_capacity(kept.len() + 2);
    out.push(' ');
    for word in kept.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
        out.push_str(word);
        out.push(' ');
    }
    out
}

/// The length of the tag of one of [`INLINE_TAGS`] at the start of `text`, if one is there.
fn inline_tag_len(text: &str) -> Option<usize> {
    let inner = text.strip_prefix('<')?;
    let inner = inner.strip_prefix('/').unwrap_or(inner);
    let name_len = inner.find(|c: char| !c.is_ascii_lowercase()).unwrap_or(inner.len());
    if !INLINE_TAGS.contains(&&inner[..name_len]) {
        return None;
    }
    let after = &inner[name_len..];
    if !after.starts_with(['>', ' ', '/']) {
        return None;
    }
    let end = after.find('>').filter(|&end| !after[..end].contains(['<', '\n']))?;
    Some(text.len() - after.len() + end + 1)
}

/// Whether `context` holds the words of `answer` (see [`rendered_words`]), in order and next to
/// each other: the metric of a format variant of a corpus, where the same passage is rendered
/// from HTML, PDF or DOCX with other punctuation and markup than the Markdown's.
///
/// ```
/// use rag_bench::eval::answer::contains_answer_words;
/// let markdown = "The [`'close'`][close] event is emitted when\nthe stream is closed.";
/// assert!(contains_answer_words("# x\n\nThe `'close'` event is emitted when the stream is closed.", markdown));
/// assert!(!contains_answer_words("The `'close'` event is emitted. When the stream", markdown));
/// ```
pub fn contains_answer_words(context: &str, answer: &str) -> bool {
    let answer = rendered_words(answer);
    if answer.trim().is_empty() {
        false
    } else {
        rendered_words(context).contains(&answer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_ignore_markup_a_rendering_changes() {
        assert_eq!(rendered_words("**Default:** `10`."), " Default 10 ");
        assert_eq!(rendered_words("| `fd` | <integer> |"), " fd integer ");
        // A link keeps its text, loses its destination; a bracket alone is not a link.
        assert_eq!(
            rendered_words("[the docs](https://x.org/a.html) and [1]"),
            " the docs and 1 "
        );
        // Unknown or unclosed tags are words: `<Buffer>` is a type.
        assert_eq!(
            rendered_words("<Buffer> | <p>para</p> <span class=x>s</span> a < b"),
            " Buffer para s a b "
        );
        assert_eq!(rendered_words("caf&eacute; &#39;x&#39; & more"), " caf x more ");
    }

    #[test]
    fn answer_words_match_whole_words_in_order() {
        assert!(contains_answer_words("one two three four", "two three"));
        assert!(!contains_answer_words("one twothree four", "two three"));
        assert!(!contains_answer_words("three two", "two three"));
        assert!(!contains_answer_words("anything", "`...`"));
    }

    #[test]
    fn runs_of_any_white_space_become_one_space() {
        assert_eq!(normalise_whitespace("a \t\r\n b\u{a0}\u{2003}c"), "a b c");
        assert_eq!(normalise_whitespace("\n\n"), "");
    }

    #[test]
    fn an_answer_split_across_two_chunks_counts_only_when_they_are_adjacent_in_order() {
        let answer = "Call `end()` to finish. Then the `'finish'` event is emitted.";
        let first = "intro text. Call `end()` to finish.";
        let second = "Then the `'finish'` event is emitted. more";
        assert!(contains_answer(&format!("{first}\n\n{second}"), answer));
        assert!(!contains_answer(&format!("{second}\n\n{first}"), answer));
        assert!(!contains_answer(first, answer));
    }

    #[test]
    fn words_must_match_exactly() {
        assert!(!contains_answer("the Stream ends", "the stream ends"));
        assert!(!contains_answer("the streamends", "the stream ends"));
        assert!(contains_answer("the stream ends", "the stream ends"));
    }
}
