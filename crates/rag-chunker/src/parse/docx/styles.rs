//! Styles (`word/styles.xml`) and numbering (`word/numbering.xml`): what a paragraph is (a
//! heading of which level, code, a quote, a caption, body text) and how its list item is marked.

use std::collections::HashMap;

use quick_xml::events::{BytesStart, Event};
use rag_core::ParseError;

use super::xml::{Ns, PartReader, attribute, is_on};

/// How far a `basedOn` chain is followed: a cycle or an absurd chain stops here.
const MAX_STYLE_CHAIN: usize = 32;

/// Word's list levels are 0 to 8.
pub(super) const LIST_LEVELS: usize = 9;

/// What a paragraph is, as its style and outline level say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    /// A heading of level 1 to 9 (`Title` is level 1).
    Heading(u8),
    /// Source code or preformatted text.
    Code,
    Quote,
    Caption,
    Body,
}

/// A list membership: numbering instance `num_id`, level `level` (0-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ListRef {
    pub(super) num_id: u32,
    pub(super) level: u8,
}

#[derive(Debug, Default)]
struct Style {
    /// `w:name`, lower-cased without spaces (`heading 1` is `heading1`).
    name: String,
    based_on: Option<String>,
    outline_level: Option<u8>,
    /// The style's `w:numPr`: the numbering id (0 removes an inherited one) and level.
    num_id: Option<u32>,
    num_level: Option<u8>,
    /// The style's run properties say `w:vanish` (on or off): text of the style is hidden.
    vanish: Option<bool>,
}

/// The paragraph and character styles of a document.
#[derive(Debug, Default)]
pub(super) struct Styles {
    /// Paragraph styles.
    by_id: HashMap<String, Style>,
    default_paragraph: Option<String>,
    /// Character styles (`w:rStyle`), kept apart: a character style named `heading 1` makes no
    /// paragraph a heading.
    characters: HashMap<String, Style>,
    /// The document defaults' run properties say `w:vanish`.
    default_vanish: Option<bool>,
}

/// `heading 1` → `heading1`: the form style names and ids are compared in.
fn normalise_name(name: &str) -> String {
    name.chars()
        .filter(|ch| !ch.is_whitespace())
        .flat_map(char::to_lowercase)
        .collect()
}

/// The role a style's name (or id) gives, when it is one Word or a common converter uses.
fn role_of_name(name: &str) -> Option<Role> {
    if name == "title" {
        return Some(Role::Heading(1));
    }
    if let Some(level) = name.strip_prefix("heading")
        && let Ok(level @ 1..=9) = level.parse::<u8>()
    {
        return Some(Role::Heading(level));
    }
    match name {
        // pandoc, LibreOffice, Word.
        "sourcecode" | "preformattedtext" | "htmlpreformatted" | "code" | "codeblock" => Some(Role::Code),
        // Word's quote styles, pandoc's and LibreOffice's block quotes.
        "quote" | "intensequote" | "blocktext" | "quotations" => Some(Role::Quote),
        "caption" | "tablecaption" | "imagecaption" | "figurecaption" => Some(Role::Caption),
        _ => None,
    }
}

