//! `ragctl chunk`.

use std::io::Read;
use std::process::Stdio;

use predicates::prelude::*;
use serde_json::Value;

use crate::{
    GUIDE_MD, dir_with, jsonl, partly_failed, ragctl, ragctl_in, refused, scratch_dir, stderr_has, stdout_has,
    stdout_of,
};

/// The documents of JSON Lines chunks, in output order, each once.
fn source_uris(stdout: &[u8]) -> Vec<String> {
    let mut uris: Vec<String> = jsonl(stdout)
        .iter()
        .map(|c| c["source_uri"].as_str().unwrap().to_owned())
        .collect();
    uris.dedup();
    uris
}

#[test]
fn text_output_summarises_and_previews() {
    let dir = dir_with("text", &[("guide.md", GUIDE_MD)]);
    let assert = ragctl_in(&dir).args(["chunk", "guide.md", "-n", "2"]).assert();
    stdout_has(
        assert.success(),
        &[
            "guide.md",
            "parser:     markdown",
            "tokenizer:  tiktoken:cl100k_base",
            "heading: 2",
            "#0",
            "more",
        ],
    );
}

#[test]
fn jsonl_chunks_are_exact_slices_of_the_file() {
    let dir = dir_with("jsonl", &[("guide.md", GUIDE_MD)]);
    let out = stdout_of(ragctl_in(&dir).args([
        "chunk",
        "guide.md",
        "--format",
        "jsonl",
        "--max-tokens",
        "16",
        "--overlap-tokens",
        "4",
    ]));
    let chunks = jsonl(&out);
    assert!(chunks.len() > 3, "a 16-token budget splits the guide: {chunks:?}");
    for (i, chunk) in chunks.iter().enumerate() {
        assert_eq!(chunk["position"], i);
        assert_eq!(chunk["source_uri"], "guide.md");
        assert_eq!(chunk["tenant_id"], "ragctl-local");
        let (start, end) = (
            chunk["span"]["start"].as_u64().unwrap() as usize,
            chunk["span"]["end"].as_u64().unwrap() as usize,
        );
        assert_eq!(chunk["content"].as_str().unwrap(), &GUIDE_MD[start..end]);
        assert!(chunk["token_count"].as_u64().unwrap() <= 16);
        assert_eq!(chunk["tokenizer"], "tiktoken:cl100k_base");
        assert!(chunk["metadata"]["heading_path"].is_array());
    }
    assert_eq!(chunks[0]["metadata"]["kind"], "heading");
    assert_eq!(chunks[0]["metadata"]["level"], 1);
    assert!(
        chunks
            .iter()
            .all(|c| !c["content"].as_str().unwrap().starts_with("# not a heading"))
    );
}

#[test]
fn stdin_needs_a_type() {
    ragctl()
        .args(["chunk", "-"])
        .write_stdin(GUIDE_MD)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--type"));
    let out = stdout_of(
        ragctl()
            .args(["chunk", "-", "--type", "markdown", "--format", "jsonl"])
            .write_stdin(GUIDE_MD),
    );
    let chunks = jsonl(&out);
    assert!(!chunks.is_empty());
    assert_eq!(chunks[0]["source_uri"], "-");
}

#[test]
fn directories_are_walked_recursively_in_sorted_order() {
    let dir = dir_with(
        "walk",
        &[
            ("docs/b.md", "# B\n\nbee\n"),
            ("docs/a.txt", "plain text\n\nsecond paragraph\n"),
            ("docs/sub/c.markdown", "# C\n"),
            ("docs/.hidden.md", "# hidden\n"),
        ],
    );
    std::fs::write(dir.join("docs/image.png"), [0u8, 159, 146, 150]).unwrap();
    let out = stdout_of(ragctl_in(&dir).args(["chunk", "docs", "--format", "jsonl"]));
    assert_eq!(source_uris(&out), ["docs/a.txt", "docs/b.md", "docs/sub/c.markdown"]);
}

