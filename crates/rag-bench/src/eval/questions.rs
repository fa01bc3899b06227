//! The question file of a corpus: loading it and turning each gold answer into a byte span.
//!
//! A question is authored as one JSON object per line:
//!
//! ```text
//! {"id": "node-fs-001", "question": "how do I read a file line by line",
//!  "file": "readline.md", "answer": "<exact text of the file>", "origin": "handwritten"}
//! ```
//!
//! `answer` is an exact substring of `file` (a path under the corpus's `docs/`). When it occurs more
//! than once, `"occurrence": N` (1-based) says which one is meant; otherwise the question is
//! refused, because a span that could be any of several places is not a gold span.

use std::collections::HashMap;
use std::ops::Range;
use std::path::{Component, Path};

use serde_json::Value;

use crate::eval::answer::normalise_whitespace;

/// Fewest words a gold answer may have: the yardstick is about passages a model needs, and a
/// single word or name is found by accident as often as by retrieval.
pub const MIN_ANSWER_WORDS: usize = 4;

/// Most bytes a gold answer may have: a sentence or short paragraph, not a section.
pub const MAX_ANSWER_BYTES: usize = 1200;

/// How a question was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Origin {
    /// Written by hand the way a user asks, without the answer's wording.
    Handwritten,
    /// Derived from the docs' own structure (a heading and the sentences that answer it).
    Derived,
}

impl Origin {
    /// The name used in question files and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::Handwritten => "handwritten",
            Origin::Derived => "derived",
        }
    }
}

/// A question whose gold answer has been found in its file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Question {
    /// Unique within its file.
    pub id: String,
    /// What is passed to `ragctl pack` as the query.
    pub question: String,
    /// The document holding the answer, relative to the corpus's `docs/` directory, with `/`.
    pub file: String,
    /// The gold answer, exactly as it stands in `file`.
    pub answer: String,
    /// How the question was written.
    pub origin: Origin,
    /// Byte span of `answer` in `file`.
    pub span: Range<usize>,
}

/// Why a question of a question file was refused. Every variant names the file and line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QuestionError {
    /// The question file could not be read.
    #[error("{path}: cannot read: {message}")]
    Unreadable {
        /// The file that could not be read.
        path: String,
        /// The I/O error.
        message: String,
    },
    /// The document a question names could not be read.
    #[error("{path}:{line}: question {id}: cannot read {file}: {message}")]
    DocumentUnreadable {
        /// The question file.
        path: String,
        /// 1-based line number.
        line: usize,
        /// The question's id.
        id: String,
        /// The document, as the question names it.
        file: String,
        /// Why it could not be read.
        message: String,
    },
    /// A line is not a JSON object.
    #[error("{path}:{line}: not a JSON object: {message}")]
    NotAnObject {
        /// The question file.
        path: String,
        /// 1-based line number.
        line: usize,
        /// What the JSON parser said, or the kind of value found.
        message: String,
    },
    /// A required field is missing, not a string, or empty.
    #[error("{path}:{line}: field {field:?} must be a non-empty string")]
    BadField {
        /// The question file.
        path: String,
        /// 1-based line number.
        line: usize,
        /// The field.
        field: &'static str,
    },
    /// `origin` is not one of the known values.
    #[error("{path}:{line}: question {id}: origin {origin:?} is neither \"handwritten\" nor \"derived\"")]
    UnknownOrigin {
        /// The question file.
        path: String,
        /// 1-based line number.
        line: usize,
        /// The question's id.
        id: String,
        /// The value found.
        origin: String,
    },
    /// `occurrence` is present but not a whole number of at least 1.
    #[error("{path}:{line}: question {id}: occurrence must be a whole number of at least 1")]
    BadOccurrence {
        /// The question file.
        path: String,
        /// 1-based line number.
        line: usize,
        /// The question's id.
        id: String,
    },
    /// Two questions share an id.
    #[error("{path}:{line}: question id {id} is used twice (first on line {first_line})")]
    DuplicateId {
        /// The question file.
        path: String,
        /// 1-based line number of the second use.
        line: usize,
        /// The id.
        id: String,
        /// 1-based line number of the first use.
        first_line: usize,
    },
    /// `file` is absolute or climbs out of the corpus.
    #[error("{path}:{line}: question {id}: file {file:?} must be a relative path inside the corpus")]
    FileOutsideCorpus {
        /// The question file.
        path: String,
        /// 1-based line number.
        line: usize,
        /// The question's id.
        id: String,
        /// The value found.
        file: String,
    },
    /// The answer is too short or too long to be a gold passage.
    #[error(
        "{path}:{line}: question {id}: the answer has {words} words and {bytes} bytes; a gold answer \
         is a sentence or short paragraph (at least {MIN_ANSWER_WORDS} words, at most {MAX_ANSWER_BYTES} bytes)"
    )]
    AnswerSize {
        /// The question file.
        path: String,
        /// 1-based line number.
        line: usize,
        /// The question's id.
        id: String,
        /// Words in the answer.
        words: usize,
        /// Bytes in the answer.
        bytes: usize,
    },
    /// The answer does not occur in its file, or does not occur the way it was specified.
    #[error("{path}:{line}: question {id}: {problem}")]
    Span {
        /// The question file.
        path: String,
        /// 1-based line number.
        line: usize,
        /// The question's id.
        id: String,
        /// What is wrong with the span.
        problem: SpanError,
    },
}

