//! The P8 rules as pure functions, shared by both modes (spec §2.3, §2.4,
//! §9; PROFILE.md P8). Each takes what is known about an identity (an
//! [`IdentityRecord`], however it was gathered) and one envelope, and adds
//! its reasons to that envelope's report. Every P8 reason text is here,
//! once.

use alloc::{string::String, vec::Vec};

use herald_core::attestation::{BirthAttestation, DuressWitness, MoltPolicy};
use herald_core::{EnvelopeRef, Kind, ReasonCode, Sigil};

use super::record::{IdentityRecord, RecordedMolt};
use super::{Identity, Judged, Signer, identity};
use crate::keyring::{Keyring, Provenance};
use crate::report::{ReportReason, SignedBy};

/// What the rules read of the envelope judged (a trace audit has it from
/// its facts, without decoding the envelope again).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Stamp {
    /// Its `id` field.
    pub(crate) id: [u8; 32],
    pub(crate) ts: u64,
    pub(crate) kind: Kind,
}

impl From<&EnvelopeRef<'_>> for Stamp {
    fn from(env: &EnvelopeRef<'_>) -> Self {
        Self {
            id: *env.id(),
            ts: env.ts(),
            kind: env.kind(),
        }
    }
}

/// The cool-off of P8 rule 2: a molt's `not_before` is at least this long
/// after the outgoing key's last envelope, seconds.
pub(crate) const COOLOFF: u64 = 86_400;

/// P8 rule 4: `endorsers` (valid `herald_endorsement` signers) hold at
/// least `threshold` distinct keys among the policy's `cosigners`.
pub(crate) fn policy_met(policy: &MoltPolicy<'_>, endorsers: &[Sigil]) -> bool {
    let mut distinct: Vec<Sigil> = Vec::new();
    for e in endorsers {
        if policy.cosigners().any(|c| c.same_key_as(e))
            && !distinct.iter().any(|d| d.same_key_as(e))
        {
            distinct.push(*e);
        }
    }
    distinct.len() as u64 >= policy.threshold
}

/// Rule 5: the windows `[ts, not_before]` of two molts overlap.
pub(crate) fn windows_overlap(a: (u64, u64), b: (u64, u64)) -> bool {
    a.0 <= b.1 && b.0 <= a.1
}

/// What rules 2, 4 and 5 look at for one molt whose origin verified.
pub(crate) struct MoltFacts<'a> {
    /// The molt's `not_before`.
    pub(crate) not_before: u64,
    /// Its valid `herald_endorsement` co-signers.
    pub(crate) endorsers: &'a [Sigil],
    /// The birth's `molt_policy`, if the identity's birth is known.
    pub(crate) policy: Option<&'a MoltPolicy<'a>>,
    /// The outgoing key's last envelope before it (rule 2's `t_last`).
    pub(crate) t_last: Option<u64>,
    /// Another molt of the same outgoing key overlaps it (rule 5).
    pub(crate) overlaps: bool,
}

/// Rules 2, 4 and 5 on one molt: its verdict flags in `molt` and its
/// reasons in `report`.
pub(crate) fn judge_molt(
    report: &mut impl Judged,
    facts: &MoltFacts<'_>,
    keys: &Keyring,
    molt: &mut RecordedMolt,
) {
    let met = facts.policy.map(|p| policy_met(p, facts.endorsers));
    // Rule 2's waiver: the policy met, or without one a pinned Herald.
    let waived = met.unwrap_or_else(|| {
        facts.endorsers.iter().any(|e| {
            keys.lookup(e)
                .is_some_and(|(_, prov)| prov == Provenance::Pinned)
        })
    });
    molt.disputed = facts.overlaps;
    molt.cosign_missing = met == Some(false);
    molt.cooloff = !waived
        && facts
            .t_last
            .is_some_and(|t| facts.not_before < t.saturating_add(COOLOFF));
    molt_verdict(
        report,
        molt,
        facts.policy.map(|p| p.threshold),
        facts.t_last,
    );
}

