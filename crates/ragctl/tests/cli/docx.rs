//! `ragctl chunk` on Word files: a file, a directory of Markdown and DOCX, stdin with `--type
//! docx`, the text report's left-out line, and a bad file among good ones.

use std::path::PathBuf;

use rag_chunker::{DocumentType, parse_document};
use rag_core::{CorpusId, DocumentId, RequestContext, SourceBytes};

use crate::{GUIDE_MD, jsonl, partly_failed, ragctl, ragctl_in, scratch_dir, stdout_has, stdout_of};

fn fixture(name: &str) -> PathBuf {
    crate::workspace_root()
        .join("crates/rag-chunker/tests/fixtures/docx")
        .join(name)
}

/// The text rendition the library makes of `bytes`: what the CLI's spans index.
fn rendition_of(bytes: &[u8]) -> String {
    let (id, corpus) = (DocumentId::from("d"), CorpusId::from("c"));
    let source = SourceBytes {
        document_id: &id,
        corpus_id: &corpus,
        source_uri: "d.docx",
        bytes,
    };
    parse_document(&RequestContext::local("t"), DocumentType::Docx, source)
        .unwrap()
        .document
        .text
}

#[test]
fn docx_chunks_are_slices_of_the_rendition_and_name_their_paragraphs() {
    let path = fixture("pandoc-stack-ls.docx");
    let bytes = std::fs::read(&path).unwrap();
    let text = rendition_of(&bytes);
    let out = stdout_of(
        ragctl()
            .arg("chunk")
            .arg(&path)
            .args(["--format", "jsonl", "--max-tokens", "32"]),
    );
    let chunks = jsonl(&out);
    assert!(chunks.len() > 10, "{}", chunks.len());
    for chunk in &chunks {
        let (start, end) = (
            chunk["span"]["start"].as_u64().unwrap() as usize,
            chunk["span"]["end"].as_u64().unwrap() as usize,
        );
        assert_eq!(chunk["content"].as_str().unwrap(), &text[start..end]);
        assert!(chunk["token_count"].as_u64().unwrap() <= 32);
        let provenance = chunk["provenance"].as_array().unwrap();
        assert!(!provenance.is_empty(), "{chunk}");
        for origin in provenance {
            assert_eq!(origin["kind"], "paragraphs");
            assert_eq!(origin["part"], "word/document.xml");
            assert!(origin["first"].as_u64().unwrap() <= origin["last"].as_u64().unwrap());
        }
    }
    assert_eq!(chunks[0]["content"], "# stack ls");
    assert_eq!(
        chunks[0]["provenance"],
        serde_json::json!([{"kind": "paragraphs", "part": "word/document.xml", "first": 0, "last": 0}])
    );
}

#[test]
fn a_directory_of_markdown_and_docx_chunks_every_file() {
    let dir = scratch_dir("docx-dir");
    std::fs::write(dir.join("guide.md"), GUIDE_MD).unwrap();
    std::fs::create_dir_all(dir.join("word")).unwrap();
    std::fs::copy(fixture("pandoc-pip-footnotes.docx"), dir.join("word/pip.docx")).unwrap();
    std::fs::copy(fixture("libreoffice-stack-ls.docx"), dir.join("word/Stack.DOCX")).unwrap();
    let out = stdout_of(ragctl_in(&dir).args(["chunk", ".", "--format", "jsonl"]));
    let mut uris: Vec<String> = jsonl(&out)
        .iter()
        .map(|c| c["source_uri"].as_str().unwrap().to_owned())
        .collect();
    uris.dedup();
    assert_eq!(uris, ["./guide.md", "./word/Stack.DOCX", "./word/pip.docx"]);
    let footnote = jsonl(&out)
        .into_iter()
        .find(|c| c["content"].as_str().unwrap().contains("[^20]: Specifically"))
        .unwrap();
    let parts: Vec<&str> = footnote["provenance"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["part"].as_str().unwrap())
        .collect();
    assert!(parts.contains(&"word/footnotes.xml"), "{footnote}");
}

