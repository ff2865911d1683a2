//! Identity lifecycle in live mode (PROFILE.md P8; spec §2.3, §2.4, §9):
//! what a [`Receiver`](crate::Receiver) has witnessed about each identity,
//! kept durably in its [`Store`] (tables `lifecycle` and `molts`, see
//! [`crate::store`]) and applied to every envelope it receives.
//!
//! An identity is the 10-byte key-hash prefix all forms of its sigil share
//! (P2). Per identity the receiver keeps a [`Witnessed`] record: the birth
//! (its key, `molt_policy`, `duress_witness`), the greatest `ts` accepted
//! per key (`t_last`, P8 rule 2), every molt witnessed with its verdict and
//! whether an inclusion proof of it was accepted (rule 3), the deprecation
//! time, whether the identity is disputed (rule 5), and its duress times.
//!
//! The rules are those of the trace audit (`lifecycle.rs`,
//! docs/lifecycle.md), applied in arrival order: a lifecycle envelope takes
//! effect only when it is accepted (`valid` or `partial`) after every rule,
//! which means its origin verified with the identity's current key. The
//! differences that arrival order makes are listed in docs/lifecycle.md
//! ("Live mode").

use alloc::vec::Vec;
use core::fmt;

use herald_core::attestation::{BirthAttestation, DuressWitness, MoltPolicy};
use herald_core::cbor::{self, Limits, Map, MapRef, Value, ValueRef};
use herald_core::payload::Molt;
use herald_core::{
    CheckOptions, Checked, EnvelopeRef, KeyResolver, KeySource, Kind, PublicKey, ReasonCode, Scope,
    Sigil, check,
};
use redb::{ReadableDatabase, ReadableTable};

use crate::auditlog::{CheckError, InclusionProof, Leaf};
use crate::keyring::{Keyring, Provenance};
use crate::lifecycle::{
    Identity, Molted, identity, origin_ok, policy_met, reason, valid_cosigners,
};
use crate::report::{EnvelopeReport, KeyOrigin, ReportReason, SignedBy, hex};
use crate::store::{LIFECYCLE, MOLTS, Store, StoreError};

/// The cool-off of P8 rule 2, seconds.
const COOLOFF: u64 = 86_400;

/// The birth of an identity as witnessed (P7, P8).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct WitnessedBirth {
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
/// position in [`Witnessed::molts`], from 1.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct WitnessedMolt {
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

impl WitnessedMolt {
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

    /// The reasons its verdict gives the molt envelope itself.
    fn verdict(&self, report: &mut EnvelopeReport) {
        if self.disputed && !report.has(ReasonCode::Disputed) {
            report.push(reason(
                ReasonCode::Disputed,
                "two molts of one key with overlapping windows (P8 rule 5)",
            ));
        }
        if self.cosign_missing {
            report.push(reason(
                ReasonCode::MoltCosignMissing,
                "too few herald_endorsement co-signatures from the molt_policy cosigners (P8 rule 4)",
            ));
        }
        if self.cooloff {
            report.push(reason(
                ReasonCode::MoltCooloff,
                "not_before is less than 24 h after the outgoing key's last envelope (P8 rule 2)",
            ));
        }
    }
}

/// Everything a receiver has witnessed about one identity (P8).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Witnessed {
    /// Its birth, once one was accepted (the first accepted one counts).
    pub birth: Option<WitnessedBirth>,
    /// `(key, t_last)`: for each key that signed an accepted envelope from
    /// the identity, the greatest `ts` among those (P8 rule 2).
    pub last_seen: Vec<([u8; 32], u64)>,
    /// Every molt witnessed whose origin verified with a key of the
    /// identity, accepted or not, in arrival order.
    pub molts: Vec<WitnessedMolt>,
    /// The `ts` of its earliest accepted deprecation.
    pub deprecated: Option<u64>,
    /// Whether two of its molts overlapped (rule 5): from then on every
    /// envelope from it is `disputed`.
    pub disputed: bool,
    /// The `ts` of each accepted duress envelope with a valid witness.
    pub duress: Vec<u64>,
}

/// Which of the identity's keys made an origin signature.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Signer {
    /// The sigil's own key (pinned, or its birth's).
    Own([u8; 32]),
    /// The new key of molt `i` (an index into [`Witnessed::molts`]).
    Molt(usize),
}

