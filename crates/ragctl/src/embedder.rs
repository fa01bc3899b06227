//! `--embedder DIR`: the static embedding model of `ragctl chunk` and `ragctl pack`, loaded once
//! per run from a model2vec folder (rag-embed, behind the `embed` feature, on by default).

use std::path::Path;
use std::sync::Arc;

use rag_core::Embedder;

/// Loads the model2vec folder `dir`; a missing or malformed folder is an error naming the file.
#[cfg(feature = "embed")]
pub(crate) fn load(dir: &Path) -> anyhow::Result<Arc<dyn Embedder>> {
    let embedder = rag_embed::StaticEmbedder::load(dir)?;
    tracing::debug!(
        model = embedder.id(),
        dimension = embedder.dimension(),
        "embedder loaded"
    );
    Ok(Arc::new(embedder))
}

/// Without the `embed` feature there is no embedder to load.
#[cfg(not(feature = "embed"))]
pub(crate) fn load(dir: &Path) -> anyhow::Result<Arc<dyn Embedder>> {
    anyhow::bail!(
        "--embedder {}: this ragctl was built without the `embed` feature",
        dir.display()
    )
}
