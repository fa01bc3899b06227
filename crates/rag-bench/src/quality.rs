//! What a user keeps of chunking, measured on the chunks themselves: where chunks start (at a
//! block, line or sentence start, or inside a sentence), whether they cut a fenced code block,
//! how much overlap they keep, how many are a heading alone, and how large they are.
//!
//! The `chunk-quality` binary runs it on the JSON Lines of `ragctl chunk`. The definitions are the
//! tool's own, from the source text and its Markdown structure, not from the chunker's code, so a
//! change to the chunker is measured against a fixed yardstick:
//!
//! - a **block start** is the start of a block of the Markdown parser (trimmed);
//! - a **line start** is a position preceded on its line by nothing but indentation;
//! - a **UAX #29 sentence start** is a sentence start of Unicode's segmentation run on the block,
//!   which breaks after every line break, so every line start of a block is one;
//! - a **sentence start** is a UAX #29 sentence start of the block read with its soft line breaks
//!   (a single line break inside a paragraph, the way Markdown wraps prose) as spaces; in code
//!   (fenced or indented code blocks, HTML and other raw blocks, fences nested in lists and quotes)
//!   every line start is one, since code has lines, not sentences.
//!
//! A chunk starts **mid-line** when its start is none of a block start, a line start or a UAX #29
//! sentence start, and **mid-sentence** when it is neither a block start nor a sentence start. A
//! mid-sentence start is **forced** when the sentence it cuts has more tokens than the budget: no
//! chunk can hold it, so the source does not allow better.
//!
//! A chunk **starts with a closing fence** when it starts on the closing fence line of a fenced
//! code block that opened before it, and holds an **unbalanced fence** when it starts or ends
//! strictly inside a fenced code block (nested ones included), which a renderer then has to close
//! or reopen. That is **forced** when the code block has more tokens than the budget.
//!
//! ```
//! use rag_bench::quality::{Document, Start};
//!
//! let text = "# Title\n\nOne sentence\nwrapped. Two.\n\n```sh\nls\n```\n";
//! let document = Document::markdown("a.md", text).unwrap();
//! assert_eq!(document.start_kind(0), Start::Block);
//! assert_eq!(document.start_kind(text.find("wrapped").unwrap()), Start::MidSentence);
//! assert_eq!(document.start_kind(text.find("Two").unwrap()), Start::Sentence);
//! assert_eq!(document.start_kind(text.find("ls").unwrap()), Start::Sentence);
//! assert_eq!(document.start_kind(text.find("ntence").unwrap()), Start::MidLine);
//! ```

use std::ops::Range;

use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag};
use rag_chunker::{DocumentType, parse_document};
use rag_core::{BlockType, Chunk, CorpusId, DocumentId, RequestContext, SourceBytes, TokenCounter};
use unicode_segmentation::UnicodeSegmentation;

/// Where a chunk starts, from best to worst.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    /// At the start of a block.
    Block,
    /// At a sentence start (in code: a line start).
    Sentence,
    /// Inside a sentence, at a line start or a UAX #29 sentence start (a soft-wrapped line).
    MidSentence,
    /// Inside a line, not at a UAX #29 sentence start (a word or a character of a sentence).
    MidLine,
}

/// One block of a document as the measure sees it.
#[derive(Debug, Clone)]
struct Region {
    range: Range<usize>,
    block_type: BlockType,
}

/// A fenced code block: its whole range (opening to closing fence) and where its closing fence
/// line starts, if it has one.
#[derive(Debug, Clone)]
struct Fence {
    range: Range<usize>,
    closing_line: Option<usize>,
}

/// A source document with the structure the measures need.
#[derive(Debug)]
pub struct Document {
    text: String,
    blocks: Vec<Region>,
    fences: Vec<Fence>,
}

/// The error of reading a document for measuring: the parser refused it.
#[derive(Debug, thiserror::Error)]
#[error("{uri}: {message}")]
pub struct DocumentError {
    uri: String,
    message: String,
}