impl Witnessed {
    /// The greatest `ts` accepted from `key` (rule 2's `t_last`).
    fn t_last(&self, key: &[u8; 32]) -> Option<u64> {
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
    fn retired(&self, key: &[u8; 32], ts: u64) -> Option<(usize, &WitnessedMolt)> {
        self.molts
            .iter()
            .enumerate()
            .find(|(_, m)| m.accepted() && &m.from == key && ts >= m.not_before)
            .map(|(i, m)| (i + 1, m))
    }

    fn policy_bytes(&self) -> Option<&[u8]> {
        self.birth.as_ref()?.molt_policy.as_deref()
    }

    fn witness_bytes(&self) -> Option<&[u8]> {
        self.birth.as_ref()?.duress_witness.as_deref()
    }

    /// The record's P1 bytes (the `lifecycle` table value, see
    /// [`crate::store`]).
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

    /// Read a record written by [`Witnessed::encode`].
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
                Some(WitnessedBirth {
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
            molts.push(WitnessedMolt {
                id: key32(&m, "id")?,
                from: key32(&m, "from")?,
                new_key: key32(&m, "new_key")?,
                ts: uint(&m, "ts")?,
                not_before: uint(&m, "not_before")?,
                cooloff: flags & WitnessedMolt::COOLOFF != 0,
                cosign_missing: flags & WitnessedMolt::COSIGN_MISSING != 0,
                disputed: flags & WitnessedMolt::DISPUTED != 0,
                proven: flags & WitnessedMolt::PROVEN != 0,
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

fn parse_policy(bytes: &[u8]) -> Option<MoltPolicy<'_>> {
    MoltPolicy::parse(cbor::decode(bytes).ok()?).ok()
}

fn parse_witness(bytes: &[u8]) -> Option<DuressWitness> {
    DuressWitness::parse(cbor::decode(bytes).ok()?).ok()
}

// ------------------------------------------------------------ the store

fn corrupted(store: &Store, who: &Identity, problem: &str) -> StoreError {
    StoreError::Corrupted {
        path: store.path().to_path_buf(),
        detail: std::format!("lifecycle record of identity {}: {problem}", hex(who)),
    }
}

/// The record of `who` in `table`.
fn load_from(
    store: &Store,
    table: &impl ReadableTable<&'static [u8; 10], &'static [u8]>,
    who: &Identity,
    op: &'static str,
) -> Result<Option<Witnessed>, StoreError> {
    let Some(bytes) = table
        .get(who)
        .map_err(|e| StoreError::storage(store.path(), op, e))?
    else {
        return Ok(None);
    };
    Witnessed::decode(bytes.value())
        .map(Some)
        .map_err(|p| corrupted(store, who, p))
}

/// The record of `who`, read without taking the write lock.
pub(crate) fn load(store: &Store, who: &Identity) -> Result<Option<Witnessed>, StoreError> {
    const OP: &str = "lifecycle read";
    let err = |e: redb::Error| StoreError::storage(store.path(), OP, e);
    let txn = store.database().begin_read().map_err(|e| err(e.into()))?;
    let table = txn.open_table(LIFECYCLE).map_err(|e| err(e.into()))?;
    load_from(store, &table, who, OP)
}

/// The record of `who` inside the write transaction `txn`.
pub(crate) fn load_in(
    store: &Store,
    txn: &redb::WriteTransaction,
    who: &Identity,
) -> Result<Option<Witnessed>, StoreError> {
    const OP: &str = "lifecycle read";
    let table = txn
        .open_table(LIFECYCLE)
        .map_err(|e| StoreError::storage(store.path(), OP, e))?;
    load_from(store, &table, who, OP)
}

/// Write the record of `who`, and index its molts by id, in `txn`.
pub(crate) fn save_in(
    store: &Store,
    txn: &redb::WriteTransaction,
    who: &Identity,
    state: &Witnessed,
) -> Result<(), StoreError> {
    const OP: &str = "lifecycle write";
    let err = |e: redb::Error| StoreError::storage(store.path(), OP, e);
    txn.open_table(LIFECYCLE)
        .map_err(|e| err(e.into()))?
        .insert(who, state.encode().as_slice())
        .map_err(|e| err(e.into()))?;
    let mut index = txn.open_table(MOLTS).map_err(|e| err(e.into()))?;
    for m in &state.molts {
        index.insert(&m.id, who).map_err(|e| err(e.into()))?;
    }
    Ok(())
}

// ------------------------------------------------------ the origin check

/// The identity `bytes` claims to be from, read from its `from` field
/// before anything is verified (to fetch what was witnessed about it).
pub(crate) fn claimed_identity(bytes: &[u8], limits: &Limits) -> Option<Identity> {
    let value = cbor::decode_with(bytes, limits).ok()?;
    let from = value.as_map()?.get("from")?.as_text()?;
    identity(&Sigil::parse(from).ok()?)
}

/// The keyring, plus the witnessed birth key of one identity.
struct Known<'a> {
    keys: &'a Keyring,
    who: Identity,
    birth: Option<PublicKey>,
}

impl KeyResolver for Known<'_> {
    fn resolve(&self, sigil: &Sigil) -> Option<PublicKey> {
        self.keys.resolve(sigil).or_else(|| {
            self.birth
                .filter(|_| identity(sigil) == Some(self.who))
                .filter(|k| sigil.names_key(k.as_bytes()))
        })
    }
}

/// The pinned keys of a keyring only (an inclusion proof's log key must be
/// pinned: a key learned from a birth vouches for nothing else).
struct PinnedOnly<'a>(&'a Keyring);

impl KeyResolver for PinnedOnly<'_> {
    fn resolve(&self, sigil: &Sigil) -> Option<PublicKey> {
        self.0
            .lookup(sigil)
            .filter(|(_, p)| *p == Provenance::Pinned)
            .map(|(k, _)| k)
    }
}

/// One envelope checked against the keyring and its identity's record.
pub(crate) struct Origin<'b> {
    /// What [`check`] concluded, for the key that verified (if any).
    pub(crate) checked: Checked<'b>,
    /// Every reason [`check`] gave.
    pub(crate) reasons: Vec<ReportReason>,
    /// The identity's key that made the origin signature.
    pub(crate) signer: Option<Signer>,
    /// The report's `key_source`.
    pub(crate) key_source: Option<KeyOrigin>,
}

