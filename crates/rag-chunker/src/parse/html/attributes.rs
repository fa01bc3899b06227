//! A bound on the work html5ever's tokenizer spends on attributes, found before it sees the page.
//!
//! The tokenizer checks each attribute of a tag against the tag's earlier attributes for a
//! duplicate, so a tag of `n` attributes costs about `n²/2` name comparisons: one tag of 200,000
//! attributes (a 2 MB page) took 10 to 16 s. This pass counts those comparisons, at most, over the
//! whole page, and the page is refused when they exceed [`MAX_HTML_ATTRIBUTE_COMPARISONS`] plus
//! [`HTML_ATTRIBUTE_COMPARISONS_PER_BYTE`] per byte of the page: the tokenizer's work on
//! attributes stays linear in the page, and ordinary tags (a few dozen attributes) cost nothing
//! against it.
//!
//! Which `<` opens a tag depends on where the tokenizer is (text, a script, a comment, an
//! attribute value), and that depends on the tree builder. The pass does not guess: it follows
//! every reading at once, a small set of tokenizer states, each with the attributes of the tag it
//! would be in, and counts at each byte the most any reading would compare. So it never counts
//! fewer comparisons than the tokenizer makes, whatever the page; it may count more, for text in
//! a script or a comment that would be a tag elsewhere, which the allowance per byte absorbs.

use super::{HTML_ATTRIBUTE_COMPARISONS_PER_BYTE, MAX_HTML_ATTRIBUTE_COMPARISONS};

/// A state of the HTML tokenizer inside a tag (the standard's names), or just before one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    TagOpen,
    EndTagOpen,
    TagName,
    BeforeAttributeName,
    AttributeName,
    AfterAttributeName,
    BeforeAttributeValue,
    DoubleQuotedValue,
    SingleQuotedValue,
    UnquotedValue,
    AfterQuotedValue,
    SelfClosingStartTag,
}

const STATES: usize = 12;

const ALL: [State; STATES] = [
    State::TagOpen,
    State::EndTagOpen,
    State::TagName,
    State::BeforeAttributeName,
    State::AttributeName,
    State::AfterAttributeName,
    State::BeforeAttributeValue,
    State::DoubleQuotedValue,
    State::SingleQuotedValue,
    State::UnquotedValue,
    State::AfterQuotedValue,
    State::SelfClosingStartTag,
];

/// One reading: the tag it is in, from where, and how many attributes that tag has so far.
#[derive(Debug, Clone, Copy)]
struct Reading {
    tag_start: usize,
    attributes: usize,
}

impl Reading {
    const NONE: Reading = Reading {
        tag_start: 0,
        attributes: 0,
    };
}

/// The attributes of a page would cost the tokenizer more comparisons than the page is allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TooManyAttributes {
    /// Where, in the decoded text, the tag that ran over the allowance starts.
    pub(crate) tag_start: usize,
    /// The attributes that tag has at that point.
    pub(crate) attributes: usize,
}

/// The most comparisons a page of `len` bytes may cost.
pub(crate) fn allowance(len: usize) -> u64 {
    MAX_HTML_ATTRIBUTE_COMPARISONS.saturating_add((len as u64).saturating_mul(HTML_ATTRIBUTE_COMPARISONS_PER_BYTE))
}

fn is_space(byte: u8) -> bool {
    // The tokenizer reads `\r` as `\n`.
    matches!(byte, b'\t' | b'\n' | b'\x0c' | b'\r' | b' ')
}

/// The next state of a reading in `state` on `byte`, and whether the byte starts an attribute;
/// `None` when the reading leaves the tag (the tag ends, or the `<` opened none).
fn step(state: State, byte: u8) -> Option<(State, bool)> {
    use State::*;
    let space = is_space(byte);
    let next = match state {
        TagOpen => match byte {
            b'/' => EndTagOpen,
            _ if byte.is_ascii_alphabetic() => TagName,
            _ => return None,
        },
        EndTagOpen if byte.is_ascii_alphabetic() => TagName,
        EndTagOpen => return None,
        DoubleQuotedValue | SingleQuotedValue => {
            let quote = if state == DoubleQuotedValue { b'"' } else { b'\'' };
            if byte == quote { AfterQuotedValue } else { state }
        }
        // Outside a quoted value, `>` ends the tag (with or without a value for its last name).
        _ if byte == b'>' => return None,
        TagName => match byte {
            _ if space => BeforeAttributeName,
            b'/' => SelfClosingStartTag,
            _ => TagName,
        },
        AttributeName => match byte {
            _ if space => AfterAttributeName,
            b'/' => SelfClosingStartTag,
            b'=' => BeforeAttributeValue,
            _ => AttributeName,
        },
        AfterAttributeName => match byte {
            _ if space => AfterAttributeName,
            b'/' => SelfClosingStartTag,
            b'=' => BeforeAttributeValue,
            _ => return Some((AttributeName, true)),
        },
        BeforeAttributeValue => match byte {
            _ if space => BeforeAttributeValue,
            b'"' => DoubleQuotedValue,
            b'\'' => SingleQuotedValue,
            _ => UnquotedValue,
        },
        UnquotedValue if space => BeforeAttributeName,
        UnquotedValue => UnquotedValue,
        AfterQuotedValue if space => BeforeAttributeName,
        // Anything else is read again as the start of a name (an `=` too: it is the name's first
        // character).
        BeforeAttributeName | AfterQuotedValue | SelfClosingStartTag => match byte {
            _ if space => BeforeAttributeName,
            b'/' => SelfClosingStartTag,
            _ => return Some((AttributeName, true)),
        },
    };
    Some((next, false))
}

