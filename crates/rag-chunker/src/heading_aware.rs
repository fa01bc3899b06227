//! The heading-aware chunker: one chunk per heading, body blocks packed under their heading
//! within a token budget, overlap that stays inside its section.
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

use std::ops::Range;
use std::sync::Arc;

use rag_core::{
    BlockType, Chunk, ChunkError, ChunkId, Chunker, Health, ParsedDocument, RequestContext, TokenCounter, async_trait,
};
use serde_json::{Map, Value, json};

use crate::sentence::{
    ceil_boundary, floor_boundary, last_word_start, line_ranges, overlap_boundary, sentence_ranges, trim_range,
};

/// Never hand the tokenizer more than this many bytes at once (or 16 bytes per token of budget,
/// if that is more): BPE merging is superlinear in the length of one pre-token piece, and a
/// megabyte line without spaces is one piece.
const MIN_COUNT_WINDOW: usize = 16 * 1024;

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
/// - The next body chunk of a section starts about `overlap_tokens` before the previous one ended,
///   at a sentence or word boundary; overlap counts inside `max_tokens` and never reaches back
///   over a heading.
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
/// let parsed = ParsedDocument {
///     document: Document { id: "doc".into(), corpus_id: "c".into(), source_uri: "a.md".into(), text },
///     blocks: vec![
///         Block::heading(HeadingLevel::H1, "Setup", Span::new(0, 7)),
///         Block::new(BlockType::Paragraph, Span::new(9, 20)),
///     ],
/// };
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
}

impl std::fmt::Debug for HeadingAwareChunker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HeadingAwareChunker")
            .field("max_tokens", &self.max_tokens)
            .field("overlap_tokens", &self.overlap_tokens)
            .field("counter", &self.counter.name())
            .finish()
    }
}

impl HeadingAwareChunker {
    /// A chunker with a budget of `max_tokens` per chunk, of which about `overlap_tokens` may repeat
    /// the end of the previous chunk of the same section, counted by `counter`.
    ///
    /// `max_tokens` must be at least 1 and `overlap_tokens` below it.
    pub fn new(max_tokens: usize, overlap_tokens: usize, counter: Arc<dyn TokenCounter>) -> Result<Self, ChunkError> {
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
            counter,
        })
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
        let mut run = Run::new(self, ctx, parsed, sink);
        let blocks: Vec<(usize, Range<usize>)> = parsed
            .blocks
            .iter()
            .enumerate()
            .map(|(index, block)| (index, trim_range(&parsed.document.text, block.span.range())))
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
                    document_id: parsed.document.id.clone(),
                    block_index: index,
                    message: "heading block has no level".into(),
                })?;
                let title = parsed.block_text(block).unwrap_or_default();
                run.heading(level.get(), title.trim(), range)?;
            } else {
                let kind = if block.block_type == BlockType::Code {
                    Split::Lines
                } else {
                    Split::Sentences
                };
                for unit in run.units(range, kind, next)? {
                    run.add(unit)?;
                }
            }
        }
        run.end_section()?;
        tracing::debug!(chunks = run.emitted as i64, "chunked");
        Ok(())
    }
}

#[async_trait]
impl Chunker for HeadingAwareChunker {
    async fn chunk(&self, ctx: &RequestContext, parsed: &ParsedDocument) -> Result<Vec<Chunk>, ChunkError> {
        self.chunk_document(ctx, parsed)
    }

