//! Reading the file: lopdf parses it (cross-reference repair, object streams, decryption with the
//! empty password, filters, with its decompression and nesting bounds), and our content-stream
//! interpreter turns each page's text-showing operators into positioned text runs.

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::rc::Rc;

use lopdf::content::{Content, Operation};
use lopdf::{Dictionary, Document, LoadOptions, Object, ObjectId};
use rag_core::ParseError;

use super::PdfLimits;
use super::fonts::{Font, deref, number};
use super::layout::{PageText, Rect, TextRun};
use super::malformed;

/// An affine transform `[a b c d e f]`, as PDF writes them.
type Matrix = [f64; 6];

const IDENTITY: Matrix = [1.0, 0.0, 0.0, 1.0, 0.0, 0.0];

fn multiply(m: &Matrix, n: &Matrix) -> Matrix {
    [
        m[0] * n[0] + m[1] * n[2],
        m[0] * n[1] + m[1] * n[3],
        m[2] * n[0] + m[3] * n[2],
        m[2] * n[1] + m[3] * n[3],
        m[4] * n[0] + m[5] * n[2] + n[4],
        m[4] * n[1] + m[5] * n[3] + n[5],
    ]
}

fn apply(m: &Matrix, x: f64, y: f64) -> (f64, f64) {
    (m[0] * x + m[2] * y + m[4], m[1] * x + m[3] * y + m[5])
}

/// The text of every page, in page order, within `limits`.
///
/// lopdf is a parser of untrusted input that is fuzzed and bounds what it decompresses and how
/// deep it nests, but it is not ours: a panic in it is caught here and reported as a damaged file
/// rather than taking the process down.
pub(super) fn read_pages(bytes: &[u8], uri: &str, limits: PdfLimits) -> Result<Vec<PageText>, ParseError> {
    let header_at = bytes.windows(5).take(1024).position(|w| w == b"%PDF-");
    if header_at.is_none() {
        return Err(malformed(
            uri,
            "is not a PDF (no `%PDF-` header in its first 1024 bytes)".to_owned(),
        ));
    }
    match catch_unwind(AssertUnwindSafe(|| read_document(bytes, uri, limits))) {
        Ok(result) => result,
        Err(_) => Err(malformed(
            uri,
            "is damaged: the PDF reader failed on it; repair it (e.g. `qpdf in.pdf repaired.pdf`) or export it again"
                .to_owned(),
        )),
    }
}

fn read_document(bytes: &[u8], uri: &str, limits: PdfLimits) -> Result<Vec<PageText>, ParseError> {
    let options = LoadOptions {
        // An encrypted file that opens without a password (only its permissions are protected)
        // is read as any other.
        password: Some(String::new()),
        max_decompressed_size: Some(limits.max_stream_bytes),
        ..LoadOptions::default()
    };
    let doc = Document::load_mem_with_options(bytes, options).map_err(|err| load_error(uri, &err, limits))?;
    let pages = doc.get_pages();
    if pages.len() > limits.max_pages {
        return Err(ParseError::LimitExceeded {
            source_uri: uri.to_owned(),
            what: format!("the number of pages ({})", pages.len()),
            limit: format!("{} pages", limits.max_pages),
        });
    }
    if pages.is_empty() {
        return Err(malformed(
            uri,
            "has no pages: the file is damaged or truncated; repair it (e.g. `qpdf in.pdf repaired.pdf`) or export it again"
                .to_owned(),
        ));
    }
    let mut text_bytes = 0usize;
    let mut out = Vec::with_capacity(pages.len());
    let mut fonts = FontCache::default();
    for (&number, &page_id) in &pages {
        let page = read_page(&doc, number, page_id, uri, limits, &mut fonts)?;
        text_bytes += page.runs.iter().map(|r| r.text.len()).sum::<usize>();
        if text_bytes > limits.max_text_bytes {
            return Err(ParseError::LimitExceeded {
                source_uri: uri.to_owned(),
                what: format!("the text of pages 1 to {number}"),
                limit: format!("{} MiB", limits.max_text_bytes >> 20),
            });
        }
        out.push(page);
    }
    Ok(out)
}

