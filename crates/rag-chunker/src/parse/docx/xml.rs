//! Reading one XML part: events with their element's namespace, within the nesting limit, with
//! a DTD refused (so no entity it declares is ever expanded) and errors that name the part and
//! the byte where it went wrong.

use quick_xml::events::{BytesStart, Event};
use quick_xml::name::ResolveResult;
use quick_xml::{NsReader, XmlVersion};
use rag_core::ParseError;

use super::MAX_XML_DEPTH;

/// The namespaces whose elements the parser acts on; every other element is `Other`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ns {
    /// WordprocessingML (`w:`), transitional or strict.
    W,
    /// Office Math (`m:`), whose `m:t` holds the text of an equation.
    Math,
    /// Markup compatibility (`mc:`): `AlternateContent`, `Choice`, `Fallback`.
    Compat,
    Other,
}

fn namespace_of(resolved: &ResolveResult<'_>) -> Ns {
    match resolved {
        ResolveResult::Bound(namespace) => match namespace.as_ref() {
            "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
            | "http://purl.oclc.org/ooxml/wordprocessingml/main" => Ns::W,
            "http://schemas.openxmlformats.org/officeDocument/2006/math"
            | "http://purl.oclc.org/ooxml/officeDocument/math" => Ns::Math,
            "http://schemas.openxmlformats.org/markup-compatibility/2006" => Ns::Compat,
            _ => Ns::Other,
        },
        _ => Ns::Other,
    }
}

/// The error of a part that is not well-formed XML, at byte `position` of the part.
pub(super) fn xml_error(source_uri: &str, part: &str, position: u64, err: &quick_xml::Error) -> ParseError {
    malformed(
        source_uri,
        format!("{part}: malformed XML at byte {position} of the part: {err}"),
    )
}

/// Open XML forbids DTDs in a package's parts; one is refused rather than read, so an entity it
/// declares (a billion-laughs bomb, an external file) is never expanded.
pub(super) fn doctype_error(source_uri: &str, part: &str) -> ParseError {
    malformed(
        source_uri,
        format!(
            "{part}: declares a DTD (<!DOCTYPE>), which Open XML parts may not; refused without expanding its entities"
        ),
    )
}

/// The value of the attribute of `element` whose local name is `name` (`w:val` is `val`), with
/// character and predefined entity references resolved.
pub(super) fn attribute(element: &BytesStart<'_>, name: &str) -> Option<String> {
    element
        .attributes()
        .flatten()
        .find(|attribute| attribute.key.local_name().as_ref() == name)
        .and_then(|attribute| attribute.normalized_value(XmlVersion::Implicit1_0).ok())
        .map(|value| value.into_owned())
}

/// Whether an on/off property (`<w:vanish/>`, `<w:vanish w:val="false"/>`) is on.
pub(super) fn is_on(element: &BytesStart<'_>) -> bool {
    !matches!(
        attribute(element, "val").as_deref(),
        Some("0" | "false" | "off" | "none")
    )
}

/// An XML part read event by event.
pub(super) struct PartReader<'x> {
    reader: NsReader<&'x [u8]>,
    source_uri: &'x str,
    part: &'x str,
    depth: usize,
}

impl<'x> PartReader<'x> {
    pub(super) fn new(source_uri: &'x str, part: &'x str, xml: &'x str) -> Self {
        Self {
            reader: NsReader::from_str(xml),
            source_uri,
            part,
            depth: 0,
        }
    }

    /// Elements open around the next event.
    pub(super) fn depth(&self) -> usize {
        self.depth
    }

    /// The next event and the namespace of its element (`Ns::Other` for events that are not
    /// elements); `Event::Eof` at the end.
    pub(super) fn next(&mut self) -> Result<(Ns, Event<'x>), ParseError> {
        let (source_uri, part) = (self.source_uri, self.part);
        let (resolved, event) = match self.reader.read_resolved_event() {
            Ok((resolved, event)) => (namespace_of(&resolved), event),
            Err(err) => return Err(xml_error(source_uri, part, self.reader.error_position(), &err)),
        };
        match &event {
            Event::Start(_) => {
                self.depth += 1;
                if self.depth > MAX_XML_DEPTH {
                    return Err(over_limit(
                        source_uri,
                        format!("the XML nesting depth of {part}"),
                        format!("{MAX_XML_DEPTH} elements"),
                    ));
                }
            }
            Event::End(_) => self.depth = self.depth.saturating_sub(1),
            Event::DocType(_) => return Err(doctype_error(source_uri, part)),
            Event::Eof if self.depth > 0 => {
                return Err(malformed(
                    source_uri,
                    format!(
                        "{part}: ends inside {} open elements; is the part truncated?",
                        self.depth
                    ),
                ));
            }
            _ => {}
        }
        Ok((resolved, event))
    }

