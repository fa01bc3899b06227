//! `PackerConfig` and `ContextPacker` for Python: the constructor and async `pack`, blocking
//! twins, and `pack_context`, which renders the prompt context within the budget.

use std::sync::Arc;

use pyo3::prelude::*;
use rag_core::{Chunk, ChunkId, PackOrder, PackedContext, PackerError, RepackError, SelectionStrategy};
use rag_packer::{ContextConfig, ContextFormat, ContextPacker, Objective, PackerConfig};

use crate::chunk::chunks_from_py;
use crate::context::PyRequestContext;
use crate::embed::embedder_from_py;
use crate::errors;
use crate::names::ByName;
use crate::packed::PyPackedContext;
use crate::runtime::{Cancel, Work, run_awaitable, run_blocking};
use crate::tokens::{CallCounter, CounterSource};

/// How a `ContextPacker` packs. Checked when a packer is built from it.
#[pyclass(module = "rag_packer", name = "PackerConfig")]
#[derive(Clone)]
pub(crate) struct PyPackerConfig {
    /// The order of the packed chunks: `lost_in_middle`, `descending`, `ascending`, `input`,
    /// `reverse` or `sides`.
    #[pyo3(get)]
    order: ByName<PackOrder>,
    /// How candidates are chosen: `greedy`, `knapsack` or `optimal`.
    #[pyo3(get)]
    strategy: ByName<SelectionStrategy>,
    /// What `knapsack` and `optimal` maximise: `auto`, `score_sum` or `rank_prior`.
    #[pyo3(get)]
    objective: ByName<Objective>,
    /// Near-duplicate threshold in (0, 1]; `None` runs exact dedup only.
    #[pyo3(get, set)]
    jaccard_threshold: Option<f64>,
    /// Words per shingle for near dedup.
    #[pyo3(get, set)]
    shingle_size: usize,
    /// Whether to annotate conflicts among the packed chunks.
    #[pyo3(get, set)]
    detect_conflicts: bool,
    /// At most this many packed chunks per document (pinned chunks do not count).
    #[pyo3(get, set)]
    max_per_document: Option<usize>,
    /// Section-aware packing of the heading-aware chunker's chunks.
    #[pyo3(get, set)]
    section_aware: bool,
    /// A candidate is packed only if its score is above this.
    #[pyo3(get, set)]
    relevance_floor: Option<f64>,
    /// Recount every chunk with content instead of trusting cached `token_count`s.
    #[pyo3(get, set)]
    verify_counts: bool,
    /// `pack_context` packs the best part of the best left-out heading-aware chunk.
    #[pyo3(get, set)]
    cut_to_fit: bool,
}

impl Default for PyPackerConfig {
    /// `PackerConfig()`: the engine's defaults.
    fn default() -> Self {
        let engine = PackerConfig::default();
        Self {
            order: ByName(engine.order().clone()),
            strategy: ByName(engine.strategy()),
            objective: ByName(engine.objective()),
            jaccard_threshold: engine.jaccard_threshold(),
            shingle_size: engine.shingle_size(),
            detect_conflicts: engine.detect_conflicts(),
            max_per_document: engine.max_per_document(),
            section_aware: engine.section_aware(),
            relevance_floor: engine.relevance_floor(),
            verify_counts: engine.verify_counts(),
            cut_to_fit: engine.cut_to_fit(),
        }
    }
}

impl PyPackerConfig {
    /// The engine's configuration, with its default counter, or the setting it refuses.
    fn to_rust(&self) -> Result<PackerConfig, PackerError> {
        PackerConfig::builder()
            .with_order(self.order.0.clone())
            .with_strategy(self.strategy.0)
            .with_objective(self.objective.0)
            .with_jaccard_threshold(self.jaccard_threshold)
            .with_shingle_size(self.shingle_size)
            .with_conflicts(self.detect_conflicts)
            .with_max_per_document(self.max_per_document)
            .with_section_aware(self.section_aware)
            .with_relevance_floor(self.relevance_floor)
            .with_verify_counts(self.verify_counts)
            .with_cut_to_fit(self.cut_to_fit)
            .build()
    }
}

