//! The identity lifecycle (spec §2.3, §2.4, §9; PROFILE.md P7, P8):
//! births and lineage, molts, deprecation and duress.
//!
//! One engine, two modes:
//!
//! - `rules`: the rules themselves, pure functions of what is known
//!   about an identity (its [`IdentityRecord`]) and of one envelope. Every
//!   reason text P8 gives is written there, once.
//! - `audit`: a set of envelopes judged at once (trace-audit mode): the
//!   record of each identity is built from the whole set, then every
//!   envelope of the identity is judged against it.
//! - live mode ([`crate::live`]): one envelope at a time, judged against
//!   the record witnessed so far, which it then updates
//!   (`IdentityRecord::observe`, `IdentityRecord::record_molt`) and
//!   stores (`live::table`); P8 rule 3 there is an inclusion proof of a
//!   molt accepted by a live receiver (`live::proof`). (A trace audit
//!   takes its proofs from bundles, checked by [`crate::bundle`].)
//!
//! What differs between the modes is only what the record holds when an
//! envelope is judged (docs/lifecycle.md, "Live mode"); a test runs every
//! lifecycle conformance case through both (`tests/lifecycle_modes.rs`).
//!
//! An identity is the 10-byte key-hash prefix every form of its sigil
//! shares (P2).

pub(crate) mod audit;
pub(crate) mod keys;
pub(crate) mod record;
pub(crate) mod rules;

use alloc::{string::String, vec::Vec};

use herald_core::{EnvelopeRef, KeyResolver, PublicKey, ReasonCode, Scope, Sigil, SigilForm};

use crate::keyring::Keyring;
use crate::report::{EnvelopeReport, ReportReason, SignedBy};

pub use keys::signing_keys;
pub use record::{IdentityRecord, RecordedBirth, RecordedMolt};

/// The 10-byte key-hash prefix every sigil form of one identity shares.
pub(crate) type Identity = [u8; 10];

/// The identity `sigil` names (any of its forms), if it has a key hash.
pub(crate) fn identity(sigil: &Sigil) -> Option<Identity> {
    sigil
        .to_form(SigilForm::Short)?
        .hash_prefix()
        .try_into()
        .ok()
}

/// Which of the identity's keys made an origin signature.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Signer {
    /// The sigil's own key (pinned, or its birth's).
    Own([u8; 32]),
    /// The new key of molt `i` (an index into [`IdentityRecord::molts`]).
    Molt(usize),
}

/// Resolves the molting identity's sigil to one candidate molted-in key,
/// through [`KeyResolver::resolve_molted`]: a molt binds the sigil to a key
/// the sigil does not name, so [`KeyResolver::resolve`] (whose answers must
/// hash to the sigil) never gives it.
pub(crate) struct Molted<'a> {
    pub(crate) keys: &'a Keyring,
    pub(crate) who: Identity,
    pub(crate) key: PublicKey,
}

impl KeyResolver for Molted<'_> {
    fn resolve(&self, sigil: &Sigil) -> Option<PublicKey> {
        // The molting identity's own key is the one being ruled out.
        if identity(sigil) == Some(self.who) {
            return None;
        }
        self.keys.resolve(sigil)
    }
    fn resolve_molted(&self, sigil: &Sigil) -> Option<PublicKey> {
        (identity(sigil) == Some(self.who)).then_some(self.key)
    }
}

/// A report as the P8 rules read it: formed in full (live reception) or
/// kept as codes by a trace audit ([`crate::compact`]: the memory bound).
pub(crate) trait Findings {
    /// Each reason's code and signature index.
    fn codes(&self) -> impl Iterator<Item = (ReasonCode, Option<u32>)> + '_;

    /// Whether a reason with this code is present.
    fn has(&self, code: ReasonCode) -> bool {
        self.codes().any(|(c, _)| c == code)
    }

    /// Whether signature 0 verified and the envelope is intact (no reason
    /// about index 0, no id or shape fault).
    fn origin_ok(&self) -> bool {
        origin_ok_of(self.codes())
    }

    /// Whether signature `k` verified ([`crate::reasons::verified`]).
    fn verified(&self, k: u32) -> bool {
        crate::reasons::verified(self.codes(), k)
    }
}

/// A report as the P8 rules write it. Every text they write is formed by
/// [`rules`]; a report kept as codes keeps each distinct text once.
pub(crate) trait Judged: Findings {
    /// Add a reason.
    fn push(&mut self, reason: ReportReason);
    /// Which key made the origin signature.
    fn set_signing_key(&mut self, by: SignedBy);
    /// A lineage parent (a sigil) that co-signed `lineage_consent`.
    fn consent(&mut self, parent: String);
}

impl Findings for EnvelopeReport {
    fn codes(&self) -> impl Iterator<Item = (ReasonCode, Option<u32>)> + '_ {
        self.reasons.iter().map(|r| (r.code, r.index))
    }
}

impl Judged for EnvelopeReport {
    fn push(&mut self, reason: ReportReason) {
        self.reasons.push(reason);
    }
    fn set_signing_key(&mut self, by: SignedBy) {
        self.signing_key = Some(by);
    }
    fn consent(&mut self, parent: String) {
        self.lineage_consents.push(parent);
    }
}

/// [`Findings::origin_ok`] of reasons as `(code, signature index)`.
pub(crate) fn origin_ok_of(mut reasons: impl Iterator<Item = (ReasonCode, Option<u32>)>) -> bool {
    !reasons.any(|(code, index)| {
        (index == Some(0) && !code.is_warning())
            || matches!(
                code,
                ReasonCode::IdMismatch | ReasonCode::Malformed | ReasonCode::UnsupportedVersion
            )
    })
}

/// Signers (by sigil) of the signatures k ≥ 1 in `scope` that verified.
pub(crate) fn valid_cosigners(v: &EnvelopeRef<'_>, r: &impl Findings, scope: Scope) -> Vec<Sigil> {
    v.signatures()
        .enumerate()
        .skip(1)
        .filter_map(|(k, s)| {
            let s = s.ok()?;
            let k = u32::try_from(k).ok()?;
            (r.verified(k) && s.registered_scope() == Some(scope)).then_some(s.signer)
        })
        .collect()
}