impl Styles {
    /// Reads `word/styles.xml`.
    pub(super) fn parse(source_uri: &str, part: &str, xml: &str) -> Result<Self, ParseError> {
        let mut reader = PartReader::new(source_uri, part, xml);
        let mut styles = Styles::default();
        // The style being read, whether it is a character style, and the depth of its
        // `w:style` element.
        let mut current: Option<(String, Style, usize)> = None;
        let mut character = false;
        let (mut in_ppr, mut in_rpr) = (false, false);
        // The depth of `w:docDefaults`, while it is open.
        let mut defaults: Option<usize> = None;
        loop {
            let depth = reader.depth();
            let (ns, event) = reader.next()?;
            match event {
                event @ (Event::Start(_) | Event::Empty(_)) if ns == Ns::W => {
                    let opens = matches!(event, Event::Start(_));
                    let (Event::Start(element) | Event::Empty(element)) = event else {
                        continue;
                    };
                    let local = element.local_name();
                    match (local.as_ref(), current.as_mut()) {
                        ("style", None) => {
                            let kind = attribute(&element, "type");
                            let is_paragraph = kind.as_deref().is_none_or(|t| t == "paragraph");
                            character = kind.as_deref() == Some("character");
                            if let (true, Some(id)) = (is_paragraph || character, attribute(&element, "styleId")) {
                                if is_paragraph
                                    && attribute(&element, "default").is_some_and(|d| d == "1" || d == "true")
                                {
                                    styles.default_paragraph.get_or_insert_with(|| id.clone());
                                }
                                current = Some((id, Style::default(), depth));
                            }
                        }
                        ("docDefaults", None) if opens => defaults = Some(depth),
                        ("vanish", None) if defaults.is_some_and(|d| depth == d + 3) => {
                            // `w:docDefaults/w:rPrDefault/w:rPr/w:vanish`.
                            styles.default_vanish = Some(is_on(&element));
                        }
                        ("rPr", Some((_, _, d))) if depth == *d + 1 => in_rpr = opens,
                        ("vanish", Some((_, style, d))) if in_rpr && depth == *d + 2 => {
                            style.vanish = Some(is_on(&element));
                        }
                        ("name", Some((_, style, d))) if depth == *d + 1 => {
                            style.name = normalise_name(&attribute(&element, "val").unwrap_or_default());
                        }
                        ("basedOn", Some((_, style, d))) if depth == *d + 1 => {
                            style.based_on = attribute(&element, "val");
                        }
                        ("pPr", Some((_, _, d))) if depth == *d + 1 => in_ppr = opens,
                        ("outlineLvl", Some((_, style, d))) if in_ppr && depth == *d + 2 => {
                            style.outline_level = attribute(&element, "val").and_then(|v| v.parse().ok());
                        }
                        ("numId", Some((_, style, _))) if in_ppr => {
                            style.num_id = attribute(&element, "val").and_then(|v| v.parse().ok());
                        }
                        ("ilvl", Some((_, style, _))) if in_ppr => {
                            style.num_level = attribute(&element, "val").and_then(|v| v.parse().ok());
                        }
                        _ => {}
                    }
                }
                Event::End(_) => {
                    let closing = reader.depth();
                    if defaults == Some(closing) {
                        defaults = None;
                    }
                    if let Some((_, _, d)) = &current {
                        if closing == *d {
                            if let Some((id, style, _)) = current.take() {
                                let map = if character {
                                    &mut styles.characters
                                } else {
                                    &mut styles.by_id
                                };
                                map.insert(id, style);
                            }
                            (in_ppr, in_rpr) = (false, false);
                        } else if closing == *d + 1 {
                            (in_ppr, in_rpr) = (false, false);
                        }
                    }
                }
                Event::Eof => break,
                _ => {}
            }
        }
        Ok(styles)
    }

    /// The chain of paragraph styles from `id` up its `basedOn` links, the style itself first.
    fn chain<'s>(&'s self, id: &'s str) -> impl Iterator<Item = (&'s str, Option<&'s Style>)> + 's {
        chain_in(&self.by_id, id)
    }

    /// Whether the text of a run is hidden by its styles (its own `w:vanish` aside): the first
    /// that says so of its character style's chain, its paragraph's style chain (the default
    /// paragraph style when it has none) and the document defaults, as Word resolves them.
    pub(super) fn run_vanish(&self, paragraph_style: Option<&str>, run_style: Option<&str>) -> bool {
        let of_chain = |map: &'_ HashMap<String, Style>, id: Option<&str>| {
            id.and_then(|id| chain_in(map, id).find_map(|(_, style)| style.and_then(|s| s.vanish)))
        };
        of_chain(&self.characters, run_style)
            .or_else(|| of_chain(&self.by_id, paragraph_style.or(self.default_paragraph.as_deref())))
            .or(self.default_vanish)
            .unwrap_or(false)
    }

    /// The role of a paragraph of style `style_id` (the default paragraph style when `None`)
    /// whose own `w:outlineLvl` is `outline_level`: the nearest style of the chain that says
    /// something decides (a known name, else an outline level, else a known style id), and the
    /// paragraph's own outline level decides over its styles' headings.
    pub(super) fn role(&self, style_id: Option<&str>, outline_level: Option<u8>) -> Role {
        let mut role = Role::Body;
        if let Some(id) = style_id.or(self.default_paragraph.as_deref()) {
            for (id, style) in self.chain(id) {
                let decided = match style {
                    Some(style) => role_of_name(&style.name)
                        .or_else(|| style.outline_level.map(role_of_outline_level))
                        .or_else(|| role_of_name(&normalise_name(id))),
                    None => role_of_name(&normalise_name(id)),
                };
                if let Some(decided) = decided {
                    role = decided;
                    break;
                }
            }
        }
        match (outline_level, role) {
            (Some(level), Role::Heading(_) | Role::Body) => role_of_outline_level(level),
            _ => role,
        }
    }

    /// The list a paragraph of style `style_id` belongs to through its style, if any.
    pub(super) fn list(&self, style_id: Option<&str>) -> Option<ListRef> {
        let id = style_id.or(self.default_paragraph.as_deref())?;
        let mut level = None;
        for (_, style) in self.chain(id) {
            let Some(style) = style else { break };
            if level.is_none() {
                level = style.num_level;
            }
            if let Some(num_id) = style.num_id {
                return (num_id != 0).then(|| ListRef {
                    num_id,
                    level: level.unwrap_or(0).min(LIST_LEVELS as u8 - 1),
                });
            }
        }
        None
    }
}

