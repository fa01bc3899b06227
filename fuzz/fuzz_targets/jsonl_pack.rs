//! JSONL -> pack: the reader never panics and names the stream and the bad line (invalid UTF-8, a
//! byte-order mark, a line over the length limit, a missing tenant included); whatever it reads,
//! the packer keeps every rule of the contract suite (budget, pinned, accounting, tenant, access
//! labels, dedup by all pairs, brute-force optimum, input order), for the configuration the first
//! two bytes select. Then the same chunks are packed for a rendered context, by a principal
//! holding the label `staff` or none: whatever token counts the lines claim (a lie, another
//! tokenizer), the rendered text's real count is within the budget and is `tokens_used`, and no
//! chunk the principal may not see appears in the result.
#![no_main]

use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use rag_contract::packer::{Dedup, PackerCase, PackerSpec, check_packer};
use rag_contract::testing::WordCounter;
use rag_core::jsonl::{JsonlConfig, MissingTenant, ParseLines};
use rag_core::{Chunk, PackOrder, Principal, RequestContext, SelectionStrategy, TenantId, TokenCounter};
use rag_packer::{ContextFormat, ContextPacker, PackerConfig};

/// Parses a batch's lines last first, as a thread pool may finish them in any order.
struct LastFirst;

impl ParseLines for LastFirst {
    fn parse_lines<T: Send>(&self, lines: &[(usize, &[u8])], parse: &(dyn Fn(usize, &[u8]) -> T + Sync)) -> Vec<T> {
        let mut parsed: Vec<T> = lines.iter().rev().map(|&(index, line)| parse(index, line)).collect();
        parsed.reverse();
        parsed
    }
}

fuzz_target!(|data: &[u8]| {
    let &[a, b, ref rest @ ..] = data else { return };
    let tenant = TenantId::new("acme");
    // The third bit of `b` refuses chunks without a tenant; the line limit is small enough that
    // the fuzzer reaches it (8 to 1,031 bytes).
    let missing_tenant = if b & 4 == 0 {
        MissingTenant::Assign(tenant.clone())
    } else {
        MissingTenant::Refuse
    };
    let config = JsonlConfig::new(missing_tenant).with_max_line_bytes(8 + usize::from(a) * 4 + usize::from(b & 3));
    // The one reader, with its lines parsed in order and out of order (as a thread pool may).
    let streamed = rag_core::jsonl::read_chunks(rest, "fuzz", &config);
    let by_line = rag_core::jsonl::read_chunks_with(rest, "fuzz", &config, &LastFirst).map(|read| read.chunks);
    let chunks = match (streamed, by_line) {
        (Ok(read), Ok(chunks)) => {
            assert_eq!(read.chunks, chunks, "the order lines are parsed in changes nothing");
            for warning in &read.warnings {
                assert!(warning.to_string().starts_with("fuzz:"), "a warning names the input: {warning}");
            }
            read.chunks
        }
        (Err(streamed), Err(by_line)) => {
            let message = streamed.to_string();
            assert_eq!(message, by_line.to_string(), "the order lines are parsed in changes no error");
            assert!(message.starts_with("fuzz:"), "the error names the input: {message}");
            let line = message.split(':').nth(1).and_then(|n| n.parse::<usize>().ok());
            let io = matches!(streamed, rag_core::jsonl::JsonlError::Io { .. });
            assert!(io || line.is_some_and(|n| n >= 1), "the error names the line: {message}");
            return;
        }
        (streamed, by_line) => panic!("the readers disagree: {streamed:?} / {by_line:?}"),
    };
    let strategy = SelectionStrategy::ALL[usize::from(a % 3)];
    let order = PackOrder::ALL[usize::from(a / 3 % 6)].clone();
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
    let packer = ContextPacker::new(PackerConfig::builder().with_order(order.clone()).with_strategy(strategy).with_jaccard_threshold(jaccard_threshold).with_shingle_size(shingle_size).with_max_per_document(cap).with_token_counter(Arc::new(WordCounter)).build().expect("valid configuration"));
    let spec = PackerSpec {
        counter: &WordCounter,
        dedup,
        order_follows_input: matches!(order, PackOrder::Input | PackOrder::Reverse),
        optimal: strategy == SelectionStrategy::Optimal,
        max_per_document: cap,
    };
    let run = |ctx: &RequestContext, chunks: Vec<Chunk>, budget: i64| packer.pack_blocking(ctx, chunks, budget);
    let case = PackerCase::new("fuzz", RequestContext::local(tenant), chunks, budget);
    let report = check_packer(&run, &spec, &case);
    assert!(report.passed(), "{strategy}/{order} {dedup:?} cap {cap:?} budget {budget}: {report}");

    let labels = if b & 8 == 0 { Vec::new() } else { vec!["staff".to_owned()] };
    let ctx = RequestContext::new("acme", Principal { id: "fuzz".into(), acl_labels: labels });
    let invisible: Vec<String> = case
        .chunks
        .iter()
        .filter(|c| !rag_contract::packer::visible_to(&ctx, c))
        .map(|c| c.id.to_string())
        .collect();
    if let Ok(packed) = packer.pack_context_blocking(&ctx, case.chunks, budget, &ContextFormat::default()) {
        let context = packed.context.as_deref().unwrap_or_default();
        let real = WordCounter.count(context).expect("words never fail");
        assert!(real as i64 <= budget, "rendered {real} tokens over the budget {budget}");
        assert_eq!(packed.tokens_used, real, "tokens_used is the rendered count");
        assert_eq!(packed.hidden_by_acl, invisible.len());
        for chunk in packed.chunks.iter().map(|c| c.id.to_string()).chain(packed.dropped.iter().map(|d| d.id.to_string())) {
            assert!(!invisible.contains(&chunk), "invisible chunk {chunk} in the result");
        }
    }
});
