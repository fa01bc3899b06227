//! Tests of packing for a rendered context: the budget holds for the text, merged neighbours are
//! paid once, headings ride with their sections.

use std::sync::Arc;

use proptest::prelude::*;
use rag_core::{Chunk, ChunkKind, DropReason, PackOrder, RequestContext, SelectionStrategy, Span, TokenCounter};
use rag_tokens::TiktokenCounter;
use serde_json::json;

use super::*;
use crate::render::{ContextConfig, ContextFormat};
use crate::select::Objective;

fn ctx() -> RequestContext {
    RequestContext::local("acme")
}

fn cl100k() -> Arc<dyn TokenCounter> {
    Arc::new(TiktokenCounter::cl100k())
}

/// A document and pieces of it, as the heading-aware chunker cuts them: a heading chunk and body
/// chunks with spans, overlapping by `overlap` bytes.
struct Doc {
    text: String,
}

impl Doc {
    fn piece(&self, id: &str, start: usize, end: usize, score: f64) -> Chunk {
        let mut c = Chunk::with_content(id, "guide.md", "acme", &self.text[start..end]);
        c.span = Some(Span::new(start, end));
        c.score = Some(score);
        c
    }
}

fn body(mut chunk: Chunk, parent: &str, path: &[&str]) -> Chunk {
    chunk.parent_id = Some(parent.into());
    chunk.set_kind(Some(ChunkKind::Body), None);
    chunk.metadata.insert("heading_path".into(), json!(path));
    chunk
}

fn heading(mut chunk: Chunk, path: &[&str]) -> Chunk {
    chunk.set_kind(Some(ChunkKind::Heading), None);
    chunk.metadata.insert("heading_path".into(), json!(path));
    chunk
}

fn ids(chunks: &[Chunk]) -> Vec<&str> {
    chunks.iter().map(|c| c.id.as_str()).collect()
}

#[test]
fn overlapping_neighbours_render_once_and_the_freed_tokens_buy_more_context() {
    // Three body chunks of one section, each overlapping the next by a sentence, and a fourth
    // chunk elsewhere that only fits if the overlap is paid once.
    let sentences: Vec<String> = (0..12)
        .map(|i| format!("Sentence number {i} says something about streams and their buffers. "))
        .collect();
    let text = sentences.concat();
    let at = |k: usize| sentences[..k].iter().map(String::len).sum::<usize>();
    let doc = Doc { text: text.clone() };
    let path = ["Streams"];
    let a = body(doc.piece("g#1", at(0), at(4), 0.9), "g#0", &path);
    let b = body(doc.piece("g#2", at(3), at(7), 0.8), "g#0", &path);
    let c = body(doc.piece("g#3", at(6), at(10), 0.7), "g#0", &path);
    let far = body(doc.piece("g#4", at(10), at(12), 0.6), "g#0", &path);
    let chunks = vec![a, b, c, far];

    let counter = cl100k();
    let tokens = |s: &str| counter.count(s).unwrap();
    let separate: usize = chunks
        .iter()
        .map(|c| tokens(c.content().unwrap_or_default()))
        .sum::<usize>()
        + tokens("Streams\n")
        + 3 * tokens("\n\n");
    let merged_text = format!("Streams\n{}", &text[..at(12)]);
    let budget = tokens(&merged_text);
    assert!(
        budget < separate,
        "the test needs the overlap to matter: {budget} vs {separate}"
    );

    let packer = ContextPacker::new(
        PackerConfig::builder()
            .with_order(PackOrder::Descending)
            .with_token_counter(Arc::clone(&counter))
            .build()
            .unwrap(),
    );
    let merged = packer
        .pack_context_blocking(&ctx(), chunks.clone(), budget as i64, &ContextFormat::default())
        .unwrap();
    assert_eq!(
        ids(&merged.chunks),
        ["g#1", "g#2", "g#3", "g#4"],
        "all four fit once merged"
    );
    assert_eq!(merged.context.as_deref(), Some(merged_text.as_str()));
    assert_eq!(merged.tokens_used, budget);
    assert_eq!(merged.excerpts.len(), 1);

    let unmerged = packer
        .pack_context_blocking(
            &ctx(),
            chunks,
            budget as i64,
            &ContextFormat::default().to_builder().with_merge_adjacent(false).build(),
        )
        .unwrap();
    assert!(
        unmerged.chunks.len() < 4,
        "paying the overlaps twice leaves a chunk out"
    );
    assert!(unmerged.tokens_used <= budget);
}

