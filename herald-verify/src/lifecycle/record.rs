//! The record of one identity (PROFILE.md P8): what is known about its
//! birth, keys, molts, deprecation and duress, with its P1 codec (the value
//! of the store's `lifecycle` table, [`super::table`]).
//!
//! A live receiver keeps one per identity it has witnessed and updates it
//! as envelopes arrive ([`IdentityRecord::observe`],
//! [`IdentityRecord::record_molt`]); a trace audit builds one per identity
//! from the whole set ([`super::audit`]). Both judge envelopes against it
//! with the same rules ([`super::rules`]).

// The codec and the molt steps of the live side serve only the `store`
// feature (live reception); a build without it keeps the audit's half.
#![cfg_attr(not(feature = "store"), allow(dead_code))]

use alloc::vec::Vec;

use herald_core::attestation::{BirthAttestation, DuressWitness, MoltPolicy};
use herald_core::cbor::{self, Limits, Map, MapRef, Value, ValueRef};
use herald_core::payload::Molt;
use herald_core::{EnvelopeRef, Kind, Scope};

use super::rules::{self, MoltFacts};
use super::{Findings, Signer, identity, valid_cosigners};
use crate::auditlog::Leaf;
use crate::keyring::Keyring;
use crate::report::EnvelopeReport;

/// The birth of an identity as witnessed (P7, P8).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RecordedBirth {
    /// The birth key (the sigil's own key).
    pub key: [u8; 32],
    /// The birth's `molt_policy` attestation value (P1 bytes), if it has a
    /// well-formed one.
    pub molt_policy: Option<Vec<u8>>,
    /// The birth's `duress_witness` attestation value (P1 bytes), if it has
    /// a well-formed one.
    pub duress_witness: Option<Vec<u8>>,
    /// The identities its lineage names (spec §2.3), for cycle checks.
    pub lineage: Vec<[u8; 10]>,
}

/// A molt as witnessed (P8). Its number (`molt N` in reports) is its
/// position in [`IdentityRecord::molts`], from 1.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RecordedMolt {
    /// The molt envelope's id.
    pub id: [u8; 32],
    /// The outgoing key: the one that signed the molt.
    pub from: [u8; 32],
    /// The incoming key.
    pub new_key: [u8; 32],
    /// The molt's `ts`.
    pub ts: u64,
    /// When the new key may start signing.
    pub not_before: u64,
    /// Refused: inside the outgoing key's cool-off (rule 2).
    pub cooloff: bool,
    /// Refused: short of the birth's molt policy (rule 4).
    pub cosign_missing: bool,
    /// Void: its window overlaps another molt of the same key (rule 5).
    pub disputed: bool,
    /// An inclusion proof of it in a pinned log was accepted (rule 3).
    pub proven: bool,
    /// Its P9 leaf, which an inclusion proof must carry.
    pub leaf: Vec<u8>,
}

impl RecordedMolt {
    /// Whether rules 2, 4 and 5 let it stand.
    pub fn accepted(&self) -> bool {
        !(self.cooloff || self.cosign_missing || self.disputed)
    }

    const COOLOFF: u64 = 1;
    const COSIGN_MISSING: u64 = 2;
    const DISPUTED: u64 = 4;
    const PROVEN: u64 = 8;

    fn flags(&self) -> u64 {
        [
            (self.cooloff, Self::COOLOFF),
            (self.cosign_missing, Self::COSIGN_MISSING),
            (self.disputed, Self::DISPUTED),
            (self.proven, Self::PROVEN),
        ]
        .iter()
        .filter(|(set, _)| *set)
        .fold(0, |a, (_, bit)| a | bit)
    }
}

/// Everything a receiver has witnessed about one identity (P8).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct IdentityRecord {
    /// Its birth, once one was accepted (the first accepted one counts).
    pub birth: Option<RecordedBirth>,
    /// `(key, t_last)`: for each key that signed an accepted envelope from
    /// the identity, the greatest `ts` among those (P8 rule 2).
    pub last_seen: Vec<([u8; 32], u64)>,
    /// Every molt witnessed whose origin verified with a key of the
    /// identity, accepted or not, in arrival order.
    pub molts: Vec<RecordedMolt>,
    /// The `ts` of its earliest accepted deprecation.
    pub deprecated: Option<u64>,
    /// Whether two of its molts overlapped (rule 5): from then on every
    /// envelope from it is `disputed`.
    pub disputed: bool,
    /// The `ts` of each accepted duress envelope with a valid witness.
    pub duress: Vec<u64>,
}

impl IdentityRecord {
    /// The greatest `ts` accepted from `key` (rule 2's `t_last`).
    pub(crate) fn t_last(&self, key: &[u8; 32]) -> Option<u64> {
        self.last_seen
            .iter()
            .find(|(k, _)| k == key)
            .map(|&(_, t)| t)
    }

