//! The promise a [`TokenCounter`] makes when it says it
//! [splits at line starts](TokenCounter::splits_at_line_starts): counts add up across every line
//! start, so a chunker may sum the counts of lines instead of counting a chunk again.
//!
//! ```
//! use rag_contract::counter::{additive_at_line_starts, line_starts};
//! use rag_contract::testing::WordCounter;
//!
//! assert_eq!(line_starts("a\n b\r\nc\rd"), [6, 8]);
//! assert!(additive_at_line_starts(&WordCounter, "one line\nand another\n").is_empty());
//! ```

use rag_core::TokenCounter;

/// Byte offsets where the promise applies: after `\n` or `\r`, before a character that is neither
/// whitespace nor `/`.
pub fn line_starts(text: &str) -> Vec<usize> {
    text.char_indices()
        .filter(|&(i, c)| i > 0 && !c.is_whitespace() && c != '/' && matches!(text.as_bytes()[i - 1], b'\n' | b'\r'))
        .map(|(i, _)| i)
        .collect()
}

/// The sum of the counts of the pieces between all line starts equals the count of the whole;
/// returns what broke it (a different sum, or the counter failing), or nothing.
pub fn additive_at_line_starts(counter: &dyn TokenCounter, text: &str) -> Vec<String> {
    let excerpt = &text[..text.floor_char_boundary(80)];
    let mut cuts = line_starts(text);
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
            "{}: the pieces between line starts count {sum}, the whole {whole}: {excerpt:?}",
            counter.name()
        )],
        Err(err) => vec![format!("{err} on {excerpt:?}")],
    }
}
