//! The character encoding of an HTML file, as the HTML standard's encoding sniffing finds it, and
//! the file decoded to UTF-8 with a map from decoded offsets back to offsets of the file as read.

use encoding_rs::{DecoderResult, Encoding, UTF_8, UTF_16BE, UTF_16LE, WINDOWS_1252, X_USER_DEFINED};

/// How many bytes of the file the `<meta>` prescan reads, as the HTML standard says.
const PRESCAN_BYTES: usize = 1024;

/// Where the encoding came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EncodingSource {
    /// A byte-order mark.
    Bom,
    /// A `<meta charset>` or `<meta http-equiv="content-type">` in the first 1024 bytes.
    Meta,
    /// Nothing said: UTF-8.
    Default,
}

/// The file decoded: its text, and where each stretch of the text sits in the file.
#[derive(Debug)]
pub(crate) struct Decoded {
    /// The text, without a byte-order mark.
    pub(crate) text: String,
    /// The encoding the file was read in.
    #[cfg_attr(not(test), expect(dead_code, reason = "the tests check what the sniffing found"))]
    pub(crate) encoding: &'static Encoding,
    /// How the encoding was found.
    #[cfg_attr(not(test), expect(dead_code, reason = "the tests check what the sniffing found"))]
    pub(crate) source: EncodingSource,
    /// Bytes of the file that are not valid in `encoding`; each malformed sequence became one
    /// U+FFFD in `text`.
    pub(crate) replaced_bytes: usize,
    /// Runs of characters that take the same number of bytes in the text and in the file, in text
    /// order; empty when the text is the file (valid UTF-8, no byte-order mark).
    runs: Vec<Run>,
}

/// Characters from `text` offset `text` and file offset `file` on, each `text_unit` bytes in the
/// text and `file_unit` bytes in the file, up to the next run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Run {
    text: usize,
    file: usize,
    text_unit: usize,
    file_unit: usize,
}

impl Decoded {
    /// The offset in the file of offset `at` of the text (a character boundary).
    pub(crate) fn file_offset(&self, at: usize) -> usize {
        let index = self.runs.partition_point(|run| run.text <= at);
        match index.checked_sub(1).and_then(|i| self.runs.get(i)) {
            Some(run) => run.file + (at - run.text) / run.text_unit * run.file_unit,
            None => at,
        }
    }
}

/// Decodes `bytes` as the HTML standard sniffs its encoding: a byte-order mark, else a `<meta>`
/// in the first 1024 bytes, else UTF-8. Bytes invalid in the encoding become U+FFFD and are
/// counted; nothing fails.
pub(crate) fn decode_html(bytes: &[u8]) -> Decoded {
    let (encoding, bom, source) = match Encoding::for_bom(bytes) {
        Some((encoding, bom)) => (encoding, bom, EncodingSource::Bom),
        None => match prescan(&bytes[..bytes.len().min(PRESCAN_BYTES)]) {
            Some(encoding) => (encoding, 0, EncodingSource::Meta),
            None => (UTF_8, 0, EncodingSource::Default),
        },
    };
    let body = &bytes[bom..];
    if encoding == UTF_8 {
        decode_utf8(body, bom, source)
    } else {
        decode_other(body, bom, encoding, source)
    }
}

/// UTF-8: the text is the file where it is valid; each maximal invalid sequence (as the Encoding
/// standard defines it, the same as [`String::from_utf8_lossy`]) becomes one U+FFFD.
fn decode_utf8(body: &[u8], offset: usize, source: EncodingSource) -> Decoded {
    if let Ok(text) = std::str::from_utf8(body) {
        let runs = if offset == 0 {
            Vec::new()
        } else {
            vec![Run {
                text: 0,
                file: offset,
                text_unit: 1,
                file_unit: 1,
            }]
        };
        return Decoded {
            text: text.to_owned(),
            encoding: UTF_8,
            source,
            replaced_bytes: 0,
            runs,
        };
    }
    let mut text = String::with_capacity(body.len() + body.len() / 2);
    let mut runs = Vec::new();
    let mut replaced_bytes = 0;
    let mut file = offset;
    for chunk in body.utf8_chunks() {
        let valid = chunk.valid();
        if !valid.is_empty() {
            runs.push(Run {
                text: text.len(),
                file,
                text_unit: 1,
                file_unit: 1,
            });
            text.push_str(valid);
            file += valid.len();
        }
        let invalid = chunk.invalid().len();
        if invalid > 0 {
            runs.push(Run {
                text: text.len(),
                file,
                text_unit: '\u{fffd}'.len_utf8(),
                file_unit: invalid,
            });
            text.push('\u{fffd}');
            file += invalid;
            replaced_bytes += invalid;
        }
    }
    Decoded {
        text,
        encoding: UTF_8,
        source,
        replaced_bytes,
        runs,
    }
}