    /// The key `signer` stands for.
    pub(crate) fn key_of(&self, signer: Signer) -> Option<[u8; 32]> {
        match signer {
            Signer::Own(key) => Some(key),
            Signer::Molt(i) => self.molts.get(i).map(|m| m.new_key),
        }
    }

    /// The accepted molt that retired `key` at `ts`, and its number.
    pub(crate) fn retired(&self, key: &[u8; 32], ts: u64) -> Option<(usize, &RecordedMolt)> {
        self.molts
            .iter()
            .enumerate()
            .find(|(_, m)| m.accepted() && &m.from == key && ts >= m.not_before)
            .map(|(i, m)| (i + 1, m))
    }

    pub(crate) fn policy_bytes(&self) -> Option<&[u8]> {
        self.birth.as_ref()?.molt_policy.as_deref()
    }

    pub(crate) fn duress_witness_bytes(&self) -> Option<&[u8]> {
        self.birth.as_ref()?.duress_witness.as_deref()
    }

    /// The record's P1 bytes (the `lifecycle` table value, see
    /// [`crate::live::store`]).
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut map = Map::new();
        map.insert("v", Value::Unsigned(1));
        if let Some(b) = &self.birth {
            let mut birth = Map::new();
            birth.insert("key", Value::Bytes(b.key.to_vec()));
            if let Some(p) = &b.molt_policy {
                birth.insert("molt_policy", Value::Bytes(p.clone()));
            }
            if let Some(w) = &b.duress_witness {
                birth.insert("duress_witness", Value::Bytes(w.clone()));
            }
            birth.insert(
                "lineage",
                Value::Array(b.lineage.iter().map(|p| Value::Bytes(p.to_vec())).collect()),
            );
            map.insert("birth", Value::Map(birth));
        }
        map.insert(
            "keys",
            Value::Array(
                self.last_seen
                    .iter()
                    .map(|(k, t)| {
                        Value::Array(alloc::vec![Value::Bytes(k.to_vec()), Value::Unsigned(*t)])
                    })
                    .collect(),
            ),
        );
        map.insert(
            "molts",
            Value::Array(
                self.molts
                    .iter()
                    .map(|m| {
                        let mut e = Map::new();
                        e.insert("id", Value::Bytes(m.id.to_vec()));
                        e.insert("from", Value::Bytes(m.from.to_vec()));
                        e.insert("new_key", Value::Bytes(m.new_key.to_vec()));
                        e.insert("ts", Value::Unsigned(m.ts));
                        e.insert("not_before", Value::Unsigned(m.not_before));
                        e.insert("flags", Value::Unsigned(m.flags()));
                        e.insert("leaf", Value::Bytes(m.leaf.clone()));
                        Value::Map(e)
                    })
                    .collect(),
            ),
        );
        if let Some(d) = self.deprecated {
            map.insert("deprecated", Value::Unsigned(d));
        }
        map.insert("disputed", Value::Bool(self.disputed));
        map.insert(
            "duress",
            Value::Array(self.duress.iter().map(|&t| Value::Unsigned(t)).collect()),
        );
        Value::Map(map).to_vec()
    }

    /// Read a record written by [`IdentityRecord::encode`].
    pub(crate) fn decode(bytes: &[u8]) -> Result<Self, &'static str> {
        // Our own records: no item or count can exceed the record's size.
        let limits = Limits {
            max_items: bytes.len().max(Limits::DEFAULT.max_items),
            max_size: bytes.len().max(Limits::DEFAULT.max_size),
            ..Limits::DEFAULT
        };
        let value = cbor::decode_with(bytes, &limits).map_err(|_| "not canonical CBOR")?;
        let map = value.as_map().ok_or("not a map")?;
        if map.get("v").and_then(|v| v.as_unsigned()) != Some(1) {
            return Err("unknown record version");
        }
        let birth = match map.get("birth") {
            None => None,
            Some(b) => {
                let b = b.as_map().ok_or("`birth` is not a map")?;
                Some(RecordedBirth {
                    key: key32(&b, "key")?,
                    molt_policy: optional_bytes(&b, "molt_policy")?,
                    duress_witness: optional_bytes(&b, "duress_witness")?,
                    lineage: array(&b, "lineage")?
                        .iter()
                        .map(|p| {
                            p.as_bytes()
                                .and_then(|p| p.try_into().ok())
                                .ok_or("`lineage` entry is not 10 bytes")
                        })
                        .collect::<Result<_, _>>()?,
                })
            }
        };
        let mut last_seen = Vec::new();
        for pair in array(&map, "keys")?.iter() {
            let pair = pair.as_array().ok_or("`keys` entry is not an array")?;
            let mut it = pair.iter();
            let (Some(k), Some(t), None) = (it.next(), it.next(), it.next()) else {
                return Err("`keys` entry is not [key, ts]");
            };
            let k: [u8; 32] = k
                .as_bytes()
                .and_then(|b| b.try_into().ok())
                .ok_or("`keys` key is not 32 bytes")?;
            last_seen.push((k, t.as_unsigned().ok_or("`keys` ts is not a uint")?));
        }
        let mut molts = Vec::new();
        for m in array(&map, "molts")?.iter() {
            let m = m.as_map().ok_or("`molts` entry is not a map")?;
            let flags = uint(&m, "flags")?;
            molts.push(RecordedMolt {
                id: key32(&m, "id")?,
                from: key32(&m, "from")?,
                new_key: key32(&m, "new_key")?,
                ts: uint(&m, "ts")?,
                not_before: uint(&m, "not_before")?,
                cooloff: flags & RecordedMolt::COOLOFF != 0,
                cosign_missing: flags & RecordedMolt::COSIGN_MISSING != 0,
                disputed: flags & RecordedMolt::DISPUTED != 0,
                proven: flags & RecordedMolt::PROVEN != 0,
                leaf: m
                    .get("leaf")
                    .and_then(|l| l.as_bytes())
                    .ok_or("molt `leaf` is not bytes")?
                    .to_vec(),
            });
        }
        let deprecated = match map.get("deprecated") {
            None => None,
            Some(d) => Some(d.as_unsigned().ok_or("`deprecated` is not a uint")?),
        };
        let disputed = match map.get("disputed") {
            Some(ValueRef::Bool(b)) => b,
            _ => return Err("`disputed` is not a bool"),
        };
        let duress = array(&map, "duress")?
            .iter()
            .map(|t| t.as_unsigned().ok_or("`duress` entry is not a uint"))
            .collect::<Result<_, _>>()?;
        Ok(Self {
            birth,
            last_seen,
            molts,
            deprecated,
            disputed,
            duress,
        })
    }
}