    /// Always healthy: the tokenizer is in memory and counting cannot fail.
    async fn health(&self) -> Health {
        Health::Healthy
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

/// A stretch of text that is never cut by packing, with an exact token count.
///
/// `tokens` is the exact count of `start..until`: of the unit alone when `until == end`, or of the
/// unit and the whitespace after it, up to the next unit's start, when that start is a line start
/// the counter splits at (see [`TokenCounter::splits_at_line_starts`]). Such a count adds up
/// exactly with the counts after it, so a chunk made of such units needs no recount; only its last
/// unit must then be counted alone.
#[derive(Debug, Clone, Copy)]
struct Unit {
    start: usize,
    end: usize,
    until: usize,
    tokens: usize,
}

impl Unit {
    /// A unit counted alone.
    fn alone(start: usize, end: usize, tokens: usize) -> Self {
        Self {
            start,
            end,
            until: end,
            tokens,
        }
    }
}

/// The natural boundaries of an oversize block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Split {
    /// Prose, lists, tables, quotes, headings: UAX #29 sentences.
    Sentences,
    /// Code: lines.
    Lines,
}

/// The start of a body chunk taken from the end of the previous one, with the exact token count
/// of `start..until` (the tail, and the whitespace after it when the next unit starts a line).
#[derive(Debug, Clone, Copy)]
struct Overlap {
    start: usize,
    until: usize,
    tokens: usize,
}

/// An open heading: its level, its chunk, its title.
struct Frame {
    level: u8,
    id: ChunkId,
    title: String,
}

/// The state of chunking one document.
struct Run<'a> {
    chunker: &'a HeadingAwareChunker,
    ctx: &'a RequestContext,
    parsed: &'a ParsedDocument,
    text: &'a str,
    /// Whether the counter's counts add up across line starts (a unit may then be counted with
    /// the whitespace after it, and a chunk summed from its units instead of counted again).
    line_starts: bool,
    count_window: usize,
    /// Bytes per token seen in the last hard split, the first guess for the next one.
    bytes_per_token: f64,
    /// Where finished chunks go, and how many went there (the next chunk's position).
    sink: &'a mut dyn FnMut(Chunk),
    emitted: usize,
    headings: Vec<Frame>,
    /// Units of the body chunk being built, and the estimate of its tokens (overlap included).
    pending: Vec<Unit>,
    pending_tokens: usize,
    /// The overlap the pending chunk starts with.
    overlap: Option<Overlap>,
    /// The tail of the last flushed chunk, offered to the next chunk of the same section.
    carry: Option<Overlap>,
}

impl<'a> Run<'a> {
    fn new(
        chunker: &'a HeadingAwareChunker,
        ctx: &'a RequestContext,
        parsed: &'a ParsedDocument,
        sink: &'a mut dyn FnMut(Chunk),
    ) -> Self {
        Self {
            chunker,
            ctx,
            parsed,
            text: &parsed.document.text,
            line_starts: chunker.counter.splits_at_line_starts(),
            count_window: MIN_COUNT_WINDOW.max(chunker.max_tokens.saturating_mul(16)),
            bytes_per_token: 4.0,
            sink,
            emitted: 0,
            headings: Vec::new(),
            pending: Vec::new(),
            pending_tokens: 0,
            overlap: None,
            carry: None,
        }
    }

    fn max(&self) -> usize {
        self.chunker.max_tokens
    }

    fn count(&self, range: Range<usize>) -> usize {
        self.chunker.counter.count(&self.text[range])
    }

    /// Whether the counter's count of a text that is cut at `at` is the sum of the counts of the
    /// two sides: `at` starts a line (after `\n` or `\r`) with a character that is not whitespace.
    fn splits_at(&self, at: usize) -> bool {
        self.line_starts
            && at > 0
            && matches!(self.text.as_bytes().get(at - 1), Some(b'\n' | b'\r'))
            && self
                .text
                .get(at..)
                .and_then(|rest| rest.chars().next())
                .is_some_and(|c| !c.is_whitespace() && c != '/')
    }

    /// A heading: closes the section before it, opens its own.
    fn heading(&mut self, level: u8, title: &str, range: Range<usize>) -> Result<(), ChunkError> {
        self.end_section()?;
        while self.headings.last().is_some_and(|top| top.level >= level) {
            self.headings.pop();
        }
        let parent = self.headings.last().map(|top| top.id.clone());
        let path = self.heading_path();
        let mut units = self.units(range, Split::Sentences, None)?.into_iter();
        let Some(first) = units.next() else {
            return Ok(());
        };
        let mut metadata = Map::new();
        metadata.insert("kind".into(), json!("heading"));
        metadata.insert("level".into(), json!(level));
        metadata.insert("heading_path".into(), path);
        // The heading chunk ends here: its count must be of the piece alone.
        let tokens = if first.until == first.end {
            first.tokens
        } else {
            self.count(first.start..first.end)
        };
        let id = self.emit(first.start..first.end, tokens, parent, metadata);
        self.headings.push(Frame {
            level,
            id,
            title: title.to_owned(),
        });
        // The rest of an oversize heading is body text of its own section; starting after the
        // heading chunk, it cannot overlap it.
        for unit in units {
            self.add(unit)?;
        }
        Ok(())
    }

