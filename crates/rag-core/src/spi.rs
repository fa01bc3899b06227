//! The service-provider interfaces: what a parser, a chunker, a packer and a token counter promise.
//!
//! These traits are the seams of the pipeline. Implementations live in other crates
//! (`rag-chunker` ships the built-in ones); the contract suite (`rag-contract`) turns the promises
//! below into checks any implementation can run.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::{
    Chunk, ChunkError, CorpusId, DocumentId, PackedContext, PackerError, ParseError, ParsedDocument, RequestContext,
};

/// A [`TokenCounter`] could not count a text.
///
/// The built-in BPE counters never fail; a counter backed by a service, a model file or another
/// runtime returns this instead of panicking. The chunker and the packer turn it into their own
/// error, naming the document (and byte offset) or the chunk whose text was being counted.
///
/// ```
/// use rag_core::TokenizerError;
///
/// let err = TokenizerError::new("hf:bert-base", "the model file is truncated");
/// assert_eq!(err.to_string(), "tokenizer hf:bert-base failed: the model file is truncated");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("tokenizer {tokenizer} failed: {message}")]
#[non_exhaustive]
pub struct TokenizerError {
    /// The failing counter's [`name`](TokenCounter::name).
    pub tokenizer: String,
    /// What went wrong.
    pub message: String,
}

impl TokenizerError {
    /// The error of the counter named `tokenizer`, saying what went wrong.
    pub fn new(tokenizer: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            tokenizer: tokenizer.into(),
            message: message.into(),
        }
    }
}

/// Counts tokens the way a model's tokenizer does.
///
/// Contract:
/// - `count` is deterministic: the same text always gives the same result.
/// - `count("")` is `Ok(0)`.
/// - A counter that cannot count returns a [`TokenizerError`]; it never panics. Callers pass the
///   error on (the chunker as a `ChunkError` naming the document, the packer as a `PackerError`
///   naming the chunk) and do not retry.
/// - `name` identifies the tokenizer precisely enough that two counters with the same name give the
///   same counts (`tiktoken:cl100k_base`); packers and chunk metadata report it.
/// - Counters are shared across threads, so they must be `Send + Sync` and cheap to call
///   concurrently; expensive state (BPE tables) is built once, not per call.
/// - [`splits_at_line_starts`](Self::splits_at_line_starts) and
///   [`splits_at_spaces`](Self::splits_at_spaces) are `true` only if the additivity they describe
///   holds for every text; the default `false` is always correct.
pub trait TokenCounter: Send + Sync {
    /// Number of tokens in `text`.
    fn count(&self, text: &str) -> Result<usize, TokenizerError>;

    /// Name of the tokenizer, e.g. `tiktoken:cl100k_base`.
    fn name(&self) -> &str;

    /// Whether counts add up across line starts: `count(a + b) == count(a) + count(b)` for every
    /// `a` that ends with `'\n'` or `'\r'` and every `b` that starts with a character that is
    /// neither whitespace nor `'/'`.
    ///
    /// It holds for tokenizers that split text into pieces with a pre-tokenizer that always starts a
    /// piece there and then encode each piece on its own, as OpenAI's `cl100k_base` and
    /// `o200k_base` do. (`'/'` is excluded because `o200k_base` lets a run of punctuation swallow
    /// the line breaks and slashes after it: `"!\n/"` is one piece.) A chunker uses it to take a
    /// chunk's exact count from counts of its lines instead of counting the chunk again. The
    /// default, `false`, makes no promise.
    fn splits_at_line_starts(&self) -> bool {
        false
    }

    /// Whether counts add up across space boundaries: `count(a + b) == count(a) + count(b)` for
    /// every `a` that ends with a character that is not whitespace and every `b` that starts with
    /// a whitespace character other than `'\n'` and `'\r'`.
    ///
    /// It holds for tokenizers whose pre-tokenizer never lets a piece run from a character that
    /// is not whitespace into a space after it (a space or tab joins the word after it, if any,
    /// as in OpenAI's `cl100k_base` and `o200k_base`) and that encode each piece on its own.
    /// (Line breaks are excluded because a run of punctuation there takes the line breaks after
    /// it: `".\n\n"` is one piece.) A chunker uses it to derive the count of a sentence alone
    /// from its count with the words around it, instead of counting it again. The default,
    /// `false`, makes no promise.
    fn splits_at_spaces(&self) -> bool {
        false
    }
}

