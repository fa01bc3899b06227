//! `cargo xtask eval`: how often the answer is in the context `ragctl pack` builds
//! (`docs/quality.md`).
//!
//! Builds `ragctl` in release and runs the `rag-eval` harness of `rag-bench` on it, over the
//! corpora and questions under `eval/`. Extra arguments go to the harness; with `--ragctl PATH`
//! nothing is built for it and that binary is evaluated instead (to compare two builds).

use crate::run::{cargo, run, workspace_root};

pub(crate) fn eval(extra: &[String]) -> Result<(), String> {
    let mut harness = cargo();
    harness.args(["run", "--release", "--package", "rag-bench", "--bin", "rag-eval", "--"]);
    if !extra.iter().any(|arg| arg == "--ragctl") {
        let mut build = cargo();
        build.args(["build", "--release", "--package", "ragctl"]);
        run(build)?;
        // Where cargo put it: CARGO_TARGET_DIR if set (relative to the workspace root, as cargo
        // reads it), otherwise target/.
        let target = std::env::var_os("CARGO_TARGET_DIR")
            .map(|dir| workspace_root().join(dir))
            .unwrap_or_else(|| workspace_root().join("target"));
        harness.arg("--ragctl").arg(target.join("release").join("ragctl"));
    }
    harness.args(extra);
    run(harness)
}
