//! The content-stream interpreter: runs a page's operators, and those of the forms it draws,
//! over the text and graphics state ([`graphics`](super::graphics)), and turns the text-showing
//! ones into positioned text runs.
//! Text drawn outside the page, and text a reader does not see ([`visibility`](super::visibility)),
//! is counted instead of read.

use std::rc::Rc;

use lopdf::{Dictionary, Document, Object, ObjectId};
use rag_core::ParseError;

use super::PdfLimits;
use super::backend::{Budget, FontCache, resource};
use super::content::{Operand, Operations, Skipped};
use super::fonts::{Font, deref, number};
use super::graphics::{IDENTITY, Matrix, State, StreamState, apply, multiply, transform_rect};
use super::layout::{Rect, TextRun};
use super::visibility::{self, Canvas, Colour, Hidden, HiddenBytes, MIN_LEGIBLE_SIZE, Space};

/// Form XObjects nest at most this deep (a form drawing itself is also stopped by the stack).
const MAX_FORM_DEPTH: usize = 12;

/// A kern in a `TJ` array wider than this share of an em reads as a space between words.
const KERN_SPACE_EM: f64 = 0.15;

/// A kern wider than this share of an em starts a new run, so the layout sees the gap (a table
/// cell or a column laid out by one `TJ`).
const KERN_GAP_EM: f64 = 0.8;

/// What one page is read in: its document, limits and geometry.
pub(super) struct PageContext<'a> {
    pub(super) doc: &'a Document,
    pub(super) uri: &'a str,
    pub(super) number: u32,
    pub(super) limits: PdfLimits,
    pub(super) keep_hidden: bool,
    /// User space to the displayed page (points, top-left origin).
    pub(super) frame: Matrix,
    pub(super) width: f64,
    pub(super) height: f64,
}

/// What the interpreter read of one page.
pub(super) struct PageRead {
    pub(super) runs: Vec<TextRun>,
    pub(super) off_page_bytes: usize,
    pub(super) hidden: HiddenBytes,
    pub(super) skipped: Skipped,
    pub(super) too_many_runs: bool,
}

pub(super) struct Interpreter<'a> {
    page: PageContext<'a>,
    fonts: &'a mut FontCache,
    budget: &'a mut Budget,
    runs: Vec<TextRun>,
    /// Whether each run of `runs` is drawn invisible (kept only over an image).
    invisible: Vec<bool>,
    /// Operators executed on this page, forms included.
    operations: usize,
    /// The forms being drawn, outermost first.
    forms: Vec<ObjectId>,
    /// Bytes of text drawn outside the page's visible box.
    off_page_bytes: usize,
    hidden: HiddenBytes,
    skipped: Skipped,
    /// Whether the page drew more runs than [`PdfLimits::max_runs_per_page`].
    too_many_runs: bool,
    canvas: Canvas,
    /// Where the text of a glyph that is not read is decoded, to count it.
    scratch: String,
}

/// The run being built from the glyphs of one text-showing operator.
struct Pending {
    text: String,
    bbox: Option<Rect>,
    size: f64,
    /// Bold and monospaced, from the operator's font.
    style: Option<(bool, bool)>,
    invisible: bool,
}

impl Pending {
    fn new() -> Self {
        Pending {
            text: String::new(),
            bbox: None,
            size: 0.0,
            style: None,
            invisible: false,
        }
    }
}

impl<'a> Interpreter<'a> {
    pub(super) fn new(page: PageContext<'a>, fonts: &'a mut FontCache, budget: &'a mut Budget) -> Self {
        Interpreter {
            page,
            fonts,
            budget,
            runs: Vec::new(),
            invisible: Vec::new(),
            operations: 0,
            forms: Vec::new(),
            off_page_bytes: 0,
            hidden: HiddenBytes::default(),
            skipped: Skipped::default(),
            too_many_runs: false,
            canvas: Canvas::default(),
            scratch: String::new(),
        }
    }

