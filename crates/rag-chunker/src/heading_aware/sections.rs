//! Section building: the heading stack, body units gathered into the pending chunk under the
//! current heading, and flushes, each of which emits a chunk and may offer its tail as the next
//! chunk's overlap.

use std::collections::VecDeque;
use std::ops::Range;

use rag_core::{Chunk, ChunkError, ChunkId, ChunkKind, Document, ParsedDocument, Rendition, RequestContext};
use serde_json::{Map, Value};

use super::HeadingAwareChunker;
use super::counting::{Counting, Stretch};
use super::overlap::{self, Flushed};
use super::units::{Split, UnitSplitter};

/// The state of chunking one document.
pub(super) struct Run<'a> {
    counting: Counting<'a>,
    splitter: UnitSplitter,
    overlap_tokens: usize,
    emitter: Emitter<'a>,
    /// The open headings, outermost first.
    headings: Vec<OpenHeading>,
    pending: Pending,
    /// The tail of the last flushed chunk, offered to the next chunk of the same section.
    offered: Option<Stretch>,
    /// Whether headings fold into the first body chunk of their section.
    fold: bool,
    /// In fold mode, the headings waiting for the first body unit of their section, outermost
    /// first, each deeper than the one before.
    held: Vec<Held>,
}

/// An open heading: its level, its chunk (none in fold mode), its title as `heading_path`
/// carries it.
struct OpenHeading {
    level: u8,
    id: Option<ChunkId>,
    title: String,
}

/// A heading held to fold into the next body chunk: its text (the first piece, if it was split),
/// its level, and the `heading_path` it gets if it has to be a chunk of its own after all.
#[derive(Debug, Clone)]
struct Held {
    unit: Stretch,
    level: u8,
    path: Value,
}

/// The body chunk being built.
#[derive(Default)]
struct Pending {
    units: Vec<Stretch>,
    /// The estimate of the chunk's tokens, its overlap included.
    tokens: usize,
    /// The overlap the chunk starts with.
    overlap: Option<Stretch>,
    /// The held headings folded into the chunk: its first units.
    folded: Vec<Held>,
}

impl Pending {
    /// Empties the chunk, keeping the units' buffer for the next one.
    fn clear(&mut self) {
        self.units.clear();
        self.tokens = 0;
        self.overlap = None;
        self.folded.clear();
    }
}

/// Why the pending chunk is flushed.
#[derive(Debug, Clone, Copy)]
enum Flush {
    /// A heading or the end of the document follows: no tail is offered.
    SectionEnd,
    /// The unit `next` did not fit: the chunk's tail is offered to the next chunk, which that
    /// unit starts.
    Full { next: Stretch },
}

impl<'a> Run<'a> {
    pub(super) fn new(
        counting: Counting<'a>,
        chunker: &HeadingAwareChunker,
        ctx: &'a RequestContext,
        parsed: &'a ParsedDocument,
        sink: &'a mut dyn FnMut(Chunk),
    ) -> Self {
        let tokenizer = counting.tokenizer();
        Self {
            counting,
            splitter: UnitSplitter::new(),
            overlap_tokens: chunker.overlap_tokens(),
            emitter: Emitter::new(ctx, parsed, tokenizer, sink),
            headings: Vec::new(),
            pending: Pending::default(),
            offered: None,
            fold: chunker.fold_headings(),
            held: Vec::new(),
        }
    }

    /// How many chunks went to the sink.
    pub(super) fn emitted(&self) -> usize {
        self.emitter.emitted()
    }

    /// A heading: closes the section before it, opens its own.
    pub(super) fn heading(&mut self, level: u8, title: &str, range: Range<usize>) -> Result<(), ChunkError> {
        self.end_section()?;
        // A held heading this one is not deeper than has an empty section: nothing to fold into.
        if self.held.last().is_some_and(|held| held.level >= level) {
            self.emit_held()?;
        }
        self.close_headings(level);
        let parent = self.headings.last().and_then(|top| top.id.clone());
        let path = self.heading_path(self.headings.len());
        let mut units = self
            .splitter
            .units(&self.counting, range, Split::Sentences, None)?
            .into_iter();
        let Some(first) = units.next() else {
            return Ok(());
        };
        let id = if self.fold {
            self.held.push(Held {
                unit: first,
                level,
                path,
            });
            None
        } else {
            Some(self.emit_heading(first, level, path, parent)?)
        };
        self.headings.push(OpenHeading {
            level,
            id,
            title: path_title(title),
        });
        // The rest of an oversize heading is body text of its own section; starting after the
        // heading chunk, it cannot overlap it.
        for unit in units {
            self.add(unit)?;
        }
        Ok(())
    }

