//! The counters' promises: counts add up across line starts and across spaces (what a chunker's
//! cost rests on), tables per thread count alike, and the `bpe-openai` backend counts exactly like
//! tiktoken-rs.

#![allow(clippy::unwrap_used)]

use proptest::prelude::*;
use rag_contract::counter::{additive_at_line_starts, additive_at_spaces, line_starts, space_boundaries};
use rag_contract::generate::line_text;
use rag_core::TokenCounter;
use rag_tokens::TiktokenCounter;

/// Texts of the shapes a chunker meets: Markdown, CRLF, a byte-order mark, CJK, emoji, special-token
/// text, and generated lines.
fn texts() -> Vec<String> {
    let mut texts = vec![
        "# Guide\n\n## Install\n\nRun `make install`.\n\n- one\n  - two\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```rust\nfn main() {}\n```\n> quoted\n".to_owned(),
        "\u{feff}# Title\r\n\r\nA paragraph.\r\nSecond line.\rLone CR.\r\n".to_owned(),
        "東京都は日本の首都です。\n北京是中华人民共和国的首都。\n\n日本語の文章には空白がない".to_owned(),
        "👩‍👩‍👧‍👦 family 🏳️‍🌈 flag 👍🏽\ne\u{301}le\u{300}ve naïve Tiếng Việt\n".to_owned(),
        "<|endoftext|> is text here\n<|fim_prefix|>\n".to_owned(),
        " \t\n\n   \n".to_owned(),
        "Ends. Starts again!  Two spaces?\tA tab; (brackets) \"quotes\" it's 3,000.5 x/y \u{a0}nbsp\u{3000}全角 \u{2028}ls\u{85}nel\u{b} vt\u{c}ff".to_owned(),
        "trailing space \nand a line\t\r\nwith CRLF \r\n  indented . , ; : ! ? ... -- 'quoted' 's 'll\n".to_owned(),
    ];
    texts.extend((0..4).map(|seed| line_text(400, seed)));
    texts
}

/// The count of a counter that cannot fail.
fn n(counter: &dyn TokenCounter, text: &str) -> usize {
    counter.count(text).unwrap()
}

/// The sum of the counts of the pieces between all line starts (and between all space
/// boundaries) equals the count of the whole.
fn assert_additive(counter: &dyn TokenCounter, text: &str) {
    let broken = additive_at_line_starts(counter, text);
    assert!(broken.is_empty(), "{broken:?}");
    let broken = additive_at_spaces(counter, text);
    assert!(broken.is_empty(), "{broken:?}");
}

#[test]
fn counts_add_up_across_line_starts_and_spaces() {
    let counters = [TiktokenCounter::cl100k(), TiktokenCounter::new("o200k_base").unwrap()];
    for counter in &counters {
        assert!(counter.splits_at_line_starts() && counter.splits_at_spaces());
        for text in texts() {
            assert_additive(counter, &text);
        }
    }
}

#[test]
fn a_line_start_means_a_non_whitespace_character_after_a_line_break() {
    // After "\n", a space or another line break may join the previous piece: the promise is
    // only about non-whitespace, and these show it could not be wider.
    let cl = TiktokenCounter::cl100k();
    assert_ne!(n(&cl, "a\n \nb"), n(&cl, "a\n") + n(&cl, " \nb"));
    assert_eq!(line_starts("a\n b\r\nc\rd"), [6, 8]);
    // o200k_base's punctuation pattern takes the line breaks and slashes after it (found by
    // fuzzing): a line that starts with '/' is not a line start for the promise.
    let o200k = TiktokenCounter::new("o200k_base").unwrap();
    assert_ne!(n(&o200k, "x!\n/no"), n(&o200k, "x!\n") + n(&o200k, "/no"));
    assert_eq!(line_starts("x!\n/no\ny"), [7]);
}

#[test]
fn a_space_boundary_means_whitespace_other_than_a_line_break_after_a_character_that_is_not() {
    let (cl, o200k) = (TiktokenCounter::cl100k(), TiktokenCounter::new("o200k_base").unwrap());
    for counter in [&cl, &o200k] {
        // Punctuation takes the line breaks after it: ".\n\n" is one token.
        assert_ne!(n(counter, "end.\n\nNext"), n(counter, "end.") + n(counter, "\n\nNext"));
        // After the space the word has lost the space it joins.
        assert_ne!(n(counter, "one two"), n(counter, "one ") + n(counter, "two"));
        // Between two spaces, the first may be a piece of its own or join the run.
        assert_ne!(n(counter, "a   b"), n(counter, "a ") + n(counter, "  b"));
    }
    assert_eq!(space_boundaries("a b\nc  d\u{a0}e"), [1, 5, 8]);
}

fn fragment() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(
            &[
                "a", "s", "'", ".", " ", "\t", "\n", "\r", "1", "é", "東", "👍", "\u{301}", "-", "/", "!",
            ][..],
        ),
        0..24,
    )
    .prop_map(|parts| parts.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_two_texts_joined_at_a_line_start_count_as_their_sum(
        a in fragment(), brk in prop::sample::select(&["\n", "\r"][..]), first in prop::sample::select(&["a", "'", ".", "1", "東", "👍", "\u{301}"][..]), b in fragment(),
    ) {
        let (left, right) = (format!("{a}{brk}"), format!("{first}{b}"));
        for counter in [TiktokenCounter::cl100k(), TiktokenCounter::new("o200k_base").unwrap()] {
            prop_assert_eq!(n(&counter, &format!("{left}{right}")), n(&counter, &left) + n(&counter, &right));
        }
    }

    #[test]
    fn any_two_texts_joined_at_a_space_count_as_their_sum(
        a in fragment(), last in prop::sample::select(&["a", "'", ".", "1", "東", "👍", "\u{301}", "/", "-"][..]),
        space in prop::sample::select(&[" ", "\t", "\u{a0}", "\u{3000}", "\u{2028}", "\u{85}", "\u{b}"][..]), b in fragment(),
    ) {
        let (left, right) = (format!("{a}{last}"), format!("{space}{b}"));
        for counter in [TiktokenCounter::cl100k(), TiktokenCounter::new("o200k_base").unwrap()] {
            prop_assert_eq!(n(&counter, &format!("{left}{right}")), n(&counter, &left) + n(&counter, &right));
        }
    }
}

#[cfg(feature = "bpe-openai")]
#[test]
fn bpe_openai_counts_and_encodes_like_tiktoken() {
    use rag_tokens::BpeOpenAiCounter;
    for encoding in ["cl100k_base", "o200k_base"] {
        let (tiktoken, bpe) = (
            TiktokenCounter::new(encoding).unwrap(),
            BpeOpenAiCounter::new(encoding).unwrap(),
        );
        assert_eq!(bpe.name(), tiktoken.name());
        assert!(bpe.splits_at_line_starts() && bpe.splits_at_spaces());
        for text in texts() {
            assert_eq!(bpe.encode(&text), tiktoken.encode(&text), "{encoding}");
            for line in text.split_inclusive('\n') {
                assert_eq!(n(&bpe, line), n(&tiktoken, line), "{encoding}: {line:?}");
            }
            assert_additive(&bpe, &text);
        }
    }
    assert!(BpeOpenAiCounter::new("p50k_base").is_err());
}