/// Any other encoding, a byte at a time, so that every character's bytes in the file are known.
fn decode_other(body: &[u8], offset: usize, encoding: &'static Encoding, source: EncodingSource) -> Decoded {
    let mut decoder = encoding.new_decoder_without_bom_handling();
    let mut text = String::with_capacity(body.len() + body.len() / 2);
    let mut runs: Vec<Run> = Vec::new();
    let mut replaced_bytes = 0;
    // The file offset where the character being decoded starts.
    let mut char_start = offset;
    let mut at = 0;
    loop {
        let last = at >= body.len();
        let input = if last { &[][..] } else { &body[at..at + 1] };
        let needed = decoder
            .max_utf8_buffer_length_without_replacement(input.len())
            .unwrap_or(16)
            .max(4);
        text.reserve(needed);
        let before = text.len();
        let (result, read) = decoder.decode_to_string_without_replacement(input, &mut text, last);
        at += read;
        let file_here = offset + at;
        match result {
            DecoderResult::Malformed(bad, _) => {
                text.push('\u{fffd}');
                replaced_bytes += usize::from(bad);
                push_unit(&mut runs, before, text.len(), char_start, file_here);
                char_start = file_here;
            }
            DecoderResult::InputEmpty | DecoderResult::OutputFull => {
                if text.len() > before {
                    push_unit(&mut runs, before, text.len(), char_start, file_here);
                    char_start = file_here;
                }
                if last && matches!(result, DecoderResult::InputEmpty) {
                    break;
                }
            }
        }
    }
    Decoded {
        text,
        encoding,
        source,
        replaced_bytes,
        runs,
    }
}

/// Records that text `text_from..text_to` comes from file `file_from..file_to`: a new run unless the
/// last run has the same units.
fn push_unit(runs: &mut Vec<Run>, text_from: usize, text_to: usize, file_from: usize, file_to: usize) {
    let (text_unit, file_unit) = (text_to - text_from, file_to - file_from);
    if text_unit == 0 {
        return;
    }
    if let Some(last) = runs.last()
        && last.text_unit == text_unit
        && last.file_unit == file_unit
    {
        return;
    }
    runs.push(Run {
        text: text_from,
        file: file_from,
        text_unit,
        file_unit,
    });
}

/// The HTML standard's "prescan a byte stream to determine its encoding": the first `<meta>`
/// with a `charset` attribute, or an `http-equiv="content-type"` with a `content` that names a
/// charset, skipping comments and other tags.
fn prescan(bytes: &[u8]) -> Option<&'static Encoding> {
    let mut at = 0;
    while at < bytes.len() {
        let rest = &bytes[at..];
        if rest.starts_with(b"<!--") {
            at += rest[4..]
                .windows(3)
                .position(|w| w == b"-->")
                .map_or(rest.len(), |p| 4 + p + 3);
        } else if rest.len() >= 6
            && rest[..5].eq_ignore_ascii_case(b"<meta")
            && matches!(rest[5], b'\t' | b'\n' | b'\x0c' | b'\r' | b' ' | b'/')
        {
            at += 5;
            if let Some(encoding) = meta_encoding(bytes, &mut at) {
                return Some(encoding);
            }
        } else if rest.len() >= 2
            && (rest[1].is_ascii_alphabetic()
                || (rest[0] == b'<' && rest[1] == b'/' && rest.get(2).is_some_and(u8::is_ascii_alphabetic)))
            && rest[0] == b'<'
        {
            // Another tag: skip its name and attributes.
            at += 1;
            while at < bytes.len() && !matches!(bytes[at], b'\t' | b'\n' | b'\x0c' | b'\r' | b' ' | b'>') {
                at += 1;
            }
            while attribute(bytes, &mut at).is_some() {}
        } else if rest.starts_with(b"<!") || rest.starts_with(b"</") || rest.starts_with(b"<?") {
            at += rest.iter().position(|&b| b == b'>').map_or(rest.len(), |p| p + 1);
        } else {
            at += 1;
        }
    }
    None
}