/// Whether byte offset `at` of `text` is a place where a counter that
/// [splits at line starts](TokenCounter::splits_at_line_starts) counts the two sides apart
/// exactly: a line break (`'\n'` or `'\r'`) before it, and after it a character that is neither
/// whitespace nor `'/'`.
///
/// ```
/// use rag_core::counts_add_up_at;
///
/// assert!(counts_add_up_at("Setup\nInstall it.", 6));
/// assert!(!counts_add_up_at("Setup\n  Install it.", 6), "indented: the spaces join the break");
/// assert!(!counts_add_up_at("Setup Install", 6), "not a line start");
/// ```
pub fn counts_add_up_at(text: &str, at: usize) -> bool {
    let (Some(before), Some(after)) = (text.get(..at), text.get(at..)) else {
        return false;
    };
    before.ends_with(['\n', '\r']) && after.chars().next().is_some_and(|c| !c.is_whitespace() && c != '/')
}

/// Whether byte offset `at` of `text` is a place where a counter that
/// [splits at spaces](TokenCounter::splits_at_spaces) counts the two sides apart exactly: a
/// character that is not whitespace before it, and after it a whitespace character other than
/// `'\n'` and `'\r'`.
///
/// ```
/// use rag_core::counts_add_up_at_space;
///
/// assert!(counts_add_up_at_space("Install it. Then run it.", 11));
/// assert!(counts_add_up_at_space("one\ttwo", 3), "a tab is a space");
/// assert!(!counts_add_up_at_space("Install it. Then", 12), "after the space, not before it");
/// assert!(!counts_add_up_at_space("it.\n\nThen", 3), "a line break joins the punctuation");
/// assert!(!counts_add_up_at_space("a  b", 2), "whitespace before it");
/// ```
pub fn counts_add_up_at_space(text: &str, at: usize) -> bool {
    let (Some(before), Some(after)) = (text.get(..at), text.get(at..)) else {
        return false;
    };
    before.chars().next_back().is_some_and(|c| !c.is_whitespace())
        && after
            .chars()
            .next()
            .is_some_and(|c| c.is_whitespace() && c != '\n' && c != '\r')
}

/// A reference or smart pointer to a counter counts as the counter does, so a chunker or a packer
/// can hold an `Arc<dyn TokenCounter>` or borrow one.
macro_rules! forward_token_counter {
    ($($pointer:ty),+) => {$(
        impl<T: TokenCounter + ?Sized> TokenCounter for $pointer {
            fn count(&self, text: &str) -> Result<usize, TokenizerError> {
                (**self).count(text)
            }

            fn name(&self) -> &str {
                (**self).name()
            }

            fn splits_at_line_starts(&self) -> bool {
                (**self).splits_at_line_starts()
            }

            fn splits_at_spaces(&self) -> bool {
                (**self).splits_at_spaces()
            }
        }
    )+};
}

forward_token_counter!(&T, std::sync::Arc<T>, Box<T>);

/// An [`Embedder`] could not embed a batch of texts.
///
/// A static model never fails on text; an embedder backed by a service, another runtime or a
/// Python object returns this instead of panicking, and so does any embedder whose result breaks
/// the contract (a vector of the wrong dimension, one vector too few). The packer passes it on as
/// [`PackerError::Embedder`].
///
/// ```
/// use rag_core::EmbedError;
///
/// let err = EmbedError::new("model2vec:potion", "the service timed out");
/// assert_eq!(err.to_string(), "embedder model2vec:potion failed: the service timed out");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("embedder {model} failed: {message}")]
#[non_exhaustive]
pub struct EmbedError {
    /// The failing embedder's [`id`](Embedder::id).
    pub model: String,
    /// What went wrong.
    pub message: String,
}

impl EmbedError {
    /// The error of the embedder `model`, saying what went wrong.
    pub fn new(model: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            model: model.into(),
            message: message.into(),
        }
    }
}

