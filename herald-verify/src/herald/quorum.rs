//! The quorum (PROFILE P14): a claim `(subject, claim, value)` is
//! certified when at least `threshold` distinct listed Heralds'
//! certifications of it count. A Herald is its key, so one Herald counts
//! once however many of its certifications say the same thing and
//! whichever form of its sigil signed them; a subject is its key too, so a
//! claim about a default sigil and the same claim about the long sigil of
//! the same key are one claim.

use alloc::{
    borrow::ToOwned,
    collections::{BTreeMap, BTreeSet},
    string::String,
    vec::Vec,
};
use core::fmt;

use herald_core::cbor::{self, ValueRef};
use herald_core::payload::Claim;
use herald_core::{PublicKey, Sigil, SigilForm};
use herald_tlog::Policy;

use super::count::{self, Counted, Judgement};
use super::item::CertificationItem;
use super::list::HeraldList;
use crate::keyring::{Keyring, Provenance};

/// A verifier's Heralds: its list, and the log policy each listed Herald's
/// log is checked under.
#[derive(Clone, Debug)]
pub struct Heralds {
    list: HeraldList,
    policy: Policy,
}

/// A Herald list and a log policy that do not fit together.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HeraldsError {
    /// A listed Herald's log is not a `log` of the policy, so none of its
    /// certifications could ever count.
    LogNotInPolicy {
        /// The Herald list's line.
        line: usize,
        /// The log origin it names.
        origin: String,
    },
}

impl fmt::Display for HeraldsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::LogNotInPolicy { line, origin } => write!(
                f,
                "Herald list line {line}: the log {origin:?} is not a log of the log policy \
                 (PROFILE P14: each Herald's log is checked under it)"
            ),
        }
    }
}

impl std::error::Error for HeraldsError {}

impl Heralds {
    /// The Heralds of `list`, their logs checked under `policy`, which
    /// names each of their logs.
    pub fn new(list: HeraldList, policy: Policy) -> Result<Self, HeraldsError> {
        for h in list.heralds() {
            if !policy.logs().iter().any(|l| l.key.name() == h.origin) {
                return Err(HeraldsError::LogNotInPolicy {
                    line: h.line,
                    origin: h.origin.clone(),
                });
            }
        }
        Ok(Self { list, policy })
    }

    /// The list.
    pub fn list(&self) -> &HeraldList {
        &self.list
    }

    /// Judge `items` at `now` (Unix seconds): which certifications count,
    /// and which claims a quorum certifies.
    pub fn judge(&self, items: &[CertificationItem], now: u64) -> Certified {
        let (judgements, counted) = count::judge(items, &self.list, &self.policy, now);
        let mut support: BTreeMap<(Vec<u8>, String, Vec<u8>), Support> = BTreeMap::new();
        for c in &counted {
            let subject = c.subject.to_form(SigilForm::Default).unwrap_or(c.subject);
            let s = support
                .entry((
                    subject.hash_prefix().to_vec(),
                    c.claim.clone(),
                    c.value.clone(),
                ))
                .or_insert_with(|| Support {
                    subject,
                    heralds: BTreeSet::new(),
                    ids: Vec::new(),
                });
            s.heralds.insert(*c.herald.as_bytes());
            s.ids.push(c.id);
        }
        let threshold = self.list.threshold();
        let claims = support
            .into_iter()
            .map(|((_, claim, value), s)| CertifiedClaim {
                subject: s.subject,
                claim,
                value,
                heralds: s
                    .heralds
                    .iter()
                    .filter_map(|k| PublicKey::from_bytes(k).ok())
                    .map(|k| k.sigil(SigilForm::Default))
                    .collect(),
                certifications: s.ids,
                certified: s.heralds.len() >= threshold,
            })
            .collect();
        Certified {
            threshold,
            claims,
            judgements,
            counted,
        }
    }
}

struct Support {
    subject: Sigil,
    heralds: BTreeSet<[u8; 32]>,
    ids: Vec<[u8; 32]>,
}

/// One claim and the Heralds whose certifications of it count.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CertifiedClaim {
    /// The subject, in its default form.
    pub subject: Sigil,
    /// The claim's name.
    pub claim: String,
    /// The value's P1 bytes.
    pub value: Vec<u8>,
    /// The distinct Heralds whose certification of it counts (default
    /// sigils, in key order).
    pub heralds: Vec<Sigil>,
    /// The ids of those certifications.
    pub certifications: Vec<[u8; 32]>,
    /// Whether they reach the list's threshold.
    pub certified: bool,
}

