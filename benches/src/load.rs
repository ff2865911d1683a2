//! Load generation shared by the server benches (src/bin/conduit.rs,
//! src/bin/peers_nostr.rs, src/bin/peers_mcp.rs): many clients sharing one
//! list of work items, their latencies, quantiles, and CPU time read from
//! `/proc`.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The work items `0..n`, each handed to whichever client asks first.
#[derive(Clone, Debug)]
pub struct Claim {
    next: Arc<AtomicUsize>,
    n: usize,
}

impl Claim {
    /// The next unclaimed item, `None` once all are taken.
    pub fn next(&self) -> Option<usize> {
        let i = self.next.fetch_add(1, Ordering::Relaxed);
        (i < self.n).then_some(i)
    }
}

/// Spawn `clients` tasks `client(claim)` on the current tokio runtime,
/// sharing the items `0..n`, and wait for them all: the wall time and
/// every latency the tasks returned, sorted. A task that panicked
/// panics the caller.
pub async fn drive<F, Fut>(clients: usize, n: usize, client: F) -> (Duration, Vec<Duration>)
where
    F: Fn(Claim) -> Fut,
    Fut: Future<Output = Vec<Duration>> + Send + 'static,
{
    let claim = Claim {
        next: Arc::new(AtomicUsize::new(0)),
        n,
    };
    let started = Instant::now();
    let tasks: Vec<_> = (0..clients)
        .map(|_| tokio::spawn(client(claim.clone())))
        .collect();
    let mut all = Vec::with_capacity(n);
    for task in tasks {
        match task.await {
            Ok(latencies) => all.extend(latencies),
            Err(e) => std::panic::resume_unwind(e.into_panic()),
        }
    }
    let took = started.elapsed();
    all.sort();
    (took, all)
}

/// The `p` quantile of sorted `latencies`, milliseconds.
pub fn pct(latencies: &[Duration], p: f64) -> f64 {
    latencies[((latencies.len() - 1) as f64 * p) as usize].as_secs_f64() * 1e3
}

/// The median of `v` (sorted here).
pub fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// User + system CPU seconds of process `pid` so far, its ended threads
/// included (Linux; 0 elsewhere).
pub fn pid_cpu(pid: u32) -> f64 {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(0.0, |s| stat_cpu(&s))
}

/// User + system CPU seconds of this process so far (Linux; 0 elsewhere).
pub fn process_cpu() -> f64 {
    std::fs::read_to_string("/proc/self/stat").map_or(0.0, |s| stat_cpu(&s))
}

/// User + system CPU seconds so far of this process's live threads named
/// `name` (Linux; 0 elsewhere).
pub fn thread_cpu(name: &str) -> f64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0.0;
    };
    tasks
        .flatten()
        .filter(|t| std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.trim() == name))
        .filter_map(|t| std::fs::read_to_string(t.path().join("stat")).ok())
        .map(|s| stat_cpu(&s))
        .sum()
}

/// utime + stime of a `/proc/…/stat` line, seconds.
fn stat_cpu(stat: &str) -> f64 {
    // Fields after the command name (which ends with ')'): utime is the
    // 12th and stime the 13th of them, in clock ticks (100 per second).
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}
