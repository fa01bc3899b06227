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

#[cfg(feature = "docx")]
use std::collections::BTreeSet;

#[cfg(feature = "docx")]
use rag_core::Rendition;
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

/// Reads Word files (`.docx`): headings from paragraph styles (`Title`, `Heading 1` to `6`,
/// through `basedOn` and outline levels), list items with their bullets or numbers, tables one
/// row per block, code, quotes, captions, hyperlinks as `[text](url)`, footnotes and endnotes
/// after the paragraph that cites them. The document's text is the rendition; its
/// [`rendition`](ParsedDocument::rendition) maps every paragraph to its part and index
/// (`Origin::Paragraphs`) and counts what was left out (headers and footers as
/// `page_furniture`, tracked deletions as `deleted`, hidden text as `hidden`, ...).
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
/// let err = DocxParser::new().parse(&RequestContext::local("t"),
///     SourceBytes { document_id: &id, corpus_id: &corpus, source_uri: "report.docx", bytes })
///     .unwrap_err();
/// # #[cfg(feature = "docx")]
/// assert!(err.to_string().contains("a Word 97-2003 .doc"), "{err}");
/// # #[cfg(not(feature = "docx"))]
/// # assert!(matches!(err, ParseError::NotBuilt { .. }));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DocxParser {
    keep_hidden: bool,
}

impl DocxParser {
    /// A parser that leaves hidden text out.
    pub const fn new() -> Self {
        Self { keep_hidden: false }
    }

    /// Whether to keep hidden text (runs with `w:vanish`, `w:webHidden` or `w:specVanish`, set
    /// on the run or by its character or paragraph style) instead of leaving it out as `hidden`:
    /// Word does not show it, so by default it does not reach the chunks either.
    pub const fn keep_hidden(self, keep: bool) -> Self {
        Self { keep_hidden: keep }
    }
}

impl rag_core::Parser for DocxParser {
    fn name(&self) -> &str {
        "docx"
    }

    fn parse(&self, ctx: &RequestContext, source: SourceBytes<'_>) -> Result<ParsedDocument, ParseError> {
        parse_docx(ctx, source, *self)
    }
}

#[cfg(not(feature = "docx"))]
fn parse_docx(
    _ctx: &RequestContext,
    source: SourceBytes<'_>,
    _options: DocxParser,
) -> Result<ParsedDocument, ParseError> {
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
use body::{NoteOf, NoteRef, Notes, PartContext, Rendering, walk_part};
#[cfg(feature = "docx")]
use package::{Package, Relationships};
#[cfg(feature = "docx")]
use styles::{Numbering, Styles};

#[cfg(feature = "docx")]
fn parse_docx(
    _ctx: &RequestContext,
    source: SourceBytes<'_>,
    options: DocxParser,
) -> Result<ParsedDocument, ParseError> {
    let mut reader = DocxReader::open(source.source_uri, source.bytes, options)?;
    reader.read_notes()?;
    reader.read_body()?;
    reader.count_unread_entries();
    Ok(reader.into_document(&source))
}

/// A Word file being read: its package, the main document part with its relationships, the
/// styles and numbering the text parts use, and the rendition written so far.
#[cfg(feature = "docx")]
struct DocxReader<'a> {
    source_uri: &'a str,
    package: Package<'a>,
    main: String,
    /// The main part's XML, read to check that it is a document part, until the body is read.
    main_xml: Option<String>,
    relationships: Relationships,
    styles: Styles,
    numbering: Numbering,
    rendering: Rendering,
    /// Parts read for their structure, not their text: counted as the package's machinery.
    structure_bytes: u64,
    /// Link targets written into the rendition are bounded by the size of the text parts, so a
    /// long target cited by many tiny links cannot multiply the output.
    url_budget: usize,
    options: DocxParser,
    /// What the user must be told about the package (see [`Rendition::warnings`]).
    warnings: Vec<String>,
}

#[cfg(feature = "docx")]
impl<'a> DocxReader<'a> {
    /// Opens the package and reads what the text parts need: the main part's relationships, its
    /// styles and its numbering.
    fn open(source_uri: &'a str, bytes: &'a [u8], options: DocxParser) -> Result<Self, ParseError> {
        let mut package = Package::open(source_uri, bytes)?;
        let package_relationships = package.relationships("")?;
        let main = main_part(&mut package, &package_relationships)?;
        let relationships = package.relationships(&main.name)?;
        let mut structure_bytes = 0u64;
        let styles = match read_structure(&mut package, &relationships, "styles")? {
            Some((part, xml)) => {
                structure_bytes += xml.len() as u64;
                Styles::parse(source_uri, &part, &xml)?
            }
            None => Styles::default(),
        };
        let numbering = match read_structure(&mut package, &relationships, "numbering")? {
            Some((part, xml)) => {
                structure_bytes += xml.len() as u64;
                Numbering::parse(source_uri, &part, &xml)?
            }
            None => Numbering::default(),
        };
        Ok(Self {
            source_uri,
            package,
            main: main.name,
            main_xml: Some(main.xml),
            relationships,
            styles,
            numbering,
            rendering: Rendering::new(source_uri),
            structure_bytes,
            url_budget: 0,
            options,
            warnings: main.warning.into_iter().collect(),
        })
    }

