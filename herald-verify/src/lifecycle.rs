//! Identity lifecycle over a set of envelopes (spec §2.3, §2.4, §9;
//! PROFILE.md P7, P8): births and lineage, molts, deprecation and duress,
//! applied in trace-audit mode after each envelope was checked alone.
//!
//! P8 rule 3 (an envelope signed by a molted-in key counts only with an
//! inclusion proof of the molt in an audit log whose STH the verifier
//! accepts) takes the set of ids proven included: the bundled proofs
//! checked by [`crate::bundle`], each against the very molt envelope whose
//! leaf it proves.

use alloc::{
    boxed::Box,
    collections::{BTreeMap, BTreeSet},
    string::String,
    vec::Vec,
};

use herald_core::attestation::{BirthAttestation, DuressWitness, MoltPolicy};
use herald_core::payload::Molt;
use herald_core::{
    CheckOptions, EnvelopeRef, KeyResolver, Kind, PublicKey, ReasonCode, Scope, Sigil, SigilForm,
    check,
};

use crate::keyring::{Keyring, Provenance};
use crate::report::{EnvelopeReport, KeyOrigin, ReportReason, SignedBy};

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

pub(crate) fn reason(code: ReasonCode, detail: impl Into<String>) -> ReportReason {
    ReportReason {
        code,
        index: None,
        detail: detail.into(),
    }
}

/// Resolves the molting identity's sigil to one candidate molted-in key.
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

/// Whether signature 0 verified and the envelope is intact (no reason
/// about index 0, no id or shape fault).
pub(crate) fn origin_ok(r: &EnvelopeReport) -> bool {
    !r.reasons.iter().any(|x| {
        (x.index == Some(0) && !x.code.is_warning())
            || matches!(
                x.code,
                ReasonCode::IdMismatch | ReasonCode::Malformed | ReasonCode::UnsupportedVersion
            )
    })
}

/// Signers (by sigil) of the signatures k ≥ 1 in `scope` that verified.
pub(crate) fn valid_cosigners(v: &EnvelopeRef<'_>, r: &EnvelopeReport, scope: Scope) -> Vec<Sigil> {
    v.signatures()
        .enumerate()
        .skip(1)
        .filter_map(|(k, s)| {
            let s = s.ok()?;
            let k = u32::try_from(k).ok()?;
            let clean = !r
                .reasons
                .iter()
                .any(|x| x.index == Some(k) && !x.code.is_warning());
            (clean && s.registered_scope() == Some(scope)).then_some(s.signer)
        })
        .collect()
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Signer {
    /// The sigil's own key (pinned or from its birth).
    Birth,
    /// The new key of molt envelope `i` (an index into the set).
    Molt(usize),
}

struct Accepted {
    envelope: usize,
    ts: u64,
    not_before: u64,
    number: usize,
    /// An inclusion proof of the molt holds (P8 rule 3).
    proven: bool,
}

/// Apply P8 to the checked set. `bytes[i]`, `views[i]` and `reports[i]`
/// describe envelope i; reports are amended in place. `proven` holds the
/// ids of the envelopes with a valid inclusion proof (P8 rule 3).
pub(crate) fn apply(
    bytes: &[&[u8]],
    views: &[Option<Box<EnvelopeRef<'_>>>],
    reports: &mut [EnvelopeReport],
    keys: &Keyring,
    opts: &CheckOptions<'_>,
    proven: &BTreeSet<[u8; 32]>,
) {
    // Group envelopes by identity, in (ts, input order).
    let mut by_identity: BTreeMap<Identity, Vec<usize>> = BTreeMap::new();
    for (i, v) in views.iter().enumerate() {
        if let Some(v) = v
            && let Some(who) = identity(&v.from_sigil())
        {
            by_identity.entry(who).or_default().push(i);
        }
    }
    let mut deprecated: BTreeMap<Identity, u64> = BTreeMap::new();
    let mut births: Vec<usize> = Vec::new();
    for (who, members) in &mut by_identity {
        members.sort_by_key(|&i| (views[i].as_deref().map_or(0, EnvelopeRef::ts), i));
        let set = Set {
            bytes,
            views,
            proven,
        };
        let d = one_identity(*who, members, &set, reports, keys, opts);
        if let Some(ts) = d {
            deprecated.insert(*who, ts);
        }
        births.extend(members.iter().copied().filter(|&i| {
            views[i].as_deref().is_some_and(|v| v.kind() == Kind::Birth) && origin_ok(&reports[i])
        }));
    }
    lineage(&births, views, reports, &deprecated);
}

/// The checked set, read-only: envelope i's bytes and view, and the ids
/// proven included in an accepted log.
struct Set<'s, 'a> {
    bytes: &'s [&'a [u8]],
    views: &'s [Option<Box<EnvelopeRef<'a>>>],
    proven: &'s BTreeSet<[u8; 32]>,
}

