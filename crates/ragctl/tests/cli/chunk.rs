//! `ragctl chunk`.

use std::io::Read;
use std::process::Stdio;

use predicates::prelude::*;
use serde_json::Value;

use crate::{GUIDE_MD, ragctl, scratch_dir};

fn jsonl(stdout: &[u8]) -> Vec<Value> {
    std::str::from_utf8(stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[test]
fn text_output_summarises_and_previews() {
    let dir = scratch_dir("text");
    std::fs::write(dir.join("guide.md"), GUIDE_MD).unwrap();
    ragctl()
        .current_dir(&dir)
        .args(["chunk", "guide.md", "-n", "2"])
        .assert()
        .success()
        .stdout(predicate::str::contains("guide.md"))
        .stdout(predicate::str::contains("parser:     markdown"))
        .stdout(predicate::str::contains("tokenizer:  tiktoken:cl100k_base"))
        .stdout(predicate::str::contains("heading: 2"))
        .stdout(predicate::str::contains("#0"))
        .stdout(predicate::str::contains("more"));
}

#[test]
fn jsonl_chunks_are_exact_slices_of_the_file() {
    let dir = scratch_dir("jsonl");
    std::fs::write(dir.join("guide.md"), GUIDE_MD).unwrap();
    let out = ragctl()
        .current_dir(&dir)
        .args([
            "chunk",
            "guide.md",
            "--format",
            "jsonl",
            "--max-tokens",
            "16",
            "--overlap-tokens",
            "4",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
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
    let out = ragctl()
        .args(["chunk", "-", "--type", "markdown", "--format", "jsonl"])
        .write_stdin(GUIDE_MD)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let chunks = jsonl(&out);
    assert!(!chunks.is_empty());
    assert_eq!(chunks[0]["source_uri"], "-");
}

#[test]
fn directories_are_walked_recursively_in_sorted_order() {
    let dir = scratch_dir("walk");
    std::fs::create_dir_all(dir.join("docs/sub")).unwrap();
    std::fs::write(dir.join("docs/b.md"), "# B\n\nbee\n").unwrap();
    std::fs::write(dir.join("docs/a.txt"), "plain text\n\nsecond paragraph\n").unwrap();
    std::fs::write(dir.join("docs/sub/c.markdown"), "# C\n").unwrap();
    std::fs::write(dir.join("docs/image.png"), [0u8, 159, 146, 150]).unwrap();
    std::fs::write(dir.join("docs/.hidden.md"), "# hidden\n").unwrap();
    let out = ragctl()
        .current_dir(&dir)
        .args(["chunk", "docs", "--format", "jsonl"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let mut uris: Vec<String> = jsonl(&out)
        .iter()
        .map(|c| c["source_uri"].as_str().unwrap().to_owned())
        .collect();
    uris.dedup();
    assert_eq!(uris, ["docs/a.txt", "docs/b.md", "docs/sub/c.markdown"]);
}

#[test]
fn a_bad_file_is_reported_and_the_others_are_still_chunked() {
    let dir = scratch_dir("bad");
    std::fs::write(dir.join("good.md"), "# Good\n\ntext\n").unwrap();
    let mut bad = b"# Bad\n\nvalid start ".to_vec();
    bad.extend_from_slice(&[0xff, 0xfe]);
    std::fs::write(dir.join("bad.md"), &bad).unwrap();
    std::fs::write(dir.join("notes.pdf"), "%PDF").unwrap();
    let assert = ragctl()
        .current_dir(&dir)
        .args([
            "chunk",
            "bad.md",
            "good.md",
            "notes.pdf",
            "missing.md",
            "--format",
            "jsonl",
        ])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("bad.md: invalid UTF-8 at byte offset 19"))
        .stderr(predicate::str::contains("notes.pdf: unsupported file type"))
        .stderr(predicate::str::contains("markdown"))
        .stderr(predicate::str::contains("missing.md: cannot read"));
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

#[test]
fn a_closed_stdout_exits_quietly() {
    let dir = scratch_dir("pipe");
    let big: String = (0..20_000)
        .map(|i| format!("## Section {i}\n\nParagraph number {i} with some words.\n\n"))
        .collect();
    std::fs::write(dir.join("big.md"), big).unwrap();
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
    let dir = scratch_dir("large");
    let section: String = (0..40)
        .map(|i| format!("Sentence {i} of a long section, with some words.\n\n"))
        .collect();
    let big: String = (0..5_000).map(|i| format!("## Part {i}\n\n{section}")).collect();
    assert!(big.len() > 8 << 20);
    std::fs::write(dir.join("big.md"), &big).unwrap();
    std::fs::write(dir.join("small.md"), GUIDE_MD).unwrap();
    let out = ragctl()
        .current_dir(&dir)
        .args(["chunk", "big.md", "small.md", "--format", "jsonl"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
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
