//! The rules every [`Chunker`] keeps, one function each, and [`check_chunker`] that runs them all.
//!
//! Each rule takes the chunker's output (and what it needs of the input) and returns a description
//! of every chunk that breaks it; an empty list means the rule holds.

use std::collections::{HashMap, HashSet};

use rag_core::{Chunk, Chunker, Document, ParsedDocument, RequestContext, TokenCounter};

use crate::Report;

/// A token budget to check chunks against: the chunker's `max_tokens` and its tokenizer.
#[derive(Clone, Copy)]
pub struct Budget<'a> {
    /// No chunk may have more tokens than this.
    pub max_tokens: usize,
    /// The tokenizer the chunker was configured with.
    pub counter: &'a dyn TokenCounter,
}

/// Every rule [`check_chunker`] can run, in the order it runs them.
pub const RULES: [&str; 13] = [
    "chunks_without_error",
    "deterministic",
    "ids_from_context",
    "ids_unique",
    "positions_increasing",
    "parents_earlier",
    "heading_parent_smaller_level",
    "content_or_ref",
    "within_budget",
    "exact_token_count",
    "content_matches_span",
    "nothing_lost",
    "overlap_never_crosses_heading",
];

/// Runs `chunker` twice on `parsed` and checks every rule; `budget` enables the token rules.
pub fn check_chunker(
    chunker: &dyn Chunker,
    ctx: &RequestContext,
    parsed: &ParsedDocument,
    budget: Option<Budget<'_>>,
) -> Report {
    let mut report = Report::new(parsed.document.source_uri.clone());
    let first = pollster::block_on(chunker.chunk(ctx, parsed));
    let second = pollster::block_on(chunker.chunk(ctx, parsed));
    let chunks = match (first, second) {
        (Ok(first), Ok(second)) => {
            report.rule("chunks_without_error", []);
            report.rule("deterministic", deterministic(&first, &second));
            first
        }
        (Err(err), _) | (_, Err(err)) => {
            report.rule("chunks_without_error", [format!("the chunker failed: {err}")]);
            return report;
        }
    };
    check_output(&mut report, ctx, parsed, &chunks, budget);
    report
}

/// Checks every rule that needs only one output (all but `deterministic`).
pub fn check_output(
    report: &mut Report,
    ctx: &RequestContext,
    parsed: &ParsedDocument,
    chunks: &[Chunk],
    budget: Option<Budget<'_>>,
) {
    report.rule("ids_from_context", ids_from_context(ctx, parsed, chunks));
    report.rule("ids_unique", ids_unique(chunks));
    report.rule("positions_increasing", positions_increasing(chunks));
    report.rule("parents_earlier", parents_earlier(chunks));
    report.rule("heading_parent_smaller_level", heading_parent_smaller_level(chunks));
    report.rule("content_or_ref", content_or_ref(chunks));
    if let Some(budget) = budget {
        report.rule("within_budget", within_budget(chunks, budget));
        report.rule("exact_token_count", exact_token_count(chunks, budget.counter));
    }
    report.rule("content_matches_span", content_matches_span(parsed, chunks));
    report.rule("nothing_lost", nothing_lost(parsed, chunks));
    report.rule("overlap_never_crosses_heading", overlap_never_crosses_heading(chunks));
}

/// Every chunk carries the document's id, the request's tenant and the principal's ACL labels.
pub fn ids_from_context(ctx: &RequestContext, parsed: &ParsedDocument, chunks: &[Chunk]) -> Vec<String> {
    let mut out = Vec::new();
    for c in chunks {
        if c.document_id != parsed.document.id {
            out.push(format!(
                "chunk {}: document_id {} is not {}",
                c.id, c.document_id, parsed.document.id
            ));
        }
        if c.tenant_id != ctx.tenant_id {
            out.push(format!(
                "chunk {}: tenant_id {} is not the context's {}",
                c.id, c.tenant_id, ctx.tenant_id
            ));
        }
        for label in &ctx.principal.acl_labels {
            if !c.acl_labels.contains(label) {
                out.push(format!(
                    "chunk {}: acl label {label:?} of the principal is missing",
                    c.id
                ));
            }
        }
    }
    out
}

