//! The directory walk: the files a set of paths names, directories walked as ripgrep walks them
//! (`.gitignore`, `.ignore` and git's exclude files honoured, hidden entries skipped), each file
//! once, and a name for each ([`path_uri`]).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::DocumentType;
use crate::ingest::path_uri;

/// How directories are walked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct WalkOptions {
    /// Take every file in a directory, not only those of a supported type (`ragctl chunk
    /// --type`, which names the type of every file).
    pub all_files: bool,
    /// Honour `.gitignore`, `.ignore` and git's exclude files (`ragctl chunk --no-ignore` turns
    /// it off).
    pub ignore_files: bool,
    /// Walk hidden files and directories (names starting with a dot) too (`--hidden`).
    pub hidden: bool,
}

impl Default for WalkOptions {
    /// Supported files only, ignore files honoured, hidden entries skipped: what `ragctl chunk
    /// DIR` walks.
    fn default() -> Self {
        Self {
            all_files: false,
            ignore_files: true,
            hidden: false,
        }
    }
}

/// A file the walk found: the path to open and the name its document carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundFile {
    /// The path to open.
    pub path: PathBuf,
    /// The path as given (or as the walk reached it under a path given), named by [`path_uri`].
    pub uri: String,
}

/// What happened to the paths that did not become files.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WalkReport {
    /// Paths that do not exist or could not be walked, one message each naming the path: errors
    /// (the CLI exits with status 1).
    pub errors: Vec<String>,
    /// Symbolic links in a directory that cannot be followed (dangling, or a loop), one message
    /// each: warnings.
    pub broken_links: Vec<String>,
    /// Files in a directory skipped because their type is not supported (by name).
    pub unsupported: Vec<String>,
}

/// A walk over paths added one at a time, so that a caller can put inputs of its own (stdin)
/// between them in order. A directory is walked recursively, sorted by name, without following
/// symbolic links to directories; a file reached twice (`ragctl chunk . ./a.md`, or through a
/// link) is taken at its first occurrence only. A file named explicitly is taken whatever its
/// type.
///
/// ```
/// use rag_chunker::ingest::{Walk, WalkOptions};
///
/// let dir = std::env::temp_dir().join(format!("walk-doc-{}", std::process::id()));
/// std::fs::create_dir_all(dir.join("guide"))?;
/// std::fs::write(dir.join("guide/b.md"), "# B\n")?;
/// std::fs::write(dir.join("guide/a.txt"), "A\n")?;
/// std::fs::write(dir.join("guide/logo.png"), [0u8; 4])?;
///
/// let mut walk = Walk::new(WalkOptions::default());
/// let found = walk.add(&dir.join("guide"));
/// let names: Vec<_> = found.iter().map(|f| f.path.file_name().unwrap().to_owned()).collect();
/// assert_eq!(names, ["a.txt", "b.md"]);
/// assert_eq!(walk.finish().unsupported.len(), 1); // logo.png
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug)]
pub struct Walk {
    options: WalkOptions,
    seen: HashSet<PathBuf>,
    report: WalkReport,
}

impl Walk {
    /// A walk that has found nothing yet.
    pub fn new(options: WalkOptions) -> Self {
        Self {
            options,
            seen: HashSet::new(),
            report: WalkReport::default(),
        }
    }

    /// The files `path` names that the walk has not found before, in walk order: the file itself,
    /// or the files under a directory. A path that cannot be read is recorded in the report.
    pub fn add(&mut self, path: &Path) -> Vec<FoundFile> {
        let mut found = Vec::new();
        let uri = path_uri(path);
        match std::fs::metadata(path) {
            Ok(meta) if meta.is_dir() => self.walk_dir(path, &mut found),
            Ok(_) => self.take(path, uri, &mut found),
            Err(err) if is_symlink(path) => self
                .report
                .errors
                .push(format!("{uri}: symbolic link cannot be followed: {err}")),
            Err(err) => self.report.errors.push(format!("{uri}: cannot read: {err}")),
        }
        found
    }

    /// What happened to the paths that did not become files.
    pub fn finish(self) -> WalkReport {
        self.report
    }

    fn walk_dir(&mut self, dir: &Path, found: &mut Vec<FoundFile>) {
        let mut builder = ignore::WalkBuilder::new(dir);
        builder
            .standard_filters(self.options.ignore_files)
            .hidden(!self.options.hidden)
            .follow_links(false)
            .sort_by_file_name(|a, b| a.cmp(b));
        for entry in builder.build() {
            let entry = match entry {
                Ok(entry) => entry,
                Err(err) => {
                    self.report.errors.push(err.to_string());
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
                        self.report
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
            if self.options.all_files || DocumentType::from_path(&uri).is_some() {
                self.take(path, uri, found);
            } else {
                self.report.unsupported.push(uri);
            }
        }
    }

    fn take(&mut self, path: &Path, uri: String, found: &mut Vec<FoundFile>) {
        // Canonical paths tell `./a.md`, `a.md` and a link to it apart from a different file.
        let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        if self.seen.insert(key) {
            found.push(FoundFile {
                path: path.to_path_buf(),
                uri,
            });
        }
    }
}

fn is_symlink(path: &Path) -> bool {
    path.symlink_metadata().is_ok_and(|m| m.file_type().is_symlink())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("rag-chunker-walk-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("docs/.hidden")).unwrap();
        std::fs::create_dir_all(dir.join("docs/build")).unwrap();
        std::fs::write(dir.join("docs/.gitignore"), "build/\n").unwrap();
        std::fs::write(dir.join("docs/a.md"), "a").unwrap();
        std::fs::write(dir.join("docs/.hidden/h.md"), "h").unwrap();
        std::fs::write(dir.join("docs/build/out.md"), "o").unwrap();
        std::fs::write(dir.join("docs/data.bin"), "x").unwrap();
        dir
    }

    fn names(found: &[FoundFile], root: &Path) -> Vec<String> {
        found
            .iter()
            .map(|f| f.path.strip_prefix(root).unwrap().to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn a_walk_honours_gitignore_and_hidden_names_unless_told_not_to() {
        let dir = tree("ignore");
        let docs = dir.join("docs");
        // A .gitignore applies inside a git repository only, as git applies it.
        std::fs::create_dir_all(docs.join(".git")).unwrap();
        let mut walk = Walk::new(WalkOptions::default());
        assert_eq!(names(&walk.add(&docs), &docs), ["a.md"]);
        assert_eq!(walk.finish().unsupported.len(), 1);

        let all = WalkOptions {
            ignore_files: false,
            hidden: true,
            ..WalkOptions::default()
        };
        let mut walk = Walk::new(all);
        let mut found = names(&walk.add(&docs), &docs);
        found.sort();
        assert_eq!(found, [".hidden/h.md", "a.md", "build/out.md"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_file_reached_twice_is_taken_once_and_a_missing_path_is_an_error() {
        let dir = tree("twice");
        let docs = dir.join("docs");
        let mut walk = Walk::new(WalkOptions::default());
        assert_eq!(walk.add(&docs.join("a.md")).len(), 1);
        // Outside a git repository `.gitignore` does not apply (as in git), so `build/` is walked;
        // `a.md` was found already.
        assert_eq!(names(&walk.add(&docs), &docs), ["build/out.md"]);
        // A file named explicitly is taken whatever its type.
        assert_eq!(walk.add(&docs.join("data.bin")).len(), 1);
        assert!(walk.add(&docs.join("missing.md")).is_empty());
        let report = walk.finish();
        assert_eq!(report.errors.len(), 1);
        assert!(
            report.errors[0].contains("missing.md: cannot read"),
            "{:?}",
            report.errors
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
