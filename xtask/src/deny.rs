//! `cargo deny`, offline: licences, bans, sources, and advisories against the RustSec snapshot.
//!
//! These machines cannot reach the RustSec database, so advisories are checked against the git
//! bundle in `../shared/rustsec/` (beside the checkout). Without the snapshot, the advisories
//! check is skipped with a message; the other checks still run.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::run::{cargo, run, workspace_root};

/// The directory name cargo-deny derives from the default advisory database URL.
const DB_DIR_NAME: &str = "advisory-db-3157b0e258782691";

pub(crate) fn deny() -> Result<(), String> {
    ensure_cargo_deny()?;
    let root = workspace_root();
    let mut fetch = cargo();
    fetch.arg("fetch");
    run(fetch)?;

    let bundle = root.join("../shared/rustsec/advisory-db.bundle");
    let mut check = cargo();
    check.args(["deny", "--offline"]);
    if bundle.is_file() {
        let db_parent = root.join("target/rustsec");
        clone_snapshot(&bundle, &db_parent)?;
        let config = write_config_with_db(&root, &db_parent)?;
        check.arg("--config").arg(config).arg("check");
    } else {
        eprintln!(
            "xtask: RustSec snapshot not found at {}: skipping the advisories check",
            bundle.display()
        );
        check.args(["check", "licenses", "bans", "sources"]);
    }
    run(check)
}

fn ensure_cargo_deny() -> Result<(), String> {
    let present = cargo()
        .args(["deny", "--version"])
        .output()
        .is_ok_and(|out| out.status.success());
    if present {
        return Ok(());
    }
    eprintln!("xtask: cargo-deny is not installed; installing it once (about 11 minutes on two cores)");
    let mut install = cargo();
    install.args(["install", "cargo-deny", "--locked"]);
    run(install)
}

/// Clones the bundle afresh, so a newer snapshot replaces an older one.
fn clone_snapshot(bundle: &Path, db_parent: &Path) -> Result<(), String> {
    let db = db_parent.join(DB_DIR_NAME);
    if db.exists() {
        std::fs::remove_dir_all(&db).map_err(|e| format!("cannot remove {}: {e}", db.display()))?;
    }
    std::fs::create_dir_all(db_parent).map_err(|e| format!("cannot create {}: {e}", db_parent.display()))?;
    let mut clone = Command::new("git");
    clone
        .args(["-c", "init.defaultBranch=main", "clone", "--quiet"])
        .arg(bundle)
        .arg(&db);
    run(clone)
}

/// `deny.toml` with `db-path` pointing at the snapshot; written under `target/`.
fn write_config_with_db(root: &Path, db_parent: &Path) -> Result<PathBuf, String> {
    let policy = std::fs::read_to_string(root.join("deny.toml")).map_err(|e| format!("cannot read deny.toml: {e}"))?;
    let db_line = format!("[advisories]\ndb-path = {:?}\n", db_parent.display().to_string());
    if !policy.contains("[advisories]\n") {
        return Err("deny.toml has no [advisories] section".to_owned());
    }
    let config = policy.replacen("[advisories]\n", &db_line, 1);
    let path = root.join("target/deny-offline.toml");
    std::fs::write(&path, config).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}
