//! Context templates: how one chunk is rendered as text (`{content}`, `{id}`, `{metadata.KEY}`, ...).
//!
//! Parsed once, when the template is given, so that an unknown placeholder is an error before any
//! chunk is rendered.

use std::convert::Infallible;

use rag_core::{Chunk, RenderError, RepackError};
use serde_json::Value;

/// One piece of a parsed template.
#[derive(Debug, Clone, PartialEq)]
enum Segment {
    Text(String),
    Content,
    Id,
    SourceUri,
    Score,
    HeadingPath,
    Metadata(String),
}

/// Renders each chunk through a template before the chunks are joined.
///
/// Placeholders: `{content}`, `{id}`, `{source_uri}`, `{score}`, `{heading_path}` (the titles of
/// the enclosing headings as one readable line, `Guide > Setup > Linux`), `{metadata.KEY}`; `{{`
/// and `}}` are literal braces. A missing source, score, heading path or metadata key renders as
/// nothing; a metadata value that is not a string renders as JSON. An unknown placeholder is an
/// error when the template is parsed, not when it is used.
///
/// ```
/// use rag_core::{Chunk, ChunkKind};
/// use rag_packer::ContextConfig;
///
/// let template = ContextConfig::new("[{id} from {source_uri}, {metadata.kind}] {content}")?;
/// let mut chunk = Chunk::with_content("c1", "d", "t", "Rerankers score pairs.");
/// chunk.source_uri = Some("docs/rerank.md".into());
/// chunk.set_kind(Some(ChunkKind::Body), None);
/// assert_eq!(template.render(&chunk)?, "[c1 from docs/rerank.md, body] Rerankers score pairs.");
/// assert!(ContextConfig::new("{nope}").is_err());
/// # Ok::<(), rag_core::RepackError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ContextConfig {
    template: String,
    segments: Vec<Segment>,
}

impl ContextConfig {
    /// The template `{content}`: each chunk's text as it is.
    pub fn content_only() -> Self {
        Self {
            template: "{content}".to_owned(),
            segments: vec![Segment::Content],
        }
    }

    /// Parses `template`.
    pub fn new(template: impl Into<String>) -> Result<Self, RepackError> {
        let template = template.into();
        let error = |message: String| RepackError::InvalidTemplate {
            template: template.clone(),
            message,
        };
        let mut segments = Vec::new();
        let mut text = String::new();
        let mut chars = template.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '{' if chars.peek() == Some(&'{') => {
                    chars.next();
                    text.push('{');
                }
                '}' if chars.peek() == Some(&'}') => {
                    chars.next();
                    text.push('}');
                }
                '}' => return Err(error("unmatched '}' (write '}}' for a literal brace)".to_owned())),
                '{' => {
                    let mut name = String::new();
                    loop {
                        match chars.next() {
                            Some('}') => break,
                            Some(c) => name.push(c),
                            None => return Err(error(format!("unclosed placeholder {{{name}"))),
                        }
                    }
                    let field = match name.as_str() {
                        "content" => Segment::Content,
                        "id" => Segment::Id,
                        "source_uri" => Segment::SourceUri,
                        "score" => Segment::Score,
                        "heading_path" => Segment::HeadingPath,
                        other => match other.strip_prefix("metadata.") {
                            Some(key) if !key.is_empty() => Segment::Metadata(key.to_owned()),
                            _ => {
                                return Err(error(format!(
                                    "unknown placeholder {{{other}}}; known: {{content}}, {{id}}, \
                                     {{source_uri}}, {{score}}, {{heading_path}}, {{metadata.KEY}}"
                                )));
                            }
                        },
                    };
                    if !text.is_empty() {
                        segments.push(Segment::Text(std::mem::take(&mut text)));
                    }
                    segments.push(field);
                }
                c => text.push(c),
            }
        }
        if !text.is_empty() {
            segments.push(Segment::Text(text));
        }
        Ok(Self { template, segments })
    }

    /// The template as given.
    pub fn template(&self) -> &str {
        &self.template
    }

    /// Whether the template shows the heading path itself (`{heading_path}`), so that no separate
    /// breadcrumb line is needed.
    pub fn shows_heading_path(&self) -> bool {
        self.segments.contains(&Segment::HeadingPath)
    }

    /// Whether the template is `{content}` alone: rendering adds nothing around the text.
    pub(crate) fn is_content_only(&self) -> bool {
        self.segments == [Segment::Content]
    }

    /// `chunk` rendered through the template; `{content}` of a chunk without content is an error.
    pub fn render(&self, chunk: &Chunk) -> Result<String, RenderError> {
        self.render_with(chunk, || content_of(chunk))
    }

    /// What the template puts around `chunk`'s text: `chunk` rendered with empty content.
    pub(crate) fn render_around(&self, chunk: &Chunk) -> String {
        match self.render_with(chunk, || Ok::<_, Infallible>("")) {
            Ok(text) => text,
            Err(never) => match never {},
        }
    }

    /// `chunk` rendered with the text `content` gives for `{content}`, asked for only when the
    /// template shows it.
    fn render_with<'a, E>(&self, chunk: &'a Chunk, content: impl Fn() -> Result<&'a str, E>) -> Result<String, E> {
        let mut out = String::new();
        for segment in &self.segments {
            match segment {
                Segment::Text(text) => out.push_str(text),
                Segment::Content => out.push_str(content()?),
                Segment::Id => out.push_str(chunk.id.as_str()),
                Segment::SourceUri => out.push_str(chunk.source_uri.as_deref().unwrap_or("")),
                Segment::Score => {
                    if let Some(score) = chunk.score {
                        out.push_str(&score.to_string());
                    }
                }
                Segment::HeadingPath => out.push_str(&breadcrumb(&chunk.heading_path())),
                Segment::Metadata(key) => match chunk.metadata.get(key) {
                    Some(Value::String(s)) => out.push_str(s),
                    Some(other) => out.push_str(&other.to_string()),
                    None => {}
                },
            }
        }
        Ok(out)
    }
}

