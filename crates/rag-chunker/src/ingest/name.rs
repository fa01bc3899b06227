//! The document-name rule: how a path becomes the name chunk ids and messages carry.

use std::path::Path;

/// A path as chunk ids and messages name it: its UTF-8 text, with every byte that is not part of
/// valid UTF-8 written `%XX` (upper-case hex) and every `%` written `%25`, so that two different
/// names never give the same id and the name can be recovered byte for byte.
///
/// ```
/// use std::path::Path;
/// use rag_chunker::ingest::path_uri;
///
/// assert_eq!(path_uri(Path::new("docs/guide.md")), "docs/guide.md");
/// assert_eq!(path_uri(Path::new("docs/100%.md")), "docs/100%25.md");
/// ```
pub fn path_uri(path: &Path) -> String {
    let bytes = path.as_os_str().as_encoded_bytes();
    if let Ok(text) = std::str::from_utf8(bytes)
        && !text.contains('%')
    {
        return text.to_owned();
    }
    let mut uri = String::with_capacity(bytes.len() + 8);
    for piece in bytes.utf8_chunks() {
        uri.push_str(&piece.valid().replace('%', "%25"));
        for byte in piece.invalid() {
            uri.push_str(&format!("%{byte:02X}"));
        }
    }
    uri
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn non_utf8_names_are_percent_escaped_and_stay_distinct() {
        use std::os::unix::ffi::OsStrExt as _;
        let uri = |bytes: &[u8]| path_uri(Path::new(std::ffi::OsStr::from_bytes(bytes)));
        assert_eq!(uri(b"docs/a.md"), "docs/a.md");
        assert_eq!(uri(b"./\xff.md"), "./%FF.md");
        assert_eq!(uri(b"./\xfe.md"), "./%FE.md");
        assert_eq!(uri(b"./%FF.md"), "./%25FF.md");
        assert_eq!(uri(b"caf\xc3\xa9 \xe9t\xc3.md"), "café %E9t%C3.md");
    }
}