/// [`check`] `bytes` with `keys`: the result, its reasons, and whether the
/// origin verified.
fn run<'b>(
    bytes: &'b [u8],
    keys: &dyn KeyResolver,
    opts: &CheckOptions<'_>,
) -> (Checked<'b>, Vec<ReportReason>, bool) {
    let mut out = Vec::new();
    let checked = check(bytes, keys, opts, &mut out);
    let reasons: Vec<ReportReason> = out.iter().map(ReportReason::from).collect();
    let ok = origin_ok(&EnvelopeReport {
        reasons: reasons.clone(),
        ..EnvelopeReport::default()
    });
    (checked, reasons, ok)
}

/// Check `bytes` (P1–P7) with the sigil's own key — pinned, or the
/// witnessed birth key when `learn_birth_keys` — and, if that origin fails,
/// with each witnessed molt's new key through
/// [`KeyResolver::resolve_molted`] (P8), newest first.
pub(crate) fn check_origin<'b>(
    bytes: &'b [u8],
    keys: &Keyring,
    who: Option<Identity>,
    state: Option<&Witnessed>,
    opts: &CheckOptions<'_>,
) -> Origin<'b> {
    let birth = state
        .filter(|_| opts.learn_birth_keys)
        .and_then(|s| s.birth.as_ref())
        .and_then(|b| PublicKey::from_bytes(&b.key).ok());
    let own = match who {
        Some(who) => run(bytes, &Known { keys, who, birth }, opts),
        None => run(bytes, keys, opts),
    };
    let (checked, reasons, ok) = own;
    let from = checked.envelope.as_ref().map(EnvelopeRef::from_sigil);
    if ok {
        let pinned = from.and_then(|f| keys.lookup(&f));
        let (key, source) = match checked.key_source {
            Some(KeySource::Keyring) => match pinned {
                Some((k, p)) => (Some(*k.as_bytes()), Some(p.into())),
                None => (birth.map(|k| *k.as_bytes()), Some(KeyOrigin::Birth)),
            },
            Some(KeySource::Birth) => (
                checked
                    .envelope
                    .as_ref()
                    .and_then(|v| v.attestation("birth"))
                    .and_then(|a| BirthAttestation::parse(a).ok())
                    .map(|b| *b.key),
                Some(KeyOrigin::Birth),
            ),
            other => (None, other.and_then(KeyOrigin::of_source)),
        };
        return Origin {
            checked,
            reasons,
            signer: key.map(Signer::Own),
            key_source: source,
        };
    }
    if let (Some(who), Some(state)) = (who, state) {
        for (i, m) in state.molts.iter().enumerate().rev() {
            let Ok(key) = PublicKey::from_bytes(&m.new_key) else {
                continue;
            };
            let (c, r, ok) = run(bytes, &Molted { keys, who, key }, opts);
            if ok && c.key_source == Some(KeySource::Molt) {
                return Origin {
                    checked: c,
                    reasons: r,
                    signer: Some(Signer::Molt(i)),
                    key_source: Some(KeyOrigin::Molt),
                };
            }
        }
    }
    let key_source = keys.source_name(checked.key_source, from);
    Origin {
        checked,
        reasons,
        signer: None,
        key_source,
    }
}

