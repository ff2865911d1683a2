//! The lifecycle over a set of envelopes (trace-audit mode; spec §2.3,
//! §2.4, §9; PROFILE.md P7, P8), after each envelope was checked alone.
//!
//! Per identity, in `(ts, input order)`: which key signed each envelope
//! (its own, or a molt's new key), the record of the identity built from
//! the whole set ([`IdentityRecord`]: its birth, molts with the verdicts
//! of rules 2, 4 and 5, deprecation and duress), then every envelope of the
//! identity judged against that record by [`rules`]. Lineage comes last,
//! across identities.
//!
//! P8 rule 3 (an envelope signed by a molted-in key counts only with an
//! inclusion proof of the molt in an audit log whose STH the verifier
//! accepts) takes the set of ids proven included: the bundled proofs
//! checked by [`crate::bundle`], each against the very molt envelope whose
//! leaf it proves.

use alloc::{
    collections::{BTreeMap, BTreeSet},
    vec::Vec,
};
use core::convert::Infallible;

use herald_core::attestation::BirthAttestation;
use herald_core::payload::Molt;
use herald_core::{
    CheckOptions, EnvelopeRef, KeyResolver, KeySource, Kind, PublicKey, Scope, check_with,
};

use super::record::{IdentityRecord, RecordedMolt, parse_policy};
use super::rules::{self, Lineages, MoltFacts};
use super::{Identity, Molted, Signer, identity, origin_ok, valid_cosigners};
use crate::audited::{Context, Kept};
use crate::facts::Facts;
use crate::keyring::Keyring;
use crate::report::{EnvelopeReport, KeyOrigin, ReportReason, SignedBy};
use crate::verdicts::{Memo, Tally, Verdict};

/// The checked set, read-only: envelope i's bytes and facts, the ids
/// proven included in an accepted log, and step 3's verdicts.
pub(crate) struct Set<'s, 'a> {
    pub(crate) bytes: &'s [&'a [u8]],
    pub(crate) facts: &'s [Option<Facts>],
    pub(crate) proven: &'s BTreeSet<[u8; 32]>,
    /// The signature verdicts step 3 kept, by envelope, for checking an
    /// envelope again with a molt's key without verifying anything twice.
    pub(crate) verdicts: &'s BTreeMap<usize, Vec<Verdict>>,
    pub(crate) tally: &'s Tally,
}

/// The decoded envelopes of the identities that have lifecycle envelopes,
/// by their place in the set.
type Views<'a> = BTreeMap<usize, EnvelopeRef<'a>>;

/// The reports the lifecycle judges, formed in full (it writes texts), by
/// their place in the set: those of the identities with lifecycle
/// envelopes. Every other report stays as codes (issue 14).
#[derive(Default)]
pub(crate) struct Judged(BTreeMap<usize, EnvelopeReport>);

impl core::ops::Index<usize> for Judged {
    type Output = EnvelopeReport;
    fn index(&self, i: usize) -> &EnvelopeReport {
        &self.0[&i]
    }
}

impl core::ops::IndexMut<usize> for Judged {
    fn index_mut(&mut self, i: usize) -> &mut EnvelopeReport {
        // Every member was formed before it is judged.
        self.0.entry(i).or_default()
    }
}

