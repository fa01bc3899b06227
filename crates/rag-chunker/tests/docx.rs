//! The DOCX parser on files made by pandoc, LibreOffice and python-docx, and on hostile packages
//! built here: structure, the rendition's promises, provenance that holds each chunk's words, and
//! a clear error or a correct result for every kind of broken or malicious input.

#![allow(clippy::unwrap_used)]

mod invariants;

use std::collections::BTreeMap;
use std::io::Write as _;

use invariants::{check_blocks, chunk_and_check, cl100k, ctx, o200k};
use rag_chunker::parse::docx::{MAX_COMPRESSION_RATIO, MAX_ENTRIES, MAX_XML_DEPTH};
use rag_chunker::{DocumentType, DocxParser};
use rag_core::{BlockType, CorpusId, DocumentId, Origin, ParseError, ParsedDocument, Parser, SourceBytes};
use zip::write::SimpleFileOptions;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/docx");

const W: &str = "xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\"";

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(format!("{FIXTURES}/{name}")).unwrap()
}

fn parse_docx(bytes: &[u8]) -> Result<ParsedDocument, ParseError> {
    let (id, corpus) = (DocumentId::from("doc"), CorpusId::from("corpus"));
    DocxParser::new().parse(
        &ctx(),
        SourceBytes {
            document_id: &id,
            corpus_id: &corpus,
            source_uri: "t.docx",
            bytes,
        },
    )
}

fn headings(parsed: &ParsedDocument) -> Vec<(u8, String)> {
    parsed
        .blocks
        .iter()
        .filter(|b| b.block_type == BlockType::Heading)
        .map(|b| (b.level.unwrap().get(), b.text.clone().unwrap()))
        .collect()
}

fn count(parsed: &ParsedDocument, block_type: BlockType) -> usize {
    parsed.blocks.iter().filter(|b| b.block_type == block_type).count()
}

/// A package of the given parts, deflated, written by the `zip` crate.
fn package(parts: &[(&str, &[u8])]) -> Vec<u8> {
    let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (name, bytes) in parts {
        writer.start_file(*name, SimpleFileOptions::default()).unwrap();
        writer.write_all(bytes).unwrap();
    }
    writer.finish().unwrap().into_inner()
}

/// A package whose only part is `word/document.xml` with `body` as the body's content.
fn document(body: &str) -> Vec<u8> {
    let xml = format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?><w:document {W}><w:body>{body}</w:body></w:document>");
    package(&[("word/document.xml", xml.as_bytes())])
}

/// The text of every `w:p` of `part`, by index (every `w:p` counts, nested ones too, in the order
/// they open), read straight from the package: the `w:t` and `m:t` text of each paragraph.
fn original_paragraphs(docx: &[u8], part: &str) -> Vec<String> {
    use quick_xml::events::Event;
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(docx)).unwrap();
    let mut xml = String::new();
    std::io::Read::read_to_string(&mut archive.by_name(part).unwrap(), &mut xml).unwrap();
    let mut reader = quick_xml::Reader::from_str(&xml);
    let (mut paragraphs, mut open, mut in_text) = (Vec::<String>::new(), Vec::<usize>::new(), false);
    loop {
        match reader.read_event().unwrap() {
            Event::Start(e) if e.name().as_ref() == "w:p" => {
                open.push(paragraphs.len());
                paragraphs.push(String::new());
            }
            Event::Empty(e) if e.name().as_ref() == "w:p" => paragraphs.push(String::new()),
            Event::End(e) if e.name().as_ref() == "w:p" => {
                open.pop();
            }
            Event::Start(e) if matches!(e.name().as_ref(), "w:t" | "m:t") => in_text = true,
            Event::End(e) if matches!(e.name().as_ref(), "w:t" | "m:t") => in_text = false,
            Event::Text(t) if in_text => paragraphs[*open.last().unwrap()].push_str(&t),
            Event::GeneralRef(r) if in_text => {
                let ch = match r.as_ref() {
                    "amp" => '&',
                    "lt" => '<',
                    "gt" => '>',
                    "quot" => '"',
                    "apos" => '\'',
                    other => r
                        .resolve_char_ref()
                        .unwrap()
                        .unwrap_or_else(|| panic!("entity {other}")),
                };
                paragraphs[*open.last().unwrap()].push(ch);
            }
            Event::Eof => break,
            _ => {}
        }
    }
    paragraphs
}

/// Which bytes of a mapped stretch the rendition wrote itself inside a paragraph's text: link
/// targets (`](...)`), note labels (`[^3]`), cell breaks (`<br>`), escaped pipes.
fn syntax_mask(text: &str) -> Vec<bool> {
    let bytes = text.as_bytes();
    let mut mask = vec![false; bytes.len()];
    let mut i = 0;
    while i < bytes.len() {
        let rest = &text[i..];
        let close = |open: &str, close: u8| {
            rest.starts_with(open).then(|| {
                bytes[i + open.len()..]
                    .iter()
                    .position(|&b| b == close)
                    .map_or(bytes.len(), |p| i + open.len() + p + 1)
            })
        };
        let end = close("](", b')')
            .or_else(|| close("[^", b']'))
            .or_else(|| rest.starts_with("<br>").then_some(i + 4))
            .or_else(|| rest.starts_with("\\|").then_some(i + 2));
        match end {
            Some(end) => {
                mask[i..end].fill(true);
                i = end;
            }
            None => i += rest.chars().next().map_or(1, char::len_utf8),
        }
    }
    mask
}

