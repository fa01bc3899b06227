//! The parsers and the OCR adapter through the public API: UTF-8 handling, type detection,
//! the OCR JSON format and its errors.

#![allow(clippy::unwrap_used)]

mod invariants;

use invariants::{check_blocks, chunk_and_check, cl100k, ctx, parse};
use rag_chunker::{
    DocumentType, MarkdownParser, OcrJsonParser, OcrRegion, OcrResult, PlainTextParser, ocr_result_to_parsed_document,
    parse_document, parse_document_owned,
};
use rag_core::{BlockType, CorpusId, DocumentId, ParseError, Parser, SourceBytes};
use serde_json::json;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

fn parse_bytes(parser: &dyn Parser, source_uri: &str, bytes: &[u8]) -> Result<rag_core::ParsedDocument, ParseError> {
    let (id, corpus) = (DocumentId::from("doc"), CorpusId::from("corpus"));
    parser.parse(
        &ctx(),
        SourceBytes {
            document_id: &id,
            corpus_id: &corpus,
            source_uri,
            bytes,
        },
    )
}

#[test]
fn invalid_utf8_is_an_error_with_the_offset_in_the_file_as_read() {
    let mut bytes = "\u{feff}# Ok\n\nbad: ".as_bytes().to_vec();
    let offset = bytes.len();
    bytes.extend_from_slice(&[0xff, 0xfe, b'x']);
    for parser in [&MarkdownParser as &dyn Parser, &PlainTextParser, &OcrJsonParser] {
        let err = parse_bytes(parser, "docs/bad.md", &bytes).unwrap_err();
        assert!(matches!(err, ParseError::InvalidUtf8 { offset: o, .. } if o == offset));
        assert_eq!(
            err.to_string(),
            format!("docs/bad.md: invalid UTF-8 at byte offset {offset}")
        );
    }
    // A truncated multi-byte character at the very end.
    let err = parse_bytes(&MarkdownParser, "t.md", &[b'a', 0xe6, 0x97]).unwrap_err();
    assert_eq!(err.to_string(), "t.md: invalid UTF-8 at byte offset 1");
}

#[test]
fn unknown_extensions_are_an_error_listing_the_supported_types() {
    let err = DocumentType::detect("slides/deck.pptx").unwrap_err();
    assert_eq!(
        err.to_string(),
        "slides/deck.pptx: unsupported file type \"pptx\"; supported: markdown (.md, .markdown), \
         text (.txt, .text), ocr (.ocr.json), html (.html, .htm, .xhtml), docx (.docx), pdf (.pdf), \
         python (.py, .pyi), rust (.rs), javascript (.js, .mjs, .cjs, .jsx), typescript (.ts, .mts, .cts), \
         tsx (.tsx), go (.go), java (.java), c (.c, .h), cpp (.cc, .cpp, .cxx, .hpp, .hh, .hxx)"
    );
    let err = DocumentType::detect("Makefile").unwrap_err();
    assert!(
        matches!(err, ParseError::UnsupportedType { ref kind, .. } if kind.is_empty()),
        "{err:?}"
    );
    assert_eq!(
        DocumentType::detect("a/b/Notes.MARKDOWN").unwrap(),
        DocumentType::Markdown
    );
    assert_eq!(DocumentType::detect("scan.OCR.json").unwrap(), DocumentType::Ocr);
    assert_eq!(DocumentType::detect("papers/Report.PDF").unwrap(), DocumentType::Pdf);
    assert_eq!(
        DocumentType::ALL.map(|t| t.as_str()),
        [
            "markdown",
            "text",
            "ocr",
            "html",
            "docx",
            "pdf",
            "python",
            "rust",
            "javascript",
            "typescript",
            "tsx",
            "go",
            "java",
            "c",
            "cpp"
        ]
    );
}

#[test]
fn parse_document_dispatches_on_the_type() {
    let (id, corpus) = (DocumentId::from("d"), CorpusId::from("c"));
    let source = SourceBytes {
        document_id: &id,
        corpus_id: &corpus,
        source_uri: "x",
        bytes: b"# not a heading in text\n\nsecond",
    };
    let as_text = parse_document(&ctx(), DocumentType::Text, source).unwrap();
    assert!(as_text.blocks.iter().all(|b| b.block_type == BlockType::Paragraph));
    let as_md = parse_document(&ctx(), DocumentType::Markdown, source).unwrap();
    assert_eq!(as_md.blocks[0].block_type, BlockType::Heading);
    assert_eq!(as_md.document.id.as_str(), "d");
    assert_eq!(as_md.document.corpus_id.as_str(), "c");
    assert_eq!(as_md.document.source_uri, "x");
}

