//! The packer rules must be able to fail: `ContextPacker` passes them, and each wrapper that
//! corrupts its output (or its input) in one way is rejected by the rule that way breaks.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use rag_core::{
    Chunk, DropReason, DroppedChunk, PackOrder, PackedContext, Packer, PackerError, RequestContext, SelectionStrategy,
};
use rag_packer::{ContextPacker, PackerConfig};

use crate::Summary;
use crate::corpus;
use crate::generate;
use crate::packer::{Dedup, PackerCase, PackerSpec, check_packer};
use crate::testing::WordCounter;

fn config(strategy: SelectionStrategy, order: PackOrder) -> PackerConfig {
    PackerConfig::builder()
        .with_strategy(strategy)
        .with_order(order)
        .with_token_counter(Arc::new(WordCounter))
        .build()
        .unwrap()
}

fn packer(config: PackerConfig) -> ContextPacker {
    ContextPacker::new(config)
}

fn chunk(id: &str, doc: &str, text: &str, score: f64, tokens: usize) -> Chunk {
    let mut c = Chunk::with_content(id, doc, "acme", text);
    c.score = Some(score);
    c.token_count = Some(tokens);
    c
}

/// A pinned chunk, an exact and a near duplicate, a chunk over the budget, two documents.
fn fixture() -> PackerCase {
    let mut pinned = chunk("p", "prompt", "You answer from the context only.", 0.0, 5);
    pinned.pinned = true;
    let chunks = vec![
        chunk("b", "d1", "alpha beta gamma delta epsilon zeta eta", 0.7, 7),
        pinned,
        chunk("a", "d1", "the refund window is 30 days", 0.9, 6),
        chunk("a2", "d2", "The refund window is 30 DAYS!", 0.8, 6),
        chunk("b2", "d2", "alpha beta gamma delta epsilon zeta eta theta", 0.6, 8),
        chunk("c", "d2", "shipping is free above fifty euros", 0.5, 2),
        chunk("big", "d3", "a chunk far larger than the room left", 0.95, 50),
    ];
    PackerCase::new("fixture", RequestContext::local("acme"), chunks, 20)
}

/// Greedy by rank takes the 60-token chunk; the optimum is the two 50-token ones.
fn knapsack_fixture() -> PackerCase {
    let chunks = vec![
        chunk("x", "d", "sixty tokens of text", 1.0, 60),
        chunk("y", "d", "fifty tokens of text", 0.8, 50),
        chunk("z", "e", "fifty more tokens here", 0.8, 50),
    ];
    PackerCase::new("knapsack", RequestContext::local("acme"), chunks, 100)
}

fn with_foreign(mut case: PackerCase) -> PackerCase {
    case.chunks.insert(
        3,
        Chunk::with_content("intruder", "d9", "globex", "other tenant's text"),
    );
    case
}

/// The fixture with a chunk the local principal may not see.
fn with_labels(mut case: PackerCase) -> PackerCase {
    case.chunks[2].acl_labels = vec!["hr-only".into()];
    case
}

fn with_nan(mut case: PackerCase) -> PackerCase {
    case.chunks[2].score = Some(f64::NAN);
    case
}

/// How a wrapper corrupts `ContextPacker`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Fault {
    None,
    PacksADroppedChunk,
    PinnedNotFirst,
    DropsPinned,
    Nondeterministic,
    OrdersByInput,
    LosesADrop,
    AcceptsForeignTenant,
    AcceptsNan,
    RefusesValidInput,
    ChangesContent,
    IgnoresLabels,
}

struct Broken {
    fault: Fault,
    inner: ContextPacker,
    calls: AtomicUsize,
}

impl Broken {
    fn new(fault: Fault, config: PackerConfig) -> Self {
        Self {
            fault,
            inner: packer(config),
            calls: AtomicUsize::new(0),
        }
    }
}

