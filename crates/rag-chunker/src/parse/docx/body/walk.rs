//! The walk of a text part: its XML events read into paragraphs and tables, in document order,
//! with runs, fields, links, notes, hidden and deleted text accounted for.

use std::fmt::Write as _;

use quick_xml::events::{BytesStart, Event};
use rag_core::ParseError;

use super::fields::{Field, FieldKind, classify_field};
use super::{Cell, MAX_INSTRUCTION_CHARS, MAX_URL_BYTES, NoteRef, Para, PartAccount, PartContext, Sink, Table};
use crate::parse::docx::MAX_GRID_SPAN;
use crate::parse::docx::styles::{LIST_LEVELS, ListRef, Role};
use crate::parse::docx::symbol_font::symbol_char;
use crate::parse::docx::xml::{Ns, PartReader, attribute, is_on, resolve_reference};

/// Where the text inside `w:t` (and its siblings) goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TextMode {
    Keep,
    /// Left out of the rendition, counted under this kind.
    Drop(&'static str),
    /// A field's instruction: left out as `field_code`, and read to tell what the field is.
    Instruction,
}

/// A paragraph being read: its properties, its text so far, and the state of the run it is in
/// (a text box nests whole paragraphs, with their runs, inside a run of this one).
#[derive(Debug, Default)]
pub(super) struct ParaBuilder {
    pub(super) index: usize,
    pub(super) style: Option<String>,
    pub(super) outline_level: Option<u8>,
    pub(super) num_id: Option<u32>,
    pub(super) num_level: Option<u8>,
    pub(super) role: Option<Role>,
    pub(super) text: String,
    /// Open hyperlinks: where their text starts, and their target when it is written.
    pub(super) links: Vec<(usize, Option<String>)>,
    pub(super) notes: Vec<NoteRef>,
    /// Paragraphs of text boxes anchored in this one, placed after it.
    pub(super) deferred: Vec<Para>,
    pub(super) in_ppr: bool,
    pub(super) in_run: bool,
    pub(super) in_run_props: bool,
    /// The run's own `w:vanish` (or `w:webHidden`, `w:specVanish`), on or off.
    pub(super) run_vanish: Option<bool>,
    /// The run's character style (`w:rStyle`).
    pub(super) run_style: Option<String>,
    pub(super) text_mode: Option<TextMode>,
}

pub(super) enum Container {
    Para(ParaBuilder),
    Table(Table),
}

pub(super) struct Walker<'w, 'c> {
    pub(super) part: &'w str,
    pub(super) ctx: PartContext<'c>,
    pub(super) containers: Vec<Container>,
    pub(super) paragraphs: usize,
    /// Open `w:del` and `w:moveFrom` elements: tracked deletions.
    pub(super) deleted: usize,
    /// The depth of the element whose whole subtree is skipped.
    pub(super) skip_from: Option<usize>,
    pub(super) fields: Vec<Field>,
    pub(super) account: PartAccount,
}

