//! What one pack did for one question, the per-cell summary over all questions, and the table.

use std::fmt::Write as _;

use serde_json::{Value, json};

use crate::eval::questions::{Origin, Question};

/// What `ragctl pack` did for one question at one strategy and budget.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackOutcome {
    /// The gold answer is in the rendered context (see [`crate::eval::answer::contains_answer`]).
    pub answered: bool,
    /// The gold answer's words are in the rendered context, in order (see
    /// [`crate::eval::answer::contains_answer_words`]): the metric that compares formats.
    pub answered_words: bool,
    /// Ids of the packed chunks, in the order of the context.
    pub packed_ids: Vec<String>,
    /// Packed chunks whose `metadata.kind` is `"heading"`: a heading line and nothing else.
    pub heading_chunks: usize,
    /// `tokens_used` as `ragctl pack --format json` reports it.
    pub tokens_used: u64,
    /// Tokens of the rendered context under cl100k, counted by the harness.
    pub rendered_tokens: usize,
}

/// One strategy and budget, over all questions of a corpus.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// `--strategy`.
    pub strategy: String,
    /// `--budget`.
    pub budget: u64,
    /// Questions asked.
    pub questions: usize,
    /// Questions whose answer was in the context.
    pub answered: usize,
    /// Handwritten questions asked.
    pub handwritten: usize,
    /// Handwritten questions whose answer was in the context.
    pub handwritten_answered: usize,
    /// Mean heading-only chunks packed per question.
    pub heading_chunks: f64,
    /// Mean chunks packed per question.
    pub chunks: f64,
    /// Mean `tokens_used` per question.
    pub tokens_used: f64,
    /// Mean rendered tokens per question.
    pub rendered_tokens: f64,
    /// Questions whose rendered context had more tokens than the budget.
    pub over_budget: usize,
}

fn mean(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, count) = values.fold((0.0, 0usize), |(sum, count), v| (sum + v, count + 1));
    if count == 0 { 0.0 } else { sum / count as f64 }
}

/// Summarises the outcomes of one strategy and budget; `outcomes[i]` belongs to `questions[i]`.
///
/// ```
/// use rag_bench::eval::report::{PackOutcome, summarise};
/// let packed = PackOutcome { answered: true, answered_words: true, packed_ids: vec!["a#0".into(), "a#1".into()],
///     heading_chunks: 1, tokens_used: 490, rendered_tokens: 510 };
/// let summary = summarise(&[], "greedy", 500, &[packed]);
/// assert_eq!((summary.answered, summary.chunks, summary.over_budget), (1, 2.0, 1));
/// ```
pub fn summarise(questions: &[Question], strategy: &str, budget: u64, outcomes: &[PackOutcome]) -> Summary {
    let pairs = || questions.iter().zip(outcomes);
    let handwritten = || pairs().filter(|(q, _)| q.origin == Origin::Handwritten);
    Summary {
        strategy: strategy.to_owned(),
        budget,
        questions: outcomes.len(),
        answered: outcomes.iter().filter(|o| o.answered).count(),
        handwritten: handwritten().count(),
        handwritten_answered: handwritten().filter(|(_, o)| o.answered).count(),
        heading_chunks: mean(outcomes.iter().map(|o| o.heading_chunks as f64)),
        chunks: mean(outcomes.iter().map(|o| o.packed_ids.len() as f64)),
        tokens_used: mean(outcomes.iter().map(|o| o.tokens_used as f64)),
        rendered_tokens: mean(outcomes.iter().map(|o| o.rendered_tokens as f64)),
        over_budget: outcomes
            .iter()
            .filter(|o| u64::try_from(o.rendered_tokens).map_or(true, |t| t > budget))
            .count(),
    }
}

fn share(part: usize, whole: usize) -> String {
    if whole == 0 {
        "-".to_owned()
    } else {
        format!("{:.1}% ({part}/{whole})", 100.0 * part as f64 / whole as f64)
    }
}

