//! Live reception (PROFILE.md P8, P10, P11, P13): one envelope at a time,
//! against the clock, the persistent replay cache of [`store`] and the
//! identity lifecycle this receiver has witnessed ([`crate::lifecycle`]):
//! its records in the store ([`table`]) and the inclusion proofs of its
//! molts ([`proof`], P8 rule 3).
//!
//! [`Receiver::receive`] runs [`herald_core::check`] with `now` from its
//! clock (so `expired` and `future_ts` are decided there), then the P10
//! live rules:
//!
//! - `stale`: no `expires`, and `ts < now − 30 days` (the cache can no
//!   longer vouch for it);
//! - `replayed_nonce`: the `(from key, nonce)` pair is cached;
//!
//! and the P8 lifecycle of the sender as witnessed so far (`rotated_key`,
//! `molt_unproven`, `deprecated_signer`, `disputed`, `signer_under_duress`,
//! a molt's `molt_cooloff` and `molt_cosign_missing`, a birth's
//! `lineage_deprecated_parent` and `lineage_cycle`). The lifecycle
//! writes of an envelope (a birth, molt, deprecation or duress, the
//! signing key's `t_last`) are in the same write transaction as its replay
//! claim, committed durably before [`Receiver::receive`] returns.
//!
//! Which envelopes take a cache slot (P10 revision 3): only an envelope
//! that is accepted, status `valid` under this receiver's policy after
//! every other rule — so its origin signature verified (P13: anything
//! breaking the origin is `invalid`), every signature it carries verified
//! and every required one is there, and it is neither `expired`,
//! `future_ts` nor `stale`. An envelope that is refused claims nothing: a
//! forged or tampered envelope, or a copy of a real one with a junk
//! co-signature appended (`partial`), never uses up the real signer's
//! nonce, and an envelope refused for its time can be re-sent. A refused
//! envelope whose pair is already cached still reports `replayed_nonce`
//! (P11: every applicable reason), found by a read that changes nothing.
//!
//! Retention: a claimed pair is kept until
//! `max(expires + skew, now + 30 days, ts + 30 days)`, the three terms of
//! P10 (revision 2 added the third: it covers an envelope whose `ts` is
//! ahead of this clock by up to `skew`, which would otherwise be forgotten a
//! few seconds before it becomes `stale`). Past that time, a replay of the same bytes is
//! `expired` or `stale` on its own, so [`Store::purge`] may drop the entry.

use alloc::collections::BTreeMap;
use alloc::{boxed::Box, string::String, vec::Vec};
use core::fmt;

use herald_core::attestation::BirthAttestation;
use herald_core::cbor::Limits;
use herald_core::{
    CheckOptions, EnvelopeRef, Kind, PublicKey, ReasonCode, Scope, Sigil, Status, Strict,
};

use crate::auditlog::InclusionProof;
use crate::batch::{self, BatchOptions};
use crate::keyring::Keyring;
use crate::lifecycle::{Identity, IdentityRecord, identity, rules, valid_cosigners};
use crate::report::{EnvelopeReport, ReportReason, Source, hex};
use crate::verdicts::Collect;
use proof::{MoltProofError, ProvenMolt};
use state::{LiveState, StoreTxn};
use store::{Claim, Store, StoreError};

mod origin;
pub(crate) mod proof;
pub(crate) mod state;
pub(crate) mod store;
pub(crate) mod table;

/// How long the cache vouches for an envelope without `expires`, and the
/// least time a pair is kept: 30 days, in seconds (P10).
pub const CACHE_WINDOW: u64 = 30 * 86_400;

/// Who an envelope claims to be from, and what was witnessed about them.
type Seen = (Option<Identity>, Option<IdentityRecord>);

/// Signatures per batch equation in [`Receiver::precheck_all`]: a bad
/// signature costs the others of its chunk a single verification each, so
/// the chunk is small; 64 still costs about a quarter of single
/// verification per signature (docs/performance.md, `verify_batch` of 64).
pub const PRECHECK_CHUNK: usize = 64;

/// The time source of a [`Receiver`]: Unix seconds.
pub trait Clock: Send + Sync {
    /// The current time, Unix seconds.
    fn now(&self) -> u64;
}

