//! `--embedder DIR`: vectors written by `ragctl chunk`, hybrid scoring in `ragctl pack`, and the
//! errors a broken model folder or mixed vectors give. The model is the tiny one rag-contract
//! writes at test time.

use std::path::{Path, PathBuf};

use rag_contract::embedding::{DIMENSION, Dtype, Tensor, write_model, write_safetensors};
use serde_json::Value;

use crate::{dir_with, json_of, jsonl, ragctl_in, refused, scratch_dir, stderr_has, stdout_has, stdout_of};

/// A folder holding the tiny model (`model/`) and a guide whose answer to "is this option going
/// away" says "deprecated" and never "going away".
fn setup(name: &str) -> (PathBuf, PathBuf) {
    let dir = dir_with(
        name,
        &[(
            "guide.md",
            "# Flags\n\n## The verbose option\n\nEach option reads the file from disk line by line.\n\n\
             ## Old flags\n\nThe flag was deprecated in 2.0 and removed in 3.0.\n\n\
             ## Streams\n\nStreams pipe data in chunks.\n",
        )],
    );
    let model = dir.join("model");
    write_model(&model, Dtype::F32).unwrap();
    (dir, model)
}

fn chunks_jsonl(dir: &Path, embedder: bool) -> Vec<u8> {
    let mut cmd = ragctl_in(dir);
    cmd.args(["chunk", "guide.md", "--format", "jsonl", "--fold-headings"]);
    if embedder {
        cmd.args(["--embedder", "model"]);
    }
    stdout_of(&mut cmd)
}

#[test]
fn chunk_writes_each_chunks_vector_and_model() {
    let (dir, _) = setup("embed-chunk");
    let lines = jsonl(&chunks_jsonl(&dir, true));
    assert_eq!(lines.len(), 3);
    let model = lines[0]["embedding_model"].as_str().unwrap().to_owned();
    assert!(model.starts_with("model2vec:"), "{model}");
    for line in &lines {
        assert_eq!(line["embedding_model"], model.as_str());
        assert_eq!(line["embedding"].as_array().unwrap().len(), DIMENSION);
    }
    let plain = jsonl(&chunks_jsonl(&dir, false));
    assert!(plain.iter().all(|line| line.get("embedding").is_none()));
}

fn pack_json(dir: &Path, input: &str, extra: &[&str]) -> Value {
    let mut cmd = ragctl_in(dir);
    cmd.args([
        "pack",
        "is this option going away",
        "--input",
        input,
        "--budget",
        "40",
        "--format",
        "json",
    ]);
    cmd.args(extra);
    json_of(&stdout_of(&mut cmd))
}

#[test]
fn pack_ranks_the_answer_in_other_words_first_and_says_how() {
    let (dir, _) = setup("embed-pack");
    std::fs::write(dir.join("plain.jsonl"), chunks_jsonl(&dir, false)).unwrap();
    std::fs::write(dir.join("embedded.jsonl"), chunks_jsonl(&dir, true)).unwrap();
    let first = |packed: &Value| {
        let best = packed["chunks"]
            .as_array()
            .unwrap()
            .iter()
            .max_by(|a, b| {
                a["effective_score"]
                    .as_f64()
                    .partial_cmp(&b["effective_score"].as_f64())
                    .unwrap()
            })
            .unwrap()
            .clone();
        best["content"].as_str().unwrap().to_owned()
    };
    let bm25 = pack_json(&dir, "plain.jsonl", &[]);
    assert!(first(&bm25).contains("Each option reads"), "{bm25}");
    let hybrid = pack_json(&dir, "plain.jsonl", &["--embedder", "model", "--bm25-weight", "0.3"]);
    assert!(first(&hybrid).contains("deprecated"), "{hybrid}");
    assert!(
        hybrid["scoring"]
            .as_str()
            .unwrap()
            .starts_with("hybrid: 0.3 x bm25 + 0.7 x cosine")
    );
    for chunk in hybrid["chunks"].as_array().unwrap() {
        assert_eq!(chunk["scored_by"], "fused");
        assert!(chunk["score_parts"]["cosine"].is_f64() && chunk["score_parts"]["bm25"].is_f64());
        assert!(chunk.get("embedding").is_none(), "vectors are left out of the report");
    }
    // Vectors written at chunk time give the same context as vectors made at pack time.
    let pre = pack_json(&dir, "embedded.jsonl", &["--embedder", "model", "--bm25-weight", "0.3"]);
    assert_eq!(pre["context"], hybrid["context"]);
    assert_eq!(pre["chunks"], hybrid["chunks"]);
    assert!(pre["scoring"].as_str().unwrap().ends_with("(0 embedded at pack time)"));

    let mut report = ragctl_in(&dir);
    report.args([
        "pack",
        "is this option going away",
        "--input",
        "plain.jsonl",
        "--embedder",
        "model",
    ]);
    report.args(["--format", "report"]);
    stdout_has(
        report.assert().success(),
        &["scoring:        hybrid: 0.7 x bm25", "(bm25 ", ", cosine "],
    );
}