/// Turns texts into vectors whose cosine says how close their meanings are.
///
/// Contract:
/// - `embed(texts)` returns one vector per text, in order, each of [`dimension`](Self::dimension)
///   finite values; it is deterministic (the same text always gives the same vector, whatever else
///   is in the batch).
/// - `id` names the model precisely enough that two embedders with the same id give the same
///   vectors (`model2vec:wordllama-l2-256`); chunks record it with their vector
///   ([`Chunk::embedding`]), so a vector made by another model is never compared with this one's.
/// - An embedder that cannot embed returns an [`EmbedError`]; it never panics.
/// - Embedders are shared across threads, so they must be `Send + Sync`; expensive state (the
///   model) is loaded once, not per call. Callers batch: one call per many texts.
///
/// [`check_embeddings`] checks a result against the first point.
///
/// ```
/// use rag_core::{EmbedError, Embedder};
///
/// /// Two dimensions: how often "a" and "b" occur.
/// struct Letters;
///
/// impl Embedder for Letters {
///     fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
///         Ok(texts.iter().map(|t| vec![t.matches('a').count() as f32, t.matches('b').count() as f32]).collect())
///     }
///     fn dimension(&self) -> usize {
///         2
///     }
///     fn id(&self) -> &str {
///         "letters"
///     }
/// }
///
/// assert_eq!(Letters.embed(&["aab", "b"])?, [vec![2.0, 1.0], vec![0.0, 1.0]]);
/// # Ok::<(), EmbedError>(())
/// ```
pub trait Embedder: Send + Sync {
    /// One vector per text, in order.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;

    /// The length of every vector.
    fn dimension(&self) -> usize;

    /// The model's id, e.g. `model2vec:wordllama-l2-256`.
    fn id(&self) -> &str;
}

/// A reference or smart pointer to an embedder embeds as the embedder does.
macro_rules! forward_embedder {
    ($($pointer:ty),+) => {$(
        impl<T: Embedder + ?Sized> Embedder for $pointer {
            fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
                (**self).embed(texts)
            }

            fn dimension(&self) -> usize {
                (**self).dimension()
            }

            fn id(&self) -> &str {
                (**self).id()
            }
        }
    )+};
}

forward_embedder!(&T, std::sync::Arc<T>, Box<T>);

/// Checks what an embedder returned for `texts` against its contract: one vector per text, each of
/// its dimension, every value finite. Callers of an embedder they did not write (a Python object,
/// a service) run it before using the vectors.
///
/// ```
/// use rag_core::{Embedder, check_embeddings};
/// # use rag_core::EmbedError;
/// # struct Two;
/// # impl Embedder for Two {
/// #     fn embed(&self, t: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> { Ok(vec![vec![1.0, 0.0]; t.len()]) }
/// #     fn dimension(&self) -> usize { 2 }
/// #     fn id(&self) -> &str { "two" }
/// # }
///
/// assert!(check_embeddings(&Two, 2, &[vec![1.0, 0.0], vec![0.0, 1.0]]).is_ok());
/// let err = check_embeddings(&Two, 2, &[vec![1.0, 0.0]]).unwrap_err();
/// assert_eq!(err.to_string(), "embedder two failed: it returned 1 vectors for 2 texts");
/// let err = check_embeddings(&Two, 1, &[vec![f32::NAN, 0.0]]).unwrap_err();
/// assert_eq!(err.to_string(), "embedder two failed: text 0: its vector holds a non-finite value");
/// ```
pub fn check_embeddings(embedder: &dyn Embedder, texts: usize, vectors: &[Vec<f32>]) -> Result<(), EmbedError> {
    let fail = |message: String| Err(EmbedError::new(embedder.id(), message));
    if vectors.len() != texts {
        return fail(format!("it returned {} vectors for {texts} texts", vectors.len()));
    }
    let dimension = embedder.dimension();
    for (i, vector) in vectors.iter().enumerate() {
        if vector.len() != dimension {
            return fail(format!(
                "text {i}: its vector has {} values, the embedder's dimension is {dimension}",
                vector.len()
            ));
        }
        if !vector.iter().all(|v| v.is_finite()) {
            return fail(format!("text {i}: its vector holds a non-finite value"));
        }
    }
    Ok(())
}

