//! Hostile input through the binary: `ragctl chunk` on a directory of hostile files and `ragctl
//! pack` on hostile JSONL. Each gets a clear error naming the file (and line or byte offset) or a
//! correct result, never a panic, a hang or silently dropped data.
//!
//! The shapes are those of `rag_contract::corpus`. What the chunks and packs hold on each is the
//! library's test (`tests/tests/hostile.rs`, every contract rule); here, only what the binary
//! adds: exit codes, errors naming the file and line, the input limits, the other inputs still
//! processed. The binary under test is a debug build, so the largest inputs are a little smaller.

use predicates::prelude::*;
use serde_json::{Value, json};

use crate::{chunk_line, dir_with, json_of, jsonl, partly_failed, ragctl, ragctl_in, refused, scratch_dir, stdout_of};

/// The hostile files: name and bytes. `bad.md` and `binary.md` are not UTF-8.
fn hostile_files() -> Vec<(&'static str, Vec<u8>)> {
    let mut long_line: String = (0..256 * 1024).map(|i| (b'a' + (i * 7 % 26) as u8) as char).collect();
    long_line.push('\n');
    let cjk: String = (0..100_000 / 3)
        .map(|i| char::from_u32(0x4e00 + (i * 7919 % 0x5000) as u32).unwrap())
        .collect();
    let emoji = "👩\u{200d}👩\u{200d}👧\u{200d}👦e\u{301}\u{302}🇫🇷 a\u{308}👍🏽 ".repeat(500);
    let headings: String = (0..10_000)
        .map(|i| format!("{} H{i}\n\nBody {i}.\n\n", "#".repeat(i % 6 + 1)))
        .collect();
    let table: String = std::iter::once("| a | b |\n|---|---|\n".to_owned())
        .chain((0..50_000).map(|i| format!("| {i} | row {i} |\n")))
        .collect();
    let code: String = std::iter::once("# Code\n\n```\n".to_owned())
        .chain((0..5_000).map(|i| {
            if i % 100 == 0 {
                "# not a heading\n".to_owned()
            } else {
                format!("let x = {i};\n")
            }
        }))
        .chain(std::iter::once("```\n".to_owned()))
        .collect();
    let mut bad = b"# Title\n\nValid text, then ".to_vec();
    bad.extend_from_slice(b"\xff and more.\n");
    let mut binary = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    binary.extend((0..4096u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8));
    let setext_title: Vec<String> = (0..300).map(|i| format!("word{i}")).collect();
    vec![
        ("empty.md", Vec::new()),
        ("blank.md", b" \t\n\r\n  \r \n".to_vec()),
        ("line.md", long_line.into_bytes()),
        ("cjk.md", cjk.into_bytes()),
        ("emoji.txt", emoji.into_bytes()),
        (
            "crlf.md",
            b"# Title\r\n\r\nText,\r\nmore.\r\n\r\n## Part\r\n\r\n- a\r\n- b\r\n".to_vec(),
        ),
        ("cr.txt", b"First\rparagraph.\r\rSecond\rparagraph.\r".to_vec()),
        ("bom.md", "\u{feff}# Title\n\nBody.\n".as_bytes().to_vec()),
        ("bad.md", bad),
        ("binary.md", binary),
        ("headings.md", headings.into_bytes()),
        (
            "nested.md",
            b"# 1\n## 2\n### 3\n#### 4\n##### 5\n###### 6\n# A\n#### D\n## B\n###### F\n".to_vec(),
        ),
        ("quotes.md", format!("{} deep\n", ">".repeat(1_000)).into_bytes()),
        ("lists.md", format!("{}item\n", "- ".repeat(1_000)).into_bytes()),
        ("table.md", table.into_bytes()),
        ("code.md", code.into_bytes()),
        ("fence.md", b"# T\n\n```\ncode\n# not a heading\n".to_vec()),
        (
            "setext.md",
            format!("{}\n===\n\nBody.\n", setext_title.join(" ")).into_bytes(),
        ),
        ("front.md", b"---\ntitle: x\n---\n".to_vec()),
    ]
}

