//! The rules every context packer keeps, one function each, and [`check_packer`] that runs them all.
//!
//! A packer is anything implementing [`rag_core::Packer`]: `ContextPacker`, your own, or a closure
//! `|ctx, chunks, budget| ...`. What a packer promises depends on how it is configured (near dedup
//! or not, an input-based order or not, exact selection or not), so the caller describes that in a
//! [`PackerSpec`]. The suite checks the packer against its own reference definitions (dedup by all
//! pairs, selection by brute force), written here from the documented rules and independently of
//! `rag-packer`'s code.
//!
//! ```
//! use rag_contract::packer::{PackerCase, PackerSpec, check_packer};
//! use rag_contract::testing::WordCounter;
//! use rag_core::{Chunk, PackedContext, PackerError, RequestContext};
//!
//! // A packer that refuses every input: it keeps no promise about packing valid input.
//! let refuse_all = |_: &RequestContext, _: Vec<Chunk>, budget: i64| -> Result<PackedContext, PackerError> {
//!     Err(PackerError::InvalidBudget { budget })
//! };
//! let mut chunk = Chunk::with_content("a", "doc", "acme", "some words");
//! chunk.score = Some(0.5);
//! let case = PackerCase::new("one chunk", RequestContext::local("acme"), vec![chunk], 10);
//! let spec = PackerSpec::new(&WordCounter);
//! let report = check_packer(&refuse_all, &spec, &case);
//! assert_eq!(report.broken_rules(), ["valid_input_packed"]);
//! ```

use std::collections::{BTreeSet, HashMap, HashSet};

use rag_core::{
    Chunk, ChunkId, DropReason, PackedContext, Packer, PackerError, RequestContext, TenantId, TokenCounter,
    TokenizerError,
};

use crate::Report;
use crate::reference;

/// Which duplicates the packer promises to drop.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Dedup {
    /// Exact duplicates only: equal normalised text.
    Exact,
    /// Exact duplicates, then near duplicates: word-shingle Jaccard similarity at or above
    /// `threshold` with a pinned or better-ranked kept chunk.
    Near {
        /// The similarity at which a chunk is a near duplicate, in `(0, 1]`.
        threshold: f64,
        /// Words per shingle, at least 1.
        shingle_size: usize,
    },
}

/// What the packer under test promises, beyond the rules every packer keeps.
#[derive(Clone, Copy)]
pub struct PackerSpec<'a> {
    /// Counts the tokens of chunks that carry no `token_count` (as the packer is configured to).
    pub counter: &'a dyn TokenCounter,
    /// The duplicates it drops.
    pub dedup: Dedup,
    /// Whether the order of packed chunks follows the input order (`input`, `reverse`): then only
    /// the selection, not the arrangement, must be independent of the input order.
    pub order_follows_input: bool,
    /// Whether the selection is the exact optimum (`optimal`): then it must equal brute force.
    pub optimal: bool,
    /// The per-document cap on packed, unpinned chunks, if any.
    pub max_per_document: Option<usize>,
}

impl<'a> PackerSpec<'a> {
    /// Exact dedup, a rank-based order, no optimality promise, no cap.
    pub fn new(counter: &'a dyn TokenCounter) -> Self {
        Self {
            counter,
            dedup: Dedup::Exact,
            order_follows_input: false,
            optimal: false,
            max_per_document: None,
        }
    }
}

/// One input to pack: a name for reports, the request, the chunks and the budget.
#[derive(Debug, Clone)]
pub struct PackerCase {
    /// What the case is, e.g. `docs/architecture.md paragraphs, budget 300`.
    pub name: String,
    /// The request (its tenant is the only one allowed).
    pub ctx: RequestContext,
    /// The chunks, in input order.
    pub chunks: Vec<Chunk>,
    /// The token budget (zero or negative must be refused).
    pub budget: i64,
}

impl PackerCase {
    /// A case from its parts.
    pub fn new(name: impl Into<String>, ctx: RequestContext, chunks: Vec<Chunk>, budget: i64) -> Self {
        Self {
            name: name.into(),
            ctx,
            chunks,
            budget,
        }
    }
}

