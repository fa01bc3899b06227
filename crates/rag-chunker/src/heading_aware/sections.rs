//! Section building: the heading stack, body units gathered into the pending chunk under the
//! current heading, and flushes, each of which emits a chunk and may offer its tail as the next
//! chunk's overlap.

use std::collections::VecDeque;
use std::ops::Range;

use rag_core::{Chunk, ChunkError, ChunkId, ChunkKind, Document, ParsedDocument, Rendition, RequestContext};
use serde_json::{Map, Value};

use super::HeadingAwareChunker;
use super::counting::Counting;
use super::overlap::{self, Overlap};
use super::units::{Split, Unit, UnitSplitter};

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
    offered: Option<Overlap>,
}

/// An open heading: its level, its chunk, its title as `heading_path` carries it.
struct OpenHeading {
    level: u8,
    id: ChunkId,
    title: String,
}

/// The body chunk being built.
#[derive(Default)]
struct Pending {
    units: Vec<Unit>,
    /// The estimate of the chunk's tokens, its overlap included.
    tokens: usize,
    /// The overlap the chunk starts with.
    overlap: Option<Overlap>,
}

impl Pending {
    /// Empties the chunk, keeping the units' buffer for the next one.
    fn clear(&mut self) {
        self.units.clear();
        self.tokens = 0;
        self.overlap = None;
    }
}

/// Why the pending chunk is flushed.
#[derive(Debug, Clone, Copy)]
enum Flush {
    /// A heading or the end of the document follows: no tail is offered.
    SectionEnd,
    /// The unit that starts at `next_unit` did not fit: the chunk's tail is offered to the next
    /// chunk, which that unit starts.
    Full { next_unit: usize },
}

impl<'a> Run<'a> {
    pub(super) fn new(
        counting: Counting<'a>,
        overlap_tokens: usize,
        ctx: &'a RequestContext,
        parsed: &'a ParsedDocument,
        sink: &'a mut dyn FnMut(Chunk),
    ) -> Self {
        let tokenizer = counting.tokenizer();
        Self {
            counting,
            splitter: UnitSplitter::new(),
            overlap_tokens,
            emitter: Emitter {
                ctx,
                document: &parsed.document,
                rendition: parsed.rendition.as_ref(),
                tokenizer,
                sink,
                emitted: 0,
            },
            headings: Vec::new(),
            pending: Pending::default(),
            offered: None,
        }
    }

    /// How many chunks went to the sink.
    pub(super) fn emitted(&self) -> usize {
        self.emitter.emitted
    }

