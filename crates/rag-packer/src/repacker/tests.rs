//! The Repacker's tests: each stage, and the configurations it refuses.

use std::sync::Arc;

use rag_contract::testing::WordCounter;

use super::*;
use crate::ContextConfig;

fn chunks(texts: &[&str]) -> Vec<Chunk> {
    texts
        .iter()
        .enumerate()
        .map(|(i, t)| Chunk::with_content(format!("c{i}"), "d", "t", *t))
        .collect()
}

fn ids(output: &RepackOutput) -> Vec<Vec<String>> {
    let names = |batch: &[Chunk]| batch.iter().map(|c| c.id.to_string()).collect::<Vec<_>>();
    match output {
        RepackOutput::Chunks(batch) => vec![names(batch)],
        RepackOutput::Batches(batches) => batches.iter().map(|b| names(b)).collect(),
        other => panic!("not chunks: {other:?}"),
    }
}

#[test]
fn defaults_return_the_chunks_unchanged() {
    let repacker = RepackerConfig::builder().build().map(Repacker::new).unwrap();
    let out = repacker.repack(chunks(&["a", "b", "c"])).unwrap();
    assert_eq!(ids(&out), [["c0", "c1", "c2"]]);
}

#[test]
fn pack_strategies_against_the_size_limit() {
    // Sizes 4, 6, 2, 3 characters; limit 9.
    let input = || chunks(&["aaaa", "bbbbbb", "cc", "ddd"]);
    let with = |pack| {
        RepackerConfig::builder()
            .with_size_limit(Some(9))
            .with_pack(pack)
            .build()
            .map(Repacker::new)
            .unwrap()
    };
    let truncate = with(RepackPack::Truncate).repack(input()).unwrap();
    assert_eq!(
        ids(&truncate),
        [["c0"]],
        "the prefix stops at the first chunk that does not fit"
    );
    let greedy = with(RepackPack::Greedy).repack(input()).unwrap();
    assert_eq!(ids(&greedy), [["c0", "c2", "c3"]]);
    let mut scored = input();
    for (chunk, score) in scored.iter_mut().zip([0.1, 0.9, 0.1, 0.5]) {
        chunk.score = Some(score);
    }
    let knapsack = with(RepackPack::Knapsack).repack(scored).unwrap();
    assert_eq!(
        ids(&knapsack),
        [["c1", "c3"]],
        "score 1.4 in 9 characters, kept in input order"
    );
}

#[test]
fn methods_order_each_batch() {
    let input = || chunks(&["1", "2", "3", "4", "5"]);
    let with = |method| {
        RepackerConfig::builder()
            .with_method(method)
            .with_batch_size(BatchSize::Count(4))
            .build()
            .map(Repacker::new)
            .unwrap()
    };
    assert_eq!(
        ids(&with(RepackMethod::Reverse).repack(input()).unwrap()),
        [vec!["c3", "c2", "c1", "c0"], vec!["c4"]]
    );
    assert_eq!(
        ids(&with(RepackMethod::Sides).repack(input()).unwrap()),
        [vec!["c1", "c3", "c2", "c0"], vec!["c4"]]
    );
}

#[test]
fn count_batches_are_packed_one_by_one_and_auto_is_next_fit() {
    let repack = |batch_size, size_limit| {
        RepackerConfig::builder()
            .with_batch_size(batch_size)
            .with_size_limit(Some(size_limit))
            .build()
            .map(Repacker::new)
            .unwrap()
            .repack(chunks(&["aaaa", "bbbb", "cc", "dddddd", "e"]))
    };
    let counted = repack(BatchSize::Count(2), 5).unwrap();
    assert_eq!(ids(&counted), [vec!["c0"], vec!["c2"], vec!["c4"]]);
    let auto = repack(BatchSize::Auto, 8).unwrap();
    assert_eq!(ids(&auto), [vec!["c0", "c1"], vec!["c2", "c3"], vec!["c4"]]);
    let err = repack(BatchSize::Auto, 5).unwrap_err();
    assert_eq!(
        err.to_string(),
        "chunk c3 has size 6, more than the size limit of 5: it fits no batch"
    );
}

