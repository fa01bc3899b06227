//! The orchestrator's own tests: stage interplay, accounting, configuration.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use rag_core::{
    ChunkId, ConflictKind, DropReason, PackOrder, SelectionStrategy, TokenCounter, TokenizerError, TrustLevel,
};

use super::*;
use crate::Order;

/// Counts words, and how often it was asked to.
#[derive(Default)]
struct Words(AtomicUsize);

impl TokenCounter for Words {
    fn count(&self, text: &str) -> Result<usize, TokenizerError> {
        self.0.fetch_add(1, Ordering::Relaxed);
        Ok(text.split_whitespace().count())
    }

    fn name(&self) -> &str {
        "words"
    }
}

fn config() -> PackerConfig {
    PackerConfig {
        token_counter: Arc::new(Words::default()),
        ..PackerConfig::default()
    }
}

fn chunk(id: &str, doc: &str, text: &str, score: f64) -> Chunk {
    let mut c = Chunk::with_content(id, doc, "acme", text);
    c.score = Some(score);
    c
}

/// A pinned chunk: packed first, whatever its score.
fn pinned(id: &str, doc: &str, text: &str) -> Chunk {
    let mut c = chunk(id, doc, text, 0.0);
    c.pinned = true;
    c
}

fn ids(chunks: &[Chunk]) -> Vec<&str> {
    chunks.iter().map(|c| c.id.as_str()).collect()
}

/// Each dropped chunk as `id: reason`, in the order the result lists them.
fn drop_reasons(packed: &PackedContext) -> Vec<String> {
    packed
        .dropped
        .iter()
        .map(|d| format!("{}: {}", d.id, d.reason))
        .collect()
}

fn pack(config: PackerConfig, chunks: Vec<Chunk>, budget: i64) -> Result<PackedContext, PackerError> {
    ContextPacker::new(config).pack_blocking(&RequestContext::local("acme"), chunks, budget)
}

#[test]
fn a_validation_error_in_a_large_input_is_reported() {
    // Over 256 KiB of text, so dedup is prepared on the pool while validation runs.
    let mut chunks: Vec<Chunk> = (0..3000)
        .map(|i| {
            chunk(
                &format!("c{i}"),
                "d",
                &format!("{i} {}", "filler words here ".repeat(6)),
                0.5,
            )
        })
        .collect();
    chunks[2500].tenant_id = "other".into();
    let packer = ContextPacker::new(PackerConfig {
        jaccard_threshold: Some(0.8),
        ..config()
    });
    let err = packer
        .pack_borrowed(&RequestContext::local("acme"), &chunks, 100)
        .unwrap_err();
    assert!(
        matches!(err, PackerError::ForeignTenant { ref chunk_id, .. } if chunk_id.as_str() == "c2500"),
        "{err}"
    );
}

#[test]
fn borrowed_and_owned_packs_are_identical() {
    let mut chunks: Vec<Chunk> = (0..60)
        .map(|i| {
            let text = format!("shared words here and there number {} of {}", i % 9, i % 4);
            chunk(
                &format!("c{i}"),
                &format!("d{}", i % 5),
                &text,
                f64::from(i % 13) / 13.0,
            )
        })
        .collect();
    chunks[7].pinned = true;
    for (strategy, cap, threshold) in [
        (SelectionStrategy::Greedy, None, None),
        (SelectionStrategy::Knapsack, Some(2), Some(0.6)),
        (SelectionStrategy::Optimal, Some(1), Some(0.9)),
    ] {
        let packer = ContextPacker::new(PackerConfig {
            strategy,
            max_per_document: cap,
            jaccard_threshold: threshold,
            ..config()
        });
        let ctx = RequestContext::local("acme");
        let borrowed = packer.pack_borrowed(&ctx, &chunks, 60).unwrap();
        let owned = packer.pack_blocking(&ctx, chunks.clone(), 60).unwrap();
        assert_eq!(borrowed, owned, "{strategy:?}");
        assert_eq!(owned.chunks.len() + owned.dropped.len(), chunks.len());
    }
}