#[test]
fn a_heading_is_not_packed_alone_while_its_section_can_carry_it() {
    let text = "## readLines()\n\nReads the file one line at a time.\n\n## close()\n";
    let doc = Doc { text: text.to_owned() };
    let chunks = vec![
        heading(doc.piece("f#0", 0, 14, 1.0), &["File"]),
        body(doc.piece("f#1", 16, 50, 0.2), "f#0", &["File", "readLines()"]),
        heading(doc.piece("f#2", 52, 62, 0.9), &["File"]),
    ];
    for strategy in SelectionStrategy::ALL {
        let packer = ContextPacker::new(
            PackerConfig::builder()
                .with_strategy(strategy)
                .with_token_counter(cl100k())
                .build()
                .unwrap(),
        );
        let packed = packer
            .pack_context_blocking(&ctx(), chunks.clone(), 200, &ContextFormat::default())
            .unwrap();
        // f#0 rides with its body, which its score lifted; f#2 has no body among the candidates.
        assert_eq!(ids(&packed.chunks).len(), 2, "{strategy}");
        assert!(ids(&packed.chunks).contains(&"f#1") && ids(&packed.chunks).contains(&"f#2"));
        assert_eq!(
            packed.dropped[0].reason,
            DropReason::HeadingOnly {
                shown_by: Some("f#1".into())
            },
            "{strategy}"
        );
        let context = packed.context.unwrap();
        assert!(context.contains("File > readLines()\nReads the file"), "{context}");
    }
    // Without section-aware packing a heading is a candidate like any chunk: all three are packed.
    let seed = ContextPacker::new(
        PackerConfig::builder()
            .with_section_aware(false)
            .with_token_counter(cl100k())
            .build()
            .unwrap(),
    );
    let packed = seed.pack_blocking(&ctx(), chunks, 200).unwrap();
    assert_eq!(packed.chunks.len(), 3);
}

#[test]
fn a_packed_piece_of_code_is_shown_under_its_file_and_enclosing_definitions() {
    let text = "class Command:\n    def invoke(self, ctx):\n        return ctx.result\n";
    let doc = Doc { text: text.to_owned() };
    let mut method = doc.piece("tool.py#1", 19, 67, 1.0);
    method.set_kind(Some(ChunkKind::Function), None);
    method
        .metadata
        .insert("heading_path".into(), json!(["class Command", "def invoke"]));
    method.source_uri = Some("src/tool.py".into());
    let packer = ContextPacker::new(PackerConfig::builder().with_token_counter(cl100k()).build().unwrap());
    let packed = packer
        .pack_context_blocking(&ctx(), vec![method.clone()], 200, &ContextFormat::default())
        .unwrap();
    let context = packed.context.unwrap();
    assert!(
        context.starts_with("src/tool.py > class Command > def invoke\ndef invoke(self, ctx):"),
        "{context}"
    );
    // A body chunk of a document is shown under its headings alone, as before.
    method.set_kind(Some(ChunkKind::Body), None);
    let packed = packer
        .pack_context_blocking(&ctx(), vec![method], 200, &ContextFormat::default())
        .unwrap();
    assert!(packed.context.unwrap().starts_with("class Command > def invoke\n"));
}

