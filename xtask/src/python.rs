//! `cargo xtask python`: builds the Python package's wheel (release, abi3) into a virtual
//! environment with its pinned test dependencies, and runs its pytest suite.
//!
//! Steps, each echoed: a venv in `target/python/venv` (kept between runs; `PYTHON` names the
//! interpreter that creates it, default `python3`), the wheel built by `pip wheel` through the
//! package's PEP 517 backend (maturin, fetched by pip like any build requirement) into
//! `target/python/wheels`, the wheel installed with its `test` extra (pytest, LangChain,
//! LlamaIndex, Ray, tokenizers, all pinned in `crates/rag-python/pyproject.toml`), the one
//! registry package whose `tokenizer.json` the tests read (`anthropic` 0.34.2, without its
//! dependencies), a debug `ragctl` for the byte-for-byte comparisons, then pytest, then the type
//! checks of the installed package: `mypy.stubtest` compares `ragctl/_native.pyi` and the pure-Python
//! modules with what the extension and the modules define at run time (the few errors that are
//! checker limitations are listed in `crates/rag-python/stubtest-allowlist.txt`), and mypy checks
//! the package's own modules against the stub.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::run::{cargo, run, workspace_root};

/// The modules stubtest compares with the runtime (each with its submodules): the native module's
/// stub and the packages that re-export it.
const STUBTEST_MODULES: [&str; 4] = ["ragctl._native", "rag_core", "rag_chunker", "rag_packer"];

/// The packages mypy checks, the integrations included.
const MYPY_PACKAGES: [&str; 4] = ["ragctl", "rag_core", "rag_chunker", "rag_packer"];

/// The package whose `tokenizer.json` the Hugging Face tests load (see `test_huggingface.py`).
const TOKENIZER_PACKAGE: &str = "anthropic==0.34.2";

pub(crate) fn python() -> Result<(), String> {
    let root = workspace_root();
    let target = target_dir(&root);
    let started = Instant::now();

    let venv = target.join("python").join("venv");
    if !venv.join("bin").join("python").is_file() {
        let interpreter = std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_owned());
        let mut create = Command::new(interpreter);
        create.arg("-m").arg("venv").arg(&venv);
        run(create)?;
    }
    let pip = |args: &[&str]| {
        let mut cmd = Command::new(venv.join("bin").join("pip"));
        cmd.args(["--disable-pip-version-check", "--quiet"])
            .args(args)
            .current_dir(&root);
        cmd
    };

    let wheels = target.join("python").join("wheels");
    let _ = std::fs::remove_dir_all(&wheels);
    let mut build = pip(&["wheel", "--no-deps", "--wheel-dir"]);
    build.arg(&wheels).arg(root.join("crates").join("rag-python"));
    run(build)?;
    let wheel = only_wheel(&wheels)?;
    let built = started.elapsed();

    let with_tests = format!("{}[test]", wheel.display());
    run(pip(&["install", &with_tests]))?;
    // The same version may be installed already from an earlier run: the new build replaces it.
    let mut reinstall = pip(&["install", "--force-reinstall", "--no-deps"]);
    reinstall.arg(&wheel);
    run(reinstall)?;
    run(pip(&["install", "--no-deps", TOKENIZER_PACKAGE]))?;

    let mut ragctl = cargo();
    ragctl.args(["build", "--package", "ragctl"]);
    run(ragctl)?;
    let installed = started.elapsed();

    let mut pytest = Command::new(venv.join("bin").join("python"));
    pytest
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .arg(root.join("crates").join("rag-python").join("tests"))
        .env("RAGCTL", target.join("debug").join("ragctl"))
        .current_dir(root.join("crates").join("rag-python"));
    run(pytest)?;
    let tested = started.elapsed();

    // Both run outside the source tree, so they import the installed wheel, not
    // crates/rag-python/python; the package's pyproject.toml is their configuration.
    let package = root.join("crates").join("rag-python");
    let config = package.join("pyproject.toml");
    let checks_dir = target.join("python");
    let mut stubtest = Command::new(venv.join("bin").join("python"));
    stubtest
        .args(["-m", "mypy.stubtest"])
        .args(STUBTEST_MODULES)
        .arg("--allowlist")
        .arg(package.join("stubtest-allowlist.txt"))
        .arg("--mypy-config-file")
        .arg(&config)
        .current_dir(&checks_dir);
    run(stubtest)?;
    let mut mypy = Command::new(venv.join("bin").join("python"));
    mypy.args(["-m", "mypy", "--config-file"]).arg(&config);
    for name in MYPY_PACKAGES {
        mypy.args(["--package", name]);
    }
    mypy.current_dir(&checks_dir);
    run(mypy)?;
    eprintln!(
        "xtask: python: wheel built in {:.0} s, environment ready at {:.0} s, tests done at {:.0} s, \
         types checked at {:.0} s",
        built.as_secs_f64(),
        installed.as_secs_f64(),
        tested.as_secs_f64(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Where cargo builds: CARGO_TARGET_DIR if set (relative to the workspace root, as cargo reads
/// it), otherwise target/.
fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(|dir| root.join(dir))
        .unwrap_or_else(|| root.join("target"))
}

/// The one wheel `pip wheel` wrote.
fn only_wheel(dir: &Path) -> Result<PathBuf, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
    let wheels: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "whl"))
        .collect();
    match wheels.as_slice() {
        [wheel] => Ok(wheel.clone()),
        _ => Err(format!(
            "expected one wheel in {}, found {}",
            dir.display(),
            wheels.len()
        )),
    }
}