    /// Emits the chunk of a heading (its first piece, if it was split): its count must be of the
    /// piece alone, since the chunk ends there.
    fn emit_heading(
        &mut self,
        first: Stretch,
        level: u8,
        path: Value,
        parent: Option<ChunkId>,
    ) -> Result<ChunkId, ChunkError> {
        // The path was taken when the heading opened (a held heading is emitted later).
        let mut metadata = ChunkKind::Heading.metadata(Some(level), std::iter::empty());
        metadata.insert(ChunkKind::HEADING_PATH_KEY.into(), path);
        let tokens = first.tokens_alone(&self.counting)?;
        Ok(self.emitter.emit(first.start..first.end, tokens, parent, metadata))
    }

    /// Emits every held heading as a chunk of its own: they cannot fold.
    fn emit_held(&mut self) -> Result<(), ChunkError> {
        for held in std::mem::take(&mut self.held) {
            self.emit_heading(held.unit, held.level, held.path, None)?;
        }
        Ok(())
    }

    /// Ends the document: flushes the pending chunk, and emits any heading still held.
    pub(super) fn finish(&mut self) -> Result<(), ChunkError> {
        self.end_section()?;
        self.emit_held()
    }

    /// Pops the headings that a heading of `level` closes: those of its level or deeper.
    fn close_headings(&mut self, level: u8) {
        while self.headings.last().is_some_and(|top| top.level >= level) {
            self.headings.pop();
        }
    }

    /// A body block: its units join the pending chunk. `next` is where the next block starts, if
    /// it is a body block of the same section.
    pub(super) fn body(&mut self, range: Range<usize>, split: Split, next: Option<usize>) -> Result<(), ChunkError> {
        for unit in self.splitter.units(&self.counting, range, split, next)? {
            self.add(unit)?;
        }
        Ok(())
    }

    /// The titles of the first `depth` open headings.
    fn heading_path(&self, depth: usize) -> Value {
        Value::Array(
            self.headings[..depth.min(self.headings.len())]
                .iter()
                .map(|h| Value::from(h.title.as_str()))
                .collect(),
        )
    }

    /// Flushes the pending body chunk: a heading or the end of the document follows, so no tail
    /// is offered.
    pub(super) fn end_section(&mut self) -> Result<(), ChunkError> {
        self.offered = None;
        // Each flush emits at least one unit, so this ends; units a flush gives back start the
        // next chunk of the same section (and may flush again, with overlap, inside `add`).
        while !self.pending.units.is_empty() {
            for unit in self.flush(Flush::SectionEnd)? {
                self.add(unit)?;
            }
        }
        self.offered = None;
        Ok(())
    }

    /// Adds a body unit to the pending chunk, flushing first when it would not fit.
    fn add(&mut self, unit: Stretch) -> Result<(), ChunkError> {
        let mut queue = VecDeque::from([unit]);
        while let Some(unit) = queue.pop_front() {
            let Some(last) = self.pending.units.last() else {
                if self.held.is_empty() {
                    self.start_chunk(unit)?;
                } else {
                    self.start_folded(unit)?;
                }
                continue;
            };
            let grown = self.pending.tokens + self.counting.gap_tokens(last.until, unit.start)? + unit.tokens;
            if grown <= self.counting.max_tokens {
                self.pending.units.push(unit);
                self.pending.tokens = grown;
                continue;
            }
            let returned = self.flush(Flush::Full { next: unit })?;
            queue.push_front(unit);
            for unit in returned.into_iter().rev() {
                queue.push_front(unit);
            }
        }
        Ok(())
    }

    /// Starts a chunk with `unit`, behind the offered overlap if both fit together.
    fn start_chunk(&mut self, unit: Stretch) -> Result<(), ChunkError> {
        let behind = match self.offered.take() {
            Some(o) => overlap::tokens_behind(&self.counting, o, unit)?.map(|tokens| (o, tokens)),
            None => None,
        };
        self.pending.overlap = behind.map(|(o, _)| o);
        self.pending.tokens = behind.map_or(unit.tokens, |(_, tokens)| tokens);
        self.pending.units.push(unit);
        Ok(())
    }