    /// Runs the page's content stream.
    pub(super) fn run_page(&mut self, content: &[u8], resources: &[Dictionary]) -> Result<(), ParseError> {
        self.run(content, resources, State::default())
    }

    /// What was read; invisible runs over no image are left out as hidden now that every image
    /// of the page is known.
    pub(super) fn finish(self) -> PageRead {
        let mut hidden = self.hidden;
        let canvas = &self.canvas;
        let runs = self
            .runs
            .into_iter()
            .zip(self.invisible)
            .filter_map(|(run, invisible)| {
                if invisible && !canvas.over_image(&run.bbox) {
                    hidden.add(Hidden::Invisible, run.text.len());
                    None
                } else {
                    Some(run)
                }
            })
            .collect();
        PageRead {
            runs,
            off_page_bytes: self.off_page_bytes,
            hidden,
            skipped: self.skipped,
            too_many_runs: self.too_many_runs,
        }
    }

    fn run(&mut self, content: &[u8], resources: &[Dictionary], state: State) -> Result<(), ParseError> {
        let mut stream = StreamState::new(state, self.page.frame);
        let mut operations = Operations::new(content);
        let result = self.run_operations(&mut operations, &mut stream, resources);
        let skipped = operations.skipped;
        self.skipped.tokens += skipped.tokens;
        self.skipped.bytes += skipped.bytes;
        result
    }