#[test]
fn a_directory_named_like_a_file_is_walked_as_a_directory() {
    let dir = dir_with(
        "dir-ext",
        &[("folder.html/a.md", "# A\n"), ("folder.html/b.html", "<p>B</p>")],
    );
    let out = stdout_of(ragctl_in(&dir).args(["chunk", "folder.html", "--format", "jsonl"]));
    assert_eq!(source_uris(&out), ["folder.html/a.md", "folder.html/b.html"]);
}

#[test]
fn a_bad_file_is_reported_and_the_others_are_still_chunked() {
    let dir = dir_with("bad", &[("good.md", "# Good\n\ntext\n")]);
    let mut bad = b"# Bad\n\nvalid start ".to_vec();
    bad.extend_from_slice(&[0xff, 0xfe]);
    std::fs::write(dir.join("bad.md"), &bad).unwrap();
    std::fs::write(dir.join("notes.odt"), "PK").unwrap();
    let assert = partly_failed(
        ragctl_in(&dir)
            .args(["chunk", "bad.md", "good.md", "notes.odt", "missing.md"])
            .args(["--format", "jsonl"]),
        &[
            "bad.md: invalid UTF-8 at byte offset 19",
            "notes.odt: unsupported file type",
            "markdown",
            "missing.md: cannot read",
        ],
    );
    let stderr = String::from_utf8(assert.get_output().stderr.clone()).unwrap();
    assert_eq!(stderr.matches("os error 2").count(), 1, "the OS error once: {stderr}");
    let chunks = jsonl(&assert.get_output().stdout);
    assert!(!chunks.is_empty());
    assert!(chunks.iter().all(|c| c["source_uri"] == "good.md"));
}

#[test]
fn invalid_flag_values_are_usage_errors() {
    ragctl()
        .args(["chunk", "x.md", "--max-tokens", "64", "--overlap-tokens", "64"])
        .assert()
        .code(2);
    ragctl().args(["chunk", "x.md", "--max-tokens", "0"]).assert().code(2);
    ragctl()
        .args(["chunk", "x.md", "--tokenizer", "p50k_base"])
        .assert()
        .code(2);
    ragctl().args(["chunk"]).assert().code(2);
}

/// Markdown of `sections` level-2 sections, each of `paragraphs` one-sentence paragraphs.
fn sectioned_markdown(sections: usize, paragraphs: usize) -> String {
    let section: String = (0..paragraphs)
        .map(|i| format!("Sentence {i} of a long section, with some words.\n\n"))
        .collect();
    (0..sections).map(|i| format!("## Part {i}\n\n{section}")).collect()
}

#[test]
fn a_closed_stdout_exits_quietly() {
    let dir = dir_with("pipe", &[("big.md", &sectioned_markdown(20_000, 1))]);
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("ragctl"))
        .current_dir(&dir)
        .args(["chunk", "big.md", "--format", "jsonl"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 64];
    stdout.read_exact(&mut first).unwrap();
    drop(stdout);
    let status = child.wait().unwrap();
    let mut stderr = String::new();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    assert!(status.success(), "exit {status}, stderr {stderr:?}");
    assert!(stderr.is_empty(), "nothing on stderr: {stderr:?}");
}

#[test]
fn a_large_file_is_streamed_with_the_same_guarantees() {
    // Over 8 MiB, a file is chunked by the writer and each chunk streamed to stdout as it comes.
    let big = sectioned_markdown(5_000, 40);
    assert!(big.len() > 8 << 20);
    let dir = dir_with("large", &[("big.md", &big), ("small.md", GUIDE_MD)]);
    let out = stdout_of(ragctl_in(&dir).args(["chunk", "big.md", "small.md", "--format", "jsonl"]));
    let chunks = jsonl(&out);
    let (big_chunks, small_chunks): (Vec<&Value>, Vec<&Value>) =
        chunks.iter().partition(|c| c["source_uri"] == "big.md");
    assert!(big_chunks.len() > 4_000, "one heading chunk per part at least");
    assert!(!small_chunks.is_empty());
    assert!(
        chunks.iter().position(|c| c["source_uri"] == "small.md").unwrap() > big_chunks.len() - 1,
        "argument order kept"
    );
    for (i, chunk) in big_chunks.iter().enumerate() {
        assert_eq!(chunk["position"], i);
        let (start, end) = (
            chunk["span"]["start"].as_u64().unwrap() as usize,
            chunk["span"]["end"].as_u64().unwrap() as usize,
        );
        assert_eq!(chunk["content"].as_str().unwrap(), &big[start..end]);
    }
}

