//! Stage 7: arranging the selection in the prompt (pinned chunks stay first, untouched).
//!
//! The rank-based orders take their items in rank order (best first, as
//! [`rank_order`](crate::rank_order) gives it); the input-based ones take a function giving each
//! item's position in the caller's input. Every order is generic over its items, so the pipeline,
//! the Repacker and the bindings arrange chunks, positions or the caller's own objects with the
//! same functions. An [`Order`] is the extension point for orders of your own.

use rag_core::{Chunk, Order, PackOrder, PackerError};

/// Stage 7 for the built-in orders: `ranked` (best first) rearranged by `order`.
///
/// [`PackOrder::Custom`] (and any order this version does not know) keeps the rank order: the
/// pipeline applies a custom [`Order`] itself, through [`arrange_custom`], which can fail.
pub(crate) fn arrange<T>(order: &PackOrder, ranked: Vec<T>, input_position: impl Fn(&T) -> usize) -> Vec<T> {
    match order {
        PackOrder::LostInMiddle => lost_in_middle_order(ranked),
        PackOrder::Descending => descending_order(ranked),
        PackOrder::Ascending => ascending_order(ranked),
        PackOrder::Input => input_order(ranked, input_position),
        PackOrder::Reverse => reverse_order(ranked, input_position),
        PackOrder::Sides => sides_order(ranked),
        _ => ranked,
    }
}

/// Stage 7 for a custom order: `ranked` (input positions, best first) rearranged by `order`,
/// which must return a permutation.
pub(crate) fn arrange_custom(
    order: &dyn Order,
    chunks: &[Chunk],
    ranked: Vec<usize>,
) -> Result<Vec<usize>, PackerError> {
    let view: Vec<&Chunk> = ranked.iter().map(|&i| &chunks[i]).collect();
    let permutation = order.arrange(&view);
    let error = |message: String| PackerError::CustomOrder {
        order: order.name().to_owned(),
        message,
    };
    if permutation.len() != ranked.len() {
        return Err(error(format!(
            "returned {} positions for {} chunks",
            permutation.len(),
            ranked.len()
        )));
    }
    let mut seen = vec![false; ranked.len()];
    for &k in &permutation {
        match seen.get_mut(k) {
            Some(seen) if !*seen => *seen = true,
            Some(_) => return Err(error(format!("returned position {k} twice"))),
            None => return Err(error(format!("returned position {k}, out of 0..{}", ranked.len()))),
        }
    }
    Ok(permutation.into_iter().map(|k| ranked[k]).collect())
}

/// Best first: items given in rank order (best first) stay as they are.
///
/// ```
/// use rag_core::Chunk;
/// use rag_packer::{descending_order, rank_order};
///
/// let chunk = |id: &str, score| {
///     let mut c = Chunk::with_content(id, "d", "t", "text");
///     c.score = Some(score);
///     c
/// };
/// let chunks = [chunk("a", 0.2), chunk("b", 0.9), chunk("c", 0.5)];
/// let ranked: Vec<&Chunk> = rank_order(&chunks).into_iter().map(|i| &chunks[i]).collect();
/// let ids: Vec<&str> = descending_order(ranked).iter().map(|c| c.id.as_str()).collect();
/// assert_eq!(ids, ["b", "c", "a"]);
/// ```
pub fn descending_order<T>(ranked: Vec<T>) -> Vec<T> {
    ranked
}

/// Best last, next to the user's turn: items given in rank order (best first), reversed.
///
/// ```
/// use rag_packer::ascending_order;
///
/// assert_eq!(ascending_order(vec!["best", "second", "third"]), ["third", "second", "best"]);
/// ```
pub fn ascending_order<T>(mut ranked: Vec<T>) -> Vec<T> {
    ranked.reverse();
    ranked
}

/// Best at both ends, weakest in the middle (Liu et al., "Lost in the Middle"): ranks 1, 3, 5, ...
/// fill the front in order and ranks 2, 4, 6, ... fill the back from the end. The best item is
/// always first and the second best always last, whatever the count.
///
/// ```
/// use rag_packer::lost_in_middle_order;
///
/// assert_eq!(lost_in_middle_order(vec![1, 2, 3, 4, 5]), [1, 3, 5, 4, 2]);
/// assert_eq!(lost_in_middle_order(vec![1, 2, 3, 4]), [1, 3, 4, 2]);
/// ```
pub fn lost_in_middle_order<T>(ranked: Vec<T>) -> Vec<T> {
    let mut front = Vec::with_capacity(ranked.len());
    let mut back = Vec::with_capacity(ranked.len() / 2);
    for (rank, item) in ranked.into_iter().enumerate() {
        if rank % 2 == 0 {
            front.push(item);
        } else {
            back.push(item);
        }
    }
    front.extend(back.into_iter().rev());
    front
}

/// LangChain's `LongContextReorder` on the rank order, for users who compare with it.
///
/// Its algorithm reverses the list and then alternately prepends and appends, so the best item
/// lands first when the count is odd and last when it is even (the parity flip
/// [`lost_in_middle_order`] avoids). The Repacker's `sides` method is this order.
///
/// ```
/// use rag_packer::sides_order;
///
/// assert_eq!(sides_order(vec![1, 2, 3, 4, 5]), [1, 3, 5, 4, 2]);
/// assert_eq!(sides_order(vec![1, 2, 3, 4]), [2, 4, 3, 1]);
/// ```
pub fn sides_order<T>(ranked: Vec<T>) -> Vec<T> {
    let mut out = std::collections::VecDeque::with_capacity(ranked.len());
    for (i, item) in ranked.into_iter().rev().enumerate() {
        if i % 2 == 1 {
            out.push_back(item);
        } else {
            out.push_front(item);
        }
    }
    out.into()
}

