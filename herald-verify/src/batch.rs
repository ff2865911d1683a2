//! Many Ed25519 signatures on every core, with the verdicts of single
//! verification (PROFILE.md P5, revision 2).
//!
//! The signatures arrive prepared ([`herald_core::PublicKey::prepare`]: the
//! byte checks passed and the challenge is hashed), so what is left is the
//! cofactored equation. Chunks of [`BatchOptions::chunk`] signatures are
//! handed to the threads; each chunk is one batch equation
//! ([`herald_core::verify_batch`], coefficients from the operating
//! system's CSPRNG). A chunk whose equation fails is batched again in
//! pieces of [`RETRY_CHUNK`], and a piece whose equation fails is verified
//! one signature at a time ([`Prepared::verify`]), so every verdict names
//! its own signature. Batch and single verification evaluate the same
//! cofactored equation, so the verdicts are those of [`Prepared::verify`]
//! on every input (tests/batch.rs), however the work is scheduled.
//!
//! Two levels, not bisection: a lone bad signature in a large chunk costs
//! the pieces' equations and [`RETRY_CHUNK`] single verifications, not one
//! per signature of the chunk; a hostile chunk of bad signatures costs
//! two batch passes plus one single verification each, never a
//! logarithmic factor more.

use alloc::vec::Vec;
use std::sync::Mutex;

use herald_core::SysRng;
use herald_core::{Prepared, verify_batch};

/// How [`verify_all_with`] splits the work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BatchOptions {
    /// Signatures per batch equation (at least 1). Larger chunks amortise
    /// more but cost more to re-verify when one of their signatures is bad.
    pub chunk: usize,
    /// Worker threads; 0 means `std::thread::available_parallelism()`.
    pub threads: usize,
}

impl BatchOptions {
    /// The default chunk size (docs/performance.md, target 5).
    pub const DEFAULT_CHUNK: usize = 1024;
}

/// The pieces a failed chunk is batched again in: small enough that a lone
/// bad signature costs few single verifications, large enough that their
/// equations cost little more than the chunk's.
pub(crate) const RETRY_CHUNK: usize = 64;

/// The cores this process may use, asked once: the answer reads the
/// scheduler's affinity and the cgroup's quota, several system calls.
pub(crate) fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

impl Default for BatchOptions {
    fn default() -> Self {
        Self {
            chunk: Self::DEFAULT_CHUNK,
            threads: 0,
        }
    }
}

/// The verdict of every item, in order, on every available core.
pub fn verify_all(items: &[Prepared]) -> Vec<bool> {
    verify_all_with(items, &BatchOptions::default())
}

/// As [`verify_all`], with explicit chunk size and thread count.
pub fn verify_all_with(items: &[Prepared], opts: &BatchOptions) -> Vec<bool> {
    verify_all_counted(items, opts).0
}

/// What [`verify_all_counted`] did to reach its verdicts (for tests and
/// benchmarks).
#[doc(hidden)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BatchCounts {
    /// Batch equations computed.
    pub equations: usize,
    /// Those that did not hold.
    pub failed: usize,
    /// Signatures verified one by one.
    pub singles: usize,
}

/// As [`verify_all_with`], also counting the batch equations computed, those
/// that failed, and the signatures verified one by one.
#[doc(hidden)]
pub fn verify_all_counted(items: &[Prepared], opts: &BatchOptions) -> (Vec<bool>, BatchCounts) {
    let chunk = opts.chunk.max(1);
    let mut out = alloc::vec![false; items.len()];
    let jobs = items.len().div_ceil(chunk);
    let threads = match opts.threads {
        0 => cores(),
        n => n,
    }
    .min(jobs);
    let mut tally = BatchCounts::default();

    if threads <= 1 {
        for (items, out) in items.chunks(chunk).zip(out.chunks_mut(chunk)) {
            tally.run(items, out);
        }
        return (out, tally);
    }

    let queue = Mutex::new(items.chunks(chunk).zip(out.chunks_mut(chunk)));
    let tallies: Option<Vec<BatchCounts>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut tally = BatchCounts::default();
                    loop {
                        // Taking the next chunk cannot panic, so the lock is
                        // never poisoned; take it over if it were.
                        let job = queue.lock().unwrap_or_else(|e| e.into_inner()).next();
                        let Some((items, out)) = job else { break };
                        tally.run(items, out);
                    }
                    tally
                })
            })
            .collect();
        // Join every worker (an unjoined one that panicked would make the
        // scope panic), then keep them all or none.
        let joined: Vec<Option<BatchCounts>> = handles.into_iter().map(|h| h.join().ok()).collect();
        joined.into_iter().collect()
    });
    match tallies {
        Some(t) => t.iter().for_each(|t| tally.add(t)),
        None => {
            // A worker died (a bug, or out of memory): never guess a verdict.
            for (verdict, item) in out.iter_mut().zip(items) {
                *verdict = item.verify().is_ok();
            }
        }
    }
    (out, tally)
}

impl BatchCounts {
    fn add(&mut self, other: &Self) {
        self.equations += other.equations;
        self.failed += other.failed;
        self.singles += other.singles;
    }

    /// The verdicts of one chunk: one batch equation; when it fails, one
    /// for each piece of [`RETRY_CHUNK`]; and one by one in a piece whose
    /// equation fails (or in a failed chunk no larger than a piece). Each
    /// signature is verified alone at most once.
    fn run(&mut self, items: &[Prepared], out: &mut [bool]) {
        if self.holds(items, out) {
            return;
        }
        if items.len() <= RETRY_CHUNK {
            self.one_by_one(items, out);
            return;
        }
        for (items, out) in items.chunks(RETRY_CHUNK).zip(out.chunks_mut(RETRY_CHUNK)) {
            if !self.holds(items, out) {
                self.one_by_one(items, out);
            }
        }
    }

    /// One batch equation over `items`; when it holds, every verdict `true`.
    /// Whether it held.
    fn holds(&mut self, items: &[Prepared], out: &mut [bool]) -> bool {
        self.equations += 1;
        let holds = verify_batch(items, &mut SysRng);
        if holds {
            out.iter_mut().for_each(|v| *v = true);
        } else {
            self.failed += 1;
        }
        holds
    }

    /// Each signature's own verdict.
    fn one_by_one(&mut self, items: &[Prepared], out: &mut [bool]) {
        self.singles += items.len();
        for (verdict, item) in out.iter_mut().zip(items) {
            *verdict = item.verify().is_ok();
        }
    }
}
