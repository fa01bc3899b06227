//! `contract-report`: every contract rule against the workspace's own implementations, as a table.
//!
//! Runs the chunker rules against `HeadingAwareChunker` (cl100k_base and o200k_base, budgets 32/4,
//! 128/16 and 512/64, each with headings as chunks of their own and folded) on the repository's docs (as Markdown and as plain text), the edge-case
//! fixtures and generated documents; and the packer rules against `ContextPacker` (every strategy
//! and order, with exact and near dedup, with and without a per-document cap) on packer inputs made
//! from the same docs, the packer edge cases and generated cases. Prints the table (rule,
//! implementation, cases, result) and exits with 1 if any rule broke.
//!
//! `cargo xtask contract` runs it; by hand:
//! `cargo run -p rag-contract --features report --bin contract-report [-- WORKSPACE_ROOT]` (add `--release`
//! for a 5-second run instead of about 40 seconds, once the release build exists).
#![allow(clippy::print_stdout, clippy::print_stderr)] // a command-line report

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use rag_chunker::{DocumentType, HeadingAwareChunker, TiktokenCounter, parse_document};
use rag_contract::Summary;
use rag_contract::chunker::{Budget, check_chunker};
use rag_contract::corpus::{self, Fixture};
use rag_contract::generate;
use rag_contract::packer::{Dedup, PackerCase, PackerSpec, check_packer};
use rag_contract::testing::WordCounter;
use rag_core::{
    Chunk, CorpusId, DocumentId, PackOrder, Principal, RequestContext, SelectionStrategy, SourceBytes, TokenCounter,
};
use rag_packer::{ContextPacker, PackerConfig};

/// Generated documents and packer cases per run: enough to cover the generators' shapes, few
/// enough to keep the report under a minute in a debug build.
const GENERATED_DOCUMENTS: usize = 48;
const GENERATED_PACKER_CASES: usize = 64;

fn main() -> ExitCode {
    let root = std::env::args_os()
        .nth(1)
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".."), PathBuf::from);
    match run(&root) {
        Ok(summary) => {
            println!("{summary}");
            if summary.passed() {
                ExitCode::SUCCESS
            } else {
                eprintln!("contract-report: some rules broke (first failures above)");
                ExitCode::FAILURE
            }
        }
        Err(err) => {
            eprintln!("contract-report: {err}");
            ExitCode::FAILURE
        }
    }
}

fn run(root: &std::path::Path) -> Result<Summary, String> {
    let mut docs = corpus::markdown_files(&root.join("docs")).map_err(|e| format!("reading docs/: {e}"))?;
    for file in [
        "README.md",
        "crates/rag-chunker/CHANGELOG.md",
        "crates/rag-packer/CHANGELOG.md",
    ] {
        if let Ok(bytes) = std::fs::read(root.join(file)) {
            docs.push(Fixture {
                name: file.to_owned(),
                bytes,
            });
        }
    }
    if docs.is_empty() {
        return Err(format!("no Markdown found under {}", root.join("docs").display()));
    }
    let mut summary = Summary::new();
    let started = Instant::now();
    chunker_rules(&docs, &mut summary)?;
    eprintln!("contract-report: chunker rules in {:.1?}", started.elapsed());
    let started = Instant::now();
    packer_rules(&docs, &mut summary)?;
    eprintln!("contract-report: packer rules in {:.1?}", started.elapsed());
    Ok(summary)
}

fn ctx() -> RequestContext {
    RequestContext::new(
        "acme",
        Principal {
            id: "contract".into(),
            acl_labels: vec!["staff".into()],
        },
    )
}

/// Every input of the chunker rules: the docs as Markdown and as text, the edge cases, generated
/// Markdown and text.
fn chunker_inputs(docs: &[Fixture]) -> Vec<(String, DocumentType, Vec<u8>)> {
    let mut inputs = Vec::new();
    for doc in docs {
        inputs.push((doc.name.clone(), DocumentType::Markdown, doc.bytes.clone()));
        inputs.push((format!("{} (as text)", doc.name), DocumentType::Text, doc.bytes.clone()));
    }
    for fixture in corpus::edge_cases() {
        let doc_type = if fixture.name.ends_with(".txt") {
            DocumentType::Text
        } else {
            DocumentType::Markdown
        };
        inputs.push((format!("edge: {}", fixture.name), doc_type, fixture.bytes));
    }
    for (i, text) in generate::sample(generate::markdown(), GENERATED_DOCUMENTS, 1)
        .into_iter()
        .enumerate()
    {
        inputs.push((
            format!("generated markdown #{i}"),
            DocumentType::Markdown,
            text.into_bytes(),
        ));
    }
    for (i, text) in generate::sample(generate::plain_text(), GENERATED_DOCUMENTS / 4, 2)
        .into_iter()
        .enumerate()
    {
        inputs.push((format!("generated text #{i}"), DocumentType::Text, text.into_bytes()));
    }
    inputs
}