/// Why an answer could not be turned into one byte span of its file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpanError {
    /// The answer is nowhere in the file.
    #[error("the answer is not in {file}{}", if *.matches_normalised { " (it is once whitespace is normalised: copy the exact text, line breaks included)" } else { "" })]
    NotFound {
        /// The document.
        file: String,
        /// Whether it would be found with whitespace normalised, the usual authoring slip.
        matches_normalised: bool,
    },
    /// The answer occurs several times and no occurrence was given.
    #[error("the answer occurs {count} times in {file} (at bytes {offsets:?}): give \"occurrence\" or a longer answer")]
    Ambiguous {
        /// The document.
        file: String,
        /// How many times it occurs.
        count: usize,
        /// Byte offsets of the first few occurrences.
        offsets: Vec<usize>,
    },
    /// The given occurrence does not exist.
    #[error("occurrence {occurrence} asked, but the answer occurs {count} times in {file}")]
    NoSuchOccurrence {
        /// The document.
        file: String,
        /// The 1-based occurrence asked for.
        occurrence: usize,
        /// How many times it occurs.
        count: usize,
    },
}

/// Byte offsets of every occurrence of `needle` in `haystack`, overlapping ones included.
fn occurrences(haystack: &str, needle: &str) -> Vec<usize> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = haystack[from..].find(needle) {
        let start = from + at;
        found.push(start);
        // Step one character, not one byte, so the next search starts on a char boundary.
        from = start + haystack[start..].chars().next().map_or(1, char::len_utf8);
    }
    found
}

/// The byte span of `answer` in `text`: its only occurrence, or occurrence `occurrence`
/// (1-based) when one is given.
///
/// ```
/// use rag_bench::eval::questions::{answer_span, SpanError};
/// let text = "ok. Run it twice. Run it twice.";
/// assert_eq!(answer_span(text, "a.md", "ok. Run", None), Ok(0..7));
/// assert_eq!(answer_span(text, "a.md", "Run it twice.", Some(2)), Ok(18..31));
/// assert!(matches!(answer_span(text, "a.md", "Run it twice.", None), Err(SpanError::Ambiguous { count: 2, .. })));
/// ```
pub fn answer_span(text: &str, file: &str, answer: &str, occurrence: Option<usize>) -> Result<Range<usize>, SpanError> {
    let found = occurrences(text, answer);
    let start = match (found.len(), occurrence) {
        (0, _) => {
            let matches_normalised = normalise_whitespace(text).contains(&normalise_whitespace(answer));
            return Err(SpanError::NotFound {
                file: file.to_owned(),
                matches_normalised,
            });
        }
        (1, None) => found[0],
        (count, None) => {
            return Err(SpanError::Ambiguous {
                file: file.to_owned(),
                count,
                offsets: found.into_iter().take(5).collect(),
            });
        }
        (count, Some(n)) => match n.checked_sub(1).and_then(|i| found.get(i)) {
            Some(&start) => start,
            None => {
                return Err(SpanError::NoSuchOccurrence {
                    file: file.to_owned(),
                    occurrence: n,
                    count,
                });
            }
        },
    };
    Ok(start..start + answer.len())
}

/// A parsed line before its answer is located.
struct Entry {
    line: usize,
    id: String,
    question: String,
    file: String,
    answer: String,
    origin: Origin,
    occurrence: Option<usize>,
}

