//! A local static embedder for ragctl: [`StaticEmbedder`] loads a model2vec-format folder the user
//! has and turns texts into vectors, for hybrid scoring in the packer (`rag-packer`) and for
//! vectors written with the chunks (`ragctl chunk --embedder DIR`).
//!
//! A static model is a matrix with one row per token of its tokenizer: a text's vector is the mean
//! of its tokens' rows, scaled to length 1. No neural network runs, so embedding costs about what
//! tokenizing does. The folder holds `config.json`, `model.safetensors` (an `embeddings` matrix in
//! F32, F16, BF16 or I8; a quantised model may add a per-token `weights` vector and a token
//! `mapping` to rows) and `tokenizer.json` (any Hugging Face tokenizer, read by the workspace's
//! pure-Rust `tokenizers`). Any model2vec model loads (the potion models and the like), and so does
//! the wordllama wheel's matrix once re-keyed (`cargo xtask wordllama`, see `docs/reference/embed.md`).
//!
//! What it is not: it downloads nothing (the project ships no weights: the folder is yours), and
//! it runs no transformer; for a sentence-transformers or API model, implement
//! [`rag_core::Embedder`] yourself (or pass a Python object with `embed`).
//!
//! ```
//! use rag_core::Embedder;
//! use rag_embed::StaticEmbedder;
//!
//! // A tiny model written at test time (a few dozen words); a real folder loads the same way.
//! let dir = std::env::temp_dir().join(format!("rag-embed-doc-{}", std::process::id()));
//! rag_contract::embedding::write_model(&dir, rag_contract::embedding::Dtype::F32)?;
//!
//! let embedder = StaticEmbedder::load(&dir)?;
//! let vectors = embedder.embed(&["is it going away", "deprecated since 2.0", "read a file"])?;
//! let cosine = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
//! assert!(cosine(&vectors[0], &vectors[1]) > cosine(&vectors[0], &vectors[2]));
//! assert_eq!(embedder.dimension(), 8);
//! assert!(embedder.id().starts_with("model2vec:"));
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod tensors;

use std::path::{Path, PathBuf};

use rag_core::{EmbedError, Embedder, ModelLoadError};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::tensors::Tensors;

/// A model2vec-format static embedding model, loaded from a folder; see the [crate] docs.
///
/// Its [`id`](Embedder::id) is `model2vec:` and the first 12 hex digits of the SHA-256 of its
/// `model.safetensors`, `tokenizer.json` and normalisation setting, so two folders get one id only
/// if they make the same vectors, wherever they are and whatever they are called.
///
/// A text is tokenized without special tokens, the tokenizer's unknown token is dropped (as
/// model2vec does), and at most [`MAX_TOKENS`](Self::MAX_TOKENS) tokens are read; a text without
/// a known token gets the zero vector.
pub struct StaticEmbedder {
    tokenizer: tokenizers::Tokenizer,
    /// Row-major, `rows x dimension`.
    matrix: Vec<f32>,
    dimension: usize,
    weights: Option<Vec<f32>>,
    mapping: Option<Vec<usize>>,
    unknown: Option<u32>,
    normalize: bool,
    id: String,
    dir: PathBuf,
}

impl std::fmt::Debug for StaticEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StaticEmbedder")
            .field("id", &self.id)
            .field("dir", &self.dir)
            .field("dimension", &self.dimension)
            .field("rows", &(self.matrix.len() / self.dimension.max(1)))
            .finish_non_exhaustive()
    }
}

/// The files of a model2vec folder.
const FILES: [&str; 3] = ["config.json", "model.safetensors", "tokenizer.json"];

impl StaticEmbedder {
    /// The most tokens of a text that are read (model2vec's default): a longer text is embedded
    /// from its first 512 tokens.
    pub const MAX_TOKENS: usize = 512;

