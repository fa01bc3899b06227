//! Stage 7: arranging the selection in the prompt (pinned chunks stay first, untouched).
//!
//! The rank-based orders take their items in rank order (best first); the input-based ones take a
//! function giving each item's position in the caller's input.

/// Best first: the rank order itself.
///
/// ```
/// assert_eq!(rag_packer::descending_order(vec![1, 2, 3]), [1, 2, 3]);
/// ```
pub fn descending_order<T>(ranked: Vec<T>) -> Vec<T> {
    ranked
}

/// Best last, next to the user's turn: the rank order reversed.
///
/// ```
/// assert_eq!(rag_packer::ascending_order(vec![1, 2, 3]), [3, 2, 1]);
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
    fn lost_in_middle_matches_the_seed_examples() {
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

    #[test]
    fn ascending_and_descending_mirror_each_other() {
        assert_eq!(descending_order(vec![1, 2, 3]), [1, 2, 3]);
        assert_eq!(ascending_order(vec![1, 2, 3]), [3, 2, 1]);
    }

    #[test]
    fn input_orders_sort_by_position() {
        let items = vec![(5, 'x'), (1, 'y'), (3, 'z')];
        assert_eq!(input_order(items.clone(), |i| i.0), [(1, 'y'), (3, 'z'), (5, 'x')]);
        assert_eq!(reverse_order(items, |i| i.0), [(5, 'x'), (3, 'z'), (1, 'y')]);
    }
}
