//! Rendering packed chunks as the text of a prompt: templates, breadcrumbs, merged excerpts.
//!
//! The layout of a rendered context: the pinned chunks, each through the template, then one part
//! per excerpt (a run of adjacent chunks of one document, see [`merge_adjacent`]), each preceded by
//! a breadcrumb line (its heading path, `A > B > C`) when it starts a run of excerpts from another
//! section than the one before; parts joined by the delimiter. An excerpt whose text opens a code
//! fence it does not close, or closes one it did not open, is shown with the fence balanced
//! ([`balanced_fences`](crate::balanced_fences)).

mod excerpt;
mod template;

use std::borrow::Cow;

use rag_core::{Chunk, ChunkId, ChunkKind, Excerpt, RenderError};

use crate::fences::balanced_fences;
use crate::setters::setters;

pub use self::excerpt::{MergedRun, merge_adjacent};
pub(crate) use self::template::content_of;
pub use self::template::{ContextConfig, breadcrumb};

/// How [`ContextPacker::pack_context`](crate::ContextPacker::pack_context) renders a context.
///
/// Made by [`ContextFormat::builder`] (or [`ContextFormat::default`]); the settings are read
/// through the methods named after them. Every combination is valid (the template was checked when
/// it was parsed), so [`build`](ContextFormatBuilder::build) returns the format itself.
///
/// ```
/// use rag_packer::{ContextConfig, ContextFormat};
///
/// let plain = ContextFormat::default();
/// assert!(plain.breadcrumbs() && plain.merge_adjacent());
/// // A template that shows the heading path itself needs no breadcrumb line.
/// let tagged = ContextFormat::builder(ContextConfig::new("<doc path=\"{heading_path}\">{content}</doc>")?)
///     .with_delimiter("\n")
///     .build();
/// assert!(!tagged.breadcrumbs());
/// # Ok::<(), rag_core::RepackError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ContextFormat {
    /// How each pinned chunk and each excerpt is rendered (default `{content}`).
    template: ContextConfig,
    /// What joins the rendered parts (default a blank line, `"\n\n"`).
    delimiter: String,
    /// Whether an excerpt that starts a new section is preceded by its heading path on a line of
    /// its own (default: unless the template shows `{heading_path}` itself).
    breadcrumbs: bool,
    /// Whether packed chunks of one document whose spans overlap or touch are shown as one
    /// excerpt, their shared text printed and counted once (default on).
    merge_adjacent: bool,
}

impl Default for ContextFormat {
    fn default() -> Self {
        Self::builder(ContextConfig::content_only()).build()
    }
}

/// Collects the settings of a [`ContextFormat`]; [`build`](Self::build) makes it.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextFormatBuilder {
    template: ContextConfig,
    delimiter: String,
    /// `None` until set: the default then follows from the template.
    breadcrumbs: Option<bool>,
    merge_adjacent: bool,
}

impl ContextFormatBuilder {
    /// Sets the delimiter.
    #[must_use]
    pub fn with_delimiter(mut self, delimiter: impl Into<String>) -> Self {
        self.delimiter = delimiter.into();
        self
    }

    /// Turns breadcrumb lines on or off.
    #[must_use]
    pub fn with_breadcrumbs(mut self, breadcrumbs: bool) -> Self {
        self.breadcrumbs = Some(breadcrumbs);
        self
    }

    setters! {
        /// Turns the merging of adjacent chunks on or off.
        pub fn with_merge_adjacent(merge_adjacent: bool);
    }

    /// The format; breadcrumb lines, unless set, are on when the template does not show the
    /// heading path itself.
    pub fn build(self) -> ContextFormat {
        ContextFormat {
            breadcrumbs: self.breadcrumbs.unwrap_or_else(|| !self.template.shows_heading_path()),
            template: self.template,
            delimiter: self.delimiter,
            merge_adjacent: self.merge_adjacent,
        }
    }
}

impl ContextFormat {
    /// A builder for `template` with a blank line between parts, merged excerpts, and breadcrumb
    /// lines unless the template shows the heading path itself.
    pub fn builder(template: ContextConfig) -> ContextFormatBuilder {
        ContextFormatBuilder {
            template,
            delimiter: "\n\n".to_owned(),
            breadcrumbs: None,
            merge_adjacent: true,
        }
    }

    /// A builder starting from this format, to change some of its settings.
    pub fn to_builder(&self) -> ContextFormatBuilder {
        ContextFormatBuilder {
            template: self.template.clone(),
            delimiter: self.delimiter.clone(),
            breadcrumbs: Some(self.breadcrumbs),
            merge_adjacent: self.merge_adjacent,
        }
    }

    /// How each pinned chunk and each excerpt is rendered.
    pub fn template(&self) -> &ContextConfig {
        &self.template
    }

