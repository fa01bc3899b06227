//! The text parts (`word/document.xml`, the footnotes and the endnotes): paragraphs and tables
//! read in document order ([`walk_part`]) and written into the rendition ([`Rendering`]).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use quick_xml::events::{BytesStart, Event};
use rag_core::{Block, BlockType, HeadingLevel, MappedSpan, Origin, ParseError, Span};

use super::package::Relationships;
use super::styles::{LIST_LEVELS, ListRef, Marker, Numbering, Role, Styles};
use super::symbol_font::symbol_char;
use super::xml::{Ns, PartReader, attribute, is_on, over_limit, resolve_reference};
use super::{MAX_GRID_SPAN, MAX_RENDITION_BYTES, format_bytes};

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

/// Where the text inside `w:t` (and its siblings) goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TextMode {
    Keep,
    /// Left out of the rendition, counted under this kind.
    Drop(&'static str),
    /// A field's instruction: left out as `field_code`, and read to tell what the field is.
    Instruction,
}

/// A paragraph being read: its properties, its text so far, and the state of the run it is in
/// (a text box nests whole paragraphs, with their runs, inside a run of this one).
#[derive(Debug, Default)]
struct ParaBuilder {
    index: usize,
    style: Option<String>,
    outline_level: Option<u8>,
    num_id: Option<u32>,
    num_level: Option<u8>,
    role: Option<Role>,
    text: String,
    /// Open hyperlinks: where their text starts, and their target when it is written.
    links: Vec<(usize, Option<String>)>,
    notes: Vec<NoteRef>,
    /// Paragraphs of text boxes anchored in this one, placed after it.
    deferred: Vec<Para>,
    in_ppr: bool,
    in_run: bool,
    in_run_props: bool,
    /// The run's own `w:vanish` (or `w:webHidden`, `w:specVanish`), on or off.
    run_vanish: Option<bool>,
    /// The run's character style (`w:rStyle`).
    run_style: Option<String>,
    text_mode: Option<TextMode>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum FieldKind {
    /// A table of contents: its result is the document's headings again, with page numbers.
    Toc,
    /// A link to an external target.
    Link(String),
    Other,
}

/// A complex field (`w:fldChar` begin ... separate ... end) or a simple one (`w:fldSimple`).
#[derive(Debug)]
struct Field {
    in_result: bool,
    instruction: String,
    kind: FieldKind,
    /// Where the link text starts: the paragraph's index and the byte in its text.
    link_start: Option<(usize, usize)>,
}

/// The words of a field instruction: quoted strings (without their quotes) and bare words.
fn instruction_words(instruction: &str) -> Vec<&str> {
    let mut words = Vec::new();
    let mut rest = instruction.trim_start();
    while !rest.is_empty() {
        if let Some(quoted) = rest.strip_prefix('"') {
            let end = quoted.find('"').unwrap_or(quoted.len());
            words.push(&quoted[..end]);
            rest = quoted.get(end + 1..).unwrap_or("");
        } else {
            let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
            words.push(&rest[..end]);
            rest = &rest[end..];
        }
        rest = rest.trim_start();
    }
    words
}

/// What a field is, from its instruction: `TOC \o "1-3"`, `HYPERLINK "https://..."`,
/// `HYPERLINK "guide.docx" \l "install"` (a file and a bookmark in it), `HYPERLINK \l "x"` (a
/// bookmark of this document: no external target), anything else.
fn classify_field(instruction: &str) -> FieldKind {
    let words = instruction_words(instruction);
    match words.first().map(|w| w.to_ascii_uppercase()).as_deref() {
        Some("TOC") => FieldKind::Toc,
        Some("HYPERLINK") => {
            let (mut target, mut anchor) = (None, None);
            let mut args = words[1..].iter();
            while let Some(word) = args.next() {
                match word.to_ascii_lowercase().as_str() {
                    "\\l" => anchor = args.next(),
                    // A tooltip and a target frame: arguments that are not the target.
                    "\\o" | "\\t" => {
                        args.next();
                    }
                    switch if switch.starts_with('\\') => {}
                    _ => {
                        target.get_or_insert(*word);
                    }
                }
            }
            match (target.filter(|t| !t.is_empty()), anchor) {
                (Some(target), Some(anchor)) if !anchor.is_empty() => FieldKind::Link(format!("{target}#{anchor}")),
                (Some(target), _) => FieldKind::Link(target.to_owned()),
                (None, _) => FieldKind::Other,
            }
        }
        _ => FieldKind::Other,
    }
}

enum Container {
    Para(ParaBuilder),
    Table(Table),
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

struct Walker<'w, 'c> {
    part: &'w str,
    ctx: PartContext<'c>,
    containers: Vec<Container>,
    paragraphs: usize,
    /// Open `w:del` and `w:moveFrom` elements: tracked deletions.
    deleted: usize,
    /// The depth of the element whose whole subtree is skipped.
    skip_from: Option<usize>,
    fields: Vec<Field>,
    account: PartAccount,
}

/// Reads the text part `part` and hands its top-level paragraphs and tables to `sink`.
pub(super) fn walk_part(
    source_uri: &str,
    part: &str,
    xml: &str,
    ctx: PartContext<'_>,
    sink: &mut dyn Sink,
) -> Result<PartAccount, ParseError> {
    let mut reader = PartReader::new(source_uri, part, xml);
    let mut walker = Walker {
        part,
        ctx,
        containers: Vec::new(),
        paragraphs: 0,
        deleted: 0,
        skip_from: None,
        fields: Vec::new(),
        account: PartAccount::default(),
    };
    loop {
        let depth = reader.depth();
        let (ns, event) = reader.next()?;
        match event {
            Event::Start(element) => walker.open(ns, &element, depth, false, sink)?,
            Event::Empty(element) => walker.open(ns, &element, depth, true, sink)?,
            Event::End(element) => {
                let local = element.local_name();
                walker.close(ns, local.as_ref(), reader.depth(), sink)?;
            }
            Event::Text(text) => walker.text(&text, text.len()),
            Event::CData(text) => walker.text(&text, text.len() + "<![CDATA[]]>".len()),
            Event::GeneralRef(reference) => {
                let ch = resolve_reference(&reference).ok_or_else(|| reader.undefined_entity(&reference))?;
                walker.text(ch.encode_utf8(&mut [0; 4]), reference.len() + 2);
            }
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(walker.account)
}

/// Elements whose content is never text of the document: tracked changes of properties (the
/// old properties), content-control and section properties, ruby annotations, and the fallback
/// of an `mc:AlternateContent` (a copy of its choice for older readers).
fn skips_subtree(ns: Ns, local: &str) -> bool {
    match ns {
        Ns::W => {
            local.ends_with("Change")
                || matches!(
                    local,
                    "sdtPr" | "sdtEndPr" | "sectPr" | "rt" | "footnotePr" | "endnotePr"
                )
        }
        Ns::Compat => local == "Fallback",
        _ => false,
    }
}

impl Walker<'_, '_> {
    fn para(&mut self) -> Option<&mut ParaBuilder> {
        match self.containers.last_mut() {
            Some(Container::Para(para)) => Some(para),
            _ => None,
        }
    }

    fn table(&mut self) -> Option<&mut Table> {
        match self.containers.last_mut() {
            Some(Container::Table(table)) => Some(table),
            _ => None,
        }
    }

    /// Whether text now would be left out, and as what.
    fn suppressed(&self, hidden: bool) -> Option<&'static str> {
        if self.deleted > 0 {
            Some("deleted")
        } else if self.fields.iter().any(|f| !f.in_result) {
            Some("field_code")
        } else if self.fields.iter().any(|f| f.in_result && f.kind == FieldKind::Toc) {
            Some("chrome")
        } else if hidden {
            Some("hidden")
        } else {
            None
        }
    }

    /// Whether the text of the current run is hidden: by its own `w:vanish`, else by its styles;
    /// never when hidden text is kept.
    fn run_hidden(&mut self) -> bool {
        let (styles, keep) = (self.ctx.styles, self.ctx.keep_hidden);
        match self.para() {
            Some(_) if keep => false,
            Some(para) => para
                .run_vanish
                .unwrap_or_else(|| styles.run_vanish(para.style.as_deref(), para.run_style.as_deref())),
            None => false,
        }
    }

    /// Text an element of a run stands for (a tab, a break, a symbol), unless it is left out.
    fn run_text(&mut self, text: &str) {
        if !self.para().is_some_and(|para| para.in_run && !para.in_run_props) {
            return;
        }
        let hidden = self.run_hidden();
        if self.suppressed(hidden).is_none()
            && let Some(para) = self.para()
        {
            para.text.push_str(text);
        }
    }

    fn text(&mut self, text: &str, source_len: usize) {
        let source_len = source_len as u64;
        let mode = self.para().and_then(|para| para.text_mode);
        match mode {
            Some(TextMode::Keep) => {
                if let Some(para) = self.para() {
                    para.text.push_str(text);
                }
                self.account.kept += source_len;
            }
            Some(TextMode::Drop(kind)) => *self.account.dropped.entry(kind).or_default() += source_len,
            Some(TextMode::Instruction) => {
                *self.account.dropped.entry("field_code").or_default() += source_len;
                if let Some(field) = self.fields.last_mut().filter(|f| !f.in_result)
                    && field.instruction.len() < MAX_INSTRUCTION_CHARS
                {
                    field.instruction.push_str(text);
                }
            }
            None => {}
        }
    }

    fn role(&mut self) -> Role {
        let styles = self.ctx.styles;
        match self.para() {
            Some(para) => *para
                .role
                .get_or_insert_with(|| styles.role(para.style.as_deref(), para.outline_level)),
            None => Role::Body,
        }
    }

    fn open(
        &mut self,
        ns: Ns,
        element: &BytesStart<'_>,
        depth: usize,
        empty: bool,
        sink: &mut dyn Sink,
    ) -> Result<(), ParseError> {
        let local = element.local_name();
        let local = local.as_ref();
        if ns == Ns::W && local == "p" {
            // Every `w:p` of the part counts, skipped ones too, so indices are positions in the part.
            self.paragraphs += 1;
        }
        if self.skip_from.is_some() {
            return Ok(());
        }
        if skips_subtree(ns, local) {
            if !empty {
                self.skip_from = Some(depth);
            }
            return Ok(());
        }
        match (ns, local) {
            (Ns::W, "p") => self.open_para(empty, sink)?,
            (Ns::W, "pPr") => {
                if let Some(para) = self.para() {
                    para.in_ppr = !empty;
                }
            }
            (Ns::W, "pStyle" | "outlineLvl" | "numId" | "ilvl") => self.set_para_property(local, element),
            (Ns::W, "r") => self.open_run(empty),
            (Ns::W, "rPr") => self.open_run_props(empty),
            (Ns::W, "vanish" | "webHidden" | "specVanish") => {
                if let Some(para) = self.para().filter(|p| p.in_run_props) {
                    para.run_vanish = Some(para.run_vanish == Some(true) || is_on(element));
                }
            }
            (Ns::W, "rStyle") => {
                if let Some(para) = self.para().filter(|p| p.in_run_props) {
                    para.run_style = attribute(element, "val");
                }
            }
            (Ns::W, "t") | (Ns::Math, "t") => self.open_text(empty),
            (Ns::W, "delText" | "delInstrText") => self.set_text_mode(empty, TextMode::Drop("deleted")),
            (Ns::W, "instrText") => self.set_text_mode(empty, TextMode::Instruction),
            (Ns::W, "tab" | "ptab") => self.run_text("\t"),
            (Ns::W, "br" | "cr") => self.run_text("\n"),
            (Ns::W, "noBreakHyphen") => self.run_text("-"),
            (Ns::W, "sym") => self.symbol(element),
            (Ns::W, "fldChar") => self.field_char(attribute(element, "fldCharType").as_deref()),
            (Ns::W, "fldSimple") => self.open_simple_field(element, empty),
            (Ns::W, "hyperlink") => self.open_hyperlink(element, empty),
            (Ns::W, "del" | "moveFrom") if !empty => self.deleted += 1,
            (Ns::W, "footnoteReference" | "endnoteReference") => self.note_reference(local, element),
            (Ns::W, "footnote" | "endnote") => self.open_note(element, depth, empty, sink),
            (Ns::W, "tbl") => self.open_table(empty, sink)?,
            (Ns::W, "tr") => {
                if let Some(table) = self.table() {
                    table.rows.push(Vec::new());
                }
            }
            (Ns::W, "tc") => self.open_cell(),
            (Ns::W, "drawing" | "pict" | "object") => self.account.images += 1,
            (Ns::W, "gridSpan") => self.set_grid_span(element),
            _ => {}
        }
        Ok(())
    }

    /// A `w:p` starts (and ends at once when it is empty), numbered by its position in the part.
    fn open_para(&mut self, empty: bool, sink: &mut dyn Sink) -> Result<(), ParseError> {
        self.containers.push(Container::Para(ParaBuilder {
            index: self.paragraphs - 1,
            ..ParaBuilder::default()
        }));
        if empty {
            self.close_para(sink)?;
        }
        Ok(())
    }

    /// A property of the paragraph's own `w:pPr`: its style, outline level or list.
    fn set_para_property(&mut self, local: &str, element: &BytesStart<'_>) {
        if let Some(para) = self.para().filter(|p| p.in_ppr) {
            let value = attribute(element, "val");
            match local {
                "pStyle" => para.style = value,
                "outlineLvl" => para.outline_level = value.and_then(|v| v.parse().ok()),
                "numId" => para.num_id = value.and_then(|v| v.parse().ok()),
                _ => para.num_level = value.and_then(|v| v.parse().ok()),
            }
        }
    }

    /// A `w:r`: a run starts, with no properties of its own until its `w:rPr` says.
    fn open_run(&mut self, empty: bool) {
        if let Some(para) = self.para() {
            para.in_run = !empty;
            para.run_vanish = None;
            para.run_style = None;
        }
    }

    /// A run's own `w:rPr` (not the paragraph mark's, inside `w:pPr`).
    fn open_run_props(&mut self, empty: bool) {
        if let Some(para) = self.para().filter(|p| p.in_run && !p.in_ppr) {
            para.in_run_props = !empty;
        }
    }

    /// A `w:t`: its text is kept, or left out as what suppresses it now.
    fn open_text(&mut self, empty: bool) {
        let hidden = self.run_hidden();
        let mode = match self.suppressed(hidden) {
            Some(kind) => TextMode::Drop(kind),
            None => TextMode::Keep,
        };
        self.set_text_mode(empty, mode);
    }

    /// Where the text of the element that starts goes, unless it is empty.
    fn set_text_mode(&mut self, empty: bool, mode: TextMode) {
        if let Some(para) = self.para().filter(|_| !empty) {
            para.text_mode = Some(mode);
        }
    }

    /// A `w:sym`: the character of a symbol font, or a symbol left out when it has none.
    fn symbol(&mut self, element: &BytesStart<'_>) {
        let font = attribute(element, "font");
        match attribute(element, "char").and_then(|code| symbol_char(font.as_deref(), &code)) {
            Some(ch) => self.run_text(ch.encode_utf8(&mut [0; 4])),
            None => *self.account.dropped.entry("symbol").or_default() += 1,
        }
    }

    /// A `w:fldSimple`: its instruction is an attribute, its content the result.
    fn open_simple_field(&mut self, element: &BytesStart<'_>, empty: bool) {
        let kind = classify_field(&attribute(element, "instr").unwrap_or_default());
        self.begin_field_result(kind);
        if empty {
            self.end_field();
        }
    }

    /// A `w:hyperlink`: its text starts here; its target is written when it is an external one
    /// (with the anchor in it) and the paragraph takes links.
    fn open_hyperlink(&mut self, element: &BytesStart<'_>, empty: bool) {
        let anchor = attribute(element, "anchor").filter(|a| !a.is_empty());
        let target = attribute(element, "id")
            .and_then(|id| self.ctx.relationships.get(&id))
            .filter(|rel| rel.external)
            .map(|rel| match &anchor {
                Some(anchor) => format!("{}#{anchor}", rel.target),
                None => rel.target.clone(),
            });
        let role = self.role();
        if let Some(para) = self.para().filter(|_| !empty) {
            let target = target.filter(|_| role_takes_links(role));
            para.links.push((para.text.len(), target));
        }
    }

    /// A `w:footnoteReference` or `w:endnoteReference` that is not left out: the note is cited,
    /// and labelled in the text where the paragraph takes links.
    fn note_reference(&mut self, local: &str, element: &BytesStart<'_>) {
        let id = attribute(element, "id").and_then(|id| id.parse::<i64>().ok());
        let hidden = self.run_hidden();
        if let Some(id) = id
            && self.suppressed(hidden).is_none()
        {
            let note = if local == "footnoteReference" {
                NoteRef::Footnote(id)
            } else {
                NoteRef::Endnote(id)
            };
            let role = self.role();
            if let Some(para) = self.para() {
                if role_takes_links(role) {
                    para.text.push_str(&note.label());
                }
                para.notes.push(note);
            }
        }
    }

    /// A `w:footnote` or `w:endnote`: a normal note of a notes part starts a note of the sink;
    /// any other is skipped.
    fn open_note(&mut self, element: &BytesStart<'_>, depth: usize, empty: bool, sink: &mut dyn Sink) {
        let kind = attribute(element, "type");
        let id = attribute(element, "id").and_then(|id| id.parse::<i64>().ok());
        match (self.ctx.notes_kind, id, kind.as_deref()) {
            (Some(note_of), Some(id), None | Some("normal")) if !empty => sink.begin_note(note_of(id)),
            // Separators and continuation notices are the lines Word draws above notes.
            _ if !empty => self.skip_from = Some(depth),
            _ => {}
        }
    }

    fn open_table(&mut self, empty: bool, sink: &mut dyn Sink) -> Result<(), ParseError> {
        self.containers.push(Container::Table(Table::default()));
        if empty {
            self.close_table(sink)?;
        }
        Ok(())
    }

    /// A `w:tc`: a new cell of the last row (a row is made for a cell outside any).
    fn open_cell(&mut self) {
        if let Some(table) = self.table() {
            if table.rows.is_empty() {
                table.rows.push(Vec::new());
            }
            if let Some(row) = table.rows.last_mut() {
                row.push(Cell {
                    paras: Vec::new(),
                    span: 1,
                });
            }
        }
    }

    /// A `w:gridSpan`: the columns the current cell spans, within [`MAX_GRID_SPAN`].
    fn set_grid_span(&mut self, element: &BytesStart<'_>) {
        let span = attribute(element, "val").and_then(|v| v.parse::<usize>().ok());
        if let (Some(table), Some(span)) = (self.table(), span) {
            table.current_cell().span = span.clamp(1, MAX_GRID_SPAN);
        }
    }

    fn close(&mut self, ns: Ns, local: &str, depth: usize, sink: &mut dyn Sink) -> Result<(), ParseError> {
        if let Some(from) = self.skip_from {
            if depth == from {
                self.skip_from = None;
            }
            return Ok(());
        }
        match (ns, local) {
            (Ns::W, "p") => self.close_para(sink)?,
            (Ns::W, "pPr") => {
                if let Some(para) = self.para() {
                    para.in_ppr = false;
                }
                self.role();
            }
            (Ns::W, "r") => {
                if let Some(para) = self.para() {
                    para.in_run = false;
                    para.run_vanish = None;
                    para.run_style = None;
                }
            }
            (Ns::W, "rPr") => {
                if let Some(para) = self.para() {
                    para.in_run_props = false;
                }
            }
            (Ns::W, "t" | "delText" | "delInstrText" | "instrText") | (Ns::Math, "t") => {
                if let Some(para) = self.para() {
                    para.text_mode = None;
                }
            }
            (Ns::W, "hyperlink") => {
                let budget = &mut *self.ctx.url_budget;
                if let Some(Container::Para(para)) = self.containers.last_mut()
                    && let Some((start, target)) = para.links.pop()
                    && let Some(target) = target
                {
                    close_link(&mut para.text, start, &target, budget);
                }
            }
            (Ns::W, "fldSimple") => self.end_field(),
            (Ns::W, "del" | "moveFrom") => self.deleted = self.deleted.saturating_sub(1),
            (Ns::W, "footnote" | "endnote") => sink.end_note(),
            (Ns::W, "tbl") => self.close_table(sink)?,
            _ => {}
        }
        Ok(())
    }

    fn field_char(&mut self, kind: Option<&str>) {
        match kind {
            Some("begin") => self.fields.push(Field {
                in_result: false,
                instruction: String::new(),
                kind: FieldKind::Other,
                link_start: None,
            }),
            Some("separate") => {
                if let Some(field) = self.fields.last_mut()
                    && !field.in_result
                {
                    let kind = classify_field(&field.instruction);
                    self.fields.pop();
                    self.begin_field_result(kind);
                }
            }
            Some("end") => self.end_field(),
            _ => {}
        }
    }

    fn begin_field_result(&mut self, kind: FieldKind) {
        let role = self.role();
        let link_start = match (&kind, self.para()) {
            (FieldKind::Link(_), Some(para)) if role_takes_links(role) => Some((para.index, para.text.len())),
            _ => None,
        };
        self.fields.push(Field {
            in_result: true,
            instruction: String::new(),
            kind,
            link_start,
        });
    }

    fn end_field(&mut self) {
        let Some(field) = self.fields.pop() else { return };
        if let (FieldKind::Link(target), Some((index, start))) = (field.kind, field.link_start) {
            let budget = &mut *self.ctx.url_budget;
            if let Some(Container::Para(para)) = self.containers.last_mut()
                && para.index == index
            {
                close_link(&mut para.text, start, &target, budget);
            }
        }
    }

    fn close_para(&mut self, sink: &mut dyn Sink) -> Result<(), ParseError> {
        let role = self.role();
        let Some(Container::Para(mut builder)) = self.containers.pop() else {
            return Ok(());
        };
        let styles = self.ctx.styles;
        let list = match builder.num_id {
            Some(0) => None,
            Some(num_id) => Some(ListRef {
                num_id,
                level: builder.num_level.unwrap_or(0).min(LIST_LEVELS as u8 - 1),
            }),
            None => styles.list(builder.style.as_deref()),
        };
        let list = list.map(|list| (list.num_id, list.level, self.ctx.numbering.next_marker(list)));
        let deferred = std::mem::take(&mut builder.deferred);
        let para = Para {
            index: builder.index,
            role,
            list,
            text: builder.text,
            notes: builder.notes,
        };
        self.place_para(para, sink)?;
        for para in deferred {
            self.place_para(para, sink)?;
        }
        Ok(())
    }

    fn place_para(&mut self, para: Para, sink: &mut dyn Sink) -> Result<(), ParseError> {
        match self.containers.last_mut() {
            Some(Container::Para(outer)) => outer.deferred.push(para),
            Some(Container::Table(table)) => table.current_cell().paras.push(para),
            None => sink.paragraph(self.part, para)?,
        }
        Ok(())
    }

    fn close_table(&mut self, sink: &mut dyn Sink) -> Result<(), ParseError> {
        let Some(Container::Table(table)) = self.containers.pop() else {
            return Ok(());
        };
        match self.containers.last_mut() {
            Some(Container::Para(outer)) => outer.deferred.extend(table.into_paras()),
            Some(Container::Table(outer)) => outer.current_cell().paras.extend(table.into_paras()),
            None => sink.table(self.part, table)?,
        }
        Ok(())
    }
}

/// Whether links and note labels are written into a paragraph of this role: not into headings,
/// whose text is their title, nor into code.
fn role_takes_links(role: Role) -> bool {
    !matches!(role, Role::Heading(1..=6) | Role::Code)
}

/// Turns the text from `start` to the end into `[text](target)`, unless the text is empty or is
/// the target itself, the target is too long, or the budget for targets is spent.
fn close_link(text: &mut String, start: usize, target: &str, budget: &mut usize) {
    let Some(label) = text.get(start..) else { return };
    let label = label.trim();
    if label.is_empty() || label == target || target.len() > MAX_URL_BYTES || target.len() > *budget {
        return;
    }
    *budget -= target.len();
    text.insert(start, '[');
    text.push_str("](");
    for ch in target.chars() {
        match ch {
            ' ' | '(' | ')' | '<' | '>' => {
                let _ = write!(text, "%{:02X}", ch as u32);
            }
            ch if ch.is_control() => {}
            ch => text.push(ch),
        }
    }
    text.push(')');
}

/// The rendition being written: text, blocks and source map, and what is left out.
#[derive(Debug, Default)]
pub(super) struct Rendering {
    pub(super) text: String,
    pub(super) blocks: Vec<Block>,
    pub(super) source_map: Vec<MappedSpan>,
    pub(super) left_out: BTreeMap<&'static str, u64>,
    /// Pictures, drawings and embedded objects in the parts read.
    pub(super) images: usize,
    source_uri: String,
    /// The list of the last block written, when it was a list item: items of one list follow
    /// each other on the next line, not after a blank one.
    after_list_item: Option<u32>,
    /// Consecutive code paragraphs, written as one fenced block when something else comes.
    pending_code: Vec<Para>,
    /// The part the pending code paragraphs come from.
    code_part: String,
    pending_notes: Vec<NoteRef>,
    notes: BTreeMap<NoteRef, (String, Vec<Para>)>,
    written_notes: BTreeSet<NoteRef>,
}

impl Rendering {
    pub(super) fn new(source_uri: &str) -> Self {
        Self {
            source_uri: source_uri.to_owned(),
            ..Self::default()
        }
    }

    /// Adds the notes of a notes part, which the body's references place.
    pub(super) fn add_notes(&mut self, part: &str, notes: Notes) {
        for (note, paras) in notes.notes {
            self.notes.insert(note, (part.to_owned(), paras));
        }
    }

    /// Counts a part's bytes: its text kept, its markup and what else it leaves out.
    pub(super) fn account(&mut self, part_len: usize, account: PartAccount) {
        let dropped: u64 = account.dropped.values().sum();
        let markup = (part_len as u64).saturating_sub(account.kept).saturating_sub(dropped);
        self.images += account.images;
        self.leave_out("markup", markup);
        for (kind, bytes) in account.dropped {
            self.leave_out(kind, bytes);
        }
    }

    pub(super) fn leave_out(&mut self, kind: &'static str, bytes: u64) {
        if bytes > 0 {
            let total = self.left_out.entry(kind).or_default();
            *total = total.saturating_add(bytes);
        }
    }

    /// Writes what is still pending and every note no paragraph referenced, at the end.
    pub(super) fn finish(&mut self) -> Result<(), ParseError> {
        self.flush_code()?;
        let unreferenced: Vec<NoteRef> = self
            .notes
            .keys()
            .filter(|note| !self.written_notes.contains(note))
            .copied()
            .collect();
        self.pending_notes.extend(unreferenced);
        self.flush_notes()
    }

    fn check_size(&self) -> Result<(), ParseError> {
        if self.text.len() > MAX_RENDITION_BYTES {
            return Err(over_limit(
                &self.source_uri,
                "the size of the text rendition",
                format_bytes(MAX_RENDITION_BYTES as u64),
            ));
        }
        Ok(())
    }

    /// Starts a block: a blank line after the previous one, or a line break between list items
    /// and between the rows of one table.
    fn begin_block(&mut self, tight: bool) -> usize {
        if !self.text.is_empty() {
            self.text.push_str(if tight { "\n" } else { "\n\n" });
        }
        self.text.len()
    }

    /// Writes text that comes from paragraph `index` of `part`, mapped to it.
    fn push_mapped(&mut self, text: &str, part: &str, index: usize) {
        let start = self.text.len();
        self.text.push_str(text);
        if !text.is_empty() {
            self.source_map.push(MappedSpan::new(
                Span::new(start, self.text.len()),
                Origin::paragraphs(part, index, index),
            ));
        }
    }

    fn end_block(&mut self, block: Block, list: Option<u32>) -> Result<(), ParseError> {
        self.blocks.push(block);
        self.after_list_item = list;
        self.check_size()
    }

    fn write_paragraph(&mut self, part: &str, para: &Para) -> Result<(), ParseError> {
        let text = para.text.trim();
        if text.is_empty() {
            return Ok(());
        }
        match (para.role, para.list) {
            (Role::Heading(level @ 1..=6), _) => {
                let title: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
                let start = self.begin_block(false);
                self.text.extend(std::iter::repeat_n('#', usize::from(level)));
                self.text.push(' ');
                self.push_mapped(&title, part, para.index);
                let level = HeadingLevel::new(level).unwrap_or(HeadingLevel::H1);
                let end = self.text.len();
                self.end_block(Block::heading(level, title, Span::new(start, end)), None)
            }
            (_, Some((num_id, level, marker))) => {
                let tight = self.after_list_item == Some(num_id);
                self.begin_block(tight);
                self.text.extend(std::iter::repeat_n(' ', 2 * usize::from(level)));
                let block_start = self.text.len();
                push_marker(&mut self.text, marker);
                self.push_mapped(text, part, para.index);
                let end = self.text.len();
                self.end_block(
                    Block::new(BlockType::ListItem, Span::new(block_start, end)),
                    Some(num_id),
                )
            }
            (Role::Quote, None) => {
                let start = self.begin_block(false);
                self.text.push_str("> ");
                self.push_mapped(&text.replace('\n', "\n> "), part, para.index);
                let end = self.text.len();
                self.end_block(Block::new(BlockType::Quote, Span::new(start, end)), None)
            }
            (role, None) => {
                let block_type = if role == Role::Caption {
                    BlockType::Caption
                } else {
                    BlockType::Paragraph
                };
                let start = self.begin_block(false);
                self.push_mapped(text, part, para.index);
                let end = self.text.len();
                self.end_block(Block::new(block_type, Span::new(start, end)), None)
            }
        }
    }

    fn flush_code(&mut self) -> Result<(), ParseError> {
        let mut paras = std::mem::take(&mut self.pending_code);
        while paras.last().is_some_and(|p| p.text.trim().is_empty()) {
            paras.pop();
        }
        if !paras.is_empty() {
            let part = std::mem::take(&mut self.code_part);
            let longest_run = paras.iter().map(|p| longest_backtick_run(&p.text)).max().unwrap_or(0);
            let fence = "`".repeat((longest_run + 1).max(3));
            let start = self.begin_block(false);
            self.text.push_str(&fence);
            for para in &paras {
                self.text.push('\n');
                self.push_mapped(para.text.trim_end(), &part, para.index);
            }
            self.text.push('\n');
            self.text.push_str(&fence);
            let end = self.text.len();
            self.end_block(Block::new(BlockType::Code, Span::new(start, end)), None)?;
        }
        self.flush_notes()
    }

    fn flush_notes(&mut self) -> Result<(), ParseError> {
        for note in std::mem::take(&mut self.pending_notes) {
            if !self.written_notes.insert(note) {
                continue;
            }
            let Some((part, paras)) = self.notes.remove(&note) else {
                continue;
            };
            let paras: Vec<&Para> = paras.iter().filter(|p| !p.text.trim().is_empty()).collect();
            if paras.is_empty() {
                continue;
            }
            let start = self.begin_block(false);
            self.text.push_str(&note.label());
            self.text.push_str(": ");
            for (i, para) in paras.iter().enumerate() {
                if i > 0 {
                    self.text.push_str("\n    ");
                }
                self.push_mapped(&para.text.trim().replace('\n', "\n    "), &part, para.index);
            }
            let end = self.text.len();
            self.end_block(Block::new(BlockType::Other, Span::new(start, end)), None)?;
        }
        Ok(())
    }
}

fn push_marker(text: &mut String, marker: Marker) {
    match marker {
        Marker::Bullet => text.push_str("- "),
        Marker::Number(n) => {
            let _ = write!(text, "{n}. ");
        }
    }
}

fn longest_backtick_run(text: &str) -> usize {
    text.split(|ch| ch != '`').map(str::len).max().unwrap_or(0)
}

/// A cell paragraph as a table row writes it: on one line, `|` escaped, breaks as `<br>`.
fn cell_text(para: &Para) -> String {
    let mut out = String::with_capacity(para.text.len() + 4);
    if let Some((_, _, marker)) = para.list {
        push_marker(&mut out, marker);
    }
    for ch in para.text.trim().chars() {
        match ch {
            '|' => out.push_str("\\|"),
            '\n' => out.push_str("<br>"),
            '\t' | '\r' => out.push(' '),
            ch => out.push(ch),
        }
    }
    out
}

impl Sink for Rendering {
    fn paragraph(&mut self, part: &str, para: Para) -> Result<(), ParseError> {
        if para.role == Role::Code {
            // A code paragraph with line breaks is a whole code block (pandoc writes one so);
            // paragraphs of one line each are the lines of one block (Word, LibreOffice), and
            // empty ones inside it are its empty lines.
            let whole_block = para.text.contains('\n');
            if whole_block {
                self.flush_code()?;
            }
            if !self.pending_code.is_empty() || !para.text.trim().is_empty() {
                self.code_part = part.to_owned();
                self.pending_notes.extend(para.notes.iter().copied());
                self.pending_code.push(para);
            }
            if whole_block {
                self.flush_code()?;
            }
            return Ok(());
        }
        self.flush_code()?;
        self.write_paragraph(part, &para)?;
        self.pending_notes.extend(para.notes);
        self.flush_notes()
    }

    fn table(&mut self, part: &str, table: Table) -> Result<(), ParseError> {
        self.flush_code()?;
        let mut header_columns: Option<usize> = None;
        for row in &table.rows {
            // A cell spanning columns is followed by empty cells, so columns stay aligned.
            let cells: Vec<Vec<&Para>> = row
                .iter()
                .flat_map(|cell| {
                    let paras: Vec<&Para> = cell.paras.iter().filter(|p| !p.text.trim().is_empty()).collect();
                    std::iter::once(paras).chain((1..cell.span).map(|_| Vec::new()))
                })
                .collect();
            if cells.iter().all(Vec::is_empty) {
                continue;
            }
            let start = self.begin_block(header_columns.is_some());
            self.text.push('|');
            for paras in &cells {
                self.text.push(' ');
                for (i, para) in paras.iter().enumerate() {
                    if i > 0 {
                        self.text.push_str("<br>");
                    }
                    self.push_mapped(&cell_text(para), part, para.index);
                }
                self.text.push_str(" |");
            }
            if header_columns.is_none() {
                header_columns = Some(cells.len());
                self.text.push_str("\n|");
                for _ in 0..cells.len() {
                    self.text.push_str(" --- |");
                }
            }
            let end = self.text.len();
            self.end_block(Block::new(BlockType::TableRow, Span::new(start, end)), None)?;
        }
        self.pending_notes.extend(
            table
                .rows
                .iter()
                .flatten()
                .flat_map(|cell| &cell.paras)
                .flat_map(|p| p.notes.iter().copied()),
        );
        self.flush_notes()
    }
}
