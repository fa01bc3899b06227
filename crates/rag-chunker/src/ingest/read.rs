//! Bounded reading: a file or a stream read whole, but never past a limit, so that a device that
//! never ends or a log of gigabytes costs the limit in memory, not all of it.

use std::io::Read;
use std::path::Path;

use rag_core::ParseError;

/// The most bytes an input is read to by default (`ragctl chunk --max-input-bytes`, Python's
/// `ParseOptions.max_input_bytes`): real documents are under 100 MB; past this, an input is more
/// likely a device or a log than something to chunk.
pub const MAX_INPUT_BYTES: u64 = 256 << 20;

/// What [`ParseError::LimitExceeded`] names when an input is larger than its read limit.
pub const INPUT_SIZE: &str = "the input's size";

/// Reads `reader` to its end, or fails as soon as it yields more than `limit` bytes
/// ([`ParseError::LimitExceeded`] naming [`INPUT_SIZE`]); `name` names the input in errors.
pub fn read_limited(reader: impl Read, name: &str, limit: u64) -> Result<Vec<u8>, ParseError> {
    let mut bytes = Vec::new();
    reader
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|source| ParseError::Io {
            source_uri: name.to_owned(),
            source,
        })?;
    if bytes.len() as u64 > limit {
        return Err(too_large(name, limit));
    }
    Ok(bytes)
}

/// Reads the file at `path` within `limit`: a regular file's size is checked before anything is
/// read, a directory is an [`std::io::ErrorKind::IsADirectory`] error, and a stream (a pipe, a
/// device) is read to one byte past the limit.
pub fn read_file(path: &Path, name: &str, limit: u64) -> Result<Vec<u8>, ParseError> {
    let io_error = |source| ParseError::Io {
        source_uri: name.to_owned(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io_error)?;
    let metadata = file.metadata().map_err(io_error)?;
    if metadata.is_dir() {
        return Err(io_error(std::io::Error::new(
            std::io::ErrorKind::IsADirectory,
            "is a directory",
        )));
    }
    if metadata.is_file() && metadata.len() > limit {
        return Err(too_large(name, limit));
    }
    read_limited(file, name, limit)
}

/// Whether `err` is [`read_limited`]'s or [`read_file`]'s refusal of an input over its limit, so a
/// front end can name its own setting (a flag) in the message.
pub fn is_input_too_large(err: &ParseError) -> bool {
    matches!(err, ParseError::LimitExceeded { what, .. } if what == INPUT_SIZE)
}

fn too_large(name: &str, limit: u64) -> ParseError {
    ParseError::LimitExceeded {
        source_uri: name.to_owned(),
        what: INPUT_SIZE.to_owned(),
        limit: format_size(limit),
    }
}

/// A size as messages print it: `256 MiB` when it is a whole number of KiB, MiB or GiB, else a
/// number of bytes.
pub fn format_size(bytes: u64) -> String {
    for (shift, unit) in [(30, "GiB"), (20, "MiB"), (10, "KiB")] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{} {unit}", bytes >> shift);
        }
    }
    format!("{bytes} bytes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endless_stream_stops_one_byte_past_the_limit() {
        let err = read_limited(std::io::repeat(0), "/dev/zero", 4096).unwrap_err();
        assert!(is_input_too_large(&err));
        assert_eq!(
            err.to_string(),
            "/dev/zero: the input's size exceeds the limit of 4 KiB"
        );
        assert_eq!(read_limited(&[1u8; 4096][..], "x", 4096).unwrap().len(), 4096);
    }

    #[test]
    fn a_file_over_the_limit_is_refused_by_its_size_and_a_directory_by_its_kind() {
        let dir = std::env::temp_dir().join(format!("rag-chunker-read-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("big.md");
        std::fs::write(&file, [b'a'; 2000]).unwrap();
        assert!(is_input_too_large(&read_file(&file, "big.md", 1999).unwrap_err()));
        assert_eq!(read_file(&file, "big.md", 2000).unwrap().len(), 2000);
        let err = read_file(&dir, "dir", 10).unwrap_err();
        assert!(
            matches!(&err, ParseError::Io { source, .. } if source.kind() == std::io::ErrorKind::IsADirectory),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn sizes_print_in_binary_units_when_whole() {
        assert_eq!(format_size(256 << 20), "256 MiB");
        assert_eq!(format_size(4096), "4 KiB");
        assert_eq!(format_size(1000), "1000 bytes");
    }
}