    /// What joins the rendered parts.
    pub fn delimiter(&self) -> &str {
        &self.delimiter
    }

    /// Whether an excerpt that starts a new section is preceded by its heading path.
    pub fn breadcrumbs(&self) -> bool {
        self.breadcrumbs
    }

    /// Whether packed chunks of one document whose spans overlap or touch are one excerpt.
    pub fn merge_adjacent(&self) -> bool {
        self.merge_adjacent
    }

    /// The breadcrumb line of `chunk`'s heading path, with its line break, or `None` when
    /// breadcrumbs are off or the chunk has no heading path. A chunk of source code names its
    /// file first (`src/tool.py > class Command > def invoke`): its path names definitions, and
    /// a method means little without the file it is in.
    pub(crate) fn breadcrumb_line(&self, chunk: &Chunk) -> Option<String> {
        let mut path = chunk.heading_path();
        if chunk.kind().is_some_and(ChunkKind::is_code) {
            path.insert(0, chunk.source_uri.as_deref().unwrap_or(chunk.document_id.as_str()));
        }
        (self.breadcrumbs && !path.is_empty()).then(|| format!("{}\n", breadcrumb(&path)))
    }

    /// The rendered context: `pinned` chunks, then `runs` (members as positions in `chunks`), with
    /// the excerpts that describe the runs.
    pub(crate) fn render(
        &self,
        chunks: &[Chunk],
        pinned: &[usize],
        runs: &[MergedRun],
    ) -> Result<(String, Vec<Excerpt>), RenderError> {
        let (parts, excerpts) = self.render_parts(chunks, pinned, runs)?;
        Ok((parts.join(&self.delimiter), excerpts))
    }

    /// [`render`](Self::render) before the join: one rendered part per pinned chunk and per run,
    /// in order, to be joined by the delimiter.
    pub(crate) fn render_parts(
        &self,
        chunks: &[Chunk],
        pinned: &[usize],
        runs: &[MergedRun],
    ) -> Result<(Vec<String>, Vec<Excerpt>), RenderError> {
        let mut parts: Vec<String> = Vec::with_capacity(pinned.len() + runs.len());
        for &p in pinned {
            parts.push(self.template.render(&chunks[p])?);
        }
        let mut excerpts = Vec::with_capacity(runs.len());
        let mut previous_section: Option<(&str, Vec<&str>)> = None;
        for run in runs {
            let first = &chunks[run.members[0]];
            let mut shown = excerpt_view(chunks, run)?;
            // A code block cut by a chunk boundary is shown closed (or reopened), so it does not
            // turn the rest of the prompt into code; the fence counts in the budget like any text.
            if let Some(Cow::Owned(balanced)) = shown.content().map(balanced_fences) {
                let _ = shown.set_body(Some(balanced), None);
            }
            let section = (first.document_id.as_str(), first.heading_path());
            let breadcrumb = match self.breadcrumb_line(first) {
                Some(line) if previous_section.as_ref() != Some(&section) => Some(line),
                _ => None,
            };
            let body = self.template.render(&shown)?;
            parts.push(match &breadcrumb {
                Some(line) => format!("{line}{body}"),
                None => body,
            });
            let mut excerpt = Excerpt::new(
                run.members.iter().map(|&m| chunks[m].id.clone()).collect(),
                first.document_id.clone(),
            );
            excerpt.span = run.span;
            excerpt.heading_path = section.1.iter().map(|t| (*t).to_owned()).collect();
            excerpt.breadcrumb = breadcrumb.is_some();
            excerpts.push(excerpt);
            previous_section = Some(section);
        }
        Ok((parts, excerpts))
    }
}

/// The chunk a template renders for a run: its first chunk with the run's text as content, the
/// members' ids joined by `+`, and their best score.
fn excerpt_view(chunks: &[Chunk], run: &MergedRun) -> Result<Chunk, RenderError> {
    let first = &chunks[run.members[0]];
    if run.members.len() == 1 {
        return Ok(first.clone());
    }
    let text = match &run.text {
        Some(text) => text.clone(),
        None => content_of(first)?.to_owned(),
    };
    let mut view = first.clone();
    view.id = ChunkId::new(
        run.members
            .iter()
            .map(|&m| chunks[m].id.as_str())
            .collect::<Vec<_>>()
            .join("+"),
    );
    view.score = run
        .members
        .iter()
        .filter_map(|&m| chunks[m].score)
        .fold(None, |best: Option<f64>, s| Some(best.map_or(s, |b| b.max(s))));
    view.span = run.span;
    // A run always has content: only chunks with content are merged.
    view.set_body(Some(text), None)
        .map_err(|_| RenderError::MissingContent {
            chunk_id: first.id.clone(),
        })?;
    Ok(view)
}