/// Words the rendition writes for elements that are not text in the XML: the edge-case fixture's
/// `w:sym` (a Symbol-font alpha, held as the code `F061`).
const SYMBOL_WORDS: [&str; 1] = ["α"];

/// Every chunk names the places its text comes from, and those paragraphs of the original hold
/// each of its words: every word of the part of a chunk that a source-map stretch covers is in
/// the text of that stretch's paragraph.
fn check_provenance(docx: &[u8], parsed: &ParsedDocument, chunks: &[rag_core::Chunk]) -> usize {
    let rendition = parsed.rendition.as_ref().unwrap();
    let text = &parsed.document.text;
    let mut parts: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut words_checked = 0;
    for chunk in chunks {
        let span = chunk.span.unwrap();
        assert_eq!(chunk.provenance, rendition.provenance(span), "chunk {}", chunk.id);
        let chunk_words = chunk.content().unwrap().chars().filter(|c| c.is_alphanumeric()).count();
        if chunk_words > 0 && !chunk.content().unwrap().starts_with("```") {
            assert!(!chunk.provenance.is_empty(), "chunk {} names no place", chunk.id);
        }
        for mapped in &rendition.source_map {
            let (start, end) = (mapped.span.start.max(span.start), mapped.span.end.min(span.end));
            if start >= end {
                continue;
            }
            let Origin::Paragraphs { part, first, last } = &mapped.origin else {
                panic!("a DOCX origin is paragraphs: {:?}", mapped.origin);
            };
            assert!(
                chunk
                    .provenance
                    .iter()
                    .any(|o| matches!(o, Origin::Paragraphs { part: p, first: f, last: l } if p == part && f <= first && last <= l)),
                "chunk {} does not name paragraph {first} of {part}",
                chunk.id
            );
            let paragraphs = parts
                .entry(part.clone())
                .or_insert_with(|| original_paragraphs(docx, part));
            let original: String = paragraphs[*first..=*last].concat();
            let stretch = &text[mapped.span.range()];
            let mask = syntax_mask(stretch);
            let mut word = String::new();
            let mut check = |word: &mut String| {
                if !word.is_empty() && !SYMBOL_WORDS.contains(&word.as_str()) {
                    assert!(
                        original.contains(word.as_str()),
                        "chunk {}: {word:?} is not in paragraph {first} of {part}: {original:?}",
                        chunk.id
                    );
                    words_checked += 1;
                }
                word.clear();
            };
            for (offset, ch) in stretch.char_indices() {
                let inside = (start..end).contains(&(mapped.span.start + offset));
                if inside && !mask[offset] && ch.is_alphanumeric() {
                    word.push(ch);
                } else {
                    check(&mut word);
                }
            }
            check(&mut word);
        }
    }
    words_checked
}

const ALL_FIXTURES: [&str; 4] = [
    "pandoc-stack-ls.docx",
    "libreoffice-stack-ls.docx",
    "pandoc-pip-footnotes.docx",
    "edge-cases.docx",
];

#[test]
fn pandoc_headings_lists_tables_code_and_links_become_blocks() {
    let parsed = parse_docx(&fixture("pandoc-stack-ls.docx")).unwrap();
    check_blocks(&parsed);
    assert_eq!(
        headings(&parsed),
        [
            // pandoc writes the front matter's title as a Title paragraph: level 1, like Heading 1.
            (1, "stack ls".to_owned()),
            (1, "stack ls".to_owned()),
            (2, "Description".to_owned()),
            (2, "Examples".to_owned()),
            (3, "Format the output (–format)".to_owned()),
            (2, "Related commands".to_owned()),
        ]
    );
    assert_eq!(count(&parsed, BlockType::TableRow), 5);
    assert_eq!(count(&parsed, BlockType::Code), 3);
    assert_eq!(count(&parsed, BlockType::Quote), 2);
    assert_eq!(count(&parsed, BlockType::ListItem), 4);
    let text = &parsed.document.text;
    assert!(
        text.contains("| Placeholder | Description |\n| --- | --- |\n| .Name | Stack name |"),
        "{text}"
    );
    assert!(text.contains("refer to the [Swarm mode section](https://docs.docker.com/engine/swarm/) in"));
    assert!(text.contains("```\n$ docker stack ls\n\nID                 SERVICES"));
    assert!(text.contains("- [stack deploy](stack_deploy.md)\n- [stack ps](stack_ps.md)"));
    // The header row's block holds the delimiter row.
    let header = parsed
        .blocks
        .iter()
        .find(|b| b.block_type == BlockType::TableRow)
        .unwrap();
    assert_eq!(
        parsed.source_of(header),
        Some("| Placeholder | Description |\n| --- | --- |")
    );
}

