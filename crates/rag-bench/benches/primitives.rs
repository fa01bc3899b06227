//! Criterion micro-benchmarks of the primitives: counting, chunking one file, near dedup.
//!
//! Small on purpose (CI compiles them with `clippy --all-targets`); `cargo xtask bench` has the
//! figures the targets are about.
#![allow(missing_docs, clippy::unwrap_used)] // criterion's macros generate undocumented items

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use rag_chunker::{DocumentType, HeadingAwareChunker, TiktokenCounter, parse_document};
use rag_core::{CorpusId, DocumentId, RequestContext, SourceBytes, TokenCounter};

fn primitives(c: &mut Criterion) {
    let file = rag_bench::corpus::generate(64 * 1024).remove(0);
    let tiktoken = TiktokenCounter::cl100k();
    c.bench_function("tiktoken count 64 KB", |b| {
        b.iter(|| tiktoken.count(black_box(&file.text)))
    });
    #[cfg(feature = "bpe-openai")]
    {
        let bpe = rag_chunker::BpeOpenAiCounter::cl100k();
        c.bench_function("bpe-openai count 64 KB", |b| {
            b.iter(|| bpe.count(black_box(&file.text)))
        });
    }

    let ctx = RequestContext::local("bench");
    let (id, corpus) = (DocumentId::from("doc"), CorpusId::from("c"));
    let source = SourceBytes {
        document_id: &id,
        corpus_id: &corpus,
        source_uri: "doc.md",
        bytes: file.text.as_bytes(),
    };
    let parsed = parse_document(&ctx, DocumentType::Markdown, source).unwrap();
    let chunker = HeadingAwareChunker::new(512, 64, Arc::new(tiktoken)).unwrap();
    c.bench_function("parse markdown 64 KB", |b| {
        b.iter(|| parse_document(&ctx, DocumentType::Markdown, black_box(source)).unwrap())
    });
    c.bench_function("chunk 64 KB (cl100k 512/64)", |b| {
        b.iter(|| chunker.chunk_document(&ctx, black_box(&parsed)).unwrap())
    });

    let chunks = rag_bench::packing::chunks(1_000);
    let texts: Vec<Option<&str>> = chunks.iter().map(|c| c.content()).collect();
    c.bench_function("jaccard_dedup 1k candidates", |b| {
        b.iter(|| rag_packer::jaccard_dedup(black_box(&texts), 0, 0.8, 5).unwrap())
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = primitives
}
criterion_main!(benches);
