//! What the chunker hands its counter: bytes counted per corpus byte, the number of calls, and the
//! wall time of chunking (or of one counter pass, with `PASS=1`), for one corpus and budget.
//!
//! ```text
//! cargo run --release -p rag-bench --example count_stats [--features bpe-openai] -- [DIR] [MAX] [OVERLAP]
//! ```
//!
//! Without `DIR` it chunks the harness's synthetic 4 MB corpus (`WRITE_CORPUS=DIR` also writes it
//! there). `COUNTER=bpe` counts with bpe-openai (needs the feature), `REPS=N` repeats the run.
#![allow(clippy::unwrap_used, clippy::print_stdout)] // a measuring tool: a failed setup should stop it loudly

use std::sync::Arc;

use rag_chunker::{DocumentType, HeadingAwareChunker, TiktokenCounter, parse_document};
use rag_contract::testing::SpyCounter;
use rag_core::{CorpusId, DocumentId, RequestContext, SourceBytes, TokenCounter};

/// The counter `COUNTER` names: `bpe` for bpe-openai, anything else for tiktoken-rs.
fn counter() -> Arc<dyn TokenCounter> {
    #[cfg(feature = "bpe-openai")]
    if std::env::var("COUNTER").as_deref() == Ok("bpe") {
        return Arc::new(rag_chunker::BpeOpenAiCounter::cl100k());
    }
    Arc::new(TiktokenCounter::cl100k())
}

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = args.next();
    let max_tokens: usize = args.next().map_or(512, |s| s.parse().unwrap());
    let overlap_tokens: usize = args.next().map_or(64, |s| s.parse().unwrap());
    if let Some(out) = std::env::var_os("WRITE_CORPUS") {
        rag_bench::corpus::write(&rag_bench::corpus::generate(4 << 20), std::path::Path::new(&out)).unwrap();
    }
    let files = match dir {
        Some(dir) => rag_bench::corpus::load(std::path::Path::new(&dir)).unwrap(),
        None => rag_bench::corpus::generate(4 << 20),
    };
    let reps: usize = std::env::var("REPS").map_or(1, |s| s.parse().unwrap());
    let counter = counter();
    // Build the table before the clock starts.
    let _ = counter.count("warm up");
    if std::env::var("PASS").is_ok() {
        let started = std::time::Instant::now();
        let mut tokens = 0;
        for _ in 0..reps {
            for file in &files {
                tokens += counter.count(&file.text).unwrap();
            }
        }
        println!("pass: {tokens} tokens in {:?}", started.elapsed());
        return;
    }
    let spy = Arc::new(SpyCounter::new(counter));
    let chunker = HeadingAwareChunker::new(max_tokens, overlap_tokens, spy.clone()).unwrap();
    let ctx = RequestContext::local("bench");
    let corpus = CorpusId::from("bench");
    let (mut bytes, mut chunks) = (0, 0);
    let started = std::time::Instant::now();
    for _ in 0..reps {
        (bytes, chunks) = (0, 0);
        for file in &files {
            bytes += file.text.len();
            let id = DocumentId::from(file.name.as_str());
            let source = SourceBytes {
                document_id: &id,
                corpus_id: &corpus,
                source_uri: &file.name,
                bytes: file.text.as_bytes(),
            };
            let parsed = parse_document(&ctx, DocumentType::Markdown, source).unwrap();
            chunks += chunker.chunk_document(&ctx, &parsed).unwrap().len();
        }
    }
    println!("chunking: {:?}", started.elapsed());
    println!("{} files, {bytes} bytes, {chunks} chunks", files.len());
    println!(
        "counted {:.3} bytes per byte in {} calls",
        spy.bytes() as f64 / bytes as f64 / reps as f64,
        spy.calls() / reps
    );
}