/// Apply P8 to the checked set: envelope i is `set.bytes[i]`,
/// `set.facts[i]`, and its report `kept[i]`, to which the lifecycle
/// reasons are added (formed in full first, when its identity has
/// lifecycle envelopes).
///
/// An identity with no birth, molt, deprecation or duress in the set has
/// an empty record: each of its envelopes whose origin verified with the
/// sigil's own key is signed by its `birth` key, and nothing else applies
/// (`rules::judge` against an empty record says exactly that), so only
/// the envelopes of identities with lifecycle envelopes are decoded again.
pub(crate) fn apply<'a>(
    set: &Set<'_, 'a>,
    kept: &mut [Kept],
    cx: &Context<'_, '_>,
    keys: &Keyring,
    opts: &CheckOptions<'_>,
) {
    let mut reports = Judged::default();
    // Group envelopes by identity, in (ts, input order).
    let mut by_identity: BTreeMap<Identity, Vec<usize>> = BTreeMap::new();
    for (i, f) in set.facts.iter().enumerate() {
        if let Some(who) = f.and_then(|f| f.identity) {
            by_identity.entry(who).or_default().push(i);
        }
    }
    let mut known = Known::default();
    let mut births: Vec<usize> = Vec::new();
    let mut views: Views<'a> = BTreeMap::new();
    for (who, members) in &mut by_identity {
        let fact = |i: usize| set.facts[i];
        members.sort_by_key(|&i| (fact(i).map_or(0, |f| f.ts), i));
        let lifecycle = members.iter().any(|&i| {
            fact(i).is_some_and(|f| {
                matches!(
                    f.kind,
                    Kind::Birth | Kind::Molt | Kind::Deprecation | Kind::Duress
                )
            })
        });
        if !lifecycle {
            for &i in members.iter() {
                if fact(i).is_some_and(|f| f.key_known) && kept[i].origin_ok() {
                    kept[i].set_signing_key(SignedBy::Birth);
                }
            }
            continue;
        }
        for &i in members.iter() {
            if let Ok(v) = EnvelopeRef::decode_with(set.bytes[i], &opts.limits) {
                views.insert(i, v);
            }
            reports.0.insert(i, kept[i].form(cx));
        }
        let record = one_identity(*who, members, set, &views, &mut reports, keys, opts);
        if let Some(d) = record.deprecated {
            known.deprecated.insert(*who, d);
        }
        births.extend(members.iter().copied().filter(|&i| {
            views.get(&i).is_some_and(|v| v.kind() == Kind::Birth) && origin_ok(&reports[i])
        }));
    }
    // Lineage, across identities: the first verified birth of each child
    // stands for it in the walk.
    let attested = |i: usize| {
        let v = views.get(&i)?;
        let att = BirthAttestation::parse(v.attestation("birth")?).ok()?;
        Some((v, att))
    };
    for &b in &births {
        if let Some((v, att)) = attested(b)
            && let Some(child) = identity(&v.from_sigil())
        {
            known
                .parents
                .entry(child)
                .or_insert_with(|| att.parents().filter_map(|p| identity(&p)).collect());
        }
    }
    for &b in &births {
        let Some((v, att)) = attested(b) else {
            continue;
        };
        let consenting = valid_cosigners(v, &reports[b], Scope::LineageConsent);
        let Ok(()) = rules::lineage(&mut reports[b], v, &att, &consenting, &mut known);
    }
    for (i, report) in reports.0 {
        if let Some(slot) = kept.get_mut(i) {
            let entry = slot.entry().and_then(|e| u32::try_from(e).ok());
            *slot = Kept::formed(entry, report);
        }
    }
}

/// The deprecations and lineages of the set's identities.
#[derive(Default)]
struct Known {
    deprecated: BTreeMap<Identity, u64>,
    parents: BTreeMap<Identity, Vec<Identity>>,
}

impl Lineages for Known {
    type Error = Infallible;

    fn deprecated(&mut self, who: &Identity) -> Result<Option<u64>, Infallible> {
        Ok(self.deprecated.get(who).copied())
    }

    fn parents(&mut self, who: &Identity) -> Result<Vec<Identity>, Infallible> {
        Ok(self.parents.get(who).cloned().unwrap_or_default())
    }
}

