//! Context templates: how one chunk is rendered as text (`{content}`, `{id}`, `{metadata.KEY}`, ...).
//!
//! Parsed once, when the template is given, so that an unknown placeholder is an error before any
//! chunk is rendered.

use rag_core::{Chunk, RepackError};
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
/// use rag_core::Chunk;
/// use rag_packer::ContextConfig;
///
/// let template = ContextConfig::new("[{id} from {source_uri}, {metadata.kind}] {content}")?;
/// let mut chunk = Chunk::with_content("c1", "d", "t", "Rerankers score pairs.");
/// chunk.source_uri = Some("docs/rerank.md".into());
/// chunk.metadata.insert("kind".into(), "body".into());
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
    pub fn render(&self, chunk: &Chunk) -> Result<String, RepackError> {
        let mut out = String::new();
        for segment in &self.segments {
            match segment {
                Segment::Text(text) => out.push_str(text),
                Segment::Content => out.push_str(content_of(chunk)?),
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

pub(crate) fn content_of(chunk: &Chunk) -> Result<&str, RepackError> {
    chunk.content().ok_or_else(|| RepackError::MissingContent {
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