#[test]
fn libreoffice_and_pandoc_files_of_one_source_give_the_same_structure() {
    let pandoc = parse_docx(&fixture("pandoc-stack-ls.docx")).unwrap();
    let libreoffice = parse_docx(&fixture("libreoffice-stack-ls.docx")).unwrap();
    check_blocks(&libreoffice);
    assert_eq!(headings(&libreoffice), headings(&pandoc));
    for block_type in [BlockType::TableRow, BlockType::Code, BlockType::ListItem] {
        assert_eq!(
            count(&libreoffice, block_type),
            count(&pandoc, block_type),
            "{block_type:?}"
        );
    }
    let rows = |parsed: &ParsedDocument| -> Vec<String> {
        parsed
            .blocks
            .iter()
            .filter(|b| b.block_type == BlockType::TableRow)
            .map(|b| parsed.source_of(b).unwrap().to_owned())
            .collect()
    };
    assert_eq!(rows(&libreoffice), rows(&pandoc));
    // LibreOffice writes a paragraph per code line, pandoc one per block: the same code block.
    let code = |parsed: &ParsedDocument| -> Vec<String> {
        parsed
            .blocks
            .iter()
            .filter(|b| b.block_type == BlockType::Code)
            .map(|b| parsed.source_of(b).unwrap().to_owned())
            .collect()
    };
    assert_eq!(code(&libreoffice), code(&pandoc));
    assert!(
        libreoffice
            .document
            .text
            .contains("[Swarm mode section](https://docs.docker.com/engine/swarm/)")
    );
}

#[test]
fn footnotes_follow_the_paragraph_that_cites_them_and_map_to_their_part() {
    let parsed = parse_docx(&fixture("pandoc-pip-footnotes.docx")).unwrap();
    check_blocks(&parsed);
    let text = &parsed.document.text;
    let cited = "available in a folder/directory on your computer [^20] that you wish to install.\n\n\
                 [^20]: Specifically, the current machine’s filesystem.\n\nWith pip,";
    assert!(text.contains(cited), "{text}");
    let note = parsed
        .blocks
        .iter()
        .find(|b| parsed.source_of(b).unwrap().starts_with("[^20]:"))
        .unwrap();
    assert_eq!(note.block_type, BlockType::Other);
    // Paragraphs 0 and 1 of the part are Word's separator lines, which are left out.
    assert_eq!(
        parsed.provenance(note.span),
        [Origin::paragraphs("word/footnotes.xml", 2, 2)]
    );
    // Two code blocks side by side stay two code blocks.
    assert_eq!(count(&parsed, BlockType::Code), 4);
}