/// Every rule [`check_packer`] can run, in the order it runs them.
pub const RULES: [&str; 13] = [
    "deterministic",
    "foreign_tenant_refused",
    "invisible_chunks_hidden",
    "invalid_input_refused",
    "valid_input_packed",
    "never_over_budget",
    "pinned_first_and_kept",
    "every_chunk_accounted",
    "packed_chunks_unchanged",
    "within_document_cap",
    "dedup_matches_all_pairs",
    "optimal_matches_brute_force",
    "independent_of_input_order",
];

/// Runs `packer` on `case` (twice, and on reorderings of it) and checks every rule that applies.
///
/// Which rules run depends on the input: a case with a foreign chunk checks that it is refused; an
/// invalid case (budget not positive, repeated id, non-finite score, zero tokens, a `content_ref`
/// without `token_count`, pinned chunks over the budget) checks that it is refused; a valid case
/// checks everything else.
pub fn check_packer(packer: &dyn Packer, spec: &PackerSpec<'_>, case: &PackerCase) -> Report {
    let mut report = Report::new(case.name.clone());
    let first = pollster::block_on(packer.pack(&case.ctx, case.chunks.clone(), case.budget));
    let second = pollster::block_on(packer.pack(&case.ctx, case.chunks.clone(), case.budget));
    report.rule("deterministic", deterministic(&first, &second));

    if case.chunks.iter().any(|c| c.tenant_id != case.ctx.tenant_id) {
        report.rule(
            "foreign_tenant_refused",
            foreign_tenant_refused(&case.ctx.tenant_id, &case.chunks, &first),
        );
        return report;
    }
    // Chunks the principal may not see are removed first: every other rule is about the rest.
    let visible = PackerCase::new(
        case.name.clone(),
        case.ctx.clone(),
        case.chunks
            .iter()
            .filter(|c| visible_to(&case.ctx, c))
            .cloned()
            .collect(),
        case.budget,
    );
    if let Some(problem) = invalid_input(&visible.chunks, case.budget, spec.counter) {
        report.rule("invalid_input_refused", invalid_input_refused(&problem, &first));
        return report;
    }
    let packed = match first {
        Ok(packed) => {
            report.rule("valid_input_packed", []);
            packed
        }
        Err(err) => {
            report.rule(
                "valid_input_packed",
                [format!(
                    "a valid input of {} chunks was refused: {err}",
                    case.chunks.len()
                )],
            );
            return report;
        }
    };
    report.rule("invisible_chunks_hidden", invisible_chunks_hidden(case, &packed));
    check_packed(&mut report, spec, &visible, &packed);
    report.rule(
        "independent_of_input_order",
        independent_of_input_order(packer, spec, case, &packed),
    );
    report
}

/// Checks every rule that needs only one successful output of a valid input.
pub fn check_packed(report: &mut Report, spec: &PackerSpec<'_>, case: &PackerCase, packed: &PackedContext) {
    let tokens = |c: &Chunk| known_tokens(c, spec.counter).unwrap_or(0);
    report.rule(
        "never_over_budget",
        never_over_budget(&case.chunks, packed, case.budget, &tokens),
    );
    report.rule("pinned_first_and_kept", pinned_first_and_kept(&case.chunks, packed));
    report.rule("every_chunk_accounted", every_chunk_accounted(&case.chunks, packed));
    report.rule("packed_chunks_unchanged", packed_chunks_unchanged(&case.chunks, packed));
    if let Some(cap) = spec.max_per_document {
        report.rule("within_document_cap", within_document_cap(packed, cap));
    }
    report.rule(
        "dedup_matches_all_pairs",
        dedup_matches_all_pairs(&case.chunks, packed, spec.dedup),
    );
    if spec.optimal {
        let violations = optimal_matches_brute_force(&case.chunks, packed, spec, case.budget);
        if let Some(violations) = violations {
            report.rule("optimal_matches_brute_force", violations);
        }
    }
}

/// The tokens a packer counts a chunk for: its cached `token_count`, else `counter` on its content;
/// `Ok(None)` when it has neither, and the counter's error when it fails.
pub fn tokens_of(chunk: &Chunk, counter: &dyn TokenCounter) -> Result<Option<usize>, TokenizerError> {
    match (chunk.token_count, chunk.content()) {
        (Some(cached), _) => Ok(Some(cached)),
        (None, Some(content)) => counter.count(content).map(Some),
        (None, None) => Ok(None),
    }
}

