//! A tiny static embedding model, built at test time: a vocabulary of a few dozen words whose
//! vectors put words of one meaning close together ("deprecated", "removed", "going", "away";
//! "parameter", "argument"; ...), and far from the others.
//!
//! Two forms of the same model, so tests of any crate can use it without downloaded weights:
//! [`write_model`] writes it as a model2vec folder (`config.json`, `model.safetensors`,
//! `tokenizer.json`, a word-level tokenizer) for a loader to read, and [`TinyEmbedder`] is the
//! same model as a [`rag_core::Embedder`] in pure Rust, for tests that need an embedder but not
//! a loader. [`write_safetensors`] writes any tensors, for tests of a loader's errors.
//!
//! ```
//! use rag_contract::embedding::{TinyEmbedder, cosine};
//! use rag_core::Embedder;
//!
//! let v = TinyEmbedder.embed(&["the API is deprecated", "the API was removed", "read a file"])?;
//! assert!(cosine(&v[0], &v[1]) > 0.9);
//! assert!(cosine(&v[0], &v[2]) < 0.3);
//! # Ok::<(), rag_core::EmbedError>(())
//! ```

use std::io;
use std::path::Path;

use rag_core::{EmbedError, Embedder};
use serde_json::{Map, Value, json};

/// The length of the tiny model's vectors.
pub const DIMENSION: usize = 8;

/// The unknown token, id 0: its row is zero, and a loader drops it as model2vec does.
pub const UNKNOWN: &str = "[UNK]";

/// Words by meaning: each group shares one axis of the vectors.
const GROUPS: [&[&str]; 7] = [
    &[
        "deprecated",
        "removed",
        "going",
        "away",
        "obsolete",
        "retired",
        "deprecation",
    ],
    &["parameter", "argument", "option", "options", "name", "flag"],
    &["stream", "pipe", "data", "flow", "chunks"],
    &["file", "read", "write", "disk", "lines", "line"],
    &["duplicate", "duplicates", "copy", "same", "repeated", "dropped"],
    &["budget", "token", "tokens", "limit", "room", "fit"],
    &["install", "setup", "package", "version", "upgrade"],
];

/// Words of no particular meaning: a small vector on an axis of their own.
const FILLERS: [&str; 16] = [
    "the", "a", "is", "was", "in", "of", "and", "how", "do", "i", "my", "function", "api", "it", "to", "what",
];

/// The vocabulary, in id order (id 0 is [`UNKNOWN`]), with each word's vector.
pub fn vocabulary() -> Vec<(&'static str, [f32; DIMENSION])> {
    let mut words = vec![(UNKNOWN, [0.0; DIMENSION])];
    for (axis, group) in GROUPS.iter().enumerate() {
        for (i, word) in group.iter().enumerate() {
            let mut vector = [0.0; DIMENSION];
            vector[axis] = 1.0;
            // A little of the next axis, different per word, so no two words are the same.
            vector[(axis + 1) % GROUPS.len()] = 0.05 * (i as f32 + 1.0);
            words.push((*word, vector));
        }
    }
    for (i, word) in FILLERS.iter().enumerate() {
        let mut vector = [0.0; DIMENSION];
        vector[DIMENSION - 1] = 0.2 + 0.01 * i as f32;
        words.push((*word, vector));
    }
    words
}

/// How [`write_model`] stores the matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dtype {
    /// 32-bit floats.
    F32,
    /// 16-bit floats.
    F16,
    /// 8-bit integers, each row scaled to the range -127..=127, with a `weights` vector restoring
    /// each row's scale and a `mapping` from token id to row (rows in reverse order), as a
    /// quantised model2vec model may carry them.
    I8,
}