/// The attributes of one `<meta>` (from just after its name); the encoding it declares, if any.
fn meta_encoding(bytes: &[u8], at: &mut usize) -> Option<&'static Encoding> {
    let mut seen: Vec<Vec<u8>> = Vec::new();
    let mut got_pragma = false;
    let mut need_pragma: Option<bool> = None;
    let mut charset: Option<&'static Encoding> = None;
    while let Some((name, value)) = attribute(bytes, at) {
        if seen.contains(&name) {
            continue;
        }
        seen.push(name.clone());
        match name.as_slice() {
            b"http-equiv" if value.eq_ignore_ascii_case(b"content-type") => got_pragma = true,
            b"content" if charset.is_none() => {
                if let Some(found) = charset_in_content(&value).and_then(Encoding::for_label) {
                    charset = Some(found);
                    need_pragma = Some(true);
                }
            }
            b"charset" => {
                charset = Encoding::for_label(&value);
                need_pragma = Some(false);
            }
            _ => {}
        }
    }
    let charset = charset?;
    match need_pragma {
        Some(true) if !got_pragma => return None,
        None => return None,
        _ => {}
    }
    // A page that says UTF-16 in ASCII is not UTF-16; x-user-defined is windows-1252 here.
    Some(if charset == UTF_16BE || charset == UTF_16LE {
        UTF_8
    } else if charset == X_USER_DEFINED {
        WINDOWS_1252
    } else {
        charset
    })
}

/// The HTML standard's "get an attribute": the next attribute's lowercased name and value, or
/// `None` at the tag's end.
fn attribute(bytes: &[u8], at: &mut usize) -> Option<(Vec<u8>, Vec<u8>)> {
    let space = |b: u8| matches!(b, b'\t' | b'\n' | b'\x0c' | b'\r' | b' ');
    while *at < bytes.len() && (space(bytes[*at]) || bytes[*at] == b'/') {
        *at += 1;
    }
    if *at >= bytes.len() || bytes[*at] == b'>' {
        return None;
    }
    let mut name = Vec::new();
    let mut value = Vec::new();
    loop {
        let &b = bytes.get(*at)?;
        if b == b'=' && !name.is_empty() {
            *at += 1;
            break;
        }
        if space(b) {
            while bytes.get(*at).is_some_and(|&b| space(b)) {
                *at += 1;
            }
            if bytes.get(*at) != Some(&b'=') {
                return Some((name, value));
            }
            *at += 1;
            break;
        }
        if b == b'/' || b == b'>' {
            return Some((name, value));
        }
        name.push(b.to_ascii_lowercase());
        *at += 1;
    }
    while bytes.get(*at).is_some_and(|&b| space(b)) {
        *at += 1;
    }
    let &quote = bytes.get(*at)?;
    if quote == b'"' || quote == b'\'' {
        *at += 1;
        while let Some(&b) = bytes.get(*at) {
            *at += 1;
            if b == quote {
                return Some((name, value));
            }
            value.push(b.to_ascii_lowercase());
        }
        return None;
    }
    if quote == b'>' {
        return Some((name, value));
    }
    while let Some(&b) = bytes.get(*at) {
        if space(b) || b == b'>' {
            break;
        }
        value.push(b.to_ascii_lowercase());
        *at += 1;
    }
    Some((name, value))
}

