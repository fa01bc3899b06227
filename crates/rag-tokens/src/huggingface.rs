//! The Hugging Face `tokenizers` backend (cargo feature `huggingface`): any model whose tokenizer
//! ships as a `tokenizer.json` (Llama, Mistral, Qwen, Gemma, BERT, ...), read from a file.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rag_core::{ChunkError, TokenCounter, TokenizerError};
use sha2::{Digest, Sha256};

/// Counts tokens with a Hugging Face `tokenizer.json`, loaded from a file; nothing is downloaded.
///
/// The count is the number of ids the tokenizer gives the text without special tokens (no BOS or
/// EOS: they are the prompt's, not the chunk's), with any truncation or padding the file
/// configures turned off, so a long text is counted whole.
///
/// Its [`name`](TokenCounter::name) is `hf:` with the file's name and the first 12 hex digits of
/// the file's SHA-256 (`hf:tokenizer.json@3f2a9c1b7e4d`): two files give the same name only if
/// they are the same file, as the trait requires of names.
///
/// ```no_run
/// use rag_core::TokenCounter;
/// use rag_tokens::HuggingFaceCounter;
///
/// let counter = HuggingFaceCounter::from_file("models/llama-3/tokenizer.json")?;
/// let tokens = counter.count("Rerankers score pairs.")?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct HuggingFaceCounter {
    tokenizer: Arc<tokenizers::Tokenizer>,
    name: String,
    path: PathBuf,
}

impl HuggingFaceCounter {
    /// Loads the `tokenizer.json` at `path`; a file that cannot be read or is not a tokenizer is a
    /// [`ChunkError::Tokenizer`] naming the file.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, ChunkError> {
        let path = path.as_ref();
        let failed = |message: String| ChunkError::Tokenizer {
            tokenizer: path.display().to_string(),
            message,
        };
        let bytes = std::fs::read(path).map_err(|err| failed(format!("cannot read: {err}")))?;
        let mut tokenizer = tokenizers::Tokenizer::from_bytes(&bytes)
            .map_err(|err| failed(format!("not a Hugging Face tokenizer.json: {err}")))?;
        tokenizer
            .with_truncation(None)
            .map_err(|err| failed(format!("cannot turn truncation off: {err}")))?;
        tokenizer.with_padding(None);
        let digest: String = Sha256::digest(&bytes)
            .iter()
            .take(6)
            .map(|b| format!("{b:02x}"))
            .collect();
        let file_name = path
            .file_name()
            .map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
        Ok(Self {
            tokenizer: Arc::new(tokenizer),
            name: format!("hf:{file_name}@{digest}"),
            path: path.to_owned(),
        })
    }

    /// The file the tokenizer was read from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The token ids of `text`, without special tokens.
    pub fn encode(&self, text: &str) -> Result<Vec<u32>, TokenizerError> {
        self.tokenizer
            .encode_fast(text, false)
            .map(|encoding| encoding.get_ids().to_vec())
            .map_err(|err| TokenizerError::new(self.name.clone(), err.to_string()))
    }
}

impl std::fmt::Debug for HuggingFaceCounter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HuggingFaceCounter")
            .field("name", &self.name)
            .field("path", &self.path)
            .finish()
    }
}

impl TokenCounter for HuggingFaceCounter {
    /// Fails only if the tokenizer itself fails on the text (a model whose vocabulary cannot
    /// encode some character and has no fallback), naming the tokenizer.
    fn count(&self, text: &str) -> Result<usize, TokenizerError> {
        if text.is_empty() {
            return Ok(0);
        }
        self.tokenizer
            .encode_fast(text, false)
            .map(|encoding| encoding.len())
            .map_err(|err| TokenizerError::new(self.name.clone(), err.to_string()))
    }

    fn name(&self) -> &str {
        &self.name
    }

    // `splits_at_line_starts` stays false: a tokenizer.json can hold any pre-tokenizer (some
    // merge across line breaks), and the promise must hold for every text.
}