/// The order the items had in the caller's input.
///
/// ```
/// use rag_packer::input_order;
///
/// // (input position, name) in rank order.
/// let ranked = vec![(2, "c"), (0, "a"), (1, "b")];
/// assert_eq!(input_order(ranked, |item| item.0), [(0, "a"), (1, "b"), (2, "c")]);
/// ```
pub fn input_order<T>(mut items: Vec<T>, input_position: impl Fn(&T) -> usize) -> Vec<T> {
    items.sort_by_key(input_position);
    items
}

/// The caller's input order, reversed.
///
/// ```
/// use rag_packer::reverse_order;
///
/// let ranked = vec![(2, "c"), (0, "a"), (1, "b")];
/// assert_eq!(reverse_order(ranked, |item| item.0), [(2, "c"), (1, "b"), (0, "a")]);
/// ```
pub fn reverse_order<T>(items: Vec<T>, input_position: impl Fn(&T) -> usize) -> Vec<T> {
    let mut items = input_order(items, input_position);
    items.reverse();
    items
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lost_in_middle_matches_the_reference_examples() {
        assert_eq!(lost_in_middle_order(vec![1, 2, 3, 4, 5]), [1, 3, 5, 4, 2]);
        assert_eq!(lost_in_middle_order(vec![1, 2, 3, 4]), [1, 3, 4, 2]);
        assert_eq!(lost_in_middle_order(vec![1]), [1]);
        assert_eq!(lost_in_middle_order(Vec::<u8>::new()), Vec::<u8>::new());
        assert_eq!(lost_in_middle_order(vec![1, 2]), [1, 2]);
    }

    #[test]
    fn sides_matches_langchain_for_every_small_count() {
        // LangChain: reverse, then for i, x: i odd -> append, i even -> insert at 0.
        for n in 0..9 {
            let ranked: Vec<usize> = (1..=n).collect();
            let mut reference: Vec<usize> = Vec::new();
            for (i, x) in ranked.iter().rev().enumerate() {
                if i % 2 == 1 {
                    reference.push(*x);
                } else {
                    reference.insert(0, *x);
                }
            }
            assert_eq!(sides_order(ranked), reference, "n = {n}");
        }
    }

    fn scored(id: &str, score: Option<f64>) -> Chunk {
        let mut chunk = Chunk::with_content(id, "d", "t", "text");
        chunk.score = score;
        chunk
    }

    fn ids(chunks: &[Chunk]) -> Vec<&str> {
        chunks.iter().map(|c| c.id.as_str()).collect()
    }

    #[test]
    fn ascending_and_descending_arrange_the_rank_order_and_mirror_each_other() {
        // Unsorted, with a tie (b, d) and a missing score (e counts as 0.0, above -0.5).
        let input = || {
            vec![
                scored("d", Some(0.5)),
                scored("a", Some(-0.5)),
                scored("e", None),
                scored("b", Some(0.5)),
                scored("c", Some(0.9)),
            ]
        };
        let ranked = |chunks: Vec<Chunk>| -> Vec<Chunk> {
            crate::rank_order(&chunks)
                .into_iter()
                .map(|i| chunks[i].clone())
                .collect()
        };
        assert_eq!(ids(&descending_order(ranked(input()))), ["c", "b", "d", "e", "a"]);
        assert_eq!(ids(&ascending_order(ranked(input()))), ["a", "e", "d", "b", "c"]);
        let mut reversed = input();
        reversed.reverse();
        assert_eq!(
            ids(&descending_order(ranked(reversed))),
            ["c", "b", "d", "e", "a"],
            "the input order does not matter"
        );
    }

    #[test]
    fn arrange_dispatches_every_built_in_order() {
        // Items are (input position, rank); rank order is 0, 1, 2, 3.
        let ranked = || vec![(2, 0), (0, 1), (3, 2), (1, 3)];
        let ranks = |order| {
            arrange(&order, ranked(), |item: &(usize, usize)| item.0)
                .into_iter()
                .map(|i| i.1)
                .collect::<Vec<_>>()
        };
        assert_eq!(ranks(PackOrder::Descending), [0, 1, 2, 3]);
        assert_eq!(ranks(PackOrder::Ascending), [3, 2, 1, 0]);
        assert_eq!(ranks(PackOrder::LostInMiddle), [0, 2, 3, 1]);
        assert_eq!(ranks(PackOrder::Sides), [1, 3, 2, 0]);
        assert_eq!(ranks(PackOrder::Input), [1, 3, 0, 2]);
        assert_eq!(ranks(PackOrder::Reverse), [2, 0, 3, 1]);
    }

    #[test]
    fn input_orders_sort_by_position() {
        let items = vec![(5, 'x'), (1, 'y'), (3, 'z')];
        assert_eq!(input_order(items.clone(), |i| i.0), [(1, 'y'), (3, 'z'), (5, 'x')]);
        assert_eq!(reverse_order(items, |i| i.0), [(5, 'x'), (3, 'z'), (1, 'y')]);
    }
}
