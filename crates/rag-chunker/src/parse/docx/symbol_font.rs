//! `w:sym`: a character of a symbol font, which Word names by the font and a code in the font's
//! own encoding (often shifted to U+F020-U+F0FF, Unicode's private use area).

/// The Unicode characters of the Adobe Symbol encoding, bytes 0x20 to 0xFF (`'\0'`: no character).
const SYMBOL: [char; 224] = [
    // 0x20
    ' ', '!', '∀', '#', '∃', '%', '&', '∋', '(', ')', '∗', '+', ',', '−', '.', '/', //
    '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', ':', ';', '<', '=', '>', '?', //
    // 0x40
    '≅', 'Α', 'Β', 'Χ', 'Δ', 'Ε', 'Φ', 'Γ', 'Η', 'Ι', 'ϑ', 'Κ', 'Λ', 'Μ', 'Ν', 'Ο', //
    'Π', 'Θ', 'Ρ', 'Σ', 'Τ', 'Υ', 'ς', 'Ω', 'Ξ', 'Ψ', 'Ζ', '[', '∴', ']', '⊥', '_', //
    // 0x60
    '\0', 'α', 'β', 'χ', 'δ', 'ε', 'φ', 'γ', 'η', 'ι', 'ϕ', 'κ', 'λ', 'μ', 'ν', 'ο', //
    'π', 'θ', 'ρ', 'σ', 'τ', 'υ', 'ϖ', 'ω', 'ξ', 'ψ', 'ζ', '{', '|', '}', '∼', '\0', //
    // 0x80
    '\0', '\0', '\0', '\0', '\0', '\0', '\0', '\0', '\0', '\0', '\0', '\0', '\0', '\0', '\0', '\0', //
    '\0', '\0', '\0', '\0', '\0', '\0', '\0', '\0', '\0', '\0', '\0', '\0', '\0', '\0', '\0', '\0', //
    // 0xA0
    '€', 'ϒ', '′', '≤', '⁄', '∞', 'ƒ', '♣', '♦', '♥', '♠', '↔', '←', '↑', '→', '↓', //
    '°', '±', '″', '≥', '×', '∝', '∂', '•', '÷', '≠', '≡', '≈', '…', '\0', '\0', '↵', //
    // 0xC0
    'ℵ', 'ℑ', 'ℜ', '℘', '⊗', '⊕', '∅', '∩', '∪', '⊃', '⊇', '⊄', '⊂', '⊆', '∈', '∉', //
    '∠', '∇', '®', '©', '™', '∏', '√', '⋅', '¬', '∧', '∨', '⇔', '⇐', '⇑', '⇒', '⇓', //
    // 0xE0
    '◊', '〈', '®', '©', '™', '∑', '\0', '\0', '\0', '\0', '\0', '\0', '\0', '\0', '\0', '\0', //
    '\0', '〉', '∫', '\0', '\0', '\0', '\0', '\0', '\0', '\0', '\0', '\0', '\0', '\0', '\0', '\0', //
];

/// Fonts whose codes are not Unicode: a code below U+0100 (or shifted to U+F0xx) is a glyph of
/// the font, not the character Unicode gives that code.
fn is_symbol_font(font: &str) -> bool {
    let font = font.trim().to_ascii_lowercase();
    font == "symbol"
        || font.starts_with("wingdings")
        || font == "webdings"
        || font.contains("dingbats")
        || font == "marlett"
}

/// The character `w:sym w:font=".." w:char=".."` shows, or `None` when it has no Unicode
/// equivalent this table knows (a Wingdings glyph, say).
pub(super) fn symbol_char(font: Option<&str>, code: &str) -> Option<char> {
    let code = u32::from_str_radix(code.trim(), 16).ok()?;
    let font = font.unwrap_or("");
    let byte = match code {
        0xF000..=0xF0FF => code - 0xF000,
        0..=0xFF if is_symbol_font(font) => code,
        _ => return char::from_u32(code).filter(|ch| !ch.is_control()),
    };
    if !font.trim().eq_ignore_ascii_case("symbol") {
        return None;
    }
    let index = usize::try_from(byte).ok()?.checked_sub(0x20)?;
    SYMBOL.get(index).copied().filter(|&ch| ch != '\0')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbol_font_codes_map_to_unicode() {
        assert_eq!(symbol_char(Some("Symbol"), "F061"), Some('α'));
        assert_eq!(symbol_char(Some("Symbol"), "F0AE"), Some('→'));
        assert_eq!(symbol_char(Some("Symbol"), "F0B7"), Some('•'));
        assert_eq!(symbol_char(Some("Symbol"), "57"), Some('Ω'));
        assert_eq!(
            symbol_char(Some("Wingdings"), "F0FC"),
            None,
            "a Wingdings check mark has no table here"
        );
        assert_eq!(
            symbol_char(Some("Arial"), "20AC"),
            Some('€'),
            "a Unicode code in a text font"
        );
        assert_eq!(symbol_char(Some("Symbol"), "zz"), None);
        assert_eq!(symbol_char(None, "0007"), None, "control characters are not text");
    }
}
