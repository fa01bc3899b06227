//! The heading-aware chunker: one chunk per heading, body blocks packed under their heading
//! within a token budget, overlap that stays inside its section.
//!
//! [`HeadingAwareChunker::chunk_document_each`] checks the blocks and walks them in order; the
//! stages it drives are modules:
//! - `sections`: the heading stack, body units gathered into the pending chunk, flushes;
//! - `units`: a block cut into the units packing never cuts (the block, its sentences or lines,
//!   hard-split pieces that fit the budget);
//! - `counting`: what the tokenizer is handed, the counted stretch of text (`Stretch`) that units
//!   and overlaps both are, and a chunk's exact count summed from its stretches;
//! - `overlap`: the tail of a flushed chunk that starts the next one of its section.
//!
//! The modules depend on each other in one direction only: `counting` on none of them, `units`
//! and `overlap` on `counting`, `sections` on all three.
//!
//! Cost model: every piece of text is counted a bounded number of times, never as a growing
//! buffer. Each block is counted once as a unit (an oversize block once more as sentences or lines,
//! and hard-split text a few times in windows of bounded size); units are packed by the sum of
//! their counts. When the counter promises that counts add up across line starts
//! ([`TokenCounter::splits_at_line_starts`]), a unit followed by a line start is counted together
//! with the whitespace up to it, and a chunk's exact count is the sum of such counts: only its last
//! unit, and stretches of units joined by spaces, are counted again. Otherwise each chunk's exact
//! count is taken once when it is flushed (a chunk of a single unit reuses the unit's count).
//! Overlap costs one count of a short tail per chunk.

mod counting;
mod overlap;
mod sections;
#[cfg(feature = "code")]
mod syntax;
mod units;

use std::ops::Range;
use std::sync::Arc;

use rag_core::{
    BlockType, Chunk, ChunkError, Chunker, Health, ParsedDocument, RequestContext, TokenCounter, async_trait,
};
use rag_tokens::TiktokenCounter;

use self::counting::Counting;
use self::sections::Run;
use self::units::Split;
use crate::sentence::trim_range;

/// Cuts parsed documents into chunks along their headings, within a token budget.
///
/// - Each heading becomes one chunk (`metadata.kind = "heading"`, `metadata.level`), whose parent
///   is the closest enclosing heading of a strictly smaller level.
/// - Body blocks accumulate under the current heading until the next one would push the chunk past
///   `max_tokens`; the chunk (`kind = "body"`) then flushes, its parent the current heading.
/// - `metadata.heading_path` lists the titles of the enclosing headings, outermost first: for a
///   body chunk every open heading including its own section's, for a heading chunk only its
///   ancestors (not itself).
/// - A chunk's content is exactly the source text of its span, and its `token_count` the exact
///   count of that content; no chunk exceeds `max_tokens`.
/// - The next body chunk of a section starts with the longest tail of the previous one, within
///   `overlap_tokens`, that begins at a block or sentence start (a wrapped line, or inside a
///   hard-split sentence a word, only when none fits; never inside a code block the next chunk
///   does not continue, and no overlap when no start fits). When that tail keeps less than half
///   of `overlap_tokens`, the overlap reaches back to the start of the sentence the window cuts,
///   up to twice `overlap_tokens`. Overlap counts inside `max_tokens` and never reaches back over
///   a heading.
/// - Oversize blocks split on sentences (code on lines), then by token count at a character
///   boundary (a word boundary where there is one). An oversize heading's first piece is the
///   heading chunk; the rest become body text of its section.
///
/// ```
/// use std::sync::Arc;
/// use rag_chunker::{HeadingAwareChunker, TiktokenCounter};
/// use rag_core::{Block, BlockType, Document, HeadingLevel, ParsedDocument, RequestContext, Span};
///
/// let text = "# Setup\n\nInstall it.".to_owned();
/// let document = Document { id: "doc".into(), corpus_id: "c".into(), source_uri: "a.md".into(), text };
/// let parsed = ParsedDocument::new(document, vec![
///     Block::heading(HeadingLevel::H1, "Setup", Span::new(0, 7)),
///     Block::new(BlockType::Paragraph, Span::new(9, 20)),
/// ]);
/// let chunker = HeadingAwareChunker::new(64, 8, Arc::new(TiktokenCounter::cl100k()))?;
/// let chunks = chunker.chunk_document(&RequestContext::local("acme"), &parsed)?;
/// assert_eq!(chunks[1].id.as_str(), "doc#1");
/// assert_eq!(chunks[1].parent_id.as_ref().map(|id| id.as_str()), Some("doc#0"));
/// assert_eq!(chunks[1].metadata["heading_path"], serde_json::json!(["Setup"]));
/// # Ok::<(), rag_core::ChunkError>(())
/// ```
#[derive(Clone)]
pub struct HeadingAwareChunker {
    max_tokens: usize,
    overlap_tokens: usize,
    counter: Arc<dyn TokenCounter>,
    fold_headings: bool,
}

