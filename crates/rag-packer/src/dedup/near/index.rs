//! The index: the shared prefix tokens of the kept texts, and the proposals a new text gets from it.

use super::candidates::UNSHARED;
use super::verify::{Hint, load, verification_work, verify};
use crate::dedup::table::TokenSet;

/// The inverted index over the shared prefix tokens of the kept texts: probing it with a text's
/// prefix finds every earlier kept text whose prefix shares a token with it, which prefix
/// filtering proves is a superset of those that can reach the threshold.
pub(super) struct PrefixIndex {
    threshold: f64,
    /// Per shared token, the latest posting; postings of one token are chained through `next`.
    head: Vec<u32>,
    posting_text: Vec<u32>,
    next: Vec<u32>,
    /// Per text, the last query that proposed it, so each pair is verified once.
    seen_by: Vec<u32>,
    proposals: Vec<u32>,
    query: u32,
    /// The current text's full set, filled only when a proposal needs verifying.
    query_set: TokenSet,
    /// The work done so far: one unit per posting walked and per proposal considered, plus the
    /// tokens of every set a verification may probe.
    work: u64,
}

const END: u32 = u32::MAX;

impl PrefixIndex {
    pub(super) fn new(threshold: f64, shared_tokens: usize, texts: usize) -> Self {
        Self {
            threshold,
            head: vec![END; shared_tokens],
            posting_text: Vec::new(),
            next: Vec::new(),
            seen_by: vec![u32::MAX; texts],
            proposals: Vec::new(),
            query: 0,
            query_set: TokenSet::default(),
            work: 0,
        }
    }

    /// The work done so far (see the field).
    pub(super) fn work(&self) -> u64 {
        self.work
    }

    /// Indexes the shared tokens among `ids` (a text's [`SharedTokens::of`](super::candidates::SharedTokens::of)) as those of `text`;
    /// with `propose`, also collects the earlier texts that share one of them as this query's
    /// proposals. Returns the mark to [`retract`](Self::retract) it with.
    pub(super) fn insert(&mut self, text: usize, ids: &[u32], propose: bool) -> usize {
        let mark = self.posting_text.len();
        self.query = self.query.wrapping_add(1);
        self.proposals.clear();
        for &id in ids.iter().filter(|&&id| id != UNSHARED) {
            let node = self.posting_text.len() as u32;
            self.posting_text.push(text as u32);
            let previous = std::mem::replace(&mut self.head[id as usize], node);
            self.next.push(previous);
            let mut node = if propose { previous } else { END };
            while node != END {
                self.work += 1;
                let other = self.posting_text[node as usize];
                let seen = &mut self.seen_by[other as usize];
                if *seen != self.query {
                    *seen = self.query;
                    self.proposals.push(other);
                }
                node = self.next[node as usize];
            }
        }
        mark
    }

    /// Takes out the postings of the last [`insert`](Self::insert), given its `ids` and mark: they
    /// head their chains, so each chain is restored to what it was.
    pub(super) fn retract(&mut self, ids: &[u32], mark: usize) {
        let shared = ids.iter().filter(|&&id| id != UNSHARED);
        for (&id, &previous) in shared.zip(&self.next[mark..]) {
            self.head[id as usize] = previous;
        }
        self.posting_text.truncate(mark);
        self.next.truncate(mark);
    }

    /// The first proposed text (smallest index) whose similarity with `set` reaches the threshold.
    /// `set_of` gives the shingle set of an earlier text; `hint` is a verification done earlier
    /// (see [`Hint`]), used if its text is proposed.
    pub(super) fn first_match<'s>(
        &mut self,
        set_of: impl Fn(usize) -> &'s [u64],
        set: &[u64],
        hint: Option<Hint>,
    ) -> Option<(usize, f64)> {
        if set.is_empty() || self.proposals.is_empty() {
            return None;
        }
        self.proposals.sort_unstable();
        let mut query_loaded = false;
        for &other in &self.proposals {
            self.work += 1;
            if let Some(hint) = hint.filter(|hint| hint.text == other) {
                self.work += u64::from(hint.work);
                match hint.similarity {
                    Some(similarity) => return Some((other as usize, similarity)),
                    None => continue,
                }
            }
            let other_set = set_of(other as usize);
            let work = verification_work(self.threshold, set.len(), other_set.len());
            if work == 0 {
                continue;
            }
            self.work += work;
            if !query_loaded {
                load(&mut self.query_set, set);
                query_loaded = true;
            }
            if let Some(similarity) = verify(self.threshold, &self.query_set, set.len(), other_set) {
                return Some((other as usize, similarity));
            }
        }
        None
    }
}