#[test]
fn a_missing_path_is_reported_as_missing_not_as_a_file_type() {
    refused(ragctl().args(["chunk", "/nonexistent"]))
        .stderr("error: /nonexistent: cannot read: No such file or directory (os error 2)\n");
    let dir = dir_with("noext", &[("README", "# Read me\n")]);
    refused(ragctl_in(&dir).args(["chunk", "README"])).stderr(predicate::str::contains(
        "error: README: no file extension to tell the type by; name it with --type",
    ));
}

#[test]
fn a_small_max_tokens_scales_the_default_overlap() {
    let dir = dir_with("overlap", &[("guide.md", GUIDE_MD)]);
    let out = stdout_of(ragctl_in(&dir).args(["chunk", "guide.md", "--max-tokens", "10", "--format", "jsonl"]));
    assert!(jsonl(&out).iter().all(|c| c["token_count"].as_u64().unwrap() <= 10));
    // An overlap the user chose is still checked as given.
    ragctl_in(&dir)
        .args(["chunk", "guide.md", "--max-tokens", "10", "--overlap-tokens", "64"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--overlap-tokens (64) must be smaller than --max-tokens (10)",
        ));
}

#[test]
fn skipped_files_are_counted_and_listed_with_verbose() {
    let dir = dir_with("skipped", &[("docs/a.md", "# A\n"), ("docs/data.csv", "a,b\n")]);
    std::fs::write(dir.join("docs/image.png"), [0u8, 159]).unwrap();
    ragctl_in(&dir)
        .args(["chunk", "docs"])
        .assert()
        .success()
        .stderr("note: skipped 2 files of unsupported type in directories (-v lists them, --type reads every file)\n");
    stderr_has(
        ragctl_in(&dir).args(["chunk", "docs", "-v"]).assert().success(),
        &[
            "note: docs/data.csv: skipped, not a supported type",
            "note: docs/image.png: skipped, not a supported type",
        ],
    );
    ragctl_in(&dir)
        .args(["chunk", "docs", "--quiet"])
        .assert()
        .success()
        .stderr("");
}

#[test]
fn ignore_files_and_hidden_entries_are_honoured_as_ripgrep_does() {
    let dir = dir_with(
        "ignore",
        &[
            ("docs/.gitignore", "build/\n"),
            ("docs/.ignore", "draft.md\n"),
            ("docs/a.md", "# A\n"),
            ("docs/draft.md", "# Draft\n"),
            ("docs/build/out.md", "# Out\n"),
            ("docs/.hidden.md", "# Hidden\n"),
        ],
    );
    // A `.git` directory makes `docs` a repository, where `.gitignore` applies.
    std::fs::create_dir_all(dir.join("docs/.git")).unwrap();
    let uris = |args: &[&str]| -> Vec<String> {
        let out = stdout_of(ragctl_in(&dir).args(["chunk", "docs", "--format", "jsonl"]).args(args));
        source_uris(&out)
    };
    assert_eq!(uris(&[]), ["docs/a.md"]);
    assert_eq!(
        uris(&["--no-ignore"]),
        ["docs/a.md", "docs/build/out.md", "docs/draft.md"]
    );
    assert_eq!(uris(&["--hidden"]), ["docs/.hidden.md", "docs/a.md"]);
}