#[rag_core::async_trait]
impl Packer for Broken {
    async fn pack(&self, ctx: &RequestContext, chunks: Vec<Chunk>, budget: i64) -> Result<PackedContext, PackerError> {
        let call = self.calls.fetch_add(1, Ordering::Relaxed);
        let input = chunks.clone();
        let chunks = match self.fault {
            Fault::AcceptsForeignTenant => chunks.into_iter().filter(|c| c.tenant_id == ctx.tenant_id).collect(),
            Fault::AcceptsNan => chunks
                .into_iter()
                .map(|mut c| {
                    if c.score.is_some_and(f64::is_nan) {
                        c.score = Some(0.0);
                    }
                    c
                })
                .collect(),
            Fault::RefusesValidInput if chunks.len() > 3 => {
                return Err(PackerError::InvalidConfig {
                    message: "too many chunks".into(),
                });
            }
            _ => chunks,
        };
        let mut packed = if self.fault == Fault::IgnoresLabels {
            let mut all_seeing = ctx.clone();
            for chunk in &chunks {
                all_seeing.principal.acl_labels.extend(chunk.acl_labels.iter().cloned());
            }
            self.inner.pack_blocking(&all_seeing, chunks, budget)?
        } else {
            self.inner.pack_blocking(ctx, chunks, budget)?
        };
        let pinned = packed.chunks.iter().filter(|c| c.pinned).count();
        match self.fault {
            Fault::PacksADroppedChunk => {
                if let Some(at) = packed
                    .dropped
                    .iter()
                    .position(|d| matches!(d.reason, DropReason::OverBudget { .. }))
                {
                    let dropped = packed.dropped.remove(at);
                    if let Some(c) = input.iter().find(|c| c.id == dropped.id) {
                        packed.tokens_used += c.token_count.unwrap_or(1);
                        packed.chunks.push(c.clone());
                    }
                }
            }
            Fault::PinnedNotFirst => packed.chunks.rotate_left(1),
            Fault::DropsPinned if pinned > 0 => {
                let c = packed.chunks.remove(0);
                packed.tokens_used -= c.token_count.unwrap_or(0);
                packed.dropped.push(DroppedChunk {
                    id: c.id,
                    reason: DropReason::OverBudget { tokens: 0 },
                });
            }
            Fault::Nondeterministic if call % 2 == 1 => packed.chunks[pinned..].reverse(),
            Fault::OrdersByInput => {
                let position = |c: &Chunk| input.iter().position(|i| i.id == c.id);
                packed.chunks[pinned..].sort_by_key(position);
            }
            Fault::LosesADrop => {
                packed.dropped.pop();
            }
            Fault::ChangesContent => {
                if let Some(c) = packed.chunks.last_mut() {
                    let trimmed = c.content().map(|t| t.trim_end_matches('.').to_owned());
                    c.set_body(trimmed, None).ok();
                    c.metadata.insert("touched".into(), serde_json::json!(true));
                }
            }
            _ => {}
        }
        Ok(packed)
    }
}

