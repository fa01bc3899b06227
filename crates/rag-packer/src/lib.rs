//! Token-budget context packing for ragctl: the step between "the retriever returned these chunks"
//! and "this is the context of the prompt".
//!
//! [`ContextPacker`] runs one pipeline, each stage a module of pure functions you can also call on
//! their own:
//!
//! 0. Admission: tenant, then access labels (the chunks the principal may not see are removed:
//!    nothing after this is computed from them), then, given the query
//!    ([`PackerConfigBuilder::with_query`]), [`score_missing`] over the visible chunks.
//! 1. [`validate`](chunk_tokens): ids, scores, token counts (cached or counted).
//! 2. Pinned chunks (system prompt, user question) first, always packed.
//! 3. [`rank_order`]: score descending, ties by id.
//! 4. [`hash_dedup`]: exact duplicates of the [normalised](normalise) text.
//! 5. [`jaccard_dedup`]: near duplicates by word [shingles], exact yet indexed, approximate past a
//!    work bound (opt-in).
//! 6. [`fit_to_budget`], [`knapsack_select`] (under the rank prior, also compared with greedy's
//!    first fit) or [`optimal_select`], under an optional per-document cap.
//! 7. [`lost_in_middle_order`], [`descending_order`], [`ascending_order`], [`input_order`],
//!    [`reverse_order`] or [`sides_order`].
//! 8. [`detect_conflicts`]: numeric disagreements and trust mismatches, advisory.
//!
//! The result, a [`PackedContext`](rag_core::PackedContext), accounts for every input chunk: packed,
//! or dropped with its reason. [`bm25_scores`] and [`bm25_chunk_scores`] are the BM25 that
//! [`score_missing`] applies to chunks that arrive without a score.
//!
//! The [`Repacker`] is the lighter alternative: PACK against a size limit (truncate, greedy or
//! knapsack, optionally in batches), ORDER (forward, reverse, sides), SHAPE (chunks or rendered
//! context strings).
//!
//! What this crate is not: a retriever or reranker (it takes scores as given), a storage client (a
//! chunk known only by its `content_ref` must carry its `token_count`; see ADR 0001), or a prompt
//! renderer beyond the simple templates of the [`Repacker`].
//!
//! ```
//! use rag_core::{Chunk, PackOrder, RequestContext, SelectionStrategy};
//! use rag_packer::{ContextPacker, PackerConfig};
//!
//! let ctx = RequestContext::local("acme");
//! let mut chunks = Vec::new();
//! for (id, text, score) in [
//!     ("a", "Cross-encoders rerank retrieved passages.", 0.9),
//!     ("b", "MMR trades relevance against diversity.", 0.7),
//!     ("c", "Cross-encoders rerank retrieved passages!", 0.6),
//! ] {
//!     let mut chunk = Chunk::with_content(id, "guide", "acme", text);
//!     chunk.score = Some(score);
//!     chunk.token_count = Some(8); // cached at ingest: no tokenizer is loaded
//!     chunks.push(chunk);
//! }
//! let packer = ContextPacker::new(
//!     PackerConfig::builder()
//!         .with_order(PackOrder::Descending)
//!         .with_strategy(SelectionStrategy::Knapsack)
//!         .build()?,
//! );
//! let packed = packer.pack_blocking(&ctx, chunks, 100)?;
//! let ids: Vec<&str> = packed.chunks.iter().map(|c| c.id.as_str()).collect();
//! assert_eq!(ids, ["a", "b"]);
//! assert_eq!(packed.tokens_used, 16);
//! assert_eq!(packed.dropped[0].reason.to_string(), "exact duplicate of a");
//! # Ok::<(), rag_core::PackerError>(())
//! ```

mod conflicts;
mod cut;
mod dedup;
mod diversity;
mod fences;
mod order;
mod pipeline;
mod rank;
mod render;
mod repacker;
mod score;
mod sections;
mod select;
mod setters;
mod validate;

pub use conflicts::{MIN_REPEATED_SENTENCE_WORDS, detect_conflicts};
pub use cut::best_part;
pub use dedup::{
    DedupVerdict, content_hash, hash_dedup, jaccard, jaccard_dedup, normalise, normalised_words, shingles,
};
pub use diversity::{MMR_WINDOW, mmr_order};
pub use fences::balanced_fences;
pub use order::{ascending_order, descending_order, input_order, lost_in_middle_order, reverse_order, sides_order};
pub use pipeline::{ContextPacker, MIN_CUT_TOKENS, PackerConfig, PackerConfigBuilder};
pub use rag_core::Order;
pub use rank::rank_order;
pub use render::{ContextConfig, ContextFormat, ContextFormatBuilder, MergedRun, breadcrumb, merge_adjacent};
pub use repacker::{
    BatchSize, RepackMethod, RepackMode, RepackOutput, RepackPack, Repacker, RepackerConfig, RepackerConfigBuilder,
    SizeFn,
};
pub use score::{
    BM25_B, BM25_K1, DEFAULT_FUSION, EMBED_BATCH, HEADING_WEIGHT, HybridScoring, MAX_QUERY_TERMS, bm25_chunk_scores,
    bm25_scores, cosine, fuse, score_missing, score_missing_hybrid, search_terms, stem,
};
pub use sections::{carried_headings, section_scores};
pub use select::{
    OPTIMAL_CELL_LIMIT, Objective, OptimalTooLarge, SelectionItem, cap_per_document, document_numbers, fit_to_budget,
    knapsack_select, optimal_select, rank_prior, selection_items,
};
pub use validate::chunk_tokens;