pub(crate) fn content_of(chunk: &Chunk) -> Result<&str, RenderError> {
    chunk.content().ok_or_else(|| RenderError::MissingContent {
        chunk_id: chunk.id.clone(),
    })
}

/// A heading path as one readable line: the titles joined by `" > "` (`Guide > Setup > Linux`).
/// Line breaks inside a title become spaces, so the breadcrumb stays one line.
///
/// ```
/// assert_eq!(rag_packer::breadcrumb(&["File system", "Promises API", "filehandle.readLines()"]),
///     "File system > Promises API > filehandle.readLines()");
/// ```
pub fn breadcrumb(titles: &[&str]) -> String {
    let mut line = String::new();
    for (k, title) in titles.iter().enumerate() {
        if k > 0 {
            line.push_str(" > ");
        }
        line.extend(
            title
                .trim()
                .chars()
                .map(|c| if c == '\n' || c == '\r' { ' ' } else { c }),
        );
    }
    line
}

#[cfg(test)]
mod tests {
    use rag_core::{Chunk, ChunkId, RenderError};

    use super::ContextConfig;

    fn without_content() -> Chunk {
        let mut chunk = Chunk::with_content("c1", "doc", "t", "text");
        chunk.score = Some(0.5);
        let _ = chunk.set_body(None, Some("s3://bucket/c1".into()));
        chunk
    }

    #[test]
    fn a_chunk_without_content_is_a_render_error_only_where_content_is_shown() {
        let chunk = without_content();
        let shown = ContextConfig::new("[{id}] {content}").expect("a valid template");
        assert_eq!(
            shown.render(&chunk),
            Err(RenderError::MissingContent {
                chunk_id: ChunkId::new("c1")
            })
        );
        assert_eq!(
            shown.render(&chunk).map_err(|e| e.to_string()),
            Err("chunk c1 has no content to render".to_owned())
        );
        let around = ContextConfig::new("[{id}] {score}").expect("a valid template");
        assert_eq!(around.render(&chunk).as_deref(), Ok("[c1] 0.5"));
    }

    #[test]
    fn what_a_template_puts_around_a_chunk_is_its_rendering_with_empty_content() {
        let template =
            ContextConfig::new("<doc id=\"{id}\" score=\"{score}\">{content}</doc>").expect("a valid template");
        let chunk = Chunk::with_content("c2", "doc", "t", "the text");
        let mut emptied = chunk.clone();
        let _ = emptied.set_body(Some(String::new()), None);
        assert_eq!(
            template.render_around(&chunk),
            template.render(&emptied).expect("content is there")
        );
        assert_eq!(template.render_around(&chunk), "<doc id=\"c2\" score=\"\"></doc>");
        assert_eq!(
            template.render_around(&without_content()),
            "<doc id=\"c1\" score=\"0.5\"></doc>"
        );
    }
}
