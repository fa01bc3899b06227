//! Stage 8: advisory notes where packed chunks disagree.
//!
//! The rules are deliberately simple and literal, so a reader can predict them:
//!
//! - Only **prose** makes claims. Before anything is compared, a chunk's text loses what is not
//!   prose: fenced code blocks, inline code spans, HTML comments and tags, URLs and link targets,
//!   and version strings (`v18.11.0`, `1.31.2`, any number right after a `v`). A number in an
//!   example or a release note is not a statement about the world.
//! - A **quantity claim** is a number in a sentence together with the (up to) three words right
//!   before it in the same sentence and the word right after it (its unit; `%` counts as a word).
//!   At least two preceding words are required, and a number interrupts them, so "is 30 days" at a
//!   sentence start or a list of figures claims nothing. Sentences end at `.`, `!` or `?` followed
//!   by white space (or the end), at `;` and at line breaks; `3.5` and `1,000` are single numbers.
//!   Words are compared in their normalised form (lower-case alphanumeric runs).
//! - **numeric_disagreement**: two or more packed chunks make claims with the same preceding words
//!   and unit, with at least two different values (`1,000` and `1000.0` are the same value). A key
//!   to which one chunk itself gives two values is ambiguous and compared nowhere: in "the minimum
//!   allowed value is 0 ... the maximum allowed value is 2", "allowed value is" names two things.
//!   And the chunks that disagree must speak of the same thing: they come from two documents, or
//!   from one section (the same `heading_path`) of one document; two sections of one document
//!   describe two things.
//! - **trust_mismatch**: either such a disagreement among chunks of two or more trust levels (it is
//!   then reported under both kinds), or the same sentence (equal once normalised, at least five
//!   words) in chunks of two or more trust levels: an untrusted source repeating a trusted one
//!   word for word deserves a look too.
//!
//! Annotations come in order of the first chunk involved, chunk ids in packed order.

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};
use std::sync::LazyLock;

use rag_core::{Chunk, ChunkId, ConflictAnnotation, ConflictKind, TrustLevel};
use regex::Regex;

/// The shortest sentence, in words, that can count as a claim repeated across trust levels.
pub const MIN_REPEATED_SENTENCE_WORDS: usize = 5;

/// Scans `packed` (in final order) for the disagreements described in the module documentation.
///
/// Chunks without `content` are skipped: the packer has no text to compare.
///
/// ```
/// use rag_core::{Chunk, ConflictKind, TrustLevel};
/// use rag_packer::detect_conflicts;
///
/// let a = Chunk::with_content("a", "policy", "t", "The refund window is 30 days.");
/// let mut b = Chunk::with_content("b", "forum", "t", "I heard the refund window is 14 days!");
/// b.trust = TrustLevel::Untrusted;
/// let conflicts = detect_conflicts(&[a, b]);
/// assert_eq!(conflicts[0].kind, ConflictKind::NumericDisagreement);
/// assert_eq!(conflicts[0].detail, "\"refund window is\": 30 days vs 14 days");
/// assert_eq!(conflicts[1].kind, ConflictKind::TrustMismatch);
/// ```
pub fn detect_conflicts(packed: &[Chunk]) -> Vec<ConflictAnnotation> {
    let mut quantities = Groups::default();
    let mut sentences = Groups::default();
    for (position, chunk) in packed.iter().enumerate() {
        let Some(content) = chunk.content() else { continue };
        for sentence in sentences_of(&prose_of(content)) {
            for claim in claims_of(&sentence) {
                let group = quantities.entry(claim.key, position, chunk);
                let given_here = group.claims.iter().rev().take_while(|(p, _)| *p == position);
                if !given_here.clone().any(|(_, v)| *v == claim.value) {
                    group.claims.push((position, claim.value));
                }
                if !group.values.iter().any(|(v, _)| *v == claim.value) {
                    group.values.push((claim.value, claim.text));
                }
            }
            if sentence.len() >= MIN_REPEATED_SENTENCE_WORDS {
                let text = sentence.iter().map(Token::text).collect::<Vec<_>>().join(" ");
                sentences.entry(text, position, chunk);
            }
        }
    }
    let mut annotations: Vec<(usize, ConflictAnnotation)> = Vec::new();
    for group in quantities.groups {
        if group.values.len() < 2 || group.chunks.len() < 2 || !group.speaks_of_one_thing(packed) {
            continue;
        }
        let (context, unit) = group.key.split_once('\u{0}').unwrap_or((group.key.as_str(), ""));
        let values: Vec<String> = group
            .values
            .iter()
            .map(|(_, text)| {
                if unit.is_empty() {
                    text.clone()
                } else {
                    format!("{text} {unit}")
                }
            })
            .collect();
        let detail = format!("\"{context}\": {}", values.join(" vs "));
        annotations.push((
            group.first,
            ConflictAnnotation {
                kind: ConflictKind::NumericDisagreement,
                chunk_ids: group.chunks.clone(),
                detail: detail.clone(),
            },
        ));
        if group.trust.len() >= 2 {
            annotations.push((
                group.first,
                ConflictAnnotation {
                    kind: ConflictKind::TrustMismatch,
                    chunk_ids: group.chunks,
                    detail: format!("{detail}, across trust levels {}", trust_list(&group.trust)),
                },
            ));
        }
    }
    for group in sentences.groups {
        if group.trust.len() < 2 {
            continue;
        }
        annotations.push((
            group.first,
            ConflictAnnotation {
                kind: ConflictKind::TrustMismatch,
                chunk_ids: group.chunks,
                detail: format!(
                    "the same sentence at trust levels {}: \"{}\"",
                    trust_list(&group.trust),
                    shorten(&group.key)
                ),
            },
        ));
    }
    // Stable: within one first chunk, quantity notes precede sentence notes, each in text order.
    annotations.sort_by_key(|(first, _)| *first);
    annotations.into_iter().map(|(_, a)| a).collect()
}