impl std::fmt::Debug for HeadingAwareChunker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HeadingAwareChunker")
            .field("max_tokens", &self.max_tokens)
            .field("overlap_tokens", &self.overlap_tokens)
            .field("counter", &self.counter.name())
            .field("fold_headings", &self.fold_headings)
            .finish()
    }
}

impl Default for HeadingAwareChunker {
    /// [`DEFAULT_MAX_TOKENS`](Self::DEFAULT_MAX_TOKENS) (512) tokens per chunk,
    /// [`DEFAULT_OVERLAP_TOKENS`](Self::DEFAULT_OVERLAP_TOKENS) (64) of overlap, counted with
    /// `cl100k_base`, whose table is built on the first count, not here.
    ///
    /// ```
    /// use rag_chunker::HeadingAwareChunker;
    ///
    /// let chunker = HeadingAwareChunker::default();
    /// assert_eq!((chunker.max_tokens(), chunker.overlap_tokens()), (512, 64));
    /// assert_eq!(chunker.counter().name(), "tiktoken:cl100k_base");
    /// ```
    fn default() -> Self {
        Self {
            max_tokens: Self::DEFAULT_MAX_TOKENS,
            overlap_tokens: Self::DEFAULT_OVERLAP_TOKENS,
            counter: Arc::new(TiktokenCounter::cl100k()),
            fold_headings: false,
        }
    }
}

impl HeadingAwareChunker {
    /// The budget of [`HeadingAwareChunker::default`].
    pub const DEFAULT_MAX_TOKENS: usize = 512;

    /// The overlap of [`HeadingAwareChunker::default`]: [`default_overlap_tokens`] of
    /// [`DEFAULT_MAX_TOKENS`](Self::DEFAULT_MAX_TOKENS).
    ///
    /// [`default_overlap_tokens`]: Self::default_overlap_tokens
    pub const DEFAULT_OVERLAP_TOKENS: usize = Self::default_overlap_tokens(Self::DEFAULT_MAX_TOKENS);

    /// The overlap that goes with a budget of `max_tokens` when none is chosen: 64 tokens, or an
    /// eighth of the budget when that is smaller, so that a small budget keeps most of each chunk
    /// for new text (and any budget of at least 1 is valid with it).
    ///
    /// The one default of the project: `ragctl chunk` without `--overlap-tokens` and
    /// [`with_max_tokens`](Self::with_max_tokens) use it.
    ///
    /// ```
    /// use rag_chunker::HeadingAwareChunker;
    ///
    /// assert_eq!(HeadingAwareChunker::default_overlap_tokens(512), 64);
    /// assert_eq!(HeadingAwareChunker::default_overlap_tokens(2048), 64);
    /// assert_eq!(HeadingAwareChunker::default_overlap_tokens(100), 12);
    /// assert_eq!(HeadingAwareChunker::default_overlap_tokens(7), 0);
    /// ```
    pub const fn default_overlap_tokens(max_tokens: usize) -> usize {
        let eighth = max_tokens / 8;
        if eighth < 64 { eighth } else { 64 }
    }

