//! The PDF parser on real files (Chromium, pdfTeX, qpdf; see `fixtures/pdf/README.md`) and on
//! hostile ones: structure, reading order, furniture, provenance checked against poppler's word
//! boxes, the chunker's invariants, and a clear error for every file it cannot read.
#![allow(clippy::unwrap_used)]

mod invariants;

#[cfg(feature = "pdf")]
mod with_pdf {
    use rag_chunker::parse::{PdfLimits, parse_pdf_with_limits};
    use rag_chunker::{DocumentType, parse_document};
    use rag_core::{BlockType, CorpusId, DocumentId, Origin, ParseError, ParsedDocument, SourceBytes};

    use super::invariants::{chunk_and_check, cl100k, ctx};

    fn fixture(name: &str) -> Vec<u8> {
        std::fs::read(format!("{}/tests/fixtures/pdf/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
    }

    fn parse_bytes(name: &str, bytes: &[u8]) -> Result<ParsedDocument, ParseError> {
        let (id, corpus) = (DocumentId::from(name), CorpusId::from("c"));
        let source = SourceBytes {
            document_id: &id,
            corpus_id: &corpus,
            source_uri: name,
            bytes,
        };
        parse_document(&ctx(), DocumentType::Pdf, source)
    }

    fn parse(name: &str) -> ParsedDocument {
        parse_bytes(name, &fixture(name)).unwrap()
    }

    fn with_limits(name: &str, limits: PdfLimits) -> Result<ParsedDocument, ParseError> {
        let bytes = fixture(name);
        let (id, corpus) = (DocumentId::from(name), CorpusId::from("c"));
        parse_pdf_with_limits(
            SourceBytes {
                document_id: &id,
                corpus_id: &corpus,
                source_uri: name,
                bytes: &bytes,
            },
            limits,
        )
    }

    fn position(text: &str, needle: &str) -> usize {
        text.find(needle)
            .unwrap_or_else(|| panic!("{needle:?} is not in the rendition"))
    }

    #[test]
    fn headings_get_levels_by_size_and_lists_and_code_keep_their_shape() {
        let parsed = parse("guide.pdf");
        let text = &parsed.document.text;
        assert!(
            text.starts_with("# Field guide to chunking\n\n## 1. Notes on budgets\n\n"),
            "{text}"
        );
        assert!(text.contains("\n\n### 1.1 Why budgets matter\n\n"));
        assert!(text.contains("\n\n```\nfn fit(tokens: usize, budget: usize) -> bool {\n    tokens <= budget\n}\n```"));
        let headings: Vec<(u8, &str)> = parsed
            .blocks
            .iter()
            .filter(|b| b.block_type == BlockType::Heading)
            .map(|b| (b.level.unwrap().get(), b.text.as_deref().unwrap()))
            .collect();
        assert_eq!(headings.len(), 21, "{headings:?}");
        assert_eq!(headings[0], (1, "Field guide to chunking"));
        assert_eq!(headings[1], (2, "1. Notes on budgets"));
        assert_eq!(headings[2], (3, "1.1 Why budgets matter"));
        let items: Vec<&str> = parsed
            .blocks
            .iter()
            .filter(|b| b.block_type == BlockType::ListItem)
            .map(|b| parsed.source_of(b).unwrap())
            .collect();
        assert_eq!(
            items,
            ["1. Parse the file.", "2. Chunk the blocks.", "3. Pack the chunks."]
        );
        assert!(
            parsed
                .blocks
                .iter()
                .any(|b| b.block_type == BlockType::Code && parsed.source_of(b).unwrap().contains("tokens <= budget"))
        );
    }

    #[test]
    fn running_heads_footers_and_page_numbers_are_left_out_and_counted() {
        let parsed = parse("guide.pdf");
        let text = &parsed.document.text;
        // Chromium prints the date and title on top of each page, the URL and "n/4" under it.
        assert!(!text.contains("file:///"), "{text}");
        assert!(!text.contains("1/4") && !text.contains("4/4"));
        // The title is kept where the page shows it as a heading, lower than the running head.
        assert_eq!(text.matches("Field guide to chunking").count(), 1);
        let rendition = parsed.rendition.as_ref().unwrap();
        assert_eq!(rendition.format, "pdf");
        assert_eq!(rendition.original_bytes, Some(fixture("guide.pdf").len()));
        let furniture = rendition.left_out["page_furniture"];
        // Four pages of "12/1/26, 1:03 PM", "Field guide to chunking", the file URL and "n/4".
        assert!((200..1000).contains(&furniture), "{furniture}");
    }

    #[test]
    fn two_columns_are_read_column_by_column_and_hyphenated_words_are_joined() {
        let parsed = parse("columns.pdf");
        let text = &parsed.document.text;
        let starts: Vec<usize> = (1..=8)
            .map(|i| position(text, &format!("Paragraph {i} of the article.")))
            .collect();
        assert!(starts.windows(2).all(|w| w[0] < w[1]), "{starts:?}");

        let parsed = parse("elsarticle-page2.pdf");
        let text = &parsed.document.text;
        // The left column ends before the right one starts.
        assert!(position(text, "2. Evanescent vs. conventional") < position(text, "by dielectric mismatch"));
        assert!(position(text, "by dielectric mismatch") < position(text, "the incident polariton can be written as"));
        // "interac-" / "tion" at a line end is one word; "light-matter" inside a line keeps its hyphen.
        assert!(text.contains("resonant interaction of the WGM"), "{text}");
        assert!(!text.contains("interac-"));
        assert!(text.contains("light-matter"));
        // pdfTeX's section heading is bold at body size (NimbusRomNo9L-Medi).
        let heading = parsed
            .blocks
            .iter()
            .find(|b| b.block_type == BlockType::Heading)
            .unwrap();
        assert!(
            heading
                .text
                .as_deref()
                .unwrap()
                .starts_with("2. Evanescent vs. conventional")
        );
    }

    /// Poppler's words of a fixture: page, box (points from the top-left corner), text.
    fn poppler_words(name: &str) -> Vec<(u32, [f64; 4], String)> {
        let tsv = String::from_utf8(fixture(name)).unwrap();
        tsv.lines()
            .filter(|l| !l.starts_with('#'))
            .map(|line| {
                let f: Vec<&str> = line.splitn(6, '\t').collect();
                let n = |i: usize| f[i].parse::<f64>().unwrap();
                (f[0].parse().unwrap(), [n(1), n(2), n(3), n(4)], f[5].to_owned())
            })
            .collect()
    }

    fn tokens(text: &str) -> Vec<String> {
        // Poppler spells the glyph `mu` as the Greek letter, the Adobe Glyph List as the micro sign.
        text.replace('\u{b5}', "\u{3bc}")
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect()
    }

    /// Whether `word` is a concatenation of words of `held`.
    fn splits_into(word: &str, held: &std::collections::BTreeSet<String>) -> bool {
        let mut reachable = vec![false; word.len() + 1];
        reachable[0] = true;
        for end in 1..=word.len() {
            reachable[end] = word.is_char_boundary(end)
                && (0..end)
                    .any(|start| reachable[start] && word.is_char_boundary(start) && held.contains(&word[start..end]));
        }
        reachable[word.len()]
    }

    #[test]
    fn each_chunk_names_the_pages_and_boxes_that_hold_its_words() {
        for name in ["guide", "columns", "elsarticle-page2"] {
            let parsed = parse(&format!("{name}.pdf"));
            let poppler = poppler_words(&format!("{name}.words.tsv"));
            let chunks = chunk_and_check(&parsed, 96, 16, cl100k());
            assert!(chunks.len() > 5, "{name}: {} chunks", chunks.len());
            for chunk in &chunks {
                assert!(
                    !chunk.provenance.is_empty(),
                    "{name}: chunk {} has no provenance",
                    chunk.id
                );
                // Poppler's words whose centre lies in one of the chunk's boxes, two points of slack.
                let held: std::collections::BTreeSet<String> = poppler
                    .iter()
                    .filter(|(page, b, _)| {
                        chunk.provenance.iter().any(|origin| match origin {
                            Origin::Page {
                                page: p,
                                bbox: Some(bbox),
                                ..
                            } => {
                                let (cx, cy) = ((b[0] + b[2]) / 2.0, (b[1] + b[3]) / 2.0);
                                p == page
                                    && cx >= bbox[0] - 2.0
                                    && cx <= bbox[2] + 2.0
                                    && cy >= bbox[1] - 2.0
                                    && cy <= bbox[3] + 2.0
                            }
                            _ => false,
                        })
                    })
                    .flat_map(|(_, _, word)| tokens(word))
                    .collect();
                for word in tokens(chunk.content().unwrap()) {
                    // A word joined across a line break, or a formula's glyphs set close ("k0r0"),
                    // is several of poppler's words.
                    let joined = splits_into(&word, &held);
                    // Poppler groups glyphs into words by its own rule ("µm" where we read "µ" and
                    // "m" set apart): a word inside one of its words is held too.
                    let inside = held.iter().any(|t| t.contains(word.as_str()));
                    assert!(
                        held.contains(&word) || joined || inside,
                        "{name}: chunk {} holds {word:?}, which poppler does not find in its boxes {:?}",
                        chunk.id,
                        chunk.provenance
                    );
                }
            }
        }
    }

    #[test]
    fn every_fixture_keeps_the_chunker_promises() {
        for name in [
            "guide.pdf",
            "columns.pdf",
            "elsarticle-page2.pdf",
            "secret-permissions-only.pdf",
        ] {
            let parsed = parse(name);
            for max in [16, 200] {
                chunk_and_check(&parsed, max, max / 8, cl100k());
            }
            // The source map is in text order, inside the text, and every box is on its page.
            let map = &parsed.rendition.as_ref().unwrap().source_map;
            assert!(map.windows(2).all(|w| w[0].span.end <= w[1].span.start), "{name}");
            for mapped in map {
                assert!(parsed.document.text.get(mapped.span.range()).is_some(), "{name}");
                let Origin::Page {
                    page, bbox: Some(b), ..
                } = &mapped.origin
                else {
                    panic!("{name}: not a page box")
                };
                assert!(*page >= 1 && b[0] <= b[2] && b[1] <= b[3], "{name}: {mapped:?}");
                assert!(
                    b[0] >= -1.0 && b[2] <= 613.0 && b[1] >= -1.0 && b[3] <= 793.0,
                    "{name}: {mapped:?}"
                );
            }
        }
    }

    #[test]
    fn the_same_file_gives_the_same_rendition() {
        let (a, b) = (parse("elsarticle-page2.pdf"), parse("elsarticle-page2.pdf"));
        assert_eq!(a.document.text, b.document.text);
        assert_eq!(a.rendition, b.rendition);
        assert_eq!(a.blocks, b.blocks);
    }

    fn error_of(name: &str, bytes: &[u8]) -> String {
        match parse_bytes(name, bytes) {
            Ok(parsed) => panic!(
                "{name} parsed: {:?}",
                &parsed.document.text[..parsed.document.text.len().min(200)]
            ),
            Err(err) => err.to_string(),
        }
    }

    #[test]
    fn a_file_without_text_encrypted_or_damaged_is_an_error_that_says_what_to_do() {
        let err = error_of("drawing.pdf", &fixture("drawing.pdf"));
        assert_eq!(
            err,
            "drawing.pdf: has no text layer (1 page of images or drawings only): run OCR and chunk the `.ocr.json`"
        );
        let err = error_of("secret-password.pdf", &fixture("secret-password.pdf"));
        assert!(
            err.starts_with("secret-password.pdf: is encrypted and does not open without a password"),
            "{err}"
        );
        assert!(err.contains("qpdf --decrypt"), "{err}");
        assert_eq!(
            error_of("notes.pdf", b"just some text"),
            "notes.pdf: is not a PDF (no `%PDF-` header in its first 1024 bytes)"
        );
        assert_eq!(
            error_of("empty.pdf", b""),
            "empty.pdf: is not a PDF (no `%PDF-` header in its first 1024 bytes)"
        );
        let err = error_of("header.pdf", b"%PDF-1.7\n");
        assert!(err.starts_with("header.pdf: is damaged or truncated"), "{err}");
    }

    #[test]
    fn an_encrypted_file_that_opens_without_a_password_is_read() {
        let parsed = parse("secret-permissions-only.pdf");
        assert!(
            parsed
                .document
                .text
                .contains("The launch code is in the second drawer.")
        );
    }

    #[test]
    fn a_truncated_file_gives_its_readable_pages_or_an_error_never_a_panic() {
        let bytes = fixture("guide.pdf");
        for share in [10, 30, 50, 70, 90, 99] {
            let cut = &bytes[..bytes.len() * share / 100];
            match parse_bytes("cut.pdf", cut) {
                // lopdf rebuilds the cross-reference table from the objects it finds.
                Ok(parsed) => assert!(parsed.document.text.len() <= parse("guide.pdf").document.text.len()),
                Err(err) => {
                    let message = err.to_string();
                    assert!(message.starts_with("cut.pdf: "), "{message}");
                    assert!(
                        message.contains("damaged or truncated")
                            || message.contains("no text layer")
                            || message.contains("has no pages"),
                        "{share}%: {message}"
                    );
                }
            }
        }
    }

    #[test]
    fn limits_stop_the_parse_with_an_error_naming_the_limit() {
        let limits = PdfLimits::DEFAULT;
        let err = with_limits("guide.pdf", PdfLimits { max_pages: 3, ..limits }).unwrap_err();
        assert_eq!(
            err.to_string(),
            "guide.pdf: the number of pages (4) exceeds the limit of 3 pages"
        );
        let err = with_limits(
            "guide.pdf",
            PdfLimits {
                max_operations_per_page: 100,
                ..limits
            },
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "guide.pdf: the content operators of page 1 exceeds the limit of 100 operators"
        );
        let err = with_limits(
            "guide.pdf",
            PdfLimits {
                max_text_bytes: 1 << 10,
                ..limits
            },
        )
        .unwrap_err();
        assert!(matches!(err, ParseError::LimitExceeded { .. }), "{err}");
        let err = with_limits(
            "guide.pdf",
            PdfLimits {
                max_runs_per_page: 10,
                ..limits
            },
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "guide.pdf: the text runs of page 1 exceeds the limit of 10 runs"
        );
    }

    #[test]
    fn a_flate_bomb_stops_at_the_stream_limit() {
        // 1 GiB of zeros deflated twice: 2 KB on disk.
        let err = error_of("flate-bomb.pdf", &fixture("flate-bomb.pdf"));
        assert_eq!(
            err,
            "flate-bomb.pdf: the decompressed content of page 1 exceeds the limit of 128 MiB"
        );
    }

    /// A PDF of `objects`, numbered from 1 (the first is the catalog), with its cross-reference
    /// table.
    fn pdf_with(objects: &[Vec<u8>]) -> Vec<u8> {
        let mut pdf = b"%PDF-1.7\n".to_vec();
        let mut offsets = Vec::new();
        for (i, object) in objects.iter().enumerate() {
            offsets.push(pdf.len());
            pdf.extend_from_slice(format!("{} 0 obj\n", i + 1).as_bytes());
            pdf.extend_from_slice(object);
            pdf.extend_from_slice(b"\nendobj\n");
        }
        let xref = pdf.len();
        pdf.extend_from_slice(format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes());
        for offset in offsets {
            pdf.extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
        }
        pdf.extend_from_slice(
            format!(
                "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
                objects.len() + 1
            )
            .as_bytes(),
        );
        pdf
    }

    /// A one-page PDF around `content`, with `extra` objects from number 5 on.
    fn one_page(content: &[u8], resources: &[u8], extra: &[&[u8]]) -> Vec<u8> {
        let mut objects: Vec<Vec<u8>> = vec![
            b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
            [
                b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources ".as_slice(),
                resources,
                b" /Contents 4 0 R >>",
            ]
            .concat(),
            [
                format!("<< /Length {} >>\nstream\n", content.len()).as_bytes(),
                content,
                b"\nendstream",
            ]
            .concat(),
        ];
        objects.extend(extra.iter().map(|o| o.to_vec()));
        pdf_with(&objects)
    }

    const HELVETICA: &[u8] = b"<< /Font << /F1 5 0 R >> >>";
    const HELVETICA_FONT: &[u8] = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>";

    #[test]
    fn text_drawn_outside_the_page_is_counted_not_read() {
        // A hidden line far left of the page (a trick of keyword stuffing), then the visible text.
        let pdf = one_page(
            b"BT /F1 12 Tf -900 720 Td (hidden keywords) Tj ET BT /F1 12 Tf 72 700 Td (Visible text) Tj ET",
            HELVETICA,
            &[HELVETICA_FONT],
        );
        let parsed = parse_bytes("offpage.pdf", &pdf).unwrap();
        assert_eq!(parsed.document.text, "Visible text");
        let rendition = parsed.rendition.unwrap();
        assert_eq!(rendition.left_out.get("off_page"), Some(&"hidden keywords".len()));
    }

    #[test]
    fn deeply_nested_objects_are_refused_or_skipped_without_overflowing_the_stack() {
        let arrays = [b"[".repeat(100_000), b"]".repeat(100_000)].concat();
        let dicts = [b"<< /A ".repeat(100_000), b">>".repeat(100_000)].concat();
        for (what, deep) in [("arrays", &arrays), ("dictionaries", &dicts)] {
            // An object nobody refers to: the page is still read.
            let pdf = one_page(
                b"BT /F1 12 Tf 72 720 Td (Hello world) Tj ET",
                HELVETICA,
                &[HELVETICA_FONT, deep],
            );
            let parsed = parse_bytes("deep.pdf", &pdf);
            let text = parsed.map(|p| p.document.text).map_err(|e| e.to_string());
            assert_eq!(text.as_deref(), Ok("Hello world"), "{what}");
            // The same nesting inside the catalog: the document cannot be read, and says so.
            let catalog = [b"<< /Type /Catalog /Pages 2 0 R /X ".as_slice(), deep, b" >>"].concat();
            let pdf = String::from_utf8_lossy(&one_page(b"", b"<< >>", &[]))
                .replacen(
                    "<< /Type /Catalog /Pages 2 0 R >>",
                    &String::from_utf8_lossy(&catalog),
                    1,
                )
                .into_bytes();
            let err = error_of("deep.pdf", &pdf);
            assert!(err.starts_with("deep.pdf: "), "{what}: {err}");
        }
    }

    #[test]
    fn hostile_structures_are_read_or_refused_in_bounded_work() {
        // A standard font without widths, drawn by hand: read.
        let pdf = one_page(
            b"BT /F1 12 Tf 72 720 Td (Hello world) Tj ET",
            HELVETICA,
            &[HELVETICA_FONT],
        );
        assert_eq!(parse_bytes("hello.pdf", &pdf).unwrap().document.text, "Hello world");
        // 200,000 nested arrays in the content stream.
        let deep = [
            b"BT /F1 12 Tf 72 720 Td (ok) Tj ".as_slice(),
            &b"[".repeat(200_000),
            &b"]".repeat(200_000),
            b" TJ ET",
        ]
        .concat();
        let result = parse_bytes("deep.pdf", &one_page(&deep, HELVETICA, &[HELVETICA_FONT]));
        assert!(result.is_ok_and(|p| p.document.text.contains("ok")));
        // A form that draws itself, and a page tree that holds itself.
        let form = b"<< /Type /XObject /Subtype /Form /BBox [0 0 10 10] /Resources << /XObject << /X 6 0 R >> /Font << /F1 5 0 R >> >> /Length 26 >>\nstream\nBT /F1 9 Tf (f) Tj ET /X Do\nendstream";
        let pdf = one_page(b"/X Do", b"<< /XObject << /X 6 0 R >> >>", &[HELVETICA_FONT, form]);
        assert!(parse_bytes("form.pdf", &pdf).is_ok_and(|p| p.document.text.contains('f')));
        let looped = String::from_utf8_lossy(&one_page(b"", b"<< >>", &[]))
            .replace("/Kids [3 0 R]", "/Kids [2 0 R 3 0 R]")
            .into_bytes();
        let result = parse_bytes("loop.pdf", &looped);
        assert!(result.is_err(), "a page tree loop with no text");
        // A text string of 4 MB on one line.
        let long = [
            b"BT /F1 1 Tf 0 700 Td (".as_slice(),
            &b"abc ".repeat(1 << 20),
            b") Tj ET",
        ]
        .concat();
        let parsed = parse_bytes("long.pdf", &one_page(&long, HELVETICA, &[HELVETICA_FONT])).unwrap();
        assert!(parsed.document.text.len() < 4 << 20);
        for garbage in [
            &b"%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 9 0 R >> endobj\ntrailer << /Root 1 0 R >>"[..],
            &[0xff; 4096],
        ] {
            let err = parse_bytes("garbage.pdf", garbage).unwrap_err().to_string();
            assert!(err.starts_with("garbage.pdf: "), "{err}");
        }
    }

    /// A Letter-size PDF of `pages` (content streams) with three standard fonts, unembedded and
    /// without widths, as report generators write them: `/F1` Helvetica, `/F2` Courier, `/F3`
    /// Helvetica-Bold; and `/F4`, TeX's slanted typewriter (`CMSLTT10`, in which Texinfo sets
    /// `@var` inside code) by name.
    fn pdf_of(pages: &[String]) -> Vec<u8> {
        let kids: Vec<String> = (0..pages.len()).map(|i| format!("{} 0 R", 7 + 2 * i)).collect();
        let mut objects: Vec<Vec<u8>> = vec![
            b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
            format!("<< /Type /Pages /Kids [{}] /Count {} >>", kids.join(" "), pages.len()).into_bytes(),
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>".to_vec(),
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Courier /Encoding /WinAnsiEncoding >>".to_vec(),
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>".to_vec(),
            b"<< /Type /Font /Subtype /Type1 /BaseFont /QXKPBA+CMSLTT10 /Encoding /WinAnsiEncoding >>".to_vec(),
        ];
        for (i, content) in pages.iter().enumerate() {
            objects.push(
                format!(
                    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R /F2 4 0 R /F3 5 0 R /F4 6 0 R >> >> /Contents {} 0 R >>",
                    8 + 2 * i
                )
                .into_bytes(),
            );
            objects.push(format!("<< /Length {} >>\nstream\n{content}\nendstream", content.len()).into_bytes());
        }
        pdf_with(&objects)
    }

    const HELV: u8 = 1;
    const COURIER: u8 = 2;
    const HELV_BOLD: u8 = 3;

    /// One line of text in `font` at `size`, its baseline `top` points below the page's top edge.
    fn show(font: u8, size: f64, x: f64, top: f64, text: &str) -> String {
        let escaped = text.replace('\\', "\\\\").replace('(', "\\(").replace(')', "\\)");
        format!("BT /F{font} {size} Tf {x} {} Td ({escaped}) Tj ET\n", 792.0 - top)
    }

    /// Lines of `font` at `size` from `top` down, one `leading` apart, each at `x`.
    fn show_lines(font: u8, size: f64, x: f64, top: f64, leading: f64, lines: &[&str]) -> String {
        lines
            .iter()
            .enumerate()
            .map(|(i, line)| show(font, size, x, top + leading * i as f64, line))
            .collect()
    }

    fn headings(parsed: &ParsedDocument) -> Vec<&str> {
        parsed
            .blocks
            .iter()
            .filter(|b| b.block_type == BlockType::Heading)
            .map(|b| b.text.as_deref().unwrap())
            .collect()
    }

    fn sources_of(parsed: &ParsedDocument, kind: BlockType) -> Vec<&str> {
        parsed
            .blocks
            .iter()
            .filter(|b| b.block_type == kind)
            .map(|b| parsed.source_of(b).unwrap())
            .collect()
    }

    #[test]
    fn on_a_code_heavy_page_the_prose_is_the_body_and_its_wrapped_sentences_stay_whole() {
        // 10 pt prose around 20 lines of 8 pt code, which hold most of the page's characters.
        let code: Vec<String> = (0..20)
            .map(|i| format!("    parser.add_argument(\"--option-{i:02}\", type=int, default={i}, help=\"the value\")"))
            .collect();
        let code: Vec<&str> = code.iter().map(String::as_str).collect();
        let content = [
            show(HELV_BOLD, 14.0, 72.0, 72.0, "Arguments"),
            show_lines(
                HELV,
                10.0,
                72.0,
                100.0,
                12.0,
                &[
                    "A command reads its arguments in the order the user gives them, and each",
                    "argument is converted to the type its declaration names before the",
                    "function runs.",
                ],
            ),
            show_lines(COURIER, 8.0, 72.0, 150.0, 10.0, &code),
            show_lines(
                HELV,
                10.0,
                72.0,
                370.0,
                12.0,
                &[
                    "When a value cannot be converted the command stops with a message that",
                    "names the argument and the value it was given.",
                ],
            ),
        ]
        .concat();
        let parsed = parse_bytes("arguments.pdf", &pdf_of(&[content])).unwrap();
        assert_eq!(headings(&parsed), ["Arguments"], "{}", parsed.document.text);
        assert_eq!(
            sources_of(&parsed, BlockType::Paragraph),
            [
                "A command reads its arguments in the order the user gives them, and each argument is converted to the type its declaration names before the function runs.",
                "When a value cannot be converted the command stops with a message that names the argument and the value it was given."
            ]
        );
        let code_blocks = sources_of(&parsed, BlockType::Code);
        assert_eq!(code_blocks.len(), 1);
        assert_eq!(code_blocks[0].lines().count(), 22, "{}", code_blocks[0]);
        // The wrapped sentence is found whole in a chunk.
        let chunks = chunk_and_check(&parsed, 64, 8, cl100k());
        assert!(chunks.iter().any(|c| c.content().unwrap().contains(
            "When a value cannot be converted the command stops with a message that names the argument and the value it was given."
        )));
    }

    #[test]
    fn a_monospaced_word_that_continues_a_sentence_stays_in_it_as_inline_code() {
        let content = [
            show(
                HELV,
                10.0,
                72.0,
                72.0,
                "Before you send a patch, run the whole test suite, which takes a while, with",
            ),
            show(COURIER, 10.0, 72.0, 84.0, "make check-devel"),
            show(
                HELV,
                10.0,
                72.0,
                96.0,
                "to be sure that nothing else broke. Then push the branch.",
            ),
            // A URL broken at the margin, its end alone on the next line.
            show(HELV, 10.0, 72.0, 130.0, "The mirrors are listed at"),
            show(COURIER, 10.0, 200.0, 130.0, "https://cran.r-project.org/"),
            show(COURIER, 10.0, 72.0, 142.0, "mirrors.html"),
            show(HELV, 10.0, 144.0, 142.0, "."),
        ]
        .concat();
        let parsed = parse_bytes("inline.pdf", &pdf_of(&[content])).unwrap();
        assert_eq!(
            parsed.document.text,
            "Before you send a patch, run the whole test suite, which takes a while, with `make check-devel` to be sure that nothing else broke. Then push the branch.\n\n\
             The mirrors are listed at `https://cran.r-project.org/ mirrors.html`."
        );
        assert!(sources_of(&parsed, BlockType::Code).is_empty());
        // The source map still names each line's box, the backticks belong to no line.
        let map = &parsed.rendition.as_ref().unwrap().source_map;
        let pieces: Vec<&str> = map.iter().map(|m| &parsed.document.text[m.span.range()]).collect();
        assert!(pieces.contains(&"make check-devel"), "{pieces:?}");
        assert!(pieces.iter().all(|p| !p.contains('`')), "{pieces:?}");
    }

    #[test]
    fn monospaced_lines_set_apart_from_the_text_are_fenced_even_inside_a_sentence() {
        // Texinfo's examples: indented, after a sentence that goes on below them; the
        // punctuation of the code and the comments in the text font.
        let content = [
            show(
                HELV,
                10.0,
                72.0,
                72.0,
                "The simplest way is to download R-x.y.z.tar.gz and unpack it with",
            ),
            show(COURIER, 10.0, 100.0, 84.0, "tar -xf R-4.2.2.tar.gz"),
            show(
                HELV,
                10.0,
                72.0,
                96.0,
                "on systems that have a suitable tar installed. A session looks like",
            ),
            show(COURIER, 10.0, 100.0, 108.0, "> x <- array(1:20, dim=c(4,5))"),
            show(HELV, 10.0, 300.0, 108.0, "# Generate a 4 by 5 array."),
            show(COURIER, 10.0, 100.0, 120.0, "> i"),
            show(HELV, 10.0, 300.0, 120.0, "# i is a 3 by 2 index array."),
            show(HELV, 10.0, 72.0, 132.0, "and ends when you quit."),
        ]
        .concat();
        // The hyphens of the command are in Helvetica, as pdfTeX sets them, and the version's
        // variables in slanted typewriter (`R-x.y.z.tar.gz`).
        let content = content.replace(
            "(tar -xf R-4.2.2.tar.gz) Tj",
            "(tar ) Tj /F1 10 Tf (-) Tj /F2 10 Tf (xf R) Tj /F1 10 Tf (-) Tj /F4 10 Tf (x) Tj /F2 10 Tf (.) Tj /F4 10 Tf (y) Tj /F2 10 Tf (.) Tj /F4 10 Tf (z) Tj /F2 10 Tf (.tar.gz) Tj",
        );
        let content = content.replace(
            "(The simplest way is to download R-x.y.z.tar.gz and unpack it with) Tj",
            "(The simplest way is to download ) Tj /F2 10 Tf (R-) Tj /F4 10 Tf (x) Tj /F2 10 Tf (.) Tj /F4 10 Tf (y) Tj /F2 10 Tf (.) Tj /F4 10 Tf (z) Tj /F2 10 Tf (.tar.gz) Tj /F1 10 Tf ( and unpack it with) Tj",
        );
        let parsed = parse_bytes("examples.pdf", &pdf_of(&[content])).unwrap();
        assert_eq!(
            sources_of(&parsed, BlockType::Code),
            [
                "```\ntar -xf R-x.y.z.tar.gz\n```",
                "```\n> x <- array(1:20, dim=c(4,5)) # Generate a 4 by 5 array.\n> i # i is a 3 by 2 index array.\n```"
            ],
            "{}",
            parsed.document.text
        );
        assert_eq!(
            sources_of(&parsed, BlockType::Paragraph),
            [
                "The simplest way is to download `R-x.y.z.tar.gz` and unpack it with",
                "on systems that have a suitable tar installed. A session looks like",
                "and ends when you quit."
            ]
        );
    }

    fn furniture_bytes(parsed: &ParsedDocument) -> usize {
        parsed
            .rendition
            .as_ref()
            .unwrap()
            .left_out
            .get("page_furniture")
            .copied()
            .unwrap_or(0)
    }

    fn warnings(parsed: &ParsedDocument) -> &[String] {
        &parsed.rendition.as_ref().unwrap().warnings
    }

    #[test]
    fn lines_that_differ_in_numbers_other_than_the_page_number_are_content() {
        // Four invoices, one a page: the numbers in the head grow by ten, not with the page; the
        // header row repeats under it; the footer counts the pages.
        let pages: Vec<String> = (0..4)
            .map(|n| {
                let rows: String = (0..3)
                    .map(|r| {
                        let top = 68.0 + 12.0 * f64::from(r);
                        [
                            show(HELV, 10.0, 72.0, top, &format!("2026-0{}-1{r}", n + 1)),
                            show(HELV, 10.0, 200.0, top, &format!("Service {n}{r}")),
                            show(HELV, 10.0, 450.0, top, &format!("{}.00", 100 + r)),
                        ]
                        .concat()
                    })
                    .collect();
                [
                    show(
                        HELV,
                        10.0,
                        72.0,
                        40.0,
                        &format!("Invoice {} for customer {}", 1017 + 10 * n, 5511 + 10 * n),
                    ),
                    show(HELV, 10.0, 72.0, 54.0, "Date"),
                    show(HELV, 10.0, 200.0, 54.0, "Description"),
                    show(HELV, 10.0, 450.0, 54.0, "Amount"),
                    rows,
                    show(HELV, 8.0, 280.0, 760.0, &format!("Page {} of 4", n + 1)),
                ]
                .concat()
            })
            .collect();
        let parsed = parse_bytes("invoices.pdf", &pdf_of(&pages)).unwrap();
        let text = &parsed.document.text;
        for n in 0..4 {
            let head = format!("Invoice {} for customer {}", 1017 + 10 * n, 5511 + 10 * n);
            assert_eq!(text.matches(&head).count(), 1, "{head}: {text}");
        }
        // The header row is kept where it first appears; the footers are left out.
        assert_eq!(text.matches("Date Description Amount").count(), 1, "{text}");
        assert!(position(text, "Date Description Amount") < position(text, "Invoice 1027"));
        assert!(!text.contains("of 4"), "{text}");
        assert_eq!(
            furniture_bytes(&parsed),
            3 * "DateDescriptionAmount".len() + 4 * "Page 1 of 4".len()
        );
        assert!(warnings(&parsed).is_empty());
    }

    #[test]
    fn headings_that_repeat_with_another_number_on_each_page_are_kept() {
        let pages: Vec<String> = (1..=4)
            .map(|n| {
                [
                    show(HELV_BOLD, 14.0, 72.0, 50.0, &format!("Chapter {n} Overview")),
                    show(
                        HELV,
                        10.0,
                        72.0,
                        200.0,
                        &format!("The overview of part {n} says what the part is about."),
                    ),
                ]
                .concat()
            })
            .collect();
        let parsed = parse_bytes("chapters.pdf", &pdf_of(&pages)).unwrap();
        assert_eq!(
            headings(&parsed),
            [
                "Chapter 1 Overview",
                "Chapter 2 Overview",
                "Chapter 3 Overview",
                "Chapter 4 Overview"
            ]
        );
        assert_eq!(furniture_bytes(&parsed), 0);
    }

    #[test]
    fn running_heads_that_alternate_and_change_per_chapter_are_left_out() {
        // pdfTeX's Texinfo, two-sided: even pages carry the page number and the manual's title,
        // odd pages the chapter and the page number; a chapter's first page has its number alone.
        // A sentence runs from the foot of one page to the top of the next.
        let chapters = [(1, "Getting started", 1..=4), (2, "Installing the sources", 5..=9)];
        let mut pages = Vec::new();
        for (chapter, title, range) in chapters {
            for n in range {
                let opening = n == 1 || n == 5;
                let head = if opening {
                    show(HELV, 10.0, 516.0, 50.0, &n.to_string())
                } else if n % 2 == 0 {
                    [
                        show(HELV, 10.0, 72.0, 50.0, &n.to_string()),
                        show(HELV, 10.0, 330.0, 50.0, "The Reference Manual"),
                    ]
                    .concat()
                } else {
                    [
                        show(HELV, 10.0, 72.0, 50.0, &format!("Chapter {chapter}: {title}")),
                        show(HELV, 10.0, 516.0, 50.0, &n.to_string()),
                    ]
                    .concat()
                };
                let start = if opening {
                    show(HELV_BOLD, 16.0, 72.0, 100.0, &format!("{chapter} {title}"))
                } else {
                    show(
                        HELV,
                        10.0,
                        72.0,
                        100.0,
                        &format!("continues on page {n} where it was left off."),
                    )
                };
                let foot = format!("Page {n} ends with a sentence that");
                pages.push([head, start, show(HELV, 10.0, 72.0, 700.0, &foot)].concat());
            }
        }
        let parsed = parse_bytes("manual.pdf", &pdf_of(&pages)).unwrap();
        let text = &parsed.document.text;
        assert!(!text.contains("Reference Manual"), "{text}");
        assert!(!text.contains("Chapter 1:") && !text.contains("Chapter 2:"), "{text}");
        assert_eq!(headings(&parsed), ["1 Getting started", "2 Installing the sources"]);
        for n in [2, 3, 6, 7, 8] {
            let sentence = format!(
                "Page {} ends with a sentence that continues on page {n} where it was left off.",
                n - 1
            );
            assert!(text.contains(&sentence), "{sentence}: {text}");
        }
    }

    #[test]
    fn a_document_of_repeated_lines_keeps_them_once_and_says_so() {
        // A letterhead printed without a letter: every line repeats on every page.
        let page = [
            show(HELV, 10.0, 72.0, 40.0, "ACME Corporation, 1 Harbour Road"),
            show(HELV, 10.0, 72.0, 760.0, "Confidential: for the addressee only"),
        ]
        .concat();
        let parsed = parse_bytes("letterhead.pdf", &pdf_of(&[page.clone(), page.clone(), page])).unwrap();
        assert_eq!(
            parsed.document.text,
            "ACME Corporation, 1 Harbour Road\n\nConfidential: for the addressee only"
        );
        assert_eq!(
            warnings(&parsed),
            [
                "every line of the document repeats from page to page like a running head or page number: page 1 is kept whole and the repeats on the other pages are left out as page furniture"
            ]
        );
        assert!(!chunk_and_check(&parsed, 64, 8, cl100k()).is_empty());
        // Pages that hold nothing but the running head are named.
        let body = show(HELV, 10.0, 72.0, 300.0, "The only text of the document.");
        let head = show(HELV, 10.0, 72.0, 40.0, "ACME Corporation, 1 Harbour Road");
        let parsed = parse_bytes(
            "sparse.pdf",
            &pdf_of(&[[head.clone(), body].concat(), head.clone(), head]),
        )
        .unwrap();
        assert_eq!(parsed.document.text, "The only text of the document.");
        assert_eq!(
            warnings(&parsed),
            [
                "pages 2-3: all of their text repeats on other pages as running heads, footers or page numbers and is left out as page furniture"
            ]
        );
    }
}

#[cfg(not(feature = "pdf"))]
#[test]
fn without_the_pdf_feature_a_pdf_is_not_built() {
    use rag_chunker::{DocumentType, parse_document};
    use rag_core::{CorpusId, DocumentId, SourceBytes};

    let (id, corpus) = (DocumentId::from("r"), CorpusId::from("c"));
    let source = SourceBytes {
        document_id: &id,
        corpus_id: &corpus,
        source_uri: "report.pdf",
        bytes: b"%PDF-1.7",
    };
    let err = parse_document(&invariants::ctx(), DocumentType::Pdf, source).unwrap_err();
    assert_eq!(
        err.to_string(),
        "report.pdf: pdf is not supported by this build (rag-chunker's `pdf` feature is off)"
    );
}
