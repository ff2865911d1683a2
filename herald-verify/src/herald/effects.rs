//! What certified claims do to a trace audit (PROFILE P14 *Effects in a
//! verification*), applied by the audit when it is given a [`Certified`]
//! (`AuditOptions::heralds`):
//!
//! - a certified `key` resolves its subject: the caller adds the keys to
//!   the keyring before the audit ([`Certified::extend_keyring`]), so they
//!   verify as any key does and are reported `key_source: "herald"`;
//! - a certified `deprecated` acts as a deprecation the verifier witnessed
//!   ([`witnessed_deprecations`], read by the lifecycle: P8
//!   `deprecated_signer` after its `ts`);
//! - an envelope whose `lineage_proof` does not name a counted `lineage`
//!   certification of its `from` whose claim a quorum certifies gets the
//!   warning `lineage_unproven` ([`lineage_proofs`]);
//! - each envelope's report lists the claims certified about its `from`
//!   ([`by_subject`]).
//!
//! None of these changes a signature's verdict.

use alloc::{collections::BTreeMap, vec::Vec};

use herald_core::{EnvelopeRef, ReasonCode, Sigil};

use super::quorum::Certified;
use crate::compact::{CompactEnvelope, DetailTable, JudgedEnvelope};
use crate::lifecycle::{Identity, Judged, identity};
use crate::report::{ReportReason, ReportedClaim};

/// The identities a quorum certified `deprecated`, with the earliest `ts`.
pub(crate) fn witnessed_deprecations(certified: Option<&Certified>) -> BTreeMap<Identity, u64> {
    let mut out = BTreeMap::new();
    for (subject, ts) in certified.map(Certified::deprecations).unwrap_or_default() {
        if let Some(who) = identity(&subject) {
            let e = out.entry(who).or_insert(ts);
            *e = (*e).min(ts);
        }
    }
    out
}

/// The key of `lineage_proof` as an envelope's map encodes it (P1: a
/// 13-byte text key), to find the few envelopes that carry one without
/// decoding every envelope again.
const LINEAGE_PROOF_KEY: &[u8] = b"\x6dlineage_proof";

/// Give `lineage_unproven` to every envelope of `bytes` whose
/// `lineage_proof` is not backed by a certified `lineage` claim of its
/// `from` (PROFILE P14).
pub(crate) fn lineage_proofs(
    certified: &Certified,
    bytes: &[&[u8]],
    kept: &mut [CompactEnvelope],
    details: &mut DetailTable,
    limits: &herald_core::cbor::Limits,
) {
    for (b, kept) in bytes.iter().zip(kept.iter_mut()) {
        if !b
            .windows(LINEAGE_PROOF_KEY.len())
            .any(|w| w == LINEAGE_PROOF_KEY)
        {
            continue;
        }
        let Ok(v) = EnvelopeRef::decode_with(b, limits) else {
            continue;
        };
        let Some(proof) = v.lineage_proof() else {
            continue;
        };
        if !certified.lineage_proven(&v.from_sigil(), proof) {
            JudgedEnvelope { kept, details }.push(ReportReason::new(
                ReasonCode::LineageUnproven,
                "its lineage_proof names no lineage certification of its sender that the \
                 Herald quorum certifies (P14)",
            ));
        }
    }
}

/// The certified claims grouped by subject, as reports list them: what a
/// compact report keeps to give each envelope the claims about its `from`.
pub(crate) fn by_subject(certified: &Certified) -> Vec<(Sigil, Vec<ReportedClaim>)> {
    let mut out: Vec<(Sigil, Vec<ReportedClaim>)> = Vec::new();
    for c in certified.claims() {
        let Some(r) = ReportedClaim::of(c) else {
            continue;
        };
        match out.iter_mut().find(|(s, _)| s.same_key_as(&c.subject)) {
            Some((_, list)) => list.push(r),
            None => out.push((c.subject, alloc::vec![r])),
        }
    }
    out
}

impl ReportedClaim {
    /// `c` as a report lists it.
    pub(crate) fn of(c: &super::quorum::CertifiedClaim) -> Option<Self> {
        let value = c.value()?;
        Some(Self {
            claim: c.claim.clone(),
            value: serde_json::from_str(&crate::display::json(value)).ok()?,
            heralds: c.heralds.iter().map(|h| alloc::format!("{h}")).collect(),
        })
    }
}