impl Document {
    /// `text` parsed as Markdown with the chunker's parser (for blocks) and pulldown-cmark (for
    /// fenced code blocks, nested ones included).
    pub fn markdown(uri: &str, text: &str) -> Result<Self, DocumentError> {
        let ctx = RequestContext::local("quality");
        let (id, corpus) = (DocumentId::from(uri), CorpusId::from("quality"));
        let source = SourceBytes {
            document_id: &id,
            corpus_id: &corpus,
            source_uri: uri,
            bytes: text.as_bytes(),
        };
        let parsed = parse_document(&ctx, DocumentType::Markdown, source).map_err(|err| DocumentError {
            uri: uri.to_owned(),
            message: err.to_string(),
        })?;
        let blocks = parsed
            .blocks
            .iter()
            .map(|block| Region {
                range: block.span.range(),
                block_type: block.block_type,
            })
            .collect();
        Ok(Self {
            fences: fences(text),
            text: parsed.document.text,
            blocks,
        })
    }

    /// The document's text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The block holding byte `at`, if any.
    fn block_at(&self, at: usize) -> Option<&Region> {
        let after = self.blocks.partition_point(|b| b.range.start <= at);
        self.blocks[..after].last().filter(|b| at < b.range.end)
    }

    /// The fenced code block strictly inside which `at` lies (after its first byte, before its
    /// end).
    fn fence_around(&self, at: usize) -> Option<&Fence> {
        self.fences.iter().find(|f| f.range.start < at && at < f.range.end)
    }

    /// Where a chunk starting at `at` starts.
    pub fn start_kind(&self, at: usize) -> Start {
        let Some(block) = self.block_at(at) else {
            return Start::Block;
        };
        if block.range.start == at {
            return Start::Block;
        }
        let line_start = is_line_start(&self.text, at);
        let code = matches!(block.block_type, BlockType::Code | BlockType::Other) || self.fence_around(at).is_some();
        if code && line_start {
            return Start::Sentence;
        }
        if !code && sentence_starts(&self.text, block.range.clone(), true).contains(&at) {
            return Start::Sentence;
        }
        if line_start || sentence_starts(&self.text, block.range.clone(), false).contains(&at) {
            Start::MidSentence
        } else {
            Start::MidLine
        }
    }

    /// The sentence (soft line breaks read as spaces) that holds `at`, in the block holding it.
    pub fn sentence_around(&self, at: usize) -> Option<Range<usize>> {
        let block = self.block_at(at)?;
        let starts = sentence_starts(&self.text, block.range.clone(), true);
        let begin = starts.iter().copied().rfind(|s| *s <= at).unwrap_or(block.range.start);
        let end = starts.iter().copied().find(|s| *s > at).unwrap_or(block.range.end);
        Some(begin..end)
    }

    /// Whether a chunk of `span` starts on the closing fence line of a fenced code block that
    /// opened before it.
    pub fn starts_with_closing_fence(&self, span: Range<usize>) -> bool {
        self.fence_around(span.start)
            .and_then(|f| f.closing_line)
            .is_some_and(|closing| span.start >= closing)
    }

    /// The fenced code block a chunk of `span` starts or ends strictly inside, if any.
    pub fn unbalanced_fence(&self, span: Range<usize>) -> Option<Range<usize>> {
        self.fence_around(span.start)
            .or_else(|| self.fence_around(span.end))
            .map(|f| f.range.clone())
    }

    /// Whether every block `span` touches is a heading (and it touches one at least).
    pub fn heading_only(&self, span: Range<usize>) -> bool {
        let mut touched = self
            .blocks
            .iter()
            .filter(|b| b.range.start < span.end && span.start < b.range.end)
            .peekable();
        touched.peek().is_some() && touched.all(|b| b.block_type == BlockType::Heading)
    }
}

/// Whether only spaces and tabs precede `at` on its line.
fn is_line_start(text: &str, at: usize) -> bool {
    let before = &text[..at];
    let line = before.rfind(['\n', '\r']).map_or(before, |i| &before[i + 1..]);
    line.chars().all(|c| c == ' ' || c == '\t')
}