/// The HTML standard's "extract a character encoding from a meta element": the label after
/// `charset=` in a `content` attribute.
fn charset_in_content(content: &[u8]) -> Option<&[u8]> {
    let mut at = 0;
    loop {
        let found = content[at..]
            .windows(7)
            .position(|w| w.eq_ignore_ascii_case(b"charset"))?;
        at += found + 7;
        while content.get(at).is_some_and(|b| b.is_ascii_whitespace()) {
            at += 1;
        }
        if content.get(at) == Some(&b'=') {
            at += 1;
            break;
        }
    }
    while content.get(at).is_some_and(|b| b.is_ascii_whitespace()) {
        at += 1;
    }
    match content.get(at)? {
        &quote @ (b'"' | b'\'') => {
            let rest = &content[at + 1..];
            rest.iter().position(|&b| b == quote).map(|end| &rest[..end])
        }
        _ => {
            let rest = &content[at..];
            let end = rest
                .iter()
                .position(|&b| b.is_ascii_whitespace() || b == b';')
                .unwrap_or(rest.len());
            Some(&rest[..end])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every character's file offset, checked against the file itself.
    fn offsets_hold(decoded: &Decoded, bytes: &[u8]) {
        let mut previous = 0;
        for (at, _) in decoded.text.char_indices() {
            let file = decoded.file_offset(at);
            assert!(file >= previous && file <= bytes.len(), "{at} -> {file}");
            previous = file;
        }
        assert_eq!(decoded.file_offset(decoded.text.len()), bytes.len());
    }

    #[test]
    fn a_bom_wins_and_its_bytes_are_skipped() {
        let bytes = b"\xef\xbb\xbf<meta charset=latin1><p>\xc3\xa9";
        let decoded = decode_html(bytes);
        assert_eq!((decoded.encoding, decoded.source), (UTF_8, EncodingSource::Bom));
        assert_eq!(decoded.text, "<meta charset=latin1><p>é");
        assert_eq!(decoded.file_offset(0), 3);
        offsets_hold(&decoded, bytes);
    }

    #[test]
    fn meta_charset_and_http_equiv_name_the_encoding() {
        let decoded = decode_html(b"<!-- <meta charset=koi8-r> --><META CHARSET='windows-1251'><p>\xcf\xf0\xe8");
        assert_eq!(
            (decoded.encoding.name(), decoded.source),
            ("windows-1251", EncodingSource::Meta)
        );
        assert!(decoded.text.ends_with("<p>При"), "{}", decoded.text);
        let bytes =
            b"<head><meta http-equiv=\"Content-Type\" content=\"text/html; charset=ISO-8859-1\"><p>caf\xe9 &amp; more";
        let decoded = decode_html(bytes);
        // The Encoding standard maps the ISO-8859-1 label to windows-1252.
        assert_eq!(decoded.encoding, WINDOWS_1252);
        assert!(decoded.text.contains("café"));
        offsets_hold(&decoded, bytes);
        let at = decoded.text.find(" &amp;").unwrap_or(0);
        assert_eq!(&bytes[decoded.file_offset(at)..][..6], b" &amp;");
        // content without http-equiv says nothing; nor does a label the standard does not know.
        assert_eq!(
            decode_html(b"<meta content='charset=koi8-r'>x").source,
            EncodingSource::Default
        );
        assert_eq!(decode_html(b"<meta charset=klingon>x").source, EncodingSource::Default);
        assert_eq!(decode_html(b"<meta charset=utf-16le>x").encoding, UTF_8);
    }

    #[test]
    fn a_meta_after_the_first_1024_bytes_is_not_seen() {
        let mut bytes = vec![b' '; 1100];
        bytes.extend_from_slice(b"<meta charset=windows-1251>");
        assert_eq!(decode_html(&bytes).source, EncodingSource::Default);
    }

    #[test]
    fn invalid_utf8_is_replaced_counted_and_mapped() {
        let bytes = b"<p>a\xff\xfeb\xe2\x82c</p>";
        let decoded = decode_html(bytes);
        assert_eq!(decoded.text, "<p>a\u{fffd}\u{fffd}b\u{fffd}c</p>");
        assert_eq!(decoded.replaced_bytes, 4);
        offsets_hold(&decoded, bytes);
        let c = decoded.text.find('c').unwrap_or(0);
        assert_eq!(bytes[decoded.file_offset(c)], b'c');
    }

    #[test]
    fn multi_byte_encodings_map_every_character() {
        // Shift_JIS: "日本" is 2 bytes a character in the file, 3 in the text.
        let (encoded, _, _) = encoding_rs::SHIFT_JIS.encode("<meta charset=shift_jis><p>日本 &lt; x</p>");
        let decoded = decode_html(&encoded);
        assert_eq!(decoded.encoding, encoding_rs::SHIFT_JIS);
        offsets_hold(&decoded, &encoded);
        let at = decoded.text.find("&lt;").unwrap_or(0);
        assert_eq!(&encoded[decoded.file_offset(at)..][..4], b"&lt;");
        // A lead byte followed by ASCII is malformed; the ASCII byte survives.
        let decoded = decode_html(b"<meta charset=shift_jis>\x82<b");
        assert!(decoded.text.ends_with("\u{fffd}<b"), "{:?}", decoded.text);
        assert_eq!(decoded.replaced_bytes, 1);
        let at = decoded.text.rfind('<').unwrap_or(0);
        assert_eq!(decoded.file_offset(at), 25);
    }

    #[test]
    fn utf16_with_a_bom_decodes() {
        let mut bytes = vec![0xff, 0xfe];
        for unit in "<p>hé</p>".encode_utf16() {
            bytes.extend_from_slice(&unit.to_le_bytes());
        }
        let decoded = decode_html(&bytes);
        assert_eq!(decoded.text, "<p>hé</p>");
        offsets_hold(&decoded, &bytes);
        assert_eq!(decoded.file_offset(3), 8);
    }
}