/// No two chunks of one run share an id.
pub fn ids_unique(chunks: &[Chunk]) -> Vec<String> {
    let mut seen = HashSet::new();
    chunks
        .iter()
        .filter(|c| !seen.insert(&c.id))
        .map(|c| format!("chunk id {} appears more than once", c.id))
        .collect()
}

/// Positions are 0, 1, 2, ... in list order.
pub fn positions_increasing(chunks: &[Chunk]) -> Vec<String> {
    chunks
        .iter()
        .enumerate()
        .filter(|(i, c)| c.position != *i)
        .map(|(i, c)| format!("chunk {} at index {i} has position {}", c.id, c.position))
        .collect()
}

/// A parent is a chunk that comes earlier in the list.
pub fn parents_earlier(chunks: &[Chunk]) -> Vec<String> {
    let index: HashMap<_, _> = chunks.iter().enumerate().map(|(i, c)| (&c.id, i)).collect();
    let mut out = Vec::new();
    for (i, c) in chunks.iter().enumerate() {
        if let Some(parent) = &c.parent_id {
            match index.get(parent) {
                None => out.push(format!("chunk {}: parent {parent} is not in the output", c.id)),
                Some(&p) if p >= i => out.push(format!(
                    "chunk {} (index {i}): parent {parent} comes later (index {p})",
                    c.id
                )),
                Some(_) => {}
            }
        }
    }
    out
}

fn heading_level(chunk: &Chunk) -> Option<u64> {
    if chunk.metadata_str("kind") == Some("heading") {
        chunk.metadata.get("level").and_then(serde_json::Value::as_u64)
    } else {
        None
    }
}

/// A heading's parent is a heading of a strictly smaller level.
pub fn heading_parent_smaller_level(chunks: &[Chunk]) -> Vec<String> {
    let by_id: HashMap<_, _> = chunks.iter().map(|c| (&c.id, c)).collect();
    let mut out = Vec::new();
    for c in chunks {
        let (Some(level), Some(parent_id)) = (heading_level(c), &c.parent_id) else {
            continue;
        };
        let Some(parent) = by_id.get(parent_id) else { continue };
        match heading_level(parent) {
            Some(parent_level) if parent_level < level => {}
            Some(parent_level) => out.push(format!(
                "heading chunk {} (level {level}) has parent {} of level {parent_level}",
                c.id, parent.id
            )),
            None => out.push(format!(
                "heading chunk {} has parent {} which is not a heading",
                c.id, parent.id
            )),
        }
    }
    out
}

/// Every chunk has content or a content reference.
pub fn content_or_ref(chunks: &[Chunk]) -> Vec<String> {
    chunks
        .iter()
        .filter(|c| c.content().is_none() && c.content_ref().is_none())
        .map(|c| format!("chunk {} has neither content nor content_ref", c.id))
        .collect()
}

/// No chunk has more tokens than the budget (a chunk the checking counter fails on is reported).
pub fn within_budget(chunks: &[Chunk], budget: Budget<'_>) -> Vec<String> {
    chunks
        .iter()
        .filter_map(|c| match budget.counter.count(c.content()?) {
            Ok(n) => (n > budget.max_tokens).then(|| {
                format!(
                    "chunk {} has {n} tokens, over the budget of {}",
                    c.id, budget.max_tokens
                )
            }),
            Err(err) => Some(format!("chunk {}: cannot check its tokens: {err}", c.id)),
        })
        .collect()
}

/// `token_count` is set and equals the tokenizer's count of `content`.
pub fn exact_token_count(chunks: &[Chunk], counter: &dyn TokenCounter) -> Vec<String> {
    chunks
        .iter()
        .filter_map(|c| {
            let content = c.content()?;
            let actual = match counter.count(content) {
                Ok(actual) => actual,
                Err(err) => return Some(format!("chunk {}: cannot check its token_count: {err}", c.id)),
            };
            (c.token_count != Some(actual)).then(|| {
                format!(
                    "chunk {}: token_count is {:?}, {} counts {actual}",
                    c.id,
                    c.token_count,
                    counter.name()
                )
            })
        })
        .collect()
}