#[test]
fn pinned_chunks_that_render_over_the_budget_are_refused() {
    let mut system = Chunk::with_content("sys", "prompt", "acme", "Answer from the context only.");
    system.pinned = true;
    system.token_count = Some(1); // a lie: the rendered text is what counts
    let packer = ContextPacker::new(PackerConfig::builder().with_token_counter(cl100k()).build().unwrap());
    let err = packer
        .pack_context_blocking(&ctx(), vec![system], 3, &ContextFormat::default())
        .unwrap_err();
    assert!(matches!(err, PackerError::PinnedOverBudget { budget: 3, .. }), "{err}");
}

fn arb_chunks() -> impl Strategy<Value = Vec<Chunk>> {
    let words = prop::sample::select(vec![
        "stream", "buffer", "the", "end", "data", "é", "日本", "\n", "  ", "{x}", "line", "😀", ".",
    ]);
    let text = prop::collection::vec(words, 20..200).prop_map(|w| w.concat());
    (
        text,
        prop::collection::vec((0usize..100, 1usize..60, 0u8..4, any::<bool>()), 0..12),
    )
        .prop_map(|(text, cuts)| {
            let doc = Doc { text };
            let len = doc.text.len();
            let boundary = |mut i: usize| {
                i = i.min(len);
                while !doc.text.is_char_boundary(i) {
                    i -= 1;
                }
                i
            };
            cuts.into_iter()
                .enumerate()
                .filter_map(|(k, (start, width, level, pinned))| {
                    let start = boundary(start * len / 100);
                    let end = boundary(start + width * len / 100);
                    (!doc.text[start..end].trim().is_empty()).then(|| {
                        let mut c = doc.piece(&format!("c{k}"), start, end, f64::from(level) / 3.0);
                        c.metadata
                            .insert("heading_path".into(), json!(["Guide", format!("Part {level}")]));
                        c.pinned = pinned && k == 0;
                        c
                    })
                })
                .collect()
        })
}

