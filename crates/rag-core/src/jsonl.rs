//! Reading chunks from JSON Lines, the CLI's interchange format, with errors that name the line.
//!
//! A [`JsonlConfig`] says what happens to a line without `tenant_id` (it joins the request's
//! tenant, or it is refused) and how long a line may be. Every error names the stream and the
//! 1-based line; a UTF-8 byte-order mark at the start of the stream is skipped. Unknown fields are
//! kept in [`Chunk::extra`], and [`field_name_warnings`] points out the ones that look like a
//! misspelt known field (`Tenant_Id`, `tokenCount`), which would otherwise be silently ignored.
//!
//! ```
//! use rag_core::jsonl::{JsonlConfig, MissingTenant, read_chunks};
//!
//! let input = "{\"id\":\"a\",\"document_id\":\"d\",\"content\":\"x\",\"Tenant_Id\":\"globex\"}\n";
//! let lenient = JsonlConfig::new(MissingTenant::Assign("acme".into()));
//! let read = read_chunks(input.as_bytes(), "in.jsonl", &lenient)?;
//! assert_eq!(read.chunks[0].tenant_id.as_str(), "acme");
//! assert_eq!(
//!     read.warnings[0].to_string(),
//!     "in.jsonl:1: unknown field `Tenant_Id` is read as an extra field, not as `tenant_id`"
//! );
//!
//! let strict = JsonlConfig::new(MissingTenant::Refuse);
//! let err = read_chunks(input.as_bytes(), "in.jsonl", &strict).unwrap_err();
//! assert_eq!(err.to_string(), "in.jsonl:1: chunk a has no tenant_id, and a tenant is required");
//! # Ok::<(), rag_core::jsonl::JsonlError>(())
//! ```

use std::collections::BTreeSet;
use std::fmt;
use std::io::{BufRead, Read};
use std::ops::Range;

use crate::{Chunk, TenantId};

/// A JSONL chunk stream that could not be read; every variant names the stream.
#[derive(Debug, thiserror::Error)]
pub enum JsonlError {
    /// The line is not a valid chunk.
    #[error("{source_name}:{line}: {message}")]
    InvalidLine {
        /// The stream's name (a path, or `-` for stdin).
        source_name: String,
        /// 1-based line number.
        line: usize,
        /// What is wrong, from the JSON parser or the chunk rules.
        message: String,
    },
    /// The line is not UTF-8.
    #[error("{source_name}:{line}: invalid UTF-8 at byte {offset} of the line")]
    InvalidUtf8 {
        /// The stream's name.
        source_name: String,
        /// 1-based line number.
        line: usize,
        /// 0-based offset of the first invalid byte within the line.
        offset: usize,
    },
    /// The line has no `tenant_id` and the configuration refuses such chunks.
    #[error("{source_name}:{line}: chunk {id} has no tenant_id, and a tenant is required")]
    MissingTenant {
        /// The stream's name.
        source_name: String,
        /// 1-based line number.
        line: usize,
        /// The chunk's id as written on the line (`?` when it has none).
        id: String,
    },
    /// The line is longer than [`JsonlConfig::max_line_bytes`].
    #[error("{source_name}:{line}: line is longer than the limit of {limit} bytes")]
    LineTooLong {
        /// The stream's name.
        source_name: String,
        /// 1-based line number.
        line: usize,
        /// The limit, in bytes, line break excluded.
        limit: usize,
    },
    /// The stream could not be read.
    #[error("{source_name}: cannot read: {source}")]
    Io {
        /// The stream's name.
        source_name: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

/// What the reader does with a line that has no `tenant_id`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MissingTenant {
    /// The chunk joins this tenant (the request's): convenient for a local pipe, where the
    /// producer wrote no tenant at all.
    Assign(TenantId),
    /// The line is refused with [`JsonlError::MissingTenant`]: a producer that misspelt the key
    /// cannot slip chunks into the request's tenant.
    Refuse,
}

/// How a JSONL chunk stream is read.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct JsonlConfig {
    /// What happens to a line without `tenant_id`.
    pub missing_tenant: MissingTenant,
    /// The longest line accepted, in bytes, its line break excluded
    /// (default [`DEFAULT_MAX_LINE_BYTES`](Self::DEFAULT_MAX_LINE_BYTES)).
    pub max_line_bytes: usize,
}