/// Where a chunk has a span and content, the content is exactly that slice of the source.
pub fn content_matches_span(parsed: &ParsedDocument, chunks: &[Chunk]) -> Vec<String> {
    let text = &parsed.document.text;
    chunks
        .iter()
        .filter_map(|c| {
            let (Some(span), Some(content)) = (c.span, c.content()) else {
                return None;
            };
            match text.get(span.range()) {
                Some(slice) if slice == content => None,
                Some(_) => Some(format!(
                    "chunk {}: content differs from source[{}..{}]",
                    c.id, span.start, span.end
                )),
                None => Some(format!(
                    "chunk {}: span {}..{} is not a valid slice of the {}-byte source",
                    c.id,
                    span.start,
                    span.end,
                    text.len()
                )),
            }
        })
        .collect()
}

/// Every non-whitespace character of the source lies inside some chunk's span (a leading
/// byte-order mark excepted: parsers skip it).
pub fn nothing_lost(parsed: &ParsedDocument, chunks: &[Chunk]) -> Vec<String> {
    let text = &parsed.document.text;
    let mut spans: Vec<(usize, usize)> = chunks.iter().filter_map(|c| c.span).map(|s| (s.start, s.end)).collect();
    spans.sort_unstable();
    let mut covered_to = 0usize;
    let mut next = spans.iter().peekable();
    let mut out = Vec::new();
    let mut lost_run: Option<(usize, usize)> = None;
    for (offset, ch) in text.char_indices() {
        while let Some(&&(start, end)) = next.peek() {
            if start > offset {
                break;
            }
            covered_to = covered_to.max(end);
            next.next();
        }
        let lost = offset >= covered_to && !ch.is_whitespace() && !(offset == 0 && ch == '\u{feff}');
        match (&mut lost_run, lost) {
            (Some((_, end)), true) => *end = offset + ch.len_utf8(),
            (None, true) => lost_run = Some((offset, offset + ch.len_utf8())),
            (Some((start, end)), false) => {
                out.push(describe_lost(text, *start, *end));
                lost_run = None;
            }
            (None, false) => {}
        }
    }
    if let Some((start, end)) = lost_run {
        out.push(describe_lost(text, start, end));
    }
    out
}

fn describe_lost(text: &str, start: usize, end: usize) -> String {
    let excerpt: String = text[start..end].chars().take(40).collect();
    format!("source bytes {start}..{end} are in no chunk: {excerpt:?}")
}

/// A body chunk never starts before the end of the heading chunk that precedes it.
pub fn overlap_never_crosses_heading(chunks: &[Chunk]) -> Vec<String> {
    let mut heading_end: Option<(usize, &Chunk)> = None;
    let mut out = Vec::new();
    for c in chunks {
        let Some(span) = c.span else { continue };
        if c.metadata_str("kind") == Some("heading") {
            heading_end = Some((span.end, c));
        } else if let Some((end, heading)) = heading_end
            && span.start < end
        {
            out.push(format!(
                "chunk {} starts at byte {}, before the end ({end}) of its heading {}",
                c.id, span.start, heading.id
            ));
        }
    }
    out
}

/// Two runs on the same input gave the same chunks.
pub fn deterministic(first: &[Chunk], second: &[Chunk]) -> Vec<String> {
    if first.len() != second.len() {
        return vec![format!(
            "first run gave {} chunks, second {}",
            first.len(),
            second.len()
        )];
    }
    first
        .iter()
        .zip(second)
        .filter(|(a, b)| a != b)
        .map(|(a, b)| {
            format!(
                "chunk at position {} differs between runs ({} vs {})",
                a.position, a.id, b.id
            )
        })
        .take(1)
        .collect()
}

/// A bound on a chunker's output that is linear in its input: no chunk's JSON takes more than
/// `max_overhead` bytes beyond its JSON-escaped content, and the contents of a document's chunks
/// add up to at most `max_repetition` times its text. [`output_linear_in_input`] checks it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputBound {
    /// The most chunks one byte of the text may be in.
    pub max_repetition: usize,
    /// The most bytes of a chunk's JSON besides its escaped content.
    pub max_overhead: usize,
}

