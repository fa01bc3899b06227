//! Fields (`w:fldSimple`, `w:fldChar`): what an instruction says the field is.

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum FieldKind {
    /// A table of contents: its result is the document's headings again, with page numbers.
    Toc,
    /// A link to an external target.
    Link(String),
    Other,
}

/// A complex field (`w:fldChar` begin ... separate ... end) or a simple one (`w:fldSimple`).
#[derive(Debug)]
pub(super) struct Field {
    pub(super) in_result: bool,
    pub(super) instruction: String,
    pub(super) kind: FieldKind,
    /// Where the link text starts: the paragraph's index and the byte in its text.
    pub(super) link_start: Option<(usize, usize)>,
}

/// The words of a field instruction: quoted strings (without their quotes) and bare words.
pub(super) fn instruction_words(instruction: &str) -> Vec<&str> {
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
pub(super) fn classify_field(instruction: &str) -> FieldKind {
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
