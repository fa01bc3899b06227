//! The package: a zip archive of XML parts (Open Packaging Conventions), opened and read within
//! the limits of [`DocxParser`](super::DocxParser), and the relationships that name its parts.

use std::collections::{BTreeMap, HashMap};
use std::io::{Cursor, Read};

use quick_xml::XmlVersion;
use quick_xml::events::Event;
use rag_core::ParseError;

use super::xml::{PartReader, malformed, over_limit};
use zip::ZipArchive;
use zip::result::ZipError;

use super::{MAX_COMPRESSION_RATIO, MAX_DECOMPRESSED_BYTES, MAX_ENTRIES, RATIO_CHECK_AFTER, format_bytes};

/// The first bytes of an OLE compound file: Word 97-2003 `.doc` files, and OOXML files encrypted
/// with a password, which Office wraps in one.
const OLE_MAGIC: [u8; 8] = [0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1];

/// An opened package: the archive, its entries by lower-cased name (part names are
/// case-insensitive), and how many decompressed bytes the parts read so far took.
pub(super) struct Package<'a> {
    source_uri: &'a str,
    archive: ZipArchive<Cursor<&'a [u8]>>,
    by_name: HashMap<String, usize>,
    decompressed: u64,
    read: Vec<bool>,
    relationship_bytes: u64,
}

/// A relationship of a part: what the target is (the last segment of the type URI, e.g.
/// `hyperlink`, `styles`, `footnotes`), and where it points.
#[derive(Debug, Clone)]
pub(super) struct Relationship {
    pub(super) kind: String,
    /// For an internal target, the part name it resolves to (no leading `/`); for an external
    /// one, the target as written (a URL).
    pub(super) target: String,
    pub(super) external: bool,
}

/// The relationships of one part, by id.
#[derive(Debug, Default)]
pub(super) struct Relationships {
    by_id: BTreeMap<String, Relationship>,
}

impl Relationships {
    pub(super) fn get(&self, id: &str) -> Option<&Relationship> {
        self.by_id.get(id)
    }

    /// The internal target of the first relationship of `kind`, in id order.
    pub(super) fn part_of_kind(&self, kind: &str) -> Option<&str> {
        self.parts_of_kind(kind).next()
    }

    /// The internal targets of every relationship of `kind`, in id order.
    pub(super) fn parts_of_kind<'r>(&'r self, kind: &str) -> impl Iterator<Item = &'r str> + use<'r> {
        let kind = kind.to_owned();
        self.by_id
            .values()
            .filter(move |rel| !rel.external && rel.kind == kind)
            .map(|rel| rel.target.as_str())
    }
}

/// Why bytes that are not a zip archive are not a DOCX, and what to do about it.
fn not_a_package(bytes: &[u8]) -> String {
    if bytes.is_empty() {
        return "not a DOCX: the file is empty".to_owned();
    }
    if bytes.starts_with(&OLE_MAGIC) {
        return if contains_utf16le(bytes, "EncryptedPackage") {
            "an encrypted (password-protected) Word file: ragctl cannot decrypt it; save a copy \
             without the password and chunk that"
                .to_owned()
        } else {
            "not a DOCX but an OLE compound file, most likely a Word 97-2003 .doc: convert it with \
             LibreOffice (soffice --headless --convert-to docx FILE)"
                .to_owned()
        };
    }
    let start = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes).trim_ascii_start();
    if start.starts_with(b"{\\rtf") {
        return "not a DOCX but an RTF file: convert it with LibreOffice \
                (soffice --headless --convert-to docx FILE)"
            .to_owned();
    }
    if start.starts_with(b"<") {
        return "not a DOCX but an XML or HTML file (a DOCX is a zip archive; a Word 2003 XML or \
                flat OPC file must be saved as .docx first)"
            .to_owned();
    }
    "not a DOCX: the file is not a zip archive".to_owned()
}

/// Whether `haystack` holds `needle` encoded as UTF-16LE (how an OLE directory names its streams).
fn contains_utf16le(haystack: &[u8], needle: &str) -> bool {
    let encoded: Vec<u8> = needle.encode_utf16().flat_map(u16::to_le_bytes).collect();
    haystack
        .windows(encoded.len())
        .any(|window| window == encoded.as_slice())
}

