//! What a reader of the page sees of its text. Text is hidden when it is drawn invisible (render
//! mode 3 or 7) and not over an image, in the colour of what lies under it (the white of the page
//! when nothing is painted there), under [`MIN_LEGIBLE_SIZE`], or outside the clipping path. An
//! OCR text layer is invisible text over the scanned image, so it stays.
//!
//! The page is tracked as far as these rules need: the boxes of filled paths and images in paint
//! order ([`Canvas`]), the fill and stroke colours in RGB, and the clipping path as its bounding
//! box. A box over-approximates a curved path, so text is taken for clipped or painted over only
//! when it is outside the box: the rules err on the side of keeping text.

use super::layout::Rect;

/// Text drawn smaller than this, in points (the font size as drawn, or its width for text
/// squeezed sideways), is too small to read: 1 pt is a fifth of the smallest print anyone sets.
pub(super) const MIN_LEGIBLE_SIZE: f64 = 1.0;

/// Two colours closer than this in every RGB component (0 to 1) look the same: about 5 of 255.
const SAME_COLOUR: f64 = 0.02;

/// The painted boxes a page keeps, most recent last; past this many the oldest are forgotten,
/// and text over no remembered box is then taken to be visible.
const MAX_PAINTED: usize = 256;

/// The images a page keeps; past this many, any invisible text is taken to be over one.
const MAX_IMAGES: usize = 1024;

/// Why a reader does not see a piece of text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Hidden {
    /// Render mode 3 or 7 (neither filled nor stroked), not over an image.
    Invisible,
    /// Filled (and stroked) in the colour of what lies under it.
    Background,
    /// Under [`MIN_LEGIBLE_SIZE`].
    Tiny,
    /// Outside the clipping path.
    Clipped,
}

impl Hidden {
    pub(super) const ALL: [Hidden; 4] = [Hidden::Invisible, Hidden::Background, Hidden::Tiny, Hidden::Clipped];

    /// How the warning names it.
    pub(super) fn describe(self) -> &'static str {
        match self {
            Hidden::Invisible => "invisible (render mode 3) and not over an image",
            Hidden::Background => "in the colour of its background",
            Hidden::Tiny => "under 1 pt",
            Hidden::Clipped => "clipped away",
        }
    }
}

/// Bytes of text left out as hidden, by why.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct HiddenBytes([usize; 4]);

impl HiddenBytes {
    pub(super) fn add(&mut self, why: Hidden, bytes: usize) {
        self.0[why as usize] += bytes;
    }

    pub(super) fn get(&self, why: Hidden) -> usize {
        self.0[why as usize]
    }

    pub(super) fn total(&self) -> usize {
        self.0.iter().sum()
    }

    pub(super) fn merge(&mut self, other: &HiddenBytes) {
        for (sum, more) in self.0.iter_mut().zip(other.0) {
            *sum += more;
        }
    }
}

/// A colour as RGB from 0 to 1, or one these rules cannot compare (a pattern, a separation, an
/// image, an ICC space of an unusual number of components).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Colour {
    Rgb([f64; 3]),
    Unknown,
}

const WHITE: Colour = Colour::Rgb([1.0, 1.0, 1.0]);
const BLACK: Colour = Colour::Rgb([0.0, 0.0, 0.0]);

impl Colour {
    fn same_as(self, other: Colour) -> bool {
        match (self, other) {
            (Colour::Rgb(a), Colour::Rgb(b)) => a.iter().zip(b).all(|(x, y)| (x - y).abs() < SAME_COLOUR),
            _ => false,
        }
    }
}

/// A colour space as far as colours in it can be compared: by its number of components (gray,
/// RGB, CMYK), or not at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Space {
    Gray,
    Rgb,
    Cmyk,
    Other,
}

/// The fill or stroke colour of the graphics state, and the space it is set in.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Paint {
    space: Space,
    pub(super) colour: Colour,
}