#[test]
fn each_file_is_chunked_once_and_non_utf8_names_get_distinct_ids() {
    let dir = dir_with("dedup", &[("a.md", "# A\n\nalpha\n"), ("b.md", "# B\n")]);
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt as _;
        let name = |bytes: &[u8]| dir.join(std::ffi::OsStr::from_bytes(bytes));
        std::fs::write(name(b"\xff.md"), "# FF\n").unwrap();
        std::fs::write(name(b"\xfe.md"), "# FE\n").unwrap();
        std::fs::write(name(b"100%.md"), "# Percent\n").unwrap();
    }
    let out = stdout_of(ragctl_in(&dir).args(["chunk", ".", "./a.md", "a.md", "--format", "jsonl"]));
    let chunks = jsonl(&out);
    let mut ids: Vec<&str> = chunks.iter().map(|c| c["id"].as_str().unwrap()).collect();
    let count = ids.len();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), count, "ids are unique: {ids:?}");
    let mut uris: Vec<&str> = chunks.iter().map(|c| c["source_uri"].as_str().unwrap()).collect();
    uris.dedup();
    if cfg!(unix) {
        // Sorted by the names' bytes: 0xFE and 0xFF come last.
        assert_eq!(uris, ["./100%25.md", "./a.md", "./b.md", "./%FE.md", "./%FF.md"]);
    }
    // The stream packs: no duplicate id makes `pack` refuse it.
    ragctl()
        .args(["pack", "alpha", "--input", "-"])
        .write_stdin(out)
        .assert()
        .success();
}

#[test]
fn dangling_and_looping_symlinks_are_reported() {
    #[cfg(unix)]
    {
        let dir = dir_with("links", &[("docs/a.md", "# A\n")]);
        std::os::unix::fs::symlink("missing.md", dir.join("docs/dangling.md")).unwrap();
        std::os::unix::fs::symlink("loop2.md", dir.join("docs/loop1.md")).unwrap();
        std::os::unix::fs::symlink("loop1.md", dir.join("docs/loop2.md")).unwrap();
        std::os::unix::fs::symlink("a.md", dir.join("docs/link.md")).unwrap();
        let assert = stderr_has(
            ragctl_in(&dir)
                .args(["chunk", "docs", "--format", "jsonl"])
                .assert()
                .success(),
            &[
                "warning: docs/dangling.md: symbolic link cannot be followed",
                "warning: docs/loop1.md: symbolic link cannot be followed",
                "warning: docs/loop2.md: symbolic link cannot be followed",
            ],
        );
        let chunks = jsonl(&assert.get_output().stdout);
        assert!(
            chunks.iter().all(|c| c["source_uri"] == "docs/a.md"),
            "a link to a file already taken is not taken twice"
        );
        refused(ragctl_in(&dir).args(["chunk", "docs/dangling.md"])).stderr(predicate::str::starts_with(
            "error: docs/dangling.md: symbolic link cannot be followed: No such file or directory",
        ));
    }
}

#[test]
fn control_characters_in_names_and_content_are_escaped_in_text_output() {
    let dir = scratch_dir("escape");
    std::fs::write(
        dir.join("evil\x1b]0;pwned\x07.md"),
        "# Title \x1b[2J\n\nBody \x1b]0;x\x07.\n",
    )
    .unwrap();
    let out = stdout_of(ragctl_in(&dir).args(["chunk", "."]));
    let text = String::from_utf8(out).unwrap();
    assert!(!text.contains('\x1b') && !text.contains('\x07'), "{text:?}");
    assert!(text.starts_with("./evil\\x1b]0;pwned\\x07.md\n"), "{text}");
    assert!(text.contains("# Title \\x1b[2J"), "{text}");
    // JSON Lines keep the bytes (JSON escapes them).
    let out = stdout_of(ragctl_in(&dir).args(["chunk", ".", "--format", "jsonl"]));
    assert_eq!(jsonl(&out)[0]["source_uri"], "./evil\x1b]0;pwned\x07.md");
}