/// Embeds the chunks that carry no vector, in one call to `embedder`, from their
/// [`embedding_text`](Chunk::embedding_text), checks the result ([`check_embeddings`]) and sets
/// each chunk's [`embedding`](Chunk::embedding); a chunk that already has one is left as it is.
/// Returns how many were embedded. What `ragctl chunk --embedder` does to each chunk.
///
/// ```
/// use rag_core::{Chunk, EmbedError, Embedder, embed_chunks};
/// # struct Len;
/// # impl Embedder for Len {
/// #     fn embed(&self, t: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> { Ok(t.iter().map(|t| vec![t.len() as f32]).collect()) }
/// #     fn dimension(&self) -> usize { 1 }
/// #     fn id(&self) -> &str { "len" }
/// # }
///
/// let mut chunks = vec![Chunk::with_content("a", "d", "t", "four")];
/// assert_eq!(embed_chunks(&Len, &mut chunks)?, 1);
/// let embedding = chunks[0].embedding.as_ref().unwrap();
/// assert_eq!((embedding.model.as_str(), embedding.vector.as_slice()), ("len", &[4.0][..]));
/// assert_eq!(embed_chunks(&Len, &mut chunks)?, 0, "a vector is kept");
/// # Ok::<(), EmbedError>(())
/// ```
pub fn embed_chunks(embedder: &dyn Embedder, chunks: &mut [Chunk]) -> Result<usize, EmbedError> {
    let missing: Vec<usize> = (0..chunks.len()).filter(|&i| chunks[i].embedding.is_none()).collect();
    if missing.is_empty() {
        return Ok(0);
    }
    let texts: Vec<String> = missing.iter().map(|&i| chunks[i].embedding_text()).collect();
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    let vectors = embedder.embed(&texts)?;
    check_embeddings(embedder, texts.len(), &vectors)?;
    for (&i, vector) in missing.iter().zip(vectors) {
        chunks[i].embedding = Some(crate::Embedding::new(embedder.id(), vector));
    }
    Ok(missing.len())
}

/// The raw input of a parser: the bytes and the identity the resulting document will carry.
#[derive(Debug, Clone, Copy)]
pub struct SourceBytes<'a> {
    /// Id for the parsed document.
    pub document_id: &'a DocumentId,
    /// Corpus of the parsed document.
    pub corpus_id: &'a CorpusId,
    /// Where the bytes were read from; error messages name it.
    pub source_uri: &'a str,
    /// The document's bytes as read.
    pub bytes: &'a [u8],
}

/// Turns the bytes of one document into its blocks.
///
/// Contract:
/// - Blocks come in source order, their spans are valid byte ranges of `ParsedDocument::document.text`
///   that start and end on character boundaries, and they do not overlap.
/// - Nothing is lost: every non-whitespace byte of the text lies inside some block's span.
/// - Headings, and only headings, carry a level.
/// - Bad input is a [`ParseError`] naming the source and, where it can, the offset or line; never a
///   panic.
pub trait Parser: Send + Sync {
    /// Short name of the format, e.g. `markdown`.
    fn name(&self) -> &str;

    /// Parses one document.
    fn parse(&self, ctx: &RequestContext, source: SourceBytes<'_>) -> Result<ParsedDocument, ParseError>;
}

/// Whether a component can serve requests.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", content = "reason", rename_all = "snake_case")]
pub enum Health {
    /// Fully working.
    Healthy,
    /// Working with reduced quality or speed; the reason says how.
    Degraded(String),
    /// Not working; the reason says why.
    Unhealthy(String),
}

/// Cuts a parsed document into chunks.
///
/// Contract (the contract suite checks each point):
/// - Every chunk has `document_id == parsed.document.id` and `tenant_id == ctx.tenant_id`, and carries
///   the principal's ACL labels.
/// - `position` is 0 for the first chunk and increases by one.
/// - A `parent_id` names a chunk earlier in the list; a heading's parent is a heading of a smaller level.
/// - Each chunk has `content` or `content_ref`.
/// - A chunker with a token budget keeps every chunk within it, and a `token_count` it sets is the
///   exact count of `content` under its tokenizer.
/// - A chunk with a `span` whose parser kept the source text has `content == text[span]`.
/// - Nothing is lost: every non-whitespace byte of the source text lies in some chunk's span.
/// - Overlap (text repeated from the previous chunk) never crosses a heading.
/// - Output is deterministic: same input and configuration, same chunks and ids.
/// - Failures are [`ChunkError`]s; nothing panics on any input.
#[async_trait]
pub trait Chunker: Send + Sync {
    /// Chunks one parsed document.
    async fn chunk(&self, ctx: &RequestContext, parsed: &ParsedDocument) -> Result<Vec<Chunk>, ChunkError>;