/// The trimmed sentence starts of `range`, by UAX #29; with `soft_breaks_as_spaces`, a single line
/// break between two non-blank lines is read as a space first (same byte length, so offsets hold).
fn sentence_starts(text: &str, range: Range<usize>, soft_breaks_as_spaces: bool) -> Vec<usize> {
    let slice = &text[range.clone()];
    let read = if soft_breaks_as_spaces {
        soften_line_breaks(slice)
    } else {
        slice.to_owned()
    };
    read.split_sentence_bound_indices()
        .filter_map(|(offset, sentence)| {
            let lead = sentence.len() - sentence.trim_start().len();
            (lead < sentence.len()).then_some(range.start + offset + lead)
        })
        .collect()
}

/// `text` with every line break that joins two non-blank lines replaced by spaces.
fn soften_line_breaks(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = bytes.to_vec();
    let mut i = 0;
    while i < bytes.len() {
        let len = match bytes[i] {
            b'\r' if bytes.get(i + 1) == Some(&b'\n') => 2,
            b'\r' | b'\n' => 1,
            _ => {
                i += 1;
                continue;
            }
        };
        let before = text[..i].rsplit(['\n', '\r']).next().unwrap_or_default();
        let after = text[i + len..].split(['\n', '\r']).next().unwrap_or_default();
        if !before.trim().is_empty() && !after.trim().is_empty() {
            out[i..i + len].fill(b' ');
        }
        i += len;
    }
    // Only ASCII line-break bytes were replaced by ASCII spaces, so the text is still UTF-8.
    String::from_utf8(out).unwrap_or_else(|_| text.to_owned())
}

/// The fenced code blocks of `text`, nested ones included, each trimmed of trailing whitespace.
fn fences(text: &str) -> Vec<Fence> {
    let options = Options::ENABLE_TABLES | Options::ENABLE_FOOTNOTES | Options::ENABLE_YAML_STYLE_METADATA_BLOCKS;
    let mut out = Vec::new();
    for (event, range) in Parser::new_ext(text, options).into_offset_iter() {
        if let Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(_))) = event {
            let end = range.start + text[range.clone()].trim_end().len();
            let whole = range.start..end;
            let body = &text[whole.clone()];
            let last_line_start = body.rfind(['\n', '\r']).map(|i| whole.start + i + 1);
            let closing_line = last_line_start.filter(|&at| {
                let line = text[at..end].trim_start_matches([' ', '\t', '>']);
                line.starts_with("```") || line.starts_with("~~~")
            });
            out.push(Fence {
                range: whole,
                closing_line,
            });
        }
    }
    out
}

/// The measures of a set of chunks.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tally {
    /// Documents measured.
    pub documents: usize,
    /// Chunks measured.
    pub chunks: usize,
    /// Chunks whose every block is a heading.
    pub heading_only: usize,
    /// Chunks under 16 tokens.
    pub under_16_tokens: usize,
    /// Every chunk's `token_count`.
    pub sizes: Vec<usize>,
    /// Chunks (after the first of a document) starting mid-line.
    pub mid_line: usize,
    /// Chunks (after the first of a document) starting mid-sentence, mid-line ones included.
    pub mid_sentence: usize,
    /// Of `mid_sentence`, those inside a sentence longer than the budget.
    pub mid_sentence_forced: usize,
    /// Chunks starting on the closing fence line of a code block that opened before them.
    pub closing_fence_starts: usize,
    /// Chunks starting or ending strictly inside a fenced code block.
    pub unbalanced_fences: usize,
    /// Of `unbalanced_fences`, those whose code block has more tokens than the budget.
    pub unbalanced_fences_forced: usize,
    /// Chunks that start before the end of an earlier chunk of their document.
    pub overlapping: usize,
    /// Tokens of the repeated stretches, summed over the overlapping chunks.
    pub overlap_tokens: usize,
    /// Chunks whose span could not be measured (no span, or not a slice of the file).
    pub unmeasured: usize,
    /// One line per chunk that starts mid-sentence, with a closing fence, or holds an unbalanced
    /// fence: its id, what, and how it starts.
    pub findings: Vec<String>,
}

/// A counting failure while measuring.
#[derive(Debug, thiserror::Error)]
#[error("{uri}: counting tokens: {source}")]
pub struct MeasureError {
    uri: String,
    source: rag_core::TokenizerError,
}