fn parse_entry(path: &str, line: usize, text: &str) -> Result<Entry, QuestionError> {
    let value: Value = serde_json::from_str(text).map_err(|err| QuestionError::NotAnObject {
        path: path.to_owned(),
        line,
        message: err.to_string(),
    })?;
    let Value::Object(object) = value else {
        return Err(QuestionError::NotAnObject {
            path: path.to_owned(),
            line,
            message: format!("found {value}"),
        });
    };
    let string = |field: &'static str| match object.get(field) {
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
        _ => Err(QuestionError::BadField {
            path: path.to_owned(),
            line,
            field,
        }),
    };
    let id = string("id")?;
    let question = string("question")?;
    let file = string("file")?;
    let answer = string("answer")?;
    let origin = match string("origin")?.as_str() {
        "handwritten" => Origin::Handwritten,
        "derived" => Origin::Derived,
        other => {
            return Err(QuestionError::UnknownOrigin {
                path: path.to_owned(),
                line,
                id,
                origin: other.to_owned(),
            });
        }
    };
    let occurrence = match object.get("occurrence") {
        None => None,
        Some(value) => match value.as_u64().and_then(|n| usize::try_from(n).ok()) {
            Some(n) if n >= 1 => Some(n),
            _ => {
                return Err(QuestionError::BadOccurrence {
                    path: path.to_owned(),
                    line,
                    id,
                });
            }
        },
    };
    let relative = Path::new(&file);
    if file.contains('\\') || !relative.components().all(|c| matches!(c, Component::Normal(_))) {
        return Err(QuestionError::FileOutsideCorpus {
            path: path.to_owned(),
            line,
            id,
            file,
        });
    }
    let words = answer.split_whitespace().count();
    if words < MIN_ANSWER_WORDS || answer.len() > MAX_ANSWER_BYTES {
        return Err(QuestionError::AnswerSize {
            path: path.to_owned(),
            line,
            id,
            words,
            bytes: answer.len(),
        });
    }
    Ok(Entry {
        line,
        id,
        question,
        file,
        answer,
        origin,
        occurrence,
    })
}

/// Parses the question file `text` (named `path` in errors) and locates every answer in the
/// documents that `read_document` returns for a `file` value (each document is read once).
///
/// Every problem is reported, not only the first, so that one run fixes a whole file. Blank lines
/// are skipped.
///
/// ```
/// use rag_bench::eval::questions::parse_questions;
/// let line = r#"{"id":"q1","question":"how long is the refund window","file":"a.md","answer":"Refunds are accepted for 30 days.","origin":"handwritten"}"#;
/// let read = |_: &str| Ok("# Refunds\n\nRefunds are accepted for 30 days.\n".to_owned());
/// let questions = parse_questions(line, "q.jsonl", read).unwrap();
/// assert_eq!(questions[0].span, 11..44);
/// ```
pub fn parse_questions(
    text: &str,
    path: &str,
    mut read_document: impl FnMut(&str) -> Result<String, String>,
) -> Result<Vec<Question>, Vec<QuestionError>> {
    let mut errors = Vec::new();
    let mut entries = Vec::new();
    let mut first_lines: HashMap<String, usize> = HashMap::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match parse_entry(path, index + 1, line) {
            Ok(entry) => match first_lines.get(&entry.id) {
                Some(&first_line) => errors.push(QuestionError::DuplicateId {
                    path: path.to_owned(),
                    line: entry.line,
                    id: entry.id,
                    first_line,
                }),
                None => {
                    first_lines.insert(entry.id.clone(), entry.line);
                    entries.push(entry);
                }
            },
            Err(err) => errors.push(err),
        }
    }

    let mut documents: HashMap<String, Result<String, String>> = HashMap::new();
    let mut questions = Vec::with_capacity(entries.len());
    for entry in entries {
        let document = documents
            .entry(entry.file.clone())
            .or_insert_with(|| read_document(&entry.file));
        let document = match document {
            Ok(text) => text,
            Err(message) => {
                errors.push(QuestionError::DocumentUnreadable {
                    path: path.to_owned(),
                    line: entry.line,
                    id: entry.id,
                    file: entry.file,
                    message: message.clone(),
                });
                continue;
            }
        };
        match answer_span(document, &entry.file, &entry.answer, entry.occurrence) {
            Ok(span) => questions.push(Question {
                id: entry.id,
                question: entry.question,
                file: entry.file,
                answer: entry.answer,
                origin: entry.origin,
                span,
            }),
            Err(problem) => errors.push(QuestionError::Span {
                path: path.to_owned(),
                line: entry.line,
                id: entry.id,
                problem,
            }),
        }
    }
    if errors.is_empty() { Ok(questions) } else { Err(errors) }
}

