//! `cargo xtask fuzz --seconds N [TARGET...]`: runs the cargo-fuzz targets in `fuzz/`, each for N
//! seconds (default 60), seeding their corpora from the repository's docs on first use.
//!
//! libFuzzer needs a nightly compiler (sanitizer coverage). With a nightly toolchain installed the
//! targets build with `cargo +nightly fuzz`; without one, with the stable toolchain and
//! `RUSTC_BOOTSTRAP=1`, which unlocks the nightly flags cargo-fuzz passes. cargo-fuzz itself must
//! be installed (`cargo install cargo-fuzz --locked`); CI does not run this task.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::run::{run, workspace_root};

/// The targets in `fuzz/fuzz_targets/`.
const TARGETS: [&str; 7] = [
    "markdown_chunk",
    "text_chunk",
    "html_chunk",
    "jsonl_pack",
    "docx_chunk",
    "docx_xml_chunk",
    "pdf_chunk",
];

pub(crate) fn fuzz(args: &[String]) -> Result<(), String> {
    let mut seconds = 60u64;
    let mut targets: Vec<String> = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--seconds" => {
                let value = args.next().ok_or("--seconds needs a number")?;
                seconds = value
                    .parse()
                    .map_err(|_| format!("--seconds: {value:?} is not a number of seconds"))?;
            }
            target if TARGETS.contains(&target) => targets.push(target.to_owned()),
            other => {
                return Err(format!(
                    "unknown fuzz argument {other:?}; targets: {}",
                    TARGETS.join(", ")
                ));
            }
        }
    }
    if targets.is_empty() {
        targets = TARGETS.iter().map(|t| (*t).to_owned()).collect();
    }
    let root = workspace_root();
    let installed = Command::new("cargo")
        .args(["fuzz", "--version"])
        .output()
        .is_ok_and(|out| out.status.success());
    if !installed {
        return Err("cargo-fuzz is not installed: cargo install cargo-fuzz --locked".to_owned());
    }
    let nightly = Command::new("rustup")
        .args(["run", "nightly", "rustc", "--version"])
        .output()
        .is_ok_and(|out| out.status.success());
    if !nightly {
        eprintln!("xtask: no nightly toolchain; building the fuzz targets with RUSTC_BOOTSTRAP=1");
    }
    for target in &targets {
        seed_corpus(&root, target)?;
        let mut cmd = Command::new("cargo");
        cmd.current_dir(&root);
        if nightly {
            cmd.arg("+nightly");
        } else {
            cmd.env("RUSTC_BOOTSTRAP", "1");
        }
        cmd.args(["fuzz", "run", "-O", target, "--"])
            .arg(format!("-max_total_time={seconds}"))
            .args(["-max_len=8192", "-print_final_stats=1"]);
        run(cmd)?;
    }
    Ok(())
}

/// Gives an empty corpus a start: the docs (behind a configuration byte) for the chunk targets, the
/// PDF fixtures for the PDF target, a few JSONL inputs (behind two configuration bytes) for the
/// pack target.
fn seed_corpus(root: &Path, target: &str) -> Result<(), String> {
    let dir = root.join("fuzz/corpus").join(target);
    let has_seeds = std::fs::read_dir(&dir).is_ok_and(|mut entries| entries.next().is_some());
    if has_seeds {
        return Ok(());
    }
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let write = |name: &str, bytes: &[u8]| {
        std::fs::write(dir.join(name), bytes).map_err(|e| format!("cannot write a seed in {}: {e}", dir.display()))
    };
    if target == "jsonl_pack" {
        let jsonl = concat!(
            r#"{"id":"a","document_id":"d","content":"the refund window is 30 days","score":0.9,"token_count":6}"#,
            "\n",
            r#"{"id":"b","document_id":"d","content":"The refund window is 30 DAYS!","score":0.5}"#,
            "\n",
            r#"{"id":"c","document_id":"e","content":"alpha beta gamma delta epsilon","pinned":true}"#,
            "\n",
            r#"{"id":"r","document_id":"e","content_ref":"s3://b/r","token_count":3,"score":-0.5,"x":{"y":1}}"#,
        );
        for config in 0u8..72 {
            let mut seed = vec![config, config.wrapping_mul(37)];
            seed.extend_from_slice(jsonl.as_bytes());
            write(&format!("seed{config}"), &seed)?;
        }
        return Ok(());
    }
    if target == "pdf_chunk" {
        // The PDF fixtures (Chromium, pdfTeX, qpdf), cut to the fuzzer's input length: a cut PDF
        // is still a start (lopdf rebuilds the cross-reference table of what it finds).
        let fixtures = root.join("crates/rag-chunker/tests/fixtures/pdf");
        let mut pdfs: Vec<PathBuf> = std::fs::read_dir(&fixtures)
            .map_err(|e| format!("cannot read {}: {e}", fixtures.display()))?
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "pdf"))
            .collect();
        pdfs.sort();
        for (i, path) in pdfs.iter().enumerate() {
            let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            let mut seed = vec![(i as u8).wrapping_mul(37)];
            seed.extend_from_slice(&bytes[..bytes.len().min(8191)]);
            write(&format!("pdf{i}"), &seed)?;
        }
        return Ok(());
    }
    for (i, path) in markdown_files(&root.join("docs")).iter().enumerate() {
        let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let mut seed = vec![(i as u8).wrapping_mul(37)];
        seed.extend_from_slice(&bytes[..bytes.len().min(8191)]);
        write(&format!("doc{i}"), &seed)?;
    }
    Ok(())
}

fn markdown_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for path in entries.filter_map(Result::ok).map(|e| e.path()) {
            if path.is_dir() {
                out.extend(markdown_files(&path));
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}