impl CertifiedClaim {
    /// The value, decoded.
    pub fn value(&self) -> Option<ValueRef<'_>> {
        cbor::decode(&self.value).ok()
    }

    /// The claim typed by the P14 table (`None` for one of a shape P14
    /// does not give it, which never counted).
    pub fn typed(&self) -> Option<Claim<'_>> {
        Claim::parse(&self.claim, self.value()?, None).ok()
    }

    /// Whether the claim is about `sigil`'s key (any form).
    pub fn is_about(&self, sigil: &Sigil) -> bool {
        self.subject.same_key_as(sigil)
    }
}

/// What a verifier's Heralds certify, from the certifications it was given.
#[derive(Clone, Debug, Default)]
pub struct Certified {
    threshold: usize,
    claims: Vec<CertifiedClaim>,
    judgements: Vec<Judgement>,
    counted: Vec<Counted>,
}

impl Certified {
    /// The claims a quorum certifies.
    pub fn claims(&self) -> impl Iterator<Item = &CertifiedClaim> + '_ {
        self.claims.iter().filter(|c| c.certified)
    }

    /// Every claim at least one counted certification supports, with
    /// whether a quorum certifies it.
    pub fn supported(&self) -> &[CertifiedClaim] {
        &self.claims
    }

    /// The claims a quorum certifies about `sigil` (any form of its key).
    pub fn about<'s>(&'s self, sigil: &'s Sigil) -> impl Iterator<Item = &'s CertifiedClaim> + 's {
        self.claims().filter(move |c| c.is_about(sigil))
    }

    /// The claims a quorum certifies about `sigil`, as `herald verify
    /// --json` and `herald resolve --json` list them (CLI.md *Resolution
    /// and Heralds*: `{"claim", "value", "heralds"}`, the value in the P3
    /// JSON display form).
    pub fn reported(&self, sigil: &Sigil) -> Vec<crate::report::ReportedClaim> {
        self.about(sigil)
            .filter_map(crate::report::ReportedClaim::of)
            .collect()
    }

    /// Each certification given, judged alone, in the order given.
    pub fn judgements(&self) -> &[Judgement] {
        &self.judgements
    }

    /// The list's threshold.
    pub fn threshold(&self) -> usize {
        self.threshold
    }

    /// The keys certified `key` claims give their subjects (each hashes to
    /// its subject: PROFILE P15).
    pub fn keys(&self) -> impl Iterator<Item = PublicKey> + '_ {
        self.claims().filter_map(|c| match c.typed() {
            Some(Claim::Key(k)) => PublicKey::from_bytes(k)
                .ok()
                .filter(|k| c.subject.names_key(k.as_bytes())),
            _ => None,
        })
    }

    /// Add the certified keys to `keyring` (`key_source: "herald"`, P14).
    pub fn extend_keyring(&self, keyring: &mut Keyring) {
        for key in self.keys() {
            keyring.insert(key, Provenance::Herald);
        }
    }

    /// The certified `deprecated` claims: each subject and the earliest
    /// `ts` a quorum certifies (a deprecation the verifier witnessed, P8).
    pub fn deprecations(&self) -> Vec<(Sigil, u64)> {
        let mut out: BTreeMap<Vec<u8>, (Sigil, u64)> = BTreeMap::new();
        for c in self.claims() {
            if let Some(Claim::Deprecated { ts }) = c.typed() {
                let e = out
                    .entry(c.subject.hash_prefix().to_owned())
                    .or_insert((c.subject, ts));
                e.1 = e.1.min(ts);
            }
        }
        out.into_values().collect()
    }

    /// Whether `lineage_proof` (an envelope's, from `from`) names a
    /// `lineage` certification of `from` whose claim a quorum certifies
    /// (PROFILE P14: else the envelope gets `lineage_unproven`).
    pub fn lineage_proven(&self, from: &Sigil, lineage_proof: &[u8; 32]) -> bool {
        let Some(c) = self.counted.iter().find(|c| &c.id == lineage_proof) else {
            return false;
        };
        c.claim == "lineage"
            && c.subject.same_key_as(from)
            && self.claims().any(|k| {
                k.claim == "lineage" && k.subject.same_key_as(&c.subject) && k.value == c.value
            })
    }
}