fn load_error(uri: &str, err: &lopdf::Error, limits: PdfLimits) -> ParseError {
    match err {
        lopdf::Error::InvalidPassword | lopdf::Error::Decryption(_) => malformed(
            uri,
            format!(
                "is encrypted and does not open without a password ({err}): decrypt it \
                 (`qpdf --decrypt --password=PASSWORD in.pdf decrypted.pdf`) and chunk the decrypted file"
            ),
        ),
        lopdf::Error::Decompress(lopdf::DecompressError::MemoryLimitExceeded { .. }) => ParseError::LimitExceeded {
            source_uri: uri.to_owned(),
            what: "the decompressed size of a stream".to_owned(),
            limit: format!("{} MiB", limits.max_stream_bytes >> 20),
        },
        _ => malformed(
            uri,
            format!("is damaged or truncated ({err}): repair it (e.g. `qpdf in.pdf repaired.pdf`) or export it again"),
        ),
    }
}

/// Fonts are read once per font object, whatever the number of pages that use them.
#[derive(Default)]
struct FontCache {
    by_id: BTreeMap<ObjectId, Rc<Font>>,
}

impl FontCache {
    fn font(&mut self, doc: &Document, object: &Object, limit: usize) -> Option<Rc<Font>> {
        match object {
            Object::Reference(id) => {
                if let Some(font) = self.by_id.get(id) {
                    return Some(Rc::clone(font));
                }
                let dict = doc.get_dictionary(*id).ok()?;
                let font = Rc::new(Font::from_dict(doc, dict, limit));
                self.by_id.insert(*id, Rc::clone(&font));
                Some(font)
            }
            Object::Dictionary(dict) => Some(Rc::new(Font::from_dict(doc, dict, limit))),
            _ => None,
        }
    }
}

/// The page's visible box (crop box, else media box, inherited through the page tree) and its
/// rotation, as the transform from user space to points from the displayed page's top-left
/// corner, with the displayed width and height.
fn page_frame(doc: &Document, page_id: ObjectId) -> (Matrix, f64, f64) {
    let inherited = |key: &[u8]| -> Option<&Object> {
        let mut node = doc.get_dictionary(page_id).ok()?;
        for _ in 0..32 {
            if let Ok(value) = node.get(key) {
                return deref(doc, Some(value));
            }
            node = deref(doc, node.get(b"Parent").ok())?.as_dict().ok()?;
        }
        None
    };
    let rect = |key: &[u8]| -> Option<[f64; 4]> {
        let array = inherited(key)?.as_array().ok()?;
        let v: Vec<f64> = array.iter().filter_map(|o| number(doc, Some(o))).collect();
        let [x0, y0, x1, y1] = v[..] else { return None };
        let r = [x0.min(x1), y0.min(y1), x0.max(x1), y0.max(y1)];
        (r[2] - r[0] > 1.0 && r[3] - r[1] > 1.0).then_some(r)
    };
    let [x0, y0, x1, y1] = rect(b"CropBox")
        .or_else(|| rect(b"MediaBox"))
        .unwrap_or([0.0, 0.0, 612.0, 792.0]);
    let rotate = inherited(b"Rotate")
        .and_then(|o| o.as_i64().ok())
        .unwrap_or(0)
        .rem_euclid(360);
    let (w, h) = (x1 - x0, y1 - y0);
    match rotate {
        90 => ([0.0, 1.0, 1.0, 0.0, -x0, -y0], h, w),
        180 => ([-1.0, 0.0, 0.0, 1.0, x1, -y0], w, h),
        270 => ([0.0, -1.0, -1.0, 0.0, y1, x1], h, w),
        _ => ([1.0, 0.0, 0.0, -1.0, -x0, y1], w, h),
    }
}