#[test]
fn edge_cases_render_as_the_reference_documents() {
    let bytes = fixture("edge-cases.docx");
    let parsed = parse_docx(&bytes).unwrap();
    check_blocks(&parsed);
    let expected = "\
# Edge Cases

## Localized heading

Text under the localized heading.

### Outline level chapter

#### Direct outline level

Heading seven is body text

Tab\tthen break
new line, cooperate, non-breaking, alpha α. Inserted words.

See [the guide](https://example.com/guide), the top and [a field link](https://example.org/field) on page 1.

- First bullet
- Second bullet

1. Step one
  - Step one, detail
2. Step two

| Name | Kind | Notes |
| --- | --- | --- |
| wide |  | spans two columns |
| tall \\| piped | inner a<br>inner b |  |

```
print('hello')
return 42
```

> A quoted remark.

Figure 1: a caption.

Anchor text.

Text box words.

A commented sentence.";
    assert_eq!(parsed.document.text, expected);
    let types: Vec<BlockType> = parsed.blocks.iter().map(|b| b.block_type).collect();
    use BlockType::*;
    assert_eq!(
        types,
        [
            Heading, Heading, Paragraph, Heading, Heading, Paragraph, Paragraph, Paragraph, ListItem, ListItem,
            ListItem, ListItem, ListItem, TableRow, TableRow, TableRow, Code, Quote, Caption, Paragraph, Paragraph,
            Paragraph
        ]
    );
    let rendition = parsed.rendition.as_ref().unwrap();
    assert_eq!(rendition.format, "docx");
    assert_eq!(rendition.original_bytes, Some(bytes.len()));
    let left_out = &rendition.left_out;
    // The TOC's result, the deletion, the hidden run, the field instructions, the header and
    // footer, the comment: each left out under its kind.
    assert_eq!(left_out["chrome"], "Localized heading 1".len(), "{left_out:?}");
    assert_eq!(left_out["deleted"], " Removed words.".len());
    assert_eq!(left_out["hidden"], "SECRET".len());
    assert_eq!(
        left_out["field_code"],
        [
            " TOC \\o \"1-3\" \\h \\z \\u ",
            " HYPERLINK \"https://example.org/field\" ",
            " PAGE "
        ]
        .iter()
        .map(|s| s.len())
        .sum::<usize>()
    );
    for kind in ["page_furniture", "comment", "markup", "package"] {
        assert!(left_out[kind] > 0, "{kind}: {left_out:?}");
    }
    // The text box counts once, and the paragraph after it has the index of its place in the part.
    let last = parsed.blocks.last().unwrap();
    assert_eq!(
        parsed.provenance(last.span),
        [Origin::paragraphs("word/document.xml", 32, 32)]
    );
}

#[test]
fn every_fixture_keeps_the_promises_and_its_provenance_holds_each_chunks_words() {
    for name in ALL_FIXTURES {
        let bytes = fixture(name);
        let parsed = parse_docx(&bytes).unwrap();
        check_blocks(&parsed);
        for (max, overlap, counter) in [(16, 4, cl100k()), (64, 8, o200k()), (512, 64, cl100k())] {
            let chunks = chunk_and_check(&parsed, max, overlap, counter);
            let words = check_provenance(&bytes, &parsed, &chunks);
            assert!(words > 50, "{name}: only {words} words checked");
        }
        // The same bytes give the same rendition, blocks and source map.
        assert_eq!(parse_docx(&bytes).unwrap(), parsed, "{name}");
    }
}

#[test]
fn the_type_is_detected_and_parse_document_dispatches_binary_input() {
    assert_eq!(DocumentType::from_path("Q3 Report.DOCX"), Some(DocumentType::Docx));
    let bytes = fixture("pandoc-stack-ls.docx");
    let (id, corpus) = (DocumentId::from("d"), CorpusId::from("c"));
    let source = SourceBytes {
        document_id: &id,
        corpus_id: &corpus,
        source_uri: "x.docx",
        bytes: &[],
    };
    let owned = rag_chunker::parse_document_owned(&ctx(), DocumentType::Docx, source, bytes.clone()).unwrap();
    assert_eq!(owned.document.text, parse_docx(&bytes).unwrap().document.text);
}

fn limit_error(result: Result<ParsedDocument, ParseError>) -> String {
    match result {
        Err(err @ ParseError::LimitExceeded { .. }) => err.to_string(),
        other => panic!("expected a limit error, got {other:?}"),
    }
}

fn malformed_error(result: Result<ParsedDocument, ParseError>) -> String {
    match result {
        Err(err @ ParseError::Malformed { .. }) => err.to_string(),
        other => panic!("expected a malformed-input error, got {other:?}"),
    }
}

#[test]
fn a_zip_bomb_is_stopped_by_its_compression_ratio() {
    // 20 MB of one letter in one paragraph compresses about 1000:1.
    let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    writer
        .start_file("word/document.xml", SimpleFileOptions::default())
        .unwrap();
    write!(writer, "<w:document {W}><w:body><w:p><w:r><w:t>").unwrap();
    let block = vec![b'a'; 1 << 16];
    for _ in 0..320 {
        writer.write_all(&block).unwrap();
    }
    write!(writer, "</w:t></w:r></w:p></w:body></w:document>").unwrap();
    let bomb = writer.finish().unwrap().into_inner();
    assert!(bomb.len() < 100_000, "{}", bomb.len());
    let err = limit_error(parse_docx(&bomb));
    assert!(
        err.starts_with("t.docx: the compression ratio of word/document.xml ("),
        "{err}"
    );
    assert!(
        err.ends_with(&format!(
            "exceeds the limit of {MAX_COMPRESSION_RATIO}:1 past the first 1 MiB"
        )),
        "{err}"
    );
    // It stopped well before the end of the 20 MB.
    let decompressed: u64 = err.split(['(', ' ']).find_map(|w| w.parse().ok()).unwrap();
    assert!(decompressed < 20 << 20, "{err}");
}

/// The offset of the central directory header of entry `name` in a zip made by [`package`].
fn central_header(zip: &[u8], name: &str) -> usize {
    let mut at = 0;
    loop {
        let found = zip[at..].windows(4).position(|w| w == b"PK\x01\x02").unwrap() + at;
        let name_len = u16::from_le_bytes([zip[found + 28], zip[found + 29]]) as usize;
        if &zip[found + 46..found + 46 + name_len] == name.as_bytes() {
            return found;
        }
        at = found + 4;
    }
}

#[test]
fn a_declared_size_over_the_limit_is_refused_before_anything_is_decompressed() {
    let mut zip = document("<w:p><w:r><w:t>small</w:t></w:r></w:p>");
    let header = central_header(&zip, "word/document.xml");
    zip[header + 24..header + 28].copy_from_slice(&0x7fff_ffffu32.to_le_bytes());
    let err = limit_error(parse_docx(&zip));
    assert_eq!(
        err,
        "t.docx: the decompressed size of the parts read (at word/document.xml) exceeds the limit of 256 MiB"
    );
}

#[test]
fn too_many_zip_entries_are_refused() {
    let names: Vec<String> = (0..=MAX_ENTRIES).map(|i| format!("word/media/{i}.png")).collect();
    let mut parts: Vec<(&str, &[u8])> = names.iter().map(|n| (n.as_str(), &b""[..])).collect();
    parts.push(("word/document.xml", b"<w:document/>"));
    let err = limit_error(parse_docx(&package(&parts)));
    assert_eq!(
        err,
        format!(
            "t.docx: the number of zip entries (up to {}) exceeds the limit of {MAX_ENTRIES} entries",
            MAX_ENTRIES + 2
        )
    );
}

#[test]
fn a_billion_laughs_dtd_is_refused_without_expanding_anything() {
    let mut xml = String::from("<?xml version=\"1.0\"?>\n<!DOCTYPE lolz [\n<!ENTITY lol \"lol\">\n");
    for i in 1..10 {
        let prev = if i == 1 {
            "lol".to_owned()
        } else {
            format!("lol{}", i - 1)
        };
        xml.push_str(&format!("<!ENTITY lol{i} \"{}\">\n", format!("&{prev};").repeat(10)));
    }
    xml.push_str(&format!(
        "]>\n<w:document {W}><w:body><w:p><w:r><w:t>&lol9;</w:t></w:r></w:p></w:body></w:document>"
    ));
    let err = malformed_error(parse_docx(&package(&[("word/document.xml", xml.as_bytes())])));
    assert_eq!(
        err,
        "t.docx: word/document.xml: declares a DTD (<!DOCTYPE>), which Open XML parts may not; refused \
         without expanding its entities"
    );
    // Without the DTD, the reference is an undefined entity: an error, not an expansion.
    let err = malformed_error(parse_docx(&document("<w:p><w:r><w:t>&lol9;</w:t></w:r></w:p>")));
    assert!(
        err.starts_with("t.docx: word/document.xml: undefined entity &lol9;"),
        "{err}"
    );
}

#[test]
fn deep_nesting_is_a_limit_and_wide_spans_are_capped() {
    let deep = "<w:tbl><w:tr><w:tc>".repeat(MAX_XML_DEPTH / 3 + 1);
    let err = limit_error(parse_docx(&document(&deep)));
    assert_eq!(
        err,
        format!("t.docx: the XML nesting depth of word/document.xml exceeds the limit of {MAX_XML_DEPTH} elements")
    );
    // Nested tables within the limit flatten into the outer cell.
    let depth = 20;
    let nested = format!(
        "{}<w:p><w:r><w:t>core</w:t></w:r></w:p>{}",
        "<w:tbl><w:tr><w:tc>".repeat(depth),
        "</w:tc></w:tr></w:tbl>".repeat(depth)
    );
    let parsed = parse_docx(&document(&nested)).unwrap();
    assert_eq!(parsed.document.text, "| core |\n| --- |");
    // A cell claiming a million columns spans 63.
    let wide = "<w:tbl><w:tr><w:tc><w:tcPr><w:gridSpan w:val=\"1000000\"/></w:tcPr><w:p><w:r><w:t>x</w:t></w:r></w:p></w:tc></w:tr></w:tbl>";
    let parsed = parse_docx(&document(wide)).unwrap();
    assert_eq!(parsed.document.text.lines().next().unwrap().matches('|').count(), 64);
}

#[test]
fn link_targets_cannot_multiply_the_output() {
    let url = format!("https://example.com/{}", "x".repeat(2000));
    let rels = format!(
        "<Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\">\
         <Relationship Id=\"r1\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/hyperlink\" \
         Target=\"{url}\" TargetMode=\"External\"/></Relationships>"
    );
    let links = "<w:hyperlink r:id=\"r1\"><w:r><w:t>a</w:t></w:r></w:hyperlink>".repeat(5000);
    let xml = format!(
        "<w:document {W} xmlns:r=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships\"><w:body><w:p>{links}</w:p></w:body></w:document>"
    );
    let parsed = parse_docx(&package(&[
        ("word/document.xml", xml.as_bytes()),
        ("word/_rels/document.xml.rels", rels.as_bytes()),
    ]))
    .unwrap();
    let text = &parsed.document.text;
    assert!(text.starts_with(&format!("[a]({url})[a]({url})")), "links are written");
    assert!(
        text.len() <= 2 * xml.len(),
        "{} bytes of rendition from {} of XML",
        text.len(),
        xml.len()
    );
    let labels = text.replace(&format!("]({url})"), "").replace('[', "");
    assert_eq!(labels, "a".repeat(5000), "every link's text is kept");
}

#[test]
fn files_that_are_not_docx_packages_are_named_with_what_to_do() {
    let cases: [(&[u8], &str); 5] = [
        (b"", "t.docx: not a DOCX: the file is empty"),
        (
            b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1\0\0\0\0",
            "t.docx: not a DOCX but an OLE compound file, most likely a Word 97-2003 .doc: convert it \
             with LibreOffice (soffice --headless --convert-to docx FILE)",
        ),
        (b"%PDF-1.7\n", "t.docx: not a DOCX: the file is not a zip archive"),
        (
            b"{\\rtf1\\ansi hello}",
            "t.docx: not a DOCX but an RTF file: convert it with LibreOffice (soffice --headless --convert-to docx FILE)",
        ),
        (b"# Markdown\n", "t.docx: not a DOCX: the file is not a zip archive"),
    ];
    for (bytes, expected) in cases {
        assert_eq!(malformed_error(parse_docx(bytes)), expected);
    }
    let mut encrypted = b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1".to_vec();
    encrypted.extend_from_slice(&[0; 512]);
    encrypted.extend("EncryptedPackage".encode_utf16().flat_map(u16::to_le_bytes));
    assert_eq!(
        malformed_error(parse_docx(&encrypted)),
        "t.docx: an encrypted (password-protected) Word file: ragctl cannot decrypt it; save a copy \
         without the password and chunk that"
    );
    let workbook = package(&[
        ("xl/workbook.xml", b"<workbook/>"),
        ("[Content_Types].xml", b"<Types/>"),
    ]);
    assert_eq!(
        malformed_error(parse_docx(&workbook)),
        "t.docx: not a DOCX: the archive has no word/document.xml (it is an Excel workbook)"
    );
}

#[test]
fn truncated_and_damaged_packages_are_errors() {
    let bytes = fixture("pandoc-stack-ls.docx");
    for cut in [bytes.len() / 2, bytes.len() - 10, 100] {
        let err = malformed_error(parse_docx(&bytes[..cut]));
        assert!(
            err.starts_with("t.docx: not a DOCX: the zip archive cannot be read ("),
            "{err}"
        );
        assert!(err.ends_with("is the file truncated?"), "{err}");
    }
    // Flip bytes inside the compressed document part: inflating fails or its checksum does not match.
    let mut zip = document(&"<w:p><w:r><w:t>some text to compress</w:t></w:r></w:p>".repeat(50));
    let data_start = 30 + "word/document.xml".len();
    for byte in &mut zip[data_start + 20..data_start + 40] {
        *byte ^= 0x5a;
    }
    let err = malformed_error(parse_docx(&zip));
    assert!(err.starts_with("t.docx: word/document.xml: "), "{err}");
    // A part cut short inside the XML.
    let err = malformed_error(parse_docx(&package(&[(
        "word/document.xml",
        format!("<w:document {W}><w:body><w:p><w:r><w:t>cut").as_bytes(),
    )])));
    assert!(err.contains("word/document.xml: ends inside 5 open elements"), "{err}");
    // Not well-formed.
    let err = malformed_error(parse_docx(&document("<w:p><w:r></w:p>")));
    assert!(
        err.starts_with("t.docx: word/document.xml: malformed XML at byte"),
        "{err}"
    );
}

#[test]
fn unsupported_compression_encryption_and_duplicate_entries_are_named() {
    let mut zip = document("<w:p><w:r><w:t>x</w:t></w:r></w:p>");
    let header = central_header(&zip, "word/document.xml");
    // Method 12 is bzip2, which this build does not read.
    zip[header + 10..header + 12].copy_from_slice(&12u16.to_le_bytes());
    zip[8..10].copy_from_slice(&12u16.to_le_bytes());
    let err = malformed_error(parse_docx(&zip));
    assert!(err.starts_with("t.docx: word/document.xml: "), "{err}");

    let mut zip = document("<w:p><w:r><w:t>x</w:t></w:r></w:p>");
    let header = central_header(&zip, "word/document.xml");
    zip[header + 8] |= 1;
    zip[6] |= 1;
    let err = malformed_error(parse_docx(&zip));
    assert!(err.starts_with("t.docx: word/document.xml: "), "{err}");

    let mut zip = package(&[
        ("word/document.xml", format!("<w:document {W}/>").as_bytes()),
        ("word/document.xmk", format!("<w:document {W}/>").as_bytes()),
    ]);
    let header = central_header(&zip, "word/document.xmk");
    zip[header + 46 + "word/document.xm".len()] = b'l';
    let err = malformed_error(parse_docx(&zip));
    assert!(err.contains("two entries of the same name"), "{err}");
}

#[test]
fn parts_in_other_encodings_decode_or_are_named() {
    let xml = format!("<w:document {W}><w:body><w:p><w:r><w:t>Grüße</w:t></w:r></w:p></w:body></w:document>");
    let mut utf16 = vec![0xFF, 0xFE];
    utf16.extend(xml.encode_utf16().flat_map(u16::to_le_bytes));
    let parsed = parse_docx(&package(&[("word/document.xml", &utf16)])).unwrap();
    assert_eq!(parsed.document.text, "Grüße");

    // ISO-8859-1: every character of this text is one byte, its code point.
    let latin1: Vec<u8> = xml.chars().map(|c| c as u8).collect();
    let err = malformed_error(parse_docx(&package(&[("word/document.xml", &latin1)])));
    assert!(
        err.starts_with("t.docx: word/document.xml: not UTF-8 (invalid byte at offset"),
        "{err}"
    );
}

#[test]
fn empty_documents_have_no_blocks() {
    for body in [
        "",
        "<w:p/>",
        "<w:p><w:r><w:t>   </w:t></w:r></w:p><w:tbl><w:tr><w:tc><w:p/></w:tc></w:tr></w:tbl>",
    ] {
        let parsed = parse_docx(&document(body)).unwrap();
        assert!(parsed.blocks.is_empty(), "{body}");
        assert_eq!(parsed.document.text, "");
        chunk_and_check(&parsed, 16, 4, cl100k());
    }
}

/// The entries of a package, in order, with `part` replaced by `replacement`.
fn repackage(docx: &[u8], part: &str, replacement: &[u8]) -> Vec<u8> {
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(docx)).unwrap();
    let options = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for index in 0..archive.len() {
        let mut entry = archive.by_index(index).unwrap();
        let name = entry.name().unwrap().into_owned();
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut entry, &mut bytes).unwrap();
        writer.start_file(name.as_str(), options).unwrap();
        writer
            .write_all(if name == part { replacement } else { &bytes })
            .unwrap();
    }
    writer.finish().unwrap().into_inner()
}

