//! The Hugging Face `tokenizers` backend (cargo feature `huggingface`): any model whose tokenizer
//! ships as a `tokenizer.json` (Llama, Mistral, Qwen, Gemma, BERT, ...), read from a file.

use std::io::Read as _;
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
    /// The largest `tokenizer.json` [`from_file`](Self::from_file) reads: 64 MiB. Published
    /// tokenizers are under 35 MB (Gemma 3's, among the largest vocabularies, is 33 MB); past
    /// this, the path more likely names a device or a wrong file, which would otherwise be read
    /// until memory runs out.
    pub const MAX_FILE_BYTES: u64 = 64 << 20;

    /// Loads the `tokenizer.json` at `path`; a file that cannot be read, is larger than
    /// [`MAX_FILE_BYTES`](Self::MAX_FILE_BYTES) or is not a tokenizer is a
    /// [`ChunkError::Tokenizer`] naming the file.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, ChunkError> {
        Self::from_file_within(path, Self::MAX_FILE_BYTES)
    }

    /// [`from_file`](Self::from_file) with another size limit, in bytes: a regular file is
    /// refused by its size before it is read, anything else (a device, a pipe) once it has given
    /// one byte more than `max_bytes`, so reading it costs at most that much memory.
    ///
    /// ```
    /// use rag_tokens::HuggingFaceCounter;
    ///
    /// let err = HuggingFaceCounter::from_file_within("/dev/zero", 1 << 20).unwrap_err();
    /// # #[cfg(unix)]
    /// assert_eq!(
    ///     err.to_string(),
    ///     "tokenizer /dev/zero: file is larger than 1 MiB, the most a tokenizer.json may be"
    /// );
    /// ```
    pub fn from_file_within(path: impl AsRef<Path>, max_bytes: u64) -> Result<Self, ChunkError> {
        let path = path.as_ref();
        let failed = |message: String| ChunkError::Tokenizer {
            tokenizer: path.display().to_string(),
            message,
        };
        let bytes = read_within(path, max_bytes)
            .map_err(|err| failed(format!("cannot read: {err}")))?
            .ok_or_else(|| {
                failed(format!(
                    "file is larger than {}, the most a tokenizer.json may be",
                    format_size(max_bytes)
                ))
            })?;
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

/// The bytes of the file at `path`, or `None` if it holds more than `max_bytes`.
fn read_within(path: &Path, max_bytes: u64) -> std::io::Result<Option<Vec<u8>>> {
    let file = std::fs::File::open(path)?;
    let metadata = file.metadata()?;
    if metadata.is_file() && metadata.len() > max_bytes {
        return Ok(None);
    }
    let mut bytes = Vec::new();
    file.take(max_bytes.saturating_add(1)).read_to_end(&mut bytes)?;
    Ok((bytes.len() as u64 <= max_bytes).then_some(bytes))
}

/// A size as the error says it: `64 MiB`, or a number of bytes.
fn format_size(bytes: u64) -> String {
    for (shift, unit) in [(30, "GiB"), (20, "MiB"), (10, "KiB")] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{} {unit}", bytes >> shift);
        }
    }
    format!("{bytes} bytes")
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

    // `splits_at_line_starts` and `splits_at_spaces` stay false: a tokenizer.json can hold any
    // pre-tokenizer (some merge across line breaks, or keep a space with the word before it), and
    // a promise must hold for every text.
}