// ----------------------------------------------------------- the rules

/// The P8 reasons of an envelope from a witnessed identity, by the key
/// that signed it and its `ts`: `rotated_key`, `molt_unproven`,
/// `deprecated_signer`, `disputed`, `signer_under_duress`; and its
/// `signing_key`.
pub(crate) fn judge(
    report: &mut EnvelopeReport,
    env: &EnvelopeRef<'_>,
    signer: Option<Signer>,
    state: &Witnessed,
) {
    let t = env.ts();
    match signer {
        Some(Signer::Own(_)) => report.signing_key = Some(SignedBy::Birth),
        Some(Signer::Molt(i)) => {
            report.signing_key = Some(SignedBy::Molt(i + 1));
            if let Some(m) = state.molts.get(i) {
                let why = if !m.accepted() {
                    Some(std::format!(
                        "signed by the key of molt {}, which was not accepted (P8)",
                        i + 1
                    ))
                } else if t < m.not_before {
                    Some(std::format!(
                        "signed by molt {}'s key before its not_before {}",
                        i + 1,
                        m.not_before
                    ))
                } else if !m.proven {
                    Some(std::format!(
                        "no inclusion proof of molt {} accepted by this receiver (P8 rule 3)",
                        i + 1
                    ))
                } else {
                    None
                };
                if let Some(why) = why {
                    report.push(reason(ReasonCode::MoltUnproven, why));
                }
            }
        }
        None => {}
    }
    if let Some(key) = signer.and_then(|s| state.key_of(s))
        && let Some((n, m)) = state.retired(&key, t)
        && env.id() != &m.id
    {
        report.push(reason(
            ReasonCode::RotatedKey,
            std::format!(
                "signed by the key molt {n} retired at {} (P8)",
                m.not_before
            ),
        ));
    }
    if let Some(d) = state.deprecated
        && t > d
    {
        report.push(reason(
            ReasonCode::DeprecatedSigner,
            std::format!("the signer was deprecated at {d} (P8)"),
        ));
    }
    if state.disputed {
        report.push(reason(
            ReasonCode::Disputed,
            "the signer is disputed: two of its molts overlap (P8 rule 5)",
        ));
    }
    // Duress: the latest lifecycle event at or before t is a duress.
    let last_duress = state.duress.iter().copied().filter(|&d| d <= t).max();
    let last_other = state
        .molts
        .iter()
        .filter(|m| m.accepted())
        .map(|m| m.ts)
        .chain(state.deprecated)
        .filter(|&x| x <= t)
        .max();
    // A molt or deprecation is itself a lifecycle event later than the
    // duress (as in the audit, where it counts for its own ts).
    let lifecycle_event = matches!(env.kind(), Kind::Duress | Kind::Molt | Kind::Deprecation);
    if !lifecycle_event
        && let Some(d) = last_duress
        && last_other.is_none_or(|o| o < d)
    {
        report.push(reason(
            ReasonCode::SignerUnderDuress,
            std::format!("a duress envelope at {d} is the signer's latest lifecycle event (P8)"),
        ));
    }
}

/// A molt's verdict to record, and the witnessed molts its window overlaps
/// (rule 5).
pub(crate) struct NewMolt {
    molt: WitnessedMolt,
    overlaps: Vec<usize>,
    /// The index of an earlier record of the same molt (same id) that
    /// rules 2 or 4 refused, which this one replaces.
    replaces: Option<usize>,
}

