//! The HTML parser on real pages (fixtures/html/README.md says where each comes from) and on
//! hostile ones: the rendition's structure, the parser and chunk invariants, and provenance that
//! points at the bytes of the file holding each chunk's words.

#![allow(clippy::unwrap_used)]

mod invariants;

use invariants::{chunk_and_check, cl100k, ctx};
use proptest::prelude::*;
use rag_chunker::{DocumentType, HtmlParser, parse_document};
use rag_core::{BlockType, Chunk, CorpusId, DocumentId, Origin, ParseError, ParsedDocument, Parser, SourceBytes};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/html");

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(format!("{FIXTURES}/{name}")).unwrap()
}

fn parse_with(parser: &dyn Parser, bytes: &[u8]) -> Result<ParsedDocument, ParseError> {
    let (id, corpus) = (DocumentId::from("page"), CorpusId::from("corpus"));
    parser.parse(
        &ctx(),
        SourceBytes {
            document_id: &id,
            corpus_id: &corpus,
            source_uri: "page.html",
            bytes,
        },
    )
}

fn parse(bytes: &[u8]) -> ParsedDocument {
    parse_with(DocumentType::Html.parser(), bytes).unwrap()
}

/// The text of `bytes` of the page, decoded as `encoding`, with the character references a page
/// writes decoded, so its words compare with the rendition's.
fn source_text(bytes: &[u8], encoding: &'static encoding_rs::Encoding) -> String {
    let (text, _) = encoding.decode_without_bom_handling(bytes);
    let mut out = String::with_capacity(text.len());
    let mut rest: &str = &text;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        let end = tail.find(';').filter(|&e| e <= 10);
        let decoded = end.and_then(|e| {
            let name = &tail[1..e];
            let code = if let Some(hex) = name.strip_prefix("#x").or_else(|| name.strip_prefix("#X")) {
                u32::from_str_radix(hex, 16).ok()
            } else if let Some(dec) = name.strip_prefix('#') {
                dec.parse().ok()
            } else {
                match name {
                    "amp" => Some(38),
                    "lt" => Some(60),
                    "gt" => Some(62),
                    "quot" => Some(34),
                    "apos" => Some(39),
                    "nbsp" => Some(160),
                    _ => None,
                }
            };
            code.and_then(char::from_u32).map(|c| (c, e + 1))
        });
        match decoded {
            Some((c, len)) => {
                out.push(c);
                rest = &tail[len..];
            }
            None => {
                out.push('&');
                rest = &tail[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty())
}

/// Every chunk names byte ranges of the file, and those bytes hold every word of the chunk that
/// comes from the page (the rendition's own words, list numbers and fence languages, come from no
/// place).
fn provenance_holds_the_words(
    bytes: &[u8],
    parsed: &ParsedDocument,
    chunks: &[Chunk],
    encoding: &'static encoding_rs::Encoding,
) {
    let text = &parsed.document.text;
    let rendition = parsed.rendition.as_ref().unwrap();
    for chunk in chunks {
        let span = chunk.span.unwrap();
        let content = chunk.content().unwrap();
        assert!(
            !chunk.provenance.is_empty(),
            "chunk {} has no provenance: {content:?}",
            chunk.id
        );
        let mut original = String::new();
        for origin in &chunk.provenance {
            let Origin::Bytes { start, end } = *origin else {
                panic!("chunk {}: {origin:?} is not a byte range", chunk.id)
            };
            assert!(start < end && end <= bytes.len(), "chunk {}: {start}..{end}", chunk.id);
            original.push_str(&source_text(&bytes[start..end], encoding));
            original.push(' ');
        }
        let mut checked = 0;
        for mapped in rendition
            .source_map
            .iter()
            .filter(|m| m.span.start < span.end && span.start < m.span.end)
        {
            let stretch = &text[mapped.span.start.max(span.start)..mapped.span.end.min(span.end)];
            for word in words(stretch) {
                assert!(
                    original.contains(word),
                    "chunk {}: {word:?} is not in its bytes {original:?}",
                    chunk.id
                );
                checked += 1;
            }
        }
        // Nearly all of a chunk's words come from the page.
        assert!(
            checked * 10 >= words(content).count() * 8,
            "chunk {}: {checked} words of {content:?} mapped",
            chunk.id
        );
    }
    // The source map is in text order, inside the text, and never names bytes past the file.
    assert_eq!(rendition.format, "html");
    assert_eq!(rendition.original_bytes, Some(bytes.len()));
    let mut previous_end = 0;
    for mapped in &rendition.source_map {
        assert!(mapped.span.start >= previous_end && mapped.span.end <= text.len());
        previous_end = mapped.span.end;
    }
}

/// Every non-whitespace character of the rendition is in some chunk.
fn nothing_lost(parsed: &ParsedDocument, chunks: &[Chunk]) {
    let text = &parsed.document.text;
    let mut covered = vec![false; text.len()];
    for chunk in chunks {
        covered[chunk.span.unwrap().range()].fill(true);
    }
    for (at, c) in text.char_indices() {
        assert!(c.is_whitespace() || covered[at], "{c:?} at {at} is in no chunk");
    }
}

/// Parses a fixture and checks every promise at two chunk sizes.
fn check_fixture(name: &str, encoding: &'static encoding_rs::Encoding) -> ParsedDocument {
    let bytes = fixture(name);
    let parsed = parse(&bytes);
    for max in [48, 512] {
        let chunks = chunk_and_check(&parsed, max, max / 8, cl100k());
        nothing_lost(&parsed, &chunks);
        provenance_holds_the_words(&bytes, &parsed, &chunks, encoding);
    }
    let rendition = parsed.rendition.as_ref().unwrap();
    // The bytes the source map names, each once (neighbouring text nodes may share a byte).
    let mut ranges: Vec<(usize, usize)> = rendition
        .source_map
        .iter()
        .filter_map(|m| match m.origin {
            Origin::Bytes { start, end } => Some((start, end)),
            _ => None,
        })
        .collect();
    ranges.sort();
    let (mut mapped, mut covered) = (0, 0);
    for (start, end) in ranges {
        mapped += end.saturating_sub(start.max(covered));
        covered = covered.max(end);
    }
    // Every byte of the file is text the rendition holds or counted as left out (invalid bytes
    // are counted apart: they sit inside text).
    let invalid = rendition.left_out.get("invalid").copied().unwrap_or(0);
    assert!(mapped <= bytes.len());
    assert_eq!(mapped + rendition.left_out_bytes() - invalid, bytes.len(), "{name}");
    parsed
}

fn texts_of(parsed: &ParsedDocument, block_type: BlockType) -> Vec<&str> {
    parsed
        .blocks
        .iter()
        .filter(|b| b.block_type == block_type)
        .map(|b| &parsed.document.text[b.span.range()])
        .collect()
}

#[test]
fn a_docutils_page_keeps_its_structure_and_leaves_the_chrome_out() {
    let parsed = check_fixture("docutils-guide.html", encoding_rs::UTF_8);
    let text = &parsed.document.text;
    assert_eq!(
        texts_of(&parsed, BlockType::Heading),
        ["# Widget Service Guide", "## Installing", "## Configuring"]
    );
    assert!(
        text.contains("Prices are in € and \"quotes\" & <brackets> survive."),
        "{text}"
    );
    assert!(text.contains("1. Download the package.\n2. Run the installer:\n  - on Linux, as root;"));
    assert_eq!(
        texts_of(&parsed, BlockType::TableRow),
        [
            "| Option | Default | Meaning |\n| --- | --- | --- |",
            "| port | 8080 | TCP port to listen |",
            "| limit | 100 | requests per second |"
        ]
    );
    let code = texts_of(&parsed, BlockType::Code);
    assert_eq!(code.len(), 1);
    assert!(code[0].starts_with("```python\nimport widgets\n") && code[0].ends_with("# a < b && c > d\n```"));
    assert_eq!(
        texts_of(&parsed, BlockType::Quote),
        ["> A quoted paragraph about widgets that were made by hand."]
    );
    assert_eq!(
        texts_of(&parsed, BlockType::Caption),
        ["The request flow through the widget service."]
    );
    // The table of contents is a `nav` inside `main`: chrome. The stylesheet is a style.
    assert!(!text.contains("On this page"));
    let left_out = &parsed.rendition.as_ref().unwrap().left_out;
    assert!(left_out["style"] > 10_000, "{left_out:?}");
    assert!(
        left_out["chrome"] >= "On this pageInstallingConfiguring".len(),
        "{left_out:?}"
    );
}

#[test]
fn a_node_api_page_loses_its_sidebar_and_tables_of_contents() {
    let parsed = check_fixture("node-string_decoder.html", encoding_rs::UTF_8);
    let text = &parsed.document.text;
    assert!(
        text.starts_with("__JS_FLAVORED_DYNAMIC_CSS__\n\n## String decoder"),
        "{}",
        &text[..200]
    );
    for chrome in [
        "About this documentation",
        "Table of contents",
        "Node.js v18.20.4 documentation",
        "Index",
    ] {
        assert!(!text.contains(chrome), "{chrome:?} is chrome");
    }
    // The permalink `#` of each heading is chrome too: titles are the heading's words.
    let titles: Vec<&str> = parsed
        .blocks
        .iter()
        .filter_map(|b| b.text.as_deref().filter(|_| b.block_type == BlockType::Heading))
        .collect();
    assert!(titles.contains(&"Class: StringDecoder"), "{titles:?}");
    assert!(titles.iter().all(|t| !t.ends_with('#')), "{titles:?}");
    assert!(
        text.contains("```js\nconst { StringDecoder } = require('node:string_decoder');\n```"),
        "{text}"
    );
    assert!(text.contains("> Stability: 2 - Stable"));
    assert!(parsed.rendition.as_ref().unwrap().left_out["chrome"] > 2_000);
}

#[test]
fn an_asciidoc_page_keeps_its_title_and_drops_its_footer() {
    let parsed = check_fixture("git-mv.html", encoding_rs::UTF_8);
    let headings = texts_of(&parsed, BlockType::Heading);
    assert_eq!(&headings[..3], ["# git-mv(1) Manual Page", "## NAME", "## SYNOPSIS"]);
    assert!(!parsed.document.text.contains("Last updated"));
    assert!(texts_of(&parsed, BlockType::Code)[0].starts_with("```\ngit mv "));
}

#[test]
fn a_windows_1252_page_renders_as_its_utf8_original_with_offsets_into_its_own_bytes() {
    let utf8 = parse(&fixture("node-string_decoder.html"));
    let bytes = fixture("node-string_decoder-windows-1252.html");
    let legacy = check_fixture("node-string_decoder-windows-1252.html", encoding_rs::WINDOWS_1252);
    assert_eq!(legacy.document.text, utf8.document.text);
    assert_eq!(legacy.blocks, utf8.blocks);
    // "€" is three bytes in UTF-8 and one (0x80) in windows-1252: the origins differ by the
    // characters before them, and each names the bytes of its own file.
    let at = legacy.document.text.find('€').unwrap();
    let block = legacy.blocks.iter().find(|b| b.span.range().contains(&at)).unwrap();
    let [Origin::Bytes { start, end }] = legacy.provenance(block.span)[..] else {
        panic!()
    };
    assert!(bytes[start..end].contains(&0x80));
    assert!(!legacy.rendition.as_ref().unwrap().left_out.contains_key("invalid"));
}

#[test]
fn a_shift_jis_page_is_decoded() {
    let parsed = check_fixture("node-querystring-shift_jis.html", encoding_rs::SHIFT_JIS);
    assert!(parsed.document.text.contains("中文"));
}

#[test]
fn keeping_chrome_keeps_the_sidebar() {
    let bytes = fixture("node-string_decoder.html");
    let kept = parse_with(&HtmlParser::new().keep_chrome(true), &bytes).unwrap();
    assert!(kept.document.text.contains("About this documentation"));
    assert!(!kept.rendition.as_ref().unwrap().left_out.contains_key("chrome"));
    // Scripts, styles and comments stay out either way.
    assert!(!kept.document.text.contains("introduced_in"));
}

#[test]
fn hostile_pages_are_a_clear_error_or_a_correct_result() {
    // Nesting past the limit is an error naming it, at once, whatever the tags.
    for tag in ["div", "b", "span", "ul", "blockquote", "section"] {
        let deep = format!("<{tag}>").repeat(rag_chunker::MAX_HTML_DEPTH * 2);
        let err = parse_with(DocumentType::Html.parser(), deep.as_bytes()).unwrap_err();
        assert!(matches!(err, ParseError::LimitExceeded { .. }), "{tag}: {err}");
    }
    // Nesting below it, and deep lists and quotes, render with bounded line prefixes.
    let lists = "<ul><li>x".repeat(200);
    let parsed = parse(lists.as_bytes());
    assert!(
        parsed.document.text.lines().all(|line| line.len() < 64),
        "prefixes grow without bound"
    );
    chunk_and_check(&parsed, 64, 8, cl100k());
    // A page over the size limit is refused before any work.
    let big = vec![b' '; rag_chunker::MAX_HTML_BYTES + 1];
    let err = parse_with(DocumentType::Html.parser(), &big).unwrap_err();
    assert!(err.to_string().contains("64 MiB"), "{err}");
    // Malformed markup, entities defined in a doctype (never expanded), CDATA outside foreign
    // content, NUL bytes, unterminated comments and scripts, invalid UTF-8: a result, no panic.
    for page in [
        &b"<!DOCTYPE x [<!ENTITY a \"aaaaaaaaaa\">]><p>&a;&a;&a;</p>"[..],
        b"<p>one<p>two</b></i></p></p><table>lost<tr><td>cell</table>after",
        b"<![CDATA[ data ]]><p>x\0y</p><!-- never closed",
        b"<p>text</p><script>while (1) { }",
        b"<p>bad \xff\xfe\xfd bytes &notanentity; &#xFFFFFF; &#0;</p>",
        b"\xfe\xff\x00<\x00p\x00>\x00h\x00i",
        b"",
        b"   \n\t ",
    ] {
        let parsed = parse(page);
        chunk_and_check(&parsed, 16, 2, cl100k());
    }
    let parsed = parse(b"<!DOCTYPE x [<!ENTITY a \"aaaaaaaaaa\">]><p>&a;&a;&a;</p>");
    assert!(parsed.document.text.contains("&a;&a;&a;"), "{}", parsed.document.text);
    // Floods the tokenizer emits a character or two at a time: one text node, one stretch of
    // the source map, however many pieces (each piece kept its own range, 28 times the page).
    for (unit, text) in [("a;", "a;"), ("<", "<"), ("&a", "&a")] {
        let page = unit.repeat(10_000);
        let parsed = parse(page.as_bytes());
        assert_eq!(parsed.document.text, text.repeat(10_000), "{unit}");
        assert_eq!(mapped_bytes(&parsed, page.as_bytes()), [page.as_bytes()], "{unit}");
    }
    // Every later `<body>` tag adds its attributes to the first: in time linear in their number.
    let bodies: String = (0..5_000).map(|i| format!("<body a{i}>")).collect();
    assert_eq!(parse(format!("<p>text</p>{bodies}").as_bytes()).document.text, "text");
}

#[test]
fn the_html_type_reads_html_files_and_stdin_names() {
    assert_eq!(DocumentType::from_path("site/Index.HTM"), Some(DocumentType::Html));
    assert_eq!("html".parse::<DocumentType>(), Ok(DocumentType::Html));
    let (id, corpus) = (DocumentId::from("d"), CorpusId::from("c"));
    let parsed = parse_document(
        &ctx(),
        DocumentType::Html,
        SourceBytes {
            document_id: &id,
            corpus_id: &corpus,
            source_uri: "-",
            bytes: b"<h1>T</h1>",
        },
    )
    .unwrap();
    assert_eq!(parsed.document.text, "# T");
}

/// Random pages made of tags, text and references: parsing never fails or panics, and the
/// parser and chunk promises hold.
fn html_piece() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "<p>",
            "</p>",
            "<div>",
            "</div>",
            "<h2>",
            "</h2>",
            "<ul>",
            "<li>",
            "</ul>",
            "<ol>",
            "<table>",
            "<tr>",
            "<td>",
            "<th>",
            "</table>",
            "<pre>",
            "</pre>",
            "<code>",
            "</code>",
            "<b>",
            "</b>",
            "<blockquote>",
            "</blockquote>",
            "<br>",
            "<nav>",
            "</nav>",
            "<main>",
            "<script>",
            "</script>",
            "<!--",
            "-->",
            "&amp;",
            "&lt;",
            "&#x41;",
            "&",
            ";",
            "<",
            ">",
            "\n",
            "  ",
            "|",
            "`",
            "#",
            "> ",
            "- ",
        ])
        .prop_map(str::to_owned),
        "[a-zé中 ]{1,12}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn any_page_keeps_the_promises(pieces in prop::collection::vec(html_piece(), 0..60)) {
        let page = pieces.concat();
        let parsed = parse(page.as_bytes());
        let chunks = chunk_and_check(&parsed, 24, 4, cl100k());
        nothing_lost(&parsed, &chunks);
        for chunk in &chunks {
            // Every chunk with a word names a place of the page; every place is inside it.
            for origin in &chunk.provenance {
                let Origin::Bytes { start, end } = *origin else { panic!() };
                prop_assert!(start <= end && end <= page.len());
            }
        }
    }
}