fn read_page(
    doc: &Document,
    number: u32,
    page_id: ObjectId,
    uri: &str,
    limits: PdfLimits,
    fonts: &mut FontCache,
) -> Result<PageText, ParseError> {
    let (frame, width, height) = page_frame(doc, page_id);
    let content = doc
        .get_page_content_with_limit(page_id, limits.max_stream_bytes)
        .map_err(|err| match err {
            lopdf::Error::Decompress(lopdf::DecompressError::MemoryLimitExceeded { .. }) => ParseError::LimitExceeded {
                source_uri: uri.to_owned(),
                what: format!("the decompressed content of page {number}"),
                limit: format!("{} MiB", limits.max_stream_bytes >> 20),
            },
            err => malformed(
                uri,
                format!("page {number} cannot be read ({err}): repair the file (e.g. `qpdf in.pdf repaired.pdf`)"),
            ),
        })?;
    let resources = page_resources(doc, page_id);
    let mut interpreter = Interpreter {
        doc,
        uri,
        page: number,
        limits,
        fonts,
        frame,
        width,
        height,
        runs: Vec::new(),
        operations: 0,
        forms: Vec::new(),
        too_many_runs: false,
        off_page_bytes: 0,
        scratch: String::new(),
    };
    interpreter.run(&content, &resources, IDENTITY)?;
    if interpreter.too_many_runs {
        return Err(ParseError::LimitExceeded {
            source_uri: uri.to_owned(),
            what: format!("the text runs of page {number}"),
            limit: format!("{} runs", limits.max_runs_per_page),
        });
    }
    Ok(PageText {
        number,
        width,
        height,
        runs: interpreter.runs,
        off_page_bytes: interpreter.off_page_bytes,
    })
}

/// A page's resource dictionaries, nearest first (its own, then those it inherits).
fn page_resources(doc: &Document, page_id: ObjectId) -> Vec<Dictionary> {
    let Ok((own, inherited)) = doc.get_page_resources(page_id) else {
        return Vec::new();
    };
    own.into_iter()
        .cloned()
        .chain(
            inherited
                .into_iter()
                .filter_map(|id| doc.get_dictionary(id).ok().cloned()),
        )
        .collect()
}

/// Looks `name` up in the `category` (`Font`, `XObject`) of the first resource dictionary that has
/// it.
fn resource<'a>(doc: &'a Document, resources: &'a [Dictionary], category: &[u8], name: &[u8]) -> Option<&'a Object> {
    resources.iter().find_map(|dict| {
        let entries = deref(doc, dict.get(category).ok())?.as_dict().ok()?;
        entries.get(name).ok()
    })
}

/// Form XObjects nest at most this deep (a form drawing itself is also stopped by the stack).
const MAX_FORM_DEPTH: usize = 12;

/// The graphics and text state the interpreter tracks.
#[derive(Clone)]
struct State {
    ctm: Matrix,
    font: Option<Rc<Font>>,
    size: f64,
    char_spacing: f64,
    word_spacing: f64,
    horizontal_scale: f64,
    leading: f64,
    rise: f64,
}

impl Default for State {
    fn default() -> Self {
        State {
            ctm: IDENTITY,
            font: None,
            size: 0.0,
            char_spacing: 0.0,
            word_spacing: 0.0,
            horizontal_scale: 1.0,
            leading: 0.0,
            rise: 0.0,
        }
    }
}

struct Interpreter<'a> {
    doc: &'a Document,
    uri: &'a str,
    page: u32,
    limits: PdfLimits,
    fonts: &'a mut FontCache,
    /// User space to the displayed page (points, top-left origin).
    frame: Matrix,
    width: f64,
    height: f64,
    runs: Vec<TextRun>,
    /// Operators executed on this page, forms included.
    operations: usize,
    /// The forms being drawn, outermost first.
    forms: Vec<ObjectId>,
    /// Whether the page drew more runs than [`PdfLimits::max_runs_per_page`].
    too_many_runs: bool,
    /// Bytes of text drawn outside the page's visible box.
    off_page_bytes: usize,
    /// Where the text of a glyph off the page is decoded, to count it.
    scratch: String,
}

/// A kern in a `TJ` array wider than this share of an em reads as a space between words.
const KERN_SPACE_EM: f64 = 0.15;

