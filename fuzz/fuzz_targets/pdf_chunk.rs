//! PDF parse + chunk on any bytes: a malformed-input or limit error (truncated, encrypted,
//! damaged, no text layer, over a limit), or a document that keeps every promise of the parser,
//! the rendition and the chunker. A panic inside lopdf, which the parser turns into an error in
//! production, aborts here under libFuzzer's panic hook, so the fuzzer reports it too.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rag_chunker::DocumentType;

fuzz_target!(|data: &[u8]| ragctl_fuzz::parse_binary_chunk_check(DocumentType::Pdf, data));