impl Tally {
    /// Adds the chunks of one document (in position order) to the tally; `max_tokens` is the
    /// budget they were cut for, `counter` the tokenizer overlap and forced cuts are counted in.
    pub fn add_document(
        &mut self,
        document: &Document,
        chunks: &[Chunk],
        max_tokens: usize,
        counter: &dyn TokenCounter,
    ) -> Result<(), MeasureError> {
        let count = |range: Range<usize>| {
            counter.count(&document.text[range]).map_err(|source| MeasureError {
                uri: chunks.first().map_or_else(String::new, |c| c.document_id.to_string()),
                source,
            })
        };
        self.documents += 1;
        let mut covered_to: Option<usize> = None;
        for chunk in chunks {
            self.chunks += 1;
            if let Some(tokens) = chunk.token_count {
                self.sizes.push(tokens);
                if tokens < 16 {
                    self.under_16_tokens += 1;
                }
            }
            let Some(span) = chunk
                .span
                .map(|s| s.range())
                .filter(|r| document.text.get(r.clone()).is_some_and(|s| Some(s) == chunk.content()))
            else {
                self.unmeasured += 1;
                continue;
            };
            if document.heading_only(span.clone()) {
                self.heading_only += 1;
            }
            let excerpt: String = document.text[span.clone()].chars().take(60).collect();
            let mut find = |what: &str| self.findings.push(format!("{}: {what}: {excerpt:?}", chunk.id));
            if covered_to.is_some() {
                let kind = document.start_kind(span.start);
                if matches!(kind, Start::MidSentence | Start::MidLine) {
                    let sentence = document.sentence_around(span.start);
                    let forced = match sentence {
                        Some(sentence) => count(sentence)? > max_tokens,
                        None => false,
                    };
                    find(match (kind, forced) {
                        (_, true) => "starts inside a sentence over the budget",
                        (Start::MidLine, false) => "starts mid-line",
                        _ => "starts mid-sentence, at a line start",
                    });
                    self.mid_sentence += 1;
                    self.mid_sentence_forced += usize::from(forced);
                    self.mid_line += usize::from(kind == Start::MidLine);
                }
            }
            if document.starts_with_closing_fence(span.clone()) {
                find("starts with a closing fence");
                self.closing_fence_starts += 1;
            }
            if let Some(fence) = document.unbalanced_fence(span.clone()) {
                let forced = count(fence)? > max_tokens;
                find(if forced {
                    "cuts a code block over the budget"
                } else {
                    "cuts a code block"
                });
                self.unbalanced_fences += 1;
                self.unbalanced_fences_forced += usize::from(forced);
            }
            if let Some(previous_end) = covered_to
                && span.start < previous_end
            {
                self.overlapping += 1;
                self.overlap_tokens += count(span.start..previous_end.min(span.end))?;
            }
            covered_to = Some(covered_to.map_or(span.end, |end| end.max(span.end)));
        }
        Ok(())
    }

    /// The `p`-th percentile (0 to 100) of the chunk sizes, nearest rank; 0 without chunks.
    pub fn size_percentile(&self, p: usize) -> usize {
        let mut sizes = self.sizes.clone();
        sizes.sort_unstable();
        if sizes.is_empty() {
            return 0;
        }
        let rank = (p * sizes.len()).div_ceil(100).clamp(1, sizes.len());
        sizes[rank - 1]
    }