#[pymethods]
impl PyPackerConfig {
    #[new]
    // The shingle size is the library's constant; the text signature spells it for `inspect`.
    #[pyo3(
        signature = (
            order = "lost_in_middle", jaccard_threshold = None, detect_conflicts = true, *,
            strategy = "greedy", shingle_size = PackerConfig::DEFAULT_SHINGLE_SIZE, max_per_document = None, section_aware = true,
            relevance_floor = None, objective = "auto", verify_counts = false, cut_to_fit = true,
        ),
        text_signature = "(order='lost_in_middle', jaccard_threshold=None, detect_conflicts=True, *, strategy='greedy', \
                          shingle_size=5, max_per_document=None, section_aware=True, relevance_floor=None, \
                          objective='auto', verify_counts=False, cut_to_fit=True)"
    )]
    fn new(
        order: &str,
        jaccard_threshold: Option<f64>,
        detect_conflicts: bool,
        strategy: &str,
        shingle_size: usize,
        max_per_document: Option<usize>,
        section_aware: bool,
        relevance_floor: Option<f64>,
        objective: &str,
        verify_counts: bool,
        cut_to_fit: bool,
    ) -> PyResult<Self> {
        Ok(Self {
            order: ByName::from_name(order)?,
            strategy: ByName::from_name(strategy)?,
            objective: ByName::from_name(objective)?,
            jaccard_threshold,
            shingle_size,
            detect_conflicts,
            max_per_document,
            section_aware,
            relevance_floor,
            verify_counts,
            cut_to_fit,
        })
    }

    // The names are checked in setters that take a `str`, not by extracting a `ByName`, so that an
    // unknown name raises the constructor's plain `ValueError` (PyO3 adds a "while processing"
    // note to errors raised during extraction).
    #[setter]
    fn set_order(&mut self, order: &str) -> PyResult<()> {
        self.order = ByName::from_name(order)?;
        Ok(())
    }

    #[setter]
    fn set_strategy(&mut self, strategy: &str) -> PyResult<()> {
        self.strategy = ByName::from_name(strategy)?;
        Ok(())
    }

    #[setter]
    fn set_objective(&mut self, objective: &str) -> PyResult<()> {
        self.objective = ByName::from_name(objective)?;
        Ok(())
    }

    fn __repr__(&self) -> String {
        format!(
            "PackerConfig(order={:?}, jaccard_threshold={}, detect_conflicts={}, strategy={:?}, shingle_size={}, \
             max_per_document={}, section_aware={}, relevance_floor={}, objective={:?}, verify_counts={}, \
             cut_to_fit={})",
            self.order.name(),
            py_option(self.jaccard_threshold),
            py_bool(self.detect_conflicts),
            self.strategy.name(),
            self.shingle_size,
            py_option(self.max_per_document),
            py_bool(self.section_aware),
            py_option(self.relevance_floor),
            self.objective.name(),
            py_bool(self.verify_counts),
            py_bool(self.cut_to_fit),
        )
    }
}

fn py_option(value: Option<impl std::fmt::Display>) -> String {
    value.map_or_else(|| "None".to_owned(), |v| v.to_string())
}

fn py_bool(value: bool) -> &'static str {
    if value { "True" } else { "False" }
}

/// Packs retrieved chunks into a token budget: tenant check, dedup, selection, order, conflicts.
#[pyclass(frozen, module = "rag_packer", name = "ContextPacker")]
pub(crate) struct PyContextPacker {
    config: PackerConfig,
    /// The configuration as given, copied, for `config`.
    config_obj: PyPackerConfig,
    counter: CounterSource,
    /// The counter for chunks without a cached `token_count`.
    #[pyo3(get)]
    token_counter: Py<PyAny>,
}

/// One packing call's input, taken from Python before the work leaves the GIL.
struct PackJob {
    packer: ContextPacker,
    counter: CallCounter,
    ctx: rag_core::RequestContext,
    chunks: Vec<Chunk>,
    ids: Vec<ChunkId>,
    originals: Vec<Py<PyAny>>,
    budget: i64,
    /// How `pack_context` renders the context; `None` for `pack`.
    format: Option<ContextFormat>,
}

/// What a packing call can fail with: the packer, or the context template.
enum PackFailure {
    Packer(PackerError),
    Template(RepackError),
}