impl Default for Paint {
    fn default() -> Self {
        Paint {
            space: Space::Gray,
            colour: BLACK,
        }
    }
}

impl Paint {
    /// `cs`/`CS`: a new space, and its initial colour (black, or unknown).
    pub(super) fn set_space(&mut self, space: Space) {
        self.space = space;
        self.colour = match space {
            Space::Other => Colour::Unknown,
            _ => BLACK,
        };
    }

    /// `g`, `rg`, `k` (and their stroking twins): the space and the colour at once.
    pub(super) fn set_device(&mut self, components: &[f64]) {
        self.space = match components.len() {
            1 => Space::Gray,
            3 => Space::Rgb,
            _ => Space::Cmyk,
        };
        self.set_components(components);
    }

    /// `sc`, `scn`: components in the current space (a pattern's name makes the colour unknown).
    pub(super) fn set_components(&mut self, components: &[f64]) {
        let c = |i: usize| components[i].clamp(0.0, 1.0);
        self.colour = match (self.space, components.len()) {
            (Space::Gray, 1) => Colour::Rgb([c(0); 3]),
            (Space::Rgb, 3) => Colour::Rgb([c(0), c(1), c(2)]),
            (Space::Cmyk, 4) => {
                let k = 1.0 - c(3);
                Colour::Rgb([(1.0 - c(0)) * k, (1.0 - c(1)) * k, (1.0 - c(2)) * k])
            }
            _ => Colour::Unknown,
        };
    }

    pub(super) fn set_unknown(&mut self) {
        self.colour = Colour::Unknown;
    }
}

/// The colour space a `cs` operand names: a device space, or (looked up by the caller in the
/// resources) a `[/ICCBased stream]`, `[/CalRGB ...]`, ... array, given here as its family and
/// its `/N`.
pub(super) fn space_of(family: &[u8], components: Option<i64>) -> Space {
    match (family, components) {
        (b"DeviceGray" | b"G" | b"CalGray", _) | (b"ICCBased", Some(1)) => Space::Gray,
        (b"DeviceRGB" | b"RGB" | b"CalRGB", _) | (b"ICCBased", Some(3)) => Space::Rgb,
        (b"DeviceCMYK" | b"CMYK", _) | (b"ICCBased", Some(4)) => Space::Cmyk,
        _ => Space::Other,
    }
}

/// What the page has painted so far, as far as hidden text is judged by it.
#[derive(Debug, Default)]
pub(super) struct Canvas {
    painted: std::collections::VecDeque<(Rect, Colour)>,
    forgotten: bool,
    images: Vec<Rect>,
    too_many_images: bool,
}

impl Canvas {
    /// A filled path (or a shading) with this bounding box, in this colour.
    pub(super) fn fill(&mut self, rect: Rect, colour: Colour) {
        if self.painted.len() >= MAX_PAINTED {
            self.painted.pop_front();
            self.forgotten = true;
        }
        self.painted.push_back((rect, colour));
    }

    /// An image drawn in this box: it hides what is under it, and invisible text over it is its
    /// text layer.
    pub(super) fn image(&mut self, rect: Rect) {
        self.fill(rect, Colour::Unknown);
        if self.images.len() >= MAX_IMAGES {
            self.too_many_images = true;
        } else {
            self.images.push(rect);
        }
    }

    /// The colour under the point `(x, y)`: the last box painted over it, else the page's white;
    /// unknown when boxes were forgotten and none remembered covers it.
    fn colour_at(&self, x: f64, y: f64) -> Colour {
        match self.painted.iter().rev().find(|(r, _)| contains(r, x, y)) {
            Some((_, colour)) => *colour,
            None if self.forgotten => Colour::Unknown,
            None => WHITE,
        }
    }