/// What an archive without a Word document is, when it is another Open XML or OpenDocument file.
fn other_package_kind(by_name: &HashMap<String, usize>) -> &'static str {
    if by_name.contains_key("xl/workbook.xml") {
        " (it is an Excel workbook)"
    } else if by_name.contains_key("ppt/presentation.xml") {
        " (it is a PowerPoint presentation)"
    } else if by_name.contains_key("content.xml") && by_name.contains_key("mimetype") {
        " (it is an OpenDocument file: convert it with LibreOffice, soffice --headless --convert-to docx FILE)"
    } else {
        ""
    }
}

impl<'a> Package<'a> {
    /// Opens the archive, or says why `bytes` are not a DOCX package.
    pub(super) fn open(source_uri: &'a str, bytes: &'a [u8]) -> Result<Self, ParseError> {
        if !bytes.starts_with(b"PK") {
            return Err(malformed(source_uri, not_a_package(bytes)));
        }
        // Every entry the zip reader could parse has a central directory header, which starts
        // with this signature: counting them bounds what parsing the directory allocates.
        let headers = memchr::memmem::find_iter(bytes, b"PK\x01\x02").count();
        if headers > MAX_ENTRIES {
            return Err(over_limit(
                source_uri,
                format!("the number of zip entries (up to {headers})"),
                format!("{MAX_ENTRIES} entries"),
            ));
        }
        let archive = ZipArchive::new(Cursor::new(bytes)).map_err(|err| {
            malformed(
                source_uri,
                format!("not a DOCX: the zip archive cannot be read ({err}); is the file truncated?"),
            )
        })?;
        if archive.len() > MAX_ENTRIES {
            return Err(over_limit(
                source_uri,
                format!("the number of zip entries ({})", archive.len()),
                format!("{MAX_ENTRIES} entries"),
            ));
        }
        if archive.has_duplicate_names() {
            return Err(malformed(
                source_uri,
                "the zip archive holds two entries of the same name, so which one is the document is ambiguous",
            ));
        }
        let mut by_name = HashMap::with_capacity(archive.len());
        for (index, name) in archive.file_names_raw().enumerate() {
            by_name.insert(String::from_utf8_lossy(name).to_lowercase(), index);
        }
        let read = vec![false; archive.len()];
        Ok(Self {
            source_uri,
            archive,
            by_name,
            decompressed: 0,
            read,
            relationship_bytes: 0,
        })
    }

