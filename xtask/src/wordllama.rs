//! `cargo xtask wordllama`: a model2vec folder for `ragctl --embedder`, made from the one static
//! embedding model a registry package ships, the `wordllama` wheel (PyPI, MIT; its matrix derives
//! from Llama 2's token embeddings, under the Llama 2 Community License).
//!
//! Downloads the wheel with pip from PyPI into `target/models/wheels` (nothing else: `--no-deps`,
//! and the wheel is not installed), then `scripts/wordllama_model2vec.py` re-keys its F16 matrix
//! to `embeddings`, writes `config.json` and copies its tokenizer to `tokenizer.json`, in
//! `target/models/wordllama-l2-256` (or the directory given). No model hub is contacted; the folder
//! stays under `target/` and is never committed.

use std::path::PathBuf;
use std::process::Command;

use crate::run::{run, workspace_root};

/// The wheel: the last release that ships its tokenizer file inside.
const WHEEL: &str = "wordllama==0.4.0.post1";

pub(crate) fn wordllama(args: &[String]) -> Result<(), String> {
    let root = workspace_root();
    let out = match args {
        [] => root.join("target/models/wordllama-l2-256"),
        [dir] => PathBuf::from(dir),
        _ => return Err("usage: cargo xtask wordllama [OUT_DIR]".to_owned()),
    };
    let wheels = root.join("target/models/wheels");
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_owned());
    let mut download = Command::new(&python);
    download
        .args(["-m", "pip", "download", "--no-deps", "--only-binary", ":all:", "-d"])
        .arg(&wheels)
        .arg(WHEEL);
    run(download)?;
    let wheel = std::fs::read_dir(&wheels)
        .map_err(|e| format!("{}: {e}", wheels.display()))?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .find(|path| {
            path.file_name()
                .is_some_and(|name| name.to_string_lossy().starts_with("wordllama-0.4.0.post1-"))
        })
        .ok_or_else(|| format!("{}: pip left no wordllama 0.4.0.post1 wheel", wheels.display()))?;
    let mut convert = Command::new(&python);
    convert
        .arg(root.join("scripts/wordllama_model2vec.py"))
        .arg(&wheel)
        .arg(&out);
    run(convert)
}