    fn heading_path(&self) -> Value {
        Value::Array(self.headings.iter().map(|h| Value::from(h.title.as_str())).collect())
    }

    /// Flushes the pending body chunk: a heading or the end of the document follows, so no tail
    /// is carried over.
    fn end_section(&mut self) -> Result<(), ChunkError> {
        self.carry = None;
        // Each flush emits at least one unit, so this ends; units a flush gives back start the
        // next chunk of the same section (and may flush again, with overlap, inside `add`).
        while !self.pending.is_empty() {
            for unit in self.flush(None)? {
                self.add(unit)?;
            }
        }
        self.carry = None;
        Ok(())
    }

    /// Adds a body unit to the pending chunk, flushing first when it would not fit.
    fn add(&mut self, unit: Unit) -> Result<(), ChunkError> {
        let mut queue = std::collections::VecDeque::from([unit]);
        while let Some(unit) = queue.pop_front() {
            let Some(last) = self.pending.last() else {
                self.start_chunk(unit);
                continue;
            };
            let grown = self.pending_tokens + self.gap_tokens(last.until, unit.start) + unit.tokens;
            if grown <= self.max() {
                self.pending.push(unit);
                self.pending_tokens = grown;
                continue;
            }
            let returned = self.flush(Some(unit.start))?;
            queue.push_front(unit);
            for unit in returned.into_iter().rev() {
                queue.push_front(unit);
            }
        }
        Ok(())
    }

    /// Starts a chunk with `unit`, behind the carried overlap if both fit together.
    fn start_chunk(&mut self, unit: Unit) {
        self.overlap = self
            .carry
            .take()
            .filter(|o| o.start < unit.start)
            .filter(|o| o.tokens + self.gap_tokens(o.until, unit.start) + unit.tokens <= self.max());
        self.pending_tokens = match self.overlap {
            Some(o) => o.tokens + self.gap_tokens(o.until, unit.start) + unit.tokens,
            None => unit.tokens,
        };
        self.pending.push(unit);
    }

    /// Estimated tokens of the whitespace between two units when they share a chunk: none for a
    /// single space (tokenizers fold it into the next word) or when the first unit's count already
    /// covers it (`from == to`), one for a line break or a blank line, and the counter's count for
    /// anything longer.
    ///
    /// Long gaps must be counted, not guessed: items of a list nested hundreds deep are separated
    /// by hundreds of spaces, and a guess of one token each made every chunk overflow at flush
    /// and be recounted again and again.
    fn gap_tokens(&self, from: usize, to: usize) -> usize {
        match self.text.get(from..to) {
            Some("") | Some(" ") | None => 0,
            Some(gap) if gap.len() <= 2 => 1,
            Some(gap) => self.chunker.counter.count(gap).max(1),
        }
    }

    /// Emits the pending chunk; returns the units that had to be left out to keep it within the
    /// budget (rare: only when merging at unit boundaries counts more than the sum), which start
    /// the next chunk. With `carry` (the start of the unit that did not fit), the chunk's tail is
    /// offered as overlap to that next chunk.
    fn flush(&mut self, carry: Option<usize>) -> Result<Vec<Unit>, ChunkError> {
        let mut returned: Vec<Unit> = Vec::new();
        let (start, end, tokens) = loop {
            let (Some(first), Some(last)) = (self.pending.first().copied(), self.pending.last().copied()) else {
                return Ok(returned);
            };
            let start = self.overlap.map_or(first.start, |o| o.start);
            let exact = self.exact_count(start);
            if exact <= self.max() {
                break (start, last.end, exact);
            }
            if self.pending.len() > 1 {
                // Drop as many trailing units as the excess suggests, at least one.
                let excess = exact - self.max();
                let mut dropped = 0usize;
                while self.pending.len() > 1 && dropped < excess {
                    if let Some(unit) = self.pending.pop() {
                        let gap = self
                            .pending
                            .last()
                            .map_or(1, |prev| self.gap_tokens(prev.until, unit.start));
                        dropped += unit.tokens + gap.max(1);
                        returned.insert(0, unit);
                    }
                }
            } else if self.overlap.is_some() {
                self.overlap = None;
            } else {
                // One unit that fitted when counted with the whitespace after it but not alone
                // (BPE counts do not grow monotonically with the text): split it like an oversize
                // block. Nothing is emitted; the pieces start the chunk again.
                let mut pieces = Vec::new();
                self.hard_split(first.start..first.end, &mut pieces)?;
                pieces.append(&mut returned);
                self.pending.clear();
                self.pending_tokens = 0;
                return Ok(pieces);
            }
        };
        let parent = self.headings.last().map(|h| h.id.clone());
        let mut metadata = Map::new();
        metadata.insert("kind".into(), json!("body"));
        metadata.insert("heading_path".into(), self.heading_path());
        self.emit(start..end, tokens, parent, metadata);
        self.pending.clear();
        self.pending_tokens = 0;
        self.overlap = None;
        self.carry = match carry {
            Some(next) if self.chunker.overlap_tokens > 0 => {
                self.tail(start, end, tokens, returned.first().map_or(next, |unit| unit.start))
            }
            _ => None,
        };
        Ok(returned)
    }