fn trust_list(levels: &BTreeSet<TrustLevel>) -> String {
    levels.iter().map(|t| t.as_str()).collect::<Vec<_>>().join(", ")
}

fn shorten(text: &str) -> String {
    const MAX_CHARS: usize = 80;
    match text.char_indices().nth(MAX_CHARS) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text.to_owned(),
    }
}

/// Claims or sentences grouped by key, in order of first appearance.
#[derive(Default)]
struct Groups {
    slot: HashMap<String, usize>,
    groups: Vec<Group>,
}

struct Group {
    key: String,
    /// Position of the first chunk that made the claim, for ordering annotations.
    first: usize,
    chunks: Vec<ChunkId>,
    /// The last chunk added, so a chunk repeating a claim is listed once.
    last_chunk: Option<usize>,
    trust: BTreeSet<TrustLevel>,
    values: Vec<(f64, String)>,
    /// Each chunk's distinct values, as (position in `packed`, value), in packed order.
    claims: Vec<(usize, f64)>,
}

impl Group {
    /// Whether the key names one thing wherever it is used, so that different values disagree.
    ///
    /// Not when one chunk gives it two values: it then names several things there ("the minimum
    /// allowed value is 0", "the maximum allowed value is 2"). And the chunks giving different
    /// values must come from two documents, or from one section (document and heading path) of
    /// one document: two sections of one document are about two things (`writeInt32` and
    /// `writeInt16` each take "a valid signed N-bit integer").
    fn speaks_of_one_thing(&self, packed: &[Chunk]) -> bool {
        let ambiguous = self.claims.windows(2).any(|pair| pair[0].0 == pair[1].0);
        if ambiguous {
            return false;
        }
        let documents: BTreeSet<&str> = self
            .claims
            .iter()
            .map(|&(p, _)| packed[p].document_id.as_str())
            .collect();
        if documents.len() >= 2 {
            return true;
        }
        let mut by_section: HashMap<Vec<&str>, Vec<u64>> = HashMap::new();
        for &(p, value) in &self.claims {
            by_section
                .entry(packed[p].heading_path())
                .or_default()
                .push(value.to_bits());
        }
        by_section.values().any(|values| values.iter().any(|v| *v != values[0]))
    }
}

impl Groups {
    fn entry(&mut self, key: String, position: usize, chunk: &Chunk) -> &mut Group {
        let groups = &mut self.groups;
        let index = *self.slot.entry(key.clone()).or_insert_with(|| {
            groups.push(Group {
                key,
                first: position,
                chunks: Vec::new(),
                last_chunk: None,
                trust: BTreeSet::new(),
                values: Vec::new(),
                claims: Vec::new(),
            });
            groups.len() - 1
        });
        let group = &mut self.groups[index];
        if group.last_chunk != Some(position) {
            group.last_chunk = Some(position);
            group.chunks.push(chunk.id.clone());
            group.trust.insert(chunk.trust);
        }
        group
    }
}

/// A word or a number of a sentence, as the claim rules see it.
#[derive(Debug, Clone, PartialEq)]
enum Token {
    Word(String),
    Number { value: f64, text: String },
}