/// The chain of styles of `map` from `id` up its `basedOn` links, the style itself first.
fn chain_in<'s>(
    map: &'s HashMap<String, Style>,
    id: &'s str,
) -> impl Iterator<Item = (&'s str, Option<&'s Style>)> + 's {
    let mut next = Some(id);
    std::iter::from_fn(move || {
        let id = next.take()?;
        let style = map.get(id);
        next = style.and_then(|s| s.based_on.as_deref()).filter(|parent| *parent != id);
        Some((id, style))
    })
    .take(MAX_STYLE_CHAIN)
}

fn role_of_outline_level(level: u8) -> Role {
    if level <= 8 {
        Role::Heading(level + 1)
    } else {
        Role::Body
    }
}

/// A list level: whether its items are numbered, and from which number.
#[derive(Debug, Clone, Copy)]
struct Level {
    ordered: bool,
    start: u32,
}

impl Default for Level {
    fn default() -> Self {
        Self {
            ordered: false,
            start: 1,
        }
    }
}

#[derive(Debug, Default)]
struct Num {
    abstract_id: Option<u32>,
    /// `w:lvlOverride`: a new start, or a whole level.
    start_overrides: [Option<u32>; LIST_LEVELS],
    level_overrides: [Option<Level>; LIST_LEVELS],
}

#[derive(Debug, Default)]
struct AbstractNum {
    levels: [Level; LIST_LEVELS],
    /// `w:numStyleLink`: the levels are those of the abstract numbering whose `w:styleLink` is this.
    num_style_link: Option<String>,
    style_link: Option<String>,
}

/// The numbering definitions and the running counters of the lists met so far.
#[derive(Debug, Default)]
pub(super) struct Numbering {
    nums: HashMap<u32, Num>,
    abstracts: HashMap<u32, AbstractNum>,
    counters: HashMap<u32, [Option<u32>; LIST_LEVELS]>,
}

/// How a list item is marked in the rendition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Marker {
    Bullet,
    Number(u32),
}

/// `word/numbering.xml` being read: the definitions finished so far and the ones being read.
#[derive(Debug, Default)]
struct NumberingReader {
    numbering: Numbering,
    abstract_num: Option<(u32, AbstractNum)>,
    num: Option<(u32, Num)>,
    /// The level being read (`w:lvl`, in an abstract numbering or a level override).
    level: Option<(usize, Level)>,
    override_level: Option<usize>,
}

impl NumberingReader {
    /// A `w:` element starts; `self_closing` when it is empty (`<w:lvl/>` defines nothing).
    fn start(&mut self, element: &BytesStart<'_>, self_closing: bool) {
        let val = || attribute(element, "val");
        let number = |name: &str| attribute(element, name).and_then(|v| v.parse::<u32>().ok());
        match element.local_name().as_ref() {
            "abstractNum" => {
                if let Some(id) = number("abstractNumId") {
                    self.abstract_num = Some((id, AbstractNum::default()));
                }
            }
            "num" => {
                if let Some(id) = number("numId") {
                    self.num = Some((id, Num::default()));
                }
            }
            "abstractNumId" => {
                if let Some((_, num)) = self.num.as_mut() {
                    num.abstract_id = number("val");
                }
            }
            "lvlOverride" if !self_closing => {
                self.override_level = number("ilvl").map(|l| l as usize).filter(|&l| l < LIST_LEVELS);
            }
            "startOverride" => {
                if let (Some((_, num)), Some(l)) = (self.num.as_mut(), self.override_level) {
                    num.start_overrides[l] = number("val");
                }
            }
            "lvl" if !self_closing => {
                let index = number("ilvl").map(|l| l as usize).filter(|&l| l < LIST_LEVELS);
                self.level = index.map(|index| (index, Level::default()));
            }
            "start" => {
                if let (Some((_, level)), Some(start)) = (self.level.as_mut(), number("val")) {
                    level.start = start;
                }
            }
            "numFmt" => {
                if let Some((_, level)) = self.level.as_mut() {
                    level.ordered = !matches!(val().as_deref(), Some("bullet" | "none") | None);
                }
            }
            "numStyleLink" => {
                if let Some((_, a)) = self.abstract_num.as_mut() {
                    a.num_style_link = val();
                }
            }
            "styleLink" => {
                if let Some((_, a)) = self.abstract_num.as_mut() {
                    a.style_link = val();
                }
            }
            _ => {}
        }
    }

