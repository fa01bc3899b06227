//! UAX #29 sentence boundaries of ASCII text, as `unicode-segmentation` finds them, without its
//! per-character table search: the same state machine (the last four parts of the text seen, runs
//! of closing marks and of spaces each one part) on the sentence-break classes of the 128 ASCII
//! characters. The tests compare it with `unicode-segmentation` on generated text.

/// The sentence-break class of an ASCII character (UAX #29, `SentenceBreakProperty.txt`); no
/// ASCII character is `OLetter`, `Sep`, `Extend` or `Format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Other,
    Cr,
    Lf,
    Sp,
    Lower,
    Upper,
    Numeric,
    ATerm,
    STerm,
    Close,
    SContinue,
}

fn class(byte: u8) -> Class {
    match byte {
        b'\r' => Class::Cr,
        b'\n' => Class::Lf,
        b'\t' | 0x0b | 0x0c | b' ' => Class::Sp,
        b'a'..=b'z' => Class::Lower,
        b'A'..=b'Z' => Class::Upper,
        b'0'..=b'9' => Class::Numeric,
        b'.' => Class::ATerm,
        b'!' | b'?' => Class::STerm,
        b'"' | b'\'' | b'(' | b')' | b'[' | b']' | b'{' | b'}' => Class::Close,
        b',' | b'-' | b':' | b';' => Class::SContinue,
        _ => Class::Other,
    }
}

/// One part of the text seen, the state of the rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Sot,
    Other,
    Cr,
    Lf,
    ATerm,
    UpperLower,
    ClosePlus,
    SpPlus,
    STerm,
}

/// The last four parts seen, the latest last.
#[derive(Debug, Clone, Copy)]
struct State([Part; 4]);

impl State {
    fn next(self, class: Class) -> Self {
        let parts = self.0;
        match (parts[3], class) {
            (Part::ClosePlus, Class::Close) | (Part::SpPlus, Class::Sp) => self,
            _ => Self([
                parts[1],
                parts[2],
                parts[3],
                match class {
                    Class::Cr => Part::Cr,
                    Class::Lf => Part::Lf,
                    Class::ATerm => Part::ATerm,
                    Class::Upper | Class::Lower => Part::UpperLower,
                    Class::Close => Part::ClosePlus,
                    Class::Sp => Part::SpPlus,
                    Class::STerm => Part::STerm,
                    _ => Part::Other,
                },
            ]),
        }
    }

    fn last(self) -> Part {
        self.0[3]
    }

    /// Where the terminator of `SATerm Close* Sp*` would be if the state ends with one, skipping
    /// the spaces (if `spaces`) and the closing marks.
    fn terminator(self, spaces: bool, breaks: bool) -> Part {
        let parts = self.0;
        let mut at = 3;
        if breaks && matches!(parts[at], Part::Cr | Part::Lf) {
            at -= 1;
        }
        if spaces && parts[at] == Part::SpPlus {
            at -= 1;
        }
        if parts[at] == Part::ClosePlus {
            at = at.saturating_sub(1);
        }
        parts[at]
    }

    fn after_sa_term(self, spaces: bool, breaks: bool) -> bool {
        matches!(self.terminator(spaces, breaks), Part::ATerm | Part::STerm)
    }
}

/// Rule SB8: after `ATerm Close* Sp*`, no break if a lowercase letter comes before any letter,
/// line break or terminator.
fn sb8(state: State, ahead: &[u8]) -> bool {
    state.terminator(true, false) == Part::ATerm
        && ahead.iter().map(|&b| class(b)).find(|c| {
            matches!(
                c,
                Class::Lower | Class::Upper | Class::Cr | Class::Lf | Class::STerm | Class::ATerm
            )
        }) == Some(Class::Lower)
}

/// The offsets in `text` (ASCII) where its sentences start, then its length: the boundaries
/// `unicode-segmentation`'s sentence iterator gives (none for an empty text).
pub(super) fn sentence_bounds(text: &[u8]) -> Vec<usize> {
    let mut bounds = Vec::new();
    let mut state = State([Part::Sot; 4]);
    for (at, &byte) in text.iter().enumerate() {
        let before = state;
        let class = class(byte);
        state = state.next(class);
        let sentence_starts = match class {
            _ if before.last() == Part::Sot => true,
            Class::Lf if before.last() == Part::Cr => false,
            _ if matches!(before.last(), Part::Cr | Part::Lf) => true,
            Class::Numeric if before.last() == Part::ATerm => false,
            Class::Upper if before.0[2] == Part::UpperLower && before.last() == Part::ATerm => false,
            _ if sb8(before, &text[at..]) => false,
            Class::SContinue | Class::STerm | Class::ATerm if before.after_sa_term(true, false) => false,
            Class::Close | Class::Sp | Class::Cr | Class::Lf if before.after_sa_term(false, false) => false,
            Class::Sp | Class::Cr | Class::Lf if before.after_sa_term(true, false) => false,
            _ => before.after_sa_term(true, true),
        };
        if sentence_starts {
            bounds.push(at);
        }
    }
    if !text.is_empty() {
        bounds.push(text.len());
    }
    bounds
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use unicode_segmentation::UnicodeSegmentation;

    use super::*;

    /// What `unicode-segmentation` finds: each sentence's start, then the end.
    fn reference(text: &str) -> Vec<usize> {
        let mut bounds: Vec<usize> = text.split_sentence_bound_indices().map(|(at, _)| at).collect();
        if !text.is_empty() {
            bounds.push(text.len());
        }
        bounds
    }

    #[test]
    fn every_ascii_character_is_classed_as_unicode_segmentation_classes_it() {
        // Each character between and after the contexts where the classes behave differently.
        for byte in 0u8..128 {
            let c = char::from(byte).to_string();
            for context in [
                "a{c}b",
                "a.{c}b",
                "a. {c}b",
                "a.){c} B",
                "a!{c}b",
                "A.{c}B",
                "a. {c} b",
                "a.{c}C",
                "x{c}. Y",
                "x.\r{c}y",
                "1.{c}2",
                "a? {c}Z",
                "a.) {c}b",
                "{c}{c}. {c}",
            ] {
                let text = context.replace("{c}", &c);
                assert_eq!(sentence_bounds(text.as_bytes()), reference(&text), "{text:?}");
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]

        #[test]
        fn ascii_text_is_split_as_unicode_segmentation_splits_it(
            parts in prop::collection::vec(prop::sample::select(&[
                "a", "word", "A", "Word", "1", "42", ".", "!", "?", "...", " ", "  ", "\t", "\u{b}", "\u{c}", "\n", "\r",
                "\r\n", "\"", "'", "(", ")", "[", "]", "{", "}", ",", "-", ":", ";", "#", "/", "`", "*", "_", "\u{0}",
                "\u{7f}", "e.g.", "U.S.", "x.Y", "3.5",
            ][..]), 0..40),
        ) {
            let text = parts.concat();
            prop_assert_eq!(sentence_bounds(text.as_bytes()), reference(&text), "{:?}", text);
        }
    }
}
