//! HTML parse + chunk: on any bytes (any encoding, malformed markup, invalid sequences) the parser
//! returns a rendition or a limit error, never panics; its source map is in order and names bytes
//! of the input; the rendition is linear in the input; and every promise of the parser and the
//! chunker holds on it, output size included.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rag_chunker::DocumentType;

fuzz_target!(|data: &[u8]| ragctl_fuzz::parse_chunk_check(DocumentType::Html, data));