/// The summaries as a Markdown table, one row per strategy and budget in the order given, so the
/// output pastes into `docs/quality.md` as it is.
///
/// ```
/// use rag_bench::eval::report::{Summary, format_table};
/// let row = Summary { strategy: "greedy".into(), budget: 500, questions: 4, answered: 3, handwritten: 2,
///     handwritten_answered: 1, heading_chunks: 4.25, chunks: 8.5, tokens_used: 497.0, rendered_tokens: 512.75, over_budget: 1 };
/// let table = format_table(&[row]);
/// assert!(table.ends_with("| greedy | 500 | 75.0% (3/4) | 50.0% (1/2) | 4.2 | 8.5 | 497.0 | 512.8 | 1 |\n"));
/// ```
pub fn format_table(summaries: &[Summary]) -> String {
    let mut out = String::from(
        "| strategy | budget | answer in context | handwritten only | heading-only chunks | chunks | tokens_used | rendered tokens | over budget |\n\
         |---|--:|--:|--:|--:|--:|--:|--:|--:|\n",
    );
    for s in summaries {
        // Writing to a String cannot fail.
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {:.1} | {:.1} | {:.1} | {:.1} | {} |",
            s.strategy,
            s.budget,
            share(s.answered, s.questions),
            share(s.handwritten_answered, s.handwritten),
            s.heading_chunks,
            s.chunks,
            s.tokens_used,
            s.rendered_tokens,
            s.over_budget,
        );
    }
    out
}

/// One strategy and budget of a format variant: how many questions found their answer's words in
/// the context built from the corpus's own documents, and from the variant's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VariantRow {
    /// `--strategy`.
    pub strategy: String,
    /// `--budget`.
    pub budget: u64,
    /// Questions asked.
    pub questions: usize,
    /// Answered from the corpus's documents (Markdown), on words.
    pub primary: usize,
    /// Answered from the variant's documents, on words.
    pub variant: usize,
}

impl VariantRow {
    /// The row of one cell; `primary[i]` and `variant[i]` belong to the same question.
    pub fn new(strategy: &str, budget: u64, primary: &[PackOutcome], variant: &[PackOutcome]) -> Self {
        Self {
            strategy: strategy.to_owned(),
            budget,
            questions: primary.len(),
            primary: primary.iter().filter(|o| o.answered_words).count(),
            variant: variant.iter().filter(|o| o.answered_words).count(),
        }
    }

    /// The variant's recall minus the primary's, in percentage points.
    pub fn difference_points(&self) -> f64 {
        if self.questions == 0 {
            0.0
        } else {
            100.0 * (self.variant as f64 - self.primary as f64) / self.questions as f64
        }
    }
}

/// The comparison of a format variant with the corpus's own format as a Markdown table, one row per
/// strategy and budget.
///
/// ```
/// use rag_bench::eval::report::{VariantRow, format_variant_table};
/// let row = VariantRow { strategy: "greedy".into(), budget: 500, questions: 4, primary: 3, variant: 2 };
/// let table = format_variant_table("markdown", "html", &[row]);
/// assert!(table.ends_with("| greedy | 500 | 75.0% (3/4) | 50.0% (2/4) | -25.0 |\n"), "{table}");
/// ```
pub fn format_variant_table(primary: &str, variant: &str, rows: &[VariantRow]) -> String {
    let mut out = format!(
        "| strategy | budget | {primary} (words) | {variant} (words) | difference (points) |\n|---|--:|--:|--:|--:|\n"
    );
    for row in rows {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {:+.1} |",
            row.strategy,
            row.budget,
            share(row.primary, row.questions),
            share(row.variant, row.questions),
            row.difference_points(),
        );
    }
    out.replace("| +0.0 |", "| 0.0 |").replace("| -0.0 |", "| 0.0 |")
}

/// BM25 against hybrid scoring at one strategy and budget: the same questions packed twice, the
/// second time with `ragctl pack --embedder` (a row of [`format_hybrid_table`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HybridRow {
    /// The strategy.
    pub strategy: String,
    /// The budget.
    pub budget: u64,
    /// Questions asked.
    pub questions: usize,
    /// Answers in the context with BM25 alone.
    pub bm25: usize,
    /// Answers in the context with hybrid scoring.
    pub hybrid: usize,
    /// Hand-written questions asked.
    pub handwritten: usize,
    /// Hand-written answers in the context with BM25 alone.
    pub bm25_handwritten: usize,
    /// Hand-written answers in the context with hybrid scoring.
    pub hybrid_handwritten: usize,
}