/// Writes the tiny model into `dir` as a model2vec folder: `config.json`, `tokenizer.json` (a
/// word-level tokenizer: lower-cased, split at whitespace and punctuation) and `model.safetensors`
/// with an `embeddings` matrix of `dtype`.
pub fn write_model(dir: &Path, dtype: Dtype) -> io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let words = vocabulary();
    let vocab: Map<String, Value> = words
        .iter()
        .enumerate()
        .map(|(id, (word, _))| ((*word).to_owned(), json!(id)))
        .collect();
    let tokenizer = json!({
        "version": "1.0",
        "truncation": null,
        "padding": null,
        "added_tokens": [{"id": 0, "content": UNKNOWN, "single_word": false, "lstrip": false,
                          "rstrip": false, "normalized": false, "special": true}],
        "normalizer": {"type": "Lowercase"},
        "pre_tokenizer": {"type": "Whitespace"},
        "post_processor": null,
        "decoder": null,
        "model": {"type": "WordLevel", "vocab": vocab, "unk_token": UNKNOWN}
    });
    std::fs::write(dir.join("tokenizer.json"), tokenizer.to_string())?;
    let config = json!({"model_type": "model2vec", "hidden_dim": DIMENSION, "normalize": true});
    std::fs::write(dir.join("config.json"), config.to_string())?;
    let shape = [words.len(), DIMENSION];
    let values = words.iter().flat_map(|(_, v)| v.iter().copied());
    let tensors = match dtype {
        Dtype::F32 => vec![Tensor::new(
            "embeddings",
            "F32",
            &shape,
            values.flat_map(f32::to_le_bytes).collect(),
        )],
        Dtype::F16 => vec![Tensor::new(
            "embeddings",
            "F16",
            &shape,
            values.flat_map(|v| f16_bits(v).to_le_bytes()).collect(),
        )],
        Dtype::I8 => {
            // Row r of the matrix holds token (n - 1 - r), scaled to fill -127..=127.
            let n = words.len();
            let scale = |v: &[f32; DIMENSION]| v.iter().fold(0.0f32, |m, x| m.max(x.abs())).max(f32::MIN_POSITIVE);
            let rows: Vec<u8> = words
                .iter()
                .rev()
                .flat_map(|(_, v)| {
                    let s = scale(v);
                    v.map(|x| ((x / s * 127.0).round() as i8).to_le_bytes()[0])
                })
                .collect();
            let weights: Vec<u8> = words
                .iter()
                .flat_map(|(_, v)| (scale(v) / 127.0).to_le_bytes())
                .collect();
            let mapping: Vec<u8> = (0..n).flat_map(|id| ((n - 1 - id) as i32).to_le_bytes()).collect();
            vec![
                Tensor::new("embeddings", "I8", &shape, rows),
                Tensor::new("weights", "F32", &[n], weights),
                Tensor::new("mapping", "I32", &[n], mapping),
            ]
        }
    };
    write_safetensors(&dir.join("model.safetensors"), &tensors)
}

/// One tensor for [`write_safetensors`].
#[derive(Debug, Clone)]
pub struct Tensor {
    /// Its name.
    pub name: String,
    /// Its dtype as safetensors spells it (`F32`, `F16`, `I8`, ...).
    pub dtype: String,
    /// Its shape.
    pub shape: Vec<usize>,
    /// Its bytes, little-endian.
    pub data: Vec<u8>,
}

impl Tensor {
    /// A tensor of `name`, `dtype` and `shape` holding `data`.
    pub fn new(name: &str, dtype: &str, shape: &[usize], data: Vec<u8>) -> Self {
        Self {
            name: name.to_owned(),
            dtype: dtype.to_owned(),
            shape: shape.to_vec(),
            data,
        }
    }
}

/// Writes `tensors` to `path` in the safetensors format: the length of the JSON header as a
/// little-endian u64, the header (padded with spaces to a multiple of 8 bytes), the data. Nothing
/// is checked, so a test can write a malformed file.
pub fn write_safetensors(path: &Path, tensors: &[Tensor]) -> io::Result<()> {
    let mut header = Map::new();
    let mut offset = 0;
    for tensor in tensors {
        let end = offset + tensor.data.len();
        header.insert(
            tensor.name.clone(),
            json!({"dtype": tensor.dtype, "shape": tensor.shape, "data_offsets": [offset, end]}),
        );
        offset = end;
    }
    let mut header = Value::Object(header).to_string().into_bytes();
    while !header.len().is_multiple_of(8) {
        header.push(b' ');
    }
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend(header);
    for tensor in tensors {
        bytes.extend(&tensor.data);
    }
    std::fs::write(path, bytes)
}