fn broken_rules(packer: &dyn Packer, spec: &PackerSpec<'_>, case: &PackerCase) -> Vec<&'static str> {
    check_packer(packer, spec, case).broken_rules()
}

#[test]
fn context_packer_passes_every_rule_on_the_fixtures() {
    let cases = [
        fixture(),
        knapsack_fixture(),
        with_foreign(fixture()),
        with_nan(fixture()),
    ];
    for strategy in SelectionStrategy::ALL {
        for order in PackOrder::ALL {
            let spec = PackerSpec {
                order_follows_input: matches!(order, PackOrder::Input | PackOrder::Reverse),
                optimal: strategy == SelectionStrategy::Optimal,
                ..PackerSpec::new(&WordCounter)
            };
            let correct = Broken::new(Fault::None, config(strategy, order.clone()));
            for case in &cases {
                let report = check_packer(&correct, &spec, case);
                assert!(report.passed(), "{strategy}/{order}: {report}");
            }
        }
    }
}

#[test]
fn each_broken_packer_is_rejected_by_its_rule() {
    let descending = || config(SelectionStrategy::Greedy, PackOrder::Descending);
    let spec = PackerSpec::new(&WordCounter);
    let cases = [
        (Fault::PacksADroppedChunk, fixture(), "never_over_budget"),
        (Fault::PinnedNotFirst, fixture(), "pinned_first_and_kept"),
        (Fault::DropsPinned, fixture(), "pinned_first_and_kept"),
        (Fault::Nondeterministic, fixture(), "deterministic"),
        (Fault::OrdersByInput, fixture(), "independent_of_input_order"),
        (Fault::LosesADrop, fixture(), "every_chunk_accounted"),
        (
            Fault::AcceptsForeignTenant,
            with_foreign(fixture()),
            "foreign_tenant_refused",
        ),
        (Fault::AcceptsNan, with_nan(fixture()), "invalid_input_refused"),
        (Fault::RefusesValidInput, fixture(), "valid_input_packed"),
        (Fault::ChangesContent, fixture(), "packed_chunks_unchanged"),
        (Fault::IgnoresLabels, with_labels(fixture()), "invisible_chunks_hidden"),
    ];
    for (fault, case, rule) in cases {
        let broken = broken_rules(&Broken::new(fault, descending()), &spec, &case);
        assert!(
            broken.contains(&rule),
            "{fault:?} should break {rule}, broke {broken:?}"
        );
    }
}

#[test]
fn a_packer_that_breaks_its_configured_promises_is_rejected() {
    // Near dedup where exact dedup was promised: b2 is dropped though no kept chunk equals it.
    let near = config(SelectionStrategy::Greedy, PackOrder::Descending)
        .to_builder()
        .with_jaccard_threshold(Some(0.5))
        .with_shingle_size(3)
        .build()
        .unwrap();
    let broken = broken_rules(
        &Broken::new(Fault::None, near),
        &PackerSpec::new(&WordCounter),
        &fixture(),
    );
    assert_eq!(broken, ["dedup_matches_all_pairs"]);

    // Exact dedup only, where near dedup was promised: b2 survives.
    let spec = PackerSpec {
        dedup: Dedup::Near {
            threshold: 0.5,
            shingle_size: 3,
        },
        ..PackerSpec::new(&WordCounter)
    };
    let exact = config(SelectionStrategy::Greedy, PackOrder::Descending);
    let broken = broken_rules(&Broken::new(Fault::None, exact), &spec, &fixture());
    assert_eq!(broken, ["dedup_matches_all_pairs"]);

    // Greedy where the optimum was promised.
    let spec = PackerSpec {
        optimal: true,
        ..PackerSpec::new(&WordCounter)
    };
    let greedy = config(SelectionStrategy::Greedy, PackOrder::Descending);
    let broken = broken_rules(&Broken::new(Fault::None, greedy), &spec, &knapsack_fixture());
    assert_eq!(broken, ["optimal_matches_brute_force"]);

    // No cap where a cap of one chunk per document was promised.
    let spec = PackerSpec {
        max_per_document: Some(1),
        ..PackerSpec::new(&WordCounter)
    };
    let uncapped = config(SelectionStrategy::Greedy, PackOrder::Descending);
    let broken = broken_rules(&Broken::new(Fault::None, uncapped), &spec, &fixture());
    assert_eq!(broken, ["within_document_cap"]);

    // A rank-based order, declared as following the input, still passes (the promise is weaker);
    // an input order declared as rank-based does not.
    let input = config(SelectionStrategy::Greedy, PackOrder::Input);
    let broken = broken_rules(
        &Broken::new(Fault::None, input),
        &PackerSpec::new(&WordCounter),
        &fixture(),
    );
    assert_eq!(broken, ["independent_of_input_order"]);
}

#[test]
fn the_dedup_reference_follows_the_documented_definition() {
    let chunks = vec![
        chunk("a", "d", "Alpha beta gamma delta", 0.9, 4),
        chunk("b", "d", "alpha, BETA gamma delta!", 0.5, 4),
        chunk("c", "d", "alpha beta gamma delta epsilon", 0.8, 5),
        chunk("e", "d", "...", 0.1, 1),
        chunk("f", "d", "???", 0.2, 1),
    ];
    let verdicts = crate::reference::dedup(
        &chunks,
        Dedup::Near {
            threshold: 0.6,
            shingle_size: 2,
        },
    );
    assert_eq!(verdicts[0], None);
    assert_eq!(verdicts[1], Some(DropReason::ExactDuplicate { of: "a".into() }));
    // {ab, bg, gd} vs {ab, bg, gd, de}: 3 / 4.
    assert_eq!(
        verdicts[2],
        Some(DropReason::NearDuplicate {
            of: "a".into(),
            similarity: 0.75
        })
    );
    // Texts without words normalise to "" and are exact duplicates of each other, never near ones.
    assert_eq!(verdicts[3], Some(DropReason::ExactDuplicate { of: "f".into() }));
    assert_eq!(verdicts[4], None);
}

#[test]
fn context_packer_passes_on_the_corpus_and_generated_cases() {
    let docs = corpus::markdown_files(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs")).unwrap();
    assert!(docs.len() >= 5, "the repository's docs are the corpus");
    let mut cases: Vec<PackerCase> = Vec::new();
    for doc in docs.iter().take(2) {
        let text = String::from_utf8_lossy(&doc.bytes);
        let chunks = corpus::chunks_from_markdown(&doc.name, &text, "acme", true);
        cases.push(PackerCase::new(&doc.name, RequestContext::local("acme"), chunks, 300));
    }
    cases.extend(corpus::packer_edge_cases(200));
    cases.extend(generate::sample(generate::packer_case(), 40, 7));
    let mut summary = Summary::new();
    for (strategy, order, dedup) in [
        (SelectionStrategy::Greedy, PackOrder::LostInMiddle, None),
        (SelectionStrategy::Knapsack, PackOrder::Input, Some(0.5)),
        (SelectionStrategy::Optimal, PackOrder::Sides, Some(0.8)),
    ] {
        let config = config(strategy, order.clone())
            .to_builder()
            .with_jaccard_threshold(dedup)
            .with_shingle_size(3)
            .build()
            .unwrap();
        let spec = PackerSpec {
            dedup: dedup.map_or(Dedup::Exact, |threshold| Dedup::Near {
                threshold,
                shingle_size: 3,
            }),
            order_follows_input: order == PackOrder::Input,
            optimal: strategy == SelectionStrategy::Optimal,
            ..PackerSpec::new(&WordCounter)
        };
        let packer = packer(config);
        let run = |ctx: &RequestContext, chunks: Vec<Chunk>, budget: i64| packer.pack_blocking(ctx, chunks, budget);
        // The borrowing entry point must keep every rule too.
        let borrowed =
            |ctx: &RequestContext, chunks: Vec<Chunk>, budget: i64| packer.pack_borrowed(ctx, &chunks, budget);
        for case in &cases {
            summary.add(&format!("{strategy}/{order}"), &check_packer(&run, &spec, case));
            summary.add(
                &format!("{strategy}/{order} borrowed"),
                &check_packer(&borrowed, &spec, case),
            );
        }
    }
    assert!(summary.passed(), "{summary}");
    let optimal = summary
        .rows()
        .iter()
        .find(|r| r.rule == "optimal_matches_brute_force")
        .map_or(0, |r| r.cases);
    assert!(optimal >= 20, "brute force ran on {optimal} cases");
}