impl Work for PackJob {
    type Output = (Result<PackedContext, PackerError>, PackJobRest);

    fn run(self) -> Self::Output {
        let Self {
            packer,
            counter,
            ctx,
            chunks,
            ids,
            originals,
            budget,
            format,
        } = self;
        let result = counter.run(move || match &format {
            Some(format) => packer.pack_context_blocking(&ctx, chunks, budget, format),
            None => packer.pack_blocking(&ctx, chunks, budget),
        });
        (
            result,
            PackJobRest {
                counter,
                ids,
                originals,
            },
        )
    }

    fn cancel(&self) -> Option<Cancel> {
        Some(self.counter.cancel())
    }

    fn finish(py: Python<'_>, (result, rest): Self::Output) -> PyResult<Py<PyAny>> {
        match result {
            Ok(packed) => Ok(
                Bound::new(py, PyPackedContext::from_rust(py, packed, &rest.originals, &rest.ids)?)?
                    .into_any()
                    .unbind(),
            ),
            Err(err) => Err(rest.counter.caused(py, errors::packer_error(py, &err))),
        }
    }
}

/// What a result needs after the work: the originals to hand back, and the counter's failure.
struct PackJobRest {
    counter: CallCounter,
    ids: Vec<ChunkId>,
    originals: Vec<Py<PyAny>>,
}

fn pack_failure(py: Python<'_>, failure: PackFailure) -> PyErr {
    match failure {
        PackFailure::Packer(err) => errors::packer_error(py, &err),
        PackFailure::Template(err) => errors::repack_error(py, &err),
    }
}

impl PyContextPacker {
    fn job(
        &self,
        py: Python<'_>,
        ctx: &Bound<'_, PyRequestContext>,
        chunks: &Bound<'_, PyAny>,
        budget: i64,
        format: Option<ContextFormat>,
        query: Option<String>,
        embedder: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PackJob> {
        let counter = self.counter.for_call();
        let embedder = embedder.filter(|e| !e.is_none()).map(embedder_from_py).transpose()?;
        let config = self
            .config
            .to_builder()
            .with_token_counter(Arc::clone(&counter.engine))
            .with_query(query)
            .with_embedder(embedder)
            .build()
            .map_err(|e| pack_failure(py, PackFailure::Packer(e)))?;
        let packer = ContextPacker::new(config);
        let (chunks, originals) = chunks_from_py(chunks, "chunks")?;
        let ids = chunks.iter().map(|c| c.id.clone()).collect();
        Ok(PackJob {
            packer,
            counter,
            ctx: ctx.get().inner.clone(),
            chunks,
            ids,
            originals,
            budget,
            format,
        })
    }
}

/// The context format of `pack_context`'s keywords.
fn context_format(
    template: &str,
    delimiter: &str,
    breadcrumbs: Option<bool>,
    merge_adjacent: bool,
) -> Result<ContextFormat, PackFailure> {
    let mut format = ContextFormat::builder(ContextConfig::new(template).map_err(PackFailure::Template)?)
        .with_delimiter(delimiter)
        .with_merge_adjacent(merge_adjacent);
    if let Some(breadcrumbs) = breadcrumbs {
        format = format.with_breadcrumbs(breadcrumbs);
    }
    Ok(format.build())
}

#[pymethods]
impl PyContextPacker {
    #[new]
    #[pyo3(signature = (config = None, token_counter = None))]
    fn new(
        py: Python<'_>,
        config: Option<&Bound<'_, PyPackerConfig>>,
        token_counter: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let config_obj = match config {
            Some(config) => config.borrow().clone(),
            None => PyPackerConfig::default(),
        };
        let (counter, token_counter) = CounterSource::from_arg(py, token_counter)?;
        // Checks every setting now, so a bad configuration fails in the constructor.
        let config = config_obj
            .to_rust()
            .map_err(|e| pack_failure(py, PackFailure::Packer(e)))?;
        Ok(Self {
            config,
            config_obj,
            counter,
            token_counter,
        })
    }

    /// A copy of the configuration the packer was built with (changing it changes no packer).
    #[getter]
    fn config(&self) -> PyPackerConfig {
        self.config_obj.clone()
    }

