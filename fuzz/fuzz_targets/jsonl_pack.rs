//! JSONL -> pack: the reader never panics and names the bad line; whatever it reads, the packer
//! keeps every rule of the contract suite (budget, pinned, accounting, tenant, dedup by all pairs,
//! brute-force optimum, input order), for the configuration the first two bytes select.
#![no_main]

use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use rag_contract::packer::{Dedup, PackerCase, PackerSpec, check_packer};
use rag_core::{Chunk, PackOrder, RequestContext, SelectionStrategy, TenantId, TokenCounter, TokenizerError};
use rag_packer::{ContextPacker, PackerConfig};

/// Counts words: cheap, and the same counter for the packer and the suite.
struct Words;

impl TokenCounter for Words {
    fn count(&self, text: &str) -> Result<usize, TokenizerError> {
        Ok(text.split_whitespace().count())
    }

    fn name(&self) -> &str {
        "words"
    }
}

fuzz_target!(|data: &[u8]| {
    let &[a, b, ref rest @ ..] = data else { return };
    let tenant = TenantId::new("acme");
    let chunks = match rag_core::jsonl::read_chunks(rest, "fuzz", Some(&tenant)) {
        Ok(chunks) => chunks,
        Err(err) => {
            let message = err.to_string();
            assert!(message.starts_with("fuzz:"), "the error names the input: {message}");
            return;
        }
    };
    let strategy = SelectionStrategy::ALL[usize::from(a % 3)];
    let order = PackOrder::ALL[usize::from(a / 3 % 6)];
    let near = a / 18 % 2 == 1;
    let cap = (a / 36 % 2 == 1).then_some(usize::from(b % 3) + 1);
    let budget = i64::from(b) - 8;
    let dedup = if near {
        Dedup::Near {
            threshold: [0.3, 0.5, 0.8, 1.0][usize::from(b / 64)],
            shingle_size: usize::from(b % 4) + 1,
        }
    } else {
        Dedup::Exact
    };
    let (jaccard_threshold, shingle_size) = match dedup {
        Dedup::Near {
            threshold,
            shingle_size,
        } => (Some(threshold), shingle_size),
        Dedup::Exact => (None, 5),
    };
    let packer = ContextPacker::new(PackerConfig {
        order,
        strategy,
        jaccard_threshold,
        shingle_size,
        max_per_document: cap,
        token_counter: Arc::new(Words),
        ..PackerConfig::default()
    })
    .expect("valid configuration");
    let spec = PackerSpec {
        counter: &Words,
        dedup,
        order_follows_input: matches!(order, PackOrder::Input | PackOrder::Reverse),
        optimal: strategy == SelectionStrategy::Optimal,
        max_per_document: cap,
    };
    let run = |ctx: &RequestContext, chunks: Vec<Chunk>, budget: i64| packer.pack_blocking(ctx, chunks, budget);
    let case = PackerCase::new("fuzz", RequestContext::local(tenant), chunks, budget);
    let report = check_packer(&run, &spec, &case);
    assert!(report.passed(), "{strategy}/{order} {dedup:?} cap {cap:?} budget {budget}: {report}");
});