#[test]
fn pinned_first_then_lost_in_middle_with_every_drop_explained() {
    let chunks = vec![
        chunk("c5", "d", "five five five five five", 0.5),
        chunk("c1", "d", "one one", 0.9),
        pinned("sys", "prompt", "You answer from the context only."),
        chunk("c2", "d", "two two", 0.8),
        chunk("dup", "e", "Two, TWO!", 0.85),
        chunk("c3", "e", "three three", 0.7),
        chunk("c4", "e", "four four", 0.6),
        chunk("big", "f", "a b c d e f g h i j k l m n o p q r s t", 0.65),
    ];
    let packed = pack(config(), chunks, 18).unwrap();
    // Pinned: 6 tokens; room 12. Rank: c1 .9, dup .85, c2 .8, c3 .7, big .65, c4 .6, c5 .5.
    // dup is kept, c2 is its exact duplicate; c1 dup c3 c4 fit (8), big (20) and c5 (5) do not.
    assert_eq!(ids(&packed.chunks), ["sys", "c1", "c3", "c4", "dup"]);
    assert_eq!(packed.tokens_used, 14);
    assert_eq!(packed.tokens_budget, 18);
    assert_eq!(packed.tokenizer, "words");
    assert_eq!(
        drop_reasons(&packed),
        [
            "c2: exact duplicate of dup",
            "big: over budget (20 tokens did not fit)",
            "c5: over budget (5 tokens did not fit)"
        ]
    );
    assert_eq!(packed.strategy, SelectionStrategy::Greedy);
}

#[test]
fn every_order_keeps_pinned_first() {
    let chunks = || {
        vec![
            chunk("b", "d", "bravo", 0.8),
            pinned("q", "user", "the question"),
            chunk("a", "d", "alpha", 0.9),
            chunk("d", "d", "delta", 0.6),
            chunk("c", "d", "charlie", 0.7),
        ]
    };
    let expect = [
        (PackOrder::Descending, ["q", "a", "b", "c", "d"]),
        (PackOrder::Ascending, ["q", "d", "c", "b", "a"]),
        (PackOrder::LostInMiddle, ["q", "a", "c", "d", "b"]),
        (PackOrder::Input, ["q", "b", "a", "d", "c"]),
        (PackOrder::Reverse, ["q", "c", "d", "a", "b"]),
        (PackOrder::Sides, ["q", "b", "d", "c", "a"]),
    ];
    for (order, want) in expect {
        let packed = pack(
            PackerConfig {
                order: order.clone(),
                ..config()
            },
            chunks(),
            100,
        )
        .unwrap();
        assert_eq!(ids(&packed.chunks), want, "{order}");
        assert_eq!(packed.order, order);
    }
}

#[test]
fn validation_errors_name_the_chunk() {
    let foreign = Chunk::with_content("x", "d", "globex", "text");
    let err = pack(config(), vec![chunk("a", "d", "ok", 1.0), foreign], 10).unwrap_err();
    assert_eq!(
        err.to_string(),
        "chunk x belongs to tenant globex, not to the request's tenant acme"
    );
    for budget in [0, -5] {
        assert_eq!(
            pack(config(), vec![], budget).unwrap_err(),
            PackerError::InvalidBudget { budget }
        );
    }
    let remote = Chunk::with_content_ref("r", "d", "acme", "s3://b/r");
    assert_eq!(
        pack(config(), vec![remote], 10).unwrap_err(),
        PackerError::MissingTokenCount { chunk_id: "r".into() }
    );
    assert_eq!(
        pack(config(), vec![chunk("e", "d", "  ", 1.0)], 10).unwrap_err(),
        PackerError::ZeroTokens { chunk_id: "e".into() }
    );
    let err = pack(config(), vec![chunk("n", "d", "x", f64::NAN)], 10).unwrap_err();
    assert!(matches!(err, PackerError::NonFiniteScore { ref chunk_id, .. } if chunk_id.as_str() == "n"));
    assert_eq!(
        pack(config(), vec![chunk("a", "d", "x", 1.0), chunk("a", "d", "y", 1.0)], 10).unwrap_err(),
        PackerError::DuplicateChunkId { chunk_id: "a".into() }
    );
    assert_eq!(
        pack(config(), vec![pinned("p", "d", "one two three")], 2).unwrap_err(),
        PackerError::PinnedOverBudget {
            pinned_tokens: 3,
            budget: 2
        }
    );
}