#[test]
fn auto_batches_sizes_near_the_top_of_the_range_without_overflow() {
    // Two chunks of 2^63 against the largest limit: together they exceed it (2^64 > 2^64 - 1), so
    // they go into two batches; a wrapping sum (2^63 + 2^63 = 0) would put them in one.
    let half = 1usize << (usize::BITS - 1);
    let repacker = RepackerConfig::builder()
        .with_batch_size(BatchSize::Auto)
        .with_size_limit(Some(usize::MAX))
        .with_size_fn(SizeFn::custom(move |_| half))
        .build()
        .map(Repacker::new)
        .unwrap();
    let out = repacker.repack(chunks(&["a", "b", "c"])).unwrap();
    assert_eq!(ids(&out), [vec!["c0"], vec!["c1"], vec!["c2"]]);
    let fits = RepackerConfig::builder()
        .with_batch_size(BatchSize::Auto)
        .with_size_limit(Some(usize::MAX))
        .with_size_fn(SizeFn::custom(
            move |c| if c.id.as_str() == "c0" { half } else { half - 1 },
        ))
        .build()
        .map(Repacker::new)
        .unwrap();
    assert_eq!(
        ids(&fits.repack(chunks(&["a", "b", "c"])).unwrap()),
        [vec!["c0", "c1"], vec!["c2"]]
    );
}

#[test]
fn context_mode_renders_and_joins() {
    let mut input = chunks(&["first", "second"]);
    input[0].score = Some(0.5);
    input[0].metadata.insert("page".into(), serde_json::json!(3));
    let repacker = RepackerConfig::builder()
        .with_mode(RepackMode::Context)
        .with_context(Some(
            ContextConfig::new("<{id} score={score} page={metadata.page}>{{{content}}}").unwrap(),
        ))
        .with_delimiter("\n")
        .build()
        .map(Repacker::new)
        .unwrap();
    assert_eq!(
        repacker.repack(input.clone()).unwrap(),
        RepackOutput::Context("<c0 score=0.5 page=3>{first}\n<c1 score= page=>{second}".into())
    );
    let batched = RepackerConfig::builder()
        .with_mode(RepackMode::Context)
        .with_batch_size(BatchSize::Count(1))
        .build()
        .map(Repacker::new)
        .unwrap();
    assert_eq!(
        batched.repack(input).unwrap(),
        RepackOutput::Contexts(vec!["first".into(), "second".into()])
    );
}

#[test]
fn size_functions() {
    let chunk = Chunk::with_content("c", "d", "t", "héllo wörld");
    assert_eq!(SizeFn::Chars.size(&chunk).unwrap(), 11);
    assert_eq!(SizeFn::Tokens(Arc::new(WordCounter)).size(&chunk).unwrap(), 2);
    assert_eq!(SizeFn::custom(|c| c.id.as_str().len() * 10).size(&chunk).unwrap(), 10);
    let remote = Chunk::with_content_ref("r", "d", "t", "s3://x");
    assert_eq!(
        SizeFn::Chars.size(&remote).unwrap_err(),
        RepackError::MissingContent { chunk_id: "r".into() }
    );
    assert_eq!(
        SizeFn::Tokens(Arc::new(WordCounter)).size(&remote).unwrap_err(),
        RepackError::MissingTokenCount { chunk_id: "r".into() }
    );
}

#[test]
fn settings_that_depend_on_each_other_are_checked_together_whatever_the_order() {
    let limit_last = RepackerConfig::builder()
        .with_batch_size(BatchSize::Auto)
        .with_size_limit(Some(5));
    let limit_first = RepackerConfig::builder()
        .with_size_limit(Some(5))
        .with_batch_size(BatchSize::Auto);
    for builder in [limit_last, limit_first] {
        let config = builder.build().unwrap();
        assert_eq!((config.batch_size(), config.size_limit()), (BatchSize::Auto, Some(5)));
    }
}

#[test]
fn invalid_combinations_are_errors() {
    let cases = [
        (
            RepackerConfig::builder().with_batch_size(BatchSize::Auto),
            "batch_size auto needs a size_limit",
        ),
        (
            RepackerConfig::builder().with_batch_size(BatchSize::Count(0)),
            "batch_size must be at least 1",
        ),
        (
            RepackerConfig::builder().with_size_limit(Some(0)),
            "size_limit must be at least 1",
        ),
        (
            RepackerConfig::builder().with_pack(RepackPack::Greedy),
            "pack greedy or knapsack needs a size_limit",
        ),
        (
            RepackerConfig::builder()
                .with_batch_size(BatchSize::Auto)
                .with_size_limit(Some(3))
                .with_pack(RepackPack::Knapsack),
            "pack has no effect with batch_size auto: every chunk is placed in some batch",
        ),
        (
            RepackerConfig::builder().with_context(Some(ContextConfig::new("{content}").unwrap())),
            "a context template needs mode context",
        ),
    ];
    for (builder, message) in cases {
        assert_eq!(
            builder.build().unwrap_err().to_string(),
            format!("invalid repacker configuration: {message}")
        );
    }
    for (template, message) in [
        ("{oops}", "unknown placeholder {oops}"),
        ("{content", "unclosed placeholder {content"),
        ("a } b", "unmatched '}'"),
        ("{metadata.}", "unknown placeholder {metadata.}"),
    ] {
        let err = ContextConfig::new(template).unwrap_err().to_string();
        assert!(err.contains(message), "{err}");
    }
}