    fn run_operations(
        &mut self,
        operations: &mut Operations<'_>,
        stream: &mut StreamState,
        resources: &[Dictionary],
    ) -> Result<(), ParseError> {
        for operation in operations {
            self.count_operation()?;
            let (operator, operands) = (operation.operator, operation.operands);
            if stream.apply_state_operator(operator, &operands, &mut self.canvas) {
                continue;
            }
            match operator {
                b"Tf" => {
                    let state = &mut stream.state;
                    state.size = operands.get(1).and_then(Operand::number).unwrap_or(state.size);
                    state.font = self.font_named(resources, &operands);
                }
                b"cs" | b"CS" => {
                    let space = operands
                        .first()
                        .and_then(Operand::name)
                        .map_or(Space::Other, |name| self.colour_space(resources, name));
                    let paint = if operator == b"cs" {
                        &mut stream.state.fill
                    } else {
                        &mut stream.state.stroke
                    };
                    paint.set_space(space);
                }
                b"Tj" | b"'" | b"\"" => self.show_string(stream, operator, &operands),
                b"TJ" => self.show_array(stream, &operands),
                b"Do" => {
                    if let Some(name) = operands.first().and_then(Operand::name) {
                        self.draw_xobject(resources, name, &stream.state)?;
                    }
                }
                b"EI" => self.canvas.image(self.unit_square(&stream.state)),
                b"sh" => {
                    let whole = Rect::new(0.0, 0.0, self.page.width, self.page.height);
                    self.canvas.fill(stream.state.clip.unwrap_or(whole), Colour::Unknown);
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Counts one operator against the page's and the file's limits.
    fn count_operation(&mut self) -> Result<(), ParseError> {
        self.operations += 1;
        if self.operations > self.page.limits.max_operations_per_page {
            return Err(ParseError::LimitExceeded {
                source_uri: self.page.uri.to_owned(),
                what: format!("the content operators of page {}", self.page.number),
                limit: format!("{} operators", self.page.limits.max_operations_per_page),
            });
        }
        self.budget.count_operation(self.page.uri, self.page.number)
    }

    /// The font a `Tf` names (its first operand) in the resources, read once per font object.
    fn font_named(&mut self, resources: &[Dictionary], operands: &[Operand]) -> Option<Rc<Font>> {
        let doc = self.page.doc;
        operands
            .first()
            .and_then(Operand::name)
            .and_then(|name| resource(doc, resources, b"Font", name))
            .and_then(|font| self.fonts.font(doc, font, self.page.limits.max_stream_bytes))
    }

    /// The colour space `name` stands for: a device space, or one of the page's resources.
    fn colour_space(&self, resources: &[Dictionary], name: &[u8]) -> Space {
        let doc = self.page.doc;
        let Some(object) = resource(doc, resources, b"ColorSpace", name).and_then(|o| deref(doc, Some(o))) else {
            return visibility::space_of(name, None);
        };
        match object {
            Object::Name(family) => visibility::space_of(family, None),
            Object::Array(items) => {
                let family = items
                    .first()
                    .and_then(|o| deref(doc, Some(o)))
                    .and_then(|o| o.as_name().ok());
                let components = items
                    .get(1)
                    .and_then(|o| deref(doc, Some(o)))
                    .and_then(|o| o.as_stream().ok())
                    .and_then(|s| number(doc, s.dict.get(b"N").ok()))
                    .map(|n| n as i64);
                family.map_or(Space::Other, |family| visibility::space_of(family, components))
            }
            _ => Space::Other,
        }
    }

    /// `Tj` shows a string; `'` moves to the next line first, and `"` also sets the word and
    /// character spacing.
    fn show_string(&mut self, stream: &mut StreamState, operator: &[u8], operands: &[Operand]) {
        if operator != b"Tj" {
            if operator == b"\"" {
                let state = &mut stream.state;
                state.word_spacing = operands.first().and_then(Operand::number).unwrap_or(state.word_spacing);
                state.char_spacing = operands.get(1).and_then(Operand::number).unwrap_or(state.char_spacing);
            }
            stream.move_line(0.0, -stream.state.leading);
        }
        if let Some(Operand::String(bytes)) = operands.last() {
            let mut pending = Pending::new();
            let mut paint = None;
            self.show(stream, bytes, &mut pending, &mut paint);
            self.flush(&mut pending);
        }
    }

    /// `TJ`: strings and kerns; a wide kern reads as a space, a wider one starts a new run.
    fn show_array(&mut self, stream: &mut StreamState, operands: &[Operand]) {
        let Some(Operand::Array(items)) = operands.first() else {
            return;
        };
        let mut pending = Pending::new();
        let mut paint = None;
        for item in items {
            match item {
                Operand::String(bytes) => self.show(stream, bytes, &mut pending, &mut paint),
                Operand::Number(kern) => {
                    let state = &stream.state;
                    let tx = -kern / 1000.0 * state.size * state.horizontal_scale;
                    stream.tm = multiply(&[1.0, 0.0, 0.0, 1.0, tx, 0.0], &stream.tm);
                    let em = -kern / 1000.0;
                    if em > KERN_GAP_EM {
                        self.flush(&mut pending);
                    } else if em > KERN_SPACE_EM && !pending.text.is_empty() && !pending.text.ends_with(' ') {
                        pending.text.push(' ');
                    }
                }
                _ => {}
            }
        }
        self.flush(&mut pending);
    }

    /// The box the unit square fills on the page under the current matrix: where an image is.
    fn unit_square(&self, state: &State) -> Rect {
        transform_rect(&multiply(&state.ctm, &self.page.frame), [0.0, 0.0, 1.0, 1.0])
    }

    /// Draws the XObject `name`: a form with its own resources, matrix and clip; an image is
    /// noted where it lies.
    fn draw_xobject(&mut self, resources: &[Dictionary], name: &[u8], state: &State) -> Result<(), ParseError> {
        let doc = self.page.doc;
        let Some(Object::Reference(id)) = resource(doc, resources, b"XObject", name) else {
            return Ok(());
        };
        let id = *id;
        let Ok(stream) = doc.get_object(id).and_then(Object::as_stream) else {
            return Ok(());
        };
        match stream.dict.get(b"Subtype").and_then(Object::as_name).ok() {
            Some(b"Image") => {
                self.canvas.image(self.unit_square(state));
                return Ok(());
            }
            Some(b"Form") => {}
            _ => return Ok(()),
        }
        if self.forms.len() >= MAX_FORM_DEPTH || self.forms.contains(&id) {
            return Ok(());
        }
        let limits = self.page.limits;
        let content = match stream.decompressed_content_with_limit(limits.max_stream_bytes) {
            Ok(content) => content,
            Err(lopdf::Error::Decompress(lopdf::DecompressError::MemoryLimitExceeded { .. })) => {
                return Err(ParseError::LimitExceeded {
                    source_uri: self.page.uri.to_owned(),
                    what: format!("the decompressed size of a form on page {}", self.page.number),
                    limit: format!("{} MiB", limits.max_stream_bytes >> 20),
                });
            }
            // A form that does not decode draws nothing, as in viewers.
            Err(_) => return Ok(()),
        };
        self.budget
            .count_content(self.page.uri, self.page.number, content.len())?;
        let matrix = deref(doc, stream.dict.get(b"Matrix").ok())
            .and_then(|o| o.as_array().ok())
            .and_then(|a| matrix_of_objects(doc, a))
            .unwrap_or(IDENTITY);
        let mut form_state = state.clone();
        form_state.ctm = multiply(&matrix, &state.ctm);
        let bbox = deref(doc, stream.dict.get(b"BBox").ok())
            .and_then(|o| o.as_array().ok())
            .and_then(|a| {
                let v: Vec<f64> = a.iter().filter_map(|o| number(doc, Some(o))).collect();
                <[f64; 4]>::try_from(v).ok()
            });
        if let Some([x0, y0, x1, y1]) = bbox {
            let to_page = multiply(&form_state.ctm, &self.page.frame);
            form_state.clip_to(transform_rect(
                &to_page,
                [x0.min(x1), y0.min(y1), x0.max(x1), y0.max(y1)],
            ));
        }
        let own = deref(doc, stream.dict.get(b"Resources").ok()).and_then(|o| o.as_dict().ok());
        let form_resources: Vec<Dictionary> = own.into_iter().cloned().chain(resources.iter().cloned()).collect();
        self.forms.push(id);
        let result = self.run(&content, &form_resources, form_state);
        self.forms.pop();
        result
    }

    /// Why text in the current state is not seen wherever it is drawn on the page (its render
    /// mode, its colour against what is under `(x, y)`), if it is not.
    fn paint_hidden(&self, state: &State, x: f64, y: f64) -> Option<Hidden> {
        if state.render_mode == 3 || state.render_mode == 7 {
            return Some(Hidden::Invisible);
        }
        self.canvas
            .blends_in(x, y, &state.text_colours())
            .then_some(Hidden::Background)
    }

    /// Shows `bytes` in the current font at the text matrix, advancing it, adding the glyphs to
    /// `pending`. `paint` caches [`Interpreter::paint_hidden`] for the operator, judged at its
    /// first glyph on the page.
    fn show(
        &mut self,
        stream: &mut StreamState,
        bytes: &[u8],
        pending: &mut Pending,
        paint: &mut Option<Option<Hidden>>,
    ) {
        let state = &stream.state;
        let Some(font) = state.font.clone() else { return };
        if pending.style.is_none() {
            pending.style = Some((font.bold, font.mono));
        }
        let (width, height) = (self.page.width, self.page.height);
        let to_page = multiply(&state.ctm, &self.page.frame);
        let glyph_space = [
            state.size * state.horizontal_scale,
            0.0,
            0.0,
            state.size,
            0.0,
            state.rise,
        ];
        for glyph in font.glyphs(bytes) {
            let trm = multiply(&multiply(&glyph_space, &stream.tm), &to_page);
            let advance = glyph.width * font.scale;
            // The glyph's box: from its origin to its advance, from descent to ascent.
            let corners = [
                apply(&trm, 0.0, font.descent * font.scale),
                apply(&trm, advance, font.descent * font.scale),
                apply(&trm, 0.0, font.ascent * font.scale),
                apply(&trm, advance, font.ascent * font.scale),
            ];
            let (mut x0, mut x1) = corners
                .iter()
                .fold((f64::MAX, f64::MIN), |(lo, hi), p| (lo.min(p.0), hi.max(p.0)));
            let (mut y0, mut y1) = corners
                .iter()
                .fold((f64::MAX, f64::MIN), |(lo, hi), p| (lo.min(p.1), hi.max(p.1)));
            let origin = apply(&trm, 0.0, 0.0);
            let up = apply(&trm, 0.0, 1.0);
            let across = apply(&trm, 1.0, 0.0);
            // The font size as drawn: the length of one text-space unit upwards, in points; and
            // sideways, for text squeezed by its matrix or `Tz`.
            let unit = font.scale * 1000.0;
            let size = (up.0 - origin.0).hypot(up.1 - origin.1) * unit;
            let breadth = (across.0 - origin.0).hypot(across.1 - origin.1) * unit;
            let on_page = x1 >= 0.0 && x0 <= width && y1 >= 0.0 && y0 <= height;
            let hidden = if !(on_page || stream.line_on_page) || !size.is_finite() {
                // Text drawn outside the visible page is not on the page; it is counted, not read.
                self.scratch.clear();
                self.off_page_bytes += font.decode(glyph.code, &mut self.scratch);
                None
            } else {
                stream.line_on_page = true;
                // The tail of a line that starts on the page is read where it runs past the edge.
                (x0, x1, y0, y1) = (
                    x0.clamp(0.0, width),
                    x1.clamp(0.0, width),
                    y0.clamp(0.0, height),
                    y1.clamp(0.0, height),
                );
                let (cx, cy) = ((x0 + x1) / 2.0, (y0 + y1) / 2.0);
                if self.page.keep_hidden {
                    Some(None)
                } else if size.min(breadth) < MIN_LEGIBLE_SIZE {
                    Some(Some(Hidden::Tiny))
                } else if state.clip.is_some_and(|clip| !visibility::contains(&clip, cx, cy)) {
                    Some(Some(Hidden::Clipped))
                } else {
                    Some(*paint.get_or_insert_with(|| self.paint_hidden(state, cx, cy)))
                }
            };
            match hidden {
                None => {}
                Some(Some(why)) if why != Hidden::Invisible => {
                    self.scratch.clear();
                    self.hidden.add(why, font.decode(glyph.code, &mut self.scratch));
                }
                Some(invisible) => {
                    // A large jump back or forward inside one string starts a new run.
                    if let Some(bbox) = pending.bbox
                        && (x0 + 0.01 < bbox.x0 || x0 - bbox.x1 > KERN_GAP_EM * size.max(1.0))
                    {
                        self.flush(pending);
                    }
                    pending.invisible = invisible.is_some();
                    if font.decode(glyph.code, &mut pending.text) > 0 {
                        let rect = Rect::new(x0, y0, x1.max(x0), y1.max(y0));
                        pending.bbox = Some(pending.bbox.map_or(rect, |b| b.union(&rect)));
                        pending.size = pending.size.max(size);
                    }
                }
            }
            let word_spacing = if glyph.single_byte && glyph.code == 32 {
                state.word_spacing
            } else {
                0.0
            };
            let tx = (advance * state.size + state.char_spacing + word_spacing) * state.horizontal_scale;
            stream.tm = multiply(&[1.0, 0.0, 0.0, 1.0, tx, 0.0], &stream.tm);
        }
    }

    fn flush(&mut self, pending: &mut Pending) {
        let taken = std::mem::replace(pending, Pending::new());
        pending.style = taken.style;
        let (Some(bbox), Some((bold, mono))) = (taken.bbox, taken.style) else {
            return;
        };
        if taken.text.trim().is_empty() {
            return;
        }
        if self.runs.len() >= self.page.limits.max_runs_per_page {
            self.too_many_runs = true;
            return;
        }
        self.runs.push(TextRun {
            text: taken.text,
            bbox,
            size: taken.size,
            bold,
            mono,
        });
        self.invisible.push(taken.invisible);
    }
}

fn matrix_of_objects(doc: &Document, objects: &[Object]) -> Option<Matrix> {
    let v: Vec<f64> = objects.iter().filter_map(|o| number(doc, Some(o))).collect();
    let [a, b, c, d, e, f] = v[..] else { return None };
    Some([a, b, c, d, e, f])
}
