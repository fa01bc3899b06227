//! A token counter that fails (a remote or model-file tokenizer can) is an error naming the chunk,
//! from the packer and from the Repacker, never a panic.

use std::sync::Arc;

use rag_contract::testing::{SpyCounter, WordCounter};
use rag_core::RepackError;
use rag_core::{Chunk, PackerError, RequestContext, TokenizerError};
use rag_packer::{ContextPacker, PackerConfig, RepackPack, Repacker, RepackerConfig, SizeFn, chunk_tokens};

/// Counts words until its `fail_at`-th call (1-based), which fails.
fn fails_at(fail_at: usize) -> Arc<SpyCounter<WordCounter>> {
    Arc::new(SpyCounter::new(WordCounter).failing_at(fail_at))
}

/// Five chunks, the second with a cached count (never counted), the others counted.
fn chunks() -> Vec<Chunk> {
    (0..5)
        .map(|i| {
            let mut chunk = Chunk::with_content(format!("c{i}"), "doc", "acme", format!("chunk {i} has five words"));
            chunk.score = Some(1.0 - f64::from(i) / 10.0);
            if i == 1 {
                chunk.token_count = Some(5);
            }
            chunk
        })
        .collect()
}

#[test]
fn the_packer_refuses_with_the_counters_error_naming_the_chunk() {
    let ctx = RequestContext::local("acme");
    // Validation counts the chunks without a cached count in input order: c0, c2, c3, c4.
    for (fail_at, chunk_id) in [(1, "c0"), (2, "c2"), (3, "c3"), (4, "c4")] {
        let packer = |counter| ContextPacker::new(PackerConfig::builder().with_token_counter(counter).build().unwrap());
        let expected = PackerError::Tokenizer {
            chunk_id: chunk_id.into(),
            source: TokenizerError::new("flaky", format!("call {fail_at} refused")),
        };
        let err = packer(fails_at(fail_at))
            .pack_blocking(&ctx, chunks(), 100)
            .unwrap_err();
        assert_eq!(err, expected);
        assert_eq!(
            err.to_string(),
            format!("chunk {chunk_id}: tokenizer flaky failed: call {fail_at} refused")
        );
        let err = packer(fails_at(fail_at))
            .pack_borrowed(&ctx, &chunks(), 100)
            .unwrap_err();
        assert_eq!(err, expected);
    }
    // A counter that fails only after the chunks are counted changes nothing.
    let packer = ContextPacker::new(PackerConfig::builder().with_token_counter(fails_at(5)).build().unwrap());
    assert_eq!(packer.pack_blocking(&ctx, chunks(), 100).unwrap().chunks.len(), 5);
}

#[test]
fn chunk_tokens_names_the_chunk_and_keeps_the_counters_error() {
    let chunk = Chunk::with_content("c9", "doc", "acme", "some text");
    let err = chunk_tokens(&chunk, fails_at(1).as_ref()).unwrap_err();
    assert_eq!(
        err,
        PackerError::Tokenizer {
            chunk_id: "c9".into(),
            source: TokenizerError::new("flaky", "call 1 refused"),
        }
    );
    assert_eq!(
        std::error::Error::source(&err).map(ToString::to_string),
        Some("tokenizer flaky failed: call 1 refused".to_owned())
    );
}

#[test]
fn the_repacker_refuses_with_the_counters_error_naming_the_chunk() {
    let repacker = RepackerConfig::builder()
        .with_size_fn(SizeFn::Tokens(fails_at(2)))
        .with_size_limit(Some(100))
        .with_pack(RepackPack::Greedy)
        .build()
        .map(Repacker::new)
        .unwrap();
    let err = repacker.repack(chunks()).unwrap_err();
    // The Repacker measures in input order; c1 has a cached count, so the second count is c2's.
    assert_eq!(
        err,
        RepackError::Tokenizer {
            chunk_id: "c2".into(),
            source: TokenizerError::new("flaky", "call 2 refused"),
        }
    );
    assert_eq!(err.to_string(), "chunk c2: tokenizer flaky failed: call 2 refused");
}
