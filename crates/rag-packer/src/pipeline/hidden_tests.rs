//! The access rule: nothing is computed from what the principal cannot see. Each test puts hidden
//! chunks where one stage would notice them (BM25 statistics, the scoring rule, sections, dedup,
//! conflicts, notes) and checks that the result is the one without them.

use std::sync::Arc;

use rag_core::{Scoring, SelectionStrategy, TokenCounter, TokenizerError};

use super::*;
use crate::ContextFormat;

struct Words;

impl TokenCounter for Words {
    fn count(&self, text: &str) -> Result<usize, TokenizerError> {
        Ok(text.split_whitespace().count())
    }

    fn name(&self) -> &str {
        "words"
    }
}

fn config() -> PackerConfig {
    PackerConfig::builder()
        .with_token_counter(Arc::new(Words))
        .build()
        .unwrap()
}

fn unscored(id: &str, text: &str) -> Chunk {
    Chunk::with_content(id, "d", "acme", text)
}

fn scored(id: &str, text: &str, score: f64) -> Chunk {
    let mut c = unscored(id, text);
    c.score = Some(score);
    c
}

/// `chunk`, readable only with the label `board`.
fn board(mut chunk: Chunk) -> Chunk {
    chunk.acl_labels = vec!["board".into()];
    chunk
}

fn ids(chunks: &[Chunk]) -> Vec<&str> {
    chunks.iter().map(|c| c.id.as_str()).collect()
}

/// Packs `chunks` for a principal without labels in each of the packer's ways, checks that they
/// agree, and returns the `pack_context` result.
fn pack(config: &PackerConfig, chunks: &[Chunk], budget: i64) -> PackedContext {
    let packer = ContextPacker::new(config.clone());
    let ctx = RequestContext::local("acme");
    let owned = packer.pack_blocking(&ctx, chunks.to_vec(), budget).unwrap();
    let borrowed = packer.pack_borrowed(&ctx, chunks, budget).unwrap();
    assert_eq!(owned, borrowed, "pack_blocking and pack_borrowed agree");
    packer
        .pack_context_blocking(&ctx, chunks.to_vec(), budget, &ContextFormat::default())
        .unwrap()
}

/// Packs with and without the `hidden` chunks (interleaved with the visible ones) and asserts
/// that the results differ in `hidden_by_acl` only.
fn assert_hidden_change_nothing(config: &PackerConfig, visible: &[Chunk], hidden: &[Chunk], budget: i64) {
    let alone = pack(config, visible, budget);
    let mut mixed = Vec::new();
    for k in 0..visible.len().max(hidden.len()) {
        mixed.extend(hidden.get(k).cloned());
        mixed.extend(visible.get(k).cloned());
    }
    let mut with_hidden = pack(config, &mixed, budget);
    assert_eq!(with_hidden.hidden_by_acl, hidden.len());
    with_hidden.hidden_by_acl = 0;
    assert_eq!(with_hidden, alone, "{config:?}");
}

#[test]
fn hidden_chunks_do_not_shape_the_bm25_scores_of_visible_ones() {
    // Five hidden chunks saying "alpha" made "alpha" common and so worth less than "beta": `b`
    // outranked `a`, and `a`'s score moved off 1.0, which let a principal probe hidden words.
    let visible = [
        unscored("a", "alpha alpha alpha report"),
        unscored("b", "beta beta beta report"),
    ];
    let hidden: Vec<Chunk> = (1..=5)
        .map(|i| board(unscored(&format!("m{i}"), &format!("alpha merger note {i}"))))
        .collect();
    let config = config()
        .to_builder()
        .with_query(Some("alpha beta report".into()))
        .build()
        .unwrap();
    let packed = pack(&config, &[&hidden[..], &visible[..]].concat(), 6);
    assert_eq!(ids(&packed.chunks), ["a"], "a and b tie at 1.0; the id decides");
    assert_eq!(packed.chunks[0].score, Some(1.0));
    assert_eq!(
        packed.scoring,
        Some(Scoring::Bm25 {
            chunks: 2,
            terms: vec!["alpha".into(), "beta".into(), "report".into()]
        })
    );
    assert_hidden_change_nothing(&config, &visible, &hidden, 6);
}

#[test]
fn the_scoring_rule_is_chosen_from_the_visible_chunks() {
    // Visible chunks without scores beside a hidden one with a score: BM25 scores the visible
    // ones, as if the hidden one had never been sent (not "some chunks carry a score").
    let visible = [
        unscored("a", "refunds take thirty days"),
        unscored("b", "shipping is free"),
    ];
    let hidden = [board(scored("h", "refunds of the board", 0.9))];
    let config = config()
        .to_builder()
        .with_query(Some("refunds".into()))
        .build()
        .unwrap();
    let packed = pack(&config, &[&visible[..], &hidden[..]].concat(), 100);
    assert!(
        matches!(packed.scoring, Some(Scoring::Bm25 { chunks: 2, .. })),
        "{:?}",
        packed.scoring
    );
    assert_eq!(ids(&packed.chunks), ["a"], "b holds no query term");
    assert_hidden_change_nothing(&config, &visible, &hidden, 100);

    // And the reverse: scored visible chunks beside a hidden unscored one stay "given".
    let visible = [
        scored("a", "refunds take thirty days", 0.4),
        scored("b", "shipping is free", 0.2),
    ];
    let hidden = [board(unscored("h", "refunds of the board"))];
    let packed = pack(&config, &[&visible[..], &hidden[..]].concat(), 100);
    assert_eq!(packed.scoring, Some(Scoring::Given));
    assert_hidden_change_nothing(&config, &visible, &hidden, 100);
}

