//! The rendition of the document body: paragraphs and tables written as Markdown-flavoured text
//! with blocks and a source map.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use rag_core::{Block, BlockType, HeadingLevel, MappedSpan, Origin, ParseError, Span};

use super::{NoteRef, Notes, Para, PartAccount, Sink, Table};
use crate::parse::docx::styles::{Marker, Role};
use crate::parse::docx::xml::over_limit;
use crate::parse::docx::{MAX_RENDITION_BYTES, format_bytes};

/// The rendition being written: text, blocks and source map, and what is left out.
#[derive(Debug, Default)]
pub(in crate::parse::docx) struct Rendering {
    pub(in crate::parse::docx) text: String,
    pub(in crate::parse::docx) blocks: Vec<Block>,
    pub(in crate::parse::docx) source_map: Vec<MappedSpan>,
    pub(in crate::parse::docx) left_out: BTreeMap<&'static str, u64>,
    /// Pictures, drawings and embedded objects in the parts read.
    pub(in crate::parse::docx) images: usize,
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
    pub(in crate::parse::docx) fn new(source_uri: &str) -> Self {
        Self {
            source_uri: source_uri.to_owned(),
            ..Self::default()
        }
    }

    /// Adds the notes of a notes part, which the body's references place.
    pub(in crate::parse::docx) fn add_notes(&mut self, part: &str, notes: Notes) {
        for (note, paras) in notes.notes {
            self.notes.insert(note, (part.to_owned(), paras));
        }
    }

    /// Counts a part's bytes: its text kept, its markup and what else it leaves out.
    pub(in crate::parse::docx) fn account(&mut self, part_len: usize, account: PartAccount) {
        let dropped: u64 = account.dropped.values().sum();
        let markup = (part_len as u64).saturating_sub(account.kept).saturating_sub(dropped);
        self.images += account.images;
        self.leave_out("markup", markup);
        for (kind, bytes) in account.dropped {
            self.leave_out(kind, bytes);
        }
    }

    pub(in crate::parse::docx) fn leave_out(&mut self, kind: &'static str, bytes: u64) {
        if bytes > 0 {
            let total = self.left_out.entry(kind).or_default();
            *total = total.saturating_add(bytes);
        }
    }

    /// Writes what is still pending and every note no paragraph referenced, at the end.
    pub(in crate::parse::docx) fn finish(&mut self) -> Result<(), ParseError> {
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

    pub(super) fn check_size(&self) -> Result<(), ParseError> {
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
    pub(super) fn begin_block(&mut self, tight: bool) -> usize {
        if !self.text.is_empty() {
            self.text.push_str(if tight { "\n" } else { "\n\n" });
        }
        self.text.len()
    }

    /// Writes text that comes from paragraph `index` of `part`, mapped to it.
    pub(super) fn push_mapped(&mut self, text: &str, part: &str, index: usize) {
        let start = self.text.len();
        self.text.push_str(text);
        if !text.is_empty() {
            self.source_map.push(MappedSpan::new(
                Span::new(start, self.text.len()),
                Origin::paragraphs(part, index, index),
            ));
        }
    }

    pub(super) fn end_block(&mut self, block: Block, list: Option<u32>) -> Result<(), ParseError> {
        self.blocks.push(block);
        self.after_list_item = list;
        self.check_size()
    }

    pub(super) fn write_paragraph(&mut self, part: &str, para: &Para) -> Result<(), ParseError> {
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

    pub(super) fn flush_code(&mut self) -> Result<(), ParseError> {
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

    pub(super) fn flush_notes(&mut self) -> Result<(), ParseError> {
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

pub(super) fn push_marker(text: &mut String, marker: Marker) {
    match marker {
        Marker::Bullet => text.push_str("- "),
        Marker::Number(n) => {
            let _ = write!(text, "{n}. ");
        }
    }
}

pub(super) fn longest_backtick_run(text: &str) -> usize {
    text.split(|ch| ch != '`').map(str::len).max().unwrap_or(0)
}

/// A cell paragraph as a table row writes it: on one line, `|` escaped, breaks as `<br>`.
pub(super) fn cell_text(para: &Para) -> String {
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