/// Pieces of WordprocessingML (and of broken XML) that mutations splice into a real document.
const SPLICES: [&str; 22] = [
    "<w:p>",
    "</w:p>",
    "<w:p/>",
    "<w:tbl><w:tr><w:tc>",
    "</w:tc></w:tr></w:tbl>",
    "<w:r><w:t>",
    "</w:t></w:r>",
    "<w:r><w:t xml:space=\"preserve\"> x | y ` ``` </w:t></w:r>",
    "&amp;",
    "&#x0;",
    "&bogus;",
    "<!DOCTYPE x [<!ENTITY a \"b\">]>",
    "<w:r><w:fldChar w:fldCharType=\"begin\"/></w:r>",
    "<w:r><w:instrText>HYPERLINK \"https://e.com/(x)\"</w:instrText></w:r>",
    "<w:r><w:fldChar w:fldCharType=\"separate\"/></w:r>",
    "<w:r><w:fldChar w:fldCharType=\"end\"/></w:r>",
    "<w:pPr><w:numPr><w:ilvl w:val=\"99\"/><w:numId w:val=\"1\"/></w:numPr><w:outlineLvl w:val=\"0\"/></w:pPr>",
    "<w:tcPr><w:gridSpan w:val=\"4000000000\"/></w:tcPr>",
    "<w:r><w:br/><w:tab/><w:sym w:font=\"Symbol\" w:char=\"F0E5\"/></w:r>",
    "<w:footnoteReference w:id=\"1\"/>",
    "é\u{0}\u{1f}",
    "<w:del><w:r><w:delText>gone</w:delText></w:r>",
];

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 48, ..Default::default() })]

    /// Real documents with pieces spliced in and stretches cut out: a malformed-input or limit
    /// error, or a document that keeps every promise.
    #[test]
    fn mutated_documents_are_errors_or_keep_every_promise(
        fixture_index in 0..ALL_FIXTURES.len(),
        edits in proptest::collection::vec((0.0f64..1.0, 0usize..80, 0..SPLICES.len()), 1..6),
    ) {
        let docx = fixture(ALL_FIXTURES[fixture_index]);
        let mut xml = Vec::new();
        let mut archive = zip::ZipArchive::new(std::io::Cursor::new(&docx)).unwrap();
        std::io::Read::read_to_end(&mut archive.by_name("word/document.xml").unwrap(), &mut xml).unwrap();
        for (at, cut, splice) in edits {
            let start = (at * xml.len() as f64) as usize;
            let end = (start + cut).min(xml.len());
            xml.splice(start..end, SPLICES[splice].bytes());
        }
        match parse_docx(&repackage(&docx, "word/document.xml", &xml)) {
            Ok(parsed) => {
                check_blocks(&parsed);
                let text = &parsed.document.text;
                let mut previous_end = 0;
                for mapped in &parsed.rendition.as_ref().unwrap().source_map {
                    let span = mapped.span;
                    proptest::prop_assert!(span.start >= previous_end && span.start < span.end && span.end <= text.len());
                    proptest::prop_assert!(text.is_char_boundary(span.start) && text.is_char_boundary(span.end));
                    previous_end = span.end;
                }
                chunk_and_check(&parsed, 16, 4, cl100k());
            }
            Err(ParseError::Malformed { .. } | ParseError::LimitExceeded { .. }) => {}
            Err(err) => proptest::prop_assert!(false, "unexpected error: {err}"),
        }
    }
}

