//! When a certification counts (PROFILE P14): its origin verifies under a
//! key the verifier lists as a Herald; `ts ≤ now ≤ not_after`; no
//! revocation of it by the same Herald is known; and it comes with an
//! inclusion proof in a checkpoint of that Herald's log that meets the
//! verifier's log policy (C2SP tlog-policy). Each certification is judged
//! alone here, with a verdict that names the rule it fails; the quorum is
//! [`super::quorum`]'s.
//!
//! Beyond the four rules, three readings of P14 and P15 that decide the
//! hostile cases: a certification is `to` its subject (P14's definition);
//! a `key` claim's value must hash to its subject (P15: every channel's
//! answer is checked against the sigil, so a Herald can fail to answer
//! but never substitute a key); and a Herald whose log shows two
//! checkpoints of one size with different roots (a fork) has none of its
//! certifications counted: no inclusion proof in a forked log shows what
//! everyone else sees. A revocation is known when its origin verifies
//! under the same Herald's key: withholding its proof can never keep a
//! revoked certification standing.

use alloc::{
    borrow::ToOwned,
    collections::{BTreeMap, BTreeSet},
    format,
    string::String,
    vec::Vec,
};
use core::fmt;

use herald_core::payload::{Certification, Claim};
use herald_core::{CheckOptions, EnvelopeRef, KeyResolver, Kind, PublicKey, Sigil, Status};
use herald_tlog::{Checkpoint, Policy, TlogProof};

use super::item::CertificationItem;
use super::list::{Herald, HeraldList};

/// Why a certification does not count (PROFILE P14).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum NotCounted {
    /// Not a certification envelope of the P7 shape.
    Malformed(String),
    /// Its `from` is no Herald of the verifier's list.
    UnlistedHerald,
    /// Its envelope does not verify under the Herald's key (the P11 codes).
    Invalid(String),
    /// It is not `to` its subject.
    NotToSubject,
    /// Its `ts` is after now.
    NotYet {
        /// Its `ts`.
        ts: u64,
    },
    /// Now is after its `not_after`.
    Expired {
        /// Its `not_after`.
        not_after: u64,
    },
    /// A claim P14 names, with a value not of its shape.
    ClaimShape(String),
    /// A `key` claim whose key does not hash to its subject (P15).
    KeyNotTheSubjects,
    /// The same Herald revoked it (the revocation's id).
    Revoked([u8; 32]),
    /// It came without an inclusion proof.
    NoProof,
    /// Its proof is not a C2SP tlog-proof.
    Proof(String),
    /// The proof's checkpoint does not meet the log policy (unsigned,
    /// unwitnessed, or a log the policy does not name).
    Checkpoint(String),
    /// The proof's checkpoint is of another log than the Herald's.
    OtherLog {
        /// The checkpoint's origin.
        origin: String,
    },
    /// The proof does not lead from the certification to the checkpoint.
    NotIncluded(String),
    /// The Herald's log forked: two checkpoints of this size, two roots.
    ForkedLog {
        /// The size both checkpoints claim.
        size: u64,
    },
}

impl fmt::Display for NotCounted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Malformed(why) => write!(f, "not a certification: {why}"),
            Self::UnlistedHerald => f.write_str("its signer is not a listed Herald"),
            Self::Invalid(codes) => write!(f, "it does not verify under its Herald's key: {codes}"),
            Self::NotToSubject => f.write_str("it is not addressed to its subject"),
            Self::NotYet { ts } => write!(f, "its ts {ts} is after now"),
            Self::Expired { not_after } => write!(f, "it expired at not_after {not_after}"),
            Self::ClaimShape(why) => write!(f, "its claim is not of its shape: {why}"),
            Self::KeyNotTheSubjects => f.write_str("its key does not hash to its subject (P15)"),
            Self::Revoked(by) => write!(f, "its Herald revoked it ({})", crate::report::hex(by)),
            Self::NoProof => f.write_str("it came without an inclusion proof"),
            Self::Proof(why) => write!(f, "its proof: {why}"),
            Self::Checkpoint(why) => write!(f, "its proof's checkpoint: {why}"),
            Self::OtherLog { origin } => {
                write!(f, "its proof is in the log {origin:?}, not its Herald's")
            }
            Self::NotIncluded(why) => write!(f, "its proof does not include it: {why}"),
            Self::ForkedLog { size } => write!(
                f,
                "its Herald's log forked: two checkpoints of size {size} with different roots"
            ),
        }
    }
}