    /// The most characters of a title in `metadata.heading_path`: a longer title keeps its first
    /// characters and ends with `…`, that many characters in all. Every chunk of a section repeats
    /// its headings' titles, so this bound keeps output linear in the input (see
    /// the chunker's reference, "Output size"); the heading's own chunk keeps its full text.
    pub const MAX_PATH_TITLE_CHARS: usize = 200;

    /// A chunker with a budget of `max_tokens` per chunk, of which about `overlap_tokens` may repeat
    /// the end of the previous chunk of the same section, counted by `counter`.
    ///
    /// `max_tokens` must be at least 1 and `overlap_tokens` below it. The same as
    /// `HeadingAwareChunker::default().with_budget(max_tokens, overlap_tokens)?.with_counter(counter)`.
    pub fn new(max_tokens: usize, overlap_tokens: usize, counter: Arc<dyn TokenCounter>) -> Result<Self, ChunkError> {
        Ok(Self::default()
            .with_budget(max_tokens, overlap_tokens)?
            .with_counter(counter))
    }

    /// This chunker with a budget of `max_tokens` per chunk and about `overlap_tokens` of overlap;
    /// `max_tokens` must be at least 1 and `overlap_tokens` below it.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use rag_chunker::{HeadingAwareChunker, TiktokenCounter};
    ///
    /// let chunker = HeadingAwareChunker::default()
    ///     .with_budget(256, 32)?
    ///     .with_counter(Arc::new(TiktokenCounter::new("o200k_base")?));
    /// assert_eq!((chunker.max_tokens(), chunker.counter().name()), (256, "tiktoken:o200k_base"));
    /// let err = HeadingAwareChunker::default().with_budget(64, 64).unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "invalid chunker configuration: overlap_tokens (64) must be below max_tokens (64)"
    /// );
    /// # Ok::<(), rag_core::ChunkError>(())
    /// ```
    pub fn with_budget(self, max_tokens: usize, overlap_tokens: usize) -> Result<Self, ChunkError> {
        if max_tokens == 0 {
            return Err(ChunkError::InvalidConfig {
                message: "max_tokens must be at least 1".into(),
            });
        }
        if overlap_tokens >= max_tokens {
            return Err(ChunkError::InvalidConfig {
                message: format!("overlap_tokens ({overlap_tokens}) must be below max_tokens ({max_tokens})"),
            });
        }
        Ok(Self {
            max_tokens,
            overlap_tokens,
            ..self
        })
    }

    /// This chunker with a budget of `max_tokens` per chunk (at least 1) and the overlap that goes
    /// with it, [`default_overlap_tokens(max_tokens)`](Self::default_overlap_tokens).
    ///
    /// ```
    /// use rag_chunker::HeadingAwareChunker;
    ///
    /// let chunker = HeadingAwareChunker::default().with_max_tokens(100)?;
    /// assert_eq!((chunker.max_tokens(), chunker.overlap_tokens()), (100, 12));
    /// # Ok::<(), rag_core::ChunkError>(())
    /// ```
    pub fn with_max_tokens(self, max_tokens: usize) -> Result<Self, ChunkError> {
        self.with_budget(max_tokens, Self::default_overlap_tokens(max_tokens))
    }

    /// This chunker counting with `counter` instead.
    pub fn with_counter(self, counter: Arc<dyn TokenCounter>) -> Self {
        Self { counter, ..self }
    }

