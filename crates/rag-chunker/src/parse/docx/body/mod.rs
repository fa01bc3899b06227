//! The text parts (`word/document.xml`, the footnotes and the endnotes): paragraphs and tables
//! read in document order ([`walk_part`]) and written into the rendition ([`Rendering`]).

use std::collections::BTreeMap;

use rag_core::ParseError;

use super::package::Relationships;
use super::styles::{Marker, Numbering, Role, Styles};

mod fields;
mod render;
mod walk;

pub(super) use render::Rendering;
pub(super) use walk::walk_part;

/// How much of a field's instruction (`HYPERLINK "..."`, `TOC \o`) is kept to classify it.
const MAX_INSTRUCTION_CHARS: usize = 2048;

/// The longest link target written as `[text](url)`; a longer one leaves the text alone.
const MAX_URL_BYTES: usize = 2048;

/// A footnote or an endnote, by its `w:id`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum NoteRef {
    Footnote(i64),
    Endnote(i64),
}

impl NoteRef {
    /// The label the rendition gives it: `[^3]` for footnote 3, `[^e3]` for endnote 3.
    fn label(self) -> String {
        match self {
            Self::Footnote(id) => format!("[^{id}]"),
            Self::Endnote(id) => format!("[^e{id}]"),
        }
    }
}

/// Makes the reference of a note of a notes part from its id: footnotes or endnotes.
pub(super) type NoteOf = fn(i64) -> NoteRef;

/// A finished paragraph: its index among the `w:p` of its part, what it is, and its text with
/// the rendition's inline syntax (links, note labels) already in it.
#[derive(Debug)]
pub(super) struct Para {
    index: usize,
    role: Role,
    /// The list: its numbering instance, the item's level and marker.
    list: Option<(u32, u8, Marker)>,
    text: String,
    notes: Vec<NoteRef>,
}

/// A table's rows of cells, each cell the paragraphs it holds (nested tables flattened into it).
#[derive(Debug, Default)]
pub(super) struct Table {
    rows: Vec<Vec<Cell>>,
}

#[derive(Debug)]
struct Cell {
    paras: Vec<Para>,
    /// Grid columns the cell spans (`w:gridSpan`).
    span: usize,
}

impl Table {
    fn current_cell(&mut self) -> &mut Cell {
        if self.rows.is_empty() {
            self.rows.push(Vec::new());
        }
        let row = self.rows.last_mut().expect("a row was just ensured");
        if row.is_empty() {
            row.push(Cell {
                paras: Vec::new(),
                span: 1,
            });
        }
        row.last_mut().expect("a cell was just ensured")
    }

    fn into_paras(self) -> impl Iterator<Item = Para> {
        self.rows.into_iter().flatten().flat_map(|cell| cell.paras)
    }
}

/// What a part's walk hands its paragraphs and tables to: the rendition for the document body,
/// the note collection for the footnotes and endnotes.
pub(super) trait Sink {
    fn paragraph(&mut self, part: &str, para: Para) -> Result<(), ParseError>;
    fn table(&mut self, part: &str, table: Table) -> Result<(), ParseError>;
    fn begin_note(&mut self, _note: NoteRef) {}
    fn end_note(&mut self) {}
}

/// The footnotes or endnotes of a document, by reference.
#[derive(Debug, Default)]
pub(super) struct Notes {
    notes: BTreeMap<NoteRef, Vec<Para>>,
    current: Option<NoteRef>,
}

impl Sink for Notes {
    fn paragraph(&mut self, _part: &str, para: Para) -> Result<(), ParseError> {
        if let Some(note) = self.current {
            self.notes.entry(note).or_default().push(para);
        }
        Ok(())
    }

    fn table(&mut self, part: &str, table: Table) -> Result<(), ParseError> {
        for para in table.into_paras() {
            self.paragraph(part, para)?;
        }
        Ok(())
    }

    fn begin_note(&mut self, note: NoteRef) {
        self.current = Some(note);
    }

    fn end_note(&mut self) {
        self.current = None;
    }
}

/// What the walk of a part needs besides the part: its styles, the numbering (whose counters
/// advance), its relationships (hyperlink targets), which kind of notes a notes part holds, and
/// the budget left for link targets.
pub(super) struct PartContext<'c> {
    pub(super) styles: &'c Styles,
    pub(super) numbering: &'c mut Numbering,
    pub(super) relationships: &'c Relationships,
    pub(super) notes_kind: Option<NoteOf>,
    pub(super) url_budget: &'c mut usize,
    /// Whether hidden text is kept (`DocxParser::keep_hidden`).
    pub(super) keep_hidden: bool,
}

/// The bytes of a part the rendition keeps and what it leaves out, by kind.
#[derive(Debug, Default)]
pub(super) struct PartAccount {
    pub(super) kept: u64,
    pub(super) dropped: BTreeMap<&'static str, u64>,
    /// Pictures, drawings and embedded objects met (`w:drawing`, `w:pict`, `w:object`), whose
    /// content the rendition does not read (a text box's paragraphs aside).
    pub(super) images: usize,
}