/// [`tokens_of`] where the caller has checked the input already: a chunk the counter fails on
/// counts as none.
pub(crate) fn known_tokens(chunk: &Chunk, counter: &dyn TokenCounter) -> Option<usize> {
    tokens_of(chunk, counter).ok().flatten()
}

/// Why an input must be refused, found without asking the packer.
#[derive(Debug, Clone, PartialEq)]
pub enum InvalidInput {
    /// The budget is zero or negative.
    Budget(i64),
    /// Two chunks share this id.
    DuplicateId(ChunkId),
    /// This chunk's score is NaN or infinite.
    NonFiniteScore(ChunkId),
    /// This chunk counts as zero tokens.
    ZeroTokens(ChunkId),
    /// This chunk has only a `content_ref` and no `token_count`.
    MissingTokenCount(ChunkId),
    /// The token counter fails on this chunk's content (and it has no `token_count`).
    TokenizerFailed(ChunkId),
    /// The pinned chunks need more tokens than the budget.
    PinnedOverBudget {
        /// Tokens of the pinned chunks.
        pinned_tokens: usize,
    },
}

/// The first reason (if any) a packer must refuse `chunks` with `budget`: it cannot pack them
/// exactly, or it cannot keep the pinned-chunks promise.
pub fn invalid_input(chunks: &[Chunk], budget: i64, counter: &dyn TokenCounter) -> Option<InvalidInput> {
    if budget <= 0 {
        return Some(InvalidInput::Budget(budget));
    }
    let mut seen = HashSet::new();
    for c in chunks {
        if !seen.insert(&c.id) {
            return Some(InvalidInput::DuplicateId(c.id.clone()));
        }
        if !c.score_or_zero().is_finite() {
            return Some(InvalidInput::NonFiniteScore(c.id.clone()));
        }
        match tokens_of(c, counter) {
            Err(_) => return Some(InvalidInput::TokenizerFailed(c.id.clone())),
            Ok(None) => return Some(InvalidInput::MissingTokenCount(c.id.clone())),
            Ok(Some(0)) => return Some(InvalidInput::ZeroTokens(c.id.clone())),
            Ok(Some(_)) => {}
        }
    }
    let pinned_tokens: usize = chunks
        .iter()
        .filter(|c| c.pinned)
        .filter_map(|c| known_tokens(c, counter))
        .fold(0, usize::saturating_add);
    let over = usize::try_from(budget).is_ok_and(|budget| pinned_tokens > budget);
    over.then_some(InvalidInput::PinnedOverBudget { pinned_tokens })
}

/// Two runs on the same input gave the same result (compared by their debug form, so a NaN a
/// broken packer let through does not count as a difference).
pub fn deterministic(
    first: &Result<PackedContext, PackerError>,
    second: &Result<PackedContext, PackerError>,
) -> Vec<String> {
    if format!("{first:?}") == format!("{second:?}") {
        return Vec::new();
    }
    let describe = |r: &Result<PackedContext, PackerError>| match r {
        Ok(p) => format!("{} packed, {} dropped", p.chunks.len(), p.dropped.len()),
        Err(e) => format!("error: {e}"),
    };
    vec![format!(
        "two runs on the same input differ: {} vs {}",
        describe(first),
        describe(second)
    )]
}

/// An input holding a chunk of another tenant is refused with `ForeignTenant` naming such a chunk.
pub fn foreign_tenant_refused(
    tenant: &TenantId,
    chunks: &[Chunk],
    result: &Result<PackedContext, PackerError>,
) -> Vec<String> {
    let foreign: Vec<&Chunk> = chunks.iter().filter(|c| &c.tenant_id != tenant).collect();
    match result {
        Err(PackerError::ForeignTenant { chunk_id, .. }) if foreign.iter().any(|c| &c.id == chunk_id) => Vec::new(),
        Err(PackerError::ForeignTenant { chunk_id, .. }) => {
            vec![format!(
                "refused for chunk {chunk_id}, which is not of a foreign tenant"
            )]
        }
        Err(other) => vec![format!(
            "chunk {} of tenant {} was refused with another error: {other}",
            foreign[0].id, foreign[0].tenant_id
        )],
        Ok(packed) => {
            let leaked: Vec<&str> = packed
                .chunks
                .iter()
                .filter(|c| &c.tenant_id != tenant)
                .map(|c| c.id.as_str())
                .collect();
            vec![format!(
                "chunk {} of tenant {} was accepted (packed foreign chunks: {leaked:?})",
                foreign[0].id, foreign[0].tenant_id
            )]
        }
    }
}