#[test]
fn plain_text_paragraphs_split_on_blank_and_space_only_lines() {
    let parsed = parse(
        DocumentType::Text,
        "notes.txt",
        &std::fs::read(format!("{FIXTURES}/notes.txt")).unwrap(),
    );
    let texts: Vec<&str> = parsed.blocks.iter().filter_map(|b| parsed.block_text(b)).collect();
    assert_eq!(
        texts,
        [
            "Plain text notes, first paragraph.\nIt spans two lines.",
            "Second paragraph after a blank line.",
            "Third paragraph after a line holding only spaces."
        ]
    );
}

#[test]
fn ocr_files_become_one_paragraph_block_per_region() {
    let bytes = std::fs::read(format!("{FIXTURES}/scan.ocr.json")).unwrap();
    let parsed = parse_bytes(&OcrJsonParser, "scan.ocr.json", &bytes).unwrap();
    check_blocks(&parsed);
    assert_eq!(
        parsed.document.text,
        "INVOICE 2024-117\n\nTotal due: 1,250.00 EUR within 30 days.\n\nThank you for your business."
    );
    assert_eq!(parsed.blocks.len(), 3);
    assert!(parsed.blocks.iter().all(|b| b.block_type == BlockType::Paragraph));
    assert_eq!(
        serde_json::Value::Object(parsed.blocks[1].attributes.clone()),
        json!({"engine": "tesseract-5", "ocr_confidence": 0.91, "bbox": [12.0, 60.0, 400.0, 84.0], "page": 1})
    );
    assert!(parsed.blocks[2].attributes.get("page").is_none());
    assert_eq!(
        parsed.source_of(&parsed.blocks[2]),
        Some("Thank you for your business.")
    );
    let chunks = chunk_and_check(&parsed, 8, 2, cl100k());
    assert!(chunks.iter().all(|c| c.parent_id.is_none()));

    // A byte-order mark before the JSON is fine.
    let mut with_bom = "\u{feff}".as_bytes().to_vec();
    with_bom.extend_from_slice(&bytes);
    assert_eq!(parse_bytes(&OcrJsonParser, "scan.ocr.json", &with_bom).unwrap(), parsed);
}

#[test]
fn malformed_ocr_json_is_an_error_with_line_and_column() {
    let cases: [(&[u8], &str); 3] = [
        (
            b"{\"engine\": \"e\",\n  \"regions\": [\n    {\"text\": \"x\", \"confidence\": 1, \"bbox\": [1, 2, 3]}\n  ]\n}",
            "s.ocr.json:3:",
        ),
        (b"{\"engine\": \"e\"}", "s.ocr.json:1:15: not an OCR result: missing field `regions`"),
        (b"not json", "s.ocr.json:1:2: not an OCR result: expected ident"),
    ];
    for (bytes, expected) in cases {
        let err = parse_bytes(&OcrJsonParser, "s.ocr.json", bytes).unwrap_err();
        assert!(matches!(
            err,
            ParseError::Malformed {
                line: Some(_),
                column: Some(_),
                ..
            }
        ));
        assert!(err.to_string().starts_with(expected), "{err}");
        assert!(!err.to_string().contains(" at line "), "{err}");
    }
}