    /// A heading: closes the section before it, opens its own.
    pub(super) fn heading(&mut self, level: u8, title: &str, range: Range<usize>) -> Result<(), ChunkError> {
        self.end_section()?;
        while self.headings.last().is_some_and(|top| top.level >= level) {
            self.headings.pop();
        }
        let parent = self.headings.last().map(|top| top.id.clone());
        let metadata = ChunkKind::Heading.metadata(Some(level), self.heading_path());
        let mut units = self
            .splitter
            .units(&self.counting, range, Split::Sentences, None)?
            .into_iter();
        let Some(first) = units.next() else {
            return Ok(());
        };
        // The heading chunk ends here: its count must be of the piece alone.
        let tokens = first.tokens_alone(&self.counting)?;
        let id = self.emitter.emit(first.start..first.end, tokens, parent, metadata);
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

    /// A body block: its units join the pending chunk. `next` is where the next block starts, if
    /// it is a body block of the same section.
    pub(super) fn body(&mut self, range: Range<usize>, split: Split, next: Option<usize>) -> Result<(), ChunkError> {
        for unit in self.splitter.units(&self.counting, range, split, next)? {
            self.add(unit)?;
        }
        Ok(())
    }

    fn heading_path(&self) -> Vec<&str> {
        self.headings.iter().map(|h| h.title.as_str()).collect()
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
    fn add(&mut self, unit: Unit) -> Result<(), ChunkError> {
        let mut queue = VecDeque::from([unit]);
        while let Some(unit) = queue.pop_front() {
            let Some(last) = self.pending.units.last() else {
                self.start_chunk(unit)?;
                continue;
            };
            let grown = self.pending.tokens + self.counting.gap_tokens(last.until, unit.start)? + unit.tokens;
            if grown <= self.counting.max_tokens {
                self.pending.units.push(unit);
                self.pending.tokens = grown;
                continue;
            }
            let returned = self.flush(Flush::Full { next_unit: unit.start })?;
            queue.push_front(unit);
            for unit in returned.into_iter().rev() {
                queue.push_front(unit);
            }
        }
        Ok(())
    }

    /// Starts a chunk with `unit`, behind the offered overlap if both fit together.
    fn start_chunk(&mut self, unit: Unit) -> Result<(), ChunkError> {
        let behind = match self.offered.take() {
            Some(o) => overlap::tokens_behind(&self.counting, o, unit)?.map(|tokens| (o, tokens)),
            None => None,
        };
        self.pending.overlap = behind.map(|(o, _)| o);
        self.pending.tokens = behind.map_or(unit.tokens, |(_, tokens)| tokens);
        self.pending.units.push(unit);
        Ok(())
    }

    /// Emits the pending chunk; returns the units that had to be left out to keep it within the
    /// budget (rare: only when merging at unit boundaries counts more than the sum), which start
    /// the next chunk.
    fn flush(&mut self, why: Flush) -> Result<Vec<Unit>, ChunkError> {
        let max = self.counting.max_tokens;
        let mut returned: Vec<Unit> = Vec::new();
        let (start, end, tokens) = loop {
            let (Some(first), Some(last)) = (self.pending.units.first().copied(), self.pending.units.last().copied())
            else {
                return Ok(returned);
            };
            let start = self.pending.overlap.map_or(first.start, |o| o.start);
            let exact = self
                .counting
                .chunk_tokens(start, &self.pending.units, self.pending.overlap)?;
            if exact <= max {
                break (start, last.end, exact);
            }
            if self.pending.units.len() > 1 {
                // Drop as many trailing units as the excess suggests, at least one.
                let excess = exact - max;
                let mut dropped = 0usize;
                while self.pending.units.len() > 1 && dropped < excess {
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
            } else {
                // One unit that fitted when counted with the whitespace after it but not alone
                // (BPE counts do not grow monotonically with the text): split it like an oversize
                // block. Nothing is emitted; the pieces start the chunk again.
                let mut pieces = Vec::new();
                self.splitter
                    .hard_split(&self.counting, first.start..first.end, &mut pieces)?;
                pieces.append(&mut returned);
                self.pending.clear();
                return Ok(pieces);
            }
        };
        let parent = self.headings.last().map(|h| h.id.clone());
        let metadata = ChunkKind::Body.metadata(None, self.heading_path());
        self.emitter.emit(start..end, tokens, parent, metadata);
        self.pending.clear();
        self.offered = match why {
            Flush::Full { next_unit } if self.overlap_tokens > 0 => {
                let next = returned.first().map_or(next_unit, |unit| unit.start);
                overlap::tail(&self.counting, self.overlap_tokens, start, end, tokens, next)?
            }
            _ => None,
        };
        Ok(returned)
    }
}

/// `title` as `heading_path` carries it: whole up to
/// [`MAX_PATH_TITLE_CHARS`](HeadingAwareChunker::MAX_PATH_TITLE_CHARS) characters, else its first
/// characters (trailing whitespace dropped) and `…`, that many in all.
///
/// Every chunk of a section carries the titles of its headings, so a title's length is paid once
/// per chunk: unbounded, a heading of a megabyte split into hundreds of pieces would repeat that
/// megabyte in each of them, and output and memory would grow with the square of the input.
fn path_title(title: &str) -> String {
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
struct Emitter<'a> {
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

impl Emitter<'_> {
    /// Builds the chunk of `range` and hands it to the sink; returns its id.
    fn emit(
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