/// One identity's molts, deprecation and duress; returns its deprecation time.
fn one_identity(
    who: Identity,
    members: &[usize],
    set: &Set<'_, '_>,
    reports: &mut [EnvelopeReport],
    keys: &Keyring,
    opts: &CheckOptions<'_>,
) -> Option<u64> {
    let (bytes, views) = (set.bytes, set.views);
    let view = |i: usize| views[i].as_deref();
    let ts = |i: usize| view(i).map_or(0, EnvelopeRef::ts);
    let kind = |i: usize| view(i).map_or(Kind::Message, EnvelopeRef::kind);

    // The birth, if the set holds one: molt policy and duress witness.
    let birth = members
        .iter()
        .copied()
        .find(|&i| kind(i) == Kind::Birth && origin_ok(&reports[i]));
    let policy = birth
        .and_then(|b| view(b)?.attestation("molt_policy"))
        .and_then(|v| MoltPolicy::parse(v).ok());
    let witness = birth
        .and_then(|b| view(b)?.attestation("duress_witness"))
        .and_then(|v| DuressWitness::parse(v).ok());

    // Which key signed each member: its own, or a molt's new key.
    let molts: Vec<(usize, Molt<'_>)> = members
        .iter()
        .copied()
        .filter(|&i| kind(i) == Kind::Molt)
        .filter_map(|i| Some((i, Molt::parse(view(i)?.payload()).ok()?)))
        .collect();
    let mut signer: BTreeMap<usize, Signer> = BTreeMap::new();
    for &i in members {
        if origin_ok(&reports[i]) {
            signer.insert(i, Signer::Birth);
            continue;
        }
        for (m, molt) in &molts {
            let Ok(key) = PublicKey::from_bytes(molt.new_key) else {
                continue;
            };
            let mut reasons = Vec::new();
            let molted = Molted { keys, who, key };
            let checked = check(bytes[i], &molted, opts, &mut reasons);
            let redone = EnvelopeReport {
                reasons: reasons.iter().map(ReportReason::from).collect(),
                ..EnvelopeReport::default()
            };
            if checked.key_source == Some(herald_core::KeySource::Molt) && origin_ok(&redone) {
                let kept: Vec<ReportReason> = reports[i]
                    .reasons
                    .iter()
                    .filter(|r| r.index.is_none_or(|k| k > 0))
                    .cloned()
                    .collect();
                let r = &mut reports[i];
                r.reasons.clear();
                r.status = herald_core::Status::Valid;
                r.key_source = Some(KeyOrigin::Molt);
                for x in redone
                    .reasons
                    .into_iter()
                    .chain(kept.into_iter().filter(|x| x.index.is_some()))
                {
                    if !r.reasons.contains(&x) {
                        r.push(x);
                    }
                }
                signer.insert(i, Signer::Molt(*m));
                break;
            }
        }
    }

    // The molts, in time order: rules 2, 4 and 5.
    let mut accepted: Vec<Accepted> = Vec::new();
    let mut disputed_from: Option<u64> = None;
    for (n, (m, molt)) in molts.iter().enumerate() {
        let Some(&outgoing) = signer.get(m) else {
            continue;
        };
        let Some(v) = view(*m) else { continue };
        let endorsers = valid_cosigners(v, &reports[*m], Scope::HeraldEndorsement);
        let meets_policy = |p: &MoltPolicy<'_>| policy_met(p, &endorsers);
        let mut ok = true;
        // Rule 5: another molt of the same outgoing key with an overlapping window.
        let overlap = molts.iter().any(|(o, other)| {
            o != m
                && signer.get(o) == Some(&outgoing)
                && ts(*o) <= molt.not_before
                && ts(*m) <= other.not_before
        });
        if overlap {
            reports[*m].push(reason(
                ReasonCode::Disputed,
                "two molts of one key with overlapping windows (P8 rule 5)",
            ));
            disputed_from = Some(disputed_from.map_or(ts(*m), |d| d.min(ts(*m))));
            ok = false;
        }
        // Rule 4: the birth's molt policy.
        if let Some(p) = &policy
            && !meets_policy(p)
        {
            reports[*m].push(reason(
                ReasonCode::MoltCosignMissing,
                std::format!("molt_policy needs {} herald_endorsement co-signatures from its cosigners (P8 rule 4)", p.threshold),
            ));
            ok = false;
        }
        // Rule 2: the cool-off, unless waived by a qualifying endorsement.
        let waived = match &policy {
            Some(p) => meets_policy(p),
            None => endorsers.iter().any(|e| {
                keys.lookup(e)
                    .is_some_and(|(_, prov)| prov == Provenance::Pinned)
            }),
        };
        let t_last = members
            .iter()
            .copied()
            .filter(|&j| j != *m && signer.get(&j) == Some(&outgoing) && ts(j) <= ts(*m))
            .map(ts)
            .max();
        if let Some(t_last) = t_last
            && !waived
            && molt.not_before < t_last.saturating_add(86_400)
        {
            reports[*m].push(reason(
                ReasonCode::MoltCooloff,
                std::format!("not_before is less than 24 h after the outgoing key's last envelope at {t_last} (P8 rule 2)"),
            ));
            ok = false;
        }
        if ok {
            accepted.push(Accepted {
                envelope: *m,
                ts: ts(*m),
                not_before: molt.not_before,
                number: n + 1,
                proven: set.proven.contains(v.id()),
            });
        }
    }

    let deprecation = members
        .iter()
        .copied()
        .filter(|&i| kind(i) == Kind::Deprecation && signer.contains_key(&i))
        .map(ts)
        .min();
    let duress: Vec<u64> = members
        .iter()
        .copied()
        .filter(|&i| kind(i) == Kind::Duress && signer.contains_key(&i))
        .filter(|&i| {
            view(i).is_some_and(|v| {
                valid_cosigners(v, &reports[i], Scope::DuressWitness)
                    .iter()
                    .any(|w| witness.as_ref().is_none_or(|reg| reg.sigil.same_key_as(w)))
            })
        })
        .map(ts)
        .collect();

    // Every member against the key state at its ts.
    for &i in members {
        let t = ts(i);
        match signer.get(&i) {
            Some(Signer::Birth) => {
                reports[i].signing_key = Some(SignedBy::Birth);
                if let Some(a) = accepted
                    .iter()
                    .find(|a| t >= a.not_before && a.envelope != i)
                {
                    reports[i].push(reason(
                        ReasonCode::RotatedKey,
                        std::format!(
                            "signed by the key molt {} retired at {} (P8)",
                            a.number,
                            a.not_before
                        ),
                    ));
                }
            }
            Some(Signer::Molt(m)) => match accepted.iter().find(|a| a.envelope == *m) {
                Some(a) => {
                    reports[i].signing_key = Some(SignedBy::Molt(a.number));
                    let why = if t < a.not_before {
                        Some(std::format!(
                            "signed by molt {}'s key before its not_before {}",
                            a.number,
                            a.not_before
                        ))
                    } else if !a.proven {
                        Some(std::format!(
                            "no inclusion proof of molt {} in an audit log whose tree head \
                             this verifier accepts (P8 rule 3)",
                            a.number
                        ))
                    } else {
                        None
                    };
                    if let Some(why) = why {
                        reports[i].push(reason(ReasonCode::MoltUnproven, why));
                    }
                }
                None => reports[i].push(reason(
                    ReasonCode::MoltUnproven,
                    "signed by the key of a molt that was not accepted (P8)",
                )),
            },
            None => {}
        }
        if let Some(d) = deprecation
            && t > d
        {
            reports[i].push(reason(
                ReasonCode::DeprecatedSigner,
                std::format!("the signer was deprecated at {d} (P8)"),
            ));
        }
        if let Some(d) = disputed_from
            && t >= d
            && !reports[i].has(ReasonCode::Disputed)
        {
            reports[i].push(reason(
                ReasonCode::Disputed,
                "the signer has overlapping molts (P8 rule 5)",
            ));
        }
        // Duress: the latest lifecycle event at or before t is a duress.
        let last_duress = duress.iter().copied().filter(|&d| d <= t).max();
        let last_other = accepted
            .iter()
            .map(|a| a.ts)
            .chain(deprecation)
            .filter(|&x| x <= t)
            .max();
        if kind(i) != Kind::Duress
            && let Some(d) = last_duress
            && last_other.is_none_or(|o| o < d)
        {
            reports[i].push(reason(
                ReasonCode::SignerUnderDuress,
                std::format!(
                    "a duress envelope at {d} is the signer's latest lifecycle event (P8)"
                ),
            ));
        }
    }
    deprecation
}

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

/// Lineage rules across births (spec §2.3, P8): deprecated parents, cycles,
/// and which parents consented.
fn lineage(
    births: &[usize],
    views: &[Option<Box<EnvelopeRef<'_>>>],
    reports: &mut [EnvelopeReport],
    deprecated: &BTreeMap<Identity, u64>,
) {
    let mut parents: BTreeMap<Identity, (usize, Vec<Identity>)> = BTreeMap::new();
    for &b in births {
        let Some(v) = views[b].as_deref() else {
            continue;
        };
        let Some(att) = v
            .attestation("birth")
            .and_then(|a| BirthAttestation::parse(a).ok())
        else {
            continue;
        };
        let Some(child) = identity(&v.from_sigil()) else {
            continue;
        };
        let consenting = valid_cosigners(v, &reports[b], Scope::LineageConsent);
        let mut ids = Vec::new();
        for p in att.parents() {
            let Some(pid) = identity(&p) else { continue };
            if let Some(&d) = deprecated.get(&pid)
                && d <= v.ts()
            {
                reports[b].push(reason(
                    ReasonCode::LineageDeprecatedParent,
                    std::format!(
                        "lineage parent {p} was deprecated at {d}, before this birth (spec §2.3)"
                    ),
                ));
            }
            if consenting.iter().any(|c| c.same_key_as(&p)) {
                reports[b].lineage_consents.push(std::format!("{p}"));
            }
            ids.push(pid);
        }
        parents.entry(child).or_insert((b, ids));
    }
    // Cycles: an iterative walk from each birth over known births only.
    for (&start, &(b, _)) in &parents {
        let mut stack: Vec<Identity> = parents
            .get(&start)
            .map(|(_, p)| p.clone())
            .unwrap_or_default();
        let mut seen: Vec<Identity> = Vec::new();
        let mut cycle = false;
        while let Some(next) = stack.pop() {
            if next == start {
                cycle = true;
                break;
            }
            if seen.contains(&next) {
                continue;
            }
            seen.push(next);
            if let Some((_, ps)) = parents.get(&next) {
                stack.extend(ps.iter().copied());
            }
        }
        // A birth naming itself is lineage_self (checked alone), not a cycle.
        let self_only = parents.get(&start).is_some_and(|(_, p)| p.contains(&start));
        if cycle && !self_only {
            reports[b].push(reason(
                ReasonCode::LineageCycle,
                "the lineage closes a cycle through other births (spec §2.3)",
            ));
        }
    }
}
