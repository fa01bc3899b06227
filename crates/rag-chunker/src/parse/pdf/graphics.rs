//! The graphics and text state that content-stream operators change: the transform, the text
//! matrices and spacing, the render mode, the fill and stroke colours, the clipping path and the
//! path being built (as far as hidden text is judged by them), saved and restored by `q`/`Q`.

use std::rc::Rc;

use super::content::Operand;
use super::fonts::Font;
use super::layout::Rect;
use super::visibility::{self, Canvas, Colour, Paint};

/// An affine transform `[a b c d e f]`, as PDF writes them.
pub(super) type Matrix = [f64; 6];

pub(super) const IDENTITY: Matrix = [1.0, 0.0, 0.0, 1.0, 0.0, 0.0];

pub(super) fn multiply(m: &Matrix, n: &Matrix) -> Matrix {
    [
        m[0] * n[0] + m[1] * n[2],
        m[0] * n[1] + m[1] * n[3],
        m[2] * n[0] + m[3] * n[2],
        m[2] * n[1] + m[3] * n[3],
        m[4] * n[0] + m[5] * n[2] + n[4],
        m[4] * n[1] + m[5] * n[3] + n[5],
    ]
}

pub(super) fn apply(m: &Matrix, x: f64, y: f64) -> (f64, f64) {
    (m[0] * x + m[2] * y + m[4], m[1] * x + m[3] * y + m[5])
}

/// The box of `rect`'s corners under `m`.
pub(super) fn transform_rect(m: &Matrix, [x0, y0, x1, y1]: [f64; 4]) -> Rect {
    let corners = [apply(m, x0, y0), apply(m, x1, y0), apply(m, x0, y1), apply(m, x1, y1)];
    let mut out = Rect::new(f64::MAX, f64::MAX, f64::MIN, f64::MIN);
    for (x, y) in corners {
        out = Rect::new(out.x0.min(x), out.y0.min(y), out.x1.max(x), out.y1.max(y));
    }
    out
}

/// The graphics and text state the interpreter tracks.
#[derive(Clone)]
pub(super) struct State {
    pub(super) ctm: Matrix,
    pub(super) font: Option<Rc<Font>>,
    pub(super) size: f64,
    pub(super) char_spacing: f64,
    pub(super) word_spacing: f64,
    pub(super) horizontal_scale: f64,
    pub(super) leading: f64,
    pub(super) rise: f64,
    pub(super) render_mode: u8,
    pub(super) fill: Paint,
    pub(super) stroke: Paint,
    /// The clipping path's bounding box on the displayed page; `None`: the whole page.
    pub(super) clip: Option<Rect>,
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
            render_mode: 0,
            fill: Paint::default(),
            stroke: Paint::default(),
            clip: None,
        }
    }
}

impl State {
    /// The colours text is painted in under the current render mode (none for modes 3 and 7).
    pub(super) fn text_colours(&self) -> Vec<Colour> {
        let mode = self.render_mode % 4;
        let mut colours = Vec::with_capacity(2);
        if mode == 0 || mode == 2 {
            colours.push(self.fill.colour);
        }
        if mode == 1 || mode == 2 {
            colours.push(self.stroke.colour);
        }
        colours
    }

    pub(super) fn clip_to(&mut self, rect: Rect) {
        self.clip = Some(match &self.clip {
            Some(clip) => visibility::intersect(clip, &rect),
            None => rect,
        });
    }
}

/// What the operators of one content stream change as they run: the graphics state, the states
/// `q` saved, the text matrix and the text line matrix, and the path being built.
pub(super) struct StreamState {
    pub(super) state: State,
    pub(super) saved: Vec<State>,
    pub(super) tm: Matrix,
    pub(super) tlm: Matrix,
    /// User space to the displayed page, for the path's points.
    pub(super) frame: Matrix,
    /// The bounding box of the current path on the displayed page.
    pub(super) path: Option<Rect>,
    /// `W` or `W*` was seen: the path clips when it is painted.
    pub(super) clips: bool,
    /// Whether text shown since the text position was last set reached the page: the rest of
    /// such a line is read even where it runs past the edge (its widths may be guessed).
    pub(super) line_on_page: bool,
}

impl StreamState {
    pub(super) fn new(state: State, frame: Matrix) -> Self {
        StreamState {
            state,
            saved: Vec::new(),
            tm: IDENTITY,
            tlm: IDENTITY,
            frame,
            path: None,
            clips: false,
            line_on_page: false,
        }
    }

    /// Moves the text line matrix by `(tx, ty)` and starts the line there (`Td`, `TD`, `T*`).
    pub(super) fn move_line(&mut self, tx: f64, ty: f64) {
        self.tlm = multiply(&[1.0, 0.0, 0.0, 1.0, tx, ty], &self.tlm);
        self.tm = self.tlm;
        self.line_on_page = false;
    }