impl OutputBound {
    /// The bound the heading-aware chunker of `rag-chunker` documents (its reference, "Output
    /// size"), stated here from its configuration rather than asked of it, so that the check
    /// holds the chunker to the documented rule:
    ///
    /// - **R**: 1 without overlap; 2 with it (a byte is in one chunk through its units, and at
    ///   most in the next chunk's overlap, which is taken from the previous chunk's units only);
    /// - **D**: 1,024 bytes for field names, punctuation and numbers, six `heading_path` titles
    ///   of at most `max_title_chars` characters, and the document id (in `id`, `document_id` and
    ///   `parent_id`), source URI, tenant, ACL labels (3 bytes more each) and tokenizer name;
    ///   strings at 6 bytes per byte (or character), their longest JSON escape.
    ///
    /// ```
    /// use rag_contract::chunker::OutputBound;
    /// use rag_core::{Document, RequestContext};
    ///
    /// let document = Document { id: "doc".into(), corpus_id: "c".into(), source_uri: "a.md".into(), text: String::new() };
    /// let bound = OutputBound::heading_aware(64, 200, "tiktoken:cl100k_base", &RequestContext::local("acme"), &document);
    /// assert_eq!(bound.max_repetition, 2);
    /// assert!(bound.max_overhead < 10_000);
    /// ```
    pub fn heading_aware(
        overlap_tokens: usize,
        max_title_chars: usize,
        tokenizer: &str,
        ctx: &RequestContext,
        document: &Document,
    ) -> Self {
        const FIXED: usize = 1024;
        let max_repetition = if overlap_tokens == 0 { 1 } else { 2 };
        let heading_path = 2 + 6 * (6 * max_title_chars + 3);
        let labels: usize = ctx.principal.acl_labels.iter().map(|label| label.len() + 3).sum();
        let strings = 3 * document.id.as_str().len()
            + document.source_uri.len()
            + ctx.tenant_id.as_str().len()
            + labels
            + tokenizer.len();
        Self {
            max_repetition,
            max_overhead: FIXED + heading_path + 6 * strings,
        }
    }

    /// The most bytes of JSON Lines (one line per chunk, each ending with a newline) that `chunks`
    /// chunks of a `text_len`-byte text may take: `6 * max_repetition * text_len + max_overhead *
    /// chunks` (6: the longest JSON escape of one byte, `\u001f`).
    pub fn max_jsonl_bytes(&self, text_len: usize, chunks: usize) -> usize {
        6usize
            .saturating_mul(self.max_repetition)
            .saturating_mul(text_len)
            .saturating_add(self.max_overhead.saturating_mul(chunks))
    }
}

/// The chunks' JSON stays linear in the source text: no chunk's JSON takes more than
/// `max_overhead` bytes beyond its JSON-escaped content, and the contents add up to at most
/// `max_repetition` times the text's length.
///
/// Not part of [`check_chunker`]: the two bounds are the chunker's to document (the heading-aware
/// chunker's are [`OutputBound::heading_aware`]). A chunker that repeats something unbounded in
/// every chunk (the whole title of a heading split into hundreds of pieces, say) writes output
/// growing with the square of its input, and breaks this rule.
pub fn output_linear_in_input(
    parsed: &ParsedDocument,
    chunks: &[Chunk],
    max_repetition: usize,
    max_overhead: usize,
) -> Vec<String> {
    let mut out = Vec::new();
    let mut content_bytes = 0usize;
    for chunk in chunks {
        let content = chunk.content().unwrap_or_default();
        content_bytes = content_bytes.saturating_add(content.len());
        let (Ok(line), Ok(escaped)) = (serde_json::to_string(chunk), serde_json::to_string(content)) else {
            out.push(format!("chunk {} cannot be written as JSON", chunk.id));
            continue;
        };
        let overhead = line.len().saturating_sub(escaped.len());
        if overhead > max_overhead {
            out.push(format!(
                "chunk {}: {overhead} bytes of JSON besides its content, over the bound of {max_overhead}",
                chunk.id
            ));
        }
    }
    let text = parsed.document.text.len();
    if content_bytes > text.saturating_mul(max_repetition) {
        out.push(format!(
            "the chunks hold {content_bytes} bytes of content, more than {max_repetition} times the \
             {text}-byte text"
        ));
    }
    out
}
