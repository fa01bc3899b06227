//! Tests of the selection strategies and the objectives.

use proptest::prelude::*;

use super::*;

fn item(tokens: usize, score: f64) -> SelectionItem {
    SelectionItem {
        tokens,
        score,
        document: 0,
    }
}

fn tokens(items: &[SelectionItem], chosen: &[usize]) -> usize {
    chosen.iter().map(|&i| items[i].tokens).sum()
}

fn respects_cap(items: &[SelectionItem], chosen: &[usize], cap: Option<usize>) -> bool {
    let Some(cap) = cap else { return true };
    let mut counts = HashMap::new();
    chosen.iter().all(|&i| {
        let c = counts.entry(items[i].document).or_insert(0);
        *c += 1;
        *c <= cap
    })
}

/// Every subset: the reference for the optimum.
fn brute_force(items: &[SelectionItem], room: usize, cap: Option<usize>) -> f64 {
    let mut best = 0.0f64;
    for mask in 0u32..(1 << items.len()) {
        let chosen: Vec<usize> = (0..items.len()).filter(|i| mask & (1 << i) != 0).collect();
        if tokens(items, &chosen) <= room && respects_cap(items, &chosen, cap) {
            best = best.max(total_score(items, &chosen));
        }
    }
    best
}

#[test]
fn greedy_skips_what_no_longer_fits_and_keeps_trying() {
    let items = [item(50, 0.9), item(40, 0.8), item(30, 0.7), item(10, 0.1)];
    assert_eq!(fit_to_budget(&items, 100, None), [0, 1, 3]);
    assert_eq!(fit_to_budget(&items, 0, None), Vec::<usize>::new());
}

#[test]
fn knapsack_beats_density_greedy_when_small_items_crowd_out_a_large_one() {
    // Many tiny weak items crowd out one large strong one under density greedy.
    let mut items = vec![item(100, 50.0)];
    items.extend((0..10).map(|_| item(10, 6.0)));
    let chosen = knapsack_select(&items, 100, None);
    assert_eq!(total_score(&items, &chosen), 60.0, "density greedy wins here: 10 x 6.0");
    let trap = [item(100, 50.0), item(1, 1.0)];
    assert_eq!(knapsack_select(&trap, 100, None), [0], "seeded run wins");
}

#[test]
fn knapsack_ties_keep_the_plain_run() {
    // Same totals: the seeded set is not strictly better, so the density run is kept.
    let items = [item(10, 1.0), item(10, 1.0)];
    assert_eq!(knapsack_select(&items, 10, None), [0]);
    // Best single ties on score: fewer tokens first.
    let items = [item(10, 2.0), item(5, 2.0), item(5, 0.5)];
    assert_eq!(knapsack_select(&items, 10, None), [1, 2]);
}

#[test]
fn knapsack_by_rank_takes_the_first_fit_when_the_density_runs_are_worth_less() {
    // Rank-prior values (1, 1/4, 1/9, 1/16, 1/25): the long second-ranked chunk (90 tokens) is
    // less dense than the short third, so both density runs take the best, then the short ones,
    // and the second no longer fits: 1 + 1/9 + 1/16 + 1/25. The first fit in rank order, the best
    // and the second, is worth 1 + 1/4.
    let tokens = [10, 90, 30, 30, 30];
    let items: Vec<SelectionItem> = tokens
        .iter()
        .enumerate()
        .map(|(r, &t)| item(t, rank_prior(r)))
        .collect();
    assert_eq!(knapsack_select(&items, 100, None), [0, 2, 3, 4]);
    let by_rank = select(SelectionStrategy::Knapsack, &items, 100, None, true);
    assert_eq!(by_rank.chosen, [0, 1]);
    // Scores that are not rank values keep the reference design's two runs.
    let by_score = select(SelectionStrategy::Knapsack, &items, 100, None, false);
    assert_eq!(by_score.chosen, [0, 2, 3, 4]);
    // A negative value is left out of the first fit, as knapsack leaves it out: taken, it would
    // fill the 105 and drag the first fit's total below the density runs'.
    let mut with_negative = items.clone();
    with_negative.insert(2, item(5, -0.5));
    assert_eq!(
        select(SelectionStrategy::Knapsack, &with_negative, 105, None, true).chosen,
        [0, 1]
    );
    // Where the density runs are worth more (six short chunks after the second: 0.277 > 1/4),
    // they are kept.
    let tokens = [10, 60, 10, 10, 10, 10, 10, 10];
    let items: Vec<SelectionItem> = tokens
        .iter()
        .enumerate()
        .map(|(r, &t)| item(t, rank_prior(r)))
        .collect();
    assert_eq!(
        select(SelectionStrategy::Knapsack, &items, 70, None, true).chosen,
        [0, 2, 3, 4, 5, 6, 7]
    );
}

#[test]
fn negative_scores_are_never_taken_by_knapsack_or_optimal() {
    let items = [item(10, -1.0), item(10, 1.0)];
    assert_eq!(knapsack_select(&items, 100, None), [1]);
    assert_eq!(optimal_select(&items, 100, None).unwrap(), [1]);
    assert_eq!(
        fit_to_budget(&items, 100, None),
        [0, 1],
        "greedy is rank order, whatever the score"
    );
}