fn arb_format() -> impl Strategy<Value = ContextFormat> {
    (
        prop::sample::select(vec![
            "{content}",
            "[{id}] {content}",
            "<doc path=\"{heading_path}\">\n{content}\n</doc>",
            "{score}: {content} ({source_uri})",
        ]),
        prop::sample::select(vec!["\n\n", "\n---\n", "", " "]),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(template, delimiter, breadcrumbs, merge)| {
            ContextFormat::builder(ContextConfig::new(template).unwrap())
                .with_delimiter(delimiter)
                .with_breadcrumbs(breadcrumbs)
                .with_merge_adjacent(merge)
                .build()
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn the_rendered_context_is_within_budget_and_counted_exactly(
        chunks in arb_chunks(),
        format in arb_format(),
        strategy in prop::sample::select(SelectionStrategy::ALL.to_vec()),
        order in prop::sample::select(PackOrder::ALL.to_vec()),
        budget in 1i64..400,
    ) {
        let counter = cl100k();
        let packer = ContextPacker::new(
            PackerConfig::builder().with_strategy(strategy).with_order(order).with_token_counter(Arc::clone(&counter)).build().unwrap(),
        );
        match packer.pack_context_blocking(&ctx(), chunks.clone(), budget, &format) {
            Ok(packed) => {
                let context = packed.context.clone().unwrap_or_default();
                let tokens = counter.count(&context).unwrap();
                prop_assert!(tokens as i64 <= budget, "{tokens} > {budget}: {context:?}");
                prop_assert_eq!(packed.tokens_used, tokens);
                prop_assert_eq!(packed.chunks.len() + packed.dropped.len(), chunks.len());
                for chunk in packed.chunks.iter().filter(|c| !c.pinned) {
                    let content = chunk.content().unwrap_or_default();
                    prop_assert!(context.contains(content.trim()), "packed text is in the context");
                }
            }
            Err(PackerError::PinnedOverBudget { .. }) => prop_assert!(chunks.iter().any(|c| c.pinned)),
            Err(err) => prop_assert!(false, "{err}"),
        }
    }
}

/// Sections of a document of sentences, some long enough that they do not fit the budget whole:
/// what cut to fit works on.
fn arb_sections() -> impl Strategy<Value = Vec<Chunk>> {
    let sentence = prop::sample::select(vec![
        "The stream ends when the buffer drains. ",
        "Data is read one line at a time. ",
        "Nothing else happens here at all. ",
        "A buffer holds the bytes of the stream. ",
        "The end of the data closes the line. ",
    ]);
    prop::collection::vec((prop::collection::vec(sentence, 1..24), 0u8..10), 1..12).prop_map(|sections| {
        let mut text = String::new();
        let mut chunks = Vec::new();
        for (k, (sentences, score)) in sections.into_iter().enumerate() {
            let start = text.len();
            text.extend(sentences);
            let end = text.len();
            text.push('\n');
            let mut c = Chunk::with_content(format!("s{k}"), "guide.md", "acme", &text[start..end]);
            c.span = Some(Span::new(start, end));
            c.score = Some(f64::from(score) / 10.0);
            chunks.push(body(c, "h", &["Guide", &format!("Part {k}")]));
        }
        chunks
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn a_chunk_is_never_packed_beside_its_own_cut_part(
        chunks in arb_sections(),
        strategy in prop::sample::select(SelectionStrategy::ALL.to_vec()),
        query in prop::sample::select(vec!["stream buffer", "line data", "end", "nothing here"]),
        budget in 20i64..400,
    ) {
        let packer = ContextPacker::new(
            PackerConfig::builder()
                .with_strategy(strategy)
                .with_query(Some(query.into()))
                .with_token_counter(cl100k())
                .build()
                .unwrap(),
        );
        let packed = packer.pack_context_blocking(&ctx(), chunks, budget, &ContextFormat::default()).unwrap();
        let packed_ids = ids(&packed.chunks);
        for id in &packed_ids {
            if let Some(original) = id.strip_suffix("#cut") {
                prop_assert!(!packed_ids.contains(&original), "{strategy}: {original} and its part: {packed_ids:?}");
            }
        }
    }
}

#[test]
fn knapsack_packs_the_best_passage_rather_than_many_fragments_of_sections() {
    // The passage that answers, ranked first, and six short fragments scoring nearly as well:
    // either the passage (and one fragment) or all the fragments fit.
    let section = |id: &str, tokens: usize, score: f64| {
        let mut c = Chunk::with_content(id, format!("{id}.md"), "acme", format!("text of {id}"));
        c.token_count = Some(tokens);
        c.score = Some(score);
        body(c, "h", &["Guide", id])
    };
    let chunks = || {
        let mut chunks = vec![section("answer", 60, 1.0)];
        chunks.extend((0..6).map(|i| section(&format!("fragment{i}"), 10, 0.9)));
        chunks
    };
    let packed_with = |strategy, objective| {
        let config = PackerConfig::builder()
            .with_strategy(strategy)
            .with_objective(objective)
            .with_order(PackOrder::Descending)
            .build()
            .unwrap();
        let packed = ContextPacker::new(config).pack_blocking(&ctx(), chunks(), 70).unwrap();
        ids(&packed.chunks).join(" ")
    };
    for strategy in [SelectionStrategy::Knapsack, SelectionStrategy::Optimal] {
        // The default values sections by rank: the best passage stays.
        assert_eq!(packed_with(strategy, Objective::Auto), "answer fragment0", "{strategy}");
        assert_eq!(
            packed_with(strategy, Objective::RankPrior),
            "answer fragment0",
            "{strategy}"
        );
        // The score sum, still reachable, trades it for the fragments.
        assert_eq!(
            packed_with(strategy, Objective::ScoreSum),
            "fragment0 fragment1 fragment2 fragment3 fragment4 fragment5",
            "{strategy}"
        );
    }
}
