//! Exact groups: texts with equal normalised text, found by the sequence keys of the per-text pass
//! and confirmed on the texts.

use std::collections::HashMap;

use rustc_hash::FxBuildHasher;

use super::DedupVerdict;
use super::blocks::BLOCK_TEXTS;
use super::definition::normalise;
use super::prepare::Block;

/// Groups equal normalised texts by the keys of the per-text pass, taking the texts in `order`:
/// returns, per position `p`, the first position whose text has the same normalised text (`p`
/// itself if none came before), or `None` for a `None` text.
pub(super) fn group_equal_texts(texts: &[Option<&str>], blocks: &[Block], order: &[usize]) -> Vec<Option<usize>> {
    let mut groups: HashMap<u64, usize, FxBuildHasher> = HashMap::with_capacity_and_hasher(order.len(), FxBuildHasher);
    // Representatives that share a key, chained: almost always a chain of one.
    let mut same_key: Vec<usize> = vec![usize::MAX; order.len()];
    let mut representative = Vec::with_capacity(order.len());
    for (p, &i) in order.iter().enumerate() {
        let key = blocks[i / BLOCK_TEXTS].keys[i % BLOCK_TEXTS];
        let (Some(text), Some(key)) = (texts[i], key) else {
            representative.push(None);
            continue;
        };
        let mut first = p;
        match groups.get(&key) {
            None => {
                groups.insert(key, p);
            }
            Some(&head) => {
                // Confirm on the texts themselves: equal keys are not proof of equal texts.
                let normalised = normalise(text);
                let mut at = head;
                while at != usize::MAX {
                    if texts[order[at]].is_some_and(|other| normalise(other) == normalised) {
                        first = at;
                        break;
                    }
                    at = same_key[at];
                }
                if first == p {
                    same_key[p] = head;
                    groups.insert(key, p);
                }
            }
        }
        representative.push(Some(first));
    }
    representative
}

/// The verdicts of exact dedup alone, from the groups of [`group_equal_texts`]: a later member of
/// a group is an exact duplicate of its first, unless it is an anchor.
pub(super) fn verdicts(representative: &[Option<usize>], anchors: usize) -> Vec<DedupVerdict> {
    (0..representative.len())
        .map(|p| match representative[p] {
            Some(first) if first != p && p >= anchors => DedupVerdict::ExactDuplicate { of: first },
            _ => DedupVerdict::Kept,
        })
        .collect()
}