impl HybridRow {
    /// The row of `questions` packed with BM25 (`bm25`) and hybrid scoring (`hybrid`); `words`
    /// judges by the answer's words (for format variants), else by its text.
    pub fn new(
        strategy: &str,
        budget: u64,
        questions: &[Question],
        bm25: &[PackOutcome],
        hybrid: &[PackOutcome],
        words: bool,
    ) -> Self {
        let hit = |o: &PackOutcome| if words { o.answered_words } else { o.answered };
        let count = |outcomes: &[PackOutcome], handwritten: bool| {
            questions
                .iter()
                .zip(outcomes)
                .filter(|(q, o)| (!handwritten || q.origin == Origin::Handwritten) && hit(o))
                .count()
        };
        Self {
            strategy: strategy.to_owned(),
            budget,
            questions: questions.len(),
            bm25: count(bm25, false),
            hybrid: count(hybrid, false),
            handwritten: questions.iter().filter(|q| q.origin == Origin::Handwritten).count(),
            bm25_handwritten: count(bm25, true),
            hybrid_handwritten: count(hybrid, true),
        }
    }
}

/// Points of `b` over `a`, out of `whole`.
fn points(a: usize, b: usize, whole: usize) -> String {
    if whole == 0 {
        return "-".to_owned();
    }
    let p = 100.0 * (b as f64 - a as f64) / whole as f64;
    if p == 0.0 { "0.0".to_owned() } else { format!("{p:+.1}") }
}

/// The table of BM25 against hybrid scoring: all questions and the hand-written ones, each with
/// the difference in points.
pub fn format_hybrid_table(rows: &[HybridRow]) -> String {
    let mut out = String::from(
        "| strategy | budget | bm25 | hybrid | points | bm25, handwritten | hybrid, handwritten | points |\n\
         |---|--:|--:|--:|--:|--:|--:|--:|\n",
    );
    for r in rows {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            r.strategy,
            r.budget,
            share(r.bm25, r.questions),
            share(r.hybrid, r.questions),
            points(r.bm25, r.hybrid, r.questions),
            share(r.bm25_handwritten, r.handwritten),
            share(r.hybrid_handwritten, r.handwritten),
            points(r.bm25_handwritten, r.hybrid_handwritten, r.handwritten),
        );
    }
    out
}

