//! The benchmark harness of ragctl: deterministic synthetic inputs and the measuring helpers that
//! `cargo xtask bench` (the `rag-bench` binary) and the criterion micro-benchmarks share.
//!
//! [`eval`] is the retrieval-quality yardstick of `cargo xtask eval`; [`quality`] measures the
//! chunks themselves (where they start, cut fences, overlap), for the `chunk-quality` binary;
//! [`code_quality`] measures chunks of source code against its syntax tree, for `code-quality`.
//!
//! It is not a test suite: nothing here asserts a time. Figures are ratios measured in one run,
//! medians of several runs, CPU time next to wall time, because the machines it runs on are noisy.
//!
//! ```
//! let corpus = rag_bench::corpus::generate(64 * 1024);
//! assert!(corpus.iter().map(|f| f.text.len()).sum::<usize>() >= 64 * 1024);
//! assert_eq!(corpus, rag_bench::corpus::generate(64 * 1024)); // deterministic
//! ```

pub mod code_quality;
pub mod corpus;
pub mod eval;
pub mod measure;
pub mod packing;
pub mod quality;