    /// Whether text whose box centre is `(x, y)`, painted in `colours` (fill, stroke or both, as
    /// its render mode paints), has the colour of what lies under it.
    pub(super) fn blends_in(&self, x: f64, y: f64, colours: &[Colour]) -> bool {
        let under = self.colour_at(x, y);
        !colours.is_empty() && colours.iter().all(|c| c.same_as(under))
    }

    /// Whether the centre of `rect` is over an image the page draws (before or after the text:
    /// OCR layers are drawn either way).
    pub(super) fn over_image(&self, rect: &Rect) -> bool {
        let (x, y) = centre(rect);
        self.too_many_images || self.images.iter().any(|image| contains(image, x, y))
    }
}

pub(super) fn centre(rect: &Rect) -> (f64, f64) {
    ((rect.x0 + rect.x1) / 2.0, (rect.y0 + rect.y1) / 2.0)
}

/// Whether `(x, y)` is in `rect`; an empty clip (`x0 > x1`) contains nothing.
pub(super) fn contains(rect: &Rect, x: f64, y: f64) -> bool {
    x >= rect.x0 && x <= rect.x1 && y >= rect.y0 && y <= rect.y1
}

/// The intersection of two boxes, empty (`x0 > x1`) when they do not meet.
pub(super) fn intersect(a: &Rect, b: &Rect) -> Rect {
    Rect::new(a.x0.max(b.x0), a.y0.max(b.y0), a.x1.min(b.x1), a.y1.min(b.y1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_convert_to_rgb_and_compare_within_a_tolerance() {
        let mut paint = Paint::default();
        paint.set_device(&[0.0, 0.0, 0.0, 0.0]);
        assert_eq!(paint.colour, WHITE);
        paint.set_device(&[0.995]);
        assert!(paint.colour.same_as(WHITE));
        paint.set_device(&[0.9]);
        assert!(!paint.colour.same_as(WHITE));
        paint.set_space(space_of(b"ICCBased", Some(3)));
        assert_eq!(paint.colour, BLACK);
        paint.set_components(&[1.0, 1.0, 1.0]);
        assert_eq!(paint.colour, WHITE);
        paint.set_components(&[1.0]);
        assert_eq!(paint.colour, Colour::Unknown);
        paint.set_space(space_of(b"Separation", None));
        assert_eq!(paint.colour, Colour::Unknown);
        assert!(!Colour::Unknown.same_as(Colour::Unknown));
    }

    #[test]
    fn text_blends_into_the_last_box_painted_under_it_or_the_white_page() {
        let mut canvas = Canvas::default();
        assert!(canvas.blends_in(10.0, 10.0, &[WHITE]));
        assert!(!canvas.blends_in(10.0, 10.0, &[BLACK]));
        canvas.fill(Rect::new(0.0, 0.0, 100.0, 20.0), BLACK);
        assert!(!canvas.blends_in(10.0, 10.0, &[WHITE]));
        assert!(canvas.blends_in(10.0, 10.0, &[BLACK]));
        // Stroked and filled: hidden only when both blend in.
        assert!(!canvas.blends_in(10.0, 10.0, &[BLACK, WHITE]));
        canvas.image(Rect::new(0.0, 0.0, 50.0, 50.0));
        assert!(!canvas.blends_in(10.0, 10.0, &[BLACK]));
        assert!(canvas.over_image(&Rect::new(5.0, 5.0, 15.0, 15.0)));
        assert!(!canvas.over_image(&Rect::new(60.0, 5.0, 70.0, 15.0)));
    }

    #[test]
    fn a_canvas_that_forgot_its_oldest_boxes_keeps_text_over_none_it_remembers() {
        let mut canvas = Canvas::default();
        for i in 0..=MAX_PAINTED {
            canvas.fill(Rect::new(i as f64, 500.0, i as f64 + 1.0, 501.0), BLACK);
        }
        assert!(!canvas.blends_in(10.0, 10.0, &[WHITE]));
        assert_eq!(canvas.painted.len(), MAX_PAINTED);
    }
}