/// The system clock (a time before 1970 reads as 0).
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> u64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs())
    }
}

impl<F: Fn() -> u64 + Send + Sync> Clock for F {
    fn now(&self) -> u64 {
        self()
    }
}

/// A P10 live receiver: a keyring, a clock, a policy and the persistent
/// replay cache. `Send + Sync`: [`Receiver::receive`] takes `&self`, and two
/// threads receiving the same pair never both accept it (see [`Store`]).
pub struct Receiver {
    store: Store,
    keyring: Keyring,
    skew: u64,
    required_scopes: Vec<Scope>,
    learn_birth_keys: bool,
    limits: Limits,
    clock: Box<dyn Clock>,
    /// Verify co-signatures only once the origin verified
    /// ([`Receiver::with_origin_first`]).
    origin_first: bool,
}

impl fmt::Debug for Receiver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Receiver")
            .field("store", &self.store)
            .field("keys", &self.keyring.len())
            .field("skew", &self.skew)
            .field("required_scopes", &self.required_scopes)
            .field("learn_birth_keys", &self.learn_birth_keys)
            .finish_non_exhaustive()
    }
}

/// An envelope whose origin was checked without the write lock
/// ([`Receiver::precheck_all`]), to be finished with
/// [`Receiver::finish`]. A clone may be finished instead (a backend whose
/// state is read ahead of the rules finishes again once it read what a
/// first try missed).
#[derive(Clone)]
pub struct Prechecked<'b> {
    bytes: &'b [u8],
    now: u64,
    who: Option<Identity>,
    seen: Option<IdentityRecord>,
    origin: origin::Origin<'b>,
}

impl Prechecked<'_> {
    /// Whether the origin signature verified (P13), with the keys known
    /// when it was prechecked: a conduit charges its sender's rate only
    /// then (CONDUIT.md, `429`), never for a post anyone could forge.
    pub fn origin_verified(&self) -> bool {
        crate::lifecycle::origin_ok_of(self.origin.reasons.iter().map(|r| (r.code, r.index)))
    }

    /// Whether the receiver knew no key for the origin's sigil
    /// (`unknown_signer` at signature 0: none pinned, no witnessed birth or
    /// molt), so that nothing of it was verified.
    pub fn origin_signer_unknown(&self) -> bool {
        self.origin
            .reasons
            .iter()
            .any(|r| r.code == ReasonCode::UnknownSigner && r.index == Some(0))
    }
}

impl fmt::Debug for Prechecked<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Prechecked")
            .field("len", &self.bytes.len())
            .field("now", &self.now)
            .finish_non_exhaustive()
    }
}

impl Receiver {
    /// A receiver with P10 defaults: skew 300 s, the system clock, no
    /// required scopes, P1 limits, and a birth's self-certified key accepted
    /// for the birth itself (P7).
    pub fn new(store: Store, keyring: Keyring) -> Self {
        Self {
            store,
            keyring,
            skew: crate::trace::DEFAULT_SKEW,
            required_scopes: Vec::new(),
            learn_birth_keys: true,
            limits: Limits::DEFAULT,
            clock: Box::new(SystemClock),
            origin_first: false,
        }
    }

    /// Verify an envelope's co-signatures only once its origin signature
    /// verified (a conduit's front door, CONDUIT.md revision 3: the cost of
    /// a post from a key it does not know stays a few verifications, where
    /// n co-signatures hash O(n²) bytes). An envelope whose origin fails is
    /// `invalid` either way (P13); its report then lists the origin's
    /// reasons and the co-signature reasons that need no verification, not
    /// `bad_signature` or `required_signature_missing` for co-signatures it
    /// did not verify. In [`Receiver::precheck_all`] the batch decides
    /// only origins; an envelope whose origin verified and that carries
    /// co-signatures is then checked again alone. Off by default: every
    /// applicable reason (P11).
    pub fn with_origin_first(mut self, origin_first: bool) -> Self {
        self.origin_first = origin_first;
        self
    }

    /// The clock skew tolerated, seconds (P10).
    pub fn with_skew(mut self, skew: u64) -> Self {
        self.skew = skew;
        self
    }

    /// Scopes the policy requires a valid signature in (spec §3.4).
    pub fn with_required_scopes(mut self, scopes: Vec<Scope>) -> Self {
        self.required_scopes = scopes;
        self
    }