    /// The exact count of the pending chunk, which starts at `start` (its overlap's start, or its
    /// first unit's) and ends with its last unit.
    ///
    /// When the counter splits at line starts, the chunk's count is the sum of the counts of its
    /// pieces between the line starts that begin its units, and a piece that is exactly a counted
    /// unit (or the overlap) counted up to the next unit is not counted again: usually only the
    /// last unit is, alone. Otherwise the chunk is counted whole, unless it is one unit counted alone.
    fn exact_count(&self, start: usize) -> usize {
        let Some(last) = self.pending.last() else {
            return 0;
        };
        if !self.line_starts {
            return match self.pending[..] {
                [only] if only.start == start && only.until == only.end => only.tokens,
                _ => self.count(start..last.end),
            };
        }
        let mut total = 0;
        // The piece being summed starts at `piece`: at the overlap (`None`) or at a unit (`Some`).
        let (mut piece, mut piece_unit) = (start, self.overlap.is_none().then_some(0));
        if let Some(o) = self.overlap
            && let Some(first) = self.pending.first()
            && self.splits_at(first.start)
        {
            total += if o.start == start && o.until == first.start {
                o.tokens
            } else {
                self.count(start..first.start)
            };
            (piece, piece_unit) = (first.start, Some(0));
        }
        for k in 0..self.pending.len() {
            let cut = match self.pending.get(k + 1) {
                Some(next) if self.splits_at(next.start) => next.start,
                Some(_) => continue,
                None => last.end,
            };
            let known = match piece_unit {
                Some(i) => self
                    .pending
                    .get(i)
                    .filter(|u| u.start == piece && u.until == cut)
                    .map(|u| u.tokens),
                None => self
                    .overlap
                    .filter(|o| o.start == piece && o.until == cut)
                    .map(|o| o.tokens),
            };
            total += known.unwrap_or_else(|| self.count(piece..cut));
            (piece, piece_unit) = (cut, Some(k + 1));
        }
        total
    }

    /// About `overlap_tokens` from the end of the chunk `start..end`, starting at a sentence or
    /// word boundary (a character boundary inside an unbroken word), strictly after `start`.
    ///
    /// The byte length to take back is guessed from the chunk's own bytes per token, and the
    /// guess is counted (the tail only, never the chunk); a tail over the target is shortened
    /// by the same ratio, a few times at most.
    ///
    /// When `next`, the start of the next chunk's first unit, starts a line the counter splits at,
    /// the tail is counted up to it, so that the next chunk can add that count to its units'.
    fn tail(&self, start: usize, end: usize, tokens: usize, next: usize) -> Option<Overlap> {
        let until = if next >= end && self.splits_at(next) { next } else { end };
        let want = self.chunker.overlap_tokens;
        let len = end.saturating_sub(start);
        if len < 2 {
            return None;
        }
        let mut take = ((len as f64 / tokens.max(1) as f64) * want as f64).ceil() as usize;
        for _ in 0..3 {
            // Never the whole chunk: the next one must move forward.
            take = take.max(1).min(len - 1);
            let from = ceil_boundary(self.text, end - take);
            if from <= start || from >= end {
                return None;
            }
            let lo = floor_boundary(self.text, from.saturating_sub(take + 64).max(start));
            let midpoint = from + (end - from) / 2;
            let boundary = overlap_boundary(self.text, lo, from, midpoint, end).unwrap_or(from);
            let boundary = ceil_boundary(self.text, boundary);
            if boundary <= start || boundary >= end {
                return None;
            }
            let counted = self.count(boundary..until);
            if counted <= want {
                return Some(Overlap {
                    start: boundary,
                    until,
                    tokens: counted,
                });
            }
            take = ((end - boundary) as f64 * want as f64 / counted as f64 * 0.9) as usize;
        }
        None
    }

