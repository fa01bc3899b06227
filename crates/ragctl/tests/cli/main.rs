//! End-to-end tests of the `ragctl` binary.
#![allow(clippy::unwrap_used, clippy::print_stderr, missing_docs)]

mod chunk;
mod conventions;
mod hostile;
mod otlp;
mod pack;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use assert_cmd::Command;

/// The binary under test.
pub fn ragctl() -> Command {
    Command::cargo_bin("ragctl").unwrap()
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