#[test]
fn invalid_configurations_are_refused() {
    for (builder, message) in [
        (
            config().to_builder().with_jaccard_threshold(Some(0.0)),
            "invalid packer configuration: jaccard threshold must be in (0, 1], got 0",
        ),
        (
            config().to_builder().with_shingle_size(0),
            "invalid packer configuration: shingle size must be at least 1",
        ),
        (
            config().to_builder().with_max_per_document(Some(0)),
            "invalid packer configuration: max_per_document must be at least 1",
        ),
        (
            config().to_builder().with_relevance_floor(Some(f64::NAN)),
            "invalid packer configuration: relevance floor must be a finite number, got NaN",
        ),
    ] {
        assert_eq!(builder.build().unwrap_err().to_string(), message);
    }
}

#[test]
fn settings_that_depend_on_each_other_are_checked_together_whatever_the_order() {
    // The near-dedup threshold is checked against the shingle size: setting the threshold first
    // and the size after gives the same configuration, and the same refusal, as the other order.
    let threshold_first = config()
        .to_builder()
        .with_jaccard_threshold(Some(0.5))
        .with_shingle_size(3);
    let size_first = config()
        .to_builder()
        .with_shingle_size(3)
        .with_jaccard_threshold(Some(0.5));
    let (a, b) = (threshold_first.build().unwrap(), size_first.build().unwrap());
    assert_eq!(
        (a.jaccard_threshold(), a.shingle_size()),
        (b.jaccard_threshold(), b.shingle_size())
    );
    let zero_after = config()
        .to_builder()
        .with_jaccard_threshold(Some(0.5))
        .with_shingle_size(0);
    assert_eq!(
        zero_after.build().unwrap_err().to_string(),
        "invalid packer configuration: shingle size must be at least 1"
    );
}

#[test]
fn cached_token_counts_never_call_the_counter() {
    let counter = Arc::new(Words::default());
    let config = PackerConfig {
        token_counter: counter.clone(),
        ..PackerConfig::default()
    };
    let mut a = chunk("a", "d", "some text here", 1.0);
    a.token_count = Some(7);
    let mut remote = Chunk::with_content_ref("r", "d", "acme", "s3://b/r");
    remote.token_count = Some(3);
    let packed = pack(config.clone(), vec![a, remote], 10).unwrap();
    assert_eq!(packed.tokens_used, 10);
    assert_eq!(counter.0.load(Ordering::Relaxed), 0);
    // The default counter is lazy too: constructing the default config loads nothing.
    assert_eq!(PackerConfig::default().token_counter.name(), "tiktoken:cl100k_base");
}

#[test]
fn near_duplicates_name_the_kept_chunk_and_similarity() {
    let text = "alpha beta gamma delta epsilon zeta eta theta iota kappa";
    let chunks = vec![
        chunk("kept", "d", text, 0.9),
        chunk("near", "e", &format!("{text} lambda"), 0.8),
        chunk("other", "f", "something else entirely", 0.7),
    ];
    let config = PackerConfig {
        jaccard_threshold: Some(0.8),
        shingle_size: 3,
        ..config()
    };
    let packed = pack(config, chunks, 100).unwrap();
    assert_eq!(
        packed.dropped[0].reason,
        DropReason::NearDuplicate {
            of: "kept".into(),
            similarity: 8.0 / 9.0
        }
    );
    assert_eq!(packed.dropped_dedup(), 1);
}