    /// The file the package was read from, as errors name it.
    pub(super) fn source_uri(&self) -> &'a str {
        self.source_uri
    }

    /// The error for a package without a main document part.
    pub(super) fn no_document(&self) -> ParseError {
        malformed(
            self.source_uri,
            format!(
                "not a DOCX: the archive has no word/document.xml{}",
                other_package_kind(&self.by_name)
            ),
        )
    }

    /// The text of part `name` (`None` if the package has no such part), decompressed within the
    /// package's limits and decoded from UTF-8 or, after a byte-order mark, UTF-16.
    pub(super) fn read_part(&mut self, name: &str) -> Result<Option<String>, ParseError> {
        let Some(&index) = self.by_name.get(&name.to_lowercase()) else {
            return Ok(None);
        };
        let source_uri = self.source_uri;
        let remaining = MAX_DECOMPRESSED_BYTES.saturating_sub(self.decompressed);
        let budget_error = |name: &str| {
            over_limit(
                source_uri,
                format!("the decompressed size of the parts read (at {name})"),
                format_bytes(MAX_DECOMPRESSED_BYTES),
            )
        };
        let damaged = |err: ZipError| match err {
            ZipError::UnsupportedArchive(what) => malformed(source_uri, format!("{name}: cannot be read: {what}")),
            ZipError::CompressionMethodNotSupported(method) => malformed(
                source_uri,
                format!(
                    "{name}: compressed with method {method}, which this build does not read (only deflate and stored)"
                ),
            ),
            err => malformed(source_uri, format!("{name}: the zip entry is damaged: {err}")),
        };
        let mut file = self.archive.by_index(index).map_err(damaged)?;
        if file.encrypted() {
            return Err(malformed(
                source_uri,
                format!("{name}: the zip entry is encrypted; ragctl cannot decrypt it"),
            ));
        }
        if file.size() > remaining {
            return Err(budget_error(name));
        }
        let compressed = file.compressed_size().max(1);
        let ratio_limit = compressed.saturating_mul(MAX_COMPRESSION_RATIO).max(RATIO_CHECK_AFTER);
        // The declared size is a hint only: a lying header must not choose the allocation.
        let mut bytes = Vec::with_capacity(file.size().min(RATIO_CHECK_AFTER) as usize);
        let mut chunk = [0u8; 64 * 1024];
        loop {
            let n = match file.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => n,
                Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(err) => {
                    return Err(malformed(
                        source_uri,
                        format!("{name}: the zip entry is damaged: {err}"),
                    ));
                }
            };
            bytes.extend_from_slice(&chunk[..n]);
            let total = bytes.len() as u64;
            if total > remaining {
                return Err(budget_error(name));
            }
            if total > ratio_limit {
                return Err(over_limit(
                    source_uri,
                    format!(
                        "the compression ratio of {name} ({total} bytes out of {compressed} and counting: a zip bomb?)"
                    ),
                    format!(
                        "{MAX_COMPRESSION_RATIO}:1 past the first {}",
                        format_bytes(RATIO_CHECK_AFTER)
                    ),
                ));
            }
        }
        drop(file);
        self.decompressed += bytes.len() as u64;
        self.read[index] = true;
        decode_part(source_uri, name, bytes).map(Some)
    }

    /// The relationships of part `part` (from `_rels/.rels` for the package itself, `part` `""`),
    /// targets resolved against the part's folder. A part without a relationships part has none.
    pub(super) fn relationships(&mut self, part: &str) -> Result<Relationships, ParseError> {
        let (folder, file) = match part.rfind('/') {
            Some(slash) => (&part[..=slash], &part[slash + 1..]),
            None => ("", part),
        };
        let rels_name = format!("{folder}_rels/{file}.rels");
        let Some(xml) = self.read_part(&rels_name)? else {
            return Ok(Relationships::default());
        };
        self.relationship_bytes += xml.len() as u64;
        parse_relationships(self.source_uri, &rels_name, &xml, folder)
    }

    /// The bytes of the relationship parts read.
    pub(super) fn relationship_bytes(&self) -> u64 {
        self.relationship_bytes
    }

    /// Every entry not read, with the size its directory entry declares (a count for the report,
    /// not something anything is allocated by).
    pub(super) fn unread_entries(&self) -> Vec<(String, u64)> {
        let mut entries = Vec::new();
        for (index, name) in self.archive.file_names_raw().enumerate() {
            if self.read.get(index).copied().unwrap_or(true) {
                continue;
            }
            let size = self.archive.by_index_data(index).map_or(0, |entry| entry.size());
            entries.push((String::from_utf8_lossy(name).into_owned(), size));
        }
        entries
    }
}

/// A part's bytes as text: UTF-8 (a byte-order mark skipped), or UTF-16 after its byte-order mark.
fn decode_part(source_uri: &str, name: &str, bytes: Vec<u8>) -> Result<String, ParseError> {
    let utf16 = |big_endian: bool| {
        let units = bytes[2..].chunks_exact(2).map(|pair| {
            if big_endian {
                u16::from_be_bytes([pair[0], pair[1]])
            } else {
                u16::from_le_bytes([pair[0], pair[1]])
            }
        });
        char::decode_utf16(units)
            .collect::<Result<String, _>>()
            .map_err(|_| malformed(source_uri, format!("{name}: invalid UTF-16")))
    };
    match bytes.as_slice() {
        [0xFF, 0xFE, ..] => utf16(false),
        [0xFE, 0xFF, ..] => utf16(true),
        _ => {
            let skip = if bytes.starts_with(b"\xef\xbb\xbf") { 3 } else { 0 };
            let mut bytes = bytes;
            bytes.drain(..skip);
            String::from_utf8(bytes).map_err(|err| {
                malformed(
                    source_uri,
                    format!(
                        "{name}: not UTF-8 (invalid byte at offset {} of the part); Open XML parts are UTF-8 or UTF-16",
                        err.utf8_error().valid_up_to() + skip
                    ),
                )
            })
        }
    }
}