    /// Reads the footnotes and the endnotes, which the body's references place.
    fn read_notes(&mut self) -> Result<(), ParseError> {
        let note_parts: [(&str, NoteOf); 2] = [("footnotes", NoteRef::Footnote), ("endnotes", NoteRef::Endnote)];
        for (kind, note_of) in note_parts {
            let Some((part, xml)) = read_structure(&mut self.package, &self.relationships, kind)? else {
                continue;
            };
            let part_relationships = self.package.relationships(&part)?;
            self.url_budget += xml.len();
            let mut notes = Notes::default();
            let ctx = PartContext {
                styles: &self.styles,
                numbering: &mut self.numbering,
                relationships: &part_relationships,
                notes_kind: Some(note_of),
                url_budget: &mut self.url_budget,
                keep_hidden: self.options.keep_hidden,
            };
            let account = walk_part(self.source_uri, &part, &xml, ctx, &mut notes)?;
            self.rendering.account(xml.len(), account);
            self.rendering.add_notes(&part, notes);
        }
        Ok(())
    }

    /// Reads the main document part into the rendition and writes what is still pending.
    fn read_body(&mut self) -> Result<(), ParseError> {
        let xml = match self.main_xml.take() {
            Some(xml) => xml,
            None => self
                .package
                .read_part(&self.main)?
                .ok_or_else(|| self.package.no_document())?,
        };
        self.url_budget += xml.len();
        let ctx = PartContext {
            styles: &self.styles,
            numbering: &mut self.numbering,
            relationships: &self.relationships,
            notes_kind: None,
            url_budget: &mut self.url_budget,
            keep_hidden: self.options.keep_hidden,
        };
        let account = walk_part(self.source_uri, &self.main, &xml, ctx, &mut self.rendering)?;
        self.rendering.account(xml.len(), account);
        drop(xml);
        self.rendering.finish()
    }

    /// Counts what the rendition leaves out of the rest of the package, as the archive declares
    /// it, and the parts read for their structure.
    fn count_unread_entries(&mut self) {
        let furniture: BTreeSet<String> = ["header", "footer"]
            .iter()
            .flat_map(|kind| self.relationships.parts_of_kind(kind))
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
        .flat_map(|kind| self.relationships.parts_of_kind(kind))
        .map(str::to_lowercase)
        .collect();
        for (name, size) in self.package.unread_entries() {
            let kind = unread_entry_kind(&name.to_lowercase(), &furniture, &comments);
            self.rendering.leave_out(kind, size);
        }
        let package_bytes = self.structure_bytes + self.package.relationship_bytes();
        self.rendering.leave_out("package", package_bytes);
    }

    /// The parsed document: the rendition's text and blocks, its source map and what it left out.
    fn into_document(self, source: &SourceBytes<'_>) -> ParsedDocument {
        let mut rendering = self.rendering;
        let text = std::mem::take(&mut rendering.text);
        let blocks = super::finish_blocks(&text, std::mem::take(&mut rendering.blocks));
        let mut rendition = Rendition::new("docx", Some(source.bytes.len()));
        rendition.source_map = std::mem::take(&mut rendering.source_map);
        for (kind, bytes) in &rendering.left_out {
            rendition.leave_out(kind, usize::try_from(*bytes).unwrap_or(usize::MAX));
        }
        for warning in self.warnings {
            rendition.warn(warning);
        }
        let images = rendering.images;
        if images > 0 && text.trim().is_empty() {
            let images = if images == 1 {
                "one image and no text; it is not read (run OCR on it to chunk its text)".to_owned()
            } else {
                format!("{images} images and no text; they are not read (run OCR on them to chunk their text)")
            };
            rendition.warn(format!("{}: the document is {images}", super::NO_TEXT));
        }
        ParsedDocument {
            document: super::document(source, text),
            blocks,
            rendition: Some(rendition),
        }
    }
}

/// The main document part: its name, its XML, and what the user must be told about how it was
/// found.
#[cfg(feature = "docx")]
struct MainPart {
    name: String,
    xml: String,
    warning: Option<String>,
}

/// Where the main document part is by convention, when `_rels/.rels` names none or names one
/// that is not a document.
#[cfg(feature = "docx")]
const CONVENTIONAL_MAIN: &str = "word/document.xml";