#[test]
fn stdin_reads_docx_with_its_type_and_binary_bytes_intact() {
    let path = fixture("edge-cases.docx");
    let from_file = stdout_of(ragctl().arg("chunk").arg(&path).args(["--format", "jsonl"]));
    let from_stdin = stdout_of(
        ragctl()
            .args(["chunk", "-", "--type", "docx", "--format", "jsonl"])
            .pipe_stdin(&path)
            .unwrap(),
    );
    let contents = |out: &[u8]| -> Vec<String> {
        jsonl(out)
            .iter()
            .map(|c| c["content"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(contents(&from_stdin), contents(&from_file));
    assert!(contents(&from_stdin).iter().any(|c| c.contains("alpha α")));
}

#[test]
fn the_text_report_says_what_the_rendition_left_out() {
    let assert = ragctl()
        .arg("chunk")
        .arg(fixture("edge-cases.docx"))
        .args(["-n", "1"])
        .assert();
    stdout_has(
        assert.success(),
        &[
            "parser:     docx",
            "rendition:  docx of ",
            "left out:   ",
            " B markup, ",
            ", 19 B chrome",
            ", 15 B deleted",
            ", 68 B field_code",
            ", 6 B hidden",
            " B page_furniture",
            " B comment",
            "# Edge Cases",
        ],
    );
    // A Markdown file is its own text: nothing is left out, and the report says nothing of it.
    let dir = scratch_dir("docx-md-report");
    std::fs::write(dir.join("guide.md"), GUIDE_MD).unwrap();
    let out = stdout_of(ragctl_in(&dir).args(["chunk", "guide.md"]));
    assert!(!String::from_utf8(out).unwrap().contains("left out"));
}

#[test]
fn a_word_97_file_among_good_ones_is_named_and_the_others_are_chunked() {
    let dir = scratch_dir("docx-bad");
    std::fs::write(dir.join("old.docx"), b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1 a .doc renamed").unwrap();
    std::fs::copy(fixture("pandoc-stack-ls.docx"), dir.join("good.docx")).unwrap();
    let assert = partly_failed(
        ragctl_in(&dir).args(["chunk", ".", "--format", "jsonl"]),
        &[
            "old.docx: not a DOCX but an OLE compound file, most likely a Word 97-2003 .doc: convert it with LibreOffice",
        ],
    );
    let out = assert.get_output().stdout.clone();
    assert!(jsonl(&out).iter().all(|c| c["source_uri"] == "./good.docx"));
    assert!(!jsonl(&out).is_empty());
}

/// A Word file whose body is `body`, with `media` entries beside it.
fn docx_of(body: &str, media: &[&str]) -> Vec<u8> {
    use std::io::Write as _;
    let xml = format!(
        "<w:document xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\"><w:body>{body}</w:body></w:document>"
    );
    let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default();
    writer.start_file("word/document.xml", options).unwrap();
    writer.write_all(xml.as_bytes()).unwrap();
    for name in media {
        writer.start_file(*name, options).unwrap();
        writer.write_all(b"\x89PNG not really").unwrap();
    }
    writer.finish().unwrap().into_inner()
}

#[test]
fn documents_without_text_are_chunked_with_a_warning_that_says_why() {
    let picture = "<w:p><w:r><w:drawing/></w:r></w:p>";
    let dir = scratch_dir("no-text");
    std::fs::write(
        dir.join("scan.docx"),
        docx_of(&picture.repeat(3), &["word/media/image1.png", "word/media/image2.png"]),
    )
    .unwrap();
    std::fs::write(dir.join("empty.md"), "").unwrap();
    std::fs::write(dir.join("menu.html"), "<nav><a href=/>Home</a></nav>").unwrap();
    std::fs::write(dir.join("notes.md"), "# Notes\n\nText.\n").unwrap();
    let assert = ragctl_in(&dir)
        .args([
            "chunk",
            "scan.docx",
            "empty.md",
            "menu.html",
            "notes.md",
            "--format",
            "jsonl",
        ])
        .assert()
        .success();
    let stderr = String::from_utf8(assert.get_output().stderr.clone()).unwrap();
    assert_eq!(
        stderr,
        "warning: scan.docx: no text: the document is 3 images and no text; they are not read (run OCR on \
         them to chunk their text)\n\
         warning: empty.md: no text: the file is empty\n\
         warning: menu.html: no text: all of the file was left out, as 4 B of chrome\n"
    );
    // The one file with text gave the chunks.
    let chunks = jsonl(&assert.get_output().stdout);
    assert!(chunks.iter().all(|c| c["source_uri"] == "notes.md"), "{chunks:?}");
}

#[test]
fn hidden_runs_are_kept_with_keep_hidden() {
    let body = "<w:p><w:r><w:t xml:space=\"preserve\">Shown </w:t></w:r>\
        <w:r><w:rPr><w:vanish/></w:rPr><w:t>hidden</w:t></w:r></w:p>";
    let dir = scratch_dir("docx-hidden");
    std::fs::write(dir.join("h.docx"), docx_of(body, &[])).unwrap();
    let plain = stdout_of(ragctl_in(&dir).args(["chunk", "h.docx", "--format", "rendition"]));
    assert_eq!(String::from_utf8(plain).unwrap(), "Shown");
    let kept = stdout_of(ragctl_in(&dir).args(["chunk", "h.docx", "--format", "rendition", "--keep-hidden"]));
    assert_eq!(String::from_utf8(kept).unwrap(), "Shown hidden");
}