/// A certification judged alone.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Judgement {
    /// Its id (recomputed from its bytes), when it decoded.
    pub id: Option<[u8; 32]>,
    /// The listed Herald that signed it.
    pub herald: Option<Sigil>,
    /// Its subject.
    pub subject: Option<Sigil>,
    /// Its claim's name.
    pub claim: Option<String>,
    /// `Ok` when it counts (for a revocation: when it is applied).
    pub verdict: Result<(), NotCounted>,
}

/// A certification that counts, as the quorum reads it.
#[derive(Clone, Debug)]
pub(crate) struct Counted {
    pub(crate) id: [u8; 32],
    pub(crate) herald: PublicKey,
    pub(crate) subject: Sigil,
    pub(crate) claim: String,
    /// The value's P1 bytes.
    pub(crate) value: Vec<u8>,
}

/// A key resolver of one key: the Herald's, for every form of its sigil.
struct One(PublicKey);

impl KeyResolver for One {
    fn resolve(&self, sigil: &Sigil) -> Option<PublicKey> {
        sigil.names_key(self.0.as_bytes()).then_some(self.0)
    }
}

/// A decoded certification whose origin verified under a listed Herald.
struct Signed<'i> {
    item: &'i CertificationItem,
    herald: &'i Herald,
    id: [u8; 32],
    ts: u64,
    to: Option<Sigil>,
    payload: Certification<'i>,
}

/// Step 1: decode `item` and verify its origin under its Herald's key.
fn signed<'i>(
    item: &'i CertificationItem,
    list: &'i HeraldList,
    now: u64,
    judgement: &mut Judgement,
) -> Result<Signed<'i>, NotCounted> {
    let bytes = item.certification.as_slice();
    let v = EnvelopeRef::decode(bytes).map_err(|e| NotCounted::Malformed(format!("{}", e.0)))?;
    judgement.id = Some(*v.id());
    if v.kind() != Kind::Certification {
        return Err(NotCounted::Malformed(format!("kind {}", v.kind())));
    }
    let payload =
        Certification::parse(v.payload()).map_err(|d| NotCounted::Malformed(format!("{d}")))?;
    judgement.subject = Some(payload.subject);
    judgement.claim = Some(payload.claim.to_owned());
    let herald = list
        .herald_named(&v.from_sigil())
        .ok_or(NotCounted::UnlistedHerald)?;
    judgement.herald = Some(herald.key.sigil(herald_core::SigilForm::Default));
    let opts = CheckOptions {
        now: Some(now),
        ..CheckOptions::DEFAULT
    };
    let mut reasons: Vec<herald_core::Reason> = Vec::new();
    let checked = herald_core::check(bytes, &One(herald.key), &opts, &mut reasons);
    if checked.status == Status::Invalid {
        let codes: Vec<&str> = reasons
            .iter()
            .filter(|r| !r.code.is_warning())
            .map(|r| r.code.name())
            .collect();
        return Err(NotCounted::Invalid(codes.join(", ")));
    }
    let id = checked.computed_id.unwrap_or(*v.id());
    judgement.id = Some(id);
    Ok(Signed {
        item,
        herald,
        id,
        ts: v.ts(),
        to: v.to().map(|(_, s)| s),
        payload,
    })
}

/// What the proofs' checkpoints showed of each Herald's log: the roots
/// seen at each size, from checkpoints that met the policy.
#[derive(Default)]
struct Logs {
    /// Checkpoints already verified, by their text.
    verified: BTreeMap<String, Result<Checkpoint, String>>,
    /// Roots per (origin, size).
    roots: BTreeMap<(String, u64), BTreeSet<[u8; 32]>>,
}

impl Logs {
    fn checkpoint(&mut self, policy: &Policy, text: &str) -> Result<Checkpoint, String> {
        if let Some(known) = self.verified.get(text) {
            return known.clone();
        }
        let checked = policy
            .verify_checkpoint(text.as_bytes())
            .map(|(signed, _)| signed.checkpoint().clone())
            .map_err(|e| format!("{e}"));
        if let Ok(c) = &checked {
            self.roots
                .entry((c.origin().to_owned(), c.size()))
                .or_default()
                .insert(*c.root());
        }
        self.verified.insert(text.to_owned(), checked.clone());
        checked
    }

    fn forked_at(&self, origin: &str) -> Option<u64> {
        self.roots
            .iter()
            .find(|((o, _), roots)| o == origin && roots.len() > 1)
            .map(|((_, size), _)| *size)
    }
}