#[test]
fn the_cap_holds_for_every_strategy_and_is_reported() {
    let chunks = || {
        vec![
            chunk("a1", "a", "x1", 0.9),
            chunk("a2", "a", "x2", 0.8),
            chunk("a3", "a", "x3", 0.7),
            chunk("b1", "b", "y1", 0.6),
        ]
    };
    for strategy in SelectionStrategy::ALL {
        let config = PackerConfig {
            strategy,
            max_per_document: Some(2),
            order: PackOrder::Descending,
            ..config()
        };
        let packed = pack(config, chunks(), 100).unwrap();
        assert_eq!(ids(&packed.chunks), ["a1", "a2", "b1"], "{strategy}");
        assert_eq!(
            packed.dropped[0].reason,
            DropReason::OverDocumentCap {
                document_id: "a".into(),
                cap: 2
            }
        );
        assert_eq!(packed.dropped_budget(), 1);
    }
}

#[test]
fn optimal_over_the_limit_falls_back_to_knapsack_and_says_so() {
    let chunks: Vec<Chunk> = (0..20)
        .map(|i| {
            let mut c = chunk(&format!("c{i:02}"), "d", &format!("text {i}"), 1.0);
            c.token_count = Some(1_000_000);
            c
        })
        .collect();
    let config = PackerConfig {
        strategy: SelectionStrategy::Optimal,
        ..config()
    };
    let packed = pack(config, chunks, 5_000_000).unwrap();
    assert_eq!(packed.strategy, SelectionStrategy::Knapsack);
    assert_eq!(packed.chunks.len(), 5);
    assert_eq!(packed.notes.len(), 1);
    assert!(packed.notes[0].starts_with("optimal selection fell back to knapsack: exact selection needs"));
}

#[test]
fn conflicts_are_reported_and_can_be_turned_off() {
    let mut forum = chunk("forum", "f", "Someone said the refund window is 90 days.", 0.5);
    forum.trust = TrustLevel::Untrusted;
    let chunks = || {
        vec![
            chunk("policy", "p", "The refund window is 30 days.", 0.9),
            forum.clone(),
        ]
    };
    let packed = pack(config(), chunks(), 100).unwrap();
    let kinds: Vec<ConflictKind> = packed.conflicts.iter().map(|c| c.kind).collect();
    assert_eq!(kinds, [ConflictKind::NumericDisagreement, ConflictKind::TrustMismatch]);
    assert_eq!(
        packed.conflicts[0].chunk_ids,
        [ChunkId::from("policy"), ChunkId::from("forum")]
    );
    let quiet = PackerConfig {
        detect_conflicts: false,
        ..config()
    };
    assert_eq!(pack(quiet, chunks(), 100).unwrap().conflicts, []);
}

#[test]
fn async_pack_equals_blocking_pack() {
    let packer = ContextPacker::new(config());
    let ctx = RequestContext::local("acme");
    let chunks = vec![chunk("a", "d", "one", 0.3), chunk("b", "d", "two", 0.4)];
    let blocking = packer.pack_blocking(&ctx, chunks.clone(), 10).unwrap();
    let asynchronous = pollster::block_on(packer.pack(&ctx, chunks, 10)).unwrap();
    assert_eq!(blocking, asynchronous);
}

mod properties {
    use proptest::prelude::*;
    use rag_contract::generate;
    use rag_contract::packer::{Dedup, PackerCase, PackerSpec, check_packer};
    use rag_contract::testing::WordCounter;

    use super::*;

    fn arb_chunk(i: usize) -> impl Strategy<Value = Chunk> {
        let texts = prop::sample::select(vec![
            "the refund window is 30 days",
            "The refund window is 14 days!",
            "the refund window is 30 days.",
            "alpha beta gamma delta epsilon",
            "alpha beta gamma delta epsilon zeta",
            "shipping is free above fifty euros",
            "rerankers score pairs jointly",
        ]);
        (
            texts,
            0usize..4,
            prop::sample::select(vec![0.0, 0.25, 0.5, 0.5, 0.9, -0.1]),
            1usize..30,
            prop::bool::weighted(0.1),
            prop::sample::select(vec![TrustLevel::Trusted, TrustLevel::Untrusted]),
        )
            .prop_map(move |(text, doc, score, tokens, pinned, trust)| {
                let mut c = Chunk::with_content(format!("c{i:02}"), format!("d{doc}"), "acme", text);
                c.score = Some(score);
                c.token_count = Some(tokens);
                c.pinned = pinned;
                c.trust = trust;
                c
            })
    }

