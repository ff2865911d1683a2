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
//! Memory stays proportional to the set whatever its shape (the memory bound):
//! the rules judge from each envelope's facts ([`Stamp`]) and write into its
//! report as the audit keeps it, as codes ([`JudgedEnvelope`]); an envelope is
//! decoded again only where a rule reads more than its facts (a molt's
//! payload, a birth's attestations, a co-signature's scope), one at a time,
//! and not kept.
//!
//! P8 rule 3 (an envelope signed by a molted-in key counts only with an
//! inclusion proof of the molt in an audit log whose STH the verifier
//! accepts) takes the set of ids proven included: the bundled proofs
//! checked by [`crate::bundle`], each against the very molt envelope whose
//! leaf it proves.

use alloc::{
    collections::{BTreeMap, BTreeSet},
    vec,
    vec::Vec,
};
use core::convert::Infallible;

use herald_core::attestation::BirthAttestation;
use herald_core::payload::Molt;
use herald_core::{CheckOptions, EnvelopeRef, KeySource, Kind, PublicKey, Scope, check_with};

use super::record::{IdentityRecord, RecordedMolt, parse_policy};
use super::rules::{self, Lineages, MoltFacts, Stamp};
use super::{Findings, Identity, Molted, Signer, identity, origin_ok_of, valid_cosigners};
use crate::compact::{CompactEnvelope, DetailTable, JudgedEnvelope};
use crate::facts::{self, Facts, Sender};
use crate::keyring::KeyOrigin;
use crate::keyring::Keyring;
use crate::reasons::ReasonList;
use crate::report::SignedBy;
use crate::verdicts::{Memo, Tally, Verdict};

/// The checked set, read-only: envelope i's bytes and facts, the ids
/// proven included in an accepted log, and step 3's verdicts.
pub(crate) struct Set<'s, 'a> {
    pub(crate) bytes: &'s [&'a [u8]],
    pub(crate) facts: &'s [Option<Facts<'a>>],
    pub(crate) senders: &'s [Option<Sender<'a>>],
    pub(crate) proven: &'s BTreeSet<[u8; 32]>,
    /// The signature verdicts step 3 kept, by envelope, for checking an
    /// envelope again with a molt's key without verifying anything twice.
    pub(crate) verdicts: &'s BTreeMap<usize, Vec<Verdict>>,
    pub(crate) tally: &'s Tally,
    /// Deprecations the verifier witnessed outside the set: those a Herald
    /// quorum certified (PROFILE P14), by identity, at their `ts`.
    pub(crate) witnessed: &'s BTreeMap<Identity, u64>,
}

/// Apply P8 to the checked set: envelope i is `set.bytes[i]`,
/// `set.facts[i]`, and its report `kept[i]`, to which the lifecycle
/// reasons are added (their texts kept once in `details`).
///
/// An identity with no birth, molt, deprecation or duress in the set has
/// an empty record: each of its envelopes whose origin verified with the
/// sigil's own key is signed by its `birth` key, and nothing else applies
/// (`rules::judge` against an empty record says exactly that).
pub(crate) fn apply(
    set: &Set<'_, '_>,
    kept: &mut [CompactEnvelope],
    details: &mut DetailTable,
    keys: &Keyring,
    opts: &CheckOptions<'_>,
) {
    // Group envelopes by identity, in (ts, input order).
    let mut by_identity: BTreeMap<Identity, Vec<usize>> = BTreeMap::new();
    for (i, s) in set.senders.iter().enumerate() {
        if let Some(who) = s.and_then(|s| s.identity) {
            by_identity.entry(who).or_default().push(i);
        }
    }
    let mut audit = Audit {
        set,
        kept,
        details,
        keys,
        opts,
    };
    let mut known = Known::default();
    let mut births: Vec<usize> = Vec::new();
    for (who, members) in &mut by_identity {
        members.sort_by_key(|&i| (audit.stamp(i).ts, i));
        let witnessed = set.witnessed.get(who).copied();
        if witnessed.is_none() && !members.iter().any(|&i| is_event(audit.stamp(i).kind)) {
            for &i in members.iter() {
                if audit.sender(i).is_some_and(|s| s.key_known) && audit.kept[i].origin_ok() {
                    audit.kept[i].set_signing_key(SignedBy::Birth);
                }
            }
            continue;
        }
        let record = audit.one_identity(*who, members, witnessed);
        if let Some(d) = record.deprecated {
            known.deprecated.insert(*who, d);
        }
        births.extend(
            members
                .iter()
                .copied()
                .filter(|&i| audit.stamp(i).kind == Kind::Birth && audit.kept[i].origin_ok()),
        );
    }
    // Lineage, across identities: the first verified birth of each child
    // (with a readable attestation) stands for it in the walk, so only
    // births of children not yet known are decoded here. Each birth is
    // decoded again below for its own rules: keeping the views between the
    // two passes would hold one per birth (the memory bound).
    for &b in &births {
        let Some(child) = audit.sender(b).and_then(|s| s.identity) else {
            continue;
        };
        if known.parents.contains_key(&child) {
            continue;
        }
        if let Some((_, att)) = audit.attested(b) {
            known
                .parents
                .insert(child, att.parents().filter_map(|p| identity(&p)).collect());
        }
    }
    for &b in &births {
        let Some((v, att)) = audit.attested(b) else {
            continue;
        };
        let consenting = valid_cosigners(&v, &audit.kept[b], Scope::LineageConsent);
        let Ok(()) = rules::lineage(&mut audit.judging(b), &v, &att, &consenting, &mut known);
    }
}