#[test]
fn a_file_that_fails_half_way_leaves_no_chunk_in_the_output() {
    // Over 8 MiB, a file is chunked by the writer; a character that cannot fit a 1-token chunk
    // fails it after its first chunks were made.
    let dir = scratch_dir("half");
    let filler = "Plain words fill the rest of the file.\n\n".repeat((9 << 20) / 40);
    let big = format!("# Title\n\nA first paragraph.\n\n\u{2f9f4}\n\n{filler}");
    std::fs::write(dir.join("big.md"), &big).unwrap();
    std::fs::write(dir.join("small.md"), "# Small\n").unwrap();
    let assert = partly_failed(
        ragctl_in(&dir)
            .args(["chunk", "big.md", "small.md", "--format", "jsonl"])
            .args(["--max-tokens", "1", "--overlap-tokens", "0"]),
        &["max_tokens 1 is too small", "of document big.md"],
    );
    let chunks = jsonl(&assert.get_output().stdout);
    assert!(!chunks.is_empty());
    assert!(
        chunks.iter().all(|c| c["source_uri"] == "small.md"),
        "nothing of big.md: {:?}",
        &chunks[..chunks.len().min(3)]
    );
}

#[test]
fn inputs_over_the_size_limit_are_refused_and_the_others_chunked() {
    let dir = dir_with("limit", &[("small.md", GUIDE_MD)]);
    std::fs::write(dir.join("big.md"), "# Big\n\n".repeat(1000)).unwrap();
    let assert = partly_failed(
        ragctl_in(&dir)
            .args(["chunk", "/dev/zero", "big.md", "small.md", "--type", "markdown"])
            .args(["--format", "jsonl", "--max-input-bytes", "4K"]),
        &[
            "error: /dev/zero: input is larger than --max-input-bytes (4 KiB)",
            "error: big.md: input is larger than --max-input-bytes (4 KiB)",
        ],
    );
    let chunks = jsonl(&assert.get_output().stdout);
    assert!(!chunks.is_empty() && chunks.iter().all(|c| c["source_uri"] == "small.md"));
    refused(
        ragctl()
            .args(["chunk", "-", "--type", "text", "--max-input-bytes", "1K"])
            .write_stdin(vec![b'x'; 2000]),
    )
    .stderr("error: -: input is larger than --max-input-bytes (1 KiB); raise the limit to read it\n");
}

/// The Hugging Face tokenizer.json the rag-tokens tests ship (a small byte-level BPE).
fn tiny_tokenizer() -> std::path::PathBuf {
    crate::workspace_root().join("crates/rag-tokens/tests/fixtures/tiny-bpe.tokenizer.json")
}

#[test]
fn a_hugging_face_tokenizer_json_counts_the_chunks() {
    let dir = dir_with(
        "hf",
        &[("a.md", "# Title\n\nRerankers score (query, passage) pairs.\n")],
    );
    let out = stdout_of(
        ragctl_in(&dir)
            .args(["chunk", "a.md", "--format", "jsonl", "--tokenizer"])
            .arg(tiny_tokenizer()),
    );
    let chunks = jsonl(&out);
    assert_eq!(chunks[1]["content"], "Rerankers score (query, passage) pairs.");
    // 27 tokens under this tokenizer (cl100k_base gives 8), as Hugging Face's tokenizers counts it.
    assert_eq!(chunks[1]["token_count"], 27);
    let name = chunks[1]["tokenizer"].as_str().unwrap();
    assert!(name.starts_with("hf:tiny-bpe.tokenizer.json@"), "{name}");

    // The budget holds under that tokenizer.
    let long = format!("# T\n\n{}\n", "Rerankers score (query, passage) pairs. ".repeat(40));
    std::fs::write(dir.join("long.md"), long).unwrap();
    let out = stdout_of(
        ragctl_in(&dir)
            .args([
                "chunk",
                "long.md",
                "--format",
                "jsonl",
                "--max-tokens",
                "64",
                "--tokenizer",
            ])
            .arg(tiny_tokenizer()),
    );
    let chunks = jsonl(&out);
    assert!(chunks.len() > 10);
    assert!(chunks.iter().all(|c| c["token_count"].as_u64().unwrap() <= 64));
}

