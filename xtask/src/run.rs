//! Running commands from the workspace root, echoing each so CI logs show what ran.

use std::path::PathBuf;
use std::process::Command;

/// The workspace root (the parent of `xtask/`).
pub(crate) fn workspace_root() -> PathBuf {
    let manifest_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest_dir.parent().map(PathBuf::from).unwrap_or(manifest_dir)
}

/// The cargo that invoked us, so `cargo +toolchain xtask` stays on that toolchain.
pub(crate) fn cargo() -> Command {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(workspace_root());
    cmd
}

/// Runs `cmd`, failing with the command line if it exits non-zero.
pub(crate) fn run(mut cmd: Command) -> Result<(), String> {
    let line = describe(&cmd);
    eprintln!("$ {line}");
    let status = cmd.status().map_err(|err| format!("cannot start `{line}`: {err}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{line}` failed ({status})"))
    }
}

fn describe(cmd: &Command) -> String {
    let mut parts = vec![cmd.get_program().to_string_lossy().into_owned()];
    parts.extend(cmd.get_args().map(|a| a.to_string_lossy().into_owned()));
    parts.join(" ")
}