impl JsonlConfig {
    /// 16 MiB: a chunk is a few kilobytes of text; a line of several megabytes is already an
    /// oddity, and the limit keeps a stream without line breaks (`/dev/zero`) from filling memory.
    pub const DEFAULT_MAX_LINE_BYTES: usize = 16 << 20;

    /// A configuration with the default line limit.
    pub fn new(missing_tenant: MissingTenant) -> Self {
        Self {
            missing_tenant,
            max_line_bytes: Self::DEFAULT_MAX_LINE_BYTES,
        }
    }

    /// Sets the longest line accepted, in bytes.
    #[must_use]
    pub fn with_max_line_bytes(mut self, max_line_bytes: usize) -> Self {
        self.max_line_bytes = max_line_bytes;
        self
    }
}

/// An unknown field whose name differs from a field of [`Chunk`] only by case or punctuation
/// (`Tenant_Id`, `tenantId`, `token-count`): it is kept as an extra field and does not set the
/// known one, which is rarely what the producer meant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldNameWarning {
    /// The stream's name.
    pub source_name: String,
    /// 1-based line where the key first appears.
    pub line: usize,
    /// The key as written.
    pub key: String,
    /// The known field it resembles.
    pub field: &'static str,
}

impl fmt::Display for FieldNameWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: unknown field `{}` is read as an extra field, not as `{}`",
            self.source_name, self.line, self.key, self.field
        )
    }
}

/// The chunks of a stream and the warnings about its field names.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JsonlChunks {
    /// The chunks, in line order.
    pub chunks: Vec<Chunk>,
    /// One warning per distinct suspicious key, at its first line, in line order.
    pub warnings: Vec<FieldNameWarning>,
}

pub use crate::chunk::CHUNK_FIELDS;

/// The field of [`CHUNK_FIELDS`] that `key` spells differently only by ASCII case or punctuation,
/// if any; `None` for a known field itself and for any other key.
///
/// ```
/// use rag_core::jsonl::resembled_field;
///
/// assert_eq!(resembled_field("Tenant_Id"), Some("tenant_id"));
/// assert_eq!(resembled_field("tokenCount"), Some("token_count"));
/// assert_eq!(resembled_field("tenant_id"), None);
/// assert_eq!(resembled_field("embedding"), None);
/// assert_eq!(resembled_field("Embedding_Model"), Some("embedding_model"));
/// ```
pub fn resembled_field(key: &str) -> Option<&'static str> {
    if CHUNK_FIELDS.contains(&key) {
        return None;
    }
    let folded = fold_field_name(key);
    CHUNK_FIELDS.into_iter().find(|field| fold_field_name(field) == folded)
}

