//! The suite must be able to fail: a correct toy chunker passes, and each deliberately broken one
//! is rejected by exactly the rule it breaks.

use rag_core::{
    Block, BlockType, Chunk, ChunkError, Chunker, Document, HeadingLevel, Health, ParsedDocument, Principal,
    RequestContext, Span, TokenCounter, async_trait,
};
use serde_json::json;

use crate::chunker::{Budget, check_chunker};
use crate::testing::WordCounter;

/// How a toy chunker misbehaves.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Fault {
    None,
    ForeignTenant,
    DuplicateIds,
    PositionsFromOne,
    ForwardParent,
    HeadingUnderDeeperHeading,
    WrongTokenCount,
    OverBudget,
    ContentNotSpan,
    DropsLastBlock,
    OverlapIntoHeading,
    Nondeterministic,
}

/// One chunk per block, headings linked to the previous heading; `fault` breaks one promise.
struct Toy {
    fault: Fault,
    runs: std::sync::atomic::AtomicUsize,
}

impl Toy {
    fn new(fault: Fault) -> Self {
        Self {
            fault,
            runs: std::sync::atomic::AtomicUsize::new(0),
        }
    }
}

#[async_trait]
impl Chunker for Toy {
    async fn chunk(&self, ctx: &RequestContext, parsed: &ParsedDocument) -> Result<Vec<Chunk>, ChunkError> {
        let run = self.runs.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let text = &parsed.document.text;
        let mut chunks: Vec<Chunk> = Vec::new();
        let mut last_heading: Option<usize> = None;
        let mut blocks: Vec<&Block> = parsed.blocks.iter().collect();
        if self.fault == Fault::DropsLastBlock {
            blocks.pop();
        }
        for (i, block) in blocks.into_iter().enumerate() {
            let mut span = block.span;
            if self.fault == Fault::OverlapIntoHeading && block.block_type != BlockType::Heading && i > 0 {
                span.start = parsed.blocks[i - 1].span.start;
            }
            let content = &text[span.range()];
            let tenant = if self.fault == Fault::ForeignTenant {
                "other".into()
            } else {
                ctx.tenant_id.clone()
            };
            let id = if self.fault == Fault::DuplicateIds {
                "same".to_owned()
            } else {
                format!("c{i}")
            };
            let mut chunk = Chunk::with_content(id, parsed.document.id.clone(), tenant, content);
            chunk.position = if self.fault == Fault::PositionsFromOne {
                i + 1
            } else {
                i
            };
            chunk.span = Some(span);
            chunk.acl_labels = ctx.principal.acl_labels.clone();
            let tokens = WordCounter.count(content).map_err(|source| ChunkError::TokenCount {
                document_id: parsed.document.id.clone(),
                offset: Some(span.start),
                source,
            })?;
            chunk.token_count = Some(tokens + usize::from(self.fault == Fault::WrongTokenCount));
            if self.fault == Fault::ContentNotSpan {
                chunk.set_body(Some(content.to_uppercase()), None).ok();
            }
            if self.fault == Fault::Nondeterministic && run % 2 == 1 {
                chunk.metadata.insert("run".into(), json!(run));
            }
            if let Some(level) = block.level {
                chunk.metadata.insert("kind".into(), json!("heading"));
                chunk.metadata.insert("level".into(), json!(level.get()));
                chunk.parent_id = last_heading.map(|h| chunks[h].id.clone());
                last_heading = Some(chunks.len());
            } else {
                chunk.metadata.insert("kind".into(), json!("body"));
                chunk.parent_id = last_heading.map(|h| chunks[h].id.clone());
            }
            chunks.push(chunk);
        }
        if self.fault == Fault::ForwardParent
            && let Some(last) = chunks.last().map(|c| c.id.clone())
        {
            chunks[0].parent_id = Some(last);
        }
        if self.fault == Fault::HeadingUnderDeeperHeading {
            // Relabel the H2 as level 1: its parent, the H1, is then not of a smaller level,
            // while still coming earlier, so only the level rule is broken.
            let h2 = chunks.iter().position(|c| c.metadata.get("level") == Some(&json!(2)));
            if let Some(h2) = h2 {
                chunks[h2].metadata.insert("level".into(), json!(1));
            }
        }
        Ok(chunks)
    }

    async fn health(&self) -> Health {
        Health::Healthy
    }
}

