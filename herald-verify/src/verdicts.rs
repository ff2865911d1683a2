//! Signature verdicts an audit has already computed, so that it never
//! verifies one signature twice (one lifecycle engine,
//! docs/lifecycle.md): a birth's origin checked in step 2 to learn its
//! key is not verified again in step 3, and an envelope checked again
//! with a molt's new key (step 3c) verifies only its origin under that
//! key, its co-signatures answered from step 3.
//!
//! A verdict is keyed by everything that decides it within one envelope:
//! the key, the signature and the domain tag (P5); the body follows from
//! the envelope and the signature's index, whose scope the tag names.
//!
//! [`Collect`] defers the equations of many envelopes to one batch
//! ([`crate::batch`]): an audit's step 3 and a conduit's batch of posts
//! ([`crate::Receiver::precheck_all`]) both use it.

use alloc::vec::Vec;
use core::sync::atomic::{AtomicUsize, Ordering};

use herald_core::{Body, Prepared, PublicKey, SignatureVerifier, Strict};

/// One signature's verdict within one envelope.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Verdict {
    key: [u8; 32],
    sig: [u8; 64],
    tag: Vec<u8>,
    ok: bool,
}

impl Verdict {
    pub(crate) fn new(key: &PublicKey, sig: &[u8; 64], tag: &[u8], ok: bool) -> Self {
        Self {
            key: *key.as_bytes(),
            sig: *sig,
            tag: tag.to_vec(),
            ok,
        }
    }

    /// The verdict for `(key, sig, tag)` among `known`, if there is one.
    pub(crate) fn find(
        known: &[Self],
        key: &PublicKey,
        sig: &[u8; 64],
        tag: &[u8],
    ) -> Option<bool> {
        known
            .iter()
            .find(|v| &v.key == key.as_bytes() && &v.sig == sig && v.tag == tag)
            .map(|v| v.ok)
    }
}

/// How many signature equations an audit computed: one per signature and
/// key, whichever path verified it (tests count them through
/// `internal::audit_counted`).
#[derive(Debug, Default)]
pub(crate) struct Tally(AtomicUsize);

impl Tally {
    pub(crate) fn add(&self, n: usize) {
        self.0.fetch_add(n, Ordering::Relaxed);
    }

    pub(crate) fn get(&self) -> usize {
        self.0.load(Ordering::Relaxed)
    }
}

/// A [`SignatureVerifier`] that answers from `known`, verifies anything
/// else with [`Strict`] (counted in `tally`), and keeps what it verified in
/// `learned`.
pub(crate) struct Memo<'k> {
    pub(crate) known: &'k [Verdict],
    pub(crate) learned: Vec<Verdict>,
    pub(crate) tally: &'k Tally,
}

impl<'k> Memo<'k> {
    pub(crate) fn new(known: &'k [Verdict], tally: &'k Tally) -> Self {
        Self {
            known,
            learned: Vec::new(),
            tally,
        }
    }
}

impl SignatureVerifier for Memo<'_> {
    fn verify(&mut self, key: &PublicKey, sig: &[u8; 64], tag: &[u8], body: &Body<'_>) -> bool {
        if let Some(ok) = Verdict::find(self.known, key, sig, tag)
            .or_else(|| Verdict::find(&self.learned, key, sig, tag))
        {
            return ok;
        }
        self.tally.add(1);
        let ok = Strict.verify(key, sig, tag, body);
        self.learned.push(Verdict::new(key, sig, tag, ok));
        ok
    }
}

/// What [`Collect`] answered for one signature, in the order
/// [`herald_core::check_with`] asked.
#[derive(Clone, Copy)]
pub(crate) enum Asked {
    /// Known at once: a byte check failed (P5), or a verdict was known.
    Decided(bool),
    /// Prepared, waiting for the equation: its place in the batch.
    Pending(usize),
}

/// A [`SignatureVerifier`] that prepares every signature it does not know
/// ([`PublicKey::prepare`]: byte checks and the challenge, streamed over
/// the body, nothing copied) and answers `true` for those that pass the
/// byte checks; the equation's verdicts come later from
/// [`crate::batch::verify_all_with`]. A check whose prepared signatures all
/// verify was answered exactly as [`Strict`] would have answered it.
#[derive(Default)]
pub(crate) struct Collect<'k> {
    pub(crate) prepared: Vec<Prepared>,
    /// Per entry, what was answered, in order ([`Collect::next_entry`]
    /// starts an entry's list).
    pub(crate) asked: Vec<Vec<Asked>>,
    /// The current entry's verdicts known already.
    pub(crate) known: &'k [Verdict],
}

impl Collect<'_> {
    /// Start the answers of the next entry.
    pub(crate) fn next_entry(&mut self) {
        self.asked.push(Vec::new());
    }

    /// Whether a signature of entry `asked` failed its equation in
    /// `verdicts` (the batch's, by place): then the entry's answers were
    /// not [`Strict`]'s, and it must be checked again.
    pub(crate) fn failed(asked: &[Asked], verdicts: &[bool]) -> bool {
        asked
            .iter()
            .any(|a| matches!(a, Asked::Pending(i) if !verdicts.get(*i).copied().unwrap_or(false)))
    }
}

impl SignatureVerifier for Collect<'_> {
    fn verify(&mut self, key: &PublicKey, sig: &[u8; 64], tag: &[u8], body: &Body<'_>) -> bool {
        let answer = match Verdict::find(self.known, key, sig, tag) {
            Some(ok) => Asked::Decided(ok),
            None => match key.prepare(sig, |feed| {
                feed(tag);
                body.feed(feed);
            }) {
                Ok(p) => {
                    self.prepared.push(p);
                    Asked::Pending(self.prepared.len() - 1)
                }
                Err(_) => Asked::Decided(false),
            },
        };
        if let Some(list) = self.asked.last_mut() {
            list.push(answer);
        }
        !matches!(answer, Asked::Decided(false))
    }
}
