//! Prints a document's text as the parser renders it (what chunk spans index), then its source
//! map and what the rendition leaves out: `cargo run -p rag-chunker --features docx --example
//! rendition -- report.docx`.

#![allow(clippy::print_stdout)]

use rag_chunker::{DocumentType, parse_document};
use rag_core::{CorpusId, DocumentId, RequestContext, SourceBytes};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Some(path) = std::env::args().nth(1) else {
        return Err("usage: rendition FILE".into());
    };
    let bytes = std::fs::read(&path)?;
    let (id, corpus) = (DocumentId::from(path.as_str()), CorpusId::from("local"));
    let source = SourceBytes {
        document_id: &id,
        corpus_id: &corpus,
        source_uri: &path,
        bytes: &bytes,
    };
    let parsed = parse_document(&RequestContext::local("local"), DocumentType::detect(&path)?, source)?;
    println!("{}", parsed.document.text);
    if let Some(rendition) = &parsed.rendition {
        println!("--- source map ({} stretches)", rendition.source_map.len());
        for mapped in &rendition.source_map {
            println!(
                "{}..{} {}",
                mapped.span.start,
                mapped.span.end,
                serde_json::to_string(&mapped.origin)?
            );
        }
        println!("--- left out: {}", serde_json::to_string(&rendition.left_out)?);
    }
    Ok(())
}
