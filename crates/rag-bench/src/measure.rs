//! Clocks: wall time, this thread's CPU time, and the CPU time of waited-for children.
//!
//! CPU time comes from `/proc` (Linux) so that the harness needs neither `unsafe` nor `libc`:
//! `/proc/thread-self/schedstat` gives this thread's run time in nanoseconds, and `/proc/self/stat`
//! the children's user and system time in clock ticks (10 ms; fine for runs of a second).

use std::time::{Duration, Instant};

/// This thread's CPU time so far, in nanoseconds precision; zero where `/proc` is missing.
pub fn thread_cpu() -> Duration {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .map(Duration::from_nanos)
        .unwrap_or_default()
}

/// CPU time (user + system) of this process's terminated and waited-for children.
pub fn children_cpu() -> Duration {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return Duration::ZERO;
    };
    // Fields after the command name (which may hold spaces, hence the last ')'); cutime and
    // cstime are fields 16 and 17 of the whole line, 14 and 15 after it.
    let Some(rest) = stat.rsplit_once(')').map(|(_, rest)| rest) else {
        return Duration::ZERO;
    };
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok()).unwrap_or(0);
    // USER_HZ is 100 on every Linux this runs on.
    Duration::from_millis((ticks(13) + ticks(14)) * 10)
}

/// Wall and CPU time of one run.
#[derive(Debug, Clone, Copy, Default)]
pub struct Sample {
    /// Elapsed time.
    pub wall: Duration,
    /// CPU time of the measured thread (or of the child processes).
    pub cpu: Duration,
}

/// Runs `f` once on this thread and returns its result with wall and thread CPU time.
pub fn time<T>(f: impl FnOnce() -> T) -> (T, Sample) {
    let (cpu0, wall0) = (thread_cpu(), Instant::now());
    let out = std::hint::black_box(f());
    let sample = Sample {
        wall: wall0.elapsed(),
        cpu: thread_cpu().saturating_sub(cpu0),
    };
    (out, sample)
}

/// The median of `values` (the lower middle for an even count); 0 for none.
pub fn median(values: &[f64]) -> f64 {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    v[(v.len() - 1) / 2]
}

/// Milliseconds of a duration, as a float.
pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_takes_the_middle_and_ignores_nan() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.0);
        assert_eq!(median(&[f64::NAN, 5.0]), 5.0);
        assert_eq!(median(&[]), 0.0);
    }

    #[test]
    fn thread_cpu_advances_when_the_thread_works() {
        let before = thread_cpu();
        let mut x = 0u64;
        for i in 0..2_000_000u64 {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
        }
        std::hint::black_box(x);
        assert!(thread_cpu() > before);
    }
}