/// An input the packer cannot pack exactly is refused with the matching error.
pub fn invalid_input_refused(problem: &InvalidInput, result: &Result<PackedContext, PackerError>) -> Vec<String> {
    let matches = match (problem, result) {
        (InvalidInput::Budget(b), Err(PackerError::InvalidBudget { budget })) => b == budget,
        (InvalidInput::DuplicateId(_), Err(PackerError::DuplicateChunkId { .. }))
        | (InvalidInput::NonFiniteScore(_), Err(PackerError::NonFiniteScore { .. }))
        | (InvalidInput::ZeroTokens(_), Err(PackerError::ZeroTokens { .. }))
        | (InvalidInput::MissingTokenCount(_), Err(PackerError::MissingTokenCount { .. }))
        | (InvalidInput::TokenizerFailed(_), Err(PackerError::Tokenizer { .. }))
        | (InvalidInput::PinnedOverBudget { .. }, Err(PackerError::PinnedOverBudget { .. })) => true,
        // An input can be invalid in several ways; the packer may name another of them first.
        (_, Err(_)) => !matches!(problem, InvalidInput::PinnedOverBudget { .. }),
        (_, Ok(_)) => false,
    };
    if matches {
        return Vec::new();
    }
    match result {
        Ok(packed) => vec![format!(
            "input with {problem:?} was packed ({} chunks) instead of refused",
            packed.chunks.len()
        )],
        Err(err) => vec![format!("input with {problem:?} was refused with another error: {err}")],
    }
}

/// The packed chunks' tokens (as the input chunks count) sum to `tokens_used`, which is within the
/// budget, and `tokens_budget` is the budget given.
pub fn never_over_budget(
    input: &[Chunk],
    packed: &PackedContext,
    budget: i64,
    tokens: &dyn Fn(&Chunk) -> usize,
) -> Vec<String> {
    let by_id: HashMap<&ChunkId, &Chunk> = input.iter().map(|c| (&c.id, c)).collect();
    let sum: usize = packed
        .chunks
        .iter()
        .map(|c| by_id.get(&c.id).map_or_else(|| tokens(c), |c| tokens(c)))
        .fold(0, usize::saturating_add);
    let mut out = Vec::new();
    if usize::try_from(budget).map_or(true, |budget| sum > budget) {
        out.push(format!("packed chunks hold {sum} tokens, over the budget of {budget}"));
    }
    if packed.tokens_used != sum {
        out.push(format!(
            "tokens_used is {}, the packed chunks hold {sum}",
            packed.tokens_used
        ));
    }
    if i64::try_from(packed.tokens_budget).ok() != Some(budget) {
        out.push(format!(
            "tokens_budget is {}, the budget was {budget}",
            packed.tokens_budget
        ));
    }
    out
}

/// The pinned chunks come first, all of them, in input order.
pub fn pinned_first_and_kept(input: &[Chunk], packed: &PackedContext) -> Vec<String> {
    let pinned: Vec<&ChunkId> = input.iter().filter(|c| c.pinned).map(|c| &c.id).collect();
    let head: Vec<&ChunkId> = packed.chunks.iter().take(pinned.len()).map(|c| &c.id).collect();
    if head == pinned {
        return Vec::new();
    }
    let dropped: Vec<&ChunkId> = packed
        .dropped
        .iter()
        .map(|d| &d.id)
        .filter(|id| pinned.contains(id))
        .collect();
    vec![format!(
        "pinned chunks {pinned:?} should lead the pack, which starts {head:?} (pinned among the dropped: {dropped:?})"
    )]
}

/// Whether `ctx`'s principal may see `chunk`: it holds every one of the chunk's `acl_labels`.
pub fn visible_to(ctx: &RequestContext, chunk: &Chunk) -> bool {
    chunk
        .acl_labels
        .iter()
        .all(|label| ctx.principal.acl_labels.contains(label))
}