/// The raw results of one question as JSON, so two runs can be compared question by question:
/// `cells` are the (strategy, budget, outcome) of each pack, `in_one_chunk` whether some chunk of
/// the corpus holds the answer's span whole (`None` when the chunks carry no usable spans).
pub fn question_json(question: &Question, in_one_chunk: Option<bool>, cells: &[(&str, u64, &PackOutcome)]) -> Value {
    json!({
        "id": question.id,
        "origin": question.origin.as_str(),
        "file": question.file,
        "span": [question.span.start, question.span.end],
        "in_one_chunk": in_one_chunk,
        "results": cells.iter().map(|(strategy, budget, o)| json!({
            "strategy": strategy,
            "budget": budget,
            "answered": o.answered,
            "answered_words": o.answered_words,
            "heading_chunks": o.heading_chunks,
            "tokens_used": o.tokens_used,
            "rendered_tokens": o.rendered_tokens,
            "packed": o.packed_ids,
        })).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn question(id: &str, origin: Origin) -> Question {
        Question {
            id: id.to_owned(),
            question: "q".to_owned(),
            file: "a.md".to_owned(),
            answer: "a b c d".to_owned(),
            origin,
            span: 0..7,
        }
    }

    fn outcome(answered: bool, chunks: usize, headings: usize, used: u64, rendered: usize) -> PackOutcome {
        PackOutcome {
            answered,
            answered_words: answered,
            packed_ids: (0..chunks).map(|i| format!("a.md#{i}")).collect(),
            heading_chunks: headings,
            tokens_used: used,
            rendered_tokens: rendered,
        }
    }

    #[test]
    fn summary_splits_handwritten_and_counts_contexts_over_the_budget() {
        let questions = [
            question("q1", Origin::Handwritten),
            question("q2", Origin::Derived),
            question("q3", Origin::Handwritten),
        ];
        let outcomes = [
            outcome(true, 8, 4, 499, 520),
            outcome(true, 2, 0, 300, 500),
            outcome(false, 5, 1, 450, 460),
        ];
        let s = summarise(&questions, "knapsack", 500, &outcomes);
        assert_eq!(
            (s.questions, s.answered, s.handwritten, s.handwritten_answered),
            (3, 2, 2, 1)
        );
        assert_eq!((s.chunks, s.heading_chunks), (5.0, 5.0 / 3.0));
        assert_eq!((s.tokens_used, s.rendered_tokens), (1249.0 / 3.0, 1480.0 / 3.0));
        assert_eq!(s.over_budget, 1, "500 rendered tokens fit a budget of 500; 520 do not");
    }

    #[test]
    fn table_has_one_row_per_cell_in_order_and_a_dash_for_no_questions() {
        let questions = [question("q1", Origin::Derived)];
        let rows = [
            summarise(&questions, "greedy", 500, &[outcome(true, 3, 1, 480, 490)]),
            summarise(&questions, "optimal", 2000, &[outcome(false, 10, 2, 1999, 2003)]),
        ];
        assert_eq!(
            format_table(&rows),
            "| strategy | budget | answer in context | handwritten only | heading-only chunks | chunks | tokens_used | rendered tokens | over budget |\n\
             |---|--:|--:|--:|--:|--:|--:|--:|--:|\n\
             | greedy | 500 | 100.0% (1/1) | - | 1.0 | 3.0 | 480.0 | 490.0 | 0 |\n\
             | optimal | 2000 | 0.0% (0/1) | - | 2.0 | 10.0 | 1999.0 | 2003.0 | 1 |\n"
        );
    }

    #[test]
    fn hybrid_rows_compare_the_same_questions_overall_and_handwritten() {
        let questions = [
            question("q1", Origin::Handwritten),
            question("q2", Origin::Derived),
            question("q3", Origin::Handwritten),
        ];
        let bm25 = [
            outcome(true, 1, 0, 1, 1),
            outcome(true, 1, 0, 1, 1),
            outcome(false, 1, 0, 1, 1),
        ];
        let hybrid = [
            outcome(true, 1, 0, 1, 1),
            outcome(false, 1, 0, 1, 1),
            outcome(true, 1, 0, 1, 1),
        ];
        let row = HybridRow::new("greedy", 1000, &questions, &bm25, &hybrid, false);
        assert_eq!(
            (
                row.bm25,
                row.hybrid,
                row.handwritten,
                row.bm25_handwritten,
                row.hybrid_handwritten
            ),
            (2, 2, 2, 1, 2)
        );
        assert_eq!(
            format_hybrid_table(&[row]),
            "| strategy | budget | bm25 | hybrid | points | bm25, handwritten | hybrid, handwritten | points |\n\
             |---|--:|--:|--:|--:|--:|--:|--:|\n\
             | greedy | 1000 | 66.7% (2/3) | 66.7% (2/3) | 0.0 | 50.0% (1/2) | 100.0% (2/2) | +50.0 |\n"
        );
    }

    #[test]
    fn question_json_holds_the_span_and_every_pack() {
        let q = question("q1", Origin::Handwritten);
        let o = outcome(true, 2, 1, 90, 95);
        let value = question_json(&q, Some(true), &[("greedy", 500, &o)]);
        assert_eq!(value["span"], json!([0, 7]));
        assert_eq!(value["origin"], "handwritten");
        assert_eq!(value["results"][0]["packed"], json!(["a.md#0", "a.md#1"]));
        assert_eq!(value["results"][0]["answered"], true);
    }
}
