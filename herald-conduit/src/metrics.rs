//! Prometheus text metrics (CONDUIT.md `/metrics`): accepted and refused
//! counts by reason, a latency histogram of posts, the log size.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Upper bounds of the latency buckets, seconds.
const BUCKETS: [f64; 12] = [
    0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
];

/// The counters.
#[derive(Debug, Default)]
pub struct Metrics {
    accepted: AtomicU64,
    refused: Mutex<BTreeMap<&'static str, u64>>,
    buckets: [AtomicU64; BUCKETS.len()],
    count: AtomicU64,
    sum_micros: AtomicU64,
    erased: AtomicU64,
}

impl Metrics {
    /// One post acknowledged with a 201.
    pub fn accepted(&self) {
        self.accepted.fetch_add(1, Ordering::Relaxed);
    }

    /// One post refused for `reason` (a refusal reason, or `bad_request`).
    pub fn refused(&self, reason: &'static str) {
        if let Ok(mut m) = self.refused.lock() {
            *m.entry(reason).or_default() += 1;
        }
    }

    /// `n` envelopes erased (CONDUIT.md *Retention and erasure*).
    pub fn erased(&self, n: usize) {
        self.erased
            .fetch_add(u64::try_from(n).unwrap_or(u64::MAX), Ordering::Relaxed);
    }

    /// A post answered after `took`.
    pub fn latency(&self, took: Duration) {
        let secs = took.as_secs_f64();
        for (b, bound) in self.buckets.iter().zip(BUCKETS) {
            if secs <= bound {
                b.fetch_add(1, Ordering::Relaxed);
            }
        }
        self.count.fetch_add(1, Ordering::Relaxed);
        let micros = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
        self.sum_micros.fetch_add(micros, Ordering::Relaxed);
    }

    /// The Prometheus text exposition, with the log size when notary.
    pub fn render(&self, log_size: Option<u64>) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "# HELP herald_conduit_accepted_total Envelopes acknowledged (201).\n\
             # TYPE herald_conduit_accepted_total counter\n\
             herald_conduit_accepted_total {}",
            self.accepted.load(Ordering::Relaxed)
        );
        let _ = writeln!(
            out,
            "# HELP herald_conduit_refused_total Posts refused, by reason.\n\
             # TYPE herald_conduit_refused_total counter"
        );
        if let Ok(m) = self.refused.lock() {
            for (reason, n) in m.iter() {
                let _ = writeln!(
                    out,
                    "herald_conduit_refused_total{{reason=\"{reason}\"}} {n}"
                );
            }
        }
        let _ = writeln!(
            out,
            "# HELP herald_conduit_post_seconds Time to answer a post.\n\
             # TYPE herald_conduit_post_seconds histogram"
        );
        for (b, bound) in self.buckets.iter().zip(BUCKETS) {
            let _ = writeln!(
                out,
                "herald_conduit_post_seconds_bucket{{le=\"{bound}\"}} {}",
                b.load(Ordering::Relaxed)
            );
        }
        let count = self.count.load(Ordering::Relaxed);
        let _ = writeln!(
            out,
            "herald_conduit_post_seconds_bucket{{le=\"+Inf\"}} {count}\n\
             herald_conduit_post_seconds_sum {}\n\
             herald_conduit_post_seconds_count {count}",
            self.sum_micros.load(Ordering::Relaxed) as f64 / 1e6
        );
        // Shown once something was erased: the text stays as it was for a
        // conduit that erases nothing.
        let erased = self.erased.load(Ordering::Relaxed);
        if erased > 0 {
            let _ = writeln!(
                out,
                "# HELP herald_conduit_erased_total Envelopes erased (retention and DELETE).\n\
                 # TYPE herald_conduit_erased_total counter\n\
                 herald_conduit_erased_total {erased}"
            );
        }
        if let Some(size) = log_size {
            let _ = writeln!(
                out,
                "# HELP herald_conduit_log_size Leaves in the audit log.\n\
                 # TYPE herald_conduit_log_size gauge\n\
                 herald_conduit_log_size {size}"
            );
        }
        out
    }
}