/// The bytes of the page each source-map stretch names.
fn mapped_bytes<'b>(parsed: &ParsedDocument, bytes: &'b [u8]) -> Vec<&'b [u8]> {
    parsed
        .rendition
        .as_ref()
        .unwrap()
        .source_map
        .iter()
        .map(|m| match m.origin {
            Origin::Bytes { start, end } => &bytes[start..end],
            _ => panic!("{:?} is not a byte range", m.origin),
        })
        .collect()
}

#[test]
fn a_reference_that_ends_a_text_maps_to_the_reference_not_the_tag_after_it() {
    // The tokenizer finishes a named reference, or a `&` or `<` that opens nothing, only when it
    // sees the next character: here, the `<` of the tag that follows.
    for (page, text) in [
        ("<p>a &gt;</p>", "a &gt;"),
        ("<p>a &gt</p>", "a &gt"),
        ("<p>&copy;</p><p>b</p>", "&copy;"),
        ("<p>x &amp;<b>y</b></p>", "x &amp;"),
        ("<p>x &#65</p>", "x &#65"),
        ("<p>x &</p>", "x &"),
        ("<p>x &gt;&amp;</p>", "x &gt;&amp;"),
    ] {
        let parsed = parse(page.as_bytes());
        let first = mapped_bytes(&parsed, page.as_bytes())[0];
        assert_eq!(String::from_utf8_lossy(first), text, "{page}");
    }
}