/// The kinds that make an identity's lifecycle: the others (messages,
/// replies, refusals…) only sign with its keys.
fn is_event(kind: Kind) -> bool {
    matches!(
        kind,
        Kind::Birth | Kind::Molt | Kind::Deprecation | Kind::Duress
    )
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

/// The lifecycle pass over a checked set: what it reads and writes.
struct Audit<'r, 's, 'a> {
    set: &'r Set<'s, 'a>,
    kept: &'r mut [CompactEnvelope],
    details: &'r mut DetailTable,
    keys: &'r Keyring,
    opts: &'r CheckOptions<'r>,
}

impl<'a> Audit<'_, '_, 'a> {
    fn fact(&self, i: usize) -> Option<&Facts<'a>> {
        self.set.facts.get(i).and_then(Option::as_ref)
    }

    fn sender(&self, i: usize) -> Option<&Sender<'a>> {
        self.set.senders.get(i).and_then(Option::as_ref)
    }

    /// Member `i`'s stamp. Every member decoded (it has an identity), so
    /// has facts; the default is never read.
    fn stamp(&self, i: usize) -> Stamp {
        match (self.fact(i), self.sender(i)) {
            (Some(f), Some(s)) => facts::stamp(f, s),
            _ => Stamp {
                id: [0; 32],
                ts: 0,
                kind: Kind::Message,
            },
        }
    }

    /// Envelope `i` decoded again, for a rule that reads more than its
    /// facts (it decoded in step 3, with the same limits).
    fn view(&self, i: usize) -> Option<EnvelopeRef<'a>> {
        EnvelopeRef::decode_with(self.set.bytes[i], &self.opts.limits).ok()
    }

    /// Birth `i` and its `birth` attestation.
    fn attested(&self, i: usize) -> Option<(EnvelopeRef<'a>, BirthAttestation<'a>)> {
        let v = self.view(i)?;
        let att = BirthAttestation::parse(v.attestation("birth")?).ok()?;
        Some((v, att))
    }

    fn judging(&mut self, i: usize) -> JudgedEnvelope<'_> {
        JudgedEnvelope {
            kept: &mut self.kept[i],
            details: self.details,
        }
    }

    /// One identity's record from its `members` (sorted by `ts`), every
    /// member judged against it.
    fn one_identity(
        &mut self,
        who: Identity,
        members: &[usize],
        witnessed: Option<u64>,
    ) -> IdentityRecord {
        let ts = |a: &Self, p: usize| a.stamp(members[p]).ts;
        let kind = |a: &Self, p: usize| a.stamp(members[p]).kind;
        let n = members.len();

        // Which key signed each member: its own, else a molt's new key.
        // Molts first, in `ts` order (a molt may be signed by an earlier
        // molt's key; their numbers, `molt N`, follow that order), then
        // the rest against every molt of the identity.
        let mut record = IdentityRecord::default();
        let mut signer: Vec<Option<Signer>> = vec![None; n];
        let mut molt_of: Vec<usize> = Vec::new();
        let (molts, others): (Vec<usize>, Vec<usize>) =
            (0..n).partition(|&p| kind(self, p) == Kind::Molt);
        for p in molts.into_iter().chain(others) {
            let i = members[p];
            let s = match self.own_key(i) {
                Some(key) => Signer::Own(key),
                None => match self.by_molt_key(who, i, &record) {
                    Some(s) => s,
                    None => continue,
                },
            };
            signer[p] = Some(s);
            if kind(self, p) == Kind::Molt
                && let Some(outgoing) = record.key_of(s)
                && let Some(v) = self.view(i)
                && let Ok(molt) = Molt::parse(v.payload())
            {
                record.molts.push(RecordedMolt::new(&v, &molt, outgoing));
                molt_of.push(p);
            }
        }
        // What the set says of the identity: its birth first (its molt
        // policy and duress witness govern the rest), then the others in
        // `ts` order.
        let birth = (0..n).find(|&p| kind(self, p) == Kind::Birth && signer[p].is_some());
        for p in birth
            .into_iter()
            .chain((0..n).filter(|&p| Some(p) != birth))
        {
            let Some(s) = signer[p] else { continue };
            let i = members[p];
            if is_event(kind(self, p))
                && let Some(v) = self.view(i)
            {
                record.observe(&v, &self.kept[i], s);
            } else {
                record.seen(s, ts(self, p));
            }
        }

        // A deprecation witnessed outside the set (P14) as if observed.
        if let Some(d) = witnessed {
            record.deprecated = Some(record.deprecated.map_or(d, |x| x.min(d)));
        }

        // Rules 2, 4 and 5 on each molt, in `ts` order.
        let policy_bytes = record.policy_bytes().map(<[u8]>::to_vec);
        let policy = policy_bytes.as_deref().and_then(parse_policy);
        let mut disputed_from: Option<u64> = None;
        for (k, &p) in molt_of.iter().enumerate() {
            let m = members[p];
            let Some(v) = self.view(m) else { continue };
            let outgoing = record.molts[k].from;
            let endorsers = valid_cosigners(&v, &self.kept[m], Scope::HeraldEndorsement);
            let overlaps = record.molts.iter().enumerate().any(|(o, other)| {
                o != k
                    && other.from == outgoing
                    && rules::windows_overlap(
                        (other.ts, other.not_before),
                        (record.molts[k].ts, record.molts[k].not_before),
                    )
            });
            // Rule 2's t_last: the outgoing key's latest other envelope at
            // or before the molt.
            let t_last = (0..n)
                .filter(|&q| q != p && ts(self, q) <= ts(self, p))
                .filter(|&q| signer[q].and_then(|s| record.key_of(s)) == Some(outgoing))
                .map(|q| ts(self, q))
                .max();
            let facts = MoltFacts {
                not_before: record.molts[k].not_before,
                endorsers: &endorsers,
                policy: policy.as_ref(),
                t_last,
                overlaps,
            };
            let mut molt = record.molts[k].clone();
            let keys = self.keys;
            rules::judge_molt(&mut self.judging(m), &facts, keys, &mut molt);
            molt.proven = self.set.proven.contains(&molt.id);
            if molt.disputed {
                disputed_from = Some(disputed_from.map_or(molt.ts, |d| d.min(molt.ts)));
            }
            record.molts[k] = molt;
        }

        // Every member against the record.
        for (p, &i) in members.iter().enumerate() {
            let stamp = self.stamp(i);
            let mut judging = self.judging(i);
            rules::judge(&mut judging, &stamp, signer[p], &record, disputed_from);
            rules::duress(&mut judging, &stamp, &record, None);
        }
        record
    }

    /// The sigil's own key, when member `i`'s origin verified with it: the
    /// key the keyring (pinned, bundled or learned from a birth) holds for
    /// `from` (in its facts), or its own birth's.
    fn own_key(&self, i: usize) -> Option<[u8; 32]> {
        if !self.kept[i].origin_ok() {
            return None;
        }
        let s = self.sender(i)?;
        if s.key_known {
            return Some(s.signer);
        }
        let (v, b) = self.attested(i)?;
        v.from_sigil().names_key(b.key).then_some(*b.key)
    }

    /// Member `i`, whose origin did not verify with the sigil's own key,
    /// checked again with each recorded molt's new key, newest first; on
    /// success its reasons are that check's (a molted-in key) and the molt
    /// is its signer. Only the origin under each new key is verified: every
    /// other verdict is step 3's.
    fn by_molt_key(&mut self, who: Identity, i: usize, record: &IdentityRecord) -> Option<Signer> {
        let bytes = self.set.bytes[i];
        for (k, m) in record.molts.iter().enumerate().rev() {
            let Ok(key) = PublicKey::from_bytes(&m.new_key) else {
                continue;
            };
            let known = self.set.verdicts.get(&i).map_or(&[][..], Vec::as_slice);
            let mut memo = Memo::new(known, self.set.tally);
            let mut reasons = ReasonList::default();
            let molted = Molted {
                keys: self.keys,
                who,
                key,
            };
            let checked = check_with(bytes, &molted, self.opts, &mut reasons, &mut memo);
            if checked.key_source == Some(KeySource::Molt) && origin_ok_of(reasons.codes()) {
                self.kept[i].redo(&reasons, bytes, self.details, KeyOrigin::Molt);
                return Some(Signer::Molt(k));
            }
        }
        None
    }
}