/// Rules 2, 4 and 5 for a molt envelope whose origin was verified with the
/// identity's key `outgoing` and which is otherwise accepted; the reasons
/// go to `report`.
///
/// A molt witnessed before (same id) keeps its verdict if it was accepted
/// or disputed. If rules 2 or 4 refused it, it is judged again: co-signing
/// does not change an envelope's id, so the same molt may come back with
/// the endorsements it lacked.
pub(crate) fn molt_rules(
    report: &mut EnvelopeReport,
    env: &EnvelopeRef<'_>,
    outgoing: [u8; 32],
    state: &Witnessed,
    keys: &Keyring,
) -> Option<NewMolt> {
    let molt = Molt::parse(env.payload()).ok()?;
    let seen = state.molts.iter().position(|m| &m.id == env.id());
    if let Some(m) = seen.and_then(|i| state.molts.get(i))
        && (m.accepted() || m.disputed)
    {
        m.verdict(report);
        return None;
    }
    let ts = env.ts();
    let endorsers = valid_cosigners(env, report, Scope::HeraldEndorsement);
    let policy = state.policy_bytes().and_then(parse_policy);
    let meets_policy = policy.as_ref().map(|p| policy_met(p, &endorsers));
    let overlaps: Vec<usize> = state
        .molts
        .iter()
        .enumerate()
        .filter(|(_, o)| {
            &o.id != env.id() && o.from == outgoing && o.ts <= molt.not_before && ts <= o.not_before
        })
        .map(|(i, _)| i)
        .collect();
    let waived = meets_policy.unwrap_or_else(|| {
        endorsers.iter().any(|e| {
            keys.lookup(e)
                .is_some_and(|(_, prov)| prov == Provenance::Pinned)
        })
    });
    let new = WitnessedMolt {
        id: *env.id(),
        from: outgoing,
        new_key: *molt.new_key,
        ts,
        not_before: molt.not_before,
        cooloff: !waived
            && state
                .t_last(&outgoing)
                .is_some_and(|t_last| molt.not_before < t_last.saturating_add(COOLOFF)),
        cosign_missing: meets_policy == Some(false),
        disputed: !overlaps.is_empty(),
        proven: false,
        leaf: Leaf::from_envelope(env).encode(),
    };
    new.verdict(report);
    Some(NewMolt {
        molt: new,
        overlaps,
        replaces: seen,
    })
}

impl Witnessed {
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

    /// The effects of an accepted envelope from the identity: `t_last` of
    /// its key; a birth, deprecation or duress.
    pub(crate) fn witness(
        &mut self,
        env: &EnvelopeRef<'_>,
        report: &EnvelopeReport,
        signer: Signer,
    ) {
        let t = env.ts();
        if let Some(key) = self.key_of(signer) {
            match self.last_seen.iter_mut().find(|(k, _)| *k == key) {
                Some((_, last)) => *last = (*last).max(t),
                None => self.last_seen.push((key, t)),
            }
        }
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
                self.birth = Some(WitnessedBirth {
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
                let registered = self.witness_bytes().and_then(parse_witness);
                let witnessed = valid_cosigners(env, report, Scope::DuressWitness)
                    .iter()
                    .any(|w| registered.is_none_or(|r| r.sigil.same_key_as(w)));
                if witnessed && !self.duress.contains(&t) {
                    self.duress.push(t);
                }
            }
            _ => {}
        }
    }
}

/// Lineage rules of a birth whose origin verified, against the births and
/// deprecations witnessed (spec §2.3, P8): `lineage_deprecated_parent`
/// for a parent deprecated at or before the birth's `ts`,
/// `lineage_cycle` when a parent's witnessed lineage leads back to the
/// child, and the parents that co-signed `lineage_consent` in the report's
/// `lineage_consents` (a consent graph, never proof of training).
pub(crate) fn lineage(
    store: &Store,
    txn: &redb::WriteTransaction,
    report: &mut EnvelopeReport,
    env: &EnvelopeRef<'_>,
) -> Result<(), StoreError> {
    let Some(att) = env
        .attestation("birth")
        .and_then(|a| BirthAttestation::parse(a).ok())
    else {
        return Ok(());
    };
    let Some(child) = identity(&env.from_sigil()) else {
        return Ok(());
    };
    let consenting = valid_cosigners(env, report, Scope::LineageConsent);
    let mut stack: Vec<Identity> = Vec::new();
    for p in att.parents() {
        let Some(pid) = identity(&p) else { continue };
        if let Some(d) = load_in(store, txn, &pid)?.and_then(|w| w.deprecated)
            && d <= env.ts()
        {
            report.push(reason(
                ReasonCode::LineageDeprecatedParent,
                std::format!(
                    "lineage parent {p} was deprecated at {d}, before this birth (spec §2.3)"
                ),
            ));
        }
        if consenting.iter().any(|c| c.same_key_as(&p)) {
            report.lineage_consents.push(std::format!("{p}"));
        }
        // A birth naming itself is lineage_self (checked alone), not a cycle.
        if pid != child {
            stack.push(pid);
        }
    }
    // A walk over witnessed births only, each visited once.
    let mut seen: Vec<Identity> = Vec::new();
    while let Some(next) = stack.pop() {
        if next == child {
            report.push(reason(
                ReasonCode::LineageCycle,
                "the lineage closes a cycle through births this receiver witnessed (spec §2.3)",
            ));
            break;
        }
        if seen.contains(&next) {
            continue;
        }
        seen.push(next);
        if let Some(b) = load_in(store, txn, &next)?.and_then(|w| w.birth) {
            stack.extend(b.lineage);
        }
    }
    Ok(())
}