    /// Loads the model2vec folder `dir`. Every failure names the file: a missing folder or file,
    /// JSON that does not parse, a tokenizer the `tokenizers` crate refuses, a safetensors file
    /// without an `embeddings` matrix, a tensor of the wrong shape or dtype, a tokenizer with more
    /// tokens than the matrix has rows.
    pub fn load(dir: impl AsRef<Path>) -> Result<Self, ModelLoadError> {
        let dir = dir.as_ref();
        if !dir.is_dir() {
            let why = if dir.exists() {
                "not a folder: a model2vec model is a folder of config.json, model.safetensors and tokenizer.json"
            } else {
                "no such folder"
            };
            return Err(ModelLoadError::new(dir, why));
        }
        let [config_bytes, model_bytes, tokenizer_bytes] = FILES.map(|name| read(&dir.join(name)));
        let (config_path, model_path, tokenizer_path) = (dir.join(FILES[0]), dir.join(FILES[1]), dir.join(FILES[2]));
        let normalize = read_config(&config_path, &config_bytes?)?;
        let tokenizer_bytes = tokenizer_bytes?;
        let (tokenizer, unknown) = read_tokenizer(&tokenizer_path, &tokenizer_bytes)?;
        let model_bytes = model_bytes?;
        let fail = |message: String| ModelLoadError::new(&model_path, message);
        let tensors = Tensors::parse(&model_bytes).map_err(fail)?;
        let (name, info) = match tensors.info("embeddings").map_err(fail)? {
            Some(info) => ("embeddings", info),
            None => match tensors.info("0").map_err(fail)? {
                Some(info) => ("0", info),
                None => {
                    return Err(fail(
                        "no tensor `embeddings` (the token matrix of a model2vec model)".into(),
                    ));
                }
            },
        };
        let [rows, dimension] = info.shape[..] else {
            return Err(fail(format!(
                "tensor `{name}` has shape {:?}; a matrix [tokens, dimension] is needed",
                info.shape
            )));
        };
        if rows == 0 || dimension == 0 {
            return Err(fail(format!("tensor `{name}` is empty: shape [{rows}, {dimension}]")));
        }
        let matrix = tensors.floats(name, &info).map_err(fail)?;
        let weights = match tensors.info("weights").map_err(fail)? {
            Some(info) if info.shape.len() == 1 => Some(tensors.floats("weights", &info).map_err(fail)?),
            Some(info) => {
                return Err(fail(format!(
                    "tensor `weights` has shape {:?}; a vector is needed",
                    info.shape
                )));
            }
            None => None,
        };
        let mapping = match tensors.info("mapping").map_err(fail)? {
            Some(info) if info.shape.len() == 1 => Some(tensors.indices("mapping", &info).map_err(fail)?),
            Some(info) => {
                return Err(fail(format!(
                    "tensor `mapping` has shape {:?}; a vector is needed",
                    info.shape
                )));
            }
            None => None,
        };
        if let Some(row) = mapping.iter().flatten().find(|&&row| row >= rows) {
            return Err(fail(format!(
                "tensor `mapping` points at row {row}; `{name}` has {rows} rows"
            )));
        }
        if !matrix.iter().chain(weights.iter().flatten()).all(|v| v.is_finite()) {
            return Err(fail("a tensor holds a value that is not finite".into()));
        }
        let tokens = tokenizer.get_vocab_size(true);
        let lookup = mapping.as_ref().map_or(rows, Vec::len);
        if tokens > lookup {
            let what = if mapping.is_some() {
                "entries in `mapping`"
            } else {
                "rows in `embeddings`"
            };
            return Err(fail(format!(
                "the tokenizer has {tokens} tokens, the model only {lookup} {what}: tokenizer.json is not this model's"
            )));
        }
        let mut hash = Sha256::new();
        hash.update(&model_bytes);
        hash.update(&tokenizer_bytes);
        hash.update([u8::from(normalize)]);
        let digest = hash.finalize();
        let id = format!(
            "model2vec:{}",
            digest.iter().take(6).map(|b| format!("{b:02x}")).collect::<String>()
        );
        Ok(Self {
            tokenizer,
            matrix,
            dimension,
            weights,
            mapping,
            unknown,
            normalize,
            id,
            dir: dir.to_path_buf(),
        })
    }

