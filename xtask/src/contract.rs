//! `cargo xtask contract`: the contract suite's self-tests, then every rule against every
//! implementation in the workspace, as a table.
//!
//! The report runs in a release build: the chunker rules tokenize every input twice for six
//! configurations and the packer rules pack every input four times for 72, which takes seconds
//! optimised and minutes in a debug build. The release build of the workspace is shared with
//! `cargo build --release`, so it is paid once.

use crate::run::{cargo, run};

/// The self-tests (each broken implementation is rejected), then the report (exits non-zero if
/// any rule broke on any input).
pub(crate) fn contract() -> Result<(), String> {
    let mut self_tests = cargo();
    self_tests.args(["test", "--package", "rag-contract"]);
    run(self_tests)?;

    let mut report = cargo();
    report.args([
        "run",
        "--release",
        "--package",
        "rag-contract",
        "--features",
        "report",
        "--bin",
        "contract-report",
    ]);
    run(report)
}