#[test]
fn chunking_a_directory_of_hostile_files_reports_the_bad_ones_and_chunks_the_rest() {
    let dir = scratch_dir("hostile-chunk");
    let files = hostile_files();
    for (name, bytes) in &files {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
    let output = partly_failed(
        ragctl_in(&dir)
            .args(["chunk", ".", "--format", "jsonl"])
            .args(["--max-tokens", "128"])
            .args(["--overlap-tokens", "16"]),
        &[
            "error: ./bad.md: invalid UTF-8 at byte offset 26",
            "error: ./binary.md: invalid UTF-8 at byte offset 0",
        ],
    )
    .stderr(predicate::str::contains("panicked").not())
    .stderr(predicate::str::contains(
        "warning: ./empty.md: no text: the file is empty",
    ))
    .stderr(predicate::str::contains(
        "warning: ./blank.md: no text: the file holds only white space",
    ))
    .get_output()
    .clone();
    assert_eq!(
        String::from_utf8_lossy(&output.stderr).lines().count(),
        4,
        "only the two bad files are reported, and the two without text warned about"
    );
    // What each file's chunks hold is the library's test (rag-contract's hostile cases, every
    // contract rule); through the binary, each readable file is chunked and the rest reported.
    let chunks = jsonl(&output.stdout);
    for (name, bytes) in &files {
        let uri = format!("./{name}");
        let mine = chunks.iter().filter(|c| c["source_uri"] == uri.as_str()).count();
        match std::str::from_utf8(bytes) {
            Ok(text) if !text.trim().is_empty() => assert!(mine > 0, "{name} has no chunks"),
            _ => assert_eq!(mine, 0, "{name}: no chunks from a bad or blank file"),
        }
    }
}

fn pack_lines(name: &str, lines: &[String], args: &[&str]) -> assert_cmd::assert::Assert {
    let dir = scratch_dir(name);
    std::fs::write(dir.join("in.jsonl"), lines.join("\n")).unwrap();
    ragctl_in(&dir)
        .args(["pack", "refund window", "--input", "in.jsonl"])
        .args(args)
        .assert()
}

fn packed_json(assert: assert_cmd::assert::Assert) -> Value {
    json_of(&assert.success().get_output().stdout)
}

#[test]
fn nan_negative_and_zero_token_counts_are_errors_naming_the_line() {
    let ok = chunk_line("a", "fine", json!({}));
    for (name, bad, message) in [
        (
            "nan",
            r#"{"id":"n","document_id":"d","content":"x","score":NaN}"#.to_owned(),
            "in.jsonl:3: expected value",
        ),
        (
            "negative",
            chunk_line("m", "x", json!({"token_count": -3})),
            "in.jsonl:3: invalid value: integer `-3`",
        ),
        (
            "zero",
            chunk_line("z", "x", json!({"token_count": 0})),
            "chunk z has 0 tokens",
        ),
    ] {
        pack_lines(name, &[ok.clone(), chunk_line("b", "also fine", json!({})), bad], &[])
            .code(1)
            .stdout("")
            .stderr(predicate::str::contains(message))
            .stderr(predicate::str::contains("panicked").not());
    }
}

#[test]
fn mixed_tenants_and_malformed_lines_are_refused() {
    let mut lines: Vec<String> = (0..4)
        .map(|i| chunk_line(&format!("c{i}"), "text", json!({})))
        .collect();
    lines.push(chunk_line("intruder", "secret", json!({"tenant_id": "globex"})));
    pack_lines("tenants", &lines, &[])
        .code(1)
        .stderr(predicate::str::contains("chunk intruder belongs to tenant globex"));
    lines[4] = "{\"id\": \"x\", \"document_id\": ".to_owned();
    pack_lines("malformed", &lines, &[])
        .code(1)
        .stderr(predicate::str::contains("error: in.jsonl:5: EOF while parsing"));
}

#[test]
fn a_ten_megabyte_chunk_is_packed_whole() {
    let text = "lorem ipsum dolor sit amet ".repeat(10 * (1 << 20) / 27);
    let lines = [
        chunk_line("big", &text, json!({})),
        chunk_line("small", "tiny", json!({})),
    ];
    let out = packed_json(pack_lines(
        "tenmb",
        &lines,
        &["--format", "json", "--budget", "3000000"],
    ));
    assert_eq!(out["chunks_out"], 2);
    let big = out["chunks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "big")
        .unwrap();
    assert_eq!(big["content"].as_str().map(str::len), Some(text.len()));
}

#[test]
fn deeply_nested_metadata_is_a_clear_error_not_a_stack_overflow() {
    let depth = 100_000;
    let deep = format!(
        r#"{{"id":"d","document_id":"d","content":"x","metadata":{{"m":{}{}}}}}"#,
        "[".repeat(depth),
        "]".repeat(depth)
    );
    pack_lines("deep", &[chunk_line("a", "fine", json!({})), deep], &[])
        .code(1)
        .stderr(predicate::str::contains("error: in.jsonl:2: recursion limit exceeded"));
    // Within serde_json's limit (128 levels), deep metadata is read and written back.
    let mut nested = json!("leaf");
    for _ in 0..100 {
        nested = json!({"n": nested});
    }
    let out = packed_json(pack_lines(
        "deep-ok",
        &[chunk_line("a", "fine", json!({"metadata": {"deep": nested.clone()}}))],
        &["--format", "json"],
    ));
    assert_eq!(out["chunks"][0]["metadata"]["deep"], nested);
}

#[test]
fn endless_and_oversized_inputs_are_refused_within_their_limits() {
    // An endless stream: refused once the input limit is passed.
    refused(ragctl().args(["pack", "q", "--input", "/dev/zero", "--max-input-bytes", "8M"]))
        .stderr("error: /dev/zero: input is larger than --max-input-bytes (8 MiB); raise the limit to read it\n");
    ragctl()
        .args(["pack", "q", "--max-input-bytes", "64K"])
        .write_stdin(vec![b'{'; 100_000])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "error: -: input is larger than --max-input-bytes (64 KiB)",
        ));
    // A line over the line limit is named by its number.
    let long = chunk_line("long", &"word ".repeat(300_000), json!({}));
    pack_lines(
        "long-line",
        &[chunk_line("a", "fine", json!({})), long.clone()],
        &["--max-line-bytes", "1M"],
    )
    .code(1)
    .stdout("")
    .stderr("error: in.jsonl:2: line is longer than the limit of 1048576 bytes\n");
    // Within the limit, the same line is read.
    pack_lines("long-line-ok", &[long], &["--max-line-bytes", "2M"]).success();
    // `chunk` on a device without end: refused, the other input still chunked.
    let dir = dir_with("zero", &[("a.txt", "Some text.\n")]);
    ragctl_in(&dir)
        .args([
            "chunk",
            "/dev/zero",
            "a.txt",
            "--type",
            "text",
            "--max-input-bytes",
            "1M",
        ])
        .args(["--format", "jsonl"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("\"source_uri\":\"a.txt\""))
        .stderr("error: /dev/zero: input is larger than --max-input-bytes (1 MiB); raise the limit to read it\n");
}

#[test]
fn byte_order_marks_crlf_nul_and_invalid_utf8_in_jsonl_are_read_or_named_by_line() {
    let dir = scratch_dir("jsonl-bytes");
    let mut input = "\u{feff}".as_bytes().to_vec();
    input.extend_from_slice(chunk_line("a", "first", json!({})).as_bytes());
    input.extend_from_slice(b"\r\n\r\n");
    input.extend_from_slice(chunk_line("b", "nul \u{0} inside", json!({})).as_bytes());
    input.extend_from_slice(b"\r\n");
    std::fs::write(dir.join("ok.jsonl"), &input).unwrap();
    let out = json_of(&stdout_of(
        ragctl_in(&dir).args(["pack", "first", "--input", "ok.jsonl", "--format", "json"]),
    ));
    assert_eq!(out["chunks_in"], 2);
    // Invalid UTF-8 in a later line, and a byte-order mark anywhere but the start.
    for (name, bad, message) in [
        (
            "utf8",
            b"{\"id\":\"c\xc3\x28\"}".to_vec(),
            "error: bad.jsonl:4: invalid UTF-8 at byte 8 of the line\n",
        ),
        (
            "bom",
            "\u{feff}{}".as_bytes().to_vec(),
            "error: bad.jsonl:4: expected value at line 1 column 1\n",
        ),
    ] {
        let mut bad_input = input.clone();
        bad_input.extend_from_slice(&bad);
        std::fs::write(dir.join("bad.jsonl"), &bad_input).unwrap();
        refused(ragctl_in(&dir).args(["pack", "q", "--input", "bad.jsonl"]))
            .stderr(predicate::str::diff(message).name(name));
    }
}