    /// Builds a chunk of `range` and hands it to the sink; returns its id.
    fn emit(
        &mut self,
        range: Range<usize>,
        tokens: usize,
        parent: Option<ChunkId>,
        metadata: Map<String, Value>,
    ) -> ChunkId {
        let position = self.emitted;
        let document = &self.parsed.document;
        let id = ChunkId::new(format!("{}#{position}", document.id));
        let mut chunk = Chunk::with_content(
            id.clone(),
            document.id.clone(),
            self.ctx.tenant_id.clone(),
            &self.text[range.clone()],
        );
        chunk.position = position;
        chunk.parent_id = parent;
        chunk.token_count = Some(tokens);
        chunk.span = Some(range.into());
        chunk.source_uri = Some(document.source_uri.clone());
        chunk.acl_labels = self.ctx.principal.acl_labels.clone();
        chunk.metadata = metadata;
        (self.sink)(chunk);
        self.emitted += 1;
        id
    }

    /// The units of a block: the block itself if it fits, else its sentences (or lines), and any of
    /// those still too large hard-split by token count.
    ///
    /// `next` is where the next unit of the section starts, if a body block follows. A unit whose
    /// successor starts a line the counter splits at is counted together with the whitespace up to
    /// it (see [`Unit`]), instead of alone: then its chunk needs no recount.
    fn units(&mut self, range: Range<usize>, split: Split, next: Option<usize>) -> Result<Vec<Unit>, ChunkError> {
        if let Some(unit) = self.joined_unit(range.clone(), next) {
            return Ok(vec![unit]);
        }
        let mut whole_tokens = None;
        if range.len() <= self.count_window && !next.is_some_and(|n| self.splits_at(n)) {
            let tokens = self.count(range.clone());
            if tokens <= self.max() {
                return Ok(vec![Unit::alone(range.start, range.end, tokens)]);
            }
            whole_tokens = Some(tokens);
        }
        let parts = match split {
            Split::Sentences => sentence_ranges(self.text, range.clone()),
            Split::Lines => line_ranges(self.text, range.clone()),
        };
        let mut units = Vec::new();
        for (i, part) in parts.iter().enumerate() {
            let part = part.clone();
            if part != range {
                let part_next = parts.get(i + 1).map(|p| p.start).or(next);
                if let Some(unit) = self.joined_unit(part.clone(), part_next) {
                    units.push(unit);
                    continue;
                }
            }
            // A block that is one sentence was counted already: go straight to the hard split.
            let known = if part == range { whole_tokens } else { None };
            if known.is_none() && part.len() <= self.count_window {
                let tokens = self.count(part.clone());
                if tokens <= self.max() {
                    units.push(Unit::alone(part.start, part.end, tokens));
                    continue;
                }
            }
            self.hard_split(part, &mut units)?;
        }
        Ok(units)
    }

    /// `range` as one unit counted up to `next`, if `next` starts a line the counter splits at and
    /// the count is within budget. A count over budget says the range is (about) too large: the
    /// caller splits it, or counts it alone.
    fn joined_unit(&self, range: Range<usize>, next: Option<usize>) -> Option<Unit> {
        let next = next.filter(|&n| n >= range.end && n - range.start <= self.count_window && self.splits_at(n))?;
        let tokens = self.count(range.start..next);
        (tokens <= self.max()).then_some(Unit {
            start: range.start,
            end: range.end,
            until: next,
            tokens,
        })
    }

