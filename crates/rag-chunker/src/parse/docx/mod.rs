//! Word files (`.docx`, Office Open XML): the paragraphs, lists, tables and notes of the document
//! as a Markdown-flavoured text rendition whose source map names, for every stretch, the part and
//! the paragraph it comes from.
//!
//! A DOCX is a zip archive of XML parts. The parser reads the main document part
//! (`word/document.xml`, found through `_rels/.rels`), the styles and numbering it refers to, and
//! its footnotes and endnotes, within documented limits: [`MAX_DECOMPRESSED_BYTES`] of parts,
//! [`MAX_COMPRESSION_RATIO`], [`MAX_ENTRIES`] zip entries, [`MAX_XML_DEPTH`] nested elements and
//! [`MAX_RENDITION_BYTES`] of rendition. A DTD is refused, so no entity is ever expanded.
//!
//! Behind the cargo feature `docx` (on in the CLI and the Python wheel); without it,
//! [`DocxParser`] returns [`ParseError::NotBuilt`].

#[cfg(feature = "docx")]
mod body;
#[cfg(feature = "docx")]
mod package;
#[cfg(feature = "docx")]
mod styles;
#[cfg(feature = "docx")]
mod symbol_font;
#[cfg(feature = "docx")]
mod xml;

use rag_core::{ParseError, ParsedDocument, RequestContext, SourceBytes};

/// The most decompressed bytes of parts the parser reads from one file (document, styles,
/// numbering, notes, relationships); past it, [`ParseError::LimitExceeded`].
pub const MAX_DECOMPRESSED_BYTES: u64 = 256 << 20;

/// The highest ratio of decompressed to compressed bytes of a part, checked once a part has
/// given [`RATIO_CHECK_AFTER`] bytes. Deflate reaches about 1032:1 on repeated bytes, which is
/// what a zip bomb holds; Word's XML compresses 5:1 to 30:1.
pub const MAX_COMPRESSION_RATIO: u64 = 200;

/// The bytes of a part decompressed before [`MAX_COMPRESSION_RATIO`] is checked (a small part
/// of repeated markup can compress better than a large one).
pub const RATIO_CHECK_AFTER: u64 = 1 << 20;

/// The most entries a zip archive may hold, counted from the archive's bytes before its central
/// directory is parsed (so a directory of millions of empty entries costs nothing to refuse).
pub const MAX_ENTRIES: usize = 10_000;

/// The deepest nesting of XML elements in a part.
pub const MAX_XML_DEPTH: usize = 256;

/// The largest text rendition of one file.
pub const MAX_RENDITION_BYTES: usize = 256 << 20;

/// The most grid columns one table cell spans (`w:gridSpan`), Word's limit of 63 columns: a
/// larger span is read as 63, so a tiny cell cannot expand into a huge row.
pub const MAX_GRID_SPAN: usize = 63;

builtin_parser! {
    /// Reads Word files (`.docx`): headings from paragraph styles (`Title`, `Heading 1` to `6`,
    /// through `basedOn` and outline levels), list items with their bullets or numbers, tables
    /// one row per block, code, quotes, captions, hyperlinks as `[text](url)`, footnotes and
    /// endnotes after the paragraph that cites them. The document's text is the rendition; its
    /// [`rendition`](ParsedDocument::rendition) maps every paragraph to its part and index
    /// (`Origin::Paragraphs`) and counts what was left out (headers and footers as
    /// `page_furniture`, tracked deletions as `deleted`, ...).
    ///
    /// Needs the cargo feature `docx`; without it, every file is [`ParseError::NotBuilt`].
    ///
    /// ```
    /// use rag_chunker::parse::DocxParser;
    /// use rag_core::{CorpusId, DocumentId, ParseError, Parser, RequestContext, SourceBytes};
    ///
    /// let (id, corpus) = (DocumentId::from("r"), CorpusId::from("c"));
    /// // A .doc (Word 97) file is an OLE compound file, not a zip archive.
    /// let bytes = b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1 rest of the file";
    /// let err = DocxParser.parse(&RequestContext::local("t"),
    ///     SourceBytes { document_id: &id, corpus_id: &corpus, source_uri: "report.docx", bytes })
    ///     .unwrap_err();
    /// # #[cfg(feature = "docx")]
    /// assert!(err.to_string().contains("a Word 97-2003 .doc"), "{err}");
    /// # #[cfg(not(feature = "docx"))]
    /// # assert!(matches!(err, ParseError::NotBuilt { .. }));
    /// ```
    DocxParser("docx") => parse_docx
}

#[cfg(not(feature = "docx"))]
fn parse_docx(_ctx: &RequestContext, source: SourceBytes<'_>) -> Result<ParsedDocument, ParseError> {
    Err(ParseError::NotBuilt {
        source_uri: source.source_uri.to_owned(),
        format: "docx".to_owned(),
        feature: "docx".to_owned(),
    })
}