    /// The header of [`row`](Self::row)'s table.
    pub fn header() -> &'static str {
        "| corpus | chunks | heading-only | under 16 tok | tokens p10 / p50 / p90 | mid-line starts | \
         mid-sentence starts (forced) | closing-fence starts | unbalanced fences (forced) | \
         overlapping chunks | overlap tokens (mean) |\n\
         |---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
    }

    /// One Markdown table row for the corpus `name`.
    pub fn row(&self, name: &str) -> String {
        let mean = if self.overlapping == 0 {
            0.0
        } else {
            self.overlap_tokens as f64 / self.overlapping as f64
        };
        format!(
            "| {name} | {} | {} | {} | {} / {} / {} | {} | {} ({}) | {} | {} ({}) | {} | {} ({mean:.1}) |",
            self.chunks,
            self.heading_only,
            self.under_16_tokens,
            self.size_percentile(10),
            self.size_percentile(50),
            self.size_percentile(90),
            self.mid_line,
            self.mid_sentence,
            self.mid_sentence_forced,
            self.closing_fence_starts,
            self.unbalanced_fences,
            self.unbalanced_fences_forced,
            self.overlapping,
            self.overlap_tokens,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rag_chunker::TiktokenCounter;

    fn chunk(document: &Document, id: usize, range: Range<usize>) -> Chunk {
        let mut c = Chunk::with_content(format!("d#{id}"), "d", "t", &document.text()[range.clone()]);
        c.position = id;
        c.span = Some(range.into());
        c.token_count = Some(TiktokenCounter::cl100k().count(c.content().unwrap()).unwrap());
        c
    }

    #[test]
    fn soft_line_breaks_join_lines_and_blank_lines_do_not() {
        assert_eq!(soften_line_breaks("a\nb\r\nc\n\nd\r\re"), "a b  c\n\nd\r\re");
    }

    #[test]
    fn starts_are_classified_by_block_sentence_line_and_word() {
        let text = "# T\n\nFirst sentence goes\non here. Second one.\n\n- item\n  wraps\n";
        let d = Document::markdown("a.md", text).unwrap();
        let at = |s: &str| text.find(s).unwrap();
        assert_eq!(d.start_kind(at("First")), Start::Block);
        assert_eq!(d.start_kind(at("on here")), Start::MidSentence);
        assert_eq!(d.start_kind(at("Second")), Start::Sentence);
        assert_eq!(d.start_kind(at("goes")), Start::MidLine);
        assert_eq!(d.start_kind(at("- item")), Start::Block);
        assert_eq!(d.start_kind(at("wraps")), Start::MidSentence);
        assert_eq!(d.sentence_around(at("on here")), Some(at("First")..at("Second")));
    }

    #[test]
    fn fences_nested_in_lists_count_and_a_closing_fence_start_is_found() {
        let text = "Intro.\n\n```sh\nls\n```\n\nAfter.\n\n- step:\n  ```\n  make\n  ```\n";
        let d = Document::markdown("a.md", text).unwrap();
        assert_eq!(d.fences.len(), 2);
        let close = text.find("```\n\nAfter").unwrap();
        assert!(d.starts_with_closing_fence(close..text.find("After.").unwrap() + 6));
        assert!(d.unbalanced_fence(close..text.len()).is_some());
        assert!(d.unbalanced_fence(0..text.find("After").unwrap()).is_none());
        let nested = text.find("make").unwrap();
        assert_eq!(d.start_kind(nested), Start::Sentence, "a line of code");
        assert!(d.unbalanced_fence(0..nested + 4).is_some());
    }

    #[test]
    fn a_tally_counts_overlap_heading_only_chunks_and_mid_sentence_starts() {
        let text = "# Title\n\nOne two three four. Five six\nseven eight.\n";
        let d = Document::markdown("a.md", text).unwrap();
        let at = |s: &str| text.find(s).unwrap();
        let chunks = [
            chunk(&d, 0, 0..7),
            chunk(&d, 1, at("One")..at("Five") + 4),
            chunk(&d, 2, at("Five")..text.len() - 1),
            chunk(&d, 3, at("seven")..text.len() - 1),
        ];
        let mut tally = Tally::default();
        tally
            .add_document(&d, &chunks, 512, &TiktokenCounter::cl100k())
            .unwrap();
        assert_eq!(
            (
                tally.chunks,
                tally.heading_only,
                tally.overlapping,
                tally.mid_sentence,
                tally.mid_line
            ),
            (4, 1, 2, 1, 0)
        );
        // "Five" repeated by the third chunk, "seven eight." by the fourth.
        assert_eq!(tally.overlap_tokens, 1 + 3);
        assert_eq!(tally.mid_sentence_forced, 0);
        let mut sorted = tally.sizes.clone();
        sorted.sort_unstable();
        assert_eq!(
            [0, 50, 100].map(|p| tally.size_percentile(p)),
            [sorted[0], sorted[1], sorted[3]]
        );
        // With a budget below the sentence's tokens, the cut inside it is forced.
        let mut tight = Tally::default();
        tight.add_document(&d, &chunks, 3, &TiktokenCounter::cl100k()).unwrap();
        assert_eq!(tight.mid_sentence_forced, 1);
    }
}