/// The XML of a document part whose body is `body`.
fn document_xml(body: &str) -> String {
    format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?><w:document {W}><w:body>{body}</w:body></w:document>")
}

/// `_rels/.rels` with one officeDocument relationship to `target`.
fn package_rels(target: &str) -> String {
    format!(
        "<?xml version=\"1.0\"?><Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\">\
         <Relationship Id=\"rId1\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument\" \
         Target=\"{target}\"/></Relationships>"
    )
}

const TEXT: &str = "<w:p><w:r><w:t>The text of the document.</w:t></w:r></w:p>";

#[test]
fn an_office_document_relationship_to_a_part_that_is_no_document_falls_back_with_a_warning() {
    let xml = document_xml(TEXT);
    for (target, why) in [
        (
            "_rels/.rels",
            "which is not a Word document part (its root element is <Relationships>)",
        ),
        ("word/missing.xml", "which is not in the package"),
    ] {
        let rels = package_rels(target);
        let docx = package(&[("_rels/.rels", rels.as_bytes()), ("word/document.xml", xml.as_bytes())]);
        let parsed = parse_docx(&docx).unwrap();
        assert_eq!(parsed.document.text, "The text of the document.");
        assert_eq!(
            parsed.warnings(),
            [format!(
                "_rels/.rels: the officeDocument relationship names {target}, {why}; word/document.xml was read instead"
            )]
        );
        assert_eq!(
            parsed.provenance(parsed.blocks[0].span),
            [Origin::paragraphs("word/document.xml", 0, 0)]
        );
    }
    // A document part of another name is the document, without a word.
    let rels = package_rels("word/main.xml");
    let docx = package(&[("_rels/.rels", rels.as_bytes()), ("word/main.xml", xml.as_bytes())]);
    let parsed = parse_docx(&docx).unwrap();
    assert_eq!(parsed.document.text, "The text of the document.");
    assert!(parsed.warnings().is_empty());
    // A named part that is not XML falls back too; the document where Word puts it, named and
    // broken, is its own error (a DTD here), not a fallback.
    let rels = package_rels("word/broken.xml");
    let docx = package(&[
        ("_rels/.rels", rels.as_bytes()),
        ("word/broken.xml", b"<w:document <<"),
        ("word/document.xml", xml.as_bytes()),
    ]);
    assert_eq!(
        parse_docx(&docx).unwrap().warnings(),
        [
            "_rels/.rels: the officeDocument relationship names word/broken.xml, which is not well-formed XML; \
          word/document.xml was read instead"
        ]
    );
    let rels = package_rels("word/document.xml");
    let dtd = format!("<!DOCTYPE w:document [<!ENTITY a \"b\">]>{xml}");
    let docx = package(&[("_rels/.rels", rels.as_bytes()), ("word/document.xml", dtd.as_bytes())]);
    assert!(malformed_error(parse_docx(&docx)).contains("declares a DTD"));
    // With no document anywhere, the error names the relationship.
    let rels = package_rels("_rels/.rels");
    let docx = package(&[("_rels/.rels", rels.as_bytes()), ("word/styles.xml", b"<x/>")]);
    assert_eq!(
        malformed_error(parse_docx(&docx)),
        "t.docx: not a DOCX: the officeDocument relationship of _rels/.rels names _rels/.rels, which is not a Word \
         document part (its root element is <Relationships>), and the package has no other document part"
    );
}