/// A heading-aware chunk of document `d`: `kind` heading or body, under `parent`.
fn section_chunk(id: &str, kind: &str, parent: Option<&str>, text: &str, score: f64) -> Chunk {
    let mut c = scored(id, text, score);
    c.metadata.insert("kind".into(), kind.into());
    c.parent_id = parent.map(Into::into);
    c
}

#[test]
fn a_hidden_heading_lifts_no_visible_chunk_and_carries_none() {
    // The hidden heading scores 0.9: visible, it would lift its child above `other`.
    let visible = [
        section_chunk("d#1", "body", Some("d#0"), "child text here", 0.1),
        section_chunk("d#5", "body", None, "other text here", 0.5),
        // A visible heading whose only child is hidden is no carried heading: it is packed alone.
        section_chunk("d#6", "heading", None, "lonely heading", 0.3),
    ];
    let hidden = [
        board(section_chunk("d#0", "heading", None, "secret heading", 0.9)),
        board(section_chunk("d#7", "body", Some("d#6"), "secret child", 0.8)),
    ];
    let packed = pack(&config(), &[&hidden[..], &visible[..]].concat(), 6);
    assert_eq!(ids(&packed.chunks), ["d#5", "d#6"], "the child ranks by its own 0.1");
    assert_hidden_change_nothing(&config(), &visible, &hidden, 6);
}

#[test]
fn a_hidden_duplicate_drops_no_visible_chunk() {
    // Better-ranked hidden copies, exact and near: visible, they would drop `a` as their duplicate.
    let visible = [
        scored("a", "the refund window is thirty days for every order", 0.5),
        scored("b", "shipping is free above fifty euros", 0.4),
    ];
    let hidden = [
        board(scored("h1", "The refund window is thirty days for every order!", 0.9)),
        board(scored(
            "h2",
            "the refund window is thirty days for every single order",
            0.8,
        )),
    ];
    let near = config()
        .to_builder()
        .with_jaccard_threshold(Some(0.5))
        .with_shingle_size(2)
        .build()
        .unwrap();
    let packed = pack(&near, &[&hidden[..], &visible[..]].concat(), 100);
    assert_eq!(ids(&packed.chunks), ["a", "b"]);
    assert_eq!(packed.dropped, []);
    assert_hidden_change_nothing(&near, &visible, &hidden, 100);
}

#[test]
fn a_hidden_chunk_raises_no_conflict_and_no_note() {
    let mut refunds = scored("a", "The refund window is 30 days.", 0.9);
    refunds.token_count = Some(6);
    let visible = [refunds];
    let mut recount = board(scored("h2", "four five six seven", 0.8));
    recount.token_count = Some(1);
    recount.tokenizer = Some("tiktoken:o200k_base".into());
    let hidden = [
        board(scored("h1", "The refund window is 14 days.", 0.9)),
        recount,
        // A repeated id among hidden chunks, and a broken score: never examined, so no error.
        board(scored("a", "secret text", f64::NAN)),
    ];
    let verify = config().to_builder().with_verify_counts(true).build().unwrap();
    let packed = pack(&verify, &[&hidden[..], &visible[..]].concat(), 100);
    assert_eq!((packed.conflicts.len(), ids(&packed.chunks)), (0, vec!["a"]));
    assert_eq!(
        packed.notes,
        ["verified 1 token counts under words: all were right"],
        "counts of the visible chunk only"
    );
    assert_hidden_change_nothing(&verify, &visible, &hidden, 100);
}

#[test]
fn hidden_chunks_change_nothing_whatever_the_configuration() {
    let visible: Vec<Chunk> = (0..12)
        .map(|i| {
            let kind = if i % 4 == 0 { "heading" } else { "body" };
            let parent = (i % 4 != 0).then(|| format!("d#{}", i - i % 4));
            let mut c = section_chunk(
                &format!("d#{i}"),
                kind,
                parent.as_deref(),
                &format!(
                    "section {} explains refunds within {} days and item {i}",
                    i / 4,
                    10 + i % 3
                ),
                f64::from(i % 5) / 5.0,
            );
            c.document_id = format!("doc{}", i % 3).into();
            c
        })
        .collect();
    let hidden: Vec<Chunk> = visible
        .iter()
        .map(|c| {
            let mut h = board(c.clone());
            h.id = format!("secret-{}", c.id).into();
            h.score = Some(1.0);
            h
        })
        .collect();
    let unscored_visible = without_scores(&visible);
    for strategy in SelectionStrategy::ALL {
        for (near, sections, cap) in [
            (None, true, None),
            (Some(0.4), false, Some(2)),
            (Some(0.8), true, Some(1)),
        ] {
            let config = config()
                .to_builder()
                .with_strategy(strategy)
                .with_jaccard_threshold(near)
                .with_section_aware(sections)
                .with_max_per_document(cap)
                .build()
                .unwrap();
            assert_hidden_change_nothing(&config, &visible, &hidden, 40);
            let query = config
                .to_builder()
                .with_query(Some("refunds in 11 days".into()))
                .build()
                .unwrap();
            assert_hidden_change_nothing(&query, &unscored_visible, &hidden, 40);
            assert_hidden_change_nothing(&query, &unscored_visible, &without_scores(&hidden), 40);
        }
    }
}

/// `chunks` without their scores (so that BM25 scores them, or would count them if it saw them).
fn without_scores(chunks: &[Chunk]) -> Vec<Chunk> {
    chunks
        .iter()
        .map(|c| {
            let mut u = c.clone();
            u.score = None;
            u
        })
        .collect()
}
