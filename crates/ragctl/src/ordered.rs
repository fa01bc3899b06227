//! Parallel work with output in input order and bounded memory.

use std::collections::BTreeMap;
use std::sync::{Condvar, Mutex, MutexGuard, mpsc};

/// How much work [`for_each_ordered`] may have in flight.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// Worker threads.
    pub(crate) threads: usize,
    /// Items claimed ahead of the last one handed to the sink.
    pub(crate) window: usize,
    /// Total cost of the items in flight (claimed, not yet handed to the sink). An item that
    /// alone costs more is taken when nothing else is in flight.
    pub(crate) budget: u64,
}

/// Claims and hand-overs, under one lock.
struct State {
    next_claim: usize,
    handed_over: usize,
    in_flight: u64,
    stopped: bool,
    /// Which workers are free to claim, by worker index.
    idle: Vec<bool>,
}

impl State {
    /// Whether `worker` is the free worker with the lowest index: the one that claims next.
    fn claims_next(&self, worker: usize) -> bool {
        self.idle.iter().position(|&idle| idle) == Some(worker)
    }
}

/// Runs `work` on every item on `limits.threads` worker threads and hands the results to `sink`
/// in item order. Items are claimed in order while at most `limits.window` of them are ahead of
/// the sink and their `costs` in flight stay within `limits.budget`, so memory is bounded by the
/// budget (say, bytes) whatever the number of threads.
///
/// Workers claim the next item as soon as they are free, so one slow item delays only the output,
/// not the other workers (a batch-at-a-time loop would wait for each batch's slowest item). Claims
/// are in item order, so the item the sink waits for is always claimed: the budget cannot
/// deadlock. When `sink` fails, the workers stop after their current item and the error is
/// returned.
///
/// Of the free workers, the one with the lowest index claims: when the budget keeps only `k`
/// items in flight, the same `k` threads do all the work and the others stay idle. What a thread
/// keeps after its work (its allocator arena's high-water mark, its tokenizer table) is then paid
/// `k` times, not once per thread, so peak memory does not grow with the thread count.
pub(crate) fn for_each_ordered<T, R, E>(
    items: &[T],
    costs: &[u64],
    limits: Limits,
    work: impl Fn(&T) -> R + Sync,
    mut sink: impl FnMut(R) -> Result<(), E>,
) -> Result<(), E>
where
    T: Sync,
    R: Send,
{
    debug_assert_eq!(items.len(), costs.len());
    let threads = limits.threads.max(1);
    let shared = Shared {
        items,
        costs,
        window: limits.window.max(1),
        budget: limits.budget,
        state: Mutex::new(State {
            next_claim: 0,
            handed_over: 0,
            in_flight: 0,
            stopped: false,
            idle: vec![true; threads],
        }),
        changed: Condvar::new(),
    };
    let (tx, rx) = mpsc::channel::<(usize, R)>();
    std::thread::scope(|scope| {
        for worker in 0..threads {
            let tx = tx.clone();
            let (shared, work) = (&shared, &work);
            scope.spawn(move || shared.work_items(worker, work, tx));
        }
        drop(tx);
        shared.hand_over_in_order(rx, &mut sink)
    })
}

/// What the workers and the sink of one [`for_each_ordered`] run share.
struct Shared<'a, T> {
    items: &'a [T],
    costs: &'a [u64],
    /// [`Limits::window`], at least 1.
    window: usize,
    budget: u64,
    state: Mutex<State>,
    /// Signalled on every change of `state` another thread may be waiting for.
    changed: Condvar,
}