/// A kern wider than this share of an em starts a new run, so the layout sees the gap (a table
/// cell or a column laid out by one `TJ`).
const KERN_GAP_EM: f64 = 0.8;

/// The run being built from the glyphs of one text-showing operator.
struct Pending {
    text: String,
    bbox: Option<Rect>,
    size: f64,
    /// Bold and monospaced, from the operator's font.
    style: Option<(bool, bool)>,
}

/// What the operators of one content stream change as they run: the graphics state, the states
/// `q` saved, the text matrix and the text line matrix.
struct StreamState {
    state: State,
    saved: Vec<State>,
    tm: Matrix,
    tlm: Matrix,
}

impl StreamState {
    fn new(base: Matrix) -> Self {
        StreamState {
            state: State {
                ctm: base,
                ..State::default()
            },
            saved: Vec::new(),
            tm: IDENTITY,
            tlm: IDENTITY,
        }
    }

    /// Moves the text line matrix by `(tx, ty)` and starts the line there (`Td`, `TD`, `T*`).
    fn move_line(&mut self, tx: f64, ty: f64) {
        self.tlm = multiply(&[1.0, 0.0, 0.0, 1.0, tx, ty], &self.tlm);
        self.tm = self.tlm;
    }

    /// Applies an operator that only changes the graphics or text state; `false` for any other.
    fn apply_state_operator(&mut self, operator: &str, operands: &[Object]) -> bool {
        let num = |i: usize| operand_number(operands, i);
        let state = &mut self.state;
        match operator {
            // Deeper saves than this are not real pages; the state is simply not saved.
            "q" if self.saved.len() < 1024 => self.saved.push(state.clone()),
            "Q" => {
                if let Some(saved) = self.saved.pop() {
                    *state = saved;
                }
            }
            "cm" => {
                if let Some(m) = matrix_of(operands) {
                    state.ctm = multiply(&m, &state.ctm);
                }
            }
            "BT" => {
                self.tm = IDENTITY;
                self.tlm = IDENTITY;
            }
            "Tc" => state.char_spacing = num(0).unwrap_or(0.0),
            "Tw" => state.word_spacing = num(0).unwrap_or(0.0),
            "Tz" => state.horizontal_scale = num(0).unwrap_or(100.0) / 100.0,
            "TL" => state.leading = num(0).unwrap_or(0.0),
            "Ts" => state.rise = num(0).unwrap_or(0.0),
            "Td" | "TD" => {
                let (tx, ty) = (num(0).unwrap_or(0.0), num(1).unwrap_or(0.0));
                if operator == "TD" {
                    state.leading = -ty;
                }
                self.move_line(tx, ty);
            }
            "Tm" => {
                if let Some(m) = matrix_of(operands) {
                    self.tlm = m;
                    self.tm = m;
                }
            }
            "T*" => {
                let leading = state.leading;
                self.move_line(0.0, -leading);
            }
            _ => return false,
        }
        true
    }
}

/// Operand `i` as a finite number.
fn operand_number(operands: &[Object], i: usize) -> Option<f64> {
    operands
        .get(i)
        .and_then(|o| o.as_float().ok())
        .map(f64::from)
        .filter(|v| v.is_finite())
}