#[cfg(unix)]
#[test]
fn a_tokenizer_json_is_read_within_its_size_limit() {
    // A link to a device without end: read until memory ran out (2 GB, then "out of memory").
    let dir = dir_with("hf-endless", &[("a.md", "# Title\n")]);
    std::os::unix::fs::symlink("/dev/zero", dir.join("zero.json")).unwrap();
    for command in ["chunk", "pack"] {
        let args: &[&str] = if command == "chunk" {
            &["chunk", "a.md", "--tokenizer", "zero.json"]
        } else {
            &["pack", "q", "--demo", "--tokenizer", "zero.json"]
        };
        refused(ragctl_in(&dir).args(args).timeout(std::time::Duration::from_secs(60)))
            .stderr("error: tokenizer zero.json: file is larger than 64 MiB, the most a tokenizer.json may be\n");
    }
}

#[test]
fn a_missing_tokenizer_json_is_an_error_naming_it() {
    let dir = dir_with("hf-missing", &[("a.md", "# Title\n")]);
    refused(ragctl_in(&dir).args(["chunk", "a.md", "--tokenizer", "models/tokenizer.json"])).stderr(
        predicate::str::contains("error: tokenizer models/tokenizer.json: cannot read: No such file or directory"),
    );
    ragctl_in(&dir)
        .args(["chunk", "a.md", "--tokenizer", "llama3"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "expected cl100k_base, o200k_base or the path of a Hugging Face tokenizer.json",
        ));
}

#[test]
fn fold_headings_starts_body_chunks_at_their_heading() {
    let text = "# run\n\n## Options\n\nRun a command in a new container.\n\n## Examples\n\nRun it.\n";
    let dir = dir_with("fold", &[("run.md", text)]);
    let chunk = |fold: bool| {
        let mut args = vec!["chunk", "run.md", "--format", "jsonl"];
        args.extend(fold.then_some("--fold-headings"));
        jsonl(&stdout_of(ragctl_in(&dir).args(args)))
    };
    let folded = chunk(true);
    let contents: Vec<&str> = folded.iter().map(|c| c["content"].as_str().unwrap()).collect();
    assert_eq!(
        contents,
        [
            "# run\n\n## Options\n\nRun a command in a new container.",
            "## Examples\n\nRun it."
        ]
    );
    assert!(folded.iter().all(|c| c["metadata"]["kind"] == "body"));
    assert_eq!(
        folded[1]["metadata"]["heading_path"],
        serde_json::json!(["run", "Examples"])
    );
    // Without the flag, one chunk per heading.
    let seed = chunk(false);
    assert_eq!(seed.iter().filter(|c| c["metadata"]["kind"] == "heading").count(), 3);
}

/// A PDF of rag-chunker's fixtures (made by Chromium, qpdf; see their README).
fn pdf_fixture(name: &str) -> Vec<u8> {
    std::fs::read(
        crate::workspace_root()
            .join("crates/rag-chunker/tests/fixtures/pdf")
            .join(name),
    )
    .unwrap()
}