#[test]
fn optimal_fills_with_zero_scores_and_respects_the_cap() {
    let mut items = [item(10, 0.0), item(60, 1.0), item(50, 0.9), item(50, 0.9)];
    assert_eq!(
        optimal_select(&items, 110, None).unwrap(),
        [1, 2],
        "1.9 beats 1.8; ties take the earlier"
    );
    assert_eq!(
        optimal_select(&items, 120, None).unwrap(),
        [0, 1, 2],
        "zero scores fill the rest"
    );
    assert_eq!(optimal_select(&items, 100, None).unwrap(), [2, 3]);
    items[0].document = 2;
    items[2].document = 1;
    items[3].document = 1;
    assert_eq!(optimal_select(&items, 100, Some(1)).unwrap(), [0, 1]);
}

#[test]
fn optimal_refuses_tables_over_the_limit() {
    let items: Vec<SelectionItem> = (0..5000).map(|i| item(4000 + i, 1.0)).collect();
    let err = optimal_select(&items, 10_000, None).unwrap_err();
    assert_eq!(err.limit, OPTIMAL_CELL_LIMIT);
    assert!(
        err.to_string()
            .starts_with("exact selection needs 50005000 table cells"),
        "{err}"
    );
}

#[test]
fn cap_per_document_keeps_the_first_per_key() {
    assert_eq!(cap_per_document([1, 1, 1], 1), [0]);
    assert_eq!(cap_per_document(Vec::<u8>::new(), 3), Vec::<usize>::new());
    assert_eq!(cap_per_document(["a", "b"], 0), Vec::<usize>::new());
}

fn items_strategy(max: usize) -> impl Strategy<Value = Vec<SelectionItem>> {
    prop::collection::vec(
        (1usize..40, -2i32..20, 0usize..3).prop_map(|(tokens, score, document)| SelectionItem {
            tokens,
            score: f64::from(score) / 4.0,
            document,
        }),
        0..max,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn strategies_stay_within_room_and_cap(items in items_strategy(20), room in 0usize..120, cap in prop::option::of(1usize..3)) {
        for chosen in [
            fit_to_budget(&items, room, cap),
            knapsack_select(&items, room, cap),
            optimal_select(&items, room, cap).unwrap(),
        ] {
            prop_assert!(tokens(&items, &chosen) <= room);
            prop_assert!(respects_cap(&items, &chosen, cap));
            prop_assert!(chosen.windows(2).all(|w| w[0] < w[1]));
        }
    }

    #[test]
    fn knapsack_is_at_least_density_greedy_and_best_single(items in items_strategy(12), room in 0usize..120) {
        let total = total_score(&items, &knapsack_select(&items, room, None));
        let mut by_density: Vec<usize> = (0..items.len()).filter(|&i| items[i].score >= 0.0).collect();
        let density = |i: usize| items[i].score / items[i].tokens as f64;
        by_density.sort_by(|&a, &b| density(b).total_cmp(&density(a)).then(items[b].score.total_cmp(&items[a].score)).then(a.cmp(&b)));
        let density_total = greedy_pass(&items, by_density, None, room, None).1;
        let best_single = items.iter().filter(|i| i.tokens <= room).map(|i| i.score).fold(0.0, f64::max);
        prop_assert!(total >= density_total - 1e-9, "{total} < {density_total}");
        prop_assert!(total >= best_single - 1e-9);
        prop_assert!(2.0 * total >= brute_force(&items, room, None) - 1e-9, "half the optimum");
    }

    #[test]
    fn knapsack_by_rank_is_worth_at_least_knapsack_and_first_fit(items in items_strategy(12), room in 0usize..120, cap in prop::option::of(1usize..3)) {
        let by_rank = select(SelectionStrategy::Knapsack, &items, room, cap, true).chosen;
        let total = total_score(&items, &by_rank);
        prop_assert!(tokens(&items, &by_rank) <= room && respects_cap(&items, &by_rank, cap));
        prop_assert!(total >= total_score(&items, &knapsack_select(&items, room, cap)) - 1e-9);
        let non_negative = (0..items.len()).filter(|&i| items[i].score >= 0.0);
        prop_assert!(total >= greedy_pass(&items, non_negative, None, room, cap).1 - 1e-9);
        prop_assert!(by_rank.iter().all(|&i| items[i].score >= 0.0), "a negative value is never taken");
    }

    #[test]
    fn optimal_equals_brute_force_and_beats_knapsack(items in items_strategy(12), room in 0usize..120, cap in prop::option::of(1usize..3)) {
        let optimal = total_score(&items, &optimal_select(&items, room, cap).unwrap());
        prop_assert!((optimal - brute_force(&items, room, cap)).abs() < 1e-9);
        let knapsack = total_score(&items, &knapsack_select(&items, room, cap));
        prop_assert!(optimal >= knapsack - 1e-9);
    }
}
