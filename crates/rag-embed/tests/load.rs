//! Loading model2vec folders: the tiny test-time model in every dtype, the errors a broken folder
//! gives, and (when it is there) the wordllama folder `cargo xtask wordllama` writes.
#![allow(clippy::unwrap_used, clippy::print_stderr)]

use std::path::{Path, PathBuf};

use rag_contract::embedding::{DIMENSION, Dtype, Tensor, TinyEmbedder, cosine, write_model, write_safetensors};
use rag_core::Embedder;
use rag_embed::StaticEmbedder;

/// A fresh folder under the target directory, removed first if a previous run left it.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("rag-embed-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn tiny(name: &str, dtype: Dtype) -> PathBuf {
    let dir = scratch(name);
    write_model(&dir, dtype).unwrap();
    dir
}

const TEXTS: [&str; 5] = [
    "Is my function argument going away?",
    "The option was deprecated and removed.",
    "Read a file line by line.",
    "Duplicates are dropped before the budget is spent.",
    "??",
];

#[test]
fn the_tiny_model_embeds_as_its_definition_in_every_dtype() {
    for (name, dtype, tolerance) in [
        ("f32", Dtype::F32, 1e-6),
        ("f16", Dtype::F16, 2e-3),
        ("i8", Dtype::I8, 2e-2),
    ] {
        let embedder = StaticEmbedder::load(tiny(name, dtype)).unwrap();
        assert_eq!(embedder.dimension(), DIMENSION);
        let got = embedder.embed(&TEXTS).unwrap();
        let want = TinyEmbedder.embed(&TEXTS).unwrap();
        for ((text, g), w) in TEXTS.iter().zip(&got).zip(&want) {
            let off = g.iter().zip(w).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
            assert!(off <= tolerance, "{name}: {text:?} is {off} off: {g:?} vs {w:?}");
        }
        assert_eq!(
            got[4],
            vec![0.0; DIMENSION],
            "{name}: no known token gives the zero vector"
        );
    }
}

#[test]
fn near_meanings_are_near_and_a_batch_does_not_change_a_vector() {
    let embedder = StaticEmbedder::load(tiny("near", Dtype::F32)).unwrap();
    let v = embedder
        .embed(&["deprecated", "removed", "parameter", "is it going away"])
        .unwrap();
    assert!(cosine(&v[0], &v[1]) > 0.95, "deprecated ~ removed");
    assert!(cosine(&v[0], &v[2]) < 0.1, "deprecated !~ parameter");
    assert!(cosine(&v[3], &v[0]) > cosine(&v[3], &v[2]));
    let alone = embedder.embed(&["removed"]).unwrap();
    assert_eq!(alone[0], v[1]);
    let norm: f32 = v[3].iter().map(|x| x * x).sum::<f32>().sqrt();
    assert!((norm - 1.0).abs() < 1e-6, "vectors are L2-normalised: {norm}");
}

#[test]
fn the_id_names_the_model_not_the_folder() {
    let a = StaticEmbedder::load(tiny("id-a", Dtype::F32)).unwrap();
    let b = StaticEmbedder::load(tiny("id-b", Dtype::F32)).unwrap();
    let half = StaticEmbedder::load(tiny("id-half", Dtype::F16)).unwrap();
    assert_eq!(a.id(), b.id(), "the same files in two folders are one model");
    assert_ne!(a.id(), half.id(), "other weights are another model");
    assert!(
        a.id().starts_with("model2vec:") && a.id().len() == "model2vec:".len() + 12,
        "{}",
        a.id()
    );
}

fn load_error(dir: &Path) -> String {
    StaticEmbedder::load(dir).unwrap_err().to_string()
}

#[test]
fn a_missing_folder_or_file_is_named() {
    let dir = scratch("missing");
    assert_eq!(load_error(&dir), format!("{}: no such folder", dir.display()));
    for file in ["config.json", "model.safetensors", "tokenizer.json"] {
        let dir = tiny(&format!("missing-{file}"), Dtype::F32);
        std::fs::remove_file(dir.join(file)).unwrap();
        let err = load_error(&dir);
        assert!(
            err.starts_with(&format!("{}: missing", dir.join(file).display())),
            "{err}"
        );
    }
    let file = tiny("a-file", Dtype::F32).join("config.json");
    assert!(load_error(&file).contains("config.json: not a folder"));
}

