//! Merging packed chunks of one document whose spans overlap or touch into one excerpt, so the
//! text they share (a chunker's overlap) is printed, and paid for, once.

use std::collections::BTreeMap;

use rag_core::{Chunk, Span};

/// A run of chunks shown as one text: indices into the slice given to [`merge_adjacent`], in
/// document order, and the text they cover.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergedRun {
    /// The chunks of the run, by index into the input, in document order.
    pub members: Vec<usize>,
    /// The span the run covers, when its chunks have spans.
    pub span: Option<Span>,
    /// The run's text: each chunk's content once, the overlap printed once. `None` for a chunk
    /// without content.
    pub text: Option<String>,
}

/// Groups `chunks` into runs: chunks of one document whose spans overlap or touch (`b.start <=
/// a.end`) become one run whose text is their union, in document order; every other chunk is a
/// run of its own. Runs come in order of their first member's index.
///
/// Spans make this exact: a chunk joins a run only if its content is as long as its span and the
/// bytes it shares with the run are the same text, so chunks of different versions of a document,
/// or spans that do not describe the content, are never merged.
///
/// ```
/// use rag_core::{Chunk, Span};
/// use rag_packer::merge_adjacent;
///
/// let text = "Streams end when the source is drained. Call end() to finish writing.";
/// let piece = |id: &str, start: usize, end: usize| {
///     let mut c = Chunk::with_content(id, "doc", "t", &text[start..end]);
///     c.span = Some(Span::new(start, end));
///     c
/// };
/// // Two chunks sharing "the source is drained." and one far away.
/// let runs = merge_adjacent(&[&piece("b", 17, 69), &piece("a", 0, 39)]);
/// assert_eq!(runs.len(), 1);
/// assert_eq!(runs[0].members, [1, 0]);
/// assert_eq!(runs[0].text.as_deref(), Some(text));
/// ```
pub fn merge_adjacent(chunks: &[&Chunk]) -> Vec<MergedRun> {
    // Mergeable chunks by document, in span order; the rest are runs of their own.
    let mut by_document: BTreeMap<&str, Vec<(Span, usize)>> = BTreeMap::new();
    let mut runs: Vec<MergedRun> = Vec::new();
    for (k, chunk) in chunks.iter().enumerate() {
        match (chunk.span, chunk.content()) {
            (Some(span), Some(content)) if span.end >= span.start && span.end - span.start == content.len() => {
                by_document
                    .entry(chunk.document_id.as_str())
                    .or_default()
                    .push((span, k));
            }
            _ => runs.push(MergedRun {
                members: vec![k],
                span: chunk.span,
                text: chunk.content().map(str::to_owned),
            }),
        }
    }
    for (_, mut pieces) in by_document {
        pieces.sort_unstable_by_key(|&(span, k)| (span.start, span.end, k));
        let mut current: Option<MergedRun> = None;
        for (span, k) in pieces {
            let content = chunks[k].content().unwrap_or_default();
            if let Some(run) = current.as_mut()
                && let Some(run_span) = run.span
                && span.start <= run_span.end
                && extend(run, run_span, span, content)
            {
                run.members.push(k);
                continue;
            }
            runs.extend(current.take());
            current = Some(MergedRun {
                members: vec![k],
                span: Some(span),
                text: Some(content.to_owned()),
            });
        }
        runs.extend(current);
    }
    runs.sort_unstable_by_key(|run| run.members.iter().copied().min().unwrap_or(usize::MAX));
    runs
}

/// Adds the part of `content` (at `span`) past the run's end to the run, if the bytes they share
/// agree; returns whether it did.
fn extend(run: &mut MergedRun, run_span: Span, span: Span, content: &str) -> bool {
    let Some(text) = run.text.as_mut() else {
        return false;
    };
    let shared_end = run_span.end.min(span.end);
    let (Some(in_run), Some(in_chunk)) = (
        text.get(span.start - run_span.start..shared_end - run_span.start),
        content.get(..shared_end - span.start),
    ) else {
        return false;
    };
    if in_run != in_chunk {
        return false;
    }
    if span.end > run_span.end {
        let Some(rest) = content.get(run_span.end - span.start..) else {
            return false;
        };
        text.push_str(rest);
        run.span = Some(Span::new(run_span.start, span.end));
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "Alpha beta gamma. Delta epsilon zeta. Eta theta iota. Kappa lambda mu.";

    fn piece(id: &str, doc: &str, start: usize, end: usize) -> Chunk {
        let mut c = Chunk::with_content(id, doc, "t", &TEXT[start..end]);
        c.span = Some(Span::new(start, end));
        c
    }

    fn members(runs: &[MergedRun]) -> Vec<Vec<usize>> {
        runs.iter().map(|r| r.members.clone()).collect()
    }

    #[test]
    fn overlapping_touching_and_contained_chunks_merge_in_document_order() {
        let chunks = [
            piece("c", "d", 37, 54), // touches b's end
            piece("a", "d", 0, 24),  // overlaps b
            piece("b", "d", 18, 37), // overlaps a
            piece("x", "d", 20, 30), // inside the run
            piece("far", "d", 60, 70),
        ];
        let refs: Vec<&Chunk> = chunks.iter().collect();
        let runs = merge_adjacent(&refs);
        assert_eq!(members(&runs), [vec![1, 2, 3, 0], vec![4]]);
        assert_eq!(runs[0].text.as_deref(), Some(&TEXT[0..54]));
        assert_eq!(runs[0].span, Some(Span::new(0, 54)));
        assert_eq!(runs[1].text.as_deref(), Some(&TEXT[60..70]));
    }

    #[test]
    fn different_documents_and_disagreeing_text_never_merge() {
        let mut edited = piece("b2", "d", 18, 37);
        edited.set_body(Some("delta epsilon zeta.".into()), None).unwrap();
        let chunks = [piece("a", "d", 0, 24), piece("b", "e", 18, 37), edited];
        let refs: Vec<&Chunk> = chunks.iter().collect();
        assert_eq!(members(&merge_adjacent(&refs)), [vec![0], vec![1], vec![2]]);
    }

    #[test]
    fn chunks_without_spans_or_with_wrong_spans_stay_alone() {
        let plain = Chunk::with_content("p", "d", "t", "no span");
        let mut lying = piece("l", "d", 0, 24);
        lying.span = Some(Span::new(0, 99));
        let remote = Chunk::with_content_ref("r", "d", "t", "s3://x");
        let a = piece("a", "d", 0, 24);
        let refs = [&plain, &lying, &remote, &a];
        let runs = merge_adjacent(&refs);
        assert_eq!(members(&runs), [vec![0], vec![1], vec![2], vec![3]]);
        assert_eq!(runs[2].text, None);
    }
}