    /// The folder the model was loaded from.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The vector of one text.
    pub fn vector(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        let encoding = self
            .tokenizer
            .encode_fast(text, false)
            .map_err(|err| EmbedError::new(&self.id, format!("tokenizing: {err}")))?;
        let mut sum = vec![0.0f32; self.dimension];
        let mut count = 0usize;
        let ids = encoding.get_ids().iter().filter(|&&id| Some(id) != self.unknown);
        for &id in ids.take(Self::MAX_TOKENS) {
            let id = id as usize;
            let row = self.mapping.as_ref().map_or(Some(id), |m| m.get(id).copied());
            let Some(values) = row.and_then(|row| self.matrix.get(row * self.dimension..(row + 1) * self.dimension))
            else {
                continue;
            };
            let weight = self.weights.as_ref().and_then(|w| w.get(id)).copied().unwrap_or(1.0);
            for (s, v) in sum.iter_mut().zip(values) {
                *s += v * weight;
            }
            count += 1;
        }
        let n = count.max(1) as f32;
        sum.iter_mut().for_each(|s| *s /= n);
        if self.normalize {
            let norm = sum.iter().map(|v| v * v).sum::<f32>().sqrt();
            if norm > 0.0 {
                sum.iter_mut().for_each(|s| *s /= norm);
            }
        }
        Ok(sum)
    }
}

impl Embedder for StaticEmbedder {
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        texts.iter().map(|text| self.vector(text)).collect()
    }

    fn dimension(&self) -> usize {
        self.dimension
    }

    fn id(&self) -> &str {
        &self.id
    }
}

/// The bytes of one file of the folder, or the error naming it.
fn read(path: &Path) -> Result<Vec<u8>, ModelLoadError> {
    if !path.exists() {
        return Err(ModelLoadError::new(
            path,
            "missing: a model2vec folder holds config.json, model.safetensors and tokenizer.json",
        ));
    }
    if !path.is_file() {
        return Err(ModelLoadError::new(path, "not a regular file"));
    }
    std::fs::read(path).map_err(|err| ModelLoadError::new(path, format!("cannot read: {err}")))
}

/// Whether vectors are normalised, from `config.json` (`normalize`, true when absent).
fn read_config(path: &Path, bytes: &[u8]) -> Result<bool, ModelLoadError> {
    let fail = |message: String| ModelLoadError::new(path, message);
    let config: Value = serde_json::from_slice(bytes).map_err(|err| fail(format!("not JSON: {err}")))?;
    let Value::Object(config) = config else {
        return Err(fail("not a JSON object".into()));
    };
    match config.get("normalize") {
        None | Some(Value::Null) => Ok(true),
        Some(Value::Bool(normalize)) => Ok(*normalize),
        Some(other) => Err(fail(format!("`normalize` is {other}, not true or false"))),
    }
}

/// The tokenizer (truncation and padding off) and the id of its unknown token, if it has one.
fn read_tokenizer(path: &Path, bytes: &[u8]) -> Result<(tokenizers::Tokenizer, Option<u32>), ModelLoadError> {
    let fail = |message: String| ModelLoadError::new(path, message);
    let json: Value = serde_json::from_slice(bytes).map_err(|err| fail(format!("not JSON: {err}")))?;
    let mut tokenizer = tokenizers::Tokenizer::from_bytes(bytes)
        .map_err(|err| fail(format!("not a Hugging Face tokenizer.json: {err}")))?;
    tokenizer
        .with_truncation(None)
        .map_err(|err| fail(format!("cannot turn truncation off: {err}")))?;
    tokenizer.with_padding(None);
    let unknown = json
        .pointer("/model/unk_token")
        .and_then(Value::as_str)
        .and_then(|token| tokenizer.token_to_id(token));
    Ok((tokenizer, unknown))
}