impl Token {
    fn text(&self) -> &str {
        match self {
            Self::Word(word) => word,
            Self::Number { text, .. } => text,
        }
    }
}

struct Claim {
    /// Context words and unit, joined so the pair is one hash key.
    key: String,
    value: f64,
    text: String,
}

/// Compiles one of the module's fixed patterns.
fn pattern(source: &str) -> Regex {
    Regex::new(source).unwrap_or_else(|err| unreachable!("the pattern {source:?} is valid: {err}"))
}

/// What is not prose, in the order it is removed: fenced code blocks (to their closing fence or
/// the end of the text), HTML comments, inline code, lines of code outside a fence, HTML tags,
/// link targets and URLs, version strings. Each match becomes a line break, which also ends the sentence it interrupts.
static NOT_PROSE: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    [
        r"(?ms)^[ \t]*```.*?(?:^[ \t]*```[^\n]*$|\z)",
        r"(?ms)^[ \t]*~~~.*?(?:^[ \t]*~~~[^\n]*$|\z)",
        r"(?s)<!--.*?(-->|\z)",
        r"`[^`\n]*`",
        // A line with a call (a name right before `(`; `file(s)` is prose) or a `//` comment is
        // code, even where the chunk starts inside a code block and its opening fence is in
        // the chunk before.
        r"(?m)^[^\n]*(?:[A-Za-z0-9_]\((?:[^s]|s[^)])|^[ \t]*//)[^\n]*$",
        r"</?[A-Za-z][^<>\n]*>",
        r"\]\([^)\n]*\)|\b[a-z][a-z0-9+.-]*://\S+",
        r"\b[vV]\d+(\.\d+)*\b|\b\d+(\.\d+){2,}\b",
    ]
    .into_iter()
    .map(pattern)
    .collect()
});

/// A token of a sentence: a word (letters, then letters or digits), a number (digits, with `.`
/// or `,` between digits), or `%`.
static TOKEN: LazyLock<Regex> = LazyLock::new(|| pattern(r"[\p{Alphabetic}\p{N}]+(?:[.,]\d+)*|%"));

/// Where a sentence ends: `;`, a line break, or `.`, `!`, `?` before white space or the end.
static SENTENCE_END: LazyLock<Regex> = LazyLock::new(|| pattern(r"[;\n]|[.!?](?:\s|\z)"));

/// `text` with everything that is not prose replaced by line breaks (see [`NOT_PROSE`]).
fn prose_of(text: &str) -> Cow<'_, str> {
    // A chunk that starts inside a code block: up to its closing fence is code, and that fence
    // must not be read as one that opens a block over the rest of the chunk.
    let text = match crate::fences::code_prefix_end(text) {
        Some(end) => &text[end..],
        None => text,
    };
    let mut prose = Cow::Borrowed(text);
    for not_prose in NOT_PROSE.iter() {
        if let Cow::Owned(replaced) = not_prose.replace_all(&prose, "\n") {
            prose = Cow::Owned(replaced);
        }
    }
    prose
}

/// The sentences of `text`, each as its tokens.
fn sentences_of(text: &str) -> Vec<Vec<Token>> {
    SENTENCE_END
        .split(text)
        .map(|sentence| {
            TOKEN
                .find_iter(sentence)
                .map(|m| token(m.as_str()))
                .collect::<Vec<Token>>()
        })
        .filter(|tokens| !tokens.is_empty())
        .collect()
}

/// A matched token as a word or a number: digits (with their separators) are a number, anything
/// with a letter is a word.
fn token(raw: &str) -> Token {
    let numeric = raw.chars().all(|c| c.is_ascii_digit() || c == '.' || c == ',');
    match numeric.then(|| raw.replace(',', "").parse::<f64>()) {
        Some(Ok(value)) => Token::Number {
            value,
            text: raw.to_owned(),
        },
        _ => Token::Word(raw.to_lowercase()),
    }
}