    fn arb_chunks() -> impl Strategy<Value = Vec<Chunk>> {
        (0usize..16).prop_flat_map(|n| (0..n).map(arb_chunk).collect::<Vec<_>>())
    }

    fn arb_config() -> impl Strategy<Value = PackerConfig> {
        (
            prop::sample::select(PackOrder::ALL.to_vec()),
            prop::sample::select(SelectionStrategy::ALL.to_vec()),
            prop::option::of(prop::sample::select(vec![0.5, 0.8, 1.0])),
            1usize..4,
            prop::option::of(1usize..3),
        )
            .prop_map(
                |(order, strategy, jaccard_threshold, shingle_size, max_per_document)| PackerConfig {
                    order,
                    strategy,
                    jaccard_threshold,
                    shingle_size,
                    max_per_document,
                    token_counter: Arc::new(WordCounter),
                    ..PackerConfig::default()
                },
            )
    }

    /// What a packer so configured promises, for the contract suite.
    fn spec(config: &PackerConfig) -> PackerSpec<'static> {
        PackerSpec {
            dedup: config.jaccard_threshold.map_or(Dedup::Exact, |threshold| Dedup::Near {
                threshold,
                shingle_size: config.shingle_size,
            }),
            order_follows_input: matches!(config.order, PackOrder::Input | PackOrder::Reverse),
            optimal: config.strategy == SelectionStrategy::Optimal,
            max_per_document: config.max_per_document,
            ..PackerSpec::new(&WordCounter)
        }
    }

    // The rules themselves (budget, pinned first, accounting, cap, dedup, optimum, input order,
    // tenants) are the contract suite's; these properties draw the inputs and configurations.
    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        #[test]
        fn every_configuration_keeps_the_contract(
            chunks in arb_chunks(),
            foreign_at in prop::option::weighted(0.1, any::<prop::sample::Index>()),
            config in arb_config(),
            budget in 1i64..200,
        ) {
            let mut chunks = chunks;
            if let Some(at) = foreign_at {
                let foreign = Chunk::with_content("intruder", "d0", "globex", "the refund window is 30 days");
                chunks.insert(at.index(chunks.len() + 1), foreign);
            }
            let case = PackerCase::new("generated", RequestContext::local("acme"), chunks, budget);
            let packer = ContextPacker::new(config.clone());
            let report = check_packer(&packer, &spec(&config), &case);
            prop_assert!(report.passed(), "{report}");
        }

        #[test]
        fn the_contract_generators_cases_keep_it(case in generate::packer_case(), config in arb_config()) {
            let packer = ContextPacker::new(config.clone());
            let report = check_packer(&packer, &spec(&config), &case);
            prop_assert!(report.passed(), "{report}");
        }
    }
}

/// Reverses the rank order, or returns what it was built with.
struct Scripted(Option<Vec<usize>>);

impl Order for Scripted {
    fn name(&self) -> &str {
        "scripted"
    }

    fn arrange(&self, ranked: &[&Chunk]) -> Vec<usize> {
        self.0.clone().unwrap_or_else(|| (0..ranked.len()).rev().collect())
    }
}

