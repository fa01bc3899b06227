//! `ragctl pack`, and the chunk-to-pack pipe.

use predicates::prelude::*;
use rag_core::TokenCounter as _;
use serde_json::{Value, json};

use crate::{GUIDE_MD, ragctl, scratch_dir, workspace_root};

fn line(id: &str, tenant: Option<&str>, content: &str, score: Option<f64>, tokens: Option<u64>) -> String {
    let mut v = json!({"id": id, "document_id": "doc", "content": content});
    if let Some(t) = tenant {
        v["tenant_id"] = json!(t);
    }
    if let Some(s) = score {
        v["score"] = json!(s);
    }
    if let Some(t) = tokens {
        v["token_count"] = json!(t);
    }
    v.to_string()
}

#[test]
fn the_demo_corpus_packs_without_input() {
    ragctl()
        .args(["pack", "explain reranking", "--top-k", "3"])
        .assert()
        .success()
        .stdout(predicate::str::contains("query:          \"explain reranking\""))
        .stdout(predicate::str::contains("tenant:         ragctl-local"))
        .stdout(predicate::str::contains("order:          lost_in_middle"))
        .stdout(predicate::str::contains("budget:         4000 tokens"))
        .stdout(predicate::str::contains("tokenizer:      tiktoken:cl100k_base"))
        .stdout(predicate::str::contains("scoring:        bm25"))
        .stdout(predicate::str::contains("#1"));
}

#[test]
fn chunk_output_pipes_into_pack() {
    let root = workspace_root();
    let chunked = ragctl()
        .current_dir(&root)
        .args([
            "chunk",
            "docs",
            "--format",
            "jsonl",
            "--max-tokens",
            "200",
            "--overlap-tokens",
            "20",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let out = ragctl()
        .args([
            "pack",
            "how are chunks deduplicated",
            "--input",
            "-",
            "--format",
            "json",
            "--budget",
            "1500",
        ])
        .write_stdin(chunked)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let packed: Value = serde_json::from_slice(&out).unwrap();
    let chunks_in = packed["chunks_in"].as_u64().unwrap();
    let chunks_out = packed["chunks_out"].as_u64().unwrap();
    assert!(chunks_out > 0 && chunks_out < chunks_in);
    assert!(packed["tokens_used"].as_u64().unwrap() <= 1500);
    assert_eq!(packed["chunks"].as_array().unwrap().len() as u64, chunks_out);
    assert_eq!(
        packed["dropped"].as_array().unwrap().len() as u64 + chunks_out,
        chunks_in,
        "every input chunk is packed or has a drop reason"
    );
    assert!(packed["scoring"].as_str().unwrap().starts_with("bm25"));
}

#[test]
fn the_context_format_renders_the_template() {
    let dir = scratch_dir("context");
    let input = [
        line("a", None, "Alpha text.", Some(0.9), Some(3)),
        line("b", None, "Beta text.", Some(0.5), Some(3)),
    ]
    .join("\n");
    std::fs::write(dir.join("in.jsonl"), input).unwrap();
    ragctl()
        .current_dir(&dir)
        .args([
            "pack",
            "q",
            "--input",
            "in.jsonl",
            "--format",
            "context",
            "--order",
            "descending",
        ])
        .args(["--template", "[{id}] {content}", "--delimiter", "\n---\n"])
        .assert()
        .success()
        .stdout("[a] Alpha text.\n---\n[b] Beta text.\n");
}

#[test]
fn a_malformed_line_is_named_and_nothing_is_printed() {
    let dir = scratch_dir("malformed");
    let input = [line("a", None, "ok", None, None), "{\"id\": \"b\", oops".to_owned()].join("\n");
    std::fs::write(dir.join("in.jsonl"), input).unwrap();
    ragctl()
        .current_dir(&dir)
        .args(["pack", "q", "--input", "in.jsonl"])
        .assert()
        .code(1)
        .stdout("")
        .stderr(predicate::str::contains("in.jsonl:2:"));
}

#[test]
fn a_foreign_tenant_is_refused_naming_the_chunk() {
    let input = [
        line("mine", None, "ok", None, None),
        line("theirs", Some("globex"), "secret", None, None),
    ]
    .join("\n");
    ragctl()
        .args(["pack", "q", "--input", "-", "--tenant", "acme"])
        .write_stdin(input)
        .assert()
        .code(1)
        .stdout("")
        .stderr(predicate::str::contains("chunk theirs belongs to tenant globex"));
}

#[test]
fn invalid_flag_values_are_usage_errors() {
    for args in [
        vec!["pack", "q", "--jaccard-threshold", "2"],
        vec!["pack", "q", "--budget", "0"],
        vec!["pack", "q", "--order", "random"],
        vec!["pack", "q", "--strategy", "best"],
        vec!["pack", "q", "--max-per-document", "0"],
    ] {
        ragctl().args(&args).assert().code(2);
    }
}

#[test]
fn a_pack_with_every_token_count_given_runs_on_stdin() {
    let input = (0..5)
        .map(|i| {
            line(
                &format!("c{i}"),
                None,
                &format!("chunk {i} {GUIDE_MD}"),
                Some(i as f64),
                Some(40),
            )
        })
        .collect::<Vec<_>>()
        .join("\n");
    let out = ragctl()
        .args([
            "pack",
            "q",
            "--input",
            "-",
            "--budget",
            "100",
            "--format",
            "json",
            "--strategy",
            "knapsack",
        ])
        .write_stdin(input)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let packed: Value = serde_json::from_slice(&out).unwrap();
    // The budget holds for the rendered context, whatever the lines claimed (40 tokens each).
    let context = packed["context"].as_str().unwrap();
    let tokens = rag_chunker::TiktokenCounter::cl100k().count(context);
    assert_eq!(packed["tokens_used"], tokens);
    assert!(tokens <= 100, "{tokens}");
    assert_eq!(packed["scoring"], "given (every chunk had a score)");
    let dropped: Vec<&str> = packed["dropped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["reason"].as_str().unwrap())
        .collect();
    // Each chunk renders to more than its claimed 40 tokens, so one fits in 100, not two.
    assert_eq!(packed["chunks_out"], 1);
    assert_eq!(dropped, ["over_budget"; 4]);
}