/// A size as the limits name it: `256 MiB`, `1 MiB`, or bytes.
#[cfg_attr(not(feature = "docx"), allow(dead_code))]
fn format_bytes(bytes: u64) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{bytes} bytes")
    }
}

#[cfg(feature = "docx")]
fn parse_docx(_ctx: &RequestContext, source: SourceBytes<'_>) -> Result<ParsedDocument, ParseError> {
    use std::collections::BTreeSet;

    use body::{NoteOf, NoteRef, Notes, PartContext, Rendering, walk_part};
    use package::Package;
    use rag_core::Rendition;
    use styles::{Numbering, Styles};

    let source_uri = source.source_uri;
    let mut package = Package::open(source_uri, source.bytes)?;
    let package_relationships = package.relationships("")?;
    let main = match package_relationships.part_of_kind("officeDocument") {
        Some(part) if package.has_part(part) => part.to_owned(),
        _ if package.has_part("word/document.xml") => "word/document.xml".to_owned(),
        _ => return Err(package.no_document()),
    };
    let relationships = package.relationships(&main)?;
    let mut rendering = Rendering::new(source_uri);
    // Parts read for their structure, not their text: counted as the package's machinery.
    let mut structure_bytes = 0u64;

    let read_structure = |package: &mut Package<'_>, kind: &str| -> Result<Option<(String, String)>, ParseError> {
        let Some(part) = relationships.part_of_kind(kind).map(str::to_owned) else {
            return Ok(None);
        };
        Ok(package.read_part(&part)?.map(|xml| (part, xml)))
    };
    let styles = match read_structure(&mut package, "styles")? {
        Some((part, xml)) => {
            structure_bytes += xml.len() as u64;
            Styles::parse(source_uri, &part, &xml)?
        }
        None => Styles::default(),
    };
    let mut numbering = match read_structure(&mut package, "numbering")? {
        Some((part, xml)) => {
            structure_bytes += xml.len() as u64;
            Numbering::parse(source_uri, &part, &xml)?
        }
        None => Numbering::default(),
    };
    // Link targets written into the rendition are bounded by the size of the text parts, so a
    // long target cited by many tiny links cannot multiply the output.
    let mut url_budget = 0usize;

    let note_parts: [(&str, NoteOf); 2] = [("footnotes", NoteRef::Footnote), ("endnotes", NoteRef::Endnote)];
    for (kind, note_of) in note_parts {
        let Some((part, xml)) = read_structure(&mut package, kind)? else {
            continue;
        };
        let part_relationships = package.relationships(&part)?;
        url_budget += xml.len();
        let mut notes = Notes::default();
        let ctx = PartContext {
            styles: &styles,
            numbering: &mut numbering,
            relationships: &part_relationships,
            notes_kind: Some(note_of),
            url_budget: &mut url_budget,
        };
        let account = walk_part(source_uri, &part, &xml, ctx, &mut notes)?;
        rendering.account(xml.len(), account);
        rendering.add_notes(&part, notes);
    }

    let xml = package.read_part(&main)?.ok_or_else(|| package.no_document())?;
    url_budget += xml.len();
    let ctx = PartContext {
        styles: &styles,
        numbering: &mut numbering,
        relationships: &relationships,
        notes_kind: None,
        url_budget: &mut url_budget,
    };
    let account = walk_part(source_uri, &main, &xml, ctx, &mut rendering)?;
    rendering.account(xml.len(), account);
    drop(xml);
    rendering.finish()?;

    // What the rendition leaves out of the rest of the package, as the archive declares it.
    let furniture: BTreeSet<String> = ["header", "footer"]
        .iter()
        .flat_map(|kind| relationships.parts_of_kind(kind))
        .map(str::to_lowercase)
        .collect();
    let comments: BTreeSet<String> = [
        "comments",
        "commentsExtended",
        "commentsIds",
        "commentsExtensible",
        "people",
    ]
    .iter()
    .flat_map(|kind| relationships.parts_of_kind(kind))
    .map(str::to_lowercase)
    .collect();
    for (name, size) in package.unread_entries() {
        let lower = name.to_lowercase();
        let kind = if furniture.contains(&lower) {
            "page_furniture"
        } else if comments.contains(&lower) {
            "comment"
        } else if lower.starts_with("word/media/") || lower.starts_with("word/embeddings/") {
            "media"
        } else {
            "package"
        };
        rendering.leave_out(kind, size);
    }
    rendering.leave_out("package", structure_bytes + package.relationship_bytes());

    let text = std::mem::take(&mut rendering.text);
    let blocks = super::finish_blocks(&text, std::mem::take(&mut rendering.blocks));
    let mut rendition = Rendition::new("docx", Some(source.bytes.len()));
    rendition.source_map = std::mem::take(&mut rendering.source_map);
    for (kind, bytes) in &rendering.left_out {
        rendition.leave_out(kind, usize::try_from(*bytes).unwrap_or(usize::MAX));
    }
    Ok(ParsedDocument {
        document: super::document(&source, text),
        blocks,
        rendition: Some(rendition),
    })
}