/// The reasons a molt's verdict gives the molt envelope itself; the
/// threshold and `t_last` name the numbers when known.
pub(crate) fn molt_verdict(
    report: &mut impl Judged,
    molt: &RecordedMolt,
    threshold: Option<u64>,
    t_last: Option<u64>,
) {
    if molt.disputed && !report.has(ReasonCode::Disputed) {
        report.push(ReportReason::new(
            ReasonCode::Disputed,
            "two molts of one key with overlapping windows (P8 rule 5)",
        ));
    }
    if molt.cosign_missing {
        let detail = match threshold {
            Some(n) => std::format!(
                "molt_policy needs {n} herald_endorsement co-signatures from its cosigners (P8 rule 4)"
            ),
            None => String::from(
                "too few herald_endorsement co-signatures from the molt_policy cosigners (P8 rule 4)",
            ),
        };
        report.push(ReportReason::new(ReasonCode::MoltCosignMissing, detail));
    }
    if molt.cooloff {
        let at = t_last.map(|t| std::format!(" at {t}")).unwrap_or_default();
        report.push(ReportReason::new(
            ReasonCode::MoltCooloff,
            std::format!(
                "not_before is less than 24 h after the outgoing key's last envelope{at} (P8 rule 2)"
            ),
        ));
    }
}

/// The P8 reasons of an envelope `env` (its stamp) from an identity with record
/// `record`, signed by `signer`: `molt_unproven`, `rotated_key`,
/// `deprecated_signer` and `disputed` (from `disputed_from` on); and its
/// `signing_key`. Duress is [`duress`], judged once the envelope's own
/// standing as a lifecycle event is known.
pub(crate) fn judge(
    report: &mut impl Judged,
    env: &Stamp,
    signer: Option<Signer>,
    record: &IdentityRecord,
    disputed_from: Option<u64>,
) {
    let t = env.ts;
    match signer {
        Some(Signer::Own(_)) => report.set_signing_key(SignedBy::Birth),
        Some(Signer::Molt(i)) => {
            let n = i + 1;
            if let Some(m) = record.molts.get(i) {
                // `molt N` names accepted molts only.
                if m.accepted() {
                    report.set_signing_key(SignedBy::Molt(n));
                }
                let why = if !m.accepted() {
                    Some(String::from(
                        "signed by the key of a molt that was not accepted (P8)",
                    ))
                } else if t < m.not_before {
                    Some(std::format!(
                        "signed by molt {n}'s key before its not_before {}",
                        m.not_before
                    ))
                } else if !m.proven {
                    Some(std::format!(
                        "no inclusion proof of molt {n} in an audit log whose tree head \
                         this verifier accepts (P8 rule 3)"
                    ))
                } else {
                    None
                };
                if let Some(why) = why {
                    report.push(ReportReason::new(ReasonCode::MoltUnproven, why));
                }
            }
        }
        None => {}
    }
    if let Some(key) = signer.and_then(|s| record.key_of(s))
        && let Some((n, m)) = record.retired(&key, t)
        && env.id != m.id
    {
        report.push(ReportReason::new(
            ReasonCode::RotatedKey,
            std::format!(
                "signed by the key molt {n} retired at {} (P8)",
                m.not_before
            ),
        ));
    }
    if let Some(d) = record.deprecated
        && t > d
    {
        report.push(ReportReason::new(
            ReasonCode::DeprecatedSigner,
            std::format!("the signer was deprecated at {d} (P8)"),
        ));
    }
    if let Some(d) = disputed_from
        && t >= d
        && !report.has(ReasonCode::Disputed)
    {
        report.push(ReportReason::new(
            ReasonCode::Disputed,
            "the signer has overlapping molts (P8 rule 5)",
        ));
    }
}