#[test]
fn the_ocr_adapter_keeps_region_indices_and_whitespace_regions() {
    let ocr = OcrResult {
        engine: "paddle".into(),
        regions: vec![
            OcrRegion {
                text: "Première région — naïve café".into(),
                confidence: 0.5,
                bbox: [0.0, 0.0, 1.0, 1.0],
                page: Some(3),
            },
            OcrRegion {
                text: "   ".into(),
                confidence: 0.1,
                bbox: [0.0, 1.0, 1.0, 2.0],
                page: None,
            },
            OcrRegion {
                text: "二番目の領域".into(),
                confidence: f64::NAN,
                bbox: [0.0, 2.0, 1.0, 3.0],
                page: Some(3),
            },
        ],
    };
    let parsed = ocr_result_to_parsed_document(&ctx(), &ocr, "scan".into(), "c".into(), "s3://b/scan.png");
    assert_eq!(parsed.blocks.len(), 3);
    for (block, region) in parsed.blocks.iter().zip(&ocr.regions) {
        assert_eq!(parsed.source_of(block), Some(region.text.as_str()));
        assert_eq!(parsed.block_text(block), Some(region.text.as_str()));
    }
    assert_eq!(parsed.blocks[2].attributes["ocr_confidence"], serde_json::Value::Null);
    assert_eq!(parsed.document.source_uri, "s3://b/scan.png");
    let chunks = chunk_and_check(&parsed, 64, 8, cl100k());
    assert_eq!(chunks.len(), 1, "both texts fit one chunk, the blank region is dropped");
    assert_eq!(
        chunks[0].content(),
        Some("Première région — naïve café\n\n   \n\n二番目の領域")
    );
    // The chunk names page 3 once, with the box around both of its regions and the lower of the
    // confidences that are numbers; the region without a page names no place.
    assert_eq!(
        chunks[0].provenance,
        [rag_core::Origin::Page {
            page: 3,
            bbox: Some([0.0, 0.0, 1.0, 3.0]),
            confidence: Some(0.5)
        }]
    );
    let line = serde_json::to_value(&chunks[0]).unwrap();
    assert_eq!(
        line["provenance"],
        json!([{"kind": "page", "page": 3, "bbox": [0.0, 0.0, 1.0, 3.0], "confidence": 0.5}])
    );

    let round_trip: OcrResult = serde_json::from_str(
        &serde_json::to_string(&ocr.regions[..1])
            .map(|r| format!("{{\"engine\":\"paddle\",\"regions\":{r}}}"))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(round_trip.regions[0], ocr.regions[0]);
}

#[test]
fn no_input_makes_a_parser_panic() {
    let nasty: Vec<String> = vec![
        String::new(),
        "\u{feff}".into(),
        ">".repeat(1000) + " deep",
        // 300 levels: deeper lists are mostly indentation, and the parser unit test covers 1000.
        (0..300).map(|i| format!("{}- x\n", " ".repeat(i * 2))).collect(),
        "```\nnever closed\n# not a heading".into(),
        "| a |\n|---|\n| b | c | d |\n|".into(),
        "\u{0}\u{1}\u{7f}\u{200b}\u{feff}\u{fffd}".repeat(100),
        "[^x]: \n[^x]: dup\n[a]: <>\n***\n---\n+++\n".into(),
        "---\nunterminated: front matter\n".into(),
        "\r\r\r# \r=\r-\r".into(),
        "#\n##\n######\n####### seven".into(),
    ];
    for text in &nasty {
        for ty in DocumentType::ALL {
            let parsed = match parse_document(
                &ctx(),
                ty,
                SourceBytes {
                    document_id: &"d".into(),
                    corpus_id: &"c".into(),
                    source_uri: "n",
                    bytes: text.as_bytes(),
                },
            ) {
                Ok(parsed) => parsed,
                // Text is no OCR JSON, no zip archive and no PDF: those parsers refuse it with an
                // error.
                Err(_) if matches!(ty, DocumentType::Ocr | DocumentType::Docx) => continue,
                Err(ParseError::Malformed { .. }) if ty == DocumentType::Pdf => continue,
                // A format whose feature this build leaves out (`cargo test -p rag-chunker`).
                Err(ParseError::NotBuilt { .. }) => continue,
                Err(err) => panic!("{ty}: {err}"),
            };
            check_blocks(&parsed);
            if matches!(ty, DocumentType::Code(_)) {
                invariants::check_code(&parsed, 16);
            } else if ty != DocumentType::Ocr {
                chunk_and_check(&parsed, 16, 4, cl100k());
            }
        }
    }
}

#[test]
fn parsing_owned_bytes_gives_the_same_document_and_errors() {
    let (id, corpus) = (DocumentId::from("doc"), CorpusId::from("corpus"));
    let mut invalid = b"# Ok\n\nbad: ".to_vec();
    invalid.extend_from_slice(&[0xff, b'x']);
    let cases = [
        (
            DocumentType::Markdown,
            std::fs::read(format!("{FIXTURES}/all_blocks.md")).unwrap(),
        ),
        (
            DocumentType::Markdown,
            std::fs::read(format!("{FIXTURES}/bom.md")).unwrap(),
        ),
        (
            DocumentType::Text,
            std::fs::read(format!("{FIXTURES}/notes.txt")).unwrap(),
        ),
        (
            DocumentType::Ocr,
            std::fs::read(format!("{FIXTURES}/scan.ocr.json")).unwrap(),
        ),
        (DocumentType::Markdown, invalid.clone()),
        (DocumentType::Text, invalid),
    ];
    for (doc_type, bytes) in cases {
        let source = |bytes| SourceBytes {
            document_id: &id,
            corpus_id: &corpus,
            source_uri: "in",
            bytes,
        };
        let borrowed = parse_document(&ctx(), doc_type, source(&bytes));
        let owned = parse_document_owned(&ctx(), doc_type, source(&[]), bytes.clone());
        match (borrowed, owned) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "{doc_type}"),
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{doc_type}"),
            (a, b) => panic!("{doc_type}: {a:?} vs {b:?}"),
        }
    }
}
