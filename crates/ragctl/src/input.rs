//! Reading inputs within their size limits: whole files and stdin for `chunk`, JSON Lines for
//! `pack`.

use std::io::Read;
use std::path::Path;

use rag_chunker::ingest::{self, format_size, is_input_too_large};
use rag_core::Chunk;
use rag_core::jsonl::{FieldNameWarning, JsonlConfig, JsonlError, ParseLines, read_chunks_with};
use rayon::prelude::*;

/// The error of an input that is larger than its limit, naming the flag that sets it.
fn too_large(name: &str, flag: &str, limit: u64) -> anyhow::Error {
    anyhow::anyhow!(
        "{name}: input is larger than {flag} ({}); raise the limit to read it",
        format_size(limit)
    )
}

/// The library's reading error, with the flag named when the input is over its limit.
fn with_flag(err: rag_core::ParseError, name: &str, flag: &str, limit: u64) -> anyhow::Error {
    match &err {
        _ if is_input_too_large(&err) => too_large(name, flag, limit),
        rag_core::ParseError::Io { source, .. } if source.kind() == std::io::ErrorKind::IsADirectory => {
            anyhow::anyhow!("{name}: is a directory")
        }
        _ => err.into(),
    }
}

/// Parses a size for the `--max-*-bytes` flags: a number of bytes, optionally followed by K, M or
/// G (binary multiples: KiB, MiB and GiB are accepted too).
pub(crate) fn parse_size(value: &str) -> Result<u64, String> {
    let trimmed = value.trim();
    let split = trimmed.find(|c: char| !c.is_ascii_digit()).unwrap_or(trimmed.len());
    let (digits, unit) = trimmed.split_at(split);
    let number: u64 = digits
        .parse()
        .map_err(|_| format!("{value:?} is not a size (a number of bytes, optionally with K, M or G)"))?;
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kib" => 10,
        "m" | "mib" => 20,
        "g" | "gib" => 30,
        other => return Err(format!("unknown size unit {other:?}: use K, M or G")),
    };
    let bytes = number
        .checked_mul(1 << shift)
        .ok_or_else(|| format!("{value:?} is too large"))?;
    if bytes == 0 {
        return Err("the limit must be at least 1 byte".to_owned());
    }
    Ok(bytes)
}

/// Reads `reader` to its end, or fails as soon as it yields more than `limit` bytes
/// (`rag_chunker::ingest::read_limited`), the message naming `flag`.
pub(crate) fn read_limited(reader: impl Read, name: &str, limit: u64, flag: &'static str) -> anyhow::Result<Vec<u8>> {
    ingest::read_limited(reader, name, limit).map_err(|err| with_flag(err, name, flag, limit))
}

/// Reads a file within `limit` (`rag_chunker::ingest::read_file`), the message naming `flag`.
pub(crate) fn read_file_limited(path: &Path, name: &str, limit: u64, flag: &'static str) -> anyhow::Result<Vec<u8>> {
    ingest::read_file(path, name, limit).map_err(|err| with_flag(err, name, flag, limit))
}

/// The chunks of a JSONL input (a file, or stdin for `-`) and the warnings about its field names.
///
/// The input is read whole (within `max_input_bytes`), then handed to the one reader,
/// `rag_core::jsonl::read_chunks_with`, which parses its lines on rayon's pool: parsing dominates a
/// large `pack`, and lines are independent.
pub(crate) fn read_jsonl(
    path: &Path,
    config: &JsonlConfig,
    max_input_bytes: u64,
) -> anyhow::Result<(Vec<Chunk>, Vec<FieldNameWarning>)> {
    const FLAG: &str = "--max-input-bytes";
    let (name, input) = if path.as_os_str() == "-" {
        let name = "-".to_owned();
        let input = read_limited(std::io::stdin().lock(), &name, max_input_bytes, FLAG)?;
        (name, input)
    } else {
        let name = ingest::path_uri(path);
        let input = read_file_limited(path, &name, max_input_bytes, FLAG)?;
        (name, input)
    };
    match read_chunks_with(&input[..], &name, config, &OnThePool) {
        Ok(read) => Ok((read.chunks, read.warnings)),
        Err(err @ JsonlError::InvalidLine { line, .. }) if is_first_and_no_object(&input, line) => {
            // The first chunk line is not even an object: the whole input is likely in another
            // format, most often `ragctl chunk`'s default text report redirected to a file.
            Err(anyhow::anyhow!(
                "{err} (the input is not JSONL: each line must be one chunk as a JSON object; \
                 `ragctl chunk --format jsonl` writes that)"
            ))
        }
        Err(err) => Err(err.into()),
    }
}

/// JSONL lines parsed on rayon's pool.
struct OnThePool;

impl ParseLines for OnThePool {
    fn parse_lines<T: Send>(&self, lines: &[(usize, &[u8])], parse: &(dyn Fn(usize, &[u8]) -> T + Sync)) -> Vec<T> {
        lines.par_iter().map(|&(index, line)| parse(index, line)).collect()
    }
}

/// Whether 1-based `line` of `input` is its first line that is not blank, and does not open a
/// JSON object.
fn is_first_and_no_object(input: &[u8], line: usize) -> bool {
    let mut lines = input.split(|&b| b == b'\n').enumerate();
    // Blank as the reader sees it: white space alone, after a byte-order mark on the first line.
    let before_are_blank = lines.by_ref().take(line.saturating_sub(1)).all(|(index, l)| {
        let l = if index == 0 {
            l.strip_prefix(b"\xef\xbb\xbf").unwrap_or(l)
        } else {
            l
        };
        std::str::from_utf8(l).is_ok_and(|text| text.trim().is_empty())
    });
    before_are_blank && lines.next().is_some_and(|(_, l)| !starts_as_object(l))
}

/// Whether `line` opens a JSON object, after a byte-order mark and white space.
fn starts_as_object(line: &[u8]) -> bool {
    let line = line.strip_prefix(b"\xef\xbb\xbf").unwrap_or(line);
    line.trim_ascii_start().starts_with(b"{")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_units() {
        assert_eq!(parse_size("1000"), Ok(1000));
        assert_eq!(parse_size("64K"), Ok(64 << 10));
        assert_eq!(parse_size("256MiB"), Ok(256 << 20));
        assert_eq!(parse_size("2g"), Ok(2 << 30));
        assert!(parse_size("0").is_err());
        assert!(parse_size("12Q").unwrap_err().contains("unit"));
        assert!(parse_size("-1").is_err());
    }

    #[test]
    fn an_endless_stream_stops_one_byte_past_the_limit() {
        let err = read_limited(std::io::repeat(0), "/dev/zero", 4096, "--max-input-bytes").unwrap_err();
        assert_eq!(
            err.to_string(),
            "/dev/zero: input is larger than --max-input-bytes (4 KiB); raise the limit to read it"
        );
        assert_eq!(
            read_limited(&[1u8; 4096][..], "x", 4096, "--max-input-bytes")
                .unwrap()
                .len(),
            4096
        );
    }
}
