//! What to tell a user about a document that gave no text: zero chunks, exit 0, and no word of
//! why is the silent result a front end must not give.

use rag_core::ParsedDocument;

/// How a warning that a document gave no text starts. A parser that knows better than
/// [`no_text_warning`] why (a DOCX of images only: how many) records one itself, and then
/// [`no_text_warning`] adds nothing.
pub const NO_TEXT: &str = "no text";

/// Kinds of [`Rendition::left_out`](rag_core::Rendition::left_out) that are a file's machinery,
/// not content anyone would want back: tags and attributes, a package's structure.
const MACHINERY: [&str; 2] = ["markup", "package"];

/// The warning a front end shows for a parsed document that has no text to chunk, saying why
/// (an empty file, only white space, only markup, everything left out and as what), or `None`
/// when the document has text, or when its parser already said why it has none (a warning of
/// its own that starts with [`NO_TEXT`]). Like the parsers' warnings it names no file: the front
/// end adds it (`ragctl chunk` prints `warning: FILE: no text: ...`; Python's
/// `ParsedDocument.warnings` ends with it).
///
/// ```
/// use rag_chunker::parse::{DocumentType, HtmlParser, no_text_warning, parse_document};
/// use rag_core::{CorpusId, DocumentId, Parser, RequestContext, SourceBytes};
///
/// let (id, corpus) = (DocumentId::from("d"), CorpusId::from("c"));
/// let ctx = RequestContext::local("t");
/// let parse = |uri: &'static str, bytes: &'static [u8], doc_type| {
///     let source = SourceBytes { document_id: &id, corpus_id: &corpus, source_uri: uri, bytes };
///     parse_document(&ctx, doc_type, source)
/// };
/// let page = parse("menu.html", b"<nav><a href=/>Home</a> <a href=/about>About</a></nav>", DocumentType::Html)?;
/// assert_eq!(no_text_warning(&page).as_deref(), Some("no text: all of the file was left out, as 10 B of chrome"));
/// let empty = parse("notes.md", b"", DocumentType::Markdown)?;
/// assert_eq!(no_text_warning(&empty).as_deref(), Some("no text: the file is empty"));
/// let text = parse("notes.md", b"# Notes", DocumentType::Markdown)?;
/// assert_eq!(no_text_warning(&text), None);
/// # Ok::<(), rag_core::ParseError>(())
/// ```
pub fn no_text_warning(parsed: &ParsedDocument) -> Option<String> {
    if parsed.document.text.chars().any(|c| !c.is_whitespace()) {
        return None;
    }
    if parsed.warnings().iter().any(|warning| warning.starts_with(NO_TEXT)) {
        return None;
    }
    let why = match &parsed.rendition {
        _ if parsed.document.text.is_empty() && parsed.rendition.is_none() => "the file is empty".to_owned(),
        None => "the file holds only white space".to_owned(),
        Some(rendition) if rendition.original_bytes == Some(0) => "the file is empty".to_owned(),
        Some(rendition) => {
            let mut content: Vec<(&str, usize)> = rendition
                .left_out
                .iter()
                .filter(|(kind, _)| !MACHINERY.contains(&kind.as_str()))
                .map(|(kind, bytes)| (kind.as_str(), *bytes))
                .collect();
            // The largest first; equal ones by name, so the message is the same every time.
            content.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
            if content.is_empty() {
                "the file holds markup and no text".to_owned()
            } else {
                let kinds: Vec<String> = content
                    .iter()
                    .map(|(kind, bytes)| format!("{} B of {kind}", thousands(*bytes)))
                    .collect();
                format!("all of the file was left out, as {}", kinds.join(", "))
            }
        }
    };
    Some(format!("{NO_TEXT}: {why}"))
}

/// A count with thousands separators, as messages and reports write byte counts.
///
/// ```
/// assert_eq!(rag_chunker::parse::thousands(1_234_567), "1,234,567");
/// ```
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use rag_core::{Document, Rendition};

    use super::*;

    fn parsed(text: &str, rendition: Option<Rendition>) -> ParsedDocument {
        let document = Document {
            id: "d".into(),
            corpus_id: "c".into(),
            source_uri: "d".into(),
            text: text.to_owned(),
        };
        ParsedDocument {
            rendition,
            ..ParsedDocument::new(document, Vec::new())
        }
    }

    #[test]
    fn says_why_a_document_has_no_text() {
        assert_eq!(no_text_warning(&parsed("x", None)), None);
        assert_eq!(
            no_text_warning(&parsed("", None)).as_deref(),
            Some("no text: the file is empty")
        );
        assert_eq!(
            no_text_warning(&parsed(" \n\t", None)).as_deref(),
            Some("no text: the file holds only white space")
        );
        let mut rendition = Rendition::new("pdf", Some(5000));
        rendition.leave_out("page_furniture", 312);
        rendition.leave_out("hidden", 1_204);
        rendition.leave_out("markup", 3_000);
        assert_eq!(
            no_text_warning(&parsed("", Some(rendition.clone()))).as_deref(),
            Some("no text: all of the file was left out, as 1,204 B of hidden, 312 B of page_furniture")
        );
        let mut markup = Rendition::new("html", Some(20));
        markup.leave_out("markup", 20);
        assert_eq!(
            no_text_warning(&parsed("", Some(markup))).as_deref(),
            Some("no text: the file holds markup and no text")
        );
        assert_eq!(
            no_text_warning(&parsed("", Some(Rendition::new("html", Some(0))))).as_deref(),
            Some("no text: the file is empty")
        );
        // A parser that said why is not repeated.
        rendition.warn("no text: the document is 3 images and no text");
        assert_eq!(no_text_warning(&parsed("", Some(rendition))), None);
    }
}