/// Reads the question file at `questions` and locates each answer in the documents under `docs`.
pub fn load_questions(questions: &Path, docs: &Path) -> Result<Vec<Question>, Vec<QuestionError>> {
    let path = questions.display().to_string();
    let text = std::fs::read_to_string(questions).map_err(|err| {
        vec![QuestionError::Unreadable {
            path: path.clone(),
            message: err.to_string(),
        }]
    })?;
    parse_questions(&text, &path, |file| {
        std::fs::read_to_string(docs.join(file))
            .map_err(|err| format!("{err} (looked for {})", docs.join(file).display()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "# Streams\n\nA stream ends when `end()` is called.\nIt is then finished.\n\nCall it twice: the second call throws.\nCall it twice: the second call throws.\n";

    fn line(id: &str, answer: &str, extra: &str) -> String {
        format!(
            r#"{{"id":"{id}","question":"why does my stream not end","file":"stream.md","answer":{},"origin":"handwritten"{extra}}}"#,
            serde_json::to_string(answer).expect("a string serialises")
        )
    }

    fn parse(text: &str) -> Result<Vec<Question>, Vec<QuestionError>> {
        parse_questions(text, "q.jsonl", |file| match file {
            "stream.md" => Ok(DOC.to_owned()),
            other => Err(format!("no such file {other}")),
        })
    }

    fn messages(result: Result<Vec<Question>, Vec<QuestionError>>) -> Vec<String> {
        match result {
            Ok(questions) => panic!("expected errors, got {questions:?}"),
            Err(errors) => errors.iter().map(ToString::to_string).collect(),
        }
    }

    #[test]
    fn an_answer_spanning_lines_gets_its_exact_byte_span() {
        let answer = "A stream ends when `end()` is called.\nIt is then finished.";
        let questions = parse(&line("q1", answer, "")).expect("valid question");
        assert_eq!(questions.len(), 1);
        assert_eq!(&DOC[questions[0].span.clone()], answer);
        assert_eq!(questions[0].span.start, DOC.find("A stream").expect("in the fixture"));
        assert_eq!(questions[0].origin, Origin::Handwritten);
    }

    #[test]
    fn an_answer_not_in_the_document_exactly_once_is_refused_with_the_reason() {
        let rewrapped = "A stream ends when `end()` is called. It is then finished.";
        let repeated = "Call it twice: the second call throws.";
        let cases = [
            (
                line("q1", rewrapped, ""),
                "q.jsonl:1: question q1: the answer is not in stream.md (it is once whitespace is normalised: copy the exact text, line breaks included)",
            ),
            (
                line("q2", "A stream never ends at all.", ""),
                "q.jsonl:1: question q2: the answer is not in stream.md",
            ),
            (
                line("q1", repeated, ""),
                "q.jsonl:1: question q1: the answer occurs 2 times in stream.md (at bytes [71, 110]): give \"occurrence\" or a longer answer",
            ),
            (
                line("q1", repeated, r#","occurrence":3"#),
                "q.jsonl:1: question q1: occurrence 3 asked, but the answer occurs 2 times in stream.md",
            ),
            (
                line("q1", repeated, r#","occurrence":0"#),
                "q.jsonl:1: question q1: occurrence must be a whole number of at least 1",
            ),
        ];
        for (question, expected) in cases {
            assert_eq!(messages(parse(&question)), [expected], "{question}");
        }
    }

    #[test]
    fn a_repeated_answer_is_found_at_the_occurrence_given() {
        let answer = "Call it twice: the second call throws.";
        let second = parse(&line("q1", answer, r#","occurrence":2"#)).expect("occurrence given");
        assert_eq!(second[0].span, 110..110 + answer.len());
    }

    #[test]
    fn overlapping_occurrences_count_as_several() {
        assert_eq!(occurrences("aaaa", "aa"), [0, 1, 2]);
        assert_eq!(occurrences("é-é-é", "é-é"), [0, 3]);
    }

    #[test]
    fn every_bad_line_is_reported_with_its_line_number() {
        let text = [
            line("q1", "A stream ends when `end()` is called.", ""),
            String::new(),
            "not json".to_owned(),
            "[1, 2]".to_owned(),
            r#"{"id":"q3","question":"","file":"stream.md","answer":"x y z w","origin":"handwritten"}"#.to_owned(),
            line("q1", "It is then finished.", ""),
            line("q4", "It is then finished.", "").replace("handwritten", "copied"),
            line("q5", "finished", ""),
            line("q6", "It is then finished.", "").replace("stream.md", "../stream.md"),
            line("q7", "It is then finished.", "").replace("stream.md", "missing.md"),
        ]
        .join("\n");
        assert_eq!(
            messages(parse(&text)),
            [
                "q.jsonl:3: not a JSON object: expected ident at line 1 column 2",
                "q.jsonl:4: not a JSON object: found [1,2]",
                "q.jsonl:5: field \"question\" must be a non-empty string",
                "q.jsonl:6: question id q1 is used twice (first on line 1)",
                "q.jsonl:7: question q4: origin \"copied\" is neither \"handwritten\" nor \"derived\"",
                "q.jsonl:8: question q5: the answer has 1 words and 8 bytes; a gold answer is a sentence or short paragraph (at least 4 words, at most 1200 bytes)",
                "q.jsonl:9: question q6: file \"../stream.md\" must be a relative path inside the corpus",
                "q.jsonl:10: question q7: cannot read missing.md: no such file missing.md",
            ]
        );
    }
}