    /// A `w:` element ends: a finished level goes to the override or abstract numbering it is in,
    /// a finished definition into the numbering (the first of an id wins).
    fn end(&mut self, local: &str) {
        match local {
            "lvl" => {
                if let Some((index, finished)) = self.level.take() {
                    if let Some((_, num)) = self.num.as_mut() {
                        num.level_overrides[index] = Some(finished);
                    } else if let Some((_, a)) = self.abstract_num.as_mut() {
                        a.levels[index] = finished;
                    }
                }
            }
            "lvlOverride" => self.override_level = None,
            "abstractNum" => {
                if let Some((id, finished)) = self.abstract_num.take() {
                    self.numbering.abstracts.entry(id).or_insert(finished);
                }
            }
            "num" => {
                if let Some((id, finished)) = self.num.take() {
                    self.numbering.nums.entry(id).or_insert(finished);
                }
            }
            _ => {}
        }
    }
}

impl Numbering {
    /// Reads `word/numbering.xml`.
    pub(super) fn parse(source_uri: &str, part: &str, xml: &str) -> Result<Self, ParseError> {
        let mut reader = PartReader::new(source_uri, part, xml);
        let mut definitions = NumberingReader::default();
        loop {
            let (ns, event) = reader.next()?;
            match event {
                Event::Start(element) if ns == Ns::W => definitions.start(&element, false),
                Event::Empty(element) if ns == Ns::W => definitions.start(&element, true),
                Event::End(element) if ns == Ns::W => definitions.end(element.local_name().as_ref()),
                Event::Eof => break,
                _ => {}
            }
        }
        Ok(definitions.numbering)
    }

    /// The level definition of `list`, following a `w:numStyleLink` once.
    fn level(&self, list: ListRef) -> Level {
        let index = usize::from(list.level);
        let Some(num) = self.nums.get(&list.num_id) else {
            return Level::default();
        };
        let mut level = num
            .abstract_id
            .and_then(|id| self.abstracts.get(&id))
            .map(|a| match &a.num_style_link {
                Some(link) => self
                    .abstracts
                    .values()
                    .filter(|other| other.style_link.as_deref() == Some(link))
                    .min_by_key(|other| other.levels[index].start)
                    .map_or(a.levels[index], |other| other.levels[index]),
                None => a.levels[index],
            })
            .unwrap_or_default();
        if let Some(overridden) = num.level_overrides[index] {
            level = overridden;
        }
        if let Some(start) = num.start_overrides[index] {
            level.start = start;
        }
        level
    }