#[test]
fn malformed_json_is_named_with_its_file() {
    let dir = tiny("bad-config", Dtype::F32);
    std::fs::write(dir.join("config.json"), "{\"normalize\": tru").unwrap();
    let err = load_error(&dir);
    assert!(
        err.starts_with(&format!("{}: not JSON", dir.join("config.json").display())),
        "{err}"
    );

    let dir = tiny("bad-normalize", Dtype::F32);
    std::fs::write(dir.join("config.json"), "{\"normalize\": \"yes\"}").unwrap();
    assert!(load_error(&dir).ends_with("config.json: `normalize` is \"yes\", not true or false"));

    let dir = tiny("bad-tokenizer", Dtype::F32);
    std::fs::write(dir.join("tokenizer.json"), "{\"model\": {}}").unwrap();
    let err = load_error(&dir);
    assert!(
        err.contains("tokenizer.json: not a Hugging Face tokenizer.json"),
        "{err}"
    );
}

#[test]
fn a_tensor_of_the_wrong_shape_or_dtype_is_named() {
    let cases: [(&str, Vec<Tensor>, &str); 6] = [
        (
            "vector",
            vec![Tensor::new("embeddings", "F32", &[8], vec![0; 32])],
            "tensor `embeddings` has shape [8]; a matrix [tokens, dimension] is needed",
        ),
        (
            "cube",
            vec![Tensor::new("embeddings", "F32", &[2, 2, 2], vec![0; 32])],
            "tensor `embeddings` has shape [2, 2, 2]; a matrix",
        ),
        (
            "dtype",
            vec![Tensor::new("embeddings", "I32", &[40, 8], vec![0; 1280])],
            "tensor `embeddings` has dtype I32; F32, F16, BF16, F64 or I8 are read",
        ),
        (
            "short",
            vec![Tensor::new("embeddings", "F32", &[40, 8], vec![0; 100])],
            "tensor `embeddings`: shape [40, 8] of F32 needs 1280 bytes, its data_offsets hold 100",
        ),
        (
            "absent",
            vec![Tensor::new("embedding.weight", "F32", &[40, 8], vec![0; 1280])],
            "no tensor `embeddings`",
        ),
        (
            "few-rows",
            vec![Tensor::new("embeddings", "F32", &[3, 8], vec![0; 96])],
            "the tokenizer has 58 tokens, the model only 3 rows in `embeddings`",
        ),
    ];
    for (name, tensors, message) in cases {
        let dir = tiny(&format!("tensor-{name}"), Dtype::F32);
        write_safetensors(&dir.join("model.safetensors"), &tensors).unwrap();
        let err = load_error(&dir);
        let file = dir.join("model.safetensors").display().to_string();
        assert!(err.starts_with(&file) && err.contains(message), "{name}: {err}");
    }
    let dir = tiny("not-safetensors", Dtype::F32);
    std::fs::write(dir.join("model.safetensors"), b"PK\x03\x04 not a tensor file").unwrap();
    assert!(load_error(&dir).contains("its header claims"), "{}", load_error(&dir));
}

/// The folder `cargo xtask wordllama` writes (or `RAGCTL_WORDLLAMA_DIR`): when it is there, the
/// real model must load and rank a paraphrase above an unrelated text.
#[test]
fn the_wordllama_folder_loads_when_present() {
    let dir = std::env::var_os("RAGCTL_WORDLLAMA_DIR").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/models/wordllama-l2-256"),
        PathBuf::from,
    );
    if !dir.is_dir() {
        eprintln!(
            "skipped: no wordllama folder at {} (cargo xtask wordllama writes it)",
            dir.display()
        );
        return;
    }
    let embedder = StaticEmbedder::load(&dir).unwrap();
    assert_eq!(embedder.dimension(), 256);
    let v = embedder
        .embed(&[
            "this function is deprecated and will be removed",
            "this API is going away in the next release",
            "the recipe needs two cups of flour",
        ])
        .unwrap();
    assert!(
        cosine(&v[0], &v[1]) > cosine(&v[0], &v[2]) + 0.05,
        "{} vs {}",
        cosine(&v[0], &v[1]),
        cosine(&v[0], &v[2])
    );
}
