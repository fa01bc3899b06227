//! Turning `ragctl chunk`'s arguments into the list of inputs: directories walked as ripgrep walks
//! them (`.gitignore`, `.ignore`, hidden entries skipped), each file once, and a name for each.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use rag_chunker::DocumentType;

/// One thing to chunk: a file, or stdin.
#[derive(Debug, Clone)]
pub(crate) enum Input {
    /// Standard input, named `-`.
    Stdin,
    /// A file and its name in chunk ids and messages (see [`path_uri`]).
    File {
        /// The path to open.
        path: PathBuf,
        /// The path as given, in UTF-8.
        uri: String,
    },
}

impl Input {
    /// The name the chunks and messages use: the path as given, or `-`.
    pub(crate) fn uri(&self) -> &str {
        match self {
            Self::Stdin => "-",
            Self::File { uri, .. } => uri,
        }
    }
}

/// How directories are walked.
#[derive(Debug, Clone, Copy)]
pub(crate) struct WalkOptions {
    /// Take every file in a directory, not only those of a supported type (`--type` given).
    pub(crate) all_files: bool,
    /// Honour `.gitignore`, `.ignore` and git's exclude files (off with `--no-ignore`).
    pub(crate) ignore_files: bool,
    /// Walk hidden files and directories too (`--hidden`).
    pub(crate) hidden: bool,
}

/// The inputs of a run and what happened to the paths that did not become one.
#[derive(Debug, Default)]
pub(crate) struct Walked {
    /// The inputs, each file once, in argument order then walk order.
    pub(crate) inputs: Vec<Input>,
    /// Paths that could not be walked or do not exist: errors (exit status 1).
    pub(crate) errors: Vec<String>,
    /// Symbolic links in a directory that cannot be followed (dangling, or a loop): warnings.
    pub(crate) broken_links: Vec<String>,
    /// Files in a directory that were skipped because their type is not supported.
    pub(crate) unsupported: Vec<String>,
}

/// Expands the arguments into inputs. A directory is walked recursively, sorted by name, without
/// following symbolic links to directories; a file reached twice (`ragctl chunk . ./a.md`, or
/// through a link) is taken at its first occurrence only.
pub(crate) fn expand_inputs(paths: &[PathBuf], options: WalkOptions) -> Walked {
    let mut walked = Walked::default();
    let mut seen: HashSet<PathBuf> = HashSet::new();
    let mut stdin_taken = false;
    for path in paths {
        if path.as_os_str() == "-" {
            if !std::mem::replace(&mut stdin_taken, true) {
                walked.inputs.push(Input::Stdin);
            }
            continue;
        }
        let uri = path_uri(path);
        match std::fs::metadata(path) {
            Ok(meta) if meta.is_dir() => walk(path, options, &mut seen, &mut walked),
            // A file named explicitly is always attempted, whatever its type.
            Ok(_) => push_file(path, uri, &mut seen, &mut walked),
            Err(err) if is_symlink(path) => walked
                .errors
                .push(format!("{uri}: symbolic link cannot be followed: {err}")),
            Err(err) => walked.errors.push(format!("{uri}: cannot read: {err}")),
        }
    }
    walked
}

fn walk(dir: &Path, options: WalkOptions, seen: &mut HashSet<PathBuf>, walked: &mut Walked) {
    let mut builder = ignore::WalkBuilder::new(dir);
    builder
        .standard_filters(options.ignore_files)
        .hidden(!options.hidden)
        .follow_links(false)
        .sort_by_file_name(|a, b| a.cmp(b));
    for entry in builder.build() {
        let entry = match entry {
            Ok(entry) => entry,
            Err(err) => {
                walked.errors.push(err.to_string());
                continue;
            }
        };
        let path = entry.path();
        let Some(file_type) = entry.file_type() else { continue };
        let is_file = if file_type.is_symlink() {
            match std::fs::metadata(path) {
                // Links to directories are not followed, so a link cycle cannot loop.
                Ok(meta) => meta.is_file(),
                Err(err) => {
                    walked
                        .broken_links
                        .push(format!("{}: symbolic link cannot be followed: {err}", path_uri(path)));
                    continue;
                }
            }
        } else {
            file_type.is_file()
        };
        if !is_file {
            continue;
        }
        let uri = path_uri(path);
        if options.all_files || DocumentType::from_path(&uri).is_some() {
            push_file(path, uri, seen, walked);
        } else {
            walked.unsupported.push(uri);
        }
    }
}

fn push_file(path: &Path, uri: String, seen: &mut HashSet<PathBuf>, walked: &mut Walked) {
    // Canonical paths tell `./a.md`, `a.md` and a link to it apart from a different file.
    let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    if seen.insert(key) {
        walked.inputs.push(Input::File {
            path: path.to_path_buf(),
            uri,
        });
    }
}

fn is_symlink(path: &Path) -> bool {
    path.symlink_metadata().is_ok_and(|m| m.file_type().is_symlink())
}

/// A path as chunk ids and messages name it: its UTF-8 text, with every byte that is not part of
/// valid UTF-8 written `%XX` (upper-case hex) and every `%` written `%25`, so that two different
/// names never give the same id and the name can be recovered byte for byte.
pub(crate) fn path_uri(path: &Path) -> String {
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