/// The IEEE half-precision bits nearest `value` (ties to even); enough for test vectors.
fn f16_bits(value: f32) -> u16 {
    let bits = value.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exponent = ((bits >> 23) & 0xff) as i32 - 127 + 15;
    let mantissa = bits & 0x007f_ffff;
    if value == 0.0 || exponent < -10 {
        return sign;
    }
    if exponent >= 31 {
        return sign | 0x7c00;
    }
    if exponent <= 0 {
        // Subnormal: shift the implicit bit in.
        let m = (mantissa | 0x0080_0000) >> (1 - exponent);
        return sign | round_shift(m, 13) as u16;
    }
    let rounded = ((exponent as u32) << 10 | (mantissa >> 13)) + u32::from(round_up(mantissa, 13));
    sign | rounded as u16
}

fn round_shift(m: u32, shift: u32) -> u32 {
    (m >> shift) + u32::from(round_up(m, shift))
}

fn round_up(m: u32, shift: u32) -> bool {
    let half = 1 << (shift - 1);
    let rest = m & ((1 << shift) - 1);
    rest > half || (rest == half && (m >> shift) & 1 == 1)
}

/// The tiny model as an [`Embedder`]: lower-cased words (runs of letters and digits) looked up,
/// unknown ones skipped, their vectors averaged and scaled to length 1 (a text without a known
/// word gets the zero vector). Its id is `tiny`.
#[derive(Debug, Clone, Copy, Default)]
pub struct TinyEmbedder;

impl TinyEmbedder {
    /// The vector of one text.
    pub fn vector(text: &str) -> Vec<f32> {
        let words = vocabulary();
        let mut sum = [0.0f32; DIMENSION];
        let mut n = 0usize;
        for word in text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
            let word = word.to_lowercase();
            if let Some((_, vector)) = words.iter().skip(1).find(|(w, _)| *w == word) {
                for (s, v) in sum.iter_mut().zip(vector) {
                    *s += v;
                }
                n += 1;
            }
        }
        let mean: Vec<f32> = sum.iter().map(|s| s / n.max(1) as f32).collect();
        let norm = mean.iter().map(|v| v * v).sum::<f32>().sqrt();
        if norm > 0.0 {
            mean.iter().map(|v| v / norm).collect()
        } else {
            mean
        }
    }
}

impl Embedder for TinyEmbedder {
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts.iter().map(|text| Self::vector(text)).collect())
    }

    fn dimension(&self) -> usize {
        DIMENSION
    }

    fn id(&self) -> &str {
        "tiny"
    }
}

/// The cosine of two vectors (0 when either is zero).
pub fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let dot: f64 = a.iter().zip(b).map(|(x, y)| f64::from(*x) * f64::from(*y)).sum();
    let norm = |v: &[f32]| v.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    let (na, nb) = (norm(a), norm(b));
    if na == 0.0 || nb == 0.0 { 0.0 } else { dot / (na * nb) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_of_one_meaning_are_near_and_others_far() {
        let v = |t: &str| TinyEmbedder::vector(t);
        assert!(cosine(&v("deprecated"), &v("removed")) > 0.95);
        assert!(cosine(&v("is it going away"), &v("deprecated")) > 0.8);
        assert!(cosine(&v("deprecated"), &v("parameter")) < 0.1);
        assert_eq!(v("!!"), vec![0.0; DIMENSION], "no known word: the zero vector");
    }

    #[test]
    fn half_precision_bits_are_the_nearest() {
        assert_eq!(f16_bits(1.0), 0x3c00);
        assert_eq!(f16_bits(-2.0), 0xc000);
        assert_eq!(f16_bits(0.05), 0x2a66);
        assert_eq!(f16_bits(0.0), 0);
        assert_eq!(f16_bits(65_520.0), 0x7c00);
    }
}
