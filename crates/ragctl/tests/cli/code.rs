//! `ragctl chunk` on source code: a repository in one run, `--type` for a language, a file that
//! does not parse, and the packed breadcrumb.

use predicates::prelude::*;

use crate::{dir_with, jsonl, ragctl, ragctl_in, stdout_of};

const TOOL_PY: &str = "import os\n\n\nclass Command:\n    def invoke(self, ctx):\n        return os.getcwd()\n";

#[test]
fn a_repository_is_chunked_in_one_run_code_along_its_syntax_and_ignored_files_left_out() {
    let dir = dir_with(
        "code-repo",
        &[
            ("repo/.gitignore", "target/\n"),
            ("repo/README.md", "# Tool\n\nRuns commands.\n"),
            ("repo/src/tool.py", TOOL_PY),
            (
                "repo/src/lib.rs",
                "/// Adds.\npub fn add(a: u8, b: u8) -> u8 {\n    a + b\n}\n",
            ),
            ("repo/web/app.ts", "export interface Shape {\n  area(): number;\n}\n"),
            ("repo/target/gen.rs", "fn generated() {}\n"),
        ],
    );
    std::fs::create_dir_all(dir.join("repo/.git")).unwrap();
    let out = stdout_of(ragctl_in(&dir).args(["chunk", "repo", "--format", "jsonl", "--max-tokens", "12"]));
    let chunks = jsonl(&out);
    let uris: Vec<&str> = chunks.iter().map(|c| c["source_uri"].as_str().unwrap()).collect();
    assert!(
        uris.contains(&"repo/README.md") && uris.contains(&"repo/web/app.ts"),
        "{uris:?}"
    );
    assert!(!uris.contains(&"repo/target/gen.rs"), "{uris:?}");
    let invoke = chunks
        .iter()
        .find(|c| c["content"].as_str().unwrap().starts_with("def invoke"))
        .unwrap();
    assert_eq!(
        invoke["metadata"]["heading_path"],
        serde_json::json!(["class Command", "def invoke"])
    );
    assert_eq!(invoke["metadata"]["kind"], "function");
    let add = chunks.iter().find(|c| c["source_uri"] == "repo/src/lib.rs").unwrap();
    assert!(add["content"].as_str().unwrap().starts_with("/// Adds.\npub fn add"));
    // The text report names the language as the parser.
    ragctl_in(&dir)
        .args(["chunk", "repo/src/tool.py"])
        .assert()
        .success()
        .stdout(predicate::str::contains("parser:     python"));
}

#[test]
fn type_names_a_language_for_stdin_and_a_syntax_error_is_a_warning() {
    let out = stdout_of(
        ragctl()
            .args(["chunk", "-", "--type", "python", "--format", "jsonl"])
            .write_stdin(TOOL_PY),
    );
    assert_eq!(jsonl(&out)[0]["content"].as_str(), Some(TOOL_PY.trim_end()));
    ragctl()
        .args(["chunk", "-", "--type", "rust", "--format", "jsonl"])
        .write_stdin("fn ok() {}\n\nfn broken( {\n")
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "warning: -: syntax errors at 1 place (the first at line 3)",
        ));
}

#[test]
fn a_packed_method_is_shown_under_its_file_and_class() {
    let dir = dir_with("code-pack", &[("src/tool.py", TOOL_PY)]);
    let chunks = stdout_of(ragctl_in(&dir).args(["chunk", "src", "--format", "jsonl", "--max-tokens", "12"]));
    let context = stdout_of(
        ragctl_in(&dir)
            .args([
                "pack",
                "where is getcwd invoked",
                "--budget",
                "100",
                "--format",
                "context",
            ])
            .write_stdin(chunks),
    );
    let context = String::from_utf8(context).unwrap();
    assert!(
        context.contains("src/tool.py > class Command > def invoke\ndef invoke(self, ctx):"),
        "{context}"
    );
}