impl Interpreter<'_> {
    fn run(&mut self, content: &[u8], resources: &[Dictionary], base: Matrix) -> Result<(), ParseError> {
        let mut stream = StreamState::new(base);
        for operation in Content::decode_iter(content) {
            // A content stream that stops parsing part-way keeps what was read before.
            let Ok(operation) = operation else { break };
            self.count_operation()?;
            let Operation { operator, operands } = operation;
            if stream.apply_state_operator(&operator, &operands) {
                continue;
            }
            match operator.as_str() {
                "Tf" => {
                    let state = &mut stream.state;
                    state.size = operand_number(&operands, 1).unwrap_or(state.size);
                    state.font = self.font_named(resources, &operands);
                }
                "Tj" | "'" | "\"" => self.show_string(&mut stream, &operator, &operands),
                "TJ" => self.show_array(&mut stream, &operands),
                "Do" => {
                    if let Some(name) = operands.first().and_then(|o| o.as_name().ok()) {
                        self.draw_form(resources, name, &stream.state)?;
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Counts one operator against [`PdfLimits::max_operations_per_page`].
    fn count_operation(&mut self) -> Result<(), ParseError> {
        self.operations += 1;
        if self.operations > self.limits.max_operations_per_page {
            return Err(ParseError::LimitExceeded {
                source_uri: self.uri.to_owned(),
                what: format!("the content operators of page {}", self.page),
                limit: format!("{} operators", self.limits.max_operations_per_page),
            });
        }
        Ok(())
    }

    /// The font a `Tf` names (its first operand) in the resources, read once per font object.
    fn font_named(&mut self, resources: &[Dictionary], operands: &[Object]) -> Option<Rc<Font>> {
        operands
            .first()
            .and_then(|o| o.as_name().ok())
            .and_then(|name| resource(self.doc, resources, b"Font", name))
            .and_then(|font| self.fonts.font(self.doc, font, self.limits.max_stream_bytes))
    }

    /// `Tj` shows a string; `'` moves to the next line first, and `"` also sets the word and
    /// character spacing.
    fn show_string(&mut self, stream: &mut StreamState, operator: &str, operands: &[Object]) {
        if operator != "Tj" {
            if operator == "\"" {
                let state = &mut stream.state;
                state.word_spacing = operand_number(operands, 0).unwrap_or(state.word_spacing);
                state.char_spacing = operand_number(operands, 1).unwrap_or(state.char_spacing);
            }
            stream.move_line(0.0, -stream.state.leading);
        }
        if let Some(bytes) = operands.last().and_then(|o| o.as_str().ok()) {
            let mut pending = Pending::new();
            self.show(&stream.state, &mut stream.tm, bytes, &mut pending);
            self.flush(&mut pending);
        }
    }

    /// `TJ`: strings and kerns; a wide kern reads as a space, a wider one starts a new run.
    fn show_array(&mut self, stream: &mut StreamState, operands: &[Object]) {
        let Some(items) = operands.first().and_then(|o| o.as_array().ok()) else {
            return;
        };
        let state = &stream.state;
        let mut pending = Pending::new();
        for item in items {
            match item {
                Object::String(bytes, _) => self.show(state, &mut stream.tm, bytes, &mut pending),
                Object::Integer(_) | Object::Real(_) => {
                    let kern = item.as_float().map(f64::from).unwrap_or(0.0);
                    if !kern.is_finite() {
                        continue;
                    }
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

    /// Draws the form XObject `name`, if it is one, with its own resources and matrix.
    fn draw_form(&mut self, resources: &[Dictionary], name: &[u8], state: &State) -> Result<(), ParseError> {
        let Some(Object::Reference(id)) = resource(self.doc, resources, b"XObject", name) else {
            return Ok(());
        };
        let id = *id;
        if self.forms.len() >= MAX_FORM_DEPTH || self.forms.contains(&id) {
            return Ok(());
        }
        let Ok(stream) = self.doc.get_object(id).and_then(Object::as_stream) else {
            return Ok(());
        };
        if stream.dict.get(b"Subtype").and_then(Object::as_name).ok() != Some(b"Form".as_slice()) {
            return Ok(());
        }
        let content = match stream.decompressed_content_with_limit(self.limits.max_stream_bytes) {
            Ok(content) => content,
            Err(lopdf::Error::Decompress(lopdf::DecompressError::MemoryLimitExceeded { .. })) => {
                return Err(ParseError::LimitExceeded {
                    source_uri: self.uri.to_owned(),
                    what: format!("the decompressed size of a form on page {}", self.page),
                    limit: format!("{} MiB", self.limits.max_stream_bytes >> 20),
                });
            }
            // A form that does not decode draws nothing, as in viewers.
            Err(_) => return Ok(()),
        };
        let matrix = deref(self.doc, stream.dict.get(b"Matrix").ok())
            .and_then(|o| o.as_array().ok())
            .and_then(|a| matrix_of(a))
            .unwrap_or(IDENTITY);
        let own = deref(self.doc, stream.dict.get(b"Resources").ok()).and_then(|o| o.as_dict().ok());
        let form_resources: Vec<Dictionary> = own.into_iter().cloned().chain(resources.iter().cloned()).collect();
        self.forms.push(id);
        let result = self.run(&content, &form_resources, multiply(&matrix, &state.ctm));
        self.forms.pop();
        result
    }

    /// Shows `bytes` in the current font at `tm`, advancing it, adding the glyphs to `pending`.
    fn show(&mut self, state: &State, tm: &mut Matrix, bytes: &[u8], pending: &mut Pending) {
        let Some(font) = state.font.clone() else { return };
        if pending.style.is_none() {
            pending.style = Some((font.bold, font.mono));
        }
        let to_page = multiply(&state.ctm, &self.frame);
        for glyph in font.glyphs(bytes) {
            let trm = multiply(
                &multiply(
                    &[
                        state.size * state.horizontal_scale,
                        0.0,
                        0.0,
                        state.size,
                        0.0,
                        state.rise,
                    ],
                    tm,
                ),
                &to_page,
            );
            let advance = glyph.width * font.scale;
            // The glyph's box: from its origin to its advance, from descent to ascent.
            let corners = [
                apply(&trm, 0.0, font.descent * font.scale),
                apply(&trm, advance, font.descent * font.scale),
                apply(&trm, 0.0, font.ascent * font.scale),
                apply(&trm, advance, font.ascent * font.scale),
            ];
            let (x0, x1) = corners
                .iter()
                .fold((f64::MAX, f64::MIN), |(lo, hi), p| (lo.min(p.0), hi.max(p.0)));
            let (y0, y1) = corners
                .iter()
                .fold((f64::MAX, f64::MIN), |(lo, hi), p| (lo.min(p.1), hi.max(p.1)));
            let origin = apply(&trm, 0.0, 0.0);
            let up = apply(&trm, 0.0, 1.0);
            // The font size as drawn: the length of one text-space unit upwards, in points.
            let size = ((up.0 - origin.0).powi(2) + (up.1 - origin.1).powi(2)).sqrt() * font.scale * 1000.0;
            let inside = x1 >= 0.0 && x0 <= self.width && y1 >= 0.0 && y0 <= self.height;
            if inside && size.is_finite() {
                // A large jump back or forward inside one string starts a new run.
                if let Some(bbox) = pending.bbox
                    && (x0 + 0.01 < bbox.x0 || x0 - bbox.x1 > KERN_GAP_EM * size.max(1.0))
                {
                    self.flush(pending);
                }
                if font.decode(glyph.code, &mut pending.text) > 0 {
                    let rect = Rect::new(x0, y0, x1.max(x0), y1.max(y0));
                    pending.bbox = Some(pending.bbox.map_or(rect, |b| b.union(&rect)));
                    pending.size = pending.size.max(size);
                }
            } else {
                // Text drawn outside the visible page is not on the page; it is counted, not read.
                self.scratch.clear();
                self.off_page_bytes += font.decode(glyph.code, &mut self.scratch);
            }
            let word_spacing = if glyph.single_byte && glyph.code == 32 {
                state.word_spacing
            } else {
                0.0
            };
            let tx = (advance * state.size + state.char_spacing + word_spacing) * state.horizontal_scale;
            *tm = multiply(&[1.0, 0.0, 0.0, 1.0, tx, 0.0], tm);
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
        if self.runs.len() >= self.limits.max_runs_per_page {
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
    }
}

impl Pending {
    fn new() -> Self {
        Pending {
            text: String::new(),
            bbox: None,
            size: 0.0,
            style: None,
        }
    }
}

fn matrix_of(operands: &[Object]) -> Option<Matrix> {
    let v: Vec<f64> = operands
        .iter()
        .filter_map(|o| o.as_float().ok().map(f64::from))
        .filter(|v| v.is_finite())
        .collect();
    let [a, b, c, d, e, f] = v[..] else { return None };
    Some([a, b, c, d, e, f])
}