fn uint(m: &MapRef<'_>, key: &'static str) -> Result<u64, &'static str> {
    m.get(key)
        .and_then(|v| v.as_unsigned())
        .ok_or("a uint field is missing")
}

fn key32(m: &MapRef<'_>, key: &'static str) -> Result<[u8; 32], &'static str> {
    m.get(key)
        .and_then(|v| v.as_bytes())
        .and_then(|b| b.try_into().ok())
        .ok_or("a 32-byte field is missing")
}

fn optional_bytes(m: &MapRef<'_>, key: &'static str) -> Result<Option<Vec<u8>>, &'static str> {
    match m.get(key) {
        None => Ok(None),
        Some(v) => Ok(Some(
            v.as_bytes().ok_or("a bytes field is not bytes")?.to_vec(),
        )),
    }
}

fn array<'a>(m: &MapRef<'a>, key: &'static str) -> Result<cbor::ArrayRef<'a>, &'static str> {
    m.get(key)
        .and_then(|v| v.as_array())
        .ok_or("an array field is missing")
}

pub(crate) fn parse_policy(bytes: &[u8]) -> Option<MoltPolicy<'_>> {
    MoltPolicy::parse(cbor::decode(bytes).ok()?).ok()
}

pub(crate) fn parse_witness(bytes: &[u8]) -> Option<DuressWitness> {
    DuressWitness::parse(cbor::decode(bytes).ok()?).ok()
}

/// A molt judged in live mode, to record once its envelope is accepted.
pub(crate) struct NewMolt {
    molt: RecordedMolt,
    overlaps: Vec<usize>,
    /// The index of an earlier record of the same molt (same id) that
    /// rules 2 or 4 refused, which this one replaces.
    replaces: Option<usize>,
}

impl RecordedMolt {
    /// The molt `env` (payload `molt`) signed by `outgoing`, before any
    /// rule: not yet refused, disputed or proven.
    pub(crate) fn new(env: &EnvelopeRef<'_>, molt: &Molt<'_>, outgoing: [u8; 32]) -> Self {
        Self {
            id: *env.id(),
            from: outgoing,
            new_key: *molt.new_key,
            ts: env.ts(),
            not_before: molt.not_before,
            cooloff: false,
            cosign_missing: false,
            disputed: false,
            proven: false,
            leaf: Leaf::from_envelope(env).encode(),
        }
    }
}