    /// Cuts `range` into units of at most `max_tokens`, each as long as the budget allows, ending
    /// at a word boundary where one lies in the second half of the piece.
    fn hard_split(&mut self, range: Range<usize>, out: &mut Vec<Unit>) -> Result<(), ChunkError> {
        let mut start = trim_range(self.text, range.clone()).start;
        while start < range.end {
            let (cut, tokens) = self.fit(start, range.end)?;
            let mut unit = Unit::alone(start, cut, tokens);
            if cut < range.end {
                let half = floor_boundary(self.text, start + (cut - start) / 2);
                if let Some(word) = last_word_start(self.text, half.max(start), cut) {
                    let shorter = trim_range(self.text, start..word);
                    if !shorter.is_empty() {
                        let tokens = self.count(shorter.clone());
                        if tokens <= self.max() {
                            unit = Unit::alone(start, shorter.end, tokens);
                        }
                    }
                }
            }
            let trimmed = trim_range(self.text, unit.start..unit.end);
            if !trimmed.is_empty() && trimmed.end != unit.end {
                let tokens = self.count(trimmed.clone());
                if tokens <= self.max() {
                    unit = Unit::alone(unit.start, trimmed.end, tokens);
                }
            }
            if unit.tokens > 0 {
                self.bytes_per_token = (unit.end - unit.start) as f64 / unit.tokens as f64;
            }
            out.push(unit);
            start = trim_range(self.text, unit.end..range.end).start;
        }
        Ok(())
    }

    /// The end of the longest prefix of `start..end` (found approximately, within a bounded
    /// window) that has at most `max_tokens` tokens, and its count.
    ///
    /// Guesses the length from the bytes per token seen so far and corrects it in proportion to
    /// each count; if that does not settle in a few counts, bisects over character boundaries.
    fn fit(&mut self, start: usize, end: usize) -> Result<(usize, usize), ChunkError> {
        let max = self.max();
        let cap = {
            let cap = floor_boundary(self.text, start.saturating_add(self.count_window).min(end));
            if cap > start {
                cap
            } else {
                ceil_boundary(self.text, start + 1)
            }
        };
        let mut good: Option<(usize, usize)> = None;
        let mut bad: Option<usize> = None;
        let mut guess = start + (max as f64 * self.bytes_per_token) as usize;
        for _ in 0..6 {
            let lo = good.map_or(start, |g| g.0);
            let hi = bad.unwrap_or(cap);
            let mut at = floor_boundary(self.text, guess.max(lo).min(hi));
            if at <= lo {
                at = ceil_boundary(self.text, lo + 1);
            }
            if at > hi || (at == hi && bad.is_some()) {
                break;
            }
            let tokens = self.count(start..at);
            let scale = max as f64 / tokens.max(1) as f64;
            if tokens <= max {
                good = Some((at, tokens));
                if at >= cap || tokens * 10 >= max * 9 {
                    break;
                }
                guess = start + ((at - start) as f64 * scale * 0.97) as usize;
            } else {
                bad = Some(at);
                guess = start + ((at - start) as f64 * scale * 0.95) as usize;
            }
        }
        if good.is_none_or(|g| g.1 * 10 < max * 9 && g.0 < cap) {
            // Bisect between the longest prefix known to fit and the shortest known not to.
            let mut lo = good.map_or(start, |g| g.0);
            let mut hi = bad.unwrap_or(cap);
            loop {
                let mut mid = floor_boundary(self.text, lo + (hi - lo) / 2);
                if mid <= lo {
                    mid = ceil_boundary(self.text, lo + 1);
                }
                if mid >= hi {
                    break;
                }
                let tokens = self.count(start..mid);
                if tokens <= max {
                    good = Some((mid, tokens));
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            if good.is_none() && bad.is_none() {
                // `cap` is one character past `start` here and was never counted.
                let tokens = self.count(start..hi);
                if tokens <= max {
                    good = Some((hi, tokens));
                }
            }
        }
        good.ok_or_else(|| {
            let ch = self.text[start..].chars().next().unwrap_or('\u{fffd}');
            ChunkError::InvalidConfig {
                message: format!(
                    "max_tokens {max} is too small: the character {ch:?} at byte {start} of document {} alone \
                     has more tokens",
                    self.parsed.document.id
                ),
            }
        })
    }
}