impl<T> Shared<'_, T> {
    fn cost(&self, i: usize) -> u64 {
        self.costs.get(i).copied().unwrap_or(0)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// A worker's loop: claims items, works on them and sends the results, until nothing is left
    /// to claim or the run stops.
    fn work_items<R>(&self, worker: usize, work: &impl Fn(&T) -> R, tx: mpsc::Sender<(usize, R)>) {
        while let Some(i) = self.claim(worker) {
            // The next free worker may have room to claim too.
            self.changed.notify_all();
            let result = work(&self.items[i]);
            // Free again before the result can be handed over and make room: the room
            // goes to the lowest free worker, which may be this one.
            self.lock().idle[worker] = true;
            if tx.send((i, result)).is_err() {
                // The sink is gone: it stopped the run, and every worker leaves.
                self.lock().idle[worker] = false;
                self.changed.notify_all();
                return;
            }
        }
    }

    /// The next item, claimed by `worker` once it is the free worker to claim and the item fits
    /// the window and the budget; `None` when no item is left or the run stopped.
    fn claim(&self, worker: usize) -> Option<usize> {
        let mut s = self.lock();
        loop {
            if s.stopped || s.next_claim >= self.items.len() {
                // Leaving, this worker must not hold up a higher one's claim.
                s.idle[worker] = false;
                self.changed.notify_all();
                return None;
            }
            let i = s.next_claim;
            let fits = s.in_flight == 0 || s.in_flight + self.cost(i) <= self.budget;
            if i < s.handed_over + self.window && fits && s.claims_next(worker) {
                s.next_claim += 1;
                s.in_flight += self.cost(i);
                s.idle[worker] = false;
                return Some(i);
            }
            s = self.changed.wait(s).unwrap_or_else(|poisoned| poisoned.into_inner());
        }
    }

    /// The sink's loop, on the calling thread: hands the results to `sink` in item order as they
    /// arrive, each one freeing its cost and its place in the window; stops the run at the first
    /// error and returns it.
    fn hand_over_in_order<R, E>(
        &self,
        rx: mpsc::Receiver<(usize, R)>,
        sink: &mut impl FnMut(R) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut pending = BTreeMap::new();
        let mut next = 0usize;
        let mut result = Ok(());
        for (i, r) in rx.iter() {
            pending.insert(i, r);
            while let Some(r) = pending.remove(&next) {
                let outcome = sink(r);
                let mut s = self.lock();
                s.in_flight -= self.cost(next);
                next += 1;
                s.handed_over = next;
                if let Err(err) = outcome {
                    s.stopped = true;
                    result = Err(err);
                }
                self.changed.notify_all();
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
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

    use super::*;

    #[test]
    fn results_arrive_in_input_order_whatever_the_timing() {
        let items: Vec<u64> = (0..200).collect();
        let mut seen = Vec::new();
        for_each_ordered(
            &items,
            &vec![1; items.len()],
            Limits {
                threads: 4,
                window: 3,
                budget: u64::MAX,
            },
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
            &vec![1; items.len()],
            Limits {
                threads: 2,
                window: 4,
                budget: u64::MAX,
            },
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
        let limits = Limits {
            threads: 2,
            window: 4,
            budget: 1,
        };
        for_each_ordered(&[] as &[u8], &[], limits, |_| (), |()| Ok::<(), ()>(())).unwrap();
        for_each_ordered(
            &[1, 2, 3],
            &[5, 5, 5],
            Limits { threads: 1, ..limits },
            |&x| x,
            |x| {
                n += x;
                Ok::<(), ()>(())
            },
        )
        .unwrap();
        assert_eq!(n, 6);
    }

    #[test]
    fn only_as_many_threads_work_as_the_budget_keeps_busy() {
        // Items that each take half the budget: two are in flight at a time, so two threads do
        // all the work however many there are (each thread that works keeps its allocator
        // arena's high-water mark and a tokenizer table).
        let items: Vec<usize> = (0..120).collect();
        for threads in [2, 8] {
            let workers = Mutex::new(std::collections::HashSet::new());
            let mut seen = Vec::new();
            for_each_ordered(
                &items,
                &vec![10; items.len()],
                Limits {
                    threads,
                    window: 64,
                    budget: 20,
                },
                |&i| {
                    workers.lock().unwrap().insert(std::thread::current().id());
                    std::thread::sleep(std::time::Duration::from_micros((i as u64 % 5) * 100));
                    i
                },
                |i| {
                    seen.push(i);
                    Ok::<(), ()>(())
                },
            )
            .unwrap();
            assert_eq!(seen, items, "{threads} threads: order kept");
            let workers = workers.into_inner().unwrap().len();
            assert_eq!(workers, 2, "{threads} threads: {workers} of them worked");
        }
        // Small items: every thread works.
        let workers = Mutex::new(std::collections::HashSet::new());
        for_each_ordered(
            &items,
            &vec![1; items.len()],
            Limits {
                threads: 4,
                window: 64,
                budget: 20,
            },
            |&i| {
                workers.lock().unwrap().insert(std::thread::current().id());
                std::thread::sleep(std::time::Duration::from_millis(2));
                i
            },
            |_| Ok::<(), ()>(()),
        )
        .unwrap();
        let workers = workers.into_inner().unwrap().len();
        assert!(workers > 1, "small items keep several threads busy, not {workers}");
    }

    #[test]
    fn the_cost_in_flight_stays_within_the_budget_whatever_the_threads() {
        // Costs like file sizes: mostly small, some larger than the budget.
        let costs: Vec<u64> = (0..300u64).map(|i| if i % 37 == 0 { 50 } else { i % 9 + 1 }).collect();
        let items: Vec<usize> = (0..costs.len()).collect();
        for threads in [1, 3, 8] {
            let in_flight = AtomicU64::new(0);
            let peak = AtomicU64::new(0);
            let mut seen = Vec::new();
            for_each_ordered(
                &items,
                &costs,
                Limits {
                    threads,
                    window: 64,
                    budget: 20,
                },
                |&i| {
                    let now = in_flight.fetch_add(costs[i], Ordering::SeqCst) + costs[i];
                    peak.fetch_max(if costs[i] > 20 { 0 } else { now }, Ordering::SeqCst);
                    std::thread::sleep(std::time::Duration::from_micros(30));
                    i
                },
                |i| {
                    in_flight.fetch_sub(costs[i], Ordering::SeqCst);
                    seen.push(i);
                    Ok::<(), ()>(())
                },
            )
            .unwrap();
            assert_eq!(seen, items, "{threads} threads: order kept");
            assert!(
                peak.load(Ordering::SeqCst) <= 20,
                "{threads} threads: {peak:?} in flight"
            );
        }
    }
}
