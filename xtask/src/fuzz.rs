//! `cargo xtask fuzz --seconds N [TARGET...]`: runs the cargo-fuzz targets in `fuzz/`, each for N
//! seconds (default 60), first writing into each corpus the seeds it lacks (`seed_corpus`).
//! libFuzzer replays the whole corpus before it mutates, within those seconds: a corpus grown
//! over many runs needs more of them (docs/security.md, Fuzzing).
//!
//! libFuzzer needs a nightly compiler (sanitizer coverage). With a nightly toolchain installed the
//! targets build with `cargo +nightly fuzz`; without one, with the stable toolchain and
//! `RUSTC_BOOTSTRAP=1`, which unlocks the nightly flags cargo-fuzz passes. cargo-fuzz itself must
//! be installed (`cargo install cargo-fuzz --locked`); CI does not run this task.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::run::{run, workspace_root};

/// The fuzzer's input length: large enough for a small page, DOCX package or PDF, small enough
/// for many runs a second.
const MAX_LEN: usize = 8192;

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
            .arg(format!("-max_len={MAX_LEN}"))
            .arg("-print_final_stats=1");
        run(cmd)?;
    }
    Ok(())
}

/// Gives a corpus its seeds, writing those it lacks (so seeds added later reach an old corpus
/// too): the files in `fuzz/seeds/<target>/` (whole DOCX packages and DOCX XML, written by
/// `fuzz/seeds/make.py`); the docs (behind a configuration byte) for the Markdown, text, HTML and
/// DOCX XML targets; the HTML fixtures for the HTML target; the PDF fixtures for the PDF target; a
/// few JSONL inputs (behind two configuration bytes) for the pack target. Every seed is cut to the
/// fuzzer's input length.
fn seed_corpus(root: &Path, target: &str) -> Result<(), String> {
    let dir = root.join("fuzz/corpus").join(target);
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let write = |name: &str, bytes: &[u8]| {
        let path = dir.join(name);
        if path.exists() {
            return Ok(());
        }
        std::fs::write(&path, bytes).map_err(|e| format!("cannot write a seed in {}: {e}", dir.display()))
    };
    // A seed: a configuration byte, then the start of the file.
    let seed = |config: u8, bytes: &[u8]| {
        let mut seed = vec![config];
        seed.extend_from_slice(&bytes[..bytes.len().min(MAX_LEN - 1)]);
        seed
    };
    for path in files(&root.join("fuzz/seeds").join(target), |_| true) {
        let bytes = std::fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        write(&format!("seed-{}", stem(&path)), &bytes[..bytes.len().min(MAX_LEN)])?;
    }
    match target {
        "jsonl_pack" => {
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
        }
        "pdf_chunk" => {
            // The PDF fixtures (Chromium, pdfTeX, qpdf, fpdf2's standard 14 fonts), the large ones
            // cut to the fuzzer's input length: a cut PDF is still a start (lopdf rebuilds the
            // cross-reference table of what it finds).
            let fixtures = root.join("crates/rag-chunker/tests/fixtures/pdf");
            let pdfs = files(&fixtures, |p| p.extension().is_some_and(|e| e == "pdf"));
            for (i, path) in pdfs.iter().enumerate() {
                let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
                write(
                    &format!("pdf-{}", stem(path)),
                    &seed((i as u8).wrapping_mul(37), &bytes),
                )?;
            }
        }
        "docx_chunk" => {}
        _ => {
            if target == "html_chunk" {
                let fixtures = root.join("crates/rag-chunker/tests/fixtures/html");
                let pages = files(&fixtures, |p| p.extension().is_some_and(|e| e == "html"));
                for (i, path) in pages.iter().enumerate() {
                    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
                    write(
                        &format!("html-{}", stem(path)),
                        &seed((i as u8).wrapping_mul(41), &bytes),
                    )?;
                }
            }
            let docs = files(&root.join("docs"), |p| p.extension().is_some_and(|e| e == "md"));
            for (i, path) in docs.iter().enumerate() {
                let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
                write(&format!("doc{i}"), &seed((i as u8).wrapping_mul(37), &bytes))?;
            }
        }
    }
    Ok(())
}

/// A file's name without its extension, for naming its seed.
fn stem(path: &Path) -> String {
    path.file_stem()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
}

/// The files under `dir`, in its subdirectories too, that `keep` accepts, sorted.
fn files(dir: &Path, keep: fn(&Path) -> bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for path in entries.filter_map(Result::ok).map(|e| e.path()) {
            if path.is_dir() {
                out.extend(files(&path, keep));
            } else if keep(&path) {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}