/// The part name `target` names, relative to `folder` (which ends with `/` or is empty):
/// `styles.xml` from `word/` is `word/styles.xml`, `/word/x.xml` is `word/x.xml`, `../a.xml` from
/// `word/` is `a.xml`.
fn resolve_target(folder: &str, target: &str) -> String {
    let joined = match target.strip_prefix('/') {
        Some(absolute) => absolute.to_owned(),
        None => format!("{folder}{target}"),
    };
    let mut segments: Vec<&str> = Vec::new();
    for segment in joined.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                segments.pop();
            }
            segment => segments.push(segment),
        }
    }
    segments.join("/")
}

fn parse_relationships(source_uri: &str, part: &str, xml: &str, folder: &str) -> Result<Relationships, ParseError> {
    let mut reader = PartReader::new(source_uri, part, xml);
    let mut relationships = Relationships::default();
    loop {
        let (_, event) = reader.next()?;
        match event {
            Event::Start(element) | Event::Empty(element) if element.local_name().as_ref() == "Relationship" => {
                let (mut id, mut kind, mut target, mut external) = (None, None, None, false);
                for attribute in element.attributes().flatten() {
                    let Ok(value) = attribute.normalized_value(XmlVersion::Implicit1_0) else {
                        continue;
                    };
                    match attribute.key.local_name().as_ref() {
                        "Id" => id = Some(value.into_owned()),
                        "Type" => kind = value.rsplit('/').next().map(str::to_owned),
                        "Target" => target = Some(value.into_owned()),
                        "TargetMode" => external = value.eq_ignore_ascii_case("External"),
                        _ => {}
                    }
                }
                if let (Some(id), Some(kind), Some(target)) = (id, kind, target) {
                    let target = if external {
                        target
                    } else {
                        resolve_target(folder, &target)
                    };
                    relationships.by_id.insert(id, Relationship { kind, target, external });
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(relationships)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_resolve_against_the_parts_folder() {
        assert_eq!(resolve_target("word/", "styles.xml"), "word/styles.xml");
        assert_eq!(resolve_target("word/", "/word/media/a.png"), "word/media/a.png");
        assert_eq!(resolve_target("word/", "../customXml/item1.xml"), "customXml/item1.xml");
        assert_eq!(resolve_target("", "word/document.xml"), "word/document.xml");
        assert_eq!(resolve_target("word/", "./x/../y.xml"), "word/y.xml");
        assert_eq!(resolve_target("", "../../../etc/passwd"), "etc/passwd");
    }

    #[test]
    fn parts_decode_from_utf8_and_utf16_with_a_byte_order_mark() {
        let text = "<a>é</a>";
        assert_eq!(decode_part("f", "p", text.as_bytes().to_vec()).unwrap(), text);
        let mut bom = b"\xef\xbb\xbf".to_vec();
        bom.extend_from_slice(text.as_bytes());
        assert_eq!(decode_part("f", "p", bom).unwrap(), text);
        let mut le = vec![0xFF, 0xFE];
        le.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
        assert_eq!(decode_part("f", "p", le).unwrap(), text);
        let mut be = vec![0xFE, 0xFF];
        be.extend(text.encode_utf16().flat_map(u16::to_be_bytes));
        assert_eq!(decode_part("f", "p", be).unwrap(), text);
        let err = decode_part("f.docx", "word/document.xml", b"<a>\xe9</a>".to_vec()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "f.docx: word/document.xml: not UTF-8 (invalid byte at offset 3 of the part); Open XML parts \
             are UTF-8 or UTF-16"
        );
    }

    #[test]
    fn files_that_are_not_packages_are_named() {
        assert_eq!(not_a_package(b""), "not a DOCX: the file is empty");
        assert!(not_a_package(b"{\\rtf1\\ansi").contains("RTF"));
        assert!(not_a_package(b"<?xml version=\"1.0\"?>").contains("XML"));
        let mut ole = OLE_MAGIC.to_vec();
        ole.extend_from_slice(&[0; 64]);
        assert!(not_a_package(&ole).contains("Word 97-2003 .doc"));
        ole.extend("EncryptedPackage".encode_utf16().flat_map(u16::to_le_bytes));
        assert!(not_a_package(&ole).starts_with("an encrypted (password-protected) Word file"));
        assert_eq!(not_a_package(b"%PDF-1.7"), "not a DOCX: the file is not a zip archive");
    }
}
