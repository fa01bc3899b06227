//! Reading chunks from JSON Lines, the CLI's interchange format, with errors that name the line.

use std::io::BufRead;

use crate::{Chunk, TenantId};

/// A line of a JSONL chunk stream that could not be read.
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
        Err(err) if default_tenant.is_some() && err.to_string().starts_with("missing field `tenant_id`") => {
            let mut value: serde_json::Value = serde_json::from_str(line)?;
            if let (Some(obj), Some(tenant)) = (value.as_object_mut(), default_tenant) {
                obj.insert("tenant_id".into(), serde_json::Value::String(tenant.to_string()));
            }
            serde_json::from_value(value)
        }
        Err(err) => Err(err),
    }
}

/// Reads every chunk of a JSONL stream; blank lines are skipped. Stops at the first bad line.
pub fn read_chunks(
    mut reader: impl BufRead,
    source_name: &str,
    default_tenant: Option<&TenantId>,
) -> Result<Vec<Chunk>, JsonlError> {
    let mut chunks = Vec::new();
    let mut line = Vec::new();
    for index in 0.. {
        line.clear();
        let read = reader.read_until(b'\n', &mut line).map_err(|source| JsonlError::Io {
            source_name: source_name.to_owned(),
            source,
        })?;
        if read == 0 {
            break;
        }
        if let Some(chunk) = parse_numbered_line(&line, index, source_name, default_tenant)? {
            chunks.push(chunk);
        }
    }
    Ok(chunks)
}

/// The lines of a whole JSONL input held in memory, each with its 0-based index, for callers that
/// parse them in parallel with [`parse_numbered_line`] (the first error in line order is the one
/// [`read_chunks`] would report).
pub fn lines(input: &[u8]) -> impl Iterator<Item = (usize, &[u8])> {
    let input = input.strip_suffix(b"\n").unwrap_or(input);
    let empty = input.is_empty();
    input.split(|&b| b == b'\n').enumerate().filter(move |_| !empty)
}

/// One line of a JSONL stream (0-based `index`, with or without its line break) as [`read_chunks`]
/// reads it: `None` for a blank line, an I/O error if it is not UTF-8, or the chunk.
pub fn parse_numbered_line(
    line: &[u8],
    index: usize,
    source_name: &str,
    default_tenant: Option<&TenantId>,
) -> Result<Option<Chunk>, JsonlError> {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = std::str::from_utf8(line).map_err(|_| JsonlError::Io {
        source_name: source_name.to_owned(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidData, "stream did not contain valid UTF-8"),
    })?;
    if line.trim().is_empty() {
        return Ok(None);
    }
    parse_chunk_line(line, default_tenant)
        .map(Some)
        .map_err(|err| JsonlError::InvalidLine {
            source_name: source_name.to_owned(),
            line: index + 1,
            message: err.to_string(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_chunks_and_fills_the_default_tenant() {
        let input = "{\"id\":\"a\",\"document_id\":\"d\",\"tenant_id\":\"t1\",\"content\":\"x\"}\n\n\
                     {\"id\":\"b\",\"document_id\":\"d\",\"content\":\"y\",\"score\":0.5}\n";
        let tenant = TenantId::new("local");
        let chunks = read_chunks(input.as_bytes(), "in.jsonl", Some(&tenant)).unwrap();
        assert_eq!(chunks.len(), 2);
        assert_eq!(chunks[0].tenant_id.as_str(), "t1", "a given tenant is kept");
        assert_eq!(chunks[1].tenant_id.as_str(), "local");
        assert_eq!(chunks[1].score, Some(0.5));
    }

    #[test]
    fn a_bad_line_is_named_by_number() {
        let input = "{\"id\":\"a\",\"document_id\":\"d\",\"tenant_id\":\"t\",\"content\":\"x\"}\n{\"id\": oops}\n";
        let err = read_chunks(input.as_bytes(), "in.jsonl", None).unwrap_err();
        assert!(err.to_string().starts_with("in.jsonl:2: "), "{err}");

        let input = "{\"id\":\"a\",\"document_id\":\"d\",\"tenant_id\":\"t\"}\n";
        let err = read_chunks(input.as_bytes(), "-", None).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("-:1: chunk a has neither content nor content_ref"),
            "{err}"
        );
    }

    #[test]
    fn in_memory_lines_read_like_the_stream() {
        let inputs: [&[u8]; 6] = [
            b"",
            b"\n",
            b"{\"id\":\"a\",\"document_id\":\"d\",\"content\":\"x\"}",
            b"\r\n{\"id\":\"a\",\"document_id\":\"d\",\"content\":\"x\"}\r\n\n{\"id\":\"b\",\"document_id\":\"d\",\"content\":\"y\"}\n",
            b"{\"id\":\"a\",\"document_id\":\"d\",\"content\":\"x\"}\n{oops}\n\xff\n",
            b"{\"id\":\"a\",\"document_id\":\"d\",\"content\":\"x\"}\n\xff\n{oops}\n",
        ];
        let tenant = TenantId::new("local");
        for input in inputs {
            let streamed = read_chunks(input, "in", Some(&tenant)).map_err(|e| e.to_string());
            let in_memory: Result<Vec<Chunk>, String> = lines(input)
                .map(|(i, line)| parse_numbered_line(line, i, "in", Some(&tenant)))
                .filter_map(Result::transpose)
                .collect::<Result<_, _>>()
                .map_err(|e| e.to_string());
            assert_eq!(streamed, in_memory, "{input:?}");
        }
    }

    #[test]
    fn a_missing_tenant_without_default_is_an_error() {
        let err = read_chunks(
            "{\"id\":\"a\",\"document_id\":\"d\",\"content\":\"x\"}".as_bytes(),
            "f",
            None,
        )
        .unwrap_err();
        assert!(err.to_string().contains("missing field `tenant_id`"), "{err}");
    }
}
