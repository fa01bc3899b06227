//! `cargo xtask contract`: the contract suite's self-tests, then every rule against every
//! implementation in the workspace, as a table.
//!
//! The report runs in a debug build, which reuses what `cargo test` just built. Measured on two
//! shared cores: debug, about 4 s to build the report on top of the test build and 36 s to run
//! it; release, 1 min 44 s to build the chunker, packer and report optimised (the dependencies
//! were already built) and 5 s to run. Debug wins whenever the release build is not already there,
//! which is the case in CI.

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
        "--package",
        "rag-contract",
        "--features",
        "report",
        "--bin",
        "contract-report",
    ]);
    run(report)
}