/// An inline picture, as Word writes one (a `w:drawing` in a run).
const PICTURE: &str = "<w:p><w:r><w:drawing><wp:inline xmlns:wp=\"http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing\"/></w:drawing></w:r></w:p>";

#[test]
fn a_document_of_images_only_says_how_many_images_and_that_it_has_no_text() {
    let png = [0x89, b'P', b'N', b'G', 0, 0, 0, 0];
    let two = document_xml(&format!("{PICTURE}<w:p/>{PICTURE}"));
    let docx = package(&[
        ("word/document.xml", two.as_bytes()),
        ("word/media/image1.png", &png),
        ("word/media/image2.png", &png),
    ]);
    let parsed = parse_docx(&docx).unwrap();
    assert_eq!(parsed.document.text, "");
    assert_eq!(
        parsed.warnings(),
        ["no text: the document is 2 images and no text; they are not read (run OCR on them to chunk their text)"]
    );
    assert_eq!(parsed.rendition.as_ref().unwrap().left_out["media"], 2 * png.len());
    // The parser said why: the front ends' rule adds nothing.
    assert_eq!(rag_chunker::parse::no_text_warning(&parsed), None);
    // One image with text beside it: nothing to say.
    let with_text = document_xml(&format!("{PICTURE}{TEXT}"));
    let parsed = parse_docx(&package(&[("word/document.xml", with_text.as_bytes())])).unwrap();
    assert!(parsed.warnings().is_empty());
    assert_eq!(rag_chunker::parse::no_text_warning(&parsed), None);
    // No image and no text: the rule says so.
    let parsed = parse_docx(&document("<w:p/>")).unwrap();
    assert_eq!(
        rag_chunker::parse::no_text_warning(&parsed).as_deref(),
        Some("no text: the file holds markup and no text")
    );
}