/// The main document part: the one `_rels/.rels` names, when it is a WordprocessingML document
/// (its root is `w:document`); else `word/document.xml`, with a warning when the relationship
/// named something else. A relationship to a part that is not a document, with no document
/// where Word writes it, is an error naming the relationship.
#[cfg(feature = "docx")]
fn main_part(package: &mut Package<'_>, package_relationships: &Relationships) -> Result<MainPart, ParseError> {
    let source_uri = package.source_uri();
    let named = package_relationships.part_of_kind("officeDocument").map(str::to_owned);
    let Some(named) = named else {
        // No relationship names it: Word's place for it, as other readers do.
        let xml = package
            .read_part(CONVENTIONAL_MAIN)?
            .ok_or_else(|| package.no_document())?;
        return Ok(MainPart {
            name: CONVENTIONAL_MAIN.to_owned(),
            xml,
            warning: None,
        });
    };
    let why = match package.read_part(&named)? {
        Some(xml) => match root_element(source_uri, &named, &xml) {
            Ok(Root::Document) => {
                return Ok(MainPart {
                    name: named,
                    xml,
                    warning: None,
                });
            }
            Ok(Root::Other(root)) if root.is_empty() => {
                "which is not a Word document part (it holds no XML element)".to_owned()
            }
            Ok(Root::Other(root)) => format!("which is not a Word document part (its root element is <{root}>)"),
            // The document where Word puts it, broken: its own error says how.
            Err(err) if named.eq_ignore_ascii_case(CONVENTIONAL_MAIN) => return Err(err),
            Err(_) => "which is not well-formed XML".to_owned(),
        },
        None => "which is not in the package".to_owned(),
    };
    let fallback = if named.eq_ignore_ascii_case(CONVENTIONAL_MAIN) {
        None
    } else {
        match package.read_part(CONVENTIONAL_MAIN)? {
            Some(xml) => match root_element(source_uri, CONVENTIONAL_MAIN, &xml)? {
                Root::Document => Some(xml),
                Root::Other(_) => None,
            },
            None => None,
        }
    };
    match fallback {
        Some(xml) => Ok(MainPart {
            name: CONVENTIONAL_MAIN.to_owned(),
            xml,
            warning: Some(format!(
                "_rels/.rels: the officeDocument relationship names {named}, {why}; {CONVENTIONAL_MAIN} was read instead"
            )),
        }),
        None => Err(xml::malformed(
            source_uri,
            format!(
                "not a DOCX: the officeDocument relationship of _rels/.rels names {named}, {why}, and the package has no other document part"
            ),
        )),
    }
}

/// What the root element of a part is.
#[cfg(feature = "docx")]
#[derive(Debug, PartialEq, Eq)]
enum Root {
    /// `w:document`, the root of a main document part.
    Document,
    /// Anything else, by its name as written (empty for a part without an element).
    Other(String),
}

/// The root element of `xml`, or the error reading the part up to it (malformed XML, a DTD).
#[cfg(feature = "docx")]
fn root_element(source_uri: &str, part: &str, xml: &str) -> Result<Root, ParseError> {
    let mut reader = xml::PartReader::new(source_uri, part, xml);
    loop {
        match reader.next()? {
            (ns, quick_xml::events::Event::Start(element) | quick_xml::events::Event::Empty(element)) => {
                return Ok(if ns == xml::Ns::W && element.local_name().as_ref() == "document" {
                    Root::Document
                } else {
                    Root::Other(element.name().as_ref().to_owned())
                });
            }
            (_, quick_xml::events::Event::Eof) => return Ok(Root::Other(String::new())),
            _ => {}
        }
    }
}

/// The name and text of the part of relationship `kind` of the main part, when it has one.
#[cfg(feature = "docx")]
fn read_structure(
    package: &mut Package<'_>,
    relationships: &Relationships,
    kind: &str,
) -> Result<Option<(String, String)>, ParseError> {
    let Some(part) = relationships.part_of_kind(kind).map(str::to_owned) else {
        return Ok(None);
    };
    Ok(package.read_part(&part)?.map(|xml| (part, xml)))
}

/// What a zip entry the rendition did not read is left out as, by its lower-cased name: page
/// furniture (headers, footers), comments, media, or the package's machinery.
#[cfg(feature = "docx")]
fn unread_entry_kind(lower_name: &str, furniture: &BTreeSet<String>, comments: &BTreeSet<String>) -> &'static str {
    if furniture.contains(lower_name) {
        "page_furniture"
    } else if comments.contains(lower_name) {
        "comment"
    } else if lower_name.starts_with("word/media/") || lower_name.starts_with("word/embeddings/") {
        "media"
    } else {
        "package"
    }
}
