//! End-to-end tests of the `ragctl` binary.
#![allow(clippy::unwrap_used, clippy::print_stderr, missing_docs)]

mod chunk;
mod code;
mod conventions;
mod docx;
mod embed;
mod hostile;
mod html;
mod otlp;
mod pack;
mod pdf;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use assert_cmd::Command;
use assert_cmd::assert::Assert;
use serde_json::{Value, json};

/// The binary under test.
pub fn ragctl() -> Command {
    Command::cargo_bin("ragctl").unwrap()
}

/// The `ragctl` binary, run from `dir` (so the paths it prints are relative to it).
pub fn ragctl_in(dir: &Path) -> Command {
    let mut cmd = ragctl();
    cmd.current_dir(dir);
    cmd
}

/// Runs `cmd`, asserts that it succeeded, and returns its standard output.
pub fn stdout_of(cmd: &mut Command) -> Vec<u8> {
    cmd.assert().success().get_output().stdout.clone()
}

/// Runs `cmd` and asserts that it refused its input: exit code 1, nothing on standard output.
pub fn refused(cmd: &mut Command) -> Assert {
    cmd.assert().code(1).stdout("")
}

/// Runs `cmd` and asserts that it failed on some inputs only: exit code 1 and each of `errors` on
/// standard error; standard output, which holds the work on the other inputs, is the caller's to
/// check.
pub fn partly_failed(cmd: &mut Command, errors: &[&str]) -> Assert {
    stderr_has(cmd.assert().code(1), errors)
}

/// `assert`, having checked that standard output contains each of `parts`.
pub fn stdout_has(assert: Assert, parts: &[&str]) -> Assert {
    parts
        .iter()
        .fold(assert, |assert, part| assert.stdout(predicates::str::contains(*part)))
}

/// `assert`, having checked that standard error contains each of `parts`.
pub fn stderr_has(assert: Assert, parts: &[&str]) -> Assert {
    parts
        .iter()
        .fold(assert, |assert, part| assert.stderr(predicates::str::contains(*part)))
}

/// The values of JSON Lines output, one a line.
pub fn jsonl(stdout: &[u8]) -> Vec<Value> {
    std::str::from_utf8(stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// The value of JSON output.
pub fn json_of(stdout: &[u8]) -> Value {
    serde_json::from_slice(stdout).unwrap()
}

/// One input line of `ragctl pack`: a chunk of document `doc` with score 0.5, and `extra` fields
/// (which may replace those).
pub fn chunk_line(id: &str, content: &str, extra: Value) -> String {
    let mut v = json!({"id": id, "document_id": "doc", "content": content, "score": 0.5});
    if let (Some(obj), Value::Object(extra)) = (v.as_object_mut(), extra) {
        obj.extend(extra);
    }
    v.to_string()
}

/// A fresh directory for one test holding `files` (name, text), parent directories created.
pub fn dir_with(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = scratch_dir(name);
    for (file, text) in files {
        let path = dir.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

/// A fresh, empty directory for one test.
pub fn scratch_dir(name: &str) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "ragctl-{name}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The workspace root, where the repository's docs live.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

pub const GUIDE_MD: &str = "\
# Guide

Install the tool with cargo. It needs no network at run time.

## Usage

Run `ragctl chunk docs/` to see the chunks.

```sh
# not a heading
ragctl chunk README.md
```

| flag | meaning |
|------|---------|
| -n   | preview |
";
