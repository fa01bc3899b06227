//! `cargo xtask bench`: every performance figure of issue 6 in one table.
//!
//! Builds `ragctl` in release, then runs the `rag-bench` harness in release (with the `bpe-openai`
//! backend, a feature of `rag-chunker` that `rag-bench` turns on), passing the binary's path so it
//! can time the CLI too. Extra arguments (`--corpus DIR`, `--quick`, `--runs N`) go to the harness.

use crate::run::{cargo, run, workspace_root};

pub(crate) fn bench(extra: &[String]) -> Result<(), String> {
    let mut build = cargo();
    build.args(["build", "--release", "--package", "ragctl"]);
    run(build)?;

    let ragctl = workspace_root().join("target/release/ragctl");
    let mut harness = cargo();
    harness
        .args(["run", "--release", "--package", "rag-bench", "--", "--ragctl"])
        .arg(ragctl)
        .args(extra);
    run(harness)
}
