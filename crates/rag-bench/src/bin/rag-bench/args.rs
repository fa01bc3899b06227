//! The command line of `rag-bench`.

use std::path::PathBuf;

/// What to measure, and where.
pub(crate) struct Args {
    pub(crate) corpus: Option<PathBuf>,
    pub(crate) quick: bool,
    pub(crate) runs: usize,
    pub(crate) ragctl: Option<PathBuf>,
    pub(crate) work: PathBuf,
    pub(crate) only: Option<String>,
    /// The model folder of the embedding figures (default target/models/wordllama-l2-256).
    pub(crate) embedder: Option<PathBuf>,
}

pub(crate) fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        corpus: None,
        quick: false,
        runs: 0,
        ragctl: None,
        work: PathBuf::from("target/bench"),
        only: None,
        embedder: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = |name: &str| it.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "--corpus" => args.corpus = Some(value("--corpus")?.into()),
            "--quick" => args.quick = true,
            "--runs" => args.runs = value("--runs")?.parse().map_err(|e| format!("--runs: {e}"))?,
            "--ragctl" => args.ragctl = Some(value("--ragctl")?.into()),
            "--work" => args.work = value("--work")?.into(),
            "--embedder" => args.embedder = Some(value("--embedder")?.into()),
            "--only" => match value("--only")?.as_str() {
                section @ ("chunking" | "ragctl" | "near" | "packing" | "embed" | "access") => {
                    args.only = Some(section.to_owned())
                }
                other => {
                    return Err(format!(
                        "--only: no section {other:?} (chunking, ragctl, near, packing, embed, access)"
                    ));
                }
            },
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    if args.runs == 0 {
        args.runs = if args.quick { 3 } else { 7 };
    }
    Ok(args)
}
