//! The demo corpus of `ragctl pack` without `--input`: the project's own docs, built into the
//! binary and chunked at run time, so the command works on a fresh clone with no data.
//!
//! The README is left out: it quotes the demo's own commands, so any question asked in it would
//! find its own words there first.

use std::sync::Arc;

use rag_chunker::{DocumentType, HeadingAwareChunker, parse_document};
use rag_core::{Chunk, Chunker as _, CorpusId, DocumentId, RequestContext, SourceBytes, TenantId, TokenCounter};

const DOCS: [(&str, &str); 4] = [
    ("docs/architecture.md", include_str!("../../../docs/architecture.md")),
    (
        "docs/architecture/context-packing.md",
        include_str!("../../../docs/architecture/context-packing.md"),
    ),
    (
        "docs/reference/packer.md",
        include_str!("../../../docs/reference/packer.md"),
    ),
    (
        "docs/reference/chunker.md",
        include_str!("../../../docs/reference/chunker.md"),
    ),
];

/// Chunks the built-in docs (256-token chunks, 32 tokens of overlap) for `tenant`.
pub(crate) async fn demo_chunks(tenant: &TenantId, counter: Arc<dyn TokenCounter>) -> anyhow::Result<Vec<Chunk>> {
    let ctx = RequestContext::local(tenant.clone());
    let chunker = HeadingAwareChunker::new(256, 32, counter)?;
    let corpus = CorpusId::new("ragctl-docs");
    let mut chunks = Vec::new();
    for (path, text) in DOCS {
        let document_id = DocumentId::new(path);
        let source = SourceBytes {
            document_id: &document_id,
            corpus_id: &corpus,
            source_uri: path,
            bytes: text.as_bytes(),
        };
        let parsed = parse_document(&ctx, DocumentType::Markdown, source)?;
        chunks.extend(chunker.chunk(&ctx, &parsed).await?);
    }
    Ok(chunks)
}
