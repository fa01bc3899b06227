//! `ragctl pack`: pack the best chunks for a query into a token budget.

use std::fmt::Write as _;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;
use clap::{ArgAction, Args, ValueEnum};
use rag_core::{Chunk, PackOrder, PackedContext, RequestContext, SelectionStrategy, TenantId, TokenCounter};
use rag_packer::{ContextConfig, ContextPacker, PackerConfig, RepackMode, RepackOutput, Repacker, bm25_scores};
use rayon::prelude::*;
use serde_json::json;

use crate::chunk::Tokenizer;
use crate::output::excerpt;

/// Arguments of `ragctl pack`.
#[derive(Debug, Args)]
pub(crate) struct PackArgs {
    /// The question the context is for; chunks without a score are ranked against it with BM25.
    query: String,
    /// JSONL chunks (as `ragctl chunk --format jsonl` writes them), or - for stdin. Without it, a
    /// demo corpus built into the binary (the project's own docs) is chunked and packed.
    #[arg(long, value_name = "FILE|-")]
    input: Option<PathBuf>,
    /// Token budget of the packed context.
    #[arg(short = 'b', long, default_value_t = 4000, value_parser = clap::value_parser!(i64).range(1..))]
    budget: i64,
    /// Rows shown in text format.
    #[arg(short = 'k', long, default_value_t = 5)]
    top_k: usize,
    /// Order of the packed chunks (pinned chunks always come first).
    #[arg(long, value_enum, default_value_t = OrderArg::LostInMiddle)]
    order: OrderArg,
    /// How chunks are chosen to fill the budget.
    #[arg(long, value_enum, default_value_t = StrategyArg::Greedy)]
    strategy: StrategyArg,
    /// At most N packed chunks from one document.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    max_per_document: Option<u64>,
    /// Near-duplicate threshold on shingle Jaccard similarity, in 0..=1 (0 turns it off).
    #[arg(long, default_value_t = 0.0, value_parser = parse_threshold)]
    jaccard_threshold: f64,
    /// Words per shingle for near-duplicate detection.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..))]
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
    /// Tokenizer for chunks that carry no token_count.
    #[arg(long, value_enum, default_value_t = Tokenizer::Cl100kBase)]
    tokenizer: Tokenizer,
    /// Output format.
    #[arg(long, value_enum, default_value_t = PackFormat::Text)]
    format: PackFormat,
    /// Separator between chunks in the context format.
    #[arg(long, default_value = "\n\n")]
    delimiter: String,
    /// Template each chunk is rendered through in the context format: {content}, {id},
    /// {source_uri}, {score}, {metadata.KEY}.
    #[arg(long, default_value = "{content}", value_parser = parse_template)]
    template: String,
}

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
enum OrderArg {
    #[value(name = "lost_in_middle")]
    LostInMiddle,
    Descending,
    Ascending,
    Input,
    Reverse,
    Sides,
}

