//! Hybrid scoring through the packer: with an embedder, chunks without a score are ranked by BM25
//! fused with the cosine of their vectors and the question's, so a chunk that answers in other
//! words than the question's is packed.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use rag_contract::embedding::TinyEmbedder;
use rag_contract::testing::WordCounter;
use rag_core::{Chunk, EmbedError, Embedder, Embedding, Fusion, PackerError, RequestContext, Scoring};
use rag_packer::{ContextFormat, ContextPacker, PackerConfig, score_missing_hybrid};

/// Three chunks: the answer says "deprecated", never the question's "going away"; another shares
/// the question's word "option" and is about something else.
fn chunks() -> Vec<Chunk> {
    [
        ("answer", "The flag was deprecated in 2.0 and removed in 3.0."),
        ("decoy", "With this option, read the file from disk line by line."),
        ("other", "Streams pipe data in chunks."),
    ]
    .into_iter()
    .map(|(id, text)| {
        let mut chunk = Chunk::with_content(id, "guide", "acme", text);
        chunk.token_count = Some(10);
        chunk
    })
    .collect()
}

fn packer(embedder: Option<Arc<dyn Embedder>>, fusion: Fusion) -> ContextPacker {
    let config = PackerConfig::builder()
        .with_query(Some("is this option going away".into()))
        .with_token_counter(Arc::new(WordCounter))
        .with_embedder(embedder)
        .with_fusion(fusion)
        .with_conflicts(false)
        .build()
        .unwrap();
    ContextPacker::new(config)
}

fn packed_ids(packer: &ContextPacker, chunks: Vec<Chunk>, budget: i64) -> Vec<String> {
    let packed = packer
        .pack_blocking(&RequestContext::local("acme"), chunks, budget)
        .unwrap();
    packed.chunks.iter().map(|c| c.id.to_string()).collect()
}

const CONVEX: Fusion = Fusion::Convex { bm25_weight: 0.5 };

#[test]
fn the_answer_in_other_words_is_packed_with_an_embedder_and_not_without() {
    assert_eq!(packed_ids(&packer(None, CONVEX), chunks(), 10), ["decoy"]);
    let meaning_first = Fusion::Convex { bm25_weight: 0.3 };
    assert_eq!(
        packed_ids(&packer(Some(Arc::new(TinyEmbedder)), meaning_first), chunks(), 10),
        ["answer"]
    );
    assert_eq!(
        packed_ids(
            &packer(Some(Arc::new(TinyEmbedder)), Fusion::Convex { bm25_weight: 1.0 }),
            chunks(),
            10
        ),
        ["decoy"],
        "a weight of 1 is BM25 alone"
    );
    let rrf = Fusion::ReciprocalRank { k: 60 };
    let both = packed_ids(&packer(Some(Arc::new(TinyEmbedder)), rrf), chunks(), 20);
    assert!(
        both.contains(&"answer".to_owned()) && both.contains(&"decoy".to_owned()),
        "{both:?}"
    );
}

#[test]
fn the_result_says_how_each_chunk_was_scored() {
    let packer = packer(Some(Arc::new(TinyEmbedder)), CONVEX);
    let packed = packer
        .pack_blocking(&RequestContext::local("acme"), chunks(), 30)
        .unwrap();
    let Some(Scoring::Hybrid {
        chunks,
        model,
        embedded,
        fusion,
        ..
    }) = &packed.scoring
    else {
        panic!("{:?}", packed.scoring);
    };
    assert_eq!((*chunks, model.as_str(), *embedded, *fusion), (3, "tiny", 3, CONVEX));
    assert_eq!(packed.score_parts.len(), packed.chunks.len());
    for (chunk, parts) in packed.chunks.iter().zip(&packed.score_parts) {
        let parts = parts.unwrap();
        assert!(
            (0.0..=1.0).contains(&parts.bm25) && (-1.0..=1.0).contains(&parts.cosine),
            "{parts:?}"
        );
        if chunk.id.as_str() == "answer" {
            assert_eq!(parts.bm25, 0.0, "no query term in the answer");
            assert!(parts.cosine > 0.5);
        }
    }
    assert!(
        packed
            .scoring
            .unwrap()
            .to_string()
            .starts_with("hybrid: 0.5 x bm25 + 0.5 x cosine")
    );
}

#[test]
fn pre_embedded_chunks_pack_as_chunks_embedded_at_pack_time() {
    let mut embedded = chunks();
    for chunk in &mut embedded {
        let vector = TinyEmbedder
            .embed(&[chunk.embedding_text().as_str()])
            .unwrap()
            .remove(0);
        chunk.embedding = Some(Embedding::new("tiny", vector));
    }
    // Through JSON Lines, as `ragctl chunk --embedder` writes them.
    let lines: Vec<String> = embedded.iter().map(|c| serde_json::to_string(c).unwrap()).collect();
    let read: Vec<Chunk> = lines.iter().map(|l| serde_json::from_str(l).unwrap()).collect();
    let packer = packer(Some(Arc::new(TinyEmbedder)), CONVEX);
    let ctx = RequestContext::local("acme");
    let format = ContextFormat::default();
    let at_pack_time = packer.pack_context_blocking(&ctx, chunks(), 20, &format).unwrap();
    let pre = packer.pack_context_blocking(&ctx, read, 20, &format).unwrap();
    assert_eq!(pre.context, at_pack_time.context);
    assert_eq!(pre.effective_scores, at_pack_time.effective_scores);
    assert_eq!(pre.score_parts, at_pack_time.score_parts);
    assert!(matches!(pre.scoring, Some(Scoring::Hybrid { embedded: 0, .. })));
}

