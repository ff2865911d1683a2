//! Batch verification of many Ed25519 signatures with exactly the verdicts
//! of strict verification (PROFILE.md P5: ed25519-dalek `verify_strict`).
//!
//! Two functions give exactly that verdict for every item:
//! - [`verify_all`]: strict pre-checks, then ed25519-dalek `verify_batch`
//!   over chunks of items on every core, re-verifying one by one inside any
//!   chunk whose batch equation fails;
//! - [`verify_each`]: `verify_strict` for every item, on every core.
//!
//! A batch equation `Σ zᵢ·([Sᵢ]B − [kᵢ]Aᵢ − Rᵢ) = 0` accepts some signatures
//! that `verify_strict` rejects, so no item reaches a batch before it has
//! passed every check that separates the two:
//!
//! | check | strict | batch alone | here |
//! |---|---|---|---|
//! | S canonical (< L) | rejects | rejects | rejected up front |
//! | R decodes; R, A not of small order | rejects | may accept | rejected up front |
//! | R canonical (y < p) | rejects (compares bytes) | may accept | rejected up front |
//! | R or A with a torsion component | cofactorless: rejects unless the torsion cancels exactly | accepts a cofactored-valid one whenever `Σ zᵢ·Tᵢ = 0`: with probability 1/8 to 1/2, and the zᵢ are derived from the inputs, so a signer can grind for it | never batched: verified alone with `verify_strict` |
//!
//! The last row is why "not of small order" is not enough: a point of
//! mixed order (prime-order part plus a torsion part) passes the small-order
//! tests, and a signer can make a signature over such an R that is valid
//! cofactored but not cofactorless (ed25519-speccheck cases 4 and 5, the
//! `low_order_residue` vectors of C2SP CCTV). So every R, and every distinct
//! A, is checked to be torsion-free (`[L]P = 0`). That check is a full
//! scalar multiplication, about 0.6 of a `verify_strict` with
//! curve25519-dalek's public API, and it cancels what batching saves: on the
//! machine of docs/performance.md [`verify_each`] is the faster of the two.
//!
//! For items that pass, every `[Sᵢ]B − [kᵢ]Aᵢ − Rᵢ` lies in the prime-order
//! subgroup, where the batch equation holds for all of them exactly when
//! each is zero (up to the library's 2⁻¹²⁸ soundness bound), which is what
//! strict verification checks. Batches of [`BatchOptions::chunk`] items go
//! through ed25519-dalek `verify_batch` on every available core; a chunk that
//! fails is re-verified item by item with `verify_strict`, which names the
//! failing signatures.

use alloc::vec::Vec;
use std::collections::HashMap;
use std::sync::Mutex;

use curve25519_dalek::edwards::{CompressedEdwardsY, EdwardsPoint};
use curve25519_dalek::scalar::Scalar;
use curve25519_dalek::traits::IsIdentity;
use ed25519_dalek::{Signature, VerifyingKey};
use herald_core::PublicKey;

/// One signature to check: a public key, a signature `R ‖ S` and the exact
/// message signed (for HERALD, `tag ‖ body(E, k)`: see [`message`]).
#[derive(Clone, Copy, Debug)]
pub struct SignedItem<'a> {
    /// The 32-byte public key A as received.
    pub key: &'a [u8; 32],
    /// The 64-byte signature `R ‖ S`.
    pub signature: &'a [u8; 64],
    /// The message.
    pub message: &'a [u8],
}

/// How [`verify_all_with`] splits the work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BatchOptions {
    /// Items per batch equation (at least 1). Larger chunks amortise more
    /// but cost more to re-verify when one of their signatures is bad.
    pub chunk: usize,
    /// Worker threads; 0 means `std::thread::available_parallelism()`.
    pub threads: usize,
}

impl BatchOptions {
    /// The default chunk size: per signature, `verify_batch` costs 15 µs at
    /// 64 and 12 µs at 256 (its multiscalar step switches from Straus to
    /// Pippenger above 190 points; docs/performance.md).
    pub const DEFAULT_CHUNK: usize = 256;
}

impl Default for BatchOptions {
    fn default() -> Self {
        Self {
            chunk: Self::DEFAULT_CHUNK,
            threads: 0,
        }
    }
}

/// What [`verify_all_counted`] did with the items.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BatchStats {
    /// Items rejected by the up-front checks (no curve arithmetic beyond decoding).
    pub rejected: usize,
    /// Items with a torsion component in R or A, verified alone with `verify_strict`.
    pub single: usize,
    /// Items that went into a batch equation.
    pub batched: usize,
    /// Batch equations computed.
    pub chunks: usize,
    /// Batch equations that failed (their items were re-verified one by one).
    pub failed_chunks: usize,
}