/// P8 duress: while a witnessed duress is the identity's latest lifecycle
/// event at the envelope's `ts`, its envelopes report
/// `signer_under_duress` (a warning). The events are the record's accepted
/// molts and deprecation, plus `also`: the envelope itself when it is an
/// accepted molt or deprecation not yet in the record. A duress envelope
/// is never judged under its own duress.
pub(crate) fn duress(
    report: &mut impl Judged,
    env: &Stamp,
    record: &IdentityRecord,
    also: Option<u64>,
) {
    let t = env.ts;
    if env.kind == Kind::Duress {
        return;
    }
    let last_duress = record.duress.iter().copied().filter(|&d| d <= t).max();
    let last_other = record
        .molts
        .iter()
        .filter(|m| m.accepted())
        .map(|m| m.ts)
        .chain(record.deprecated)
        .chain(also)
        .filter(|&x| x <= t)
        .max();
    if let Some(d) = last_duress
        && last_other.is_none_or(|o| o < d)
    {
        report.push(ReportReason::new(
            ReasonCode::SignerUnderDuress,
            std::format!("a duress envelope at {d} is the signer's latest lifecycle event (P8)"),
        ));
    }
}

/// Whether a duress envelope counts: one of its valid `duress_witness`
/// co-signers is the witness the birth registered, or any is when none is
/// registered (P7, P8).
pub(crate) fn duress_witnessed(witnesses: &[Sigil], registered: Option<&DuressWitness>) -> bool {
    witnesses
        .iter()
        .any(|w| registered.is_none_or(|r| r.sigil.same_key_as(w)))
}

/// What the lineage rules need to know about other identities.
pub(crate) trait Lineages {
    /// The error of a lookup (a store read in live mode).
    type Error;
    /// When `who` was deprecated, if it was.
    fn deprecated(&mut self, who: &Identity) -> Result<Option<u64>, Self::Error>;
    /// The identities `who`'s known birth names as parents.
    fn parents(&mut self, who: &Identity) -> Result<Vec<Identity>, Self::Error>;
}

/// Lineage rules of a birth whose origin verified (spec §2.3, P8):
/// `lineage_deprecated_parent` for a parent deprecated at or before the
/// birth's `ts`; `lineage_cycle` when the parents' known lineages lead back
/// to the child (a birth naming only itself is `lineage_self`, which
/// [`herald_core::check`] decides alone); and the parents that co-signed
/// `lineage_consent` in `lineage_consents` (a consent graph, never proof of
/// training). Each identity is visited once, without recursion.
pub(crate) fn lineage<L: Lineages>(
    report: &mut impl Judged,
    env: &EnvelopeRef<'_>,
    birth: &BirthAttestation<'_>,
    consenting: &[Sigil],
    known: &mut L,
) -> Result<(), L::Error> {
    let Some(child) = identity(&env.from_sigil()) else {
        return Ok(());
    };
    let mut stack: Vec<Identity> = Vec::new();
    for p in birth.parents() {
        let Some(pid) = identity(&p) else { continue };
        if let Some(d) = known.deprecated(&pid)?
            && d <= env.ts()
        {
            report.push(ReportReason::new(
                ReasonCode::LineageDeprecatedParent,
                std::format!(
                    "lineage parent {p} was deprecated at {d}, before this birth (spec §2.3)"
                ),
            ));
        }
        if consenting.iter().any(|c| c.same_key_as(&p)) {
            report.consent(std::format!("{p}"));
        }
        if pid != child {
            stack.push(pid);
        }
    }
    let mut seen: Vec<Identity> = Vec::new();
    while let Some(next) = stack.pop() {
        if next == child {
            report.push(ReportReason::new(
                ReasonCode::LineageCycle,
                "the lineage closes a cycle through other births (spec §2.3)",
            ));
            break;
        }
        if seen.contains(&next) {
            continue;
        }
        seen.push(next);
        stack.extend(known.parents(&next)?);
    }
    Ok(())
}