#[test]
fn a_vector_of_another_model_or_dimension_is_refused_naming_the_chunk() {
    let ctx = RequestContext::local("acme");
    let packer = packer(Some(Arc::new(TinyEmbedder)), CONVEX);
    let mut foreign = chunks();
    foreign[1].embedding = Some(Embedding::new("model2vec:0123456789ab", vec![0.5; 8]));
    let err = packer.pack_blocking(&ctx, foreign, 30).unwrap_err();
    assert_eq!(
        err.to_string(),
        "chunk decoy has an embedding made by model2vec:0123456789ab, the packer embeds with tiny: embed the \
         input with one model"
    );
    let mut short = chunks();
    short[2].embedding = Some(Embedding::new("tiny", vec![0.5; 3]));
    let err = packer.pack_blocking(&ctx, short, 30).unwrap_err();
    assert_eq!(
        err.to_string(),
        "chunk other has an embedding of 3 values, the embedder tiny makes 8"
    );
}

/// Fails, or breaks its contract, as an embedder behind a service or in Python can.
struct Broken(&'static str);

impl Embedder for Broken {
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        match self.0 {
            "fails" => Err(EmbedError::new("broken", "service unavailable")),
            "short" => Ok(vec![vec![1.0; 8]; texts.len().saturating_sub(1)]),
            _ => Ok(vec![vec![f32::NAN; 8]; texts.len()]),
        }
    }

    fn dimension(&self) -> usize {
        8
    }

    fn id(&self) -> &str {
        "broken"
    }
}

#[test]
fn an_embedder_that_fails_or_breaks_its_contract_is_an_error_not_a_panic() {
    let ctx = RequestContext::local("acme");
    for (how, message) in [
        (
            "fails",
            "embedding for hybrid scoring: embedder broken failed: service unavailable",
        ),
        (
            "short",
            "embedding for hybrid scoring: embedder broken failed: it returned 2 vectors for 3 texts",
        ),
        (
            "nan",
            "embedding for hybrid scoring: embedder broken failed: text 0: its vector holds a non-finite value",
        ),
    ] {
        let err = packer(Some(Arc::new(Broken(how))), CONVEX)
            .pack_blocking(&ctx, chunks(), 30)
            .unwrap_err();
        assert!(matches!(err, PackerError::Embedder { .. }));
        assert_eq!(err.to_string(), message);
    }
}

#[test]
fn given_scores_stand_and_the_embedder_is_not_asked() {
    let mut scored = chunks();
    for (i, chunk) in scored.iter_mut().enumerate() {
        chunk.score = Some(i as f64);
    }
    let hybrid = score_missing_hybrid("going away", &mut scored, &Broken("fails"), CONVEX).unwrap();
    assert_eq!(hybrid.scoring, Scoring::Given);
    assert!(hybrid.parts.is_empty());
    assert_eq!(scored[2].score, Some(2.0));
    assert!(scored.iter().all(|c| c.embedding.is_none()));
}

#[test]
fn a_fusion_weight_outside_zero_to_one_is_refused() {
    let err = PackerConfig::builder()
        .with_fusion(Fusion::Convex { bm25_weight: 1.5 })
        .build()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid packer configuration: the bm25 weight of the fusion must be in 0..=1, got 1.5"
    );
    assert!(
        PackerConfig::builder()
            .with_fusion(Fusion::ReciprocalRank { k: 0 })
            .build()
            .is_err()
    );
}

#[test]
fn packing_with_an_embedder_is_deterministic() {
    let packer = packer(Some(Arc::new(TinyEmbedder)), CONVEX);
    let ctx = RequestContext::local("acme");
    let format = ContextFormat::default();
    let first = packer.pack_context_blocking(&ctx, chunks(), 20, &format).unwrap();
    let second = packer.pack_context_blocking(&ctx, chunks(), 20, &format).unwrap();
    assert_eq!(first, second);
}

#[test]
fn diversity_packs_a_second_point_before_a_repeat_of_the_first() {
    // Given scores and vectors: "repeat" says what "first" says, "second" something else.
    let chunks = || -> Vec<Chunk> {
        [
            ("first", 0.9, vec![1.0, 0.0]),
            ("repeat", 0.8, vec![0.99, 0.1]),
            ("second", 0.5, vec![0.0, 1.0]),
        ]
        .into_iter()
        .map(|(id, score, vector)| {
            let mut chunk = Chunk::with_content(id, "guide", "acme", format!("text of {id}"));
            chunk.token_count = Some(10);
            chunk.score = Some(score);
            chunk.embedding = Some(Embedding::new("hand", vector));
            chunk
        })
        .collect()
    };
    let packer = |diversity: Option<f64>| {
        let config = PackerConfig::builder()
            .with_token_counter(Arc::new(WordCounter))
            .with_diversity(diversity)
            .with_conflicts(false)
            .build()
            .unwrap();
        ContextPacker::new(config)
    };
    let mut plain = packed_ids(&packer(None), chunks(), 20);
    plain.sort();
    assert_eq!(
        plain,
        ["first", "repeat"],
        "without diversity: the two best, one point twice"
    );
    let packed = packer(Some(0.5))
        .pack_blocking(&RequestContext::local("acme"), chunks(), 20)
        .unwrap();
    let mut diverse: Vec<&str> = packed.chunks.iter().map(|c| c.id.as_str()).collect();
    diverse.sort_unstable();
    assert_eq!(diverse, ["first", "second"]);
    assert!(
        packed.effective_scores.contains(&0.5),
        "second keeps its score: nothing like it was ranked before it"
    );
    let err = PackerConfig::builder().with_diversity(Some(-0.5)).build().unwrap_err();
    assert!(
        err.to_string()
            .contains("diversity weight must be a finite number of at least 0")
    );
}