    /// Whether the chunker can work (e.g. its tokenizer loaded).
    async fn health(&self) -> Health;
}

/// Packs retrieved chunks into a token budget: the step between retrieval and the prompt.
///
/// Contract (the contract suite, `rag_contract::packer`, checks each point):
/// - A chunk of another tenant than `ctx`'s is refused with [`PackerError::ForeignTenant`], whatever
///   else the input holds (defence in depth).
/// - The packed chunks' tokens never exceed `budget`; pinned chunks come first, in input order, and
///   are always packed (or the call fails because they alone exceed the budget).
/// - Every input chunk is accounted for exactly once: packed, or in `dropped` with its reason.
/// - Output is deterministic: the same input and configuration give the same result.
/// - Invalid input (a zero or negative budget, a non-finite score, a repeated id, a `content_ref`
///   without `token_count`) is a [`PackerError`]; nothing panics on any input.
///
/// The trait is async because implementations may do I/O (a remote tokenizer or reranker). A
/// closure `Fn(&RequestContext, Vec<Chunk>, i64) -> Result<PackedContext, PackerError>` is a
/// packer, so wrapping one for the contract suite takes one line.
///
/// ```
/// use rag_core::{Chunk, PackOrder, PackedContext, Packer, PackerError, RequestContext, SelectionStrategy};
///
/// // Packs nothing: keeps every promise about the budget, and accounts for nothing else.
/// let empty = |_: &RequestContext, _: Vec<Chunk>, budget: i64| -> Result<PackedContext, PackerError> {
///     Ok(PackedContext::new(Vec::new(), 0, budget as usize, "none", PackOrder::Descending, SelectionStrategy::Greedy))
/// };
/// let packed = pollster::block_on(Packer::pack(&empty, &RequestContext::local("acme"), Vec::new(), 10))?;
/// assert!(packed.chunks.is_empty());
/// # Ok::<(), PackerError>(())
/// ```
#[async_trait]
pub trait Packer: Send + Sync {
    /// Packs `chunks` into `budget` tokens for `ctx`'s tenant.
    async fn pack(&self, ctx: &RequestContext, chunks: Vec<Chunk>, budget: i64) -> Result<PackedContext, PackerError>;