/// A chunk the principal may not see is neither packed nor dropped nor named anywhere in the
/// result (its id does not appear in the result's JSON), and `hidden_by_acl` counts exactly those.
pub fn invisible_chunks_hidden(case: &PackerCase, packed: &PackedContext) -> Vec<String> {
    let invisible: Vec<&Chunk> = case.chunks.iter().filter(|c| !visible_to(&case.ctx, c)).collect();
    let mut out = Vec::new();
    if packed.hidden_by_acl != invisible.len() {
        out.push(format!(
            "hidden_by_acl is {}, but the principal may not see {} chunks",
            packed.hidden_by_acl,
            invisible.len()
        ));
    }
    let named: HashSet<&ChunkId> = packed
        .chunks
        .iter()
        .map(|c| &c.id)
        .chain(packed.dropped.iter().map(|d| &d.id))
        .collect();
    for chunk in invisible {
        if named.contains(&chunk.id) {
            out.push(format!(
                "chunk {} is invisible to the principal but in the result",
                chunk.id
            ));
        }
    }
    out
}

/// Every input chunk is either packed or dropped with a reason, exactly once, and nothing else is.
pub fn every_chunk_accounted(input: &[Chunk], packed: &PackedContext) -> Vec<String> {
    let mut seen: HashMap<&ChunkId, usize> = HashMap::new();
    for id in packed
        .chunks
        .iter()
        .map(|c| &c.id)
        .chain(packed.dropped.iter().map(|d| &d.id))
    {
        *seen.entry(id).or_insert(0) += 1;
    }
    let known: HashSet<&ChunkId> = input.iter().map(|c| &c.id).collect();
    let mut out = Vec::new();
    for c in input {
        match seen.get(&c.id).copied().unwrap_or(0) {
            1 => {}
            0 => out.push(format!("chunk {} is neither packed nor dropped", c.id)),
            n => out.push(format!("chunk {} is accounted for {n} times", c.id)),
        }
    }
    let mut unknown: Vec<&&ChunkId> = seen.keys().filter(|id| !known.contains(**id)).collect();
    unknown.sort();
    for id in unknown {
        out.push(format!("chunk {id} is in the output but not in the input"));
    }
    out
}

/// A packed chunk is the input chunk, unchanged: content, scores, metadata and unknown fields.
pub fn packed_chunks_unchanged(input: &[Chunk], packed: &PackedContext) -> Vec<String> {
    let by_id: HashMap<&ChunkId, &Chunk> = input.iter().map(|c| (&c.id, c)).collect();
    packed
        .chunks
        .iter()
        .filter_map(|c| {
            let original = by_id.get(&c.id)?;
            // Debug form, so a NaN compares equal to itself.
            (format!("{c:?}") != format!("{original:?}"))
                .then(|| format!("packed chunk {} differs from its input", c.id))
        })
        .collect()
}

/// At most `cap` unpinned chunks of one document are packed.
pub fn within_document_cap(packed: &PackedContext, cap: usize) -> Vec<String> {
    let mut per_document: HashMap<&str, usize> = HashMap::new();
    for c in packed.chunks.iter().filter(|c| !c.pinned) {
        *per_document.entry(c.document_id.as_str()).or_insert(0) += 1;
    }
    let mut out: Vec<String> = per_document
        .into_iter()
        .filter(|&(_, n)| n > cap)
        .map(|(doc, n)| format!("document {doc} has {n} packed chunks, over the cap of {cap}"))
        .collect();
    out.sort();
    out
}

/// The chunks dropped as duplicates are exactly those the all-pairs definition drops, for the same
/// reason (the same kept chunk, the same similarity).
pub fn dedup_matches_all_pairs(input: &[Chunk], packed: &PackedContext, dedup: Dedup) -> Vec<String> {
    let reference = reference::dedup(input, dedup);
    let actual: HashMap<&ChunkId, &DropReason> = packed
        .dropped
        .iter()
        .filter(|d| d.reason.is_duplicate())
        .map(|d| (&d.id, &d.reason))
        .collect();
    let mut out = Vec::new();
    for (chunk, expected) in input.iter().zip(&reference) {
        match (expected, actual.get(&chunk.id)) {
            (None, None) => {}
            (None, Some(reason)) => out.push(format!(
                "chunk {} was dropped as {reason}, but no kept chunk duplicates it",
                chunk.id
            )),
            (Some(expected), None) => {
                out.push(format!(
                    "chunk {} should be dropped as {expected}, but was not",
                    chunk.id
                ));
            }
            (Some(expected), Some(reason)) if same_reason(expected, reason) => {}
            (Some(expected), Some(reason)) => {
                out.push(format!(
                    "chunk {} was dropped as {reason}, expected {expected}",
                    chunk.id
                ));
            }
        }
    }
    out
}