/// One identity's record from its `members` (sorted by `ts`), every member
/// judged against it.
fn one_identity(
    who: Identity,
    members: &[usize],
    set: &Set<'_, '_>,
    views: &Views<'_>,
    reports: &mut Judged,
    keys: &Keyring,
    opts: &CheckOptions<'_>,
) -> IdentityRecord {
    let view = |i: usize| views.get(&i);
    let ts = |i: usize| view(i).map_or(0, EnvelopeRef::ts);
    let kind = |i: usize| view(i).map_or(Kind::Message, EnvelopeRef::kind);

    // Which key signed each member: its own, else a molt's new key. Molts
    // first, in `ts` order (a molt may be signed by an earlier molt's key;
    // their numbers, `molt N`, follow that order), then the rest against
    // every molt of the identity.
    let mut record = IdentityRecord::default();
    let mut signer: BTreeMap<usize, Signer> = BTreeMap::new();
    let mut molt_of: Vec<usize> = Vec::new();
    let (molts, others): (Vec<usize>, Vec<usize>) =
        members.iter().partition(|&&i| kind(i) == Kind::Molt);
    for i in molts.into_iter().chain(others) {
        let s = match own_key(reports, i, views, keys) {
            Some(key) => Signer::Own(key),
            None => match by_molt_key(who, i, &record, set, reports, keys, opts) {
                Some(s) => s,
                None => continue,
            },
        };
        signer.insert(i, s);
        if let (Kind::Molt, Some(v), Some(outgoing)) = (kind(i), view(i), record.key_of(s))
            && let Ok(molt) = Molt::parse(v.payload())
        {
            record.molts.push(RecordedMolt::new(v, &molt, outgoing));
            molt_of.push(i);
        }
    }
    // What the set says of the identity: its birth first (its molt policy
    // and duress witness govern the rest), then the others in `ts` order.
    let birth = members
        .iter()
        .copied()
        .find(|&i| kind(i) == Kind::Birth && signer.contains_key(&i));
    for &i in birth
        .iter()
        .chain(members.iter().filter(|&&i| Some(i) != birth))
    {
        if let (Some(&s), Some(v)) = (signer.get(&i), view(i)) {
            record.observe(v, &reports[i], s);
        }
    }

    // Rules 2, 4 and 5 on each molt, in `ts` order.
    let policy_bytes = record.policy_bytes().map(<[u8]>::to_vec);
    let policy = policy_bytes.as_deref().and_then(parse_policy);
    let mut disputed_from: Option<u64> = None;
    for (k, &m) in molt_of.iter().enumerate() {
        let Some(v) = view(m) else { continue };
        let outgoing = record.molts[k].from;
        let endorsers = valid_cosigners(v, &reports[m], Scope::HeraldEndorsement);
        let overlaps = record.molts.iter().enumerate().any(|(o, other)| {
            o != k
                && other.from == outgoing
                && rules::windows_overlap(
                    (other.ts, other.not_before),
                    (record.molts[k].ts, record.molts[k].not_before),
                )
        });
        // Rule 2's t_last: the outgoing key's latest other envelope at or
        // before the molt.
        let t_last = members
            .iter()
            .copied()
            .filter(|&j| j != m && ts(j) <= ts(m))
            .filter(|&j| signer.get(&j).and_then(|&s| record.key_of(s)) == Some(outgoing))
            .map(ts)
            .max();
        let facts = MoltFacts {
            not_before: record.molts[k].not_before,
            endorsers: &endorsers,
            policy: policy.as_ref(),
            t_last,
            overlaps,
        };
        let mut molt = record.molts[k].clone();
        rules::judge_molt(&mut reports[m], &facts, keys, &mut molt);
        molt.proven = set.proven.contains(&molt.id);
        if molt.disputed {
            disputed_from = Some(disputed_from.map_or(molt.ts, |d| d.min(molt.ts)));
        }
        record.molts[k] = molt;
    }

    // Every member against the record.
    for &i in members {
        if let Some(v) = view(i) {
            rules::judge(
                &mut reports[i],
                v,
                signer.get(&i).copied(),
                &record,
                disputed_from,
            );
            rules::duress(&mut reports[i], v, &record, None);
        }
    }
    record
}

/// The sigil's own key, when member `i`'s origin verified with it: the
/// key the keyring (pinned, bundled or learned from a birth) holds for
/// `from`, or its own birth's.
fn own_key(reports: &Judged, i: usize, views: &Views<'_>, keys: &Keyring) -> Option<[u8; 32]> {
    if !origin_ok(&reports[i]) {
        return None;
    }
    let v = views.get(&i)?;
    let from = v.from_sigil();
    keys.resolve(&from).map(|k| *k.as_bytes()).or_else(|| {
        let b = BirthAttestation::parse(v.attestation("birth")?).ok()?;
        from.names_key(b.key).then_some(*b.key)
    })
}

/// Member `i`, whose origin did not verify with the sigil's own key,
/// checked again with each recorded molt's new key, newest first; on
/// success its report is that check's (a molted-in key) and the molt is
/// its signer. Only the origin under each new key is verified: every other
/// verdict is step 3's.
fn by_molt_key(
    who: Identity,
    i: usize,
    record: &IdentityRecord,
    set: &Set<'_, '_>,
    reports: &mut Judged,
    keys: &Keyring,
    opts: &CheckOptions<'_>,
) -> Option<Signer> {
    for (k, m) in record.molts.iter().enumerate().rev() {
        let Ok(key) = PublicKey::from_bytes(&m.new_key) else {
            continue;
        };
        let known = set.verdicts.get(&i).map_or(&[][..], Vec::as_slice);
        let mut memo = Memo::new(known, set.tally);
        let mut reasons = Vec::new();
        let molted = Molted { keys, who, key };
        let checked = check_with(set.bytes[i], &molted, opts, &mut reasons, &mut memo);
        let redone = EnvelopeReport {
            reasons: reasons
                .iter()
                .map(|r| ReportReason::of(r, set.bytes[i]))
                .collect(),
            ..EnvelopeReport::default()
        };
        if checked.key_source == Some(KeySource::Molt) && origin_ok(&redone) {
            reports[i].reasons = redone.reasons;
            reports[i].key_source = Some(KeyOrigin::Molt);
            return Some(Signer::Molt(k));
        }
    }
    None
}