    /// The time source (tests fix it).
    pub fn with_clock(mut self, clock: impl Clock + 'static) -> Self {
        self.clock = Box::new(clock);
        self
    }

    /// Whether a birth's self-certified key may verify that birth (P7).
    pub fn with_learn_birth_keys(mut self, learn: bool) -> Self {
        self.learn_birth_keys = learn;
        self
    }

    /// Decoder limits per envelope (P1).
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The replay cache.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The keyring.
    pub fn keyring(&self) -> &Keyring {
        &self.keyring
    }

    /// Give back the replay cache (to close it: drop it).
    pub fn into_store(self) -> Store {
        self.store
    }

    /// Receive one envelope now, by the receiver's clock (P10 live
    /// reception), against its own store: every P11 reason, with `stale`
    /// and `replayed_nonce` added here. An accepted envelope (`valid`, P10
    /// revision 3) has claimed its `(from key, nonce)` pair durably before
    /// this returns; on an error nothing may be assumed about the claim,
    /// and the envelope must be treated as not accepted.
    pub fn receive(&self, bytes: &[u8]) -> Result<EnvelopeReport, StoreError> {
        const OP: &str = "receive";
        let now = self.clock.now();
        let who = origin::claimed_identity(bytes, &self.limits);
        let seen = match &who {
            Some(w) => table::load(&self.store, w)?,
            None => None,
        };
        let pre = self.precheck_seen(bytes, now, who, seen);
        if pre.origin.checked.envelope.is_none() {
            // Not an envelope: nothing to look up or record.
            return Ok(Self::report(&pre.origin));
        }
        let txn = self.store.begin_write(OP)?;
        let mut state = StoreTxn::new(&self.store, &txn);
        let (report, wrote) = self.finish_in(&mut state, pre)?;
        if wrote {
            txn.commit()
                .map_err(|e| StoreError::storage(self.store.path(), OP, redb::Error::from(e)))?;
        }
        Ok(report)
    }