fn fold_field_name(key: &str) -> String {
    key.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// One warning per distinct unknown key that resembles a known field, at the first line it
/// appears on. `chunks` gives each chunk with its 1-based line, in line order.
pub fn field_name_warnings<'a>(
    chunks: impl IntoIterator<Item = (usize, &'a Chunk)>,
    source_name: &str,
) -> Vec<FieldNameWarning> {
    let mut seen = BTreeSet::new();
    let mut warnings = Vec::new();
    for (line, chunk) in chunks {
        for key in chunk.extra().keys() {
            if let Some(field) = resembled_field(key)
                && seen.insert(key.as_str())
            {
                warnings.push(FieldNameWarning {
                    source_name: source_name.to_owned(),
                    line,
                    key: key.clone(),
                    field,
                });
            }
        }
    }
    warnings
}

/// Parses one JSONL line into a chunk; a chunk without `tenant_id` gets `default_tenant` when given.
///
/// ```
/// use rag_core::{TenantId, jsonl::parse_chunk_line};
///
/// let tenant = TenantId::new("acme");
/// let chunk = parse_chunk_line(r#"{"id":"a","document_id":"d","content":"x"}"#, Some(&tenant))?;
/// assert_eq!(chunk.tenant_id, tenant);
/// # Ok::<(), serde_json::Error>(())
/// ```
pub fn parse_chunk_line(line: &str, default_tenant: Option<&TenantId>) -> Result<Chunk, serde_json::Error> {
    match serde_json::from_str::<Chunk>(line) {
        Ok(chunk) => Ok(chunk),
        // The common case (tenant present) stays a single typed parse; only lines without a tenant
        // pay for the detour through a `Value`.
        Err(err) if default_tenant.is_some() && is_missing_tenant(&err) => {
            let mut value: serde_json::Value = serde_json::from_str(line)?;
            if let (Some(obj), Some(tenant)) = (value.as_object_mut(), default_tenant) {
                obj.insert("tenant_id".into(), serde_json::Value::String(tenant.to_string()));
            }
            serde_json::from_value(value)
        }
        Err(err) => Err(err),
    }
}

fn is_missing_tenant(err: &serde_json::Error) -> bool {
    err.to_string().starts_with("missing field `tenant_id`")
}

/// Reads every chunk of a JSONL stream; blank lines are skipped. Stops at the first bad line.
///
/// A line longer than the configured limit is an error as soon as the limit is passed, so memory
/// stays bounded whatever the stream holds. The lines are parsed one after the other; see
/// [`read_chunks_with`] for a reader that parses them on a thread pool.
pub fn read_chunks(reader: impl BufRead, source_name: &str, config: &JsonlConfig) -> Result<JsonlChunks, JsonlError> {
    read_chunks_with(reader, source_name, config, &InOrder)
}

/// How a reader parses a batch of lines: one after the other ([`InOrder`]), or in parallel by a
/// caller that has a thread pool (rag-core has none, to stay light: `ragctl` plugs in rayon).
pub trait ParseLines {
    /// `parse` of every line of `lines` (0-based index, bytes), the results in the order of
    /// `lines`.
    fn parse_lines<T: Send>(&self, lines: &[(usize, &[u8])], parse: &(dyn Fn(usize, &[u8]) -> T + Sync)) -> Vec<T>;
}

/// Lines parsed one after the other, on the calling thread.
#[derive(Debug, Clone, Copy, Default)]
pub struct InOrder;

impl ParseLines for InOrder {
    fn parse_lines<T: Send>(&self, lines: &[(usize, &[u8])], parse: &(dyn Fn(usize, &[u8]) -> T + Sync)) -> Vec<T> {
        lines.iter().map(|&(index, line)| parse(index, line)).collect()
    }
}

/// Bytes of lines read before a batch is parsed: large enough that a thread pool has work for
/// every thread, small enough that a bad line early in a large stream is reported soon.
const BATCH_BYTES: usize = 4 << 20;

/// [`read_chunks`], with the lines parsed in batches by `parser`. Whatever the parser, the result
/// is the same: the chunks in line order, or the error of the first bad line in line order.
///
/// ```
/// use rag_core::jsonl::{InOrder, JsonlConfig, MissingTenant, read_chunks_with};
///
/// let input = "{\"id\":\"a\",\"document_id\":\"d\",\"content\":\"x\"}\n\nnot json\n";
/// let config = JsonlConfig::new(MissingTenant::Assign("acme".into()));
/// let err = read_chunks_with(input.as_bytes(), "in.jsonl", &config, &InOrder).unwrap_err();
/// assert!(err.to_string().starts_with("in.jsonl:3: "));
/// ```
pub fn read_chunks_with(
    mut reader: impl BufRead,
    source_name: &str,
    config: &JsonlConfig,
    parser: &impl ParseLines,
) -> Result<JsonlChunks, JsonlError> {
    let mut read = JsonlChunks::default();
    let mut numbers = Vec::new();
    let mut batch = Batch::default();
    // One byte past the limit (plus the line break) tells a line at the limit from a longer one.
    let cap = u64::try_from(config.max_line_bytes)
        .unwrap_or(u64::MAX)
        .saturating_add(2);
    for index in 0.. {
        let start = batch.bytes.len();
        let length = (&mut reader)
            .take(cap)
            .read_until(b'\n', &mut batch.bytes)
            .map_err(|source| JsonlError::Io {
                source_name: source_name.to_owned(),
                source,
            })?;
        let end = length == 0;
        if !end {
            batch.lines.push((index, start..batch.bytes.len()));
        }
        let too_long = !end && !batch.bytes.ends_with(b"\n") && length as u64 == cap;
        if end || too_long || batch.bytes.len() >= BATCH_BYTES {
            // A line past the limit is reported after the lines before it, which may be bad too.
            let last = if too_long { batch.lines.pop() } else { None };
            batch.parse(source_name, config, parser, &mut read.chunks, &mut numbers)?;
            if let Some((index, _)) = last {
                return Err(JsonlError::LineTooLong {
                    source_name: source_name.to_owned(),
                    line: index + 1,
                    limit: config.max_line_bytes,
                });
            }
        }
        if end {
            break;
        }
    }
    read.warnings = field_name_warnings(numbers.into_iter().zip(&read.chunks), source_name);
    Ok(read)
}

/// Lines read and not parsed yet: their bytes one after the other, and each line's 0-based index
/// and range.
#[derive(Default)]
struct Batch {
    bytes: Vec<u8>,
    lines: Vec<(usize, Range<usize>)>,
}

impl Batch {
    /// Parses the batch's lines with `parser` into `chunks` (and their 1-based line numbers into
    /// `numbers`), then empties it; the first bad line in line order is the error.
    fn parse(
        &mut self,
        source_name: &str,
        config: &JsonlConfig,
        parser: &impl ParseLines,
        chunks: &mut Vec<Chunk>,
        numbers: &mut Vec<usize>,
    ) -> Result<(), JsonlError> {
        let lines: Vec<(usize, &[u8])> = self
            .lines
            .iter()
            .map(|(index, range)| (*index, &self.bytes[range.clone()]))
            .collect();
        let parse = |index: usize, line: &[u8]| parse_numbered_line(line, index, source_name, config);
        for ((index, _), parsed) in lines.iter().zip(parser.parse_lines(&lines, &parse)) {
            if let Some(chunk) = parsed? {
                chunks.push(chunk);
                numbers.push(index + 1);
            }
        }
        self.bytes.clear();
        self.lines.clear();
        Ok(())
    }
}

/// One line of a JSONL stream (0-based `index`, with or without its line break) as [`read_chunks`]
/// reads it: `None` for a blank line, or the chunk. On the first line, a UTF-8 byte-order mark is
/// skipped.
pub fn parse_numbered_line(
    line: &[u8],
    index: usize,
    source_name: &str,
    config: &JsonlConfig,
) -> Result<Option<Chunk>, JsonlError> {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.len() > config.max_line_bytes {
        return Err(JsonlError::LineTooLong {
            source_name: source_name.to_owned(),
            line: index + 1,
            limit: config.max_line_bytes,
        });
    }
    // Editors on Windows write a byte-order mark; it is not part of the first chunk.
    let line = match line.strip_prefix(b"\xef\xbb\xbf") {
        Some(rest) if index == 0 => rest,
        _ => line,
    };
    let line = std::str::from_utf8(line).map_err(|err| JsonlError::InvalidUtf8 {
        source_name: source_name.to_owned(),
        line: index + 1,
        offset: err.valid_up_to(),
    })?;
    if line.trim().is_empty() {
        return Ok(None);
    }
    let default_tenant = match &config.missing_tenant {
        MissingTenant::Assign(tenant) => Some(tenant),
        MissingTenant::Refuse => None,
    };
    parse_chunk_line(line, default_tenant).map(Some).map_err(|err| {
        if default_tenant.is_none() && is_missing_tenant(&err) {
            JsonlError::MissingTenant {
                source_name: source_name.to_owned(),
                line: index + 1,
                id: id_of(line),
            }
        } else {
            JsonlError::InvalidLine {
                source_name: source_name.to_owned(),
                line: index + 1,
                message: err.to_string(),
            }
        }
    })
}

/// The `id` of a line that parsed as JSON but not as a chunk, for the error message.
fn id_of(line: &str) -> String {
    serde_json::from_str::<serde_json::Value>(line)
        .ok()
        .and_then(|value| {
            value
                .get("id")
                .map(|id| id.as_str().map_or_else(|| id.to_string(), str::to_owned))
        })
        .unwrap_or_else(|| "?".to_owned())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn assign(tenant: &str) -> JsonlConfig {
        JsonlConfig::new(MissingTenant::Assign(TenantId::new(tenant)))
    }

    #[test]
    fn reads_chunks_and_fills_the_default_tenant() {
        let input = "{\"id\":\"a\",\"document_id\":\"d\",\"tenant_id\":\"t1\",\"content\":\"x\"}\n\n\
                     {\"id\":\"b\",\"document_id\":\"d\",\"content\":\"y\",\"score\":0.5}\n";
        let read = read_chunks(input.as_bytes(), "in.jsonl", &assign("local")).unwrap();
        let chunks = read.chunks;
        assert_eq!(chunks.len(), 2);
        assert_eq!(chunks[0].tenant_id.as_str(), "t1", "a given tenant is kept");
        assert_eq!(chunks[1].tenant_id.as_str(), "local");
        assert_eq!(chunks[1].score, Some(0.5));
        assert!(read.warnings.is_empty());
    }

    #[test]
    fn a_bad_line_is_named_by_number() {
        let input = "{\"id\":\"a\",\"document_id\":\"d\",\"tenant_id\":\"t\",\"content\":\"x\"}\n{\"id\": oops}\n";
        let err = read_chunks(input.as_bytes(), "in.jsonl", &assign("t")).unwrap_err();
        assert!(err.to_string().starts_with("in.jsonl:2: "), "{err}");

        let input = "{\"id\":\"a\",\"document_id\":\"d\",\"tenant_id\":\"t\"}\n";
        let err = read_chunks(input.as_bytes(), "-", &assign("t")).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("-:1: chunk a has neither content nor content_ref"),
            "{err}"
        );
    }

    #[test]
    fn edge_cases_read_alike_whatever_the_parse_order() {
        let inputs: [&[u8]; 9] = [
            b"",
            b"\n",
            b"{\"id\":\"a\",\"document_id\":\"d\",\"content\":\"x\"}",
            b"\r\n{\"id\":\"a\",\"document_id\":\"d\",\"content\":\"x\"}\r\n\n{\"id\":\"b\",\"document_id\":\"d\",\"content\":\"y\"}\n",
            b"{\"id\":\"a\",\"document_id\":\"d\",\"content\":\"x\"}\n{oops}\n\xff\n",
            b"{\"id\":\"a\",\"document_id\":\"d\",\"content\":\"x\"}\n\xff\n{oops}\n",
            b"\xef\xbb\xbf{\"id\":\"a\",\"document_id\":\"d\",\"content\":\"x\"}\n",
            b"{\"id\":\"a\",\"document_id\":\"d\",\"content\":\"x\"}\n\xef\xbb\xbf{}\n",
            b"{\"id\":\"a\",\"document_id\":\"d\",\"content\":\"a line over the limit\"}\n",
        ];
        let config = assign("local").with_max_line_bytes(60);
        for input in inputs {
            let streamed = read_chunks(input, "in", &config)
                .map(|read| read.chunks)
                .map_err(|e| e.to_string());
            let last_first = read_chunks_with(input, "in", &config, &LastFirst)
                .map(|read| read.chunks)
                .map_err(|e| e.to_string());
            assert_eq!(streamed, last_first, "{input:?}");
        }
    }

    #[test]
    fn invalid_utf8_names_the_line_and_the_byte() {
        let input = b"{\"id\":\"a\",\"document_id\":\"d\",\"content\":\"x\"}\n{\"id\":\"b\xff\"}\n";
        let err = read_chunks(&input[..], "in.jsonl", &assign("t")).unwrap_err();
        assert_eq!(err.to_string(), "in.jsonl:2: invalid UTF-8 at byte 8 of the line");
    }

    #[test]
    fn a_byte_order_mark_is_skipped_on_the_first_line_only() {
        let input = "\u{feff}{\"id\":\"a\",\"document_id\":\"d\",\"content\":\"x\"}\n";
        let read = read_chunks(input.as_bytes(), "in.jsonl", &assign("t")).unwrap();
        assert_eq!(read.chunks[0].id.as_str(), "a");
        let input = "{\"id\":\"a\",\"document_id\":\"d\",\"content\":\"x\"}\n\u{feff}{\"id\":\"b\"}\n";
        let err = read_chunks(input.as_bytes(), "in.jsonl", &assign("t")).unwrap_err();
        assert!(err.to_string().starts_with("in.jsonl:2: expected value"), "{err}");
    }

    #[test]
    fn a_line_over_the_limit_is_refused_before_it_is_read_whole() {
        // An endless stream without line breaks: the reader stops one byte past the limit.
        let endless = std::io::BufReader::new(std::io::repeat(b'x'));
        let err = read_chunks(endless, "/dev/zero", &assign("t").with_max_line_bytes(1000)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "/dev/zero:1: line is longer than the limit of 1000 bytes"
        );
        // A line of exactly the limit is read.
        let line = json!({"id": "a", "document_id": "d", "content": "x"}).to_string();
        let config = assign("t").with_max_line_bytes(line.len());
        assert_eq!(
            read_chunks(format!("{line}\r\n").as_bytes(), "in", &config)
                .unwrap()
                .chunks
                .len(),
            1
        );
        assert_eq!(read_chunks(line.as_bytes(), "in", &config).unwrap().chunks.len(), 1);
        let config = assign("t").with_max_line_bytes(line.len() - 1);
        let err = read_chunks(format!("\n{line}\n").as_bytes(), "in", &config).unwrap_err();
        assert!(err.to_string().starts_with("in:2: line is longer"), "{err}");
    }

    #[test]
    fn a_missing_tenant_is_refused_when_required() {
        let input = "{\"id\":\"a\",\"document_id\":\"d\",\"tenant_id\":\"t\",\"content\":\"x\"}\n\
                     {\"id\":\"b\",\"document_id\":\"d\",\"content\":\"x\"}\n";
        let strict = JsonlConfig::new(MissingTenant::Refuse);
        let refusal = |input: &str| read_chunks(input.as_bytes(), "f", &strict).unwrap_err().to_string();
        assert_eq!(
            refusal(input),
            "f:2: chunk b has no tenant_id, and a tenant is required"
        );
        let err = refusal("{\"id\":7,\"document_id\":\"d\",\"content\":\"x\"}");
        assert!(err.starts_with("f:1: invalid type"), "{err}");
        // Other errors keep their own message.
        let err = refusal("{\"id\":\"a\",\"tenant_id\":\"t\",\"content\":\"x\"}");
        assert!(err.contains("missing field `document_id`"), "{err}");
    }

    #[test]
    fn keys_that_resemble_known_fields_are_warned_about_once() {
        let input = [
            json!({"id": "a", "document_id": "d", "content": "x", "Tenant_Id": "globex"}),
            json!({"id": "b", "document_id": "d", "content": "x", "tenantId": "globex", "token-count": 3}),
            json!({"id": "c", "document_id": "d", "content": "x", "Tenant_Id": "globex", "reranker": [1]}),
        ]
        .map(|v| v.to_string())
        .join("\n");
        let read = read_chunks(input.as_bytes(), "in.jsonl", &assign("acme")).unwrap();
        assert!(read.chunks.iter().all(|c| c.tenant_id.as_str() == "acme"));
        let warnings: Vec<String> = read.warnings.iter().map(ToString::to_string).collect();
        assert_eq!(
            warnings,
            [
                "in.jsonl:1: unknown field `Tenant_Id` is read as an extra field, not as `tenant_id`",
                "in.jsonl:2: unknown field `tenantId` is read as an extra field, not as `tenant_id`",
                "in.jsonl:2: unknown field `token-count` is read as an extra field, not as `token_count`",
            ]
        );
    }

    #[test]
    fn a_misspelt_tokenizer_is_warned_about_like_a_misspelt_count() {
        let input = json!({"id": "a", "document_id": "d", "content": "x",
                           "Token_Count": 3, "Tokenizer": "tiktoken:o200k_base"})
        .to_string();
        let read = read_chunks(input.as_bytes(), "in.jsonl", &assign("acme")).unwrap();
        let warnings: Vec<String> = read.warnings.iter().map(ToString::to_string).collect();
        assert_eq!(
            warnings,
            [
                "in.jsonl:1: unknown field `Token_Count` is read as an extra field, not as `token_count`",
                "in.jsonl:1: unknown field `Tokenizer` is read as an extra field, not as `tokenizer`",
            ]
        );
    }

    #[test]
    fn every_field_of_a_full_chunk_is_known() {
        let mut chunk = Chunk::with_content("c", "d", "t", "x");
        chunk.token_count = Some(1);
        chunk.tokenizer = Some("tiktoken:cl100k_base".into());
        chunk.span = Some(crate::Span::new(0, 1));
        chunk.provenance = vec![crate::Origin::bytes(10, 11)];
        chunk.source_uri = Some("s".into());
        chunk.score = Some(1.0);
        chunk.trust = crate::TrustLevel::Untrusted;
        chunk.pinned = true;
        chunk.acl_labels = vec!["l".into()];
        chunk.metadata.insert("k".into(), json!(1));
        chunk.parent_id = Some("p".into());
        chunk.embedding = Some(crate::Embedding::new("m", vec![1.0]));
        let value = serde_json::to_value(&chunk).unwrap();
        let mut written: Vec<&str> = value.as_object().unwrap().keys().map(String::as_str).collect();
        // A chunk holds content or a reference, so one full chunk cannot show both.
        written.push("content_ref");
        written.sort_unstable();
        let mut known = CHUNK_FIELDS.to_vec();
        known.sort_unstable();
        assert_eq!(written, known, "CHUNK_FIELDS lists exactly the fields a chunk writes");
    }

    /// Parses a batch's lines last first, as a thread pool may finish them in any order.
    struct LastFirst;

    impl ParseLines for LastFirst {
        fn parse_lines<T: Send>(&self, lines: &[(usize, &[u8])], parse: &(dyn Fn(usize, &[u8]) -> T + Sync)) -> Vec<T> {
            let mut parsed: Vec<T> = lines.iter().rev().map(|&(index, line)| parse(index, line)).collect();
            parsed.reverse();
            parsed
        }
    }

    fn line(id: usize) -> String {
        format!(
            "{{\"id\":\"c{id}\",\"document_id\":\"d\",\"content\":\"{}\"}}\n",
            "x".repeat(200)
        )
    }

    #[test]
    fn lines_parsed_in_any_order_and_over_several_batches_read_the_same() {
        // Over two batches of BATCH_BYTES, with a blank line and a misspelt field in the second.
        let count = BATCH_BYTES / line(0).len() + 100;
        let mut input: String = (0..count).map(line).collect();
        input.push_str("\n{\"id\":\"last\",\"document_id\":\"d\",\"content\":\"y\",\"tokenCount\":3}");
        let in_order = read_chunks(input.as_bytes(), "in.jsonl", &assign("acme")).unwrap();
        let last_first = read_chunks_with(input.as_bytes(), "in.jsonl", &assign("acme"), &LastFirst).unwrap();
        assert_eq!(in_order, last_first);
        assert_eq!(in_order.chunks.len(), count + 1);
        assert_eq!(in_order.chunks[count].id.as_str(), "last");
        assert_eq!(
            in_order.warnings[0].to_string(),
            format!(
                "in.jsonl:{}: unknown field `tokenCount` is read as an extra field, not as `token_count`",
                count + 2
            )
        );
    }

    #[test]
    fn the_first_bad_line_is_the_error_whatever_the_parse_order_or_the_batch() {
        let count = BATCH_BYTES / line(0).len() + 100;
        let mut input: String = (0..count).map(line).collect();
        // A bad line in the second batch, then one too long for the limit: the first one counts.
        input.push_str("{\"id\":\"bad\"}\n");
        input.push_str(&"z".repeat(400));
        input.push('\n');
        let config = assign("acme").with_max_line_bytes(300);
        let expected = format!("in.jsonl:{}: ", count + 1);
        for err in [
            read_chunks(input.as_bytes(), "in.jsonl", &config).unwrap_err(),
            read_chunks_with(input.as_bytes(), "in.jsonl", &config, &LastFirst).unwrap_err(),
        ] {
            assert!(matches!(err, JsonlError::InvalidLine { .. }), "{err}");
            assert!(err.to_string().starts_with(&expected), "{err}");
        }
        // Without the bad line, the long one is the error, after every line before it parsed.
        let input = input.replace("{\"id\":\"bad\"}\n", "");
        let err = read_chunks_with(input.as_bytes(), "in.jsonl", &config, &LastFirst).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("in.jsonl:{}: line is longer than the limit of 300 bytes", count + 1)
        );
    }
}