#[test]
fn a_custom_order_arranges_the_selection_after_the_pinned_chunks() {
    let chunks = vec![
        chunk("b", "d", "bravo", 0.8),
        pinned("q", "user", "the question"),
        chunk("a", "d", "alpha", 0.9),
        chunk("c", "d", "charlie", 0.7),
    ];
    let reversed = config()
        .to_builder()
        .with_custom_order(Arc::new(Scripted(None)))
        .build()
        .unwrap();
    let packed = pack(reversed, chunks.clone(), 100).unwrap();
    assert_eq!(ids(&packed.chunks), ["q", "c", "b", "a"]);
    assert!(matches!(&packed.order, PackOrder::Custom(order) if order.name() == "scripted"));
    assert_eq!(packed.notes, ["custom order: scripted"]);

    for (result, message) in [
        (vec![0, 1], "custom order scripted: returned 2 positions for 3 chunks"),
        (vec![0, 0, 1], "custom order scripted: returned position 0 twice"),
        (vec![0, 1, 7], "custom order scripted: returned position 7, out of 0..3"),
    ] {
        let broken = config()
            .to_builder()
            .with_custom_order(Arc::new(Scripted(Some(result))))
            .build()
            .unwrap();
        assert_eq!(pack(broken, chunks.clone(), 100).unwrap_err().to_string(), message);
    }
}

#[test]
fn a_negative_score_that_fits_is_reported_as_such() {
    let chunks = || {
        vec![
            chunk("good", "d", "one two", 0.9),
            chunk("bad", "d", "three four", -0.4),
            chunk("huge", "d", &"word ".repeat(50), -0.1),
        ]
    };
    for strategy in [SelectionStrategy::Knapsack, SelectionStrategy::Optimal] {
        let packed = pack(
            config().to_builder().with_strategy(strategy).build().unwrap(),
            chunks(),
            10,
        )
        .unwrap();
        assert_eq!(ids(&packed.chunks), ["good"], "{strategy}");
        assert_eq!(
            drop_reasons(&packed),
            [
                "huge: over budget (50 tokens did not fit)",
                "bad: negative score (-0.4) would lower the total; it fitted but was left out",
            ],
            "{strategy}"
        );
        assert_eq!(packed.dropped_budget(), 1);
    }
    // Greedy takes what fits in rank order, whatever its sign: it maximises nothing.
    let greedy = pack(config(), chunks(), 10).unwrap();
    assert_eq!(ids(&greedy.chunks), ["good", "bad"]);
}

#[test]
fn the_default_packer_has_the_reference_defaults_and_packs_the_same_through_the_trait() {
    let packer = ContextPacker::default();
    assert_eq!(packer.config().order, PackOrder::LostInMiddle);
    assert_eq!(packer.config().strategy, SelectionStrategy::Greedy);
    assert_eq!(packer.config().jaccard_threshold, None);
    assert!(packer.config().detect_conflicts);
    assert_eq!(packer.config().token_counter.name(), "tiktoken:cl100k_base");

    let mut cached = chunk("a", "d", "cached count", 0.5);
    cached.token_count = Some(4);
    let ctx = RequestContext::local("acme");
    let through_trait: &dyn Packer = &packer;
    let via_trait = pollster::block_on(through_trait.pack(&ctx, vec![cached.clone()], 10)).unwrap();
    assert_eq!(via_trait, packer.pack_blocking(&ctx, vec![cached], 10).unwrap());
    assert_eq!(pollster::block_on(through_trait.health()), rag_core::Health::Healthy);
}

fn labelled(id: &str, text: &str, labels: &[&str]) -> Chunk {
    let mut c = chunk(id, "d", text, 0.9);
    c.acl_labels = labels.iter().map(|l| (*l).to_owned()).collect();
    c
}

