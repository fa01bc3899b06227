//! Stage 3 (before the ranking): chunks as parts of sections.
//!
//! The heading-aware chunker emits each heading as a chunk of its own (`metadata.kind =
//! "heading"`), and every chunk under it names it as `parent_id`. A heading alone answers nothing,
//! but it says what its section is about. So, among the candidates:
//!
//! - a heading chunk with a child among the candidates is not packed itself: its section's chunks
//!   carry it, and the rendered context shows it in their breadcrumb ([`carried_headings`]);
//! - a heading's relevance reaches its section: each direct child ranks at least as high as the
//!   heading ([`section_scores`]), so a retriever that matched the heading ("filehandle.readLines()")
//!   brings the section's text, not the bare title.
//!
//! Chunks without that metadata (any other producer's) are untouched: nothing here applies to them.

use std::collections::HashMap;

use rag_core::{Chunk, ChunkId};

/// Whether any of `chunks` at `candidates` carries section metadata, i.e. is a heading chunk.
/// When none does, the section stage has nothing to do.
pub(crate) fn has_sections(chunks: &[Chunk], candidates: &[usize]) -> bool {
    candidates.iter().any(|&i| chunks[i].is_heading())
}

/// Whether any of `chunks` at `candidates` was cut by a heading-aware chunker: its
/// `metadata.kind` is `"heading"` or `"body"`. Such chunks are sections of documents, valued by
/// rank under [`Objective::Auto`](crate::Objective::Auto) even when no heading was retrieved.
pub(crate) fn are_sections_of_documents(chunks: &[Chunk], candidates: &[usize]) -> bool {
    candidates.iter().any(|&i| chunks[i].kind().is_some())
}

/// The position (in `chunks`) of each candidate's parent, when the parent is itself a candidate of
/// the same document.
fn parents(chunks: &[Chunk], candidates: &[usize]) -> Vec<Option<usize>> {
    let by_id: HashMap<&ChunkId, usize> = candidates.iter().map(|&i| (&chunks[i].id, i)).collect();
    let mut parent = vec![None; chunks.len()];
    for &i in candidates {
        let chunk = &chunks[i];
        if let Some(p) = chunk.parent_id.as_ref().and_then(|id| by_id.get(id).copied())
            && p != i
            && chunks[p].document_id == chunk.document_id
        {
            parent[i] = Some(p);
        }
    }
    parent
}

/// The section structure among the candidates, by input position.
pub(crate) struct Sections {
    /// Each candidate's parent heading, when it is a candidate too.
    parent: Vec<Option<usize>>,
    /// Heading chunks with at least one child among the candidates.
    carried: Vec<bool>,
}

impl Sections {
    /// The structure of `candidates` (positions in `chunks`).
    pub(crate) fn new(chunks: &[Chunk], candidates: &[usize]) -> Self {
        let parent = parents(chunks, candidates);
        let mut carried = vec![false; chunks.len()];
        for &i in candidates {
            if let Some(p) = parent[i]
                && chunks[p].is_heading()
            {
                carried[p] = true;
            }
        }
        Self { parent, carried }
    }

    /// Whether the chunk at `position` is a heading its section's chunks carry.
    pub(crate) fn is_carried(&self, position: usize) -> bool {
        self.carried[position]
    }

    /// The parent heading of the chunk at `position`, if it is a candidate.
    pub(crate) fn parent(&self, position: usize) -> Option<usize> {
        self.parent[position]
    }
}

/// Which of `chunks` are headings carried by their sections: a heading chunk with at least one
/// child (a chunk whose `parent_id` names it, in the same document) among `chunks`.
///
/// ```
/// use rag_core::{Chunk, ChunkKind};
/// use rag_packer::carried_headings;
///
/// let mut heading = Chunk::with_content("d#0", "d", "t", "## readLines()");
/// heading.set_kind(Some(ChunkKind::Heading), None);
/// let mut body = Chunk::with_content("d#1", "d", "t", "Reads the file line by line.");
/// body.parent_id = Some("d#0".into());
/// let mut lonely = Chunk::with_content("d#7", "d", "t", "## close()");
/// lonely.set_kind(Some(ChunkKind::Heading), None);
/// assert_eq!(carried_headings(&[heading, body, lonely]), [true, false, false]);
/// ```
pub fn carried_headings(chunks: &[Chunk]) -> Vec<bool> {
    let all: Vec<usize> = (0..chunks.len()).collect();
    Sections::new(chunks, &all).carried
}