impl From<OrderArg> for PackOrder {
    fn from(arg: OrderArg) -> Self {
        match arg {
            OrderArg::LostInMiddle => Self::LostInMiddle,
            OrderArg::Descending => Self::Descending,
            OrderArg::Ascending => Self::Ascending,
            OrderArg::Input => Self::Input,
            OrderArg::Reverse => Self::Reverse,
            OrderArg::Sides => Self::Sides,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum StrategyArg {
    Greedy,
    Knapsack,
    Optimal,
}

impl From<StrategyArg> for SelectionStrategy {
    fn from(arg: StrategyArg) -> Self {
        match arg {
            StrategyArg::Greedy => Self::Greedy,
            StrategyArg::Knapsack => Self::Knapsack,
            StrategyArg::Optimal => Self::Optimal,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum PackFormat {
    /// A summary header and the top-k packed chunks.
    Text,
    /// One JSON object: the header fields, the packed chunks, the dropped ones and the conflicts.
    Json,
    /// The rendered context alone, ready to paste into a prompt.
    Context,
}

pub(crate) fn run(args: PackArgs) -> anyhow::Result<ExitCode> {
    let tenant = TenantId::new(args.tenant.as_str());
    let counter: Arc<dyn TokenCounter> = Arc::new(args.tokenizer.counter()?);
    let mut chunks = match &args.input {
        Some(path) => read_input(path, &tenant)?,
        None => crate::demo::demo_chunks(&tenant, Arc::clone(&counter))?,
    };
    let scoring = score_missing(&args.query, &mut chunks);

    let max_per_document = args
        .max_per_document
        .map(usize::try_from)
        .transpose()
        .context("--max-per-document is too large")?;
    let config = PackerConfig::default()
        .with_order(args.order.into())
        .with_strategy(args.strategy.into())
        .with_jaccard_threshold((args.jaccard_threshold > 0.0).then_some(args.jaccard_threshold))
        .with_shingle_size(usize::try_from(args.shingle_size).context("--shingle-size is too large")?)
        .with_conflicts(!args.no_conflicts)
        .with_max_per_document(max_per_document)
        .with_token_counter(counter);
    let packer = ContextPacker::new(config)?;
    let ctx = RequestContext::local(tenant);
    let chunks_in = chunks.len();
    let packed = pollster::block_on(packer.pack(&ctx, chunks, args.budget))?;

    let rendered = match args.format {
        PackFormat::Text => render_text(&args, &ctx, &scoring, chunks_in, &packed),
        PackFormat::Json => render_json(&args, &ctx, &scoring, chunks_in, &packed)?,
        PackFormat::Context => render_context(&args, packed.chunks)?,
    };
    let mut out = std::io::stdout().lock();
    out.write_all(rendered.as_bytes()).context("writing to stdout")?;
    out.flush().context("writing to stdout")?;
    Ok(ExitCode::SUCCESS)
}

/// The packed chunks, in order, through the template and joined by the delimiter.
fn render_context(args: &PackArgs, chunks: Vec<Chunk>) -> anyhow::Result<String> {
    let repacker = Repacker::builder()
        .mode(RepackMode::Context)
        .delimiter(args.delimiter.as_str())
        .context(ContextConfig::new(args.template.as_str())?)
        .build()?;
    match repacker.repack(chunks)? {
        RepackOutput::Context(mut context) => {
            context.push('\n');
            Ok(context)
        }
        other => anyhow::bail!("the repacker returned {other:?} instead of one context string"),
    }
}

/// Reads the JSONL input whole, then parses its lines in parallel: parsing dominates a large
/// `pack`, and lines are independent. Errors are the ones `read_chunks` gives: the first bad line
/// in line order, by number.
fn read_input(path: &std::path::Path, tenant: &TenantId) -> anyhow::Result<Vec<Chunk>> {
    use std::io::Read as _;

    let (name, mut reader): (String, Box<dyn std::io::Read>) = if path.as_os_str() == "-" {
        ("-".to_owned(), Box::new(std::io::stdin().lock()))
    } else {
        let name = path.display().to_string();
        let file = std::fs::File::open(path).with_context(|| format!("{name}: cannot open"))?;
        (name, Box::new(file))
    };
    let mut input = Vec::new();
    reader
        .read_to_end(&mut input)
        .map_err(|source| rag_core::jsonl::JsonlError::Io {
            source_name: name.clone(),
            source,
        })?;
    let lines: Vec<(usize, &[u8])> = rag_core::jsonl::lines(&input).collect();
    let parsed: Vec<_> = lines
        .into_par_iter()
        .map(|(index, line)| rag_core::jsonl::parse_numbered_line(line, index, &name, Some(tenant)))
        .collect();
    let mut chunks = Vec::with_capacity(parsed.len());
    for line in parsed {
        if let Some(chunk) = line? {
            chunks.push(chunk);
        }
    }
    Ok(chunks)
}

/// Scores chunks that have none with BM25 against the query; says which scoring was used.
fn score_missing(query: &str, chunks: &mut [Chunk]) -> String {
    let missing = chunks.iter().filter(|c| c.score.is_none()).count();
    if missing == 0 {
        return "given (every chunk had a score)".to_owned();
    }
    let texts: Vec<&str> = chunks.iter().map(|c| c.content().unwrap_or_default()).collect();
    let scores = bm25_scores(query, &texts);
    for (chunk, score) in chunks.iter_mut().zip(scores) {
        if chunk.score.is_none() {
            chunk.score = Some(score);
        }
    }
    if missing == chunks.len() {
        format!("bm25 against the query over {missing} chunks")
    } else {
        format!("given, and bm25 against the query for the {missing} chunks without a score")
    }
}

fn render_text(
    args: &PackArgs,
    ctx: &RequestContext,
    scoring: &str,
    chunks_in: usize,
    packed: &PackedContext,
) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "query:          {:?}", args.query);
    let _ = writeln!(s, "tenant:         {}", ctx.tenant_id);
    let _ = writeln!(s, "order:          {}", packed.order);
    let _ = writeln!(s, "strategy:       {}", packed.strategy);
    let _ = writeln!(s, "budget:         {} tokens", packed.tokens_budget);
    let _ = writeln!(s, "tokenizer:      {}", packed.tokenizer);
    let _ = writeln!(s, "scoring:        {scoring}");
    let _ = writeln!(s, "chunks_in:      {chunks_in}");
    let _ = writeln!(s, "chunks_out:     {}", packed.chunks.len());
    let _ = writeln!(s, "tokens_used:    {}", packed.tokens_used);
    let _ = writeln!(s, "dropped_dedup:  {}", packed.dropped_dedup());
    let _ = writeln!(s, "dropped_budget: {}", packed.dropped_budget());
    let _ = writeln!(s, "conflicts:      {}", packed.conflicts.len());
    for note in &packed.notes {
        let _ = writeln!(s, "note:           {note}");
    }
    for (rank, chunk) in packed.chunks.iter().take(args.top_k).enumerate() {
        let _ = writeln!(
            s,
            "  #{:<3} score={:.4}  trust={:<13}  id={}  {}",
            rank + 1,
            chunk.score_or_zero(),
            chunk.trust.as_str(),
            chunk.id,
            excerpt(chunk.content().or(chunk.content_ref()).unwrap_or_default(), 72)
        );
    }
    for conflict in &packed.conflicts {
        let ids: Vec<&str> = conflict.chunk_ids.iter().map(|id| id.as_str()).collect();
        let _ = writeln!(
            s,
            "  conflict {} [{}]: {}",
            conflict.kind.as_str(),
            ids.join(", "),
            conflict.detail
        );
    }
    s
}

fn render_json(
    args: &PackArgs,
    ctx: &RequestContext,
    scoring: &str,
    chunks_in: usize,
    packed: &PackedContext,
) -> anyhow::Result<String> {
    let value = json!({
        "query": args.query,
        "tenant": ctx.tenant_id,
        "order": packed.order,
        "strategy": packed.strategy,
        "budget": packed.tokens_budget,
        "tokenizer": packed.tokenizer,
        "scoring": scoring,
        "chunks_in": chunks_in,
        "chunks_out": packed.chunks.len(),
        "tokens_used": packed.tokens_used,
        "dropped_dedup": packed.dropped_dedup(),
        "dropped_budget": packed.dropped_budget(),
        "notes": packed.notes,
        "chunks": packed.chunks,
        "dropped": packed.dropped,
        "conflicts": packed.conflicts,
    });
    let mut s = serde_json::to_string_pretty(&value)?;
    s.push('\n');
    Ok(s)
}