#[test]
fn a_directory_of_pdfs_is_chunked_with_pages_and_boxes_and_the_bad_ones_are_named() {
    let dir = dir_with("pdfs", &[("docs/notes.md", "# Notes\n\nSee the guide.\n")]);
    let guide = pdf_fixture("guide.pdf");
    std::fs::write(dir.join("docs/guide.pdf"), &guide).unwrap();
    std::fs::write(dir.join("docs/drawing.pdf"), pdf_fixture("drawing.pdf")).unwrap();
    std::fs::write(dir.join("docs/secret.pdf"), pdf_fixture("secret-password.pdf")).unwrap();
    std::fs::write(dir.join("docs/cut.pdf"), &guide[..400]).unwrap();
    let assert = partly_failed(
        ragctl_in(&dir).args(["chunk", "docs", "--format", "jsonl", "--max-tokens", "128"]),
        &[
            "docs/drawing.pdf: has no text layer (1 page of images or drawings only): run OCR and chunk the `.ocr.json`",
            "docs/secret.pdf: is encrypted and does not open without a password",
            "docs/cut.pdf: is damaged or truncated",
        ],
    );
    let out = &assert.get_output().stdout;
    assert_eq!(source_uris(out), ["docs/guide.pdf", "docs/notes.md"]);
    let chunks = jsonl(out);
    let pdf_chunks: Vec<&Value> = chunks.iter().filter(|c| c["source_uri"] == "docs/guide.pdf").collect();
    assert!(pdf_chunks.len() > 3, "{}", pdf_chunks.len());
    let mut pages = std::collections::BTreeSet::new();
    for chunk in &pdf_chunks {
        let origins = chunk["provenance"].as_array().unwrap();
        assert!(!origins.is_empty(), "{chunk}");
        for origin in origins {
            assert_eq!(origin["kind"], "page", "{origin}");
            let bbox: Vec<f64> = origin["bbox"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap())
                .collect();
            // Points from the top-left corner of a Letter/A4 page.
            assert!(
                bbox[0] < bbox[2] && bbox[1] < bbox[3] && bbox[2] <= 612.0 && bbox[3] <= 842.0,
                "{origin}"
            );
            pages.insert(origin["page"].as_u64().unwrap());
        }
    }
    assert_eq!(pages.into_iter().collect::<Vec<_>>(), [1, 2, 3, 4]);
}

#[test]
fn a_pdf_reports_the_furniture_it_left_out_and_reads_from_stdin() {
    let dir = scratch_dir("pdf-text");
    std::fs::write(dir.join("guide.pdf"), pdf_fixture("guide.pdf")).unwrap();
    stdout_has(
        ragctl_in(&dir).args(["chunk", "guide.pdf"]).assert().success(),
        &[
            "guide.pdf",
            "parser:     pdf",
            "rendition:  pdf of 66,719 B",
            " B page_furniture",
        ],
    );
    // Binary stdin is not decoded as UTF-8.
    let from_file = stdout_of(ragctl_in(&dir).args(["chunk", "guide.pdf", "--format", "jsonl"]));
    let from_stdin = stdout_of(
        ragctl_in(&dir)
            .args(["chunk", "-", "--type", "pdf", "--format", "jsonl"])
            .write_stdin(pdf_fixture("guide.pdf")),
    );
    let texts = |out: &[u8]| jsonl(out).iter().map(|c| c["content"].clone()).collect::<Vec<_>>();
    assert_eq!(texts(&from_stdin), texts(&from_file));
}

#[test]
fn a_text_report_of_several_files_ends_with_their_totals() {
    let dir = dir_with(
        "totals",
        &[("a.md", "# A\n\nOne paragraph.\n"), ("b.md", "# B\n\nTwo.\n\nThree.\n")],
    );
    std::fs::write(dir.join("bad.md"), [b'#', b' ', 0xff]).unwrap();
    let assert = partly_failed(ragctl_in(&dir).args(["chunk", "a.md", "b.md", "bad.md"]), &["bad.md"]);
    let stdout = String::from_utf8(assert.get_output().stdout.clone()).unwrap();
    let last = stdout.lines().last().unwrap();
    assert!(last.starts_with("total: 2 files, "), "{stdout}");
    assert!(last.ends_with(", 1 error"), "{stdout}");
    let chunks = jsonl(&stdout_of(
        ragctl_in(&dir).args(["chunk", "a.md", "b.md", "--format", "jsonl"]),
    ));
    let tokens: u64 = chunks.iter().map(|c| c["token_count"].as_u64().unwrap()).sum();
    let bytes = "# A\n\nOne paragraph.\n".len() + "# B\n\nTwo.\n\nThree.\n".len();
    assert!(
        last.contains(&format!(", {} chunks, {tokens} tokens, {bytes} B,", chunks.len())),
        "{stdout}"
    );
    // One file: its report alone, no totals.
    let one = String::from_utf8(stdout_of(ragctl_in(&dir).args(["chunk", "a.md"]))).unwrap();
    assert!(!one.contains("total:"), "{one}");
}