    fn add_points(&mut self, numbers: &[f64]) {
        let to_page = multiply(&self.state.ctm, &self.frame);
        for pair in numbers.chunks_exact(2) {
            let (x, y) = apply(&to_page, pair[0], pair[1]);
            let point = Rect::new(x, y, x, y);
            self.path = Some(self.path.map_or(point, |p| p.union(&point)));
        }
    }

    /// Ends the path: it fills `colour` if given, and clips if `W` came before.
    fn end_path(&mut self, canvas: &mut Canvas, fill: Option<Colour>) {
        if let (Some(path), Some(colour)) = (self.path, fill) {
            canvas.fill(path, colour);
        }
        if self.clips {
            let path = self.path.unwrap_or(Rect::new(0.0, 0.0, -1.0, -1.0));
            self.state.clip_to(path);
        }
        self.path = None;
        self.clips = false;
    }

    /// Applies an operator that only changes the graphics, text or path state; `false` for any
    /// other.
    pub(super) fn apply_state_operator(&mut self, operator: &[u8], operands: &[Operand], canvas: &mut Canvas) -> bool {
        let num = |i: usize| operands.get(i).and_then(Operand::number);
        let numbers = || -> Vec<f64> { operands.iter().filter_map(Operand::number).collect() };
        let state = &mut self.state;
        match operator {
            // Deeper saves than this are not real pages; the state is simply not saved.
            b"q" if self.saved.len() < 1024 => self.saved.push(state.clone()),
            b"q" => {}
            b"Q" => {
                if let Some(saved) = self.saved.pop() {
                    *state = saved;
                }
            }
            b"cm" => {
                if let Some(m) = matrix_of(operands) {
                    state.ctm = multiply(&m, &state.ctm);
                }
            }
            b"BT" => {
                self.tm = IDENTITY;
                self.tlm = IDENTITY;
                self.line_on_page = false;
            }
            b"Tc" => state.char_spacing = num(0).unwrap_or(0.0),
            b"Tw" => state.word_spacing = num(0).unwrap_or(0.0),
            b"Tz" => state.horizontal_scale = num(0).unwrap_or(100.0) / 100.0,
            b"TL" => state.leading = num(0).unwrap_or(0.0),
            b"Ts" => state.rise = num(0).unwrap_or(0.0),
            b"Tr" => {
                if let Some(mode) = num(0).filter(|m| (0.0..=7.0).contains(m) && m.fract() == 0.0) {
                    state.render_mode = mode as u8;
                }
            }
            b"Td" | b"TD" => {
                let (tx, ty) = (num(0).unwrap_or(0.0), num(1).unwrap_or(0.0));
                if operator == b"TD" {
                    state.leading = -ty;
                }
                self.move_line(tx, ty);
            }
            b"Tm" => {
                if let Some(m) = matrix_of(operands) {
                    self.tlm = m;
                    self.tm = m;
                    self.line_on_page = false;
                }
            }
            b"T*" => {
                let leading = state.leading;
                self.move_line(0.0, -leading);
            }
            b"g" | b"rg" | b"k" => state.fill.set_device(&numbers()),
            b"G" | b"RG" | b"K" => state.stroke.set_device(&numbers()),
            b"sc" | b"scn" | b"SC" | b"SCN" => {
                let paint = if operator[0] == b's' {
                    &mut state.fill
                } else {
                    &mut state.stroke
                };
                if operands.last().and_then(Operand::name).is_some() {
                    paint.set_unknown();
                } else {
                    paint.set_components(&numbers());
                }
            }
            b"m" | b"l" | b"c" | b"v" | b"y" => self.add_points(&numbers()),
            b"re" => {
                if let [Some(x), Some(y), Some(w), Some(h)] = [num(0), num(1), num(2), num(3)] {
                    self.add_points(&[x, y, x + w, y + h]);
                }
            }
            b"W" | b"W*" => self.clips = true,
            b"f" | b"F" | b"f*" | b"B" | b"B*" | b"b" | b"b*" => {
                let colour = self.state.fill.colour;
                self.end_path(canvas, Some(colour));
            }
            b"S" | b"s" | b"n" => self.end_path(canvas, None),
            _ => return false,
        }
        true
    }
}

pub(super) fn matrix_of(operands: &[Operand]) -> Option<Matrix> {
    let v: Vec<f64> = operands.iter().filter_map(Operand::number).collect();
    let [a, b, c, d, e, f] = v[..] else { return None };
    Some([a, b, c, d, e, f])
}