    /// Starts a chunk with the held headings and `unit`, the first body unit of their section.
    /// The outermost held headings go out as chunks of their own while the estimate of the whole
    /// is over budget; the first chunk of a section never has an overlap.
    fn start_folded(&mut self, unit: Stretch) -> Result<(), ChunkError> {
        self.offered = None;
        let tokens = loop {
            let mut tokens = 0;
            let mut until = None;
            for stretch in self.held.iter().map(|h| h.unit).chain([unit]) {
                if let Some(until) = until {
                    tokens += self.counting.gap_tokens(until, stretch.start)?;
                }
                tokens += stretch.tokens;
                until = Some(stretch.until);
            }
            if tokens <= self.counting.max_tokens || self.held.is_empty() {
                break tokens;
            }
            let outermost = self.held.remove(0);
            self.emit_heading(outermost.unit, outermost.level, outermost.path, None)?;
        };
        self.pending.folded = std::mem::take(&mut self.held);
        self.pending.units.extend(self.pending.folded.iter().map(|h| h.unit));
        self.pending.units.push(unit);
        self.pending.tokens = tokens;
        Ok(())
    }

    /// Emits the pending chunk; returns the units that had to be left out to keep it within the
    /// budget (rare: only when merging at unit boundaries counts more than the sum), which start
    /// the next chunk.
    fn flush(&mut self, why: Flush) -> Result<Vec<Stretch>, ChunkError> {
        let mut returned: Vec<Stretch> = Vec::new();
        let Some((start, end, tokens)) = self.fit_pending(&mut returned)? else {
            // The only unit was split again; its pieces start the chunk.
            return Ok(returned);
        };
        let metadata = self.chunk_metadata();
        let parent = self.headings.last().and_then(|h| h.id.clone());
        self.emitter.emit(start..end, tokens, parent, metadata);
        let floor = self.pending.folded.last().map_or(0, |h| h.unit.end);
        self.offered = match why {
            Flush::Full { next } if self.overlap_tokens > 0 => {
                let flushed = Flushed {
                    start,
                    end,
                    tokens,
                    units: &self.pending.units,
                    floor,
                    next: returned.first().copied().unwrap_or(next),
                };
                overlap::tail(&self.counting, self.overlap_tokens, &flushed)?
            }
            _ => None,
        };
        // What comes next starts at the overlap, or after this chunk.
        self.counting.forget_before(self.offered.map_or(end, |o| o.start));
        self.pending.clear();
        Ok(returned)
    }

    /// Drops trailing units (into `returned`) and the overlap until the pending chunk's exact
    /// count is within budget; its span and count. `None` when its only unit, which fitted counted
    /// with the whitespace after it but not alone (BPE counts do not grow monotonically with the
    /// text), had to be split like an oversize block: the pieces are then in `returned`, and the
    /// chunk is empty.
    fn fit_pending(&mut self, returned: &mut Vec<Stretch>) -> Result<Option<(usize, usize, usize)>, ChunkError> {
        let max = self.counting.max_tokens;
        loop {
            let (Some(first), Some(last)) = (self.pending.units.first().copied(), self.pending.units.last().copied())
            else {
                return Ok(None);
            };
            let start = self.pending.overlap.map_or(first.start, |o| o.start);
            let exact = self
                .counting
                .chunk_tokens(start, &self.pending.units, self.pending.overlap)?;
            if exact <= max {
                return Ok(Some((start, last.end, exact)));
            }
            // Folded headings stay at the front; at least one body unit stays after them.
            let keep = self.pending.folded.len() + 1;
            if self.pending.units.len() > keep {
                // Drop as many trailing units as the excess suggests, at least one.
                let excess = exact - max;
                let mut dropped = 0usize;
                while self.pending.units.len() > keep && dropped < excess {
                    if let Some(unit) = self.pending.units.pop() {
                        let gap = match self.pending.units.last() {
                            Some(prev) => self.counting.gap_tokens(prev.until, unit.start)?,
                            None => 1,
                        };
                        dropped += unit.tokens + gap.max(1);
                        returned.insert(0, unit);
                    }
                }
            } else if self.pending.overlap.is_some() {
                self.pending.overlap = None;
            } else if !self.pending.folded.is_empty() {
                // The headings and the body unit do not fit together after all: the headings go
                // out as chunks of their own, before the body.
                let folded = std::mem::take(&mut self.pending.folded);
                self.pending.units.drain(..folded.len());
                for held in folded {
                    self.emit_heading(held.unit, held.level, held.path, None)?;
                }
            } else {
                let mut pieces = Vec::new();
                self.splitter
                    .hard_split(&self.counting, first.start..first.end, first.place, &mut pieces)?;
                pieces.append(returned);
                *returned = pieces;
                self.pending.clear();
                return Ok(None);
            }
        }
    }