#[test]
fn text_hidden_by_the_run_or_its_styles_is_left_out_unless_kept() {
    let styles = format!(
        "<w:styles {W}>\
         <w:style w:type=\"paragraph\" w:default=\"1\" w:styleId=\"Normal\"><w:name w:val=\"Normal\"/></w:style>\
         <w:style w:type=\"character\" w:styleId=\"Secret\"><w:name w:val=\"Secret\"/><w:rPr><w:vanish/></w:rPr></w:style>\
         <w:style w:type=\"character\" w:styleId=\"MoreSecret\"><w:basedOn w:val=\"Secret\"/></w:style>\
         <w:style w:type=\"paragraph\" w:styleId=\"HiddenPara\"><w:name w:val=\"Hidden Para\"/><w:rPr><w:vanish/></w:rPr></w:style>\
         </w:styles>"
    );
    let rels = "<Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\">\
        <Relationship Id=\"r1\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles\" Target=\"styles.xml\"/>\
        </Relationships>";
    let run =
        |props: &str, text: &str| format!("<w:r><w:rPr>{props}</w:rPr><w:t xml:space=\"preserve\">{text}</w:t></w:r>");
    let body = [
        format!(
            "<w:p>{}{}{}{}</w:p>",
            run("", "Shown "),
            run("<w:vanish/>", "direct "),
            run("<w:rStyle w:val=\"Secret\"/>", "styled "),
            run("<w:rStyle w:val=\"MoreSecret\"/>", "inherited"),
        ),
        format!(
            "<w:p><w:pPr><w:pStyle w:val=\"HiddenPara\"/></w:pPr>{}</w:p>",
            run("", "paragraph")
        ),
        format!(
            "<w:p><w:pPr><w:pStyle w:val=\"HiddenPara\"/></w:pPr>{}</w:p>",
            run("<w:vanish w:val=\"0\"/>", "unhidden")
        ),
    ]
    .concat();
    let xml = document_xml(&body);
    let docx = package(&[
        ("word/document.xml", xml.as_bytes()),
        ("word/_rels/document.xml.rels", rels.as_bytes()),
        ("word/styles.xml", styles.as_bytes()),
    ]);
    let parsed = parse_docx(&docx).unwrap();
    assert_eq!(parsed.document.text, "Shown\n\nunhidden");
    let hidden = ["direct ", "styled ", "inherited", "paragraph"];
    assert_eq!(
        parsed.rendition.as_ref().unwrap().left_out["hidden"],
        hidden.iter().map(|h| h.len()).sum::<usize>()
    );
    let (id, corpus) = (DocumentId::from("doc"), CorpusId::from("corpus"));
    let source = SourceBytes {
        document_id: &id,
        corpus_id: &corpus,
        source_uri: "t.docx",
        bytes: &docx,
    };
    let kept = DocxParser::new().keep_hidden(true).parse(&ctx(), source).unwrap();
    assert_eq!(
        kept.document.text,
        "Shown direct styled inherited\n\nparagraph\n\nunhidden"
    );
    assert!(!kept.rendition.as_ref().unwrap().left_out.contains_key("hidden"));
}
