//! DOCX parse + chunk with the fuzzer's bytes as the XML of a valid package: after the
//! configuration byte, the rest split at the first two NUL bytes into the document, styles and
//! numbering parts, so the XML reader, the style and numbering resolution and the rendition are
//! what is fuzzed rather than the zip format.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rag_chunker::DocumentType;

fuzz_target!(|data: &[u8]| {
    let Some((&config, xml)) = data.split_first() else {
        return;
    };
    let mut parts = xml.splitn(3, |&b| b == 0);
    let document = parts.next().unwrap_or_default();
    let (styles, numbering) = (parts.next(), parts.next());
    let mut input = vec![config];
    input.extend(ragctl_fuzz::docx_package(document, styles, numbering));
    ragctl_fuzz::parse_binary_chunk_check(DocumentType::Docx, &input);
});