/// The quantity claims of one sentence.
fn claims_of(sentence: &[Token]) -> Vec<Claim> {
    const CONTEXT_WORDS: usize = 3;
    const MIN_CONTEXT_WORDS: usize = 2;
    let mut claims = Vec::new();
    for (at, token) in sentence.iter().enumerate() {
        let Token::Number { value, text } = token else { continue };
        let context: Vec<&str> = sentence[..at]
            .iter()
            .rev()
            .take(CONTEXT_WORDS)
            .map_while(|t| match t {
                Token::Word(w) if w != "%" => Some(w.as_str()),
                _ => None,
            })
            .collect();
        if context.len() < MIN_CONTEXT_WORDS {
            continue;
        }
        let context: Vec<&str> = context.into_iter().rev().collect();
        let unit = match sentence.get(at + 1) {
            Some(Token::Word(unit)) => unit.as_str(),
            _ => "",
        };
        claims.push(Claim {
            key: format!("{}\u{0}{unit}", context.join(" ")),
            value: *value,
            text: text.clone(),
        });
    }
    claims
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(id: &str, text: &str, trust: TrustLevel) -> Chunk {
        let mut c = Chunk::with_content(id, "d", "t", text);
        c.trust = trust;
        c
    }

    /// Chunks `c0`, `c1`, ... of these texts and trust levels.
    fn chunks(texts: &[(&str, TrustLevel)]) -> Vec<Chunk> {
        texts
            .iter()
            .enumerate()
            .map(|(i, &(text, trust))| chunk(&format!("c{i}"), text, trust))
            .collect()
    }

    #[test]
    fn disagreeing_numbers_are_reported_with_what_disagrees() {
        use ConflictKind::{NumericDisagreement, TrustMismatch};
        use TrustLevel::{Trusted, Untrusted};
        type Case<'a> = (&'a [(&'a str, TrustLevel)], &'a [(ConflictKind, &'a str)]);
        let cases: [Case<'_>; 3] = [
            (
                &[
                    ("Policy: the refund window is 30 days. Shipping is free.", Trusted),
                    ("Note that the refund window is 14 days.", Trusted),
                ],
                &[(NumericDisagreement, "\"refund window is\": 30 days vs 14 days")],
            ),
            // Decimals, thousands separators and percent signs are part of one quantity.
            (
                &[
                    ("The interest rate is 3.5% per year.", Trusted),
                    ("The interest rate is 4.25 % per year.", Trusted),
                    ("Plans include up to 1,000 seats.", Trusted),
                    ("Plans include up to 1000 seats.", Trusted),
                ],
                &[(NumericDisagreement, "\"interest rate is\": 3.5 % vs 4.25 %")],
            ),
            // Across trust levels, a disagreement is also a trust mismatch.
            (
                &[
                    ("The refund window is 30 days.", Trusted),
                    ("The refund window is 90 days.", Untrusted),
                ],
                &[
                    (NumericDisagreement, "\"refund window is\": 30 days vs 90 days"),
                    (
                        TrustMismatch,
                        "\"refund window is\": 30 days vs 90 days, across trust levels trusted, untrusted",
                    ),
                ],
            ),
        ];
        for (texts, expected) in cases {
            let conflicts = detect_conflicts(&chunks(texts));
            let found: Vec<(ConflictKind, &str)> = conflicts.iter().map(|c| (c.kind, c.detail.as_str())).collect();
            assert_eq!(found, expected);
            for conflict in &conflicts {
                assert_eq!(conflict.chunk_ids, [ChunkId::from("c0"), ChunkId::from("c1")]);
            }
        }
    }

    #[test]
    fn the_same_sentence_across_trust_levels_is_a_trust_mismatch() {
        let sentence = "Admins can reset any password from the console.";
        let packed = chunks(&[
            (sentence, TrustLevel::Trusted),
            (
                "ADMINS can reset any password from the console!!",
                TrustLevel::UserSupplied,
            ),
            (sentence, TrustLevel::UserSupplied),
        ]);
        let conflicts = detect_conflicts(&packed);
        assert_eq!(conflicts.len(), 1);
        assert_eq!(conflicts[0].kind, ConflictKind::TrustMismatch);
        assert_eq!(conflicts[0].chunk_ids.len(), 3);
        assert_eq!(
            conflicts[0].detail,
            "the same sentence at trust levels trusted, user_supplied: \"admins can reset any password from the console\""
        );
        // Same trust level: repetition is not flagged; short sentences never are.
        let same = chunks(&[
            (sentence, TrustLevel::Trusted),
            (sentence, TrustLevel::Trusted),
            ("Click here.", TrustLevel::Untrusted),
            ("Click here.", TrustLevel::Trusted),
        ]);
        assert_eq!(detect_conflicts(&same), []);
    }

    #[test]
    fn code_comments_links_and_versions_make_no_claims() {
        use TrustLevel::Trusted;
        let no_claims = [
            (
                "code, comments, links and versions",
                "<!-- YAML\nadded: v0.5.8\n-->\n\nThe default port is `8080` here.\n\n```js\nconst max size is 64 * 1024;\n```\nSee [the docs](https://x.org/v2/limit is 5 MB).",
                "<!-- YAML\nadded: v1.31.0\n-->\n\nThe default port is `3000` there.\n\n```js\nconst max size is 128 * 1024;\n```\nRequires Node.js 18.11.0 or later, and the maximum size is 12 MB.",
            ),
            // A chunk cut from inside a code block has no opening fence: its calls and comments are
            // still code.
            (
                "a code block cut without its opening fence",
                "const buf1 = Buffer.allocUnsafe(26);\nserver.listen(1337);\n```",
                "// buf buffer allocUnsafe 5\nconsole.log(Buffer.allocUnsafe(5));\nserver.listen(8000);",
            ),
        ];
        for (case, a, b) in no_claims {
            assert_eq!(detect_conflicts(&chunks(&[(a, Trusted), (b, Trusted)])), [], "{case}");
        }
        assert_eq!(prose_of("Use `x = 3` in v2.1.0 now.").as_ref(), "Use \n in \n now.");
        assert_eq!(prose_of("The file(s) take 5 MB.").as_ref(), "The file(s) take 5 MB.");
        // A chunk that starts inside a code block: its closing fence does not hide the prose after it.
        let after_code = chunks(&[
            ("server.listen(1337);\n```\nThe refund window is 30 days.", Trusted),
            ("The refund window is 14 days.", Trusted),
        ]);
        assert_eq!(detect_conflicts(&after_code).len(), 1);
        // Prose around the code still counts.
        let prose = chunks(&[
            ("```\ncode\n```\nThe refund window is 30 days.", Trusted),
            ("The refund window is 14 days.", Trusted),
        ]);
        assert_eq!(detect_conflicts(&prose).len(), 1);
    }

    #[test]
    fn texts_that_do_not_disagree_are_not_conflicts() {
        use TrustLevel::{Trusted, Untrusted};
        let cases: [(&str, &[(&str, TrustLevel)]); 4] = [
            (
                "agreeing or unrelated numbers",
                &[
                    ("The refund window is 30 days.", Trusted),
                    ("Yes, the refund window is 30.0 days!", Trusted),
                    ("The delivery window is 14 days.", Trusted),
                    ("30 days is long. Version 2 of 3.", Trusted),
                    ("The refund window is 14 weeks.", Trusted),
                ],
            ),
            (
                "a disagreement within one chunk",
                &[("The fee is 10 usd; the fee is 12 usd.", Trusted)],
            ),
            (
                "a key one chunk gives two values names several things",
                &[
                    (
                        "The minimum allowed value is 0. The maximum allowed value is 2.",
                        Trusted,
                    ),
                    ("The minimum allowed value is 16,384. Settings follow.", Trusted),
                ],
            ),
            (
                "an unclosed fence or comment hides the rest of the chunk",
                &[
                    ("Intro.\n```\nthe refund window is 30 days", Trusted),
                    ("<!-- the refund window is 90 days", Untrusted),
                    ("The refund window is 14 days.", Trusted),
                ],
            ),
        ];
        for (case, texts) in cases {
            assert_eq!(detect_conflicts(&chunks(texts)), [], "{case}");
        }
    }

    #[test]
    fn two_sections_of_one_document_speak_of_two_things() {
        let in_section = |id: &str, document: &str, section: &str, text: &str| {
            let mut c = Chunk::with_content(id, document, "t", text);
            c.metadata
                .insert("heading_path".into(), serde_json::json!(["Buffer", section]));
            c
        };
        let int32 = "The value must be a valid signed 32 bit integer.";
        let int16 = "The value must be a valid signed 16 bit integer.";
        let one_document = [
            in_section("a", "buffer.md", "writeInt32", int32),
            in_section("b", "buffer.md", "writeInt16", int16),
        ];
        assert_eq!(detect_conflicts(&one_document), []);
        let one_section = [
            in_section("a", "buffer.md", "writeInt32", int32),
            in_section("b", "buffer.md", "writeInt32", int16),
        ];
        assert_eq!(detect_conflicts(&one_section).len(), 1);
        let two_documents = [
            in_section("a", "buffer.md", "writeInt32", int32),
            in_section("b", "buffer-v2.md", "writeInt16", int16),
        ];
        assert_eq!(
            detect_conflicts(&two_documents)[0].detail,
            "\"a valid signed\": 32 bit vs 16 bit"
        );
    }

    #[test]
    fn chunks_without_content_are_skipped() {
        let mut remote = Chunk::with_content_ref("r", "d", "t", "s3://x");
        remote.token_count = Some(4);
        let packed = [remote, chunk("a", "The refund window is 30 days.", TrustLevel::Trusted)];
        assert_eq!(detect_conflicts(&packed), []);
    }
}
