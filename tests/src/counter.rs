//! The promises a [`TokenCounter`] makes when it says it
//! [splits at line starts](TokenCounter::splits_at_line_starts) or
//! [at spaces](TokenCounter::splits_at_spaces): counts add up across every line start (or space
//! boundary), so a chunker may sum the counts of lines (or sentences) instead of counting a chunk
//! again.
//!
//! ```
//! use rag_contract::counter::{additive_at_line_starts, additive_at_spaces, line_starts, space_boundaries};
//! use rag_contract::testing::WordCounter;
//!
//! assert_eq!(line_starts("a\n b\r\nc\rd"), [6, 8]);
//! assert!(additive_at_line_starts(&WordCounter, "one line\nand another\n").is_empty());
//! assert_eq!(space_boundaries("one two.\tthree  four\nfive"), [3, 8, 14]);
//! assert!(additive_at_spaces(&WordCounter, "one two.\tthree  four\nfive").is_empty());
//! ```

use rag_core::TokenCounter;

/// Byte offsets where the line-start promise applies: after `\n` or `\r`, before a character that
/// is neither whitespace nor `/`.
pub fn line_starts(text: &str) -> Vec<usize> {
    text.char_indices()
        .filter(|&(i, c)| i > 0 && !c.is_whitespace() && c != '/' && matches!(text.as_bytes()[i - 1], b'\n' | b'\r'))
        .map(|(i, _)| i)
        .collect()
}

/// Byte offsets where the space promise applies: after a character that is not whitespace, before
/// a whitespace character other than `\n` and `\r`.
pub fn space_boundaries(text: &str) -> Vec<usize> {
    let mut out = Vec::new();
    let mut previous: Option<char> = None;
    for (i, c) in text.char_indices() {
        if previous.is_some_and(|p| !p.is_whitespace()) && c.is_whitespace() && c != '\n' && c != '\r' {
            out.push(i);
        }
        previous = Some(c);
    }
    out
}

/// The sum of the counts of the pieces between all line starts equals the count of the whole;
/// returns what broke it (a different sum, or the counter failing), or nothing.
pub fn additive_at_line_starts(counter: &dyn TokenCounter, text: &str) -> Vec<String> {
    additive_at(counter, text, line_starts(text), "line starts")
}

/// The sum of the counts of the pieces between all space boundaries equals the count of the
/// whole; returns what broke it (a different sum, or the counter failing), or nothing.
pub fn additive_at_spaces(counter: &dyn TokenCounter, text: &str) -> Vec<String> {
    additive_at(counter, text, space_boundaries(text), "space boundaries")
}

fn additive_at(counter: &dyn TokenCounter, text: &str, mut cuts: Vec<usize>, what: &str) -> Vec<String> {
    let excerpt = &text[..text.floor_char_boundary(80)];
    cuts.push(text.len());
    let mut from = 0;
    let mut sum = 0;
    for cut in cuts {
        match counter.count(&text[from..cut]) {
            Ok(n) => sum += n,
            Err(err) => return vec![format!("{err} on the piece at byte {from} of {excerpt:?}")],
        }
        from = cut;
    }
    match counter.count(text) {
        Ok(whole) if whole == sum => Vec::new(),
        Ok(whole) => vec![format!(
            "{}: the pieces between {what} count {sum}, the whole {whole}: {excerpt:?}",
            counter.name()
        )],
        Err(err) => vec![format!("{err} on {excerpt:?}")],
    }
}
