//! DOCX parse + chunk on any bytes: a malformed-input or limit error, or a document that keeps
//! every promise of the parser, the rendition and the chunker.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rag_chunker::DocumentType;

fuzz_target!(|data: &[u8]| ragctl_fuzz::parse_binary_chunk_check(DocumentType::Docx, data));