fn fixture() -> (RequestContext, ParsedDocument) {
    let text = "# Guide\n\nInstall the tool first.\n\n## Usage\n\nRun it with care.\n\nMore words here and there.\n";
    let find = |needle: &str| {
        let start = text.find(needle).expect("fixture text");
        Span::new(start, start + needle.len())
    };
    let h = |level: u8| HeadingLevel::new(level).expect("valid level");
    let document = Document {
        id: "guide".into(),
        corpus_id: "c".into(),
        source_uri: "guide.md".into(),
        text: text.into(),
    };
    let parsed = ParsedDocument::new(
        document,
        vec![
            Block::heading(h(1), "Guide", find("# Guide")),
            Block::new(BlockType::Paragraph, find("Install the tool first.")),
            Block::heading(h(2), "Usage", find("## Usage")),
            Block::new(BlockType::Paragraph, find("Run it with care.")),
            Block::new(BlockType::Paragraph, find("More words here and there.")),
        ],
    );
    let ctx = RequestContext::new(
        "acme",
        Principal {
            id: "alice".into(),
            acl_labels: vec!["staff".into()],
        },
    );
    (ctx, parsed)
}

fn broken_rules(fault: Fault, max_tokens: usize) -> Vec<&'static str> {
    let (ctx, parsed) = fixture();
    let report = check_chunker(
        &Toy::new(fault),
        &ctx,
        &parsed,
        Some(Budget {
            max_tokens,
            counter: &WordCounter,
        }),
    );
    report.broken_rules()
}

#[test]
fn a_correct_chunker_passes_every_rule() {
    let (ctx, parsed) = fixture();
    let report = check_chunker(
        &Toy::new(Fault::None),
        &ctx,
        &parsed,
        Some(Budget {
            max_tokens: 16,
            counter: &WordCounter,
        }),
    );
    assert!(report.passed(), "{report}");
    assert_eq!(report.rules_run.len(), 13);
}

#[test]
fn each_broken_chunker_is_rejected_by_its_rule() {
    let cases = [
        (Fault::ForeignTenant, 16, "ids_from_context"),
        (Fault::DuplicateIds, 16, "ids_unique"),
        (Fault::PositionsFromOne, 16, "positions_increasing"),
        (Fault::ForwardParent, 16, "parents_earlier"),
        (Fault::HeadingUnderDeeperHeading, 16, "heading_parent_smaller_level"),
        (Fault::WrongTokenCount, 16, "exact_token_count"),
        (Fault::OverBudget, 3, "within_budget"),
        (Fault::ContentNotSpan, 16, "content_matches_span"),
        (Fault::DropsLastBlock, 16, "nothing_lost"),
        (Fault::OverlapIntoHeading, 16, "overlap_never_crosses_heading"),
        (Fault::Nondeterministic, 16, "deterministic"),
    ];
    for (fault, max_tokens, rule) in cases {
        let broken = broken_rules(fault, max_tokens);
        assert!(
            broken.contains(&rule),
            "{fault:?} should break {rule}, broke {broken:?}"
        );
    }
}

#[test]
fn a_failing_chunker_is_reported_not_panicked_on() {
    struct Failing;
    #[async_trait]
    impl Chunker for Failing {
        async fn chunk(&self, _: &RequestContext, _: &ParsedDocument) -> Result<Vec<Chunk>, ChunkError> {
            Err(ChunkError::InvalidConfig { message: "boom".into() })
        }
        async fn health(&self) -> Health {
            Health::Unhealthy("boom".into())
        }
    }
    let (ctx, parsed) = fixture();
    let report = check_chunker(&Failing, &ctx, &parsed, None);
    assert_eq!(report.broken_rules(), ["chunks_without_error"]);
    assert!(report.to_string().contains("boom"));
}

#[test]
fn output_that_repeats_a_title_in_every_chunk_breaks_the_linear_output_rule() {
    let (ctx, parsed) = fixture();
    let chunks = pollster::block_on(Toy::new(Fault::None).chunk(&ctx, &parsed)).unwrap_or_default();
    assert!(!chunks.is_empty());
    assert_eq!(
        crate::chunker::output_linear_in_input(&parsed, &chunks, 1, 512),
        Vec::<String>::new()
    );

    let mut bloated = chunks.clone();
    bloated[1]
        .metadata
        .insert("heading_path".into(), json!(["x".repeat(600)]));
    let broken = crate::chunker::output_linear_in_input(&parsed, &bloated, 1, 512);
    assert_eq!(broken.len(), 1, "{broken:?}");
    assert!(
        broken[0].starts_with("chunk c1: ") && broken[0].ends_with("over the bound of 512"),
        "{broken:?}"
    );

    let mut repeated = chunks;
    let again = repeated[1].clone();
    repeated.extend([again.clone(), again.clone(), again]);
    let broken = crate::chunker::output_linear_in_input(&parsed, &repeated, 1, 512);
    assert_eq!(broken.len(), 1, "{broken:?}");
    assert!(broken[0].contains("more than 1 times the"), "{broken:?}");
}
