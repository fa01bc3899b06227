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

#[cfg(test)]
mod tests {
    use super::*;

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