    /// The marker of the next item of `list`: bullets for bullet (and unnumbered) levels, the
    /// item's number for every numbered format (letters and roman numerals too). Counting is per
    /// numbering instance (`w:num`); an item restarts the deeper levels.
    pub(super) fn next_marker(&mut self, list: ListRef) -> Marker {
        let level = self.level(list);
        let index = usize::from(list.level);
        let counters = self.counters.entry(list.num_id).or_insert([None; LIST_LEVELS]);
        let number = counters[index].map_or(level.start, |n| n.saturating_add(1));
        counters[index] = Some(number);
        for deeper in counters.iter_mut().skip(index + 1) {
            *deeper = None;
        }
        if level.ordered {
            Marker::Number(number)
        } else {
            Marker::Bullet
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const W: &str = "xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\"";

    fn styles(body: &str) -> Styles {
        Styles::parse("f.docx", "word/styles.xml", &format!("<w:styles {W}>{body}</w:styles>")).unwrap()
    }

    #[test]
    fn headings_come_from_names_outline_levels_and_inheritance() {
        let styles = styles(
            r#"<w:style w:type="paragraph" w:default="1" w:styleId="Normal"><w:name w:val="Normal"/></w:style>
            <w:style w:type="paragraph" w:styleId="berschrift2"><w:name w:val="heading 2"/><w:basedOn w:val="Normal"/></w:style>
            <w:style w:type="paragraph" w:styleId="Mine"><w:name w:val="My Chapter"/><w:basedOn w:val="berschrift2"/></w:style>
            <w:style w:type="paragraph" w:styleId="Outline"><w:name w:val="Kapitel"/><w:pPr><w:outlineLvl w:val="2"/></w:pPr></w:style>
            <w:style w:type="paragraph" w:styleId="TOCHeading"><w:name w:val="TOC Heading"/><w:basedOn w:val="berschrift2"/><w:pPr><w:outlineLvl w:val="9"/></w:pPr></w:style>
            <w:style w:type="paragraph" w:styleId="Title"><w:name w:val="Title"/></w:style>
            <w:style w:type="paragraph" w:styleId="Loop1"><w:name w:val="a"/><w:basedOn w:val="Loop2"/></w:style>
            <w:style w:type="paragraph" w:styleId="Loop2"><w:name w:val="b"/><w:basedOn w:val="Loop1"/></w:style>
            <w:style w:type="character" w:styleId="Heading1Char"><w:name w:val="heading 1"/></w:style>
            <w:style w:type="paragraph" w:styleId="SourceCode"><w:name w:val="Source Code"/></w:style>"#,
        );
        assert_eq!(styles.role(Some("berschrift2"), None), Role::Heading(2));
        assert_eq!(styles.role(Some("Mine"), None), Role::Heading(2), "basedOn a heading");
        assert_eq!(styles.role(Some("Outline"), None), Role::Heading(3), "outline level 2");
        assert_eq!(
            styles.role(Some("TOCHeading"), None),
            Role::Body,
            "outline level 9 is body text"
        );
        assert_eq!(styles.role(Some("Title"), None), Role::Heading(1));
        assert_eq!(styles.role(None, None), Role::Body);
        assert_eq!(
            styles.role(None, Some(0)),
            Role::Heading(1),
            "the paragraph's own outline level"
        );
        assert_eq!(styles.role(Some("berschrift2"), Some(9)), Role::Body);
        assert_eq!(styles.role(Some("Loop1"), None), Role::Body, "a basedOn cycle ends");
        assert_eq!(
            styles.role(Some("Heading1Char"), None),
            Role::Body,
            "a character style named heading 1 makes no paragraph a heading"
        );
        assert_eq!(
            styles.role(Some("Heading4"), None),
            Role::Heading(4),
            "undefined: by id"
        );
        assert_eq!(styles.role(Some("SourceCode"), Some(9)), Role::Code);
    }

    #[test]
    fn list_items_are_numbered_per_instance_with_overrides_and_restarts() {
        let xml = format!(
            r#"<w:numbering {W}>
            <w:abstractNum w:abstractNumId="1"><w:lvl w:ilvl="0"><w:start w:val="1"/><w:numFmt w:val="decimal"/></w:lvl>
              <w:lvl w:ilvl="1"><w:numFmt w:val="lowerLetter"/></w:lvl></w:abstractNum>
            <w:abstractNum w:abstractNumId="2"><w:lvl w:ilvl="0"><w:numFmt w:val="bullet"/></w:lvl></w:abstractNum>
            <w:abstractNum w:abstractNumId="3"><w:numStyleLink w:val="ListStyle"/></w:abstractNum>
            <w:abstractNum w:abstractNumId="4"><w:styleLink w:val="ListStyle"/><w:lvl w:ilvl="0"><w:start w:val="5"/><w:numFmt w:val="upperRoman"/></w:lvl></w:abstractNum>
            <w:num w:numId="1"><w:abstractNumId w:val="1"/></w:num>
            <w:num w:numId="2"><w:abstractNumId w:val="2"/></w:num>
            <w:num w:numId="3"><w:abstractNumId w:val="1"/><w:lvlOverride w:ilvl="0"><w:startOverride w:val="10"/></w:lvlOverride></w:num>
            <w:num w:numId="4"><w:abstractNumId w:val="3"/></w:num>
            </w:numbering>"#
        );
        let mut numbering = Numbering::parse("f.docx", "word/numbering.xml", &xml).unwrap();
        let item = |num_id, level| ListRef { num_id, level };
        let markers: Vec<Marker> = [
            item(1, 0),
            item(1, 1),
            item(1, 1),
            item(1, 0),
            item(1, 1),
            item(2, 0),
            item(3, 0),
            item(4, 0),
            item(4, 0),
            item(99, 0),
        ]
        .into_iter()
        .map(|list| numbering.next_marker(list))
        .collect();
        use Marker::*;
        assert_eq!(
            markers,
            [
                Number(1),
                Number(1),
                Number(2),
                Number(2),
                Number(1),
                Bullet,
                Number(10),
                Number(5),
                Number(6),
                Bullet
            ]
        );
    }
}