    /// The error for an entity reference that is neither a character reference nor one of XML's
    /// five predefined entities (without a DTD, nothing else is defined).
    pub(super) fn undefined_entity(&self, name: &str) -> ParseError {
        malformed(
            self.source_uri,
            format!(
                "{}: undefined entity &{name}; near byte {} of the part",
                self.part,
                self.reader.buffer_position()
            ),
        )
    }
}

/// The text an entity reference stands for: a character reference or one of XML's predefined
/// entities; `None` for anything else.
pub(super) fn resolve_reference(name: &str) -> Option<char> {
    if let Some(number) = name.strip_prefix('#') {
        let code = match number.strip_prefix('x') {
            Some(hex) => u32::from_str_radix(hex, 16).ok()?,
            None => number.parse().ok()?,
        };
        return char::from_u32(code).filter(|&ch| ch != '\0');
    }
    match name {
        "lt" => Some('<'),
        "gt" => Some('>'),
        "amp" => Some('&'),
        "apos" => Some('\''),
        "quot" => Some('"'),
        _ => None,
    }
}

/// The error for a part of the package that is not what a DOCX holds.
pub(super) fn malformed(source_uri: &str, message: impl Into<String>) -> ParseError {
    ParseError::Malformed {
        source_uri: source_uri.to_owned(),
        line: None,
        column: None,
        message: message.into(),
    }
}

/// The error for a package that goes past one of the documented limits.
pub(super) fn over_limit(source_uri: &str, what: impl Into<String>, limit: impl Into<String>) -> ParseError {
    ParseError::LimitExceeded {
        source_uri: source_uri.to_owned(),
        what: what.into(),
        limit: limit.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_character_references_and_predefined_entities_resolve() {
        assert_eq!(resolve_reference("amp"), Some('&'));
        assert_eq!(resolve_reference("#x41"), Some('A'));
        assert_eq!(resolve_reference("#233"), Some('é'));
        assert_eq!(resolve_reference("#0"), None);
        assert_eq!(resolve_reference("#xD800"), None);
        assert_eq!(resolve_reference("lol9"), None);
    }

    #[test]
    fn a_dtd_is_refused_and_depth_is_bounded() {
        let xml = "<?xml version=\"1.0\"?><!DOCTYPE lolz [<!ENTITY lol \"lol\">]><a>&lol;</a>";
        let mut reader = PartReader::new("f.docx", "word/document.xml", xml);
        let err = loop {
            match reader.next() {
                Err(err) => break err,
                Ok((_, Event::Eof)) => panic!("a DTD was accepted"),
                Ok(_) => {}
            }
        };
        assert!(err.to_string().contains("declares a DTD"), "{err}");

        let deep = "<a>".repeat(MAX_XML_DEPTH + 1);
        let mut reader = PartReader::new("f.docx", "word/document.xml", &deep);
        let err = loop {
            match reader.next() {
                Err(err) => break err,
                Ok((_, Event::Eof)) => panic!("no limit"),
                Ok(_) => {}
            }
        };
        assert!(matches!(err, ParseError::LimitExceeded { .. }), "{err}");
    }

    #[test]
    fn a_truncated_part_is_an_error() {
        let mut reader = PartReader::new("f.docx", "word/document.xml", "<w:document><w:body><w:p>");
        let err = loop {
            match reader.next() {
                Err(err) => break err,
                Ok((_, Event::Eof)) => panic!("accepted"),
                Ok(_) => {}
            }
        };
        assert_eq!(
            err.to_string(),
            "f.docx: word/document.xml: ends inside 3 open elements; is the part truncated?"
        );
    }
}