fn chunker_rules(docs: &[Fixture], summary: &mut Summary) -> Result<(), String> {
    let ctx = ctx();
    let inputs = chunker_inputs(docs);
    let (id, corpus_id) = (DocumentId::from("doc"), CorpusId::from("corpus"));
    for encoding in ["cl100k_base", "o200k_base"] {
        let counter: Arc<dyn TokenCounter> =
            Arc::new(TiktokenCounter::new(encoding).map_err(|e| format!("tokenizer {encoding}: {e}"))?);
        for ((max, overlap), fold) in [(32, 4), (128, 16), (512, 64)]
            .into_iter()
            .flat_map(|budget| [(budget, false), (budget, true)])
        {
            let mode = if fold { " folded" } else { "" };
            let name = format!("HeadingAwareChunker {encoding} {max}/{overlap}{mode}");
            let chunker = HeadingAwareChunker::new(max, overlap, Arc::clone(&counter))
                .map_err(|e| e.to_string())?
                .with_fold_headings(fold);
            for (input, doc_type, bytes) in &inputs {
                let source = SourceBytes {
                    document_id: &id,
                    corpus_id: &corpus_id,
                    source_uri: input,
                    bytes,
                };
                let parsed = parse_document(&ctx, *doc_type, source)
                    .map_err(|e| format!("{name}: the corpus input {input} did not parse: {e}"))?;
                let budget = Budget {
                    max_tokens: max,
                    counter: counter.as_ref(),
                };
                summary.add(&name, &check_chunker(&chunker, &ctx, &parsed, Some(budget)));
            }
        }
    }
    Ok(())
}

fn packer_inputs(docs: &[Fixture]) -> Vec<PackerCase> {
    let mut cases = Vec::new();
    for doc in docs {
        let text = String::from_utf8_lossy(&doc.bytes);
        let chunks: Vec<Chunk> = corpus::chunks_from_markdown(&doc.name, &text, "acme", true);
        for budget in [40, 400, 4000] {
            cases.push(PackerCase::new(
                format!("{} paragraphs, budget {budget}", doc.name),
                RequestContext::local("acme"),
                chunks.clone(),
                budget,
            ));
        }
    }
    // A small slice of each doc, so brute force applies to real text too.
    for doc in docs {
        let text = String::from_utf8_lossy(&doc.bytes);
        let mut chunks = corpus::chunks_from_markdown(&doc.name, &text, "acme", false);
        chunks.truncate(12);
        cases.push(PackerCase::new(
            format!("{} first paragraphs, budget 60", doc.name),
            RequestContext::local("acme"),
            chunks,
            60,
        ));
    }
    cases.extend(corpus::packer_edge_cases(2_000));
    cases.extend(generate::sample(generate::packer_case(), GENERATED_PACKER_CASES, 3));
    cases
}

fn packer_rules(docs: &[Fixture], summary: &mut Summary) -> Result<(), String> {
    let cases = packer_inputs(docs);
    let dedups = [
        None,
        Some(Dedup::Near {
            threshold: 0.5,
            shingle_size: 3,
        }),
    ];
    for strategy in SelectionStrategy::ALL {
        let name = format!("ContextPacker {strategy} (6 orders, 2 dedups, 2 caps)");
        for order in PackOrder::ALL {
            for dedup in dedups {
                for cap in [None, Some(2)] {
                    let (jaccard_threshold, shingle_size) = match dedup {
                        Some(Dedup::Near {
                            threshold,
                            shingle_size,
                        }) => (Some(threshold), shingle_size),
                        _ => (None, 5),
                    };
                    let packer = ContextPacker::new(
                        PackerConfig::builder()
                            .with_order(order.clone())
                            .with_strategy(strategy)
                            .with_jaccard_threshold(jaccard_threshold)
                            .with_shingle_size(shingle_size)
                            .with_max_per_document(cap)
                            .with_token_counter(Arc::new(WordCounter))
                            .build()
                            .map_err(|e| format!("{name}: {e}"))?,
                    );
                    let spec = PackerSpec {
                        counter: &WordCounter,
                        dedup: dedup.unwrap_or(Dedup::Exact),
                        order_follows_input: matches!(order, PackOrder::Input | PackOrder::Reverse),
                        optimal: strategy == SelectionStrategy::Optimal,
                        max_per_document: cap,
                    };
                    let run = |ctx: &RequestContext, chunks: Vec<Chunk>, budget: i64| {
                        packer.pack_blocking(ctx, chunks, budget)
                    };
                    for case in &cases {
                        summary.add(&name, &check_packer(&run, &spec, case));
                    }
                }
            }
        }
    }
    Ok(())
}
