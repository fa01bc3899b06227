//! Writing the rendition: prefixes of quotes and lists, the spacing between blocks, blocks opened
//! and closed, and text written with the source of each stretch.

use rag_core::{Block, BlockType, HeadingLevel, Span};

use super::{Context, MAX_PREFIX, Open, Writer};

impl Writer<'_> {
    pub(super) fn push_prefix(&mut self, add: &str) {
        self.prefixes.push(self.prefix.len());
        if self.prefix.len() + add.len() <= MAX_PREFIX {
            self.prefix.push_str(add);
        }
    }

    pub(super) fn pop_prefix(&mut self) {
        if let Some(len) = self.prefixes.pop() {
            self.prefix.truncate(len);
        }
    }

    /// A space is due before the next character: not at a block's start, nor after the space
    /// that opens a table cell.
    pub(super) fn want_space(&mut self) {
        self.pending_space |= self.has_content() && !self.out.text.ends_with(' ');
    }

    pub(super) fn has_content(&self) -> bool {
        self.open.as_ref().is_some_and(|o| o.has_content)
    }

    pub(super) fn mark_content(&mut self) {
        if let Some(open) = &mut self.open {
            open.has_content = true;
        }
    }

    /// A flow element starts or ends: the open block ends, except inside a list item, where the
    /// item's next paragraph starts on a new line of the same block.
    pub(super) fn flow_break(&mut self) {
        if self.flat() {
            self.want_space();
            return;
        }
        let in_item = matches!(self.contexts.last(), Some(Context::Item));
        if in_item && self.open.as_ref().is_some_and(|o| o.block_type == BlockType::ListItem) {
            if self.has_content() {
                self.pending_break = true;
            }
        } else {
            self.close_block();
        }
    }

    /// Writes the separator before a block of `block_type` and the line prefix.
    pub(super) fn separate(&mut self, block_type: BlockType) {
        let text = &mut self.out.text;
        if let Some((_, start)) = self.quote
            && text.len() == start
        {
            // The quote's first line: its marker only.
            text.push_str(&self.prefix);
            return;
        }
        if !text.is_empty() {
            let tight = matches!(
                (self.last_closed, block_type),
                (Some(BlockType::ListItem), BlockType::ListItem) | (Some(BlockType::TableRow), BlockType::TableRow)
            ) && !text.ends_with("\n\n");
            text.push('\n');
            if !tight {
                if self.quote.is_some() {
                    text.push_str(self.prefix.trim_end());
                }
                text.push('\n');
            }
        }
        text.push_str(&self.prefix);
    }

    pub(super) fn start_block(&mut self, block_type: BlockType, level: Option<HeadingLevel>, marker: &str) {
        self.close_block();
        let before = self.out.text.len();
        self.separate(block_type);
        let start = self.out.text.len();
        self.out.text.push_str(marker);
        self.serial += 1;
        self.open = Some(Open {
            block_type,
            level,
            before,
            start,
            has_content: false,
            title: String::new(),
            serial: self.serial,
        });
        self.pending_space = false;
        self.pending_break = false;
    }

    /// Opens a block for inline content if none is open: a paragraph, or the type the context
    /// gives (a list item's continuation, a caption).
    pub(super) fn ensure_open(&mut self) {
        if self.open.is_some() {
            return;
        }
        let block_type = self
            .contexts
            .iter()
            .rev()
            .find_map(|c| match c {
                Context::Item => Some(BlockType::ListItem),
                Context::Typed(t) => Some(*t),
                _ => None,
            })
            .unwrap_or(BlockType::Paragraph);
        self.start_block(block_type, None, "");
    }

    pub(super) fn close_block(&mut self) {
        let Some(open) = self.open.take() else {
            return;
        };
        self.pending_space = false;
        self.pending_break = false;
        for marker in self.markers.iter_mut().rev() {
            if marker.written_in == Some(open.serial) {
                self.out.text.push_str(marker.text);
                marker.written_in = Some(usize::MAX);
            }
        }
        if !open.has_content {
            self.out.text.truncate(open.before);
            self.trim_mapped(open.before);
            return;
        }
        let end = self.out.text.len();
        self.last_closed = Some(open.block_type);
        if self.quote.is_some() {
            return;
        }
        let span = Span::new(open.start, end);
        let block = match (open.block_type, open.level) {
            (BlockType::Heading, Some(level)) => Block::heading(level, open.title.trim(), span),
            (block_type, _) => Block::new(block_type, span),
        };
        self.out.blocks.push(block);
    }

    /// Drops source-map entries at or past `len` of the text (it was cut back).
    pub(super) fn trim_mapped(&mut self, len: usize) {
        while self.out.mapped.last().is_some_and(|(span, _)| span.end > len) {
            if let Some((span, source)) = self.out.mapped.pop()
                && span.start < len
            {
                self.out.mapped.push((Span::new(span.start, len), source));
                break;
            }
        }
    }

    /// Writes what waits before a character: the block, a line break or a space, the markers.
    pub(super) fn before_char(&mut self) -> bool {
        self.ensure_open();
        let separated = self.pending_break || self.pending_space;
        if self.pending_break {
            self.out.text.push('\n');
            self.out.text.push_str(&self.prefix);
        } else if self.pending_space {
            self.out.text.push(' ');
        }
        self.pending_break = false;
        self.pending_space = false;
        let serial = self.open.as_ref().map_or(0, |o| o.serial);
        for marker in &mut self.markers {
            if marker.written_in.is_none() {
                self.out.text.push_str(marker.text);
                marker.written_in = Some(serial);
            }
        }
        separated
    }

    /// Inline text: runs of white space become one space, none at a block's edges.
    pub(super) fn write_inline(&mut self, text: &str, source: (usize, usize)) {
        let in_cell = self.in_context(|c| matches!(c, Context::Row { .. }));
        let mut first: Option<usize> = None;
        for c in text.chars() {
            if c.is_ascii_whitespace() {
                self.want_space();
                continue;
            }
            let separated = self.before_char();
            first.get_or_insert(self.out.text.len());
            if in_cell && c == '|' {
                self.out.text.push('\\');
            }
            self.out.text.push(c);
            if let Some(open) = &mut self.open {
                open.has_content = true;
                if open.block_type == BlockType::Heading {
                    if separated && !open.title.is_empty() {
                        open.title.push(' ');
                    }
                    open.title.push(c);
                }
            }
        }
        if let Some(start) = first {
            self.map(Span::new(start, self.out.text.len()), source);
        }
    }

    /// Preformatted text, as it is; each line after the first gets the line prefix.
    pub(super) fn write_raw(&mut self, text: &str, source: (usize, usize)) {
        if self.open.is_none() {
            self.ensure_open();
        }
        let start = self.out.text.len();
        for c in text.chars() {
            self.out.text.push(c);
            if c == '\n' && !self.prefix.is_empty() {
                self.out.text.push_str(&self.prefix);
            }
        }
        self.mark_content();
        if source.1 > source.0 && self.out.text.len() > start {
            self.map(Span::new(start, self.out.text.len()), source);
        }
    }

    pub(super) fn map(&mut self, span: Span, source: (usize, usize)) {
        if let Some((last, last_source)) = self.out.mapped.last_mut()
            && last.end == span.start
            && last_source.1 == source.0
        {
            last.end = span.end;
            last_source.1 = source.1;
            return;
        }
        self.out.mapped.push((span, source));
    }
}
