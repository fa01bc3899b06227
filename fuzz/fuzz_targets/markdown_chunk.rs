//! Markdown parse + chunk: every promise of the parser and the chunker, on any bytes, output linear
//! in the input (a bounded JSON overhead per chunk, bounded repetition, bounded heading titles).
#![no_main]

use libfuzzer_sys::fuzz_target;
use rag_chunker::DocumentType;

fuzz_target!(|data: &[u8]| ragctl_fuzz::parse_chunk_check(DocumentType::Markdown, data));