// --------------------------------------------------- inclusion proofs

/// An inclusion proof accepted by [`Receiver::accept_inclusion_proof`](crate::Receiver::accept_inclusion_proof).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ProvenMolt {
    /// The molt's number among its identity's witnessed molts (`molt N`).
    pub number: usize,
    /// Whether an earlier proof had already proven it.
    pub already: bool,
}

/// An inclusion proof was not accepted (P8 rule 3, P9).
#[derive(Debug)]
#[non_exhaustive]
pub enum ProofError {
    /// The proof does not verify against the receiver's pinned keys: its
    /// path, its signed tree head, or a log key that is not pinned.
    Proof(CheckError),
    /// This receiver has witnessed no molt with the leaf's id (yet): a
    /// proof is accepted after its molt, so offer it again once the molt
    /// has been received.
    UnknownMolt {
        /// The leaf's id.
        id: [u8; 32],
    },
    /// The molt was witnessed but rules 2, 4 or 5 refused it: no proof
    /// makes it count.
    MoltNotAccepted {
        /// The molt's id.
        id: [u8; 32],
    },
    /// The leaf has the molt's id but is not its P9 leaf.
    LeafMismatch {
        /// The molt's id.
        id: [u8; 32],
    },
    /// The store could not be read or written.
    Store(StoreError),
}

impl fmt::Display for ProofError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Proof(e) => write!(f, "the inclusion proof does not verify: {e}"),
            Self::UnknownMolt { id } => write!(
                f,
                "no molt with id {} has been received: offer the proof after its molt",
                hex(id)
            ),
            Self::MoltNotAccepted { id } => {
                write!(f, "molt {} was not accepted (P8 rules 2, 4, 5)", hex(id))
            }
            Self::LeafMismatch { id } => write!(
                f,
                "the proof's leaf has the id of molt {} but is not its leaf (P9)",
                hex(id)
            ),
            Self::Store(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ProofError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Proof(e) => Some(e),
            Self::Store(e) => Some(e),
            _ => None,
        }
    }
}

impl From<StoreError> for ProofError {
    fn from(e: StoreError) -> Self {
        Self::Store(e)
    }
}

/// P8 rule 3: accept `proof` for a witnessed, accepted molt if it verifies
/// against a pinned log key, and record the molt as proven, durably.
pub(crate) fn accept_proof(
    store: &Store,
    keys: &Keyring,
    proof: &InclusionProof,
) -> Result<ProvenMolt, ProofError> {
    const OP: &str = "inclusion proof";
    let err = |e: redb::Error| ProofError::Store(StoreError::storage(store.path(), OP, e));
    proof.verify(&PinnedOnly(keys)).map_err(ProofError::Proof)?;
    let id = *proof.leaf().id();
    let txn = store.begin_write(OP)?;
    let who = txn
        .open_table(MOLTS)
        .map_err(|e| err(e.into()))?
        .get(&id)
        .map_err(|e| err(e.into()))?
        .map(|v| *v.value());
    let Some(who) = who else {
        return Err(ProofError::UnknownMolt { id });
    };
    let mut state = load_in(store, &txn, &who)?
        .ok_or_else(|| corrupted(store, &who, "indexed molt missing"))?;
    let (i, molt) = state
        .molts
        .iter_mut()
        .enumerate()
        .find(|(_, m)| m.id == id)
        .ok_or_else(|| corrupted(store, &who, "indexed molt missing"))?;
    if molt.leaf != proof.leaf_bytes() {
        return Err(ProofError::LeafMismatch { id });
    }
    if !molt.accepted() {
        return Err(ProofError::MoltNotAccepted { id });
    }
    let already = molt.proven;
    if !already {
        molt.proven = true;
        save_in(store, &txn, &who, &state)?;
        txn.commit().map_err(|e| err(e.into()))?;
    }
    Ok(ProvenMolt {
        number: i + 1,
        already,
    })
}
