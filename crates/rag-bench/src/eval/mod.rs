//! The retrieval-quality evaluation behind `cargo xtask eval` (the `rag-eval` binary): question
//! files with gold answers as byte spans of real documentation, the answer-in-context metric, and
//! the report.
//!
//! The binary runs the `ragctl` executable it is given, as a user would; this module holds what
//! does not depend on a process, so it is tested on its own.

pub mod answer;
pub mod questions;
pub mod report;