/// Judge every item at `now`: each one's [`Judgement`], and those that
/// count, in item order.
pub(crate) fn judge(
    items: &[CertificationItem],
    list: &HeraldList,
    policy: &Policy,
    now: u64,
) -> (Vec<Judgement>, Vec<Counted>) {
    let mut judgements = Vec::with_capacity(items.len());
    let mut signed_ok: Vec<(usize, Signed<'_>)> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let mut j = Judgement {
            id: None,
            herald: None,
            subject: None,
            claim: None,
            verdict: Ok(()),
        };
        match signed(item, list, now, &mut j) {
            Ok(s) => signed_ok.push((i, s)),
            Err(e) => j.verdict = Err(e),
        }
        judgements.push(j);
    }
    // Revocations known: by Herald key, the ids it revoked.
    let mut revoked: BTreeMap<([u8; 32], [u8; 32]), [u8; 32]> = BTreeMap::new();
    for (_, s) in &signed_ok {
        if let Ok(Claim::Revocation(target)) = s.payload.claim() {
            revoked.insert((*s.herald.key.as_bytes(), *target), s.id);
        }
    }
    // Checkpoints first, so that a fork shows whatever the item order.
    let mut logs = Logs::default();
    let proofs: Vec<Result<(TlogProof, Checkpoint), NotCounted>> = signed_ok
        .iter()
        .map(|(_, s)| proof_of(s, policy, &mut logs))
        .collect();
    let mut counted = Vec::new();
    for ((i, s), proof) in signed_ok.iter().zip(proofs) {
        let verdict = rules(s, now, &revoked, proof, &logs);
        if let Ok(Some(c)) = &verdict {
            counted.push(c.clone());
        }
        if let Some(j) = judgements.get_mut(*i) {
            j.verdict = verdict.map(|_| ());
        }
    }
    (judgements, counted)
}

/// The proof of `s`, its checkpoint verified under the policy.
fn proof_of(
    s: &Signed<'_>,
    policy: &Policy,
    logs: &mut Logs,
) -> Result<(TlogProof, Checkpoint), NotCounted> {
    if s.item.proof.is_empty() {
        return Err(NotCounted::NoProof);
    }
    let proof = TlogProof::parse(&s.item.proof).map_err(|e| NotCounted::Proof(format!("{e}")))?;
    let checkpoint = logs
        .checkpoint(policy, proof.checkpoint())
        .map_err(NotCounted::Checkpoint)?;
    Ok((proof, checkpoint))
}

/// The P14 rules on one signed certification; `Ok(None)` for a
/// revocation (applied, never itself a claim that counts).
fn rules(
    s: &Signed<'_>,
    now: u64,
    revoked: &BTreeMap<([u8; 32], [u8; 32]), [u8; 32]>,
    proof: Result<(TlogProof, Checkpoint), NotCounted>,
    logs: &Logs,
) -> Result<Option<Counted>, NotCounted> {
    let p = &s.payload;
    let claim = p
        .claim()
        .map_err(|d| NotCounted::ClaimShape(format!("{d}")))?;
    if matches!(claim, Claim::Revocation(_)) {
        // Known, so applied, once its origin verified (module docs).
        return Ok(None);
    }
    if !s.to.is_some_and(|to| to.same_key_as(&p.subject)) {
        return Err(NotCounted::NotToSubject);
    }
    if s.ts > now {
        return Err(NotCounted::NotYet { ts: s.ts });
    }
    if let Some(not_after) = p.not_after
        && now > not_after
    {
        return Err(NotCounted::Expired { not_after });
    }
    if let Claim::Key(k) = claim
        && !(p.subject.names_key(k) && PublicKey::from_bytes(k).is_ok())
    {
        return Err(NotCounted::KeyNotTheSubjects);
    }
    if let Some(by) = revoked.get(&(*s.herald.key.as_bytes(), s.id)) {
        return Err(NotCounted::Revoked(*by));
    }
    let (proof, checkpoint) = proof?;
    if checkpoint.origin() != s.herald.origin {
        return Err(NotCounted::OtherLog {
            origin: checkpoint.origin().to_owned(),
        });
    }
    if let Some(size) = logs.forked_at(&s.herald.origin) {
        return Err(NotCounted::ForkedLog { size });
    }
    proof
        .verify_inclusion(&s.item.certification, &checkpoint)
        .map_err(|e| NotCounted::NotIncluded(format!("{e}")))?;
    Ok(Some(Counted {
        id: s.id,
        herald: s.herald.key,
        subject: p.subject,
        claim: p.claim.to_owned(),
        value: herald_core::cbor::Value::from(&p.value).to_vec(),
    }))
}