#[test]
fn a_missing_or_broken_model_folder_is_an_error_naming_the_file() {
    let (dir, model) = setup("embed-broken");
    let mut cmd = ragctl_in(&dir);
    cmd.args(["pack", "q", "--input", "-", "--embedder", "nowhere"])
        .write_stdin("");
    stderr_has(refused(&mut cmd), &["error: nowhere: no such folder"]);

    std::fs::write(model.join("config.json"), "{").unwrap();
    let mut cmd = ragctl_in(&dir);
    cmd.args(["chunk", "guide.md", "--format", "jsonl", "--embedder", "model"]);
    stderr_has(refused(&mut cmd), &["error: model/config.json: not JSON"]);

    write_model(&model, Dtype::F32).unwrap();
    let flat = Tensor::new("embeddings", "F32", &[16], vec![0; 64]);
    write_safetensors(&model.join("model.safetensors"), &[flat]).unwrap();
    let mut cmd = ragctl_in(&dir);
    cmd.args(["chunk", "guide.md", "--format", "jsonl", "--embedder", "model"]);
    stderr_has(
        refused(&mut cmd),
        &["error: model/model.safetensors: tensor `embeddings` has shape [16]; a matrix [tokens, dimension] is needed"],
    );
}

#[test]
fn vectors_of_two_models_in_one_input_are_refused_naming_the_chunk() {
    let (dir, _) = setup("embed-mixed");
    let mut lines = jsonl(&chunks_jsonl(&dir, true));
    lines[1]["embedding_model"] = Value::from("model2vec:000000000000");
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(dir.join("mixed.jsonl"), text).unwrap();
    let id = lines[1]["id"].as_str().unwrap().to_owned();
    let mut cmd = ragctl_in(&dir);
    cmd.args(["pack", "q", "--input", "mixed.jsonl", "--embedder", "model"]);
    stderr_has(
        refused(&mut cmd),
        &[&format!(
            "error: mixed.jsonl: chunk {id} has an embedding made by model2vec:000000000000, the packer embeds with model2vec:"
        )],
    );
    // A line with a vector and no model id is refused by the reader, with its line number.
    std::fs::write(
        dir.join("half.jsonl"),
        "{\"id\":\"a\",\"document_id\":\"d\",\"content\":\"x\",\"embedding\":[1]}\n",
    )
    .unwrap();
    let mut cmd = ragctl_in(&dir);
    cmd.args(["pack", "q", "--input", "half.jsonl"]);
    stderr_has(
        refused(&mut cmd),
        &["half.jsonl:1", "chunk a has an embedding but no embedding_model"],
    );
}

#[test]
fn misused_embedder_flags_are_usage_errors() {
    let dir = scratch_dir("embed-usage");
    let mut cmd = ragctl_in(&dir);
    cmd.args(["chunk", "x.md", "--embedder", "model"]);
    stderr_has(
        cmd.assert().code(2),
        &["--embedder writes vectors into JSON Lines: add --format jsonl"],
    );
    let mut cmd = ragctl_in(&dir);
    cmd.args([
        "pack",
        "q",
        "--input",
        "-",
        "--embedder",
        "model",
        "--bm25-weight",
        "1.5",
    ]);
    stderr_has(cmd.assert().code(2), &["expected a number in 0..=1"]);
    let mut cmd = ragctl_in(&dir);
    cmd.args(["pack", "q", "--input", "-", "--bm25-weight", "0.5"]);
    stderr_has(cmd.assert().code(2), &["--embedder"]);
}