    /// The metadata of the pending body chunk, with the path of every open heading.
    fn chunk_metadata(&self) -> Map<String, Value> {
        ChunkKind::Body.metadata(None, self.headings.iter().map(|h| h.title.as_str()))
    }
}

/// `title` as `heading_path` carries it: whole up to
/// [`MAX_PATH_TITLE_CHARS`](HeadingAwareChunker::MAX_PATH_TITLE_CHARS) characters, else its first
/// characters (trailing whitespace dropped) and `…`, that many in all.
///
/// Every chunk of a section carries the titles of its headings, so a title's length is paid once
/// per chunk: unbounded, a heading of a megabyte split into hundreds of pieces would repeat that
/// megabyte in each of them, and output and memory would grow with the square of the input.
pub(super) fn path_title(title: &str) -> String {
    let max = HeadingAwareChunker::MAX_PATH_TITLE_CHARS;
    if title.char_indices().nth(max).is_none() {
        return title.to_owned();
    }
    let cut = title.char_indices().nth(max - 1).map_or(title.len(), |(at, _)| at);
    let mut short = title[..cut].trim_end().to_owned();
    short.push('…');
    short
}

/// Where finished chunks go: each is built from its span and handed to the sink in order.
pub(super) struct Emitter<'a> {
    ctx: &'a RequestContext,
    document: &'a Document,
    /// The map back to the original file, when the document's text is a rendition of it.
    rendition: Option<&'a Rendition>,
    /// The name of the counter every `token_count` comes from.
    tokenizer: &'a str,
    sink: &'a mut dyn FnMut(Chunk),
    /// How many chunks went to the sink: the next chunk's position.
    emitted: usize,
}

impl<'a> Emitter<'a> {
    /// An emitter of `parsed`'s chunks, counted by `tokenizer`, to `sink`.
    pub(super) fn new(
        ctx: &'a RequestContext,
        parsed: &'a ParsedDocument,
        tokenizer: &'a str,
        sink: &'a mut dyn FnMut(Chunk),
    ) -> Self {
        Self {
            ctx,
            document: &parsed.document,
            rendition: parsed.rendition.as_ref(),
            tokenizer,
            sink,
            emitted: 0,
        }
    }

    /// How many chunks went to the sink.
    pub(super) fn emitted(&self) -> usize {
        self.emitted
    }

    /// Builds the chunk of `range` and hands it to the sink; returns its id.
    pub(super) fn emit(
        &mut self,
        range: Range<usize>,
        tokens: usize,
        parent: Option<ChunkId>,
        metadata: Map<String, Value>,
    ) -> ChunkId {
        let position = self.emitted;
        let document = self.document;
        let id = ChunkId::new(format!("{}#{position}", document.id));
        let mut chunk = Chunk::with_content(
            id.clone(),
            document.id.clone(),
            self.ctx.tenant_id.clone(),
            &document.text[range.clone()],
        );
        chunk.position = position;
        chunk.parent_id = parent;
        chunk.token_count = Some(tokens);
        chunk.tokenizer = Some(self.tokenizer.to_owned());
        chunk.span = Some(range.clone().into());
        if let Some(rendition) = self.rendition {
            chunk.provenance = rendition.provenance(range.into());
        }
        chunk.source_uri = Some(document.source_uri.clone());
        chunk.acl_labels = self.ctx.principal.acl_labels.clone();
        chunk.metadata = metadata;
        (self.sink)(chunk);
        self.emitted += 1;
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_titles_are_whole_up_to_the_limit_then_cut_at_a_character_with_an_ellipsis() {
        let max = HeadingAwareChunker::MAX_PATH_TITLE_CHARS;
        let exact = "é".repeat(max);
        assert_eq!(path_title(&exact), exact);
        let long = format!("{}東京 and more", "a".repeat(max - 3));
        let short = path_title(&long);
        assert_eq!(short.chars().count(), max);
        assert_eq!(short, format!("{}東京…", "a".repeat(max - 3)));
        // Whitespace before the cut is dropped, so the marker follows a word.
        let spaced = format!("{} {}", "b".repeat(max - 2), "c".repeat(10));
        assert_eq!(path_title(&spaced), format!("{}…", "b".repeat(max - 2)));
        assert_eq!(path_title(""), "");
    }
}
