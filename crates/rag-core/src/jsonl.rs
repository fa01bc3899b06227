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
    reader: impl BufRead,
    source_name: &str,
    default_tenant: Option<&TenantId>,
) -> Result<Vec<Chunk>, JsonlError> {
    let mut chunks = Vec::new();
    for (index, line) in reader.lines().enumerate() {
        let line = line.map_err(|source| JsonlError::Io {
            source_name: source_name.to_owned(),
            source,
        })?;
        if line.trim().is_empty() {
            continue;
        }
        let chunk = parse_chunk_line(&line, default_tenant).map_err(|err| JsonlError::InvalidLine {
            source_name: source_name.to_owned(),
            line: index + 1,
            message: err.to_string(),
        })?;
        chunks.push(chunk);
    }
    Ok(chunks)
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