    /// Whether the packer can work (e.g. its tokenizer loaded); healthy unless it says otherwise.
    async fn health(&self) -> Health {
        Health::Healthy
    }
}

#[async_trait]
impl<F> Packer for F
where
    F: Fn(&RequestContext, Vec<Chunk>, i64) -> Result<PackedContext, PackerError> + Send + Sync,
{
    async fn pack(&self, ctx: &RequestContext, chunks: Vec<Chunk>, budget: i64) -> Result<PackedContext, PackerError> {
        self(ctx, chunks, budget)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Down;

    impl TokenCounter for Down {
        fn count(&self, _: &str) -> Result<usize, TokenizerError> {
            Err(TokenizerError::new("remote", "service unavailable"))
        }

        fn name(&self) -> &str {
            "remote"
        }
    }

    #[test]
    fn counters_work_through_references_and_smart_pointers() {
        let arc: std::sync::Arc<dyn TokenCounter> = std::sync::Arc::new(Lines);
        let boxed: Box<dyn TokenCounter> = Box::new(Lines);
        assert_eq!(arc.count("a\nb\nc"), Ok(3));
        fn count_via<C: TokenCounter>(counter: C, text: &str) -> Result<usize, TokenizerError> {
            counter.count(text)
        }
        assert_eq!(count_via(&Lines, "a\nb"), Ok(2));
        assert_eq!(boxed.name(), "lines");
    }

    #[test]
    fn a_counter_error_passes_through_pointers_unchanged() {
        let arc: std::sync::Arc<dyn TokenCounter> = std::sync::Arc::new(Down);
        let err = TokenizerError::new("remote", "service unavailable");
        assert_eq!(arc.count("x"), Err(err.clone()));
        assert_eq!(Box::new(Down).count("x"), Err(err));
    }

    struct Lines;

    impl TokenCounter for Lines {
        fn count(&self, text: &str) -> Result<usize, TokenizerError> {
            Ok(text.lines().count())
        }

        fn name(&self) -> &str {
            "lines"
        }

        fn splits_at_line_starts(&self) -> bool {
            true
        }
    }

    #[test]
    fn line_start_additivity_is_off_by_default_and_forwarded_by_pointers() -> Result<(), TokenizerError> {
        assert!(!Down.splits_at_line_starts());
        let arc: std::sync::Arc<dyn TokenCounter> = std::sync::Arc::new(Lines);
        let boxed: Box<dyn TokenCounter> = Box::new(Lines);
        assert!(arc.splits_at_line_starts());
        assert!(boxed.splits_at_line_starts());
        assert!(TokenCounter::splits_at_line_starts(&&Lines));
        assert!(!std::sync::Arc::new(Down).splits_at_line_starts());
        // What the promise means, on a counter that keeps it.
        let (a, b) = ("one\ntwo\n", "three\nfour");
        assert_eq!(Lines.count(&format!("{a}{b}")), Ok(Lines.count(a)? + Lines.count(b)?));
        Ok(())
    }

    /// Counts whitespace-separated words: its counts add up at every space boundary.
    struct Words;

    impl TokenCounter for Words {
        fn count(&self, text: &str) -> Result<usize, TokenizerError> {
            Ok(text.split_whitespace().count())
        }

        fn name(&self) -> &str {
            "words"
        }

        fn splits_at_spaces(&self) -> bool {
            true
        }
    }

    #[test]
    fn space_additivity_is_off_by_default_and_forwarded_by_pointers() -> Result<(), TokenizerError> {
        assert!(!Down.splits_at_spaces());
        assert!(!Lines.splits_at_spaces(), "one promise does not imply the other");
        let arc: std::sync::Arc<dyn TokenCounter> = std::sync::Arc::new(Words);
        let boxed: Box<dyn TokenCounter> = Box::new(Words);
        assert!(arc.splits_at_spaces() && boxed.splits_at_spaces());
        assert!(TokenCounter::splits_at_spaces(&&Words));
        assert!(!arc.splits_at_line_starts());
        // What the promise means, on a counter that keeps it.
        let text = "one two\tthree";
        for at in (0..=text.len()).filter(|&at| counts_add_up_at_space(text, at)) {
            let (a, b) = text.split_at(at);
            assert_eq!(Words.count(text), Ok(Words.count(a)? + Words.count(b)?));
        }
        assert_eq!(
            (0..=text.len())
                .filter(|&at| counts_add_up_at_space(text, at))
                .collect::<Vec<_>>(),
            [3, 7]
        );
        Ok(())
    }

    #[test]
    fn health_round_trips() {
        for health in [
            Health::Healthy,
            Health::Degraded("slow".into()),
            Health::Unhealthy("no bpe".into()),
        ] {
            let json = serde_json::to_string(&health).unwrap();
            assert_eq!(serde_json::from_str::<Health>(&json).unwrap(), health);
        }
        assert_eq!(
            serde_json::to_string(&Health::Degraded("slow".into())).unwrap(),
            r#"{"status":"degraded","reason":"slow"}"#
        );
    }

    #[test]
    fn request_context_round_trips() {
        let ctx = RequestContext::local("acme").with_request_id("r1");
        let json = serde_json::to_string(&ctx).unwrap();
        assert_eq!(
            json,
            r#"{"tenant_id":"acme","principal":{"id":"local"},"request_id":"r1"}"#
        );
        assert_eq!(serde_json::from_str::<RequestContext>(&json).unwrap(), ctx);
    }
}