/// Per state and byte: whether a reading in the state stays in it on the byte, starting no
/// attribute (and the byte is not a `<`, which may open a tag for the reading of text).
fn stay_table() -> [[bool; 256]; STATES] {
    let mut table = [[false; 256]; STATES];
    for state in ALL {
        for byte in 0..=255u8 {
            table[state as usize][byte as usize] = byte != b'<' && step(state, byte) == Some((state, false));
        }
    }
    table
}

/// Whether every reading of `live` stays as it is on `byte`.
fn stays_all(table: &[[bool; 256]; STATES], live: u16, byte: u8) -> bool {
    let mut bits = live;
    while bits != 0 {
        if !table[bits.trailing_zeros() as usize][byte as usize] {
            return false;
        }
        bits &= bits - 1;
    }
    true
}

/// Checks that the tokenizer's duplicate-attribute checks on `text` (a decoded page) stay within
/// the page's allowance ([`allowance`]).
pub(crate) fn check(text: &str) -> Result<(), TooManyAttributes> {
    comparisons(text.as_bytes(), allowance(text.len())).map(|_| ())
}

/// The comparisons counted for `bytes`, or where they first exceed `allowance`.
fn comparisons(bytes: &[u8], allowance: u64) -> Result<u64, TooManyAttributes> {
    let mut counted: u64 = 0;
    // The readings by state, and the next byte's: `live` says which are set (one bit per
    // state); the others hold stale values that are never read.
    let (mut readings, mut next) = ([Reading::NONE; STATES], [Reading::NONE; STATES]);
    let mut live: u16 = 0;
    let stays = stay_table();
    let mut at = 0;
    while at < bytes.len() {
        if live == 0 {
            // Only the reading of text is alive: nothing happens before the next `<`.
            match memchr::memchr(b'<', &bytes[at..]) {
                Some(offset) => at += offset,
                None => break,
            }
        } else {
            // Nothing happens either while every reading stays as it is (inside a name, a
            // value): most bytes of a tag are passed here.
            while at < bytes.len() && stays_all(&stays, live, bytes[at]) {
                at += 1;
            }
            if at == bytes.len() {
                break;
            }
        }
        let byte = bytes[at];
        let mut next_live: u16 = 0;
        let mut charge = 0;
        let mut bits = live;
        while bits != 0 {
            let index = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let Some((to, starts_attribute)) = step(ALL[index], byte) else {
                continue;
            };
            let mut reading = readings[index];
            if starts_attribute {
                // The attribute before this one is compared with those before it.
                charge = charge.max(reading.attributes);
                reading.attributes += 1;
            }
            let bit = 1 << to as u16;
            let slot = &mut next[to as usize];
            if next_live & bit == 0 || slot.attributes < reading.attributes {
                *slot = reading;
            }
            next_live |= bit;
        }
        // Any `<` may open a tag, for the reading that is not in one (in text, a script, a
        // comment, ...).
        let open = 1 << State::TagOpen as u16;
        if byte == b'<' && next_live & open == 0 {
            next[State::TagOpen as usize] = Reading {
                tag_start: at,
                attributes: 0,
            };
            next_live |= open;
        }
        counted += charge as u64;
        if counted > allowance {
            let worst = (0..STATES)
                .filter(|&index| next_live & (1 << index) != 0)
                .map(|index| next[index])
                .max_by_key(|reading| reading.attributes)
                .unwrap_or(Reading {
                    tag_start: at,
                    attributes: charge,
                });
            return Err(TooManyAttributes {
                tag_start: worst.tag_start,
                attributes: worst.attributes,
            });
        }
        std::mem::swap(&mut readings, &mut next);
        live = next_live;
        at += 1;
    }
    Ok(counted)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::html::tree::{self, NodeData};

    fn counted(text: &str) -> u64 {
        comparisons(text.as_bytes(), u64::MAX).unwrap_or_else(|e| panic!("{e:?}"))
    }

    /// A tag of `n` attributes named `a0`, `a1`, ...
    fn tag_of(n: usize) -> String {
        let names: Vec<String> = (0..n).map(|i| format!("a{i}=x")).collect();
        format!("<div {}>t</div>", names.join(" "))
    }

    #[test]
    fn a_tag_of_n_attributes_costs_n_times_n_minus_one_halves() {
        assert_eq!(counted("<p>no attributes</p>"), 0);
        assert_eq!(counted(&tag_of(1)), 0);
        assert_eq!(counted(&tag_of(4)), 6);
        assert_eq!(counted(&tag_of(1000)), 1000 * 999 / 2);
        // Every way the standard starts a name: after a space, a quoted value, a slash; an
        // unquoted value after `=` and spaces is a value (five names: b, c, d, e, g).
        assert_eq!(counted("<a b c=\"1\"d='2'/e =f g= h>"), 1 + 2 + 3 + 4);
        // Several tags add up; end tags count too (the tokenizer reads their attributes).
        assert_eq!(counted("<i a b c></i x y z>"), 3 + 3);
    }

    #[test]
    fn a_quoted_value_neither_ends_the_tag_nor_holds_names() {
        assert_eq!(counted("<img alt=\"a > b c d\" src='e > f g' x y>"), 1 + 2 + 3);
        // A `<` inside it may be a tag for a reading of the page that is not in this value.
        assert!(counted("<img alt=\"<b c d e f\">") >= 1 + 2 + 3);
    }

    #[test]
    fn text_that_could_be_a_tag_elsewhere_is_counted_as_one() {
        // In a script, a comment or a title, `<x` opens no tag; the count does not know where the
        // tokenizer is, so it counts as much as it could cost.
        // `<b` opens a tag of the names `c`, `d)` and `{}<`, which runs to the `/` of
        // `</script>`, and `script` after it.
        assert_eq!(counted("<script>if (a<b c d) {}</script>"), 1 + 2 + 3);
        assert_eq!(counted("<!-- <b c d e> -->"), 3);
    }

    #[test]
    fn over_the_allowance_is_an_error_naming_the_tag() {
        let page = format!("<p>ok</p>{}", tag_of(100));
        let at = "<p>ok</p>".len();
        assert_eq!(comparisons(page.as_bytes(), 4950).ok(), Some(4950));
        let over = comparisons(page.as_bytes(), 4949).unwrap_err();
        assert_eq!(
            over,
            TooManyAttributes {
                tag_start: at,
                attributes: 100
            }
        );
        // The allowance of a real page is far above what its tags cost.
        let page = "<p class=a id=b style=c title=d lang=e dir=f>text</p>".repeat(1000);
        assert!(counted(&page) * 100 < allowance(page.len()));
    }

    /// Pieces of tag soup: tags with attributes and quoted values, raw-text elements, comments.
    fn soup_piece() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        prop_oneof![
            prop::sample::select(vec![
                "<p",
                "<b",
                "</p",
                "<script>",
                "</script>",
                "<style>",
                "</style>",
                "<title>",
                "</title>",
                "<textarea>",
                "</textarea>",
                "<svg>",
                "</svg>",
                "<!--",
                "-->",
                "<![CDATA[",
                "]]>",
                "<",
                ">",
                "/",
                "=",
                "\"",
                "'",
                " ",
                "\n",
                "&",
                "&amp;",
                "<!x>",
                "<?x?>",
                "</",
                "<plaintext>",
            ])
            .prop_map(str::to_owned),
            "[a-d]{1,2}",
            " [a-h]{1,2}",
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 256, ..Default::default() })]

        /// Whatever the soup, the count is never below the comparisons the tokenizer made for
        /// the tag of any element of the tree (`html` and `body` excepted: the tree builder adds
        /// the attributes of later `<html>` and `<body>` tags to the first).
        #[test]
        fn the_count_is_never_below_the_tokenizers(pieces in proptest::collection::vec(soup_piece(), 0..120)) {
            let page = pieces.concat();
            let tree = tree::build(&page, 100_000, 512).unwrap_or_else(|e| panic!("{e:?}"));
            let made: u64 = tree
                .nodes
                .iter()
                .filter(|node| !matches!(node.html_name(), "html" | "body"))
                .map(|node| match &node.data {
                    NodeData::Element { attrs, .. } => (attrs.len() * attrs.len().saturating_sub(1) / 2) as u64,
                    _ => 0,
                })
                .max()
                .unwrap_or(0);
            proptest::prop_assert!(counted(&page) >= made, "{page:?}: counted {} < {made}", counted(&page));
        }
    }
}