    /// Packs `chunks` into `budget` tokens for `ctx`'s tenant (awaitable; runs on a worker thread
    /// without the GIL). The result's `chunks` are the objects passed in.
    ///
    /// With `query`, chunks that carry no score are scored by the packer's policy, the one of
    /// `ragctl pack`: after the tenant and access checks, over the chunks the principal may see;
    /// BM25 when none of them has a score, the given scores otherwise. With `embedder` (a
    /// `StaticEmbedder`, or any object with `embed(list[str]) -> list[list[float]]`), BM25 is
    /// fused with the cosine of the query's vector and each chunk's (hybrid scoring); chunks
    /// without a vector are embedded. The result's `scoring` says which rule applied; the
    /// caller's chunks keep their own `score`.
    #[pyo3(signature = (ctx, chunks, budget, *, query = None, embedder = None))]
    fn pack<'py>(
        &self,
        py: Python<'py>,
        ctx: &Bound<'py, PyRequestContext>,
        chunks: &Bound<'py, PyAny>,
        budget: i64,
        query: Option<String>,
        embedder: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        run_awaitable(py, self.job(py, ctx, chunks, budget, None, query, embedder)?)
    }

    /// `pack`, on the calling thread; the GIL is released while Rust works.
    #[pyo3(signature = (ctx, chunks, budget, *, query = None, embedder = None))]
    fn pack_blocking(
        &self,
        py: Python<'_>,
        ctx: &Bound<'_, PyRequestContext>,
        chunks: &Bound<'_, PyAny>,
        budget: i64,
        query: Option<String>,
        embedder: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        run_blocking(py, self.job(py, ctx, chunks, budget, None, query, embedder)?)
    }

    /// Packs `chunks` and renders them as the context of a prompt within `budget` tokens of the
    /// rendered text (awaitable); the text is the result's `context`.
    ///
    /// `template` renders each pinned chunk and each excerpt (`{content}`, `{id}`, `{source_uri}`,
    /// `{score}`, `{heading_path}`, `{metadata.KEY}`); `delimiter` joins them; `breadcrumbs` puts
    /// the heading path on a line before an excerpt of a new section (default: unless the
    /// template shows `{heading_path}`); `merge_adjacent` shows overlapping or touching chunks of
    /// one document once; `query` scores chunks without a score, as in `pack`.
    #[pyo3(signature = (ctx, chunks, budget, *, query = None, template = "{content}", delimiter = "\n\n", breadcrumbs = None, merge_adjacent = true, embedder = None))]
    fn pack_context<'py>(
        &self,
        py: Python<'py>,
        ctx: &Bound<'py, PyRequestContext>,
        chunks: &Bound<'py, PyAny>,
        budget: i64,
        query: Option<String>,
        template: &str,
        delimiter: &str,
        breadcrumbs: Option<bool>,
        merge_adjacent: bool,
        embedder: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let format =
            context_format(template, delimiter, breadcrumbs, merge_adjacent).map_err(|f| pack_failure(py, f))?;
        run_awaitable(py, self.job(py, ctx, chunks, budget, Some(format), query, embedder)?)
    }

    /// `pack_context`, on the calling thread; the GIL is released while Rust works.
    #[pyo3(signature = (ctx, chunks, budget, *, query = None, template = "{content}", delimiter = "\n\n", breadcrumbs = None, merge_adjacent = true, embedder = None))]
    fn pack_context_blocking(
        &self,
        py: Python<'_>,
        ctx: &Bound<'_, PyRequestContext>,
        chunks: &Bound<'_, PyAny>,
        budget: i64,
        query: Option<String>,
        template: &str,
        delimiter: &str,
        breadcrumbs: Option<bool>,
        merge_adjacent: bool,
        embedder: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let format =
            context_format(template, delimiter, breadcrumbs, merge_adjacent).map_err(|f| pack_failure(py, f))?;
        run_blocking(py, self.job(py, ctx, chunks, budget, Some(format), query, embedder)?)
    }

    fn __repr__(&self) -> String {
        format!(
            "ContextPacker(config={}, token_counter={})",
            self.config_obj.__repr__(),
            self.counter.name()
        )
    }
}