    /// This chunker folding each heading into the first body chunk of its section (`true`), or
    /// giving each heading a chunk of its own (`false`, the default).
    ///
    /// Folded, a chunk's span starts at the heading line, so `content` stays an exact slice of the
    /// text and a vector store gets the heading with the text under it instead of a chunk that
    /// is a heading alone. A heading with no body before a deeper heading (`# run` directly
    /// followed by `## Options`) folds into the same chunk as that heading: every heading a chunk
    /// holds is on its `heading_path`. A heading stays a chunk of its own (`kind: "heading"`) only
    /// where it cannot fold: its section is empty (the next heading is not deeper, or the document
    /// ends), or it and the first unit of its body do not fit within `max_tokens` together. No
    /// chunk has a `parent_id` in this mode, since no heading chunk exists to point at in
    /// general; `heading_path` carries the structure.
    ///
    /// ```
    /// use rag_chunker::{DocumentType, HeadingAwareChunker, parse_document};
    /// use rag_core::{RequestContext, SourceBytes};
    ///
    /// let ctx = RequestContext::local("acme");
    /// let text = b"# run\n\n## Options\n\nRun a command.\n";
    /// let source = SourceBytes { document_id: &"d".into(), corpus_id: &"c".into(), source_uri: "d.md", bytes: text };
    /// let parsed = parse_document(&ctx, DocumentType::Markdown, source)?;
    /// let chunks = HeadingAwareChunker::default().with_fold_headings(true).chunk_document(&ctx, &parsed)?;
    /// assert_eq!(chunks.len(), 1);
    /// assert_eq!(chunks[0].content(), Some("# run\n\n## Options\n\nRun a command."));
    /// assert_eq!(chunks[0].metadata["heading_path"], serde_json::json!(["run", "Options"]));
    /// assert_eq!(chunks[0].parent_id, None);
    /// # Ok::<(), rag_core::Error>(())
    /// ```
    pub fn with_fold_headings(self, fold_headings: bool) -> Self {
        Self { fold_headings, ..self }
    }

    /// Whether headings fold into the first body chunk of their section (see
    /// [`with_fold_headings`](Self::with_fold_headings)).
    pub fn fold_headings(&self) -> bool {
        self.fold_headings
    }

    /// The most tokens a chunk may have.
    pub fn max_tokens(&self) -> usize {
        self.max_tokens
    }

    /// About how many tokens a body chunk repeats from the previous chunk of its section.
    pub fn overlap_tokens(&self) -> usize {
        self.overlap_tokens
    }

    /// The tokenizer budgets and `token_count`s are in.
    pub fn counter(&self) -> &Arc<dyn TokenCounter> {
        &self.counter
    }

    /// Chunks one parsed document; an empty document gives no chunks.
    ///
    /// Blocks must lie inside the text on character boundaries and must not overlap or go
    /// backwards: otherwise the error names the block.
    pub fn chunk_document(&self, ctx: &RequestContext, parsed: &ParsedDocument) -> Result<Vec<Chunk>, ChunkError> {
        let mut chunks = Vec::new();
        self.chunk_document_each(ctx, parsed, &mut |chunk| chunks.push(chunk))?;
        Ok(chunks)
    }

