//! `cargo xtask man`: the man pages of `ragctl`, generated from its clap definitions.
//!
//! xtask has no dependencies, so the generator is the binary itself: the hidden
//! `ragctl generate-man DIR` renders one page per command with `clap_mangen`, from the same
//! definitions that parse the command line, so the pages cannot drift from the flags.

use std::path::PathBuf;

use crate::run::{cargo, run, workspace_root};

pub(crate) fn man() -> Result<(), String> {
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| workspace_root().join("target"), PathBuf::from);
    let dir = target.join("man");
    let mut generate = cargo();
    generate
        .args(["run", "--quiet", "--package", "ragctl", "--", "generate-man"])
        .arg(&dir);
    run(generate)?;
    eprintln!(
        "man pages in {} (read one with `man -l {}`)",
        dir.display(),
        dir.join("ragctl.1").display()
    );
    Ok(())
}
