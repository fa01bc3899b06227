//! How the work over many texts is cut: into blocks of consecutive texts, spread over the rayon
//! pool from a size on. The per-text pass and the sample of common shingles cut the same way.

/// Texts per unit of work of the per-text pass. Blocks are cut by position, never by which thread
/// runs them, and each block's result depends only on its texts, so the result is the same
/// whatever the scheduling (and the same as on one thread).
pub(super) const BLOCK_TEXTS: usize = 128;

/// Below this much text the per-text pass stays on the calling thread: handing out the work would
/// cost about as much as it saves.
pub(crate) const PARALLEL_MIN_BYTES: usize = 256 * 1024;
