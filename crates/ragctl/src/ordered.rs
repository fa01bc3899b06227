//! Parallel work with output in input order and bounded memory.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, mpsc};

/// Runs `work` on every item on `threads` worker threads and hands the results to `sink` in item
/// order. At most `window` items are claimed ahead of the last one handed over, so memory holds a
/// few results, not all of them.
///
/// Workers claim the next item as soon as they are free, so one slow item delays only the output,
/// not the other workers (a batch-at-a-time loop would wait for each batch's slowest item). When
/// `sink` fails, the workers stop after their current item and the error is returned.
pub(crate) fn for_each_ordered<T, R, E>(
    items: &[T],
    threads: usize,
    window: usize,
    work: impl Fn(&T) -> R + Sync,
    mut sink: impl FnMut(R) -> Result<(), E>,
) -> Result<(), E>
where
    T: Sync,
    R: Send,
{
    let window = window.max(1);
    let next_claim = AtomicUsize::new(0);
    // How many results the sink has taken, and whether it gave up.
    let progress = Mutex::new((0usize, false));
    let handed_over = Condvar::new();
    let (tx, rx) = mpsc::channel::<(usize, R)>();
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1) {
            let tx = tx.clone();
            let (next_claim, progress, handed_over, work) = (&next_claim, &progress, &handed_over, &work);
            scope.spawn(move || {
                loop {
                    let i = next_claim.fetch_add(1, Ordering::Relaxed);
                    if i >= items.len() {
                        return;
                    }
                    {
                        let mut state = progress.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                        while i >= state.0 + window && !state.1 {
                            state = handed_over.wait(state).unwrap_or_else(|poisoned| poisoned.into_inner());
                        }
                        if state.1 {
                            return;
                        }
                    }
                    if tx.send((i, work(&items[i]))).is_err() {
                        return;
                    }
                }
            });
        }
        drop(tx);

        let mut pending = BTreeMap::new();
        let mut next = 0usize;
        let mut result = Ok(());
        for (i, r) in rx.iter() {
            pending.insert(i, r);
            while let Some(r) = pending.remove(&next) {
                next += 1;
                let outcome = sink(r);
                let mut state = progress.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                state.0 = next;
                if let Err(err) = outcome {
                    state.1 = true;
                    result = Err(err);
                }
                handed_over.notify_all();
                if result.is_err() {
                    break;
                }
            }
            if result.is_err() {
                break;
            }
        }
        // Dropping the receiver makes any worker still sending give up.
        drop(rx);
        result
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_arrive_in_input_order_whatever_the_timing() {
        let items: Vec<u64> = (0..200).collect();
        let mut seen = Vec::new();
        for_each_ordered(
            &items,
            4,
            3,
            |&i| {
                // Uneven work: later items often finish first.
                std::thread::sleep(std::time::Duration::from_micros((200 - i) % 7 * 50));
                i * 2
            },
            |r| {
                seen.push(r);
                Ok::<(), ()>(())
            },
        )
        .unwrap();
        assert_eq!(seen, items.iter().map(|i| i * 2).collect::<Vec<_>>());
    }

    #[test]
    fn a_failing_sink_stops_the_workers_and_returns_its_error() {
        let items: Vec<usize> = (0..10_000).collect();
        let done = AtomicUsize::new(0);
        let result = for_each_ordered(
            &items,
            2,
            4,
            |&i| {
                done.fetch_add(1, Ordering::Relaxed);
                i
            },
            |r| if r == 5 { Err("closed") } else { Ok(()) },
        );
        assert_eq!(result, Err("closed"));
        assert!(done.load(Ordering::Relaxed) < 100, "workers stopped early");
    }

    #[test]
    fn empty_input_and_one_thread_work() {
        let mut n = 0;
        for_each_ordered(&[] as &[u8], 2, 4, |_| (), |()| Ok::<(), ()>(())).unwrap();
        for_each_ordered(
            &[1, 2, 3],
            1,
            1,
            |&x| x,
            |x| {
                n += x;
                Ok::<(), ()>(())
            },
        )
        .unwrap();
        assert_eq!(n, 6);
    }
}
