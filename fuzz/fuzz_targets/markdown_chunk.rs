//! Markdown parse + chunk: every promise of the parser and the chunker, on any bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rag_chunker::DocumentType;

fuzz_target!(|data: &[u8]| ragctl_fuzz::parse_chunk_check(DocumentType::Markdown, data));