    fn precheck_seen<'b>(
        &self,
        bytes: &'b [u8],
        now: u64,
        who: Option<Identity>,
        seen: Option<IdentityRecord>,
    ) -> Prechecked<'b> {
        let opts = self.options(now);
        let origin = origin::check_origin(
            bytes,
            &self.keyring,
            who,
            seen.as_ref(),
            &opts,
            self.gate(origin::Gate::On),
            &mut Strict,
        );
        Prechecked {
            bytes,
            now,
            who,
            seen,
            origin,
        }
    }

    /// The signature work of receiving each of `posts` at time `now`,
    /// without any lock: the origin check against what `state` holds about
    /// each sender so far (P8; [`Store::reader`] for this receiver's own
    /// store, or a backend of its own such as the conduit fleet's
    /// database). Their signatures are verified together: each check
    /// prepares its signatures (a verifier that defers the equations), then
    /// one batch equation per [`PRECHECK_CHUNK`] of them decides them all
    /// (P5 revision 2: the verdicts of single verification, at a fraction
    /// of the cost, docs/performance.md *(8)*). An envelope with a
    /// signature that fails is checked again alone, so its reasons are
    /// single verification's. Runs on this thread; a caller with many
    /// posts splits them over its cores. Each is then finished by
    /// [`Receiver::finish`].
    pub fn precheck_all<'b>(
        &self,
        state: &mut dyn LiveState,
        posts: &[&'b [u8]],
        now: u64,
    ) -> Vec<Result<Prechecked<'b>, StoreError>> {
        let seen = self.seen_all(posts, &mut |w| table::load_via(state, w));
        self.precheck_seen_all(posts, seen, now)
    }

    /// Who each of `posts` claims to be from, and that identity's record,
    /// read with `load` once per identity (a busy sender's posts share it).
    fn seen_all(
        &self,
        posts: &[&[u8]],
        load: &mut dyn FnMut(&Identity) -> Result<Option<IdentityRecord>, StoreError>,
    ) -> Vec<Result<Seen, StoreError>> {
        let mut records: BTreeMap<Identity, Option<IdentityRecord>> = BTreeMap::new();
        posts
            .iter()
            .map(|bytes| {
                let Some(who) = origin::claimed_identity(bytes, &self.limits) else {
                    return Ok((None, None));
                };
                if let Some(seen) = records.get(&who) {
                    return Ok((Some(who), seen.clone()));
                }
                let seen = load(&who)?;
                records.insert(who, seen.clone());
                Ok((Some(who), seen))
            })
            .collect()
    }

    fn precheck_seen_all<'b>(
        &self,
        posts: &[&'b [u8]],
        seen: Vec<Result<Seen, StoreError>>,
        now: u64,
    ) -> Vec<Result<Prechecked<'b>, StoreError>> {
        let opts = self.options(now);
        let mut collect = Collect::default();
        let mut out: Vec<Result<Prechecked<'b>, StoreError>> = posts
            .iter()
            .zip(seen)
            .map(|(bytes, seen)| {
                collect.next_entry();
                let (who, seen) = seen?;
                let origin = origin::check_origin(
                    bytes,
                    &self.keyring,
                    who,
                    seen.as_ref(),
                    &opts,
                    self.gate(origin::Gate::Defer),
                    &mut collect,
                );
                Ok(Prechecked {
                    bytes,
                    now,
                    who,
                    seen,
                    origin,
                })
            })
            .collect();
        let one_thread = BatchOptions {
            chunk: PRECHECK_CHUNK,
            threads: 1,
        };
        let verdicts = batch::verify_all_with(&collect.prepared, &one_thread);
        for (slot, asked) in out.iter_mut().zip(&collect.asked) {
            if let Ok(pre) = slot
                && (Collect::failed(asked, &verdicts) || pre.origin.deferred)
            {
                let origin = origin::check_origin(
                    pre.bytes,
                    &self.keyring,
                    pre.who,
                    pre.seen.as_ref(),
                    &opts,
                    self.gate(origin::Gate::On),
                    &mut Strict,
                );
                pre.origin = origin;
            }
        }
        out
    }

    /// Finish receiving a [`Prechecked`] envelope inside `state`'s
    /// transaction (a [`StoreTxn`] of this receiver's store, or a backend
    /// of its own): the origin is checked again only if the sender's record
    /// changed since the precheck, then the P10 and P8 rules, with the
    /// claim and lifecycle reads and writes in `state`. Nothing is
    /// committed here: the claim and lifecycle writes of an accepted
    /// envelope are durable only once the caller commits, and until then
    /// the envelope must be treated as not accepted. A later finish in the
    /// same transaction sees this one's claim, so a batch of envelopes
    /// costs one durable commit, not one each (a conduit batching its
    /// fsyncs).
    pub fn finish(
        &self,
        state: &mut dyn LiveState,
        pre: Prechecked<'_>,
    ) -> Result<EnvelopeReport, StoreError> {
        if pre.origin.checked.envelope.is_none() {
            return Ok(Self::report(&pre.origin));
        }
        let (report, _) = self.finish_in(state, pre)?;
        Ok(report)
    }

    /// How co-signatures wait for the origin: `when` with
    /// [`Receiver::with_origin_first`], else not at all.
    fn gate(&self, when: origin::Gate) -> origin::Gate {
        if self.origin_first {
            when
        } else {
            origin::Gate::Off
        }
    }

    /// The check options at `now`.
    fn options(&self, now: u64) -> CheckOptions<'_> {
        CheckOptions {
            now: Some(now),
            skew: self.skew,
            limits: self.limits,
            required_scopes: &self.required_scopes,
            learn_birth_keys: self.learn_birth_keys,
        }
    }

    /// Under the write lock: check the origin again if the sender's record
    /// changed since the precheck, then the P10 and P8 rules.
    fn finish_in(
        &self,
        txn: &mut dyn LiveState,
        pre: Prechecked<'_>,
    ) -> Result<(EnvelopeReport, bool), StoreError> {
        let Prechecked {
            bytes,
            now,
            who,
            seen,
            mut origin,
        } = pre;
        let current = match &who {
            Some(w) => table::load_via(txn, w)?,
            None => None,
        };
        if !origin::same_keys(current.as_ref(), seen.as_ref()) {
            // Another receive changed the record's keys meanwhile: check
            // again, under the lock this time.
            let opts = self.options(now);
            origin = origin::check_origin(
                bytes,
                &self.keyring,
                who,
                current.as_ref(),
                &opts,
                self.gate(origin::Gate::On),
                &mut Strict,
            );
        }
        self.judge_in(txn, &origin, who.as_ref(), current, now)
    }

    /// The P10 and P8 rules after the origin check, inside `txn`: the
    /// report, and whether anything was written to `txn`.
    fn judge_in(
        &self,
        txn: &mut dyn LiveState,
        origin: &origin::Origin<'_>,
        who: Option<&Identity>,
        current: Option<IdentityRecord>,
        now: u64,
    ) -> Result<(EnvelopeReport, bool), StoreError> {
        let mut report = Self::report(origin);
        let Some(env) = origin.checked.envelope.as_ref() else {
            return Ok((report, false));
        };

        // P10: without `expires`, the cache vouches for 30 days of `ts`.
        if env.expires().is_none() && env.ts() < now.saturating_sub(CACHE_WINDOW) {
            report.push(ReportReason::new(
                ReasonCode::Stale,
                "no expires, and ts is more than 30 days old (P10)",
            ));
        }

        // P8: the sender's witnessed lifecycle, then a molt's own rules.
        let mut state = current.clone().unwrap_or_default();
        let stamp = rules::Stamp::from(env);
        rules::judge(
            &mut report,
            &stamp,
            origin.signer,
            &state,
            // Live, a dispute covers every envelope received after it,
            // whatever its `ts` (docs/lifecycle.md, "Live mode").
            state.disputed.then_some(0),
        );
        if env.kind() == Kind::Birth
            && origin.signer.is_some()
            && let Some(birth) = env
                .attestation("birth")
                .and_then(|a| BirthAttestation::parse(a).ok())
        {
            let consenting = valid_cosigners(env, &report, Scope::LineageConsent);
            let mut stored = table::Stored { state: txn };
            rules::lineage(&mut report, env, &birth, &consenting, &mut stored)?;
        }
        let new_molt = match origin.signer.and_then(|s| state.key_of(s)) {
            Some(outgoing) if env.kind() == Kind::Molt && accepted(&report) => {
                state.judge_molt(&mut report, env, outgoing, &self.keyring)
            }
            _ => None,
        };
        // An accepted molt or deprecation is itself a lifecycle event, later
        // than any duress before it.
        let event = matches!(env.kind(), Kind::Molt | Kind::Deprecation) && accepted(&report);
        rules::duress(&mut report, &stamp, &state, event.then_some(env.ts()));

        // P10: the replay cache, keyed by the key `from` names.
        let Some(signer) = self.signer_key(env, &state) else {
            // No key for `from`: the origin is `unknown_signer`, so invalid,
            // and no cache entry can name this signer.
            return Ok((report, false));
        };
        let mut claimed = false;
        // P10 revision 3: only an envelope accepted as `valid` claims its
        // pair; a refused one (a `partial` copy of a real envelope with a
        // junk co-signature included) only reads it.
        let replayed = if report.status() == Status::Valid {
            let retain_until = self.retain_until(env, now);
            claimed = txn.claim(&signer, env.nonce(), retain_until, now)? == Claim::Fresh;
            !claimed
        } else {
            txn.contains(&signer, env.nonce(), now)?
        };
        if replayed {
            report.push(ReportReason::new(
                ReasonCode::ReplayedNonce,
                "this (from key, nonce) pair was received before (P10)",
            ));
        }

        // P8: what this envelope makes the receiver witness, in the same
        // transaction as the claim.
        if let Some(molt) = new_molt
            && !replayed
        {
            state.record_molt(molt);
        }
        if accepted(&report)
            && let Some(s) = origin.signer
        {
            state.observe(env, &report, s);
        }
        let changed = match &current {
            Some(c) => *c != state,
            None => state != IdentityRecord::default(),
        };
        if let (true, Some(w)) = (changed, who) {
            table::save_via(txn, w, &state)?;
        }
        Ok((report, claimed || changed))
    }

    /// The report of an origin check.
    fn report(origin: &origin::Origin<'_>) -> EnvelopeReport {
        let env = origin.checked.envelope.as_ref();
        let mut report = EnvelopeReport {
            id: env.map(|v| hex(v.id())),
            from: env.map(|v| String::from(v.from())),
            reasons: Vec::new(),
            unlisted_reasons: origin.unlisted.clone(),
            key_source: origin.key_source,
            source: Source::default(),
            trace: env.map(|v| hex(v.trace())),
            parent: env.and_then(|v| v.parent()).map(|p| hex(p)),
            ..EnvelopeReport::default()
        };
        for r in &origin.reasons {
            report.push(r.clone());
        }
        report
    }

    /// Accept an inclusion proof of a molt this receiver witnessed (P8
    /// rule 3, P9): the proof must verify against a log key *pinned* in
    /// the keyring (a key learned from a birth is not enough), and its leaf
    /// must be the leaf of a molt received and accepted before. The molt
    /// is then recorded as proven, durably, before this returns: envelopes
    /// signed by its new key with `ts ≥ not_before` count from now on. A
    /// proof offered before its molt is refused
    /// ([`MoltProofError::UnknownMolt`]); offer it again after the molt.
    pub fn accept_inclusion_proof(
        &self,
        inclusion: &InclusionProof,
    ) -> Result<ProvenMolt, MoltProofError> {
        proof::accept_proof(&self.store, &self.keyring, inclusion)
    }

    /// What this receiver has witnessed about the identity `sigil` names
    /// (any form of it), if anything (P8).
    pub fn lifecycle(&self, sigil: &Sigil) -> Result<Option<IdentityRecord>, StoreError> {
        match identity(sigil) {
            Some(who) => table::load(&self.store, &who),
            None => Ok(None),
        }
    }

    /// The keys that may sign for `sigil` at `at` as this receiver knows
    /// them: its keyring and what it witnessed ([`crate::signing_keys`];
    /// CONDUIT.md *Who may read what*).
    pub fn signing_keys(&self, sigil: &Sigil, at: u64) -> Result<Vec<PublicKey>, StoreError> {
        let record = self.lifecycle(sigil)?;
        Ok(self.signing_keys_of(sigil, record.as_ref(), at))
    }

    /// [`Receiver::signing_keys`] with the identity's record read
    /// elsewhere (a fleet's database).
    pub fn signing_keys_of(
        &self,
        sigil: &Sigil,
        record: Option<&IdentityRecord>,
        at: u64,
    ) -> Vec<PublicKey> {
        crate::signing_keys(&self.keyring, sigil, record, self.learn_birth_keys, at)
    }

    /// Until when a claimed pair is kept (module docs).
    fn retain_until(&self, env: &EnvelopeRef<'_>, now: u64) -> u64 {
        let by_expiry = env.expires().map_or(0, |x| x.saturating_add(self.skew));
        by_expiry
            .max(now.saturating_add(CACHE_WINDOW))
            .max(env.ts().saturating_add(CACHE_WINDOW))
    }

    /// The public key `from` names: the keyring's, else (as
    /// [`check`](herald_core::check) does) the witnessed birth key or a
    /// birth's self-certified key.
    fn signer_key(&self, env: &EnvelopeRef<'_>, state: &IdentityRecord) -> Option<[u8; 32]> {
        let sigil = env.from_sigil();
        if let Some((key, _)) = self.keyring.lookup(&sigil) {
            return Some(*key.as_bytes());
        }
        if !self.learn_birth_keys {
            return None;
        }
        if let Some(b) = &state.birth
            && sigil.names_key(&b.key)
        {
            return Some(b.key);
        }
        if env.kind() != Kind::Birth {
            return None;
        }
        let birth = BirthAttestation::parse(env.attestation("birth")?).ok()?;
        sigil.names_key(birth.key).then_some(*birth.key)
    }
}

/// Judged by the lifecycle rules and witnessed: `valid` or `partial`
/// (P13). A molt with a junk co-signature appended has the real molt's
/// id, so witnessing it never makes the real one a second molt (P8).
fn accepted(r: &EnvelopeReport) -> bool {
    matches!(r.status(), Status::Valid | Status::Partial)
}

// A `Receiver` is shared between receiving threads.
const _: fn() = || {
    fn shared<T: Send + Sync>() {}
    shared::<Receiver>();
};