/// The scores the packer ranks by once a heading's relevance has reached its section: each chunk
/// whose parent heading is among `chunks` scores at least as high as that heading (a direct
/// child only: a document's title does not lift the whole document).
///
/// ```
/// use rag_core::{Chunk, ChunkKind};
/// use rag_packer::section_scores;
///
/// let mut heading = Chunk::with_content("d#0", "d", "t", "## readLines()");
/// heading.set_kind(Some(ChunkKind::Heading), None);
/// heading.score = Some(0.9);
/// let mut body = Chunk::with_content("d#1", "d", "t", "Reads the file line by line.");
/// body.parent_id = Some("d#0".into());
/// body.score = Some(0.2);
/// assert_eq!(section_scores(&[heading, body]), [0.9, 0.9]);
/// ```
pub fn section_scores(chunks: &[Chunk]) -> Vec<f64> {
    let all: Vec<usize> = (0..chunks.len()).collect();
    let scores: Vec<f64> = chunks.iter().map(Chunk::score_or_zero).collect();
    lift_to_headings(chunks, &Sections::new(chunks, &all), &all, &scores)
}

/// `scores` (by input position) with each candidate lifted to its parent heading's score.
pub(crate) fn lift_to_headings(
    chunks: &[Chunk],
    sections: &Sections,
    candidates: &[usize],
    scores: &[f64],
) -> Vec<f64> {
    let mut lifted = scores.to_vec();
    for &i in candidates {
        if let Some(p) = sections.parent(i)
            && chunks[p].is_heading()
            && scores[p] > lifted[i]
        {
            lifted[i] = scores[p];
        }
    }
    lifted
}

#[cfg(test)]
mod tests {
    use rag_core::ChunkKind;

    use super::*;

    fn heading(id: &str, doc: &str, parent: Option<&str>, score: f64) -> Chunk {
        let mut c = Chunk::with_content(id, doc, "t", format!("# {id}"));
        c.set_kind(Some(ChunkKind::Heading), None);
        c.parent_id = parent.map(ChunkId::from);
        c.score = Some(score);
        c
    }

    fn body(id: &str, doc: &str, parent: &str, score: f64) -> Chunk {
        let mut c = Chunk::with_content(id, doc, "t", format!("text of {id}"));
        c.set_kind(Some(ChunkKind::Body), None);
        c.parent_id = Some(parent.into());
        c.score = Some(score);
        c
    }

    /// Document `a`: the title `a#0` over the headings `a#1` (over the bodies `a#2` and `a#4`) and
    /// `a#3`, and the body `a#5`; and `b#1`, a chunk of another document naming `a#3` as parent.
    fn two_level_sections() -> [Chunk; 7] {
        [
            heading("a#0", "a", None, 1.0),
            heading("a#1", "a", Some("a#0"), 0.3),
            body("a#2", "a", "a#1", 0.1),
            heading("a#3", "a", Some("a#0"), 0.8),
            body("a#4", "a", "a#1", 0.7),
            body("a#5", "a", "a#0", 0.6),
            body("b#1", "b", "a#3", 0.4),
        ]
    }

    #[test]
    fn a_heading_is_carried_by_any_child_of_its_own_document() {
        // a#0 is carried by its child headings; b#1, of another document, does not carry a#3.
        assert_eq!(
            carried_headings(&two_level_sections()),
            [true, true, false, false, false, false, false]
        );
    }

    #[test]
    fn relevance_reaches_direct_children_only() {
        // a#2 rises to its own heading's 0.3, not to the title's 1.0; a#4 keeps its higher score;
        // b#1 does not rise to a#3 of another document.
        assert_eq!(
            section_scores(&two_level_sections()),
            [1.0, 1.0, 0.3, 1.0, 0.7, 1.0, 0.4]
        );
    }

    #[test]
    fn chunks_without_section_metadata_are_untouched() {
        let mut plain: Vec<Chunk> = (0..3)
            .map(|i| {
                let mut c = Chunk::with_content(format!("c{i}"), "d", "t", "text");
                c.score = Some(f64::from(i));
                c
            })
            .collect();
        plain[2].parent_id = Some("c0".into());
        assert!(!has_sections(&plain, &[0, 1, 2]));
        assert_eq!(carried_headings(&plain), [false; 3]);
        assert_eq!(
            section_scores(&plain),
            [0.0, 1.0, 2.0],
            "a parent that is not a heading lifts nothing"
        );
    }
}