/// One piece of the inline content of a paragraph: a word, a space, a character reference
/// (named with and without its semicolon, numeric, bogus, a lone `&` or `<`), a line break, or
/// bold text.
fn inline_piece() -> impl Strategy<Value = (String, bool)> {
    let text = prop_oneof![
        "[a-z]{1,5}",
        Just(" ".to_owned()),
        prop::sample::select(vec![
            "&amp;", "&gt;", "&lt;", "&copy;", "&copy", "&amp", "&gt", "&notit;", "&not", "&#x41;", "&#65;", "&#65",
            "&bogus;", "&", "& ", "< ", "&;",
        ])
        .prop_map(str::to_owned),
    ];
    prop_oneof![
        4 => text.prop_map(|t| (t, false)),
        1 => Just(("<br>".to_owned(), true)),
        1 => "[a-z]{1,4}".prop_map(|t| (format!("<b>{t}</b>"), true)),
        1 => prop::sample::select(vec!["&gt;", "&copy", "&#65", "x&amp;"]).prop_map(|t| (format!("<i>{t}</i>"), true)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    /// Paragraphs of words and character references anywhere: every stretch of the source map
    /// names bytes of text, never the `<` or `>` of a tag.
    #[test]
    fn references_anywhere_map_inside_their_text(
        paragraphs in prop::collection::vec(prop::collection::vec(inline_piece(), 1..12), 1..5),
    ) {
        let mut page = String::new();
        // Whether each byte of the page belongs to a tag.
        let mut in_tag: Vec<bool> = Vec::new();
        let mut push = |page: &mut String, piece: &str, markup: bool| {
            let start = page.len();
            page.push_str(piece);
            in_tag.resize(page.len(), false);
            if markup {
                // Inside `<b>..</b>`, only the tags are markup.
                let mut tag = false;
                for (i, byte) in piece.bytes().enumerate() {
                    if byte == b'<' {
                        tag = true;
                    }
                    in_tag[start + i] = tag;
                    if byte == b'>' {
                        tag = false;
                    }
                }
            }
        };
        for paragraph in &paragraphs {
            push(&mut page, "<p>", true);
            for (piece, markup) in paragraph {
                push(&mut page, piece, *markup);
            }
            push(&mut page, "</p>", true);
        }
        let parsed = parse(page.as_bytes());
        for mapped in &parsed.rendition.as_ref().unwrap().source_map {
            let Origin::Bytes { start, end } = mapped.origin else { panic!() };
            let text = &parsed.document.text[mapped.span.range()];
            prop_assert!(
                !in_tag[start..end].contains(&true),
                "{text:?} maps to {:?} of {page:?}",
                &page[start..end]
            );
        }
        chunk_and_check(&parsed, 16, 2, cl100k());
    }
}

/// A page of one `div` with `n` attributes, `a0=x a1=x ...`.
fn tag_of(n: usize) -> String {
    let names: Vec<String> = (0..n).map(|i| format!("a{i}=x")).collect();
    format!("<div {}>text</div>", names.join(" "))
}

#[test]
fn a_page_whose_attributes_would_take_quadratic_time_is_refused_before_it_is_parsed() {
    // The tokenizer compares each attribute with the tag's earlier ones: doubling a tag's
    // attributes quadruples the work, and past the page's allowance the page is refused.
    let comparisons = |n: usize| (n * (n - 1) / 2) as u64;
    let allowance = |page: &str| {
        rag_chunker::MAX_HTML_ATTRIBUTE_COMPARISONS
            + rag_chunker::HTML_ATTRIBUTE_COMPARISONS_PER_BYTE * page.len() as u64
    };
    let within = tag_of(3200);
    assert!(comparisons(3200) <= allowance(&within));
    assert_eq!(parse(within.as_bytes()).document.text, "text");
    let over = tag_of(6400);
    assert!(comparisons(6400) > allowance(&over));
    let err = parse_with(DocumentType::Html.parser(), over.as_bytes()).unwrap_err();
    assert!(matches!(err, ParseError::LimitExceeded { .. }), "{err}");
    assert!(
        err.to_string()
            .starts_with("page.html: the work of checking attribute names for duplicates (the tag at byte 0 has"),
        "{err}"
    );
    // 200,000 attributes (a 2 MB page, 10 to 16 s of the tokenizer's time) are refused after the
    // first few thousand: the check stops where the allowance runs out.
    let err = parse_with(DocumentType::Html.parser(), tag_of(200_000).as_bytes()).unwrap_err();
    assert!(matches!(err, ParseError::LimitExceeded { .. }), "{err}");
    // Many tags of ordinary size cost nothing against the allowance.
    let page = "<p class=a id=b title=c lang=d dir=e data-x=f>x</p>".repeat(2_000);
    assert!(parse(page.as_bytes()).document.text.starts_with("x\n\nx"));
}

fn left_out(parsed: &ParsedDocument) -> &std::collections::BTreeMap<String, usize> {
    &parsed.rendition.as_ref().unwrap().left_out
}

#[test]
fn text_the_page_hides_is_left_out_as_hidden_unless_kept() {
    let hidden = [
        "<p hidden>attribute</p>",
        "<p aria-hidden=\"true\">aria</p>",
        "<p style=\"display:none\">display</p>",
        "<p style=\"visibility:hidden\">visibility</p>",
        "<div style=\"DISPLAY : NONE !important\"><p>upper</p><ul><li>case</li></ul></div>",
        "<span style=\"color:red; visibility: collapse\">collapse</span>",
        "<p style=\"display:/**/n\\6f ne\">escaped</p>",
    ];
    let page = format!("<p>Shown.</p>{}<p>Also shown.</p>", hidden.concat());
    let parsed = parse(page.as_bytes());
    assert_eq!(parsed.document.text, "Shown.\n\nAlso shown.");
    let words = [
        "attribute",
        "aria",
        "display",
        "visibility",
        "upper",
        "case",
        "collapse",
        "escaped",
    ];
    assert_eq!(
        left_out(&parsed)["hidden"],
        words.iter().map(|w| w.len()).sum::<usize>()
    );
    // The page's bytes still add up: text, hidden, markup.
    let rendition = parsed.rendition.as_ref().unwrap();
    let mapped: usize = mapped_bytes(&parsed, page.as_bytes()).iter().map(|b| b.len()).sum();
    assert_eq!(mapped + rendition.left_out_bytes(), page.len());
    chunk_and_check(&parsed, 16, 2, cl100k());

    let kept = parse_with(&HtmlParser::new().keep_hidden(true), page.as_bytes()).unwrap();
    for word in words {
        assert!(kept.document.text.contains(word), "{word}: {}", kept.document.text);
    }
    assert!(!left_out(&kept).contains_key("hidden"));
    // Keeping hidden text keeps chrome out, and keeping chrome keeps hidden text out.
    let nav = format!("<nav>Menu</nav>{page}");
    let both = HtmlParser::new().keep_hidden(true);
    assert!(
        !parse_with(&both, nav.as_bytes())
            .unwrap()
            .document
            .text
            .contains("Menu")
    );
    let chrome = parse_with(&HtmlParser::new().keep_chrome(true), nav.as_bytes()).unwrap();
    assert!(chrome.document.text.contains("Menu") && !chrome.document.text.contains("aria"));
}

#[test]
fn an_element_inside_a_hidden_one_can_be_made_visible_again() {
    // `visibility` is inherited and a descendant may override it (`display: none` cannot be).
    let page = "<div style='visibility:hidden'>secret <span style='visibility:visible'>shown</span> \
        <p>also secret</p></div><div style='display:none'><p style='visibility:visible'>gone</p></div>";
    let parsed = parse(page.as_bytes());
    assert_eq!(parsed.document.text, "shown");
    assert_eq!(
        left_out(&parsed)["hidden"],
        "secret ".len() + " ".len() + "also secret".len() + "gone".len()
    );
}

#[test]
fn stylesheets_are_not_read_so_a_class_that_hides_is_not_seen() {
    // Documented: only inline styles are read.
    let parsed = parse(b"<style>.x { display: none }</style><p class=x>kept</p>");
    assert_eq!(parsed.document.text, "kept");
}