#[test]
fn chunks_whose_labels_the_principal_lacks_are_never_packed_nor_named() {
    let secret = labelled("salary", "CEO salary is 12 million", &["hr-only"]);
    let mut broken_secret = labelled("broken", "also secret", &["hr-only", "exec"]);
    broken_secret.score = Some(f64::NAN); // invisible chunks are not examined, so this is no error
    let mut pinned_secret = labelled("sys-hr", "HR system prompt", &["hr-only"]);
    pinned_secret.pinned = true;
    let public = labelled("handbook", "Vacation is 25 days", &[]);
    let staff = labelled("policy", "Expenses need a receipt", &["staff"]);
    let chunks = vec![secret, broken_secret, pinned_secret, public, staff];

    let as_principal = |labels: &[&str]| {
        let ctx = RequestContext::new(
            "acme",
            rag_core::Principal {
                id: "u".into(),
                acl_labels: labels.iter().map(|l| (*l).to_owned()).collect(),
            },
        );
        ContextPacker::new(config())
            .pack_blocking(&ctx, chunks.clone(), 100)
            .unwrap()
    };
    let nobody = as_principal(&[]);
    assert_eq!(ids(&nobody.chunks), ["handbook"]);
    assert_eq!(nobody.hidden_by_acl, 4);
    assert_eq!(nobody.dropped, [], "hidden chunks are not in the drop list");
    let json = serde_json::to_string(&nobody).unwrap();
    for name in ["salary", "broken", "sys-hr", "policy", "hr-only", "CEO"] {
        assert!(!json.contains(name), "{name} leaked: {json}");
    }

    let hr = as_principal(&["hr-only", "staff"]);
    // Equal scores rank by id (handbook, policy, salary); lost in the middle puts the second last.
    assert_eq!(ids(&hr.chunks), ["sys-hr", "handbook", "salary", "policy"]);
    assert_eq!(hr.hidden_by_acl, 1, "broken also needs exec");
}

#[test]
fn counts_made_with_another_tokenizer_are_recounted_and_verification_finds_lies() {
    let mut ours = chunk("ours", "d", "one two three", 0.9);
    ours.token_count = Some(3);
    ours.tokenizer = Some("words".into());
    let mut theirs = chunk("theirs", "d", "four five six seven", 0.8);
    theirs.token_count = Some(1);
    theirs.tokenizer = Some("tiktoken:o200k_base".into());
    let mut liar = chunk("liar", "d", "eight nine ten eleven twelve", 0.7);
    liar.token_count = Some(1); // no provenance: trusted unless verified

    let packed = pack(config(), vec![ours.clone(), theirs.clone(), liar.clone()], 100).unwrap();
    assert_eq!(packed.tokens_used, 3 + 4 + 1);
    assert_eq!(
        packed.notes,
        ["recounted 1 token counts made with another tokenizer than words"]
    );

    let verified = pack(
        config().to_builder().with_verify_counts(true).build().unwrap(),
        vec![ours, theirs.clone(), liar],
        100,
    )
    .unwrap();
    assert_eq!(verified.tokens_used, 3 + 4 + 5);
    assert_eq!(
        verified.notes,
        [
            "recounted 1 token counts made with another tokenizer than words",
            "verified 2 token counts under words: 1 were wrong (first: chunk liar claimed 1, has 5)",
        ]
    );

    // A foreign count without content cannot be checked: refused, not trusted.
    let mut remote = Chunk::with_content_ref("remote", "d", "acme", "s3://b/r");
    remote.token_count = Some(10);
    remote.tokenizer = Some("tiktoken:o200k_base".into());
    assert_eq!(
        pack(config(), vec![remote], 100).unwrap_err().to_string(),
        "chunk remote has a token_count made with tiktoken:o200k_base, the packer counts with words, \
         and it has no content to count again"
    );
}

#[test]
fn a_rendered_context_holds_the_budget_whatever_the_counts_claim() {
    let mut huge = chunk("huge", "d", &"word ".repeat(10_006), 0.9);
    huge.token_count = Some(1);
    let small = chunk("small", "d", "a few words", 0.5);
    let packed = ContextPacker::new(config())
        .pack_context_blocking(
            &RequestContext::local("acme"),
            vec![huge, small],
            100,
            &crate::ContextFormat::default(),
        )
        .unwrap();
    assert_eq!(ids(&packed.chunks), ["small"]);
    assert_eq!(packed.context.as_deref(), Some("a few words"));
    assert_eq!(packed.tokens_used, 3);
    assert_eq!(
        packed.notes,
        [
            "1 token counts did not match their text (first: chunk huge claimed 1, has 10006); \
          the context was fitted on the real counts"
        ]
    );
}
