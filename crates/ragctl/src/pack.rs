//! `ragctl pack`: pack the best chunks for a query into a token budget.

use std::fmt::Write as _;
use std::io::{IsTerminal as _, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;
use clap::{ArgAction, Args, ValueEnum};
use rag_core::jsonl::{JsonlConfig, MissingTenant};
use rag_core::{
    Chunk, Fusion, PackOrder, PackedContext, PackerError, Principal, RequestContext, Scoring, SelectionStrategy,
    TenantId, TokenCounter,
};
use rag_packer::{ContextConfig, ContextFormat, ContextPacker, Objective, PackerConfig};
use serde_json::json;

use crate::chunk::{Tokenizer, parse_tokenizer};
use crate::diagnostics::escape_control as esc;
use crate::library_values;
use crate::output::excerpt;

/// Arguments of `ragctl pack`.
#[derive(Debug, Args)]
#[command(after_long_help = PACK_EXAMPLES)]
pub(crate) struct PackArgs {
    /// The question the context is for; chunks without a score are ranked against it with BM25.
    query: String,
    /// JSONL chunks (as `ragctl chunk --format jsonl` writes them), or - for stdin. Without it,
    /// stdin is read when it is not a terminal; from a terminal, the demo corpus is packed.
    #[arg(long, value_name = "FILE|-", conflicts_with = "demo")]
    input: Option<PathBuf>,
    /// Pack the demo corpus built into the binary (the project's own docs), whatever stdin is.
    #[arg(long)]
    demo: bool,
    /// Refuse chunks without a tenant_id instead of giving them the request's tenant.
    #[arg(long)]
    require_tenant: bool,
    /// An access label the requesting principal holds (repeatable). A chunk is packed only if
    /// every one of its `acl_labels` is given here; the others are left out and only counted.
    #[arg(long = "label", value_name = "LABEL")]
    labels: Vec<String>,
    /// Count every chunk that has content again instead of trusting its `token_count`, and say
    /// whether any count was wrong (a count made with another tokenizer is always recounted).
    #[arg(long)]
    verify_counts: bool,
    /// Largest input read, in bytes (K, M and G suffixes accepted).
    #[arg(long, value_name = "SIZE", default_value = "256M", value_parser = crate::input::parse_size)]
    max_input_bytes: u64,
    /// Longest JSONL line read, in bytes (K, M and G suffixes accepted).
    #[arg(long, value_name = "SIZE", default_value = "16M", value_parser = crate::input::parse_size)]
    max_line_bytes: u64,
    /// Token budget of the packed context.
    #[arg(short = 'b', long, default_value_t = 4000, value_parser = clap::value_parser!(i64).range(1..))]
    budget: i64,
    /// In report format, show the N best packed chunks (by the score the packer ranked them by,
    /// then id), each with its position in the packed context.
    #[arg(short = 'k', long, value_name = "N", default_value_t = 5)]
    top_k: usize,
    /// Order of the packed chunks (pinned chunks always come first).
    #[arg(long, default_value_t = PackOrder::LostInMiddle)]
    #[arg(value_parser = library_values(&PackOrder::ALL, PackOrder::as_str))]
    order: PackOrder,
    /// How chunks are chosen to fill the budget.
    #[arg(long, default_value_t = SelectionStrategy::Greedy)]
    #[arg(value_parser = library_values(&SelectionStrategy::ALL, |strategy| strategy.as_str()))]
    strategy: SelectionStrategy,
    /// What knapsack and optimal maximise: rank-prior for heading-aware chunks and score-sum (the
    /// sum of scores) for any other chunks (auto), or one of them for all.
    #[arg(long, value_enum, default_value_t = ObjectiveArg::Auto)]
    objective: ObjectiveArg,
    /// At most N packed chunks from one document.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    max_per_document: Option<u64>,
    /// Near-duplicate threshold on shingle Jaccard similarity, in 0..=1 (0 turns it off).
    #[arg(long, default_value_t = 0.0, value_parser = parse_threshold)]
    jaccard_threshold: f64,
    /// Words per shingle for near-duplicate detection.
    #[arg(long, default_value_t = PackerConfig::DEFAULT_SHINGLE_SIZE as u64, value_parser = clap::value_parser!(u64).range(1..))]
    shingle_size: u64,
    /// Detect conflicting claims among packed chunks (the default).
    #[arg(long, overrides_with = "no_conflicts", action = ArgAction::SetTrue)]
    conflicts: bool,
    /// Do not detect conflicts.
    #[arg(long, overrides_with = "conflicts", action = ArgAction::SetTrue)]
    no_conflicts: bool,
    /// Tenant of the request; chunks without a tenant_id belong to it.
    #[arg(short = 't', long, default_value = "ragctl-local")]
    tenant: String,
    /// Tokenizer for chunks that carry no token_count: cl100k_base, o200k_base, or the path of a
    /// Hugging Face tokenizer.json.
    #[arg(long, default_value = "cl100k_base", value_parser = parse_tokenizer, value_name = "NAME|FILE")]
    tokenizer: Tokenizer,
    /// Output format.
    #[arg(long, value_enum, default_value_t = PackFormat::Text)]
    format: PackFormat,
    /// Separator between chunks in the context format.
    #[arg(long, default_value = "\n\n")]
    delimiter: String,
    /// Template each chunk (or merged excerpt) is rendered through in the context format:
    /// {content}, {id}, {source_uri}, {score}, {heading_path}, {metadata.KEY}.
    #[arg(long, default_value = "{content}", value_parser = parse_template)]
    template: String,
    /// Heading-path lines (`A > B > C`) above excerpts that start a new section: auto shows them
    /// unless the template has {heading_path}.
    #[arg(long, value_enum, default_value_t = BreadcrumbsArg::Auto)]
    breadcrumbs: BreadcrumbsArg,
    /// Render overlapping or touching chunks of one document separately (their shared text twice)
    /// instead of as one excerpt.
    #[arg(long)]
    no_merge: bool,
    /// Pack heading chunks like any other chunk, and do not let a heading's score reach its
    /// section.
    #[arg(long)]
    no_sections: bool,
    /// Skip a heading-aware chunk that does not fit whole instead of packing its best part for
    /// the query (`ID#cut`, with `metadata.cut_from`) in the room it would have had.
    #[arg(long)]
    no_cut: bool,
    /// A model2vec folder (config.json, model.safetensors, tokenizer.json): chunks without a
    /// score are ranked by BM25 fused with the cosine of their vectors and the query's (hybrid
    /// scoring). Chunks without a vector are embedded; a vector of another model is an error.
    #[arg(long, value_name = "DIR")]
    embedder: Option<PathBuf>,
    /// How hybrid scoring fuses BM25 and cosine: convex (a weighted sum of the two, each min-max
    /// normalised over the chunks) or rrf (reciprocal-rank fusion, k = 60).
    #[arg(long, value_enum, default_value_t = FusionArg::Convex, requires = "embedder")]
    fusion: FusionArg,
    /// The weight of BM25 in convex fusion, in 0..=1 (the cosine gets the rest).
    #[arg(long, value_name = "W", value_parser = parse_weight, requires = "embedder")]
    bm25_weight: Option<f64>,
    /// Diversity (maximal marginal relevance): each candidate's score is lowered by W times its
    /// greatest cosine to the chunks ranked before it, in 0..=1 (off by default).
    #[arg(long, value_name = "W", value_parser = parse_weight, requires = "embedder")]
    diversity: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum FusionArg {
    Convex,
    Rrf,
}

/// The constant of reciprocal-rank fusion (Cormack et al., 2009).
const RRF_K: u32 = 60;

fn parse_weight(value: &str) -> Result<f64, String> {
    match value.parse::<f64>() {
        Ok(weight) if (0.0..=1.0).contains(&weight) => Ok(weight),
        _ => Err(format!("expected a number in 0..=1, got {value:?}")),
    }
}

impl PackArgs {
    /// The fusion of `--fusion` and `--bm25-weight`.
    fn fusion(&self) -> anyhow::Result<Fusion> {
        Ok(match (self.fusion, self.bm25_weight) {
            (FusionArg::Convex, None) => rag_packer::DEFAULT_FUSION,
            (FusionArg::Convex, Some(bm25_weight)) => Fusion::Convex { bm25_weight },
            (FusionArg::Rrf, None) => Fusion::ReciprocalRank { k: RRF_K },
            (FusionArg::Rrf, Some(_)) => anyhow::bail!("--bm25-weight weighs convex fusion; rrf has no weight"),
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum BreadcrumbsArg {
    Auto,
    Always,
    Never,
}

const PACK_EXAMPLES: &str = "\
Examples:
  Pack chunks piped from `ragctl chunk` (stdin is read when it is not a terminal):
    ragctl chunk docs/ --format jsonl | ragctl pack \"how are duplicates dropped\" --budget 2000
  Retrieved chunks with scores, knapsack selection, context ready for a prompt:
    ragctl pack \"refund window\" --input hits.jsonl --strategy knapsack --format context
  Refuse chunks that carry no tenant_id:
    ragctl pack \"q\" --input hits.jsonl --tenant acme --require-tenant
  The built-in demo corpus:
    ragctl pack \"how are near duplicates detected\" --demo
  The header of settings and counts, and the best packed chunks with their scores:
    ragctl pack \"how are near duplicates detected\" --demo --format report";

fn parse_template(value: &str) -> Result<String, String> {
    ContextConfig::new(value)
        .map(|_| value.to_owned())
        .map_err(|err| err.to_string())
}

fn parse_threshold(value: &str) -> Result<f64, String> {
    let x: f64 = value.parse().map_err(|_| format!("{value:?} is not a number"))?;
    if (0.0..=1.0).contains(&x) {
        Ok(x)
    } else {
        Err(format!("{x} is outside 0..=1"))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ObjectiveArg {
    Auto,
    ScoreSum,
    RankPrior,
}

impl From<ObjectiveArg> for Objective {
    fn from(arg: ObjectiveArg) -> Self {
        match arg {
            ObjectiveArg::Auto => Self::Auto,
            ObjectiveArg::ScoreSum => Self::ScoreSum,
            ObjectiveArg::RankPrior => Self::RankPrior,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum PackFormat {
    /// The packed context as a model gets it, then a one-line summary (control characters escaped).
    Text,
    /// A header of every setting and count, and the top-k packed chunks with their scores.
    Report,
    /// One JSON object: the header fields, the packed chunks, the dropped ones and the conflicts.
    Json,
    /// The rendered context alone, ready to paste into a prompt.
    Context,
}

/// Where the chunks come from.
#[derive(Debug, PartialEq, Eq)]
enum Source {
    /// The demo corpus; `asked` is false when it was chosen because nothing else was given.
    Demo {
        asked: bool,
    },
    Jsonl(PathBuf),
}

impl Source {
    /// `--input`, else stdin when it is a pipe or a file, else (a terminal: nothing is piped in)
    /// the demo corpus.
    fn choose(args: &PackArgs, stdin_is_terminal: bool) -> Self {
        match &args.input {
            Some(path) => Self::Jsonl(path.clone()),
            None if args.demo => Self::Demo { asked: true },
            None if stdin_is_terminal => Self::Demo { asked: false },
            None => Self::Jsonl(PathBuf::from("-")),
        }
    }
}

/// How the output names the demo corpus.
const DEMO_INPUT: &str = "demo corpus (the project's docs, built in)";

pub(crate) async fn run(args: PackArgs) -> anyhow::Result<ExitCode> {
    let tenant = TenantId::new(args.tenant.as_str());
    let counter = args.tokenizer.counter()?;
    let embedder = args.embedder.as_deref().map(crate::embedder::load).transpose()?;
    let (chunks, input) = read_chunks(&args, &tenant, Arc::clone(&counter)).await?;
    let packer = ContextPacker::new(packer_config(&args, counter, embedder)?);
    let ctx = RequestContext::new(
        tenant,
        Principal {
            id: "local".to_owned(),
            acl_labels: args.labels.clone(),
        },
    );
    let chunks_in = chunks.len();
    // Every format packs for the rendered context, so the chunks `--format json` lists are the
    // ones `--format context` prints, and the budget holds for that text. The packer scores the
    // chunks that have no score itself, from the ones the principal may see.
    let packed = packer
        .pack_context(&ctx, chunks, args.budget, &context_format(&args)?)
        .await
        .map_err(|err| naming_the_input(err, &input))?;
    if let Some(Scoring::Bm25 { terms, .. }) = &packed.scoring
        && terms.is_empty()
    {
        crate::diagnostics::warning(&format!(
            "the query {:?} has no term to score the chunks by (it is empty or only stop words such as \
             \"how\", \"do\", \"the\"), so no chunk is relevant to it",
            args.query
        ));
    }
    let scoring = packed.scoring.as_ref().map(ToString::to_string).unwrap_or_default();
    let outcome = Outcome {
        args: &args,
        ctx: &ctx,
        input: &input,
        scoring: &scoring,
        chunks_in,
        packed: &packed,
    };
    let rendered = outcome.rendered()?;
    let mut out = std::io::stdout().lock();
    out.write_all(rendered.as_bytes()).context("writing to stdout")?;
    out.flush().context("writing to stdout")?;
    Ok(ExitCode::SUCCESS)
}

/// The chunks to pack and how the output names where they came from: the demo corpus, or the
/// JSONL of `--input` or stdin (its warnings reported).
async fn read_chunks(
    args: &PackArgs,
    tenant: &TenantId,
    counter: Arc<dyn TokenCounter>,
) -> anyhow::Result<(Vec<Chunk>, String)> {
    match Source::choose(args, std::io::stdin().is_terminal()) {
        Source::Demo { asked } => {
            if !asked {
                // Forgetting `--input` must not look like an answer from the user's own documents.
                crate::diagnostics::note(
                    "no --input and stdin is a terminal: packing the built-in demo corpus (the project's docs); \
                     pipe chunks in or give --input FILE to pack your own",
                );
            }
            Ok((crate::demo::demo_chunks(tenant, counter).await?, DEMO_INPUT.to_owned()))
        }
        Source::Jsonl(path) => {
            let missing_tenant = if args.require_tenant {
                MissingTenant::Refuse
            } else {
                MissingTenant::Assign(tenant.clone())
            };
            let config = JsonlConfig::new(missing_tenant)
                .with_max_line_bytes(usize::try_from(args.max_line_bytes).unwrap_or(usize::MAX));
            let (chunks, warnings) = crate::input::read_jsonl(&path, &config, args.max_input_bytes)?;
            for warning in &warnings {
                crate::diagnostics::warning(&warning.to_string());
            }
            let name = rag_chunker::ingest::path_uri(&path);
            if chunks.is_empty() && args.input.is_none() {
                crate::diagnostics::warning("no chunks on stdin; --demo packs the built-in demo corpus");
            }
            Ok((chunks, name))
        }
    }
}

/// The packer's error, prefixed with the input when it is about a chunk's vector: mixed models in
/// one file are the input's fault, and the chunk id alone does not say which file.
fn naming_the_input(err: PackerError, input: &str) -> anyhow::Error {
    match err {
        PackerError::ForeignEmbedding { .. } | PackerError::EmbeddingDimension { .. } => {
            anyhow::Error::new(err).context(input.to_owned())
        }
        err => err.into(),
    }
}

/// The packer's configuration, from the flags.
fn packer_config(
    args: &PackArgs,
    counter: Arc<dyn TokenCounter>,
    embedder: Option<Arc<dyn rag_core::Embedder>>,
) -> anyhow::Result<PackerConfig> {
    let max_per_document = args
        .max_per_document
        .map(usize::try_from)
        .transpose()
        .context("--max-per-document is too large")?;
    Ok(PackerConfig::builder()
        .with_order(args.order.clone())
        .with_strategy(args.strategy)
        .with_objective(args.objective.into())
        .with_jaccard_threshold((args.jaccard_threshold > 0.0).then_some(args.jaccard_threshold))
        .with_shingle_size(usize::try_from(args.shingle_size).context("--shingle-size is too large")?)
        .with_conflicts(!args.no_conflicts)
        .with_max_per_document(max_per_document)
        .with_section_aware(!args.no_sections)
        .with_cut_to_fit(!args.no_cut)
        .with_query(Some(args.query.clone()))
        .with_verify_counts(args.verify_counts)
        .with_token_counter(counter)
        .with_embedder(embedder)
        .with_fusion(args.fusion()?)
        .with_diversity(args.diversity)
        .build()?)
}

/// How the context is rendered, from the flags.
fn context_format(args: &PackArgs) -> anyhow::Result<ContextFormat> {
    let format = ContextFormat::builder(ContextConfig::new(args.template.as_str())?)
        .with_delimiter(args.delimiter.as_str())
        .with_merge_adjacent(!args.no_merge);
    Ok(match args.breadcrumbs {
        BreadcrumbsArg::Auto => format,
        BreadcrumbsArg::Always => format.with_breadcrumbs(true),
        BreadcrumbsArg::Never => format.with_breadcrumbs(false),
    }
    .build())
}

/// What a report of a pack shows: the request, where the chunks came from and how many, how they
/// were scored, and the pack.
struct Outcome<'a> {
    args: &'a PackArgs,
    ctx: &'a RequestContext,
    input: &'a str,
    scoring: &'a str,
    chunks_in: usize,
    packed: &'a PackedContext,
}

impl Outcome<'_> {
    /// The output in the format of `--format`; an empty context is warned about, since it is all a
    /// prompt pipe sees.
    fn rendered(&self) -> anyhow::Result<String> {
        Ok(match self.args.format {
            PackFormat::Text => self.text(),
            PackFormat::Report => self.report(),
            PackFormat::Json => self.json()?,
            PackFormat::Context => {
                if let Some(why) = self.why_the_context_is_empty() {
                    crate::diagnostics::warning(&why);
                }
                format!("{}\n", self.packed.context.as_deref().unwrap_or_default())
            }
        })
    }

    /// Why nothing was packed, when nothing was: a warning for `--format context`, whose output
    /// does not say it. `None` when something was packed, or when empty stdin was already warned of.
    fn why_the_context_is_empty(&self) -> Option<String> {
        let packed = self.packed;
        if !packed.chunks.is_empty() {
            return None;
        }
        if self.chunks_in == 0 {
            return self
                .args
                .input
                .is_some()
                .then(|| format!("the context is empty: {} holds no chunks", self.input));
        }
        let (budget, dedup) = (packed.dropped_budget(), packed.dropped_dedup());
        let other = packed.dropped.len() - budget - dedup;
        let hidden = match packed.hidden_by_acl {
            0 => String::new(),
            n => format!(", {n} hidden from the principal"),
        };
        Some(format!(
            "the context is empty: none of the {} chunks was packed ({budget} for lack of room in {} \
             tokens, {dedup} as duplicates, {other} for other reasons{hidden}); --format json gives \
             each chunk's reason",
            self.chunks_in, packed.tokens_budget
        ))
    }

    /// The context as a model gets it and a one-line summary, for a person: control characters
    /// from the input are escaped (line breaks and tabs kept), so they cannot drive the terminal.
    fn text(&self) -> String {
        let mut s = String::new();
        let context = self.packed.context.as_deref().unwrap_or_default();
        if context.is_empty() {
            let why = self
                .why_the_context_is_empty()
                .unwrap_or_else(|| "the context is empty".to_owned());
            let _ = writeln!(s, "({})", esc(&why));
        } else {
            let _ = writeln!(s, "{}\n", escape_keeping_layout(context));
        }
        let _ = writeln!(s, "{}", self.summary());
        s
    }

    /// One line: what was packed into how much, and where to look for more.
    fn summary(&self) -> String {
        let packed = self.packed;
        let cut = packed.chunks.iter().filter(|c| c.is_cut()).count();
        // The chunks the principal may see: how many others there were is the report's to say.
        let visible = self.chunks_in - packed.hidden_by_acl.min(self.chunks_in);
        let cut = match cut {
            0 => String::new(),
            n => format!(", {n} cut to fit"),
        };
        format!(
            "-- {} of {} chunks packed{cut}, {} of {} tokens ({}, {}); {} left out for room, {} as duplicates; \
             input: {}; --format report ranks them, --format json explains each",
            packed.chunks.len(),
            visible,
            packed.tokens_used,
            packed.tokens_budget,
            packed.strategy,
            packed.order,
            packed.dropped_budget(),
            packed.dropped_dedup(),
            esc(self.input),
        )
    }

    /// The header, the `--top-k` best packed chunks and the conflicts, for a person: everything that
    /// comes from the input is escaped, so a control character cannot drive the terminal.
    fn report(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "query:          {:?}", self.args.query);
        let _ = writeln!(s, "input:          {}", esc(self.input));
        let _ = writeln!(s, "tenant:         {}", esc(self.ctx.tenant_id.as_str()));
        let _ = writeln!(s, "order:          {}", self.packed.order);
        let _ = writeln!(s, "strategy:       {}", self.packed.strategy);
        let _ = writeln!(s, "budget:         {} tokens", self.packed.tokens_budget);
        let _ = writeln!(s, "tokenizer:      {}", self.packed.tokenizer);
        let _ = writeln!(s, "scoring:        {}", self.scoring);
        let _ = writeln!(s, "chunks_in:      {}", self.chunks_in);
        let _ = writeln!(s, "chunks_out:     {}", self.packed.chunks.len());
        let _ = writeln!(s, "tokens_used:    {}", self.packed.tokens_used);
        let _ = writeln!(s, "dropped_dedup:  {}", self.packed.dropped_dedup());
        let _ = writeln!(s, "dropped_budget: {}", self.packed.dropped_budget());
        if self.packed.hidden_by_acl > 0 {
            let _ = writeln!(s, "hidden_by_acl:  {}", self.packed.hidden_by_acl);
        }
        let _ = writeln!(s, "conflicts:      {}", self.packed.conflicts.len());
        for note in &self.packed.notes {
            let _ = writeln!(s, "note:           {}", esc(note));
        }
        for (rank, position) in self.ranking().into_iter().take(self.args.top_k).enumerate() {
            let chunk = &self.packed.chunks[position];
            let effective = self.effective_score(position);
            // The section-lifted score is shown only where it is not the chunk's own.
            let lifted = if effective == chunk.score_or_zero() {
                String::new()
            } else {
                format!(" (own {:.4})", chunk.score_or_zero())
            };
            let parts = match self.packed.score_parts.get(position).copied().flatten() {
                Some(parts) => format!(" (bm25 {:.4}, cosine {:.4})", parts.bm25, parts.cosine),
                None => String::new(),
            };
            let _ = writeln!(
                s,
                "  #{:<3} pos={:<4} score={:.4}{lifted}{parts}  trust={:<13}  id={}  {}",
                rank + 1,
                position + 1,
                effective,
                chunk.trust.as_str(),
                esc(chunk.id.as_str()),
                esc(&excerpt(
                    chunk.content().or(chunk.content_ref()).unwrap_or_default(),
                    72
                ))
            );
        }
        for conflict in &self.packed.conflicts {
            let ids: Vec<&str> = conflict.chunk_ids.iter().map(|id| id.as_str()).collect();
            let _ = writeln!(
                s,
                "  conflict {} [{}]: {}",
                conflict.kind.as_str(),
                esc(&ids.join(", ")),
                esc(&conflict.detail)
            );
        }
        s
    }

    /// The score the packer ranked the packed chunk at `position` by: the section-lifted one when
    /// the packer reported it, else the chunk's own.
    fn effective_score(&self, position: usize) -> f64 {
        self.packed
            .effective_scores
            .get(position)
            .copied()
            .unwrap_or_else(|| self.packed.chunks[position].score_or_zero())
    }

    /// Positions of the packed chunks, best first, by the score the packer ranked them by (then id).
    fn ranking(&self) -> Vec<usize> {
        let mut positions: Vec<usize> = (0..self.packed.chunks.len()).collect();
        positions.sort_by(|&a, &b| {
            // As the packer ranks: -0.0 ties with 0.0, and scores are finite.
            self.effective_score(b)
                .partial_cmp(&self.effective_score(a))
                .unwrap_or(std::cmp::Ordering::Equal)
                .then_with(|| self.packed.chunks[a].id.cmp(&self.packed.chunks[b].id))
        });
        positions
    }

    /// The packed chunks as JSON, each with the `effective_score` it was ranked by and how its
    /// score came about (`scored_by`: given, bm25 or fused, with the fused score's `score_parts`).
    /// A chunk's vector is left out (its `embedding_model` stays): hundreds of numbers per chunk
    /// explain nothing.
    fn chunks_json(&self) -> anyhow::Result<Vec<serde_json::Value>> {
        self.packed
            .chunks
            .iter()
            .enumerate()
            .map(|(position, chunk)| {
                let mut value = serde_json::to_value(chunk)?;
                if let Some(object) = value.as_object_mut() {
                    object.remove("embedding");
                    object.insert("effective_score".to_owned(), json!(self.effective_score(position)));
                    object.insert("scored_by".to_owned(), json!(self.scored_by(chunk)));
                    if let Some(parts) = self.packed.score_parts.get(position).copied().flatten() {
                        object.insert("score_parts".to_owned(), json!(parts));
                    }
                }
                Ok(value)
            })
            .collect()
    }

    /// How a packed chunk got its score: `given` (it came with it), `missing` (it had none and
    /// counts as 0.0), `bm25` or `fused` (BM25 with the cosine).
    fn scored_by(&self, chunk: &Chunk) -> &'static str {
        match &self.packed.scoring {
            Some(Scoring::Bm25 { .. }) => "bm25",
            Some(Scoring::Hybrid { .. }) => "fused",
            _ if chunk.score.is_none() => "missing",
            _ => "given",
        }
    }

    /// Everything the pack holds and how it came about, for a program.
    fn json(&self) -> anyhow::Result<String> {
        let value = json!({
            "query": self.args.query,
            "input": self.input,
            "tenant": self.ctx.tenant_id,
            "order": self.packed.order,
            "strategy": self.packed.strategy,
            "budget": self.packed.tokens_budget,
            "tokenizer": self.packed.tokenizer,
            "scoring": self.scoring,
            "chunks_in": self.chunks_in,
            "chunks_out": self.packed.chunks.len(),
            "tokens_used": self.packed.tokens_used,
            "dropped_dedup": self.packed.dropped_dedup(),
            "dropped_budget": self.packed.dropped_budget(),
            "hidden_by_acl": self.packed.hidden_by_acl,
            "notes": self.packed.notes,
            "context": self.packed.context,
            "excerpts": self.packed.excerpts,
            "chunks": self.chunks_json()?,
            "dropped": self.packed.dropped,
            "conflicts": self.packed.conflicts,
        });
        let mut s = serde_json::to_string_pretty(&value)?;
        s.push('\n');
        Ok(s)
    }
}

/// `text` with its control characters escaped line by line, line breaks and tabs kept: the
/// context's layout (code indentation, paragraphs) is part of what it shows.
fn escape_keeping_layout(text: &str) -> String {
    text.split('\n')
        .map(|line| line.split('\t').map(|piece| esc(piece)).collect::<Vec<_>>().join("\t"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    use super::*;

    fn pack_args(argv: &[&str]) -> PackArgs {
        match crate::Cli::try_parse_from(argv).map(|cli| cli.command) {
            Ok(crate::Command::Pack(args)) => args,
            other => panic!("not a pack command: {other:?}"),
        }
    }

    #[test]
    fn the_demo_is_packed_unasked_only_from_a_terminal_without_input() {
        let bare = pack_args(&["ragctl", "pack", "q"]);
        assert_eq!(Source::choose(&bare, true), Source::Demo { asked: false });
        assert_eq!(Source::choose(&bare, false), Source::Jsonl(PathBuf::from("-")));
        let demo = pack_args(&["ragctl", "pack", "q", "--demo"]);
        assert_eq!(Source::choose(&demo, true), Source::Demo { asked: true });
        assert_eq!(Source::choose(&demo, false), Source::Demo { asked: true });
        let input = pack_args(&["ragctl", "pack", "q", "--input", "a.jsonl"]);
        assert_eq!(Source::choose(&input, true), Source::Jsonl(PathBuf::from("a.jsonl")));
    }
}