/// Reads the text part `part` and hands its top-level paragraphs and tables to `sink`.
pub(in crate::parse::docx) fn walk_part(
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
pub(super) fn skips_subtree(ns: Ns, local: &str) -> bool {
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
    pub(super) fn para(&mut self) -> Option<&mut ParaBuilder> {
        match self.containers.last_mut() {
            Some(Container::Para(para)) => Some(para),
            _ => None,
        }
    }

    pub(super) fn table(&mut self) -> Option<&mut Table> {
        match self.containers.last_mut() {
            Some(Container::Table(table)) => Some(table),
            _ => None,
        }
    }

    /// Whether text now would be left out, and as what.
    pub(super) fn suppressed(&self, hidden: bool) -> Option<&'static str> {
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
    pub(super) fn run_hidden(&mut self) -> bool {
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
    pub(super) fn run_text(&mut self, text: &str) {
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

    pub(super) fn text(&mut self, text: &str, source_len: usize) {
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

    pub(super) fn role(&mut self) -> Role {
        let styles = self.ctx.styles;
        match self.para() {
            Some(para) => *para
                .role
                .get_or_insert_with(|| styles.role(para.style.as_deref(), para.outline_level)),
            None => Role::Body,
        }
    }

    pub(super) fn open(
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
    pub(super) fn open_para(&mut self, empty: bool, sink: &mut dyn Sink) -> Result<(), ParseError> {
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
    pub(super) fn set_para_property(&mut self, local: &str, element: &BytesStart<'_>) {
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
    pub(super) fn open_run(&mut self, empty: bool) {
        if let Some(para) = self.para() {
            para.in_run = !empty;
            para.run_vanish = None;
            para.run_style = None;
        }
    }

    /// A run's own `w:rPr` (not the paragraph mark's, inside `w:pPr`).
    pub(super) fn open_run_props(&mut self, empty: bool) {
        if let Some(para) = self.para().filter(|p| p.in_run && !p.in_ppr) {
            para.in_run_props = !empty;
        }
    }

    /// A `w:t`: its text is kept, or left out as what suppresses it now.
    pub(super) fn open_text(&mut self, empty: bool) {
        let hidden = self.run_hidden();
        let mode = match self.suppressed(hidden) {
            Some(kind) => TextMode::Drop(kind),
            None => TextMode::Keep,
        };
        self.set_text_mode(empty, mode);
    }

    /// Where the text of the element that starts goes, unless it is empty.
    pub(super) fn set_text_mode(&mut self, empty: bool, mode: TextMode) {
        if let Some(para) = self.para().filter(|_| !empty) {
            para.text_mode = Some(mode);
        }
    }

    /// A `w:sym`: the character of a symbol font, or a symbol left out when it has none.
    pub(super) fn symbol(&mut self, element: &BytesStart<'_>) {
        let font = attribute(element, "font");
        match attribute(element, "char").and_then(|code| symbol_char(font.as_deref(), &code)) {
            Some(ch) => self.run_text(ch.encode_utf8(&mut [0; 4])),
            None => *self.account.dropped.entry("symbol").or_default() += 1,
        }
    }

    /// A `w:fldSimple`: its instruction is an attribute, its content the result.
    pub(super) fn open_simple_field(&mut self, element: &BytesStart<'_>, empty: bool) {
        let kind = classify_field(&attribute(element, "instr").unwrap_or_default());
        self.begin_field_result(kind);
        if empty {
            self.end_field();
        }
    }

    /// A `w:hyperlink`: its text starts here; its target is written when it is an external one
    /// (with the anchor in it) and the paragraph takes links.
    pub(super) fn open_hyperlink(&mut self, element: &BytesStart<'_>, empty: bool) {
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
    pub(super) fn note_reference(&mut self, local: &str, element: &BytesStart<'_>) {
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
    pub(super) fn open_note(&mut self, element: &BytesStart<'_>, depth: usize, empty: bool, sink: &mut dyn Sink) {
        let kind = attribute(element, "type");
        let id = attribute(element, "id").and_then(|id| id.parse::<i64>().ok());
        match (self.ctx.notes_kind, id, kind.as_deref()) {
            (Some(note_of), Some(id), None | Some("normal")) if !empty => sink.begin_note(note_of(id)),
            // Separators and continuation notices are the lines Word draws above notes.
            _ if !empty => self.skip_from = Some(depth),
            _ => {}
        }
    }

    pub(super) fn open_table(&mut self, empty: bool, sink: &mut dyn Sink) -> Result<(), ParseError> {
        self.containers.push(Container::Table(Table::default()));
        if empty {
            self.close_table(sink)?;
        }
        Ok(())
    }

    /// A `w:tc`: a new cell of the last row (a row is made for a cell outside any).
    pub(super) fn open_cell(&mut self) {
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
    pub(super) fn set_grid_span(&mut self, element: &BytesStart<'_>) {
        let span = attribute(element, "val").and_then(|v| v.parse::<usize>().ok());
        if let (Some(table), Some(span)) = (self.table(), span) {
            table.current_cell().span = span.clamp(1, MAX_GRID_SPAN);
        }
    }

    pub(super) fn close(&mut self, ns: Ns, local: &str, depth: usize, sink: &mut dyn Sink) -> Result<(), ParseError> {
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

    pub(super) fn field_char(&mut self, kind: Option<&str>) {
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

    pub(super) fn begin_field_result(&mut self, kind: FieldKind) {
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

    pub(super) fn end_field(&mut self) {
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

    pub(super) fn close_para(&mut self, sink: &mut dyn Sink) -> Result<(), ParseError> {
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

    pub(super) fn place_para(&mut self, para: Para, sink: &mut dyn Sink) -> Result<(), ParseError> {
        match self.containers.last_mut() {
            Some(Container::Para(outer)) => outer.deferred.push(para),
            Some(Container::Table(table)) => table.current_cell().paras.push(para),
            None => sink.paragraph(self.part, para)?,
        }
        Ok(())
    }

    pub(super) fn close_table(&mut self, sink: &mut dyn Sink) -> Result<(), ParseError> {
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
pub(super) fn role_takes_links(role: Role) -> bool {
    !matches!(role, Role::Heading(1..=6) | Role::Code)
}

/// Turns the text from `start` to the end into `[text](target)`, unless the text is empty or is
/// the target itself, the target is too long, or the budget for targets is spent.
pub(super) fn close_link(text: &mut String, start: usize, target: &str, budget: &mut usize) {
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
