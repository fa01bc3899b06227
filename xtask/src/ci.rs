//! `cargo xtask ci` and `cargo xtask contract`.

use crate::run::{cargo, run};

/// Everything CI checks, in the order that fails fastest.
pub(crate) fn ci() -> Result<(), String> {
    let mut fmt = cargo();
    fmt.args(["fmt", "--all", "--check"]);
    run(fmt)?;

    let mut clippy = cargo();
    clippy.args(["clippy", "--workspace", "--all-targets", "--", "-D", "warnings"]);
    run(clippy)?;
    // The contract report is behind a feature that `--workspace` does not turn on; checked here,
    // it fails in minutes rather than after the test build.
    let mut report = cargo();
    report.args([
        "clippy",
        "--package",
        "rag-contract",
        "--features",
        "report",
        "--bins",
        "--",
        "-D",
        "warnings",
    ]);
    run(report)?;

    // Licences and advisories take seconds once cargo-deny is installed; a refused licence
    // should not wait for the test build.
    crate::deny::deny()?;

    // rag-python has no Rust tests (its suite is pytest, in `python` below); leaving it out keeps
    // the features it turns on (rag-tokens' bpe-openai, whose build script builds tables) out of
    // the debug test build.
    let mut test = cargo();
    test.args(["test", "--workspace", "--exclude", "rag-python"]);
    run(test)?;

    // Broken intra-doc links and bad doc markup are errors, as in a docs.rs build.
    let mut doc = cargo();
    doc.args(["doc", "--workspace", "--no-deps"])
        .env("RUSTDOCFLAGS", "-D warnings");
    run(doc)?;

    contract()?;
    crate::python::python()
}

/// The contract suite: every rule against every implementation in the workspace.
pub(crate) fn contract() -> Result<(), String> {
    crate::contract::contract()
}