impl BatchStats {
    fn add(&mut self, other: &Self) {
        self.rejected += other.rejected;
        self.single += other.single;
        self.batched += other.batched;
        self.chunks += other.chunks;
        self.failed_chunks += other.failed_chunks;
    }
}

/// The reference verdict: ed25519-dalek `VerifyingKey::from_bytes` then
/// `verify_strict` (P5). For every key [`herald_core::PublicKey`] accepts,
/// [`herald_core::PublicKey::verify`] gives the same verdict.
pub fn verify_strict(item: &SignedItem<'_>) -> bool {
    VerifyingKey::from_bytes(item.key).is_ok_and(|key| {
        key.verify_strict(item.message, &Signature::from_bytes(item.signature))
            .is_ok()
    })
}

/// The strict verdict (see [`verify_strict`]) of every item, in order,
/// computed with batch equations on every available core.
pub fn verify_all(items: &[SignedItem<'_>]) -> Vec<bool> {
    verify_all_counted(items, &BatchOptions::default()).0
}

/// As [`verify_all`], with explicit chunk size and thread count.
pub fn verify_all_with(items: &[SignedItem<'_>], opts: &BatchOptions) -> Vec<bool> {
    verify_all_counted(items, opts).0
}

/// As [`verify_all_with`], also saying how each item was decided.
pub fn verify_all_counted(
    items: &[SignedItem<'_>],
    opts: &BatchOptions,
) -> (Vec<bool>, BatchStats) {
    let (out, workers) = on_every_core::<Worker>(items, opts, Worker::run);
    let mut stats = BatchStats::default();
    match workers {
        Some(workers) => workers.iter().for_each(|w| stats.add(&w.stats)),
        None => stats.single = items.len(),
    }
    (out, stats)
}

/// The strict verdict of every item, in order: `verify_strict` alone (no
/// batch equation), on `threads` threads (0: every core). Each thread
/// decodes each distinct key once.
pub fn verify_each(items: &[SignedItem<'_>], threads: usize) -> Vec<bool> {
    let opts = BatchOptions {
        chunk: BatchOptions::DEFAULT_CHUNK,
        threads,
    };
    on_every_core::<StrictWorker>(items, &opts, StrictWorker::run).0
}

/// Split `items` into chunks and hand them to one `W` per thread; `None`
/// when a worker died, in which case every verdict was recomputed with
/// [`verify_strict`] on this thread.
fn on_every_core<W: Default + Send>(
    items: &[SignedItem<'_>],
    opts: &BatchOptions,
    run: fn(&mut W, &[SignedItem<'_>], &mut [bool]),
) -> (Vec<bool>, Option<Vec<W>>) {
    let chunk = opts.chunk.max(1);
    let mut out = alloc::vec![false; items.len()];
    let jobs = items.len().div_ceil(chunk);
    let threads = match opts.threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
    .min(jobs);

    if threads <= 1 {
        let mut worker = W::default();
        for (items, out) in items.chunks(chunk).zip(out.chunks_mut(chunk)) {
            run(&mut worker, items, out);
        }
        return (out, Some(alloc::vec![worker]));
    }

    let queue = Mutex::new(items.chunks(chunk).zip(out.chunks_mut(chunk)));
    let workers: Option<Vec<W>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut worker = W::default();
                    loop {
                        // Taking the next chunk cannot panic, so the lock is
                        // never poisoned; take it over if it were.
                        let job = queue.lock().unwrap_or_else(|e| e.into_inner()).next();
                        let Some((items, out)) = job else { break };
                        run(&mut worker, items, out);
                    }
                    worker
                })
            })
            .collect();
        // Join every worker (an unjoined one that panicked would make the
        // scope panic), then keep them all or none.
        let joined: Vec<Option<W>> = handles.into_iter().map(|h| h.join().ok()).collect();
        joined.into_iter().collect()
    });
    if workers.is_none() {
        // A worker died (a bug, or out of memory): never guess a verdict.
        for (verdict, item) in out.iter_mut().zip(items) {
            *verdict = verify_strict(item);
        }
    }
    (out, workers)
}

/// The message of a HERALD signature: `tag ‖ body(E, k)` (P5) in one buffer,
/// as batch equations need contiguous messages.
pub fn message(tag: &[u8], body: &herald_core::Body<'_>) -> Vec<u8> {
    let mut m = Vec::with_capacity(tag.len() + body.len());
    m.extend_from_slice(tag);
    body.feed(&mut |b| m.extend_from_slice(b));
    m
}

/// What the up-front checks decided about one item.
enum Route {
    /// Strict verification rejects it, whatever the message.
    Reject,
    /// A torsion component (or an unusual key encoding): verify alone.
    Single(VerifyingKey),
    /// Safe to batch.
    Batch(VerifyingKey),
}

/// What the checks decided about one public key (cached per worker).
#[derive(Clone, Copy)]
enum KeyRoute {
    Reject,
    Single(VerifyingKey),
    Batch(VerifyingKey),
}

#[derive(Default)]
struct Worker {
    keys: HashMap<[u8; 32], KeyRoute>,
    stats: BatchStats,
}

impl Worker {
    fn key_route(&mut self, key: &[u8; 32]) -> KeyRoute {
        *self.keys.entry(*key).or_insert_with(|| {
            let Ok(vk) = VerifyingKey::from_bytes(key) else {
                return KeyRoute::Reject;
            };
            if vk.is_weak() {
                KeyRoute::Reject
            } else if !canonical_y(key) || !torsion_free(&vk.to_edwards()) {
                // verify_strict hashes A as given and accepts some mixed-order
                // keys: let it decide these alone.
                KeyRoute::Single(vk)
            } else {
                KeyRoute::Batch(vk)
            }
        })
    }

    fn route(&mut self, item: &SignedItem<'_>) -> Route {
        let vk = match self.key_route(item.key) {
            KeyRoute::Reject => return Route::Reject,
            KeyRoute::Single(vk) => return Route::Single(vk),
            KeyRoute::Batch(vk) => vk,
        };
        let (r_bytes, s_bytes) = split_signature(item.signature);
        if bool::from(Scalar::from_canonical_bytes(s_bytes).is_none()) {
            return Route::Reject;
        }
        // verify_strict compares the canonical encoding of [S]B − [k]A with
        // R's bytes, so a non-canonical R never verifies.
        if !canonical_y(&r_bytes) {
            return Route::Reject;
        }
        let Some(r) = CompressedEdwardsY(r_bytes).decompress() else {
            return Route::Reject;
        };
        // Also covers the two x = 0 points written with the sign bit set.
        if r.is_small_order() {
            return Route::Reject;
        }
        if torsion_free(&r) {
            Route::Batch(vk)
        } else {
            Route::Single(vk)
        }
    }

    fn run(&mut self, items: &[SignedItem<'_>], out: &mut [bool]) {
        let mut slots: Vec<&mut bool> = Vec::with_capacity(items.len());
        let mut messages: Vec<&[u8]> = Vec::with_capacity(items.len());
        let mut signatures: Vec<Signature> = Vec::with_capacity(items.len());
        let mut keys: Vec<VerifyingKey> = Vec::with_capacity(items.len());
        for (item, verdict) in items.iter().zip(out.iter_mut()) {
            match self.route(item) {
                Route::Reject => {
                    self.stats.rejected += 1;
                    *verdict = false;
                }
                Route::Single(vk) => {
                    self.stats.single += 1;
                    *verdict = vk
                        .verify_strict(item.message, &Signature::from_bytes(item.signature))
                        .is_ok();
                }
                Route::Batch(vk) => {
                    slots.push(verdict);
                    messages.push(item.message);
                    signatures.push(Signature::from_bytes(item.signature));
                    keys.push(vk);
                }
            }
        }
        if slots.is_empty() {
            return;
        }
        self.stats.chunks += 1;
        self.stats.batched += slots.len();
        if ed25519_dalek::verify_batch(&messages, &signatures, &keys).is_ok() {
            for verdict in slots {
                *verdict = true;
            }
            return;
        }
        self.stats.failed_chunks += 1;
        for (((verdict, message), signature), key) in
            slots.into_iter().zip(&messages).zip(&signatures).zip(&keys)
        {
            *verdict = key.verify_strict(message, signature).is_ok();
        }
    }
}

/// `verify_strict` per item, each distinct key decoded once.
#[derive(Default)]
struct StrictWorker {
    keys: HashMap<[u8; 32], Option<StrictKey>>,
}

impl StrictWorker {
    fn run(&mut self, items: &[SignedItem<'_>], out: &mut [bool]) {
        for (item, verdict) in items.iter().zip(out.iter_mut()) {
            let key = *self
                .keys
                .entry(*item.key)
                .or_insert_with(|| StrictKey::decode(item.key));
            *verdict = key.is_some_and(|k| k.verify(item.message, item.signature));
        }
    }
}

/// A key decoded once for `verify_strict`'s verdict. Every key
/// [`PublicKey`] accepts goes through herald-core's verifier, which gives
/// that verdict without decompressing R (`PublicKey::verify_parts`); the
/// encodings P5 refuses at load (small order, non-canonical) still get
/// ed25519-dalek's own answer, as this module promises for any bytes.
#[derive(Clone, Copy)]
enum StrictKey {
    Herald(PublicKey),
    Dalek(VerifyingKey),
}

impl StrictKey {
    fn decode(bytes: &[u8; 32]) -> Option<Self> {
        match PublicKey::from_bytes(bytes) {
            Ok(key) => Some(Self::Herald(key)),
            Err(_) => VerifyingKey::from_bytes(bytes).ok().map(Self::Dalek),
        }
    }

    fn verify(&self, message: &[u8], signature: &[u8; 64]) -> bool {
        match self {
            Self::Herald(key) => key.verify(message, signature).is_ok(),
            Self::Dalek(key) => key
                .verify_strict(message, &Signature::from_bytes(signature))
                .is_ok(),
        }
    }
}

fn split_signature(signature: &[u8; 64]) -> ([u8; 32], [u8; 32]) {
    let mut r = [0u8; 32];
    let mut s = [0u8; 32];
    let (a, b) = signature.split_at(32);
    r.copy_from_slice(a);
    s.copy_from_slice(b);
    (r, s)
}

/// Whether the y coordinate of a point encoding (sign bit ignored) is below
/// p = 2²⁵⁵ − 19, i.e. the encoding is the canonical one of whatever it decodes to
/// (up to the sign of x = 0, which only the two small-order points have).
fn canonical_y(bytes: &[u8; 32]) -> bool {
    let mut y = *bytes;
    y[31] &= 0x7f;
    // y ≥ p iff y is one of 2²⁵⁵ − 19 … 2²⁵⁵ − 1: 0xed..=0xff, then 30 × 0xff, then 0x7f.
    !(y[0] >= 0xed && y[1..31].iter().all(|&b| b == 0xff) && y[31] == 0x7f)
}

/// `[L]P = 0`: P has no torsion component (it lies in the prime-order
/// subgroup). Computed as `[L − 1]P + P` in variable time (the inputs are
/// public): `vartime_double_scalar_mul_basepoint(a, P, 0)` multiplies P by
/// the integer `a`, here the canonical scalar `L − 1`, so torsion survives.
/// Same answer as `EdwardsPoint::is_torsion_free` (tested), 4% faster.
fn torsion_free(p: &EdwardsPoint) -> bool {
    let l_minus_1 = -Scalar::ONE;
    (EdwardsPoint::vartime_double_scalar_mul_basepoint(&l_minus_1, p, &Scalar::ZERO) + p)
        .is_identity()
}

#[cfg(test)]
mod tests {
    // Tests unwrap: a failure is the assertion.
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;
    use curve25519_dalek::constants::{ED25519_BASEPOINT_POINT, EIGHT_TORSION};

    #[test]
    fn canonical_y_boundaries() {
        let p_minus_1: [u8; 32] = {
            let mut b = [0xff; 32];
            b[0] = 0xec;
            b[31] = 0x7f;
            b
        };
        assert!(canonical_y(&p_minus_1));
        let mut p = p_minus_1;
        p[0] = 0xed;
        assert!(!canonical_y(&p));
        let mut p_sign = p;
        p_sign[31] = 0xff;
        assert!(!canonical_y(&p_sign));
        let mut max = [0xff; 32];
        assert!(!canonical_y(&max));
        max[5] = 0xfe;
        assert!(canonical_y(&max));
        assert!(canonical_y(&[0; 32]));
    }

    #[test]
    fn torsion_components_are_found() {
        for k in [1u64, 2, 123_456_789, u64::MAX] {
            let p = ED25519_BASEPOINT_POINT * Scalar::from(k);
            assert!(torsion_free(&p));
            for (i, t) in EIGHT_TORSION.iter().enumerate() {
                let q = p + t;
                assert_eq!(torsion_free(&q), i == 0, "torsion point {i}");
                assert_eq!(torsion_free(&q), q.is_torsion_free());
                // Small-order points alone: only the identity is torsion-free.
                assert_eq!(torsion_free(t), i == 0);
            }
        }
    }
}