impl IdentityRecord {
    /// Rules 2, 4 and 5 ([`rules::judge_molt`]) for a molt envelope whose
    /// origin was verified with the identity's key `outgoing` and which is
    /// otherwise accepted, against what this record has witnessed; the
    /// reasons go to `report`.
    ///
    /// A molt witnessed before (same id) keeps its verdict if it was
    /// accepted or disputed. If rules 2 or 4 refused it, it is judged
    /// again: co-signing does not change an envelope's id, so the same molt
    /// may come back with the endorsements it lacked.
    pub(crate) fn judge_molt(
        &self,
        report: &mut EnvelopeReport,
        env: &EnvelopeRef<'_>,
        outgoing: [u8; 32],
        keys: &Keyring,
    ) -> Option<NewMolt> {
        let molt = Molt::parse(env.payload()).ok()?;
        let policy = self.policy_bytes().and_then(parse_policy);
        let seen = self.molts.iter().position(|m| &m.id == env.id());
        if let Some(m) = seen.and_then(|i| self.molts.get(i))
            && (m.accepted() || m.disputed)
        {
            rules::molt_verdict(report, m, policy.as_ref().map(|p| p.threshold), None);
            return None;
        }
        let endorsers = valid_cosigners(env, report, Scope::HeraldEndorsement);
        let overlaps: Vec<usize> = self
            .molts
            .iter()
            .enumerate()
            .filter(|(_, o)| {
                &o.id != env.id()
                    && o.from == outgoing
                    && rules::windows_overlap((o.ts, o.not_before), (env.ts(), molt.not_before))
            })
            .map(|(i, _)| i)
            .collect();
        let mut new = RecordedMolt::new(env, &molt, outgoing);
        let facts = MoltFacts {
            not_before: molt.not_before,
            endorsers: &endorsers,
            policy: policy.as_ref(),
            t_last: self.t_last(&outgoing),
            overlaps: !overlaps.is_empty(),
        };
        rules::judge_molt(report, &facts, keys, &mut new);
        Some(NewMolt {
            molt: new,
            overlaps,
            replaces: seen,
        })
    }
}

impl IdentityRecord {
    /// Record a molt not witnessed before (rule 5 voids the molts it
    /// overlaps and disputes the identity).
    pub(crate) fn record_molt(&mut self, new: NewMolt) {
        for &i in &new.overlaps {
            if let Some(o) = self.molts.get_mut(i) {
                o.disputed = true;
            }
        }
        if !new.overlaps.is_empty() {
            self.disputed = true;
        }
        match new.replaces.and_then(|i| self.molts.get_mut(i)) {
            Some(earlier) => *earlier = new.molt,
            None => self.molts.push(new.molt),
        }
    }

    /// `t_last` of the key `signer` stands for, after an accepted envelope
    /// at `t` (all [`Self::observe`] does for kinds other than birth,
    /// deprecation and duress).
    pub(crate) fn seen(&mut self, signer: Signer, t: u64) {
        if let Some(key) = self.key_of(signer) {
            match self.last_seen.iter_mut().find(|(k, _)| *k == key) {
                Some((_, last)) => *last = (*last).max(t),
                None => self.last_seen.push((key, t)),
            }
        }
    }

    /// The effects of an accepted envelope from the identity: `t_last` of
    /// its key; a birth, deprecation or duress.
    pub(crate) fn observe(
        &mut self,
        env: &EnvelopeRef<'_>,
        report: &impl Findings,
        signer: Signer,
    ) {
        let t = env.ts();
        self.seen(signer, t);
        match env.kind() {
            Kind::Birth if self.birth.is_none() => {
                let Some(att) = env
                    .attestation("birth")
                    .and_then(|a| BirthAttestation::parse(a).ok())
                else {
                    return;
                };
                let raw = |ty: &str, ok: fn(&[u8]) -> bool| {
                    env.attestation(ty)
                        .map(|v| Value::from(&v).to_vec())
                        .filter(|b| ok(b))
                };
                let lineage = att
                    .parents()
                    .filter_map(|p| identity(&p))
                    .filter(|p| Some(*p) != identity(&env.from_sigil()))
                    .collect();
                self.birth = Some(RecordedBirth {
                    key: *att.key,
                    lineage,
                    molt_policy: raw("molt_policy", |b| parse_policy(b).is_some()),
                    duress_witness: raw("duress_witness", |b| parse_witness(b).is_some()),
                });
            }
            Kind::Deprecation => {
                self.deprecated = Some(self.deprecated.map_or(t, |d| d.min(t)));
            }
            Kind::Duress => {
                let registered = self.duress_witness_bytes().and_then(parse_witness);
                let witnesses = valid_cosigners(env, report, Scope::DuressWitness);
                if rules::duress_witnessed(&witnesses, registered.as_ref())
                    && !self.duress.contains(&t)
                {
                    self.duress.push(t);
                }
            }
            _ => {}
        }
    }
}
