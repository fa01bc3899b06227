//! Turning `ragctl chunk`'s arguments into the list of inputs: stdin where `-` is given, and the
//! files of the other paths as `rag_chunker::ingest::Walk` finds them (directories walked as
//! ripgrep walks them, each file once, named by the library's document-name rule).

use std::path::PathBuf;

use rag_chunker::ingest::{Walk, WalkOptions, WalkReport};

/// One thing to chunk: a file, or stdin.
#[derive(Debug, Clone)]
pub(crate) enum Input {
    /// Standard input, named `-`.
    Stdin,
    /// A file and its name in chunk ids and messages (`rag_chunker::ingest::path_uri`).
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

/// Expands the arguments into inputs, in argument order then walk order, stdin once however
/// often `-` is given; the report says what happened to the paths that gave no file.
pub(crate) fn expand_inputs(paths: &[PathBuf], options: WalkOptions) -> (Vec<Input>, WalkReport) {
    let mut walk = Walk::new(options);
    let mut inputs = Vec::new();
    let mut stdin_taken = false;
    for path in paths {
        if path.as_os_str() == "-" {
            if !std::mem::replace(&mut stdin_taken, true) {
                inputs.push(Input::Stdin);
            }
            continue;
        }
        inputs.extend(walk.add(path).into_iter().map(|found| Input::File {
            path: found.path,
            uri: found.uri,
        }));
    }
    (inputs, walk.finish())
}