fn same_reason(a: &DropReason, b: &DropReason) -> bool {
    match (a, b) {
        (DropReason::ExactDuplicate { of: a }, DropReason::ExactDuplicate { of: b }) => a == b,
        (DropReason::NearDuplicate { of: a, similarity: x }, DropReason::NearDuplicate { of: b, similarity: y }) => {
            a == b && (x - y).abs() <= 1e-9
        }
        _ => false,
    }
}

/// An `optimal` selection reaches the brute-force best total score (on inputs of at most
/// [`BRUTE_FORCE_MAX_CANDIDATES`](reference::BRUTE_FORCE_MAX_CANDIDATES) candidates; `None` when the rule does not apply: too many
/// candidates, or the packer announced that it fell back to another strategy).
pub fn optimal_matches_brute_force(
    input: &[Chunk],
    packed: &PackedContext,
    spec: &PackerSpec<'_>,
    budget: i64,
) -> Option<Vec<String>> {
    if packed.strategy != rag_core::SelectionStrategy::Optimal && !packed.notes.is_empty() {
        return None;
    }
    let budget = usize::try_from(budget).ok()?;
    let best = reference::brute_force_best_score(input, spec.dedup, budget, spec.counter, spec.max_per_document)?;
    let total: f64 = packed
        .chunks
        .iter()
        .filter(|c| !c.pinned)
        .map(|c| c.score_or_zero())
        .filter(|&s| s > 0.0)
        .sum();
    let tolerance = 1e-9 * best.abs().max(1.0);
    Some(if (total - best).abs() <= tolerance {
        Vec::new()
    } else {
        vec![format!("the packed chunks score {total}, brute force reaches {best}")]
    })
}

/// The same chunks in other orders (pinned chunks keep their relative order, which is part of the
/// output) give the same pack; with an input-based order, the same selection and drops.
pub fn independent_of_input_order(
    packer: &dyn Packer,
    spec: &PackerSpec<'_>,
    case: &PackerCase,
    packed: &PackedContext,
) -> Vec<String> {
    let mut out = Vec::new();
    for (how, reordered) in reorderings(&case.chunks) {
        let other = match pollster::block_on(packer.pack(&case.ctx, reordered, case.budget)) {
            Ok(other) => other,
            Err(err) => {
                out.push(format!("the input {how} was refused: {err}"));
                continue;
            }
        };
        if spec.order_follows_input {
            let ids = |p: &PackedContext| p.chunks.iter().map(|c| c.id.clone()).collect::<BTreeSet<_>>();
            let drops = |p: &PackedContext| {
                let mut d: Vec<String> = p.dropped.iter().map(|d| format!("{}: {}", d.id, d.reason)).collect();
                d.sort();
                d
            };
            if ids(packed) != ids(&other) {
                out.push(format!("the input {how} packs another selection"));
            } else if drops(packed) != drops(&other) {
                out.push(format!("the input {how} drops chunks for other reasons"));
            }
        } else if format!("{packed:?}") != format!("{other:?}") {
            let first: Vec<&str> = packed.chunks.iter().map(|c| c.id.as_str()).take(8).collect();
            let second: Vec<&str> = other.chunks.iter().map(|c| c.id.as_str()).take(8).collect();
            out.push(format!(
                "the input {how} packs differently: {first:?} vs {second:?} (first 8 ids)"
            ));
        }
    }
    out
}

/// The unpinned chunks reversed, and rotated by half, around the pinned ones (kept in order, first).
fn reorderings(chunks: &[Chunk]) -> Vec<(&'static str, Vec<Chunk>)> {
    let pinned: Vec<Chunk> = chunks.iter().filter(|c| c.pinned).cloned().collect();
    let others: Vec<Chunk> = chunks.iter().filter(|c| !c.pinned).cloned().collect();
    if others.len() < 2 {
        return Vec::new();
    }
    let mut reversed = others.clone();
    reversed.reverse();
    let mut rotated = others;
    let half = rotated.len() / 2;
    rotated.rotate_left(half);
    [("reversed", reversed), ("rotated", rotated)]
        .into_iter()
        .map(|(how, others)| (how, pinned.iter().cloned().chain(others).collect()))
        .collect()
}