    /// Like [`chunk_document`](Self::chunk_document), but hands each chunk to `sink` as soon as it
    /// is complete, in order, instead of collecting them: a caller that writes chunks out (or
    /// embeds them) never holds a large document's chunks all at once.
    ///
    /// On error, the chunks already handed over stay valid; the document's remaining chunks are
    /// not produced.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use rag_chunker::{DocumentType, HeadingAwareChunker, TiktokenCounter, parse_document};
    /// use rag_core::{RequestContext, SourceBytes};
    ///
    /// let ctx = RequestContext::local("acme");
    /// let text = b"# Setup\n\nInstall it.\n";
    /// let source = SourceBytes { document_id: &"d".into(), corpus_id: &"c".into(), source_uri: "d.md", bytes: text };
    /// let parsed = parse_document(&ctx, DocumentType::Markdown, source)?;
    /// let chunker = HeadingAwareChunker::new(64, 8, Arc::new(TiktokenCounter::cl100k()))?;
    /// let mut positions = Vec::new();
    /// chunker.chunk_document_each(&ctx, &parsed, &mut |chunk| positions.push(chunk.position))?;
    /// assert_eq!(positions, [0, 1]);
    /// # Ok::<(), rag_core::Error>(())
    /// ```
    pub fn chunk_document_each(
        &self,
        ctx: &RequestContext,
        parsed: &ParsedDocument,
        sink: &mut dyn FnMut(Chunk),
    ) -> Result<(), ChunkError> {
        let _span = tracing::debug_span!(
            "chunk_document",
            document_id = %parsed.document.id,
            blocks = parsed.blocks.len() as i64
        )
        .entered();
        validate_blocks(parsed)?;
        #[cfg(feature = "code")]
        if let Some(language) = crate::parse::code::language_of(parsed)
            && let Some(grammar) = crate::parse::code::grammar::grammar(language)
        {
            let emitted = syntax::chunk_code(self, ctx, parsed, language, &grammar, sink)?;
            tracing::debug!(
                chunks = emitted as i64,
                language = language.as_str(),
                "chunked along the syntax"
            );
            return Ok(());
        }
        let document = &parsed.document;
        let counting = Counting::new(&document.text, &document.id, self.counter.as_ref(), self.max_tokens);
        let mut run = Run::new(counting, self, ctx, parsed, sink);
        let blocks: Vec<(usize, Range<usize>)> = parsed
            .blocks
            .iter()
            .enumerate()
            .map(|(index, block)| (index, trim_range(&document.text, block.span.range())))
            .filter(|(_, range)| !range.is_empty())
            .collect();
        for (at, (index, range)) in blocks.iter().cloned().enumerate() {
            let block = &parsed.blocks[index];
            // Where the next unit of the same section starts, if a body block follows: the last
            // unit of this block may then be counted together with the whitespace up to it.
            let next = blocks
                .get(at + 1)
                .filter(|(next, _)| parsed.blocks[*next].block_type != BlockType::Heading)
                .map(|(_, next)| next.start);
            if block.block_type == BlockType::Heading {
                let level = block.level.ok_or_else(|| ChunkError::MalformedBlock {
                    document_id: document.id.clone(),
                    block_index: index,
                    message: "heading block has no level".into(),
                })?;
                let title = parsed.block_text(block).unwrap_or_default();
                run.heading(level.get(), title.trim(), range)?;
            } else {
                let split = if block.block_type == BlockType::Code {
                    Split::Lines
                } else {
                    Split::Sentences
                };
                run.body(range, split, next)?;
            }
        }
        run.finish()?;
        tracing::debug!(chunks = run.emitted() as i64, "chunked");
        Ok(())
    }
}

#[async_trait]
impl Chunker for HeadingAwareChunker {
    async fn chunk(&self, ctx: &RequestContext, parsed: &ParsedDocument) -> Result<Vec<Chunk>, ChunkError> {
        self.chunk_document(ctx, parsed)
    }

    /// Healthy when the counter counts a short probe text (which builds a built-in counter's
    /// table, if no count has yet); unhealthy, with the counter's error, when it fails.
    async fn health(&self) -> Health {
        match self.counter.count("health check") {
            Ok(_) => Health::Healthy,
            Err(err) => Health::Unhealthy(err.to_string()),
        }
    }
}

/// Checks that every block span is a slice of the text and that spans never go backwards.
fn validate_blocks(parsed: &ParsedDocument) -> Result<(), ChunkError> {
    let text = &parsed.document.text;
    let mut previous_end = 0usize;
    for (index, block) in parsed.blocks.iter().enumerate() {
        let span = block.span;
        let problem = if span.start > span.end {
            Some(format!("span {}..{} is reversed", span.start, span.end))
        } else if span.end > text.len() {
            Some(format!(
                "span {}..{} is outside the {}-byte text",
                span.start,
                span.end,
                text.len()
            ))
        } else if !text.is_char_boundary(span.start) || !text.is_char_boundary(span.end) {
            Some(format!("span {}..{} splits a character", span.start, span.end))
        } else if span.start < previous_end {
            Some(format!(
                "span {}..{} overlaps the previous block, which ends at {previous_end}",
                span.start, span.end
            ))
        } else {
            None
        };
        if let Some(message) = problem {
            return Err(ChunkError::MalformedBlock {
                document_id: parsed.document.id.clone(),
                block_index: index,
                message,
            });
        }
        previous_end = previous_end.max(span.end);
    }
    Ok(())
}
