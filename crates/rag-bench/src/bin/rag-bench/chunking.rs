//! The chunking figures: throughput of the heading-aware chunker with each token-counting
//! backend, and the bytes it counts per input byte.

use std::sync::Arc;

use rag_bench::corpus::File;
use rag_bench::measure::{Sample, median, time};
#[cfg(feature = "bpe-openai")]
use rag_chunker::BpeOpenAiCounter;
use rag_chunker::{DocumentType, HeadingAwareChunker, TiktokenCounter, parse_document};
use rag_contract::testing::SpyCounter;
use rag_core::{CorpusId, DocumentId, RequestContext, SourceBytes, TokenCounter};

use crate::table::Table;

fn chunk_all(files: &[File], chunker: &HeadingAwareChunker) -> Vec<rag_core::Chunk> {
    let ctx = RequestContext::local("bench");
    let corpus = CorpusId::from("bench");
    let mut all = Vec::new();
    for file in files {
        let id = DocumentId::from(file.name.as_str());
        let source = SourceBytes {
            document_id: &id,
            corpus_id: &corpus,
            source_uri: &file.name,
            bytes: file.text.as_bytes(),
        };
        let parsed = parse_document(&ctx, DocumentType::Markdown, source).unwrap();
        all.extend(chunker.chunk_document(&ctx, &parsed).unwrap());
    }
    all
}

/// The second backend, when the harness is built with `--features bpe-openai`.
fn bpe_backend() -> Option<Arc<dyn TokenCounter>> {
    #[cfg(feature = "bpe-openai")]
    return Some(Arc::new(BpeOpenAiCounter::cl100k()));
    #[cfg(not(feature = "bpe-openai"))]
    None
}

pub(crate) fn chunking(table: &mut Table, files: &[File], runs: usize) {
    eprintln!("chunking: {runs} runs");
    let tiktoken = TiktokenCounter::cl100k();
    let bpe = bpe_backend();
    // Build the tables before any clock starts.
    let _ = (tiktoken.count("warm up"), bpe.as_ref().map(|b| b.count("warm up")));
    let chunker = HeadingAwareChunker::new(512, 64, Arc::new(tiktoken)).unwrap();
    let bpe_chunker = bpe.clone().map(|b| HeadingAwareChunker::new(512, 64, b).unwrap());
    let bytes: usize = files.iter().map(|f| f.text.len()).sum();

    // Exactness and the bytes handed to the tokenizer, outside any clock.
    let spy = Arc::new(SpyCounter::new(tiktoken));
    let chunks = chunk_all(files, &HeadingAwareChunker::new(512, 64, spy.clone()).unwrap());
    let counted = spy.bytes();
    let exact = chunks
        .iter()
        .all(|c| c.token_count == tiktoken.count(c.content().unwrap_or_default()).ok() && c.token_count <= Some(512));
    let same = bpe_chunker.as_ref().map(|bpe_chunker| {
        let bpe_chunks = chunk_all(files, bpe_chunker);
        bpe_chunks.len() == chunks.len()
            && bpe_chunks
                .iter()
                .zip(&chunks)
                .all(|(a, b)| a.span == b.span && a.token_count == b.token_count)
    });

    let (mut base, mut bpe_base, mut tk, mut bp) = (vec![], vec![], vec![], vec![]);
    let (mut r_tk, mut r_bp, mut r_bp_own) = (vec![], vec![], vec![]);
    for _ in 0..runs {
        let (_, b) = time(|| files.iter().map(|f| tiktoken.encode(&f.text).len()).sum::<usize>());
        let (_, t) = time(|| chunk_all(files, &chunker).len());
        r_tk.push(t.cpu.as_secs_f64() / b.cpu.as_secs_f64());
        if let (Some(bpe), Some(bpe_chunker)) = (&bpe, &bpe_chunker) {
            let (_, bb) = time(|| files.iter().map(|f| bpe.count(f.text.as_str()).unwrap()).sum::<usize>());
            let (_, p) = time(|| chunk_all(files, bpe_chunker).len());
            r_bp.push(p.cpu.as_secs_f64() / b.cpu.as_secs_f64());
            r_bp_own.push(p.cpu.as_secs_f64() / bb.cpu.as_secs_f64());
            bpe_base.push(bb);
            bp.push(p);
        }
        base.push(b);
        tk.push(t);
    }
    let mbps = |s: &[Sample]| bytes as f64 / 1e6 / median(&s.iter().map(|x| x.cpu.as_secs_f64()).collect::<Vec<_>>());
    let ratio_tk = median(&r_tk);
    // Each byte counted about once: chunking within 1.3 passes of its own counter.
    table.at_most(
        "chunk CPU / tiktoken encode_ordinary CPU (cl100k 512/64, 1 thread; floor ~1.0x)",
        ratio_tk,
        1.3,
        "x",
    );
    table.row(
        "bytes handed to the tokenizer / corpus bytes (tiktoken chunker)",
        format!("{:.3}", counted as f64 / bytes as f64),
        "(info; 1.0 = each byte once)",
        None,
    );
    table.holds("every chunk: token_count exact and <= 512", exact);
    match same {
        Some(same) => {
            // bpe-openai is the CLI's counter for cl100k and o200k: chunking with it should cost
            // no more than one tiktoken-rs pass, and within 1.3 passes of its own.
            table.at_most(
                "chunk CPU with bpe-openai / tiktoken encode_ordinary CPU",
                median(&r_bp),
                1.0,
                "x",
            );
            table.at_most(
                "chunk CPU with bpe-openai / bpe-openai count CPU",
                median(&r_bp_own),
                1.3,
                "x",
            );
            table.holds("bpe-openai chunks identical to tiktoken chunks (spans, counts)", same);
            table.note(format!(
                "CPU throughput (median): bpe-openai pass {:.1} MB/s, chunking with bpe-openai {:.1} MB/s",
                mbps(&bpe_base),
                mbps(&bp)
            ));
        }
        None => table.note("bpe-openai figures skipped: build rag-bench with --features bpe-openai"),
    }
    table.note(format!(
        "corpus: {} files, {:.2} MB, {} chunks; CPU throughput (median): tiktoken pass {:.1} MB/s, chunking {:.1} MB/s",
        files.len(),
        bytes as f64 / 1e6,
        chunks.len(),
        mbps(&base),
        mbps(&tk),
    ));
}
