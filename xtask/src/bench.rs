//! `cargo xtask bench`: every performance figure of `docs/performance.md`, with its target, in one
//! table.
//!
//! Builds `ragctl` in release, runs the `bpe-openai` equivalence test of `rag-tokens` (the backend
//! is a feature, not built by `cargo test --workspace`), then runs the `rag-bench` harness in
//! release with that backend, passing the binary's path so it can time the CLI too. Extra
//! arguments (`--corpus DIR`, `--quick`, `--runs N`) go to the harness.

use crate::run::{cargo, run, workspace_root};

pub(crate) fn bench(extra: &[String]) -> Result<(), String> {
    let mut build = cargo();
    build.args(["build", "--release", "--package", "ragctl"]);
    run(build)?;

    // Release, like the harness: the test shares its build of rag-tokens with the feature.
    let mut equivalence = cargo();
    equivalence.args([
        "test",
        "--release",
        "--package",
        "rag-tokens",
        "--features",
        "bpe-openai",
        "--test",
        "counters",
    ]);
    run(equivalence)?;

    let ragctl = workspace_root().join("target/release/ragctl");
    let mut harness = cargo();
    harness
        .args([
            "run",
            "--release",
            "--package",
            "rag-bench",
            "--features",
            "bpe-openai",
            "--",
            "--ragctl",
        ])
        .arg(ragctl)
        .args(extra);
    run(harness)
}
