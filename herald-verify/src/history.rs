//! A sigil's key history from a conduit's answer to `GET /v1/keys/{sigil}`
//! (CONDUIT.md *Endpoints*, PROFILE.md P15 *Conduits*): a CBOR sequence of
//! the sigil's birth, its molts (each may be followed by its P9 inclusion
//! proof object) and its deprecation, checked here without any network
//! and without trusting the conduit.
//!
//! - The birth's key must hash to the sigil asked for (P2, P7); every
//!   envelope must be from that sigil; only `birth`, `molt` and
//!   `deprecation` may appear.
//! - The envelopes and proofs are then judged as one set by the trace
//!   audit ([`crate::audit`]) with the caller's keyring: signatures (P5),
//!   the P8 lifecycle rules and the P9 proofs are herald-verify's own
//!   code, not a second copy. A molt counts only when it is accepted by
//!   rules 2, 4 and 5 and proven (rule 3) in a log whose key the caller
//!   pinned.
//!
//! So a lying conduit can withhold (leave out a molt or the deprecation)
//! but never substitute a key: anything it adds that does not hold is an
//! error, never a key.

use alloc::{string::String, vec, vec::Vec};
use core::fmt;

use herald_core::attestation::BirthAttestation;
use herald_core::cbor::{Limits, MAX_NESTING};
use herald_core::payload::Molt;
use herald_core::{EnvelopeRef, Kind, PublicKey, ReasonCode, Sigil};

use crate::auditlog::InclusionProof;
use crate::input::Input;
use crate::keyring::{Keyring, Provenance};
use crate::report::hex;
use crate::sequence::{Piece, SplitError, pieces};
use crate::trace::{AuditOptions, audit};

/// Most bytes of one answer (CONDUIT.md `GET /v1/keys/{sigil}`): a conduit
/// answers at most this much, a verifier reads no more.
pub const KEYS_MAX_BYTES: usize = 4 << 20;

/// Most envelopes in one answer (the birth, molts, the deprecation); each
/// molt may add one proof item.
pub const KEYS_MAX_ENVELOPES: usize = 64;

/// Where a key of a history came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HistoryOrigin {
    /// The sigil's birth (its key hashes to the sigil, P7).
    Birth,
    /// The caller's keyring pinned the sigil's own key (no birth needed).
    Pinned,
    /// The new key of the history's `n`-th molt (from 1), accepted and
    /// proven (P8).
    Molt(usize),
}

/// One key of a sigil, from when it signs.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct HistoryKey {
    /// The key.
    pub key: PublicKey,
    /// From when it signs for the sigil: the birth's `ts` (0 for a pinned
    /// key), a molt's `not_before`.
    pub since: u64,
    /// Where it came from.
    pub origin: HistoryOrigin,
    /// The molt envelope's id, for a molted-in key.
    pub molt: Option<[u8; 32]>,
}

/// What an answer proves about a sigil: its keys in order and its
/// deprecation. The last key is the current one (from its `since` on).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct KeyHistory {
    /// The sigil asked for.
    pub sigil: Sigil,
    /// Its keys, the sigil's own first, then each molt's (never empty).
    pub keys: Vec<HistoryKey>,
    /// The `ts` of its earliest deprecation, if the answer held one.
    pub deprecated: Option<u64>,
}

impl KeyHistory {
    /// The key that signs for the sigil now (the last one).
    pub fn current(&self) -> Option<&HistoryKey> {
        self.keys.last()
    }

    /// The key that signs for the sigil at `ts`: the newest whose `since`
    /// is at or before it (the sigil's own key before any molt).
    pub fn key_at(&self, ts: u64) -> Option<&HistoryKey> {
        self.keys
            .iter()
            .rev()
            .find(|k| k.since <= ts)
            .or(self.keys.first())
    }
}

/// The bounds of one answer ([`KEYS_MAX_BYTES`], [`KEYS_MAX_ENVELOPES`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct KeysLimits {
    /// Most bytes.
    pub max_bytes: usize,
    /// Most envelopes (proofs come on top, one per molt at most).
    pub max_envelopes: usize,
}

impl KeysLimits {
    /// At most `max_bytes` bytes and `max_envelopes` envelopes.
    pub fn new(max_bytes: usize, max_envelopes: usize) -> Self {
        Self {
            max_bytes,
            max_envelopes,
        }
    }
}

impl Default for KeysLimits {
    fn default() -> Self {
        Self {
            max_bytes: KEYS_MAX_BYTES,
            max_envelopes: KEYS_MAX_ENVELOPES,
        }
    }
}

/// Why an answer gives no key history. Each variant names what is wrong;
/// none yields a key.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum KeysError {
    /// The sigil asked for names no key (a reserved name, P2).
    NotAKeySigil,
    /// The answer is larger than the limit.
    Oversize {
        /// Its length (at least; a reader may stop past the limit).
        len: usize,
        /// The limit.
        limit: usize,
    },
    /// More items than the limit allows.
    TooManyItems {
        /// The envelope limit.
        limit: usize,
    },
    /// The answer is empty.
    Empty,
    /// The answer is not a CBOR sequence from this byte on: truncated, or
    /// trailing bytes that are no item.
    Unsplittable {
        /// Byte offset in the answer.
        offset: usize,
        /// Why.
        error: SplitError,
    },
    /// An item that is neither an envelope nor an inclusion proof.
    NotAnItem {
        /// Byte offset in the answer.
        offset: usize,
    },
    /// An envelope from another sigil.
    ForeignEnvelope {
        /// Byte offset in the answer.
        offset: usize,
        /// Its `from`.
        from: String,
    },
    /// A birth whose key does not hash to the sigil asked for (P2, P7).
    ForeignBirth {
        /// Byte offset in the answer.
        offset: usize,
    },
    /// An envelope of a kind other than birth, molt or deprecation.
    UnexpectedKind {
        /// Byte offset in the answer.
        offset: usize,
        /// Its kind.
        kind: &'static str,
    },
    /// The same envelope twice.
    Duplicate {
        /// Its id.
        id: [u8; 32],
    },
    /// No birth, and the keyring pins no key for the sigil.
    NoBirth,
    /// An envelope does not verify, or the P8 rules refuse it.
    Rejected {
        /// Its id.
        id: [u8; 32],
        /// Its kind.
        kind: &'static str,
        /// The reason codes (P11).
        reasons: Vec<&'static str>,
    },
    /// A molt with no inclusion proof under a log key the caller pinned
    /// (P8 rule 3, P9).
    MoltUnproven {
        /// The molt's id.
        id: [u8; 32],
        /// Why a proof offered for it did not hold, if one was.
        detail: Option<String>,
    },
    /// Two molts of one key overlap: the sigil is disputed (P8 rule 5).
    Disputed,
}

impl fmt::Display for KeysError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotAKeySigil => f.write_str("a reserved sigil names no key (P2)"),
            Self::Oversize { len, limit } => {
                write!(f, "answer of {len} bytes is over the limit of {limit}")
            }
            Self::TooManyItems { limit } => {
                write!(f, "answer holds more than {limit} envelopes")
            }
            Self::Empty => f.write_str("empty answer"),
            Self::Unsplittable { offset, error } => {
                write!(f, "answer is not a CBOR sequence at byte {offset}: {error}")
            }
            Self::NotAnItem { offset } => write!(
                f,
                "item at byte {offset} is neither an envelope nor an inclusion proof"
            ),
            Self::ForeignEnvelope { offset, from } => {
                write!(f, "envelope at byte {offset} is from another sigil ({from})")
            }
            Self::ForeignBirth { offset } => write!(
                f,
                "birth at byte {offset} is for another sigil: its key does not hash to the sigil asked for (P2, P7)"
            ),
            Self::UnexpectedKind { offset, kind } => write!(
                f,
                "envelope at byte {offset} is a {kind}, not a birth, molt or deprecation"
            ),
            Self::Duplicate { id } => write!(f, "envelope {} appears twice", hex(id)),
            Self::NoBirth => f.write_str(
                "no birth in the answer and no pinned key for the sigil: nothing binds a key to it (P7)",
            ),
            Self::Rejected { id, kind, reasons } => write!(
                f,
                "{kind} {} does not verify: {}",
                hex(id),
                reasons.join(", ")
            ),
            Self::MoltUnproven { id, detail } => {
                write!(
                    f,
                    "molt {} has no inclusion proof in a log whose key is pinned (P8 rule 3)",
                    hex(id)
                )?;
                match detail {
                    Some(d) => write!(f, ": {d}"),
                    None => Ok(()),
                }
            }
            Self::Disputed => f.write_str("two molts of one key overlap: the sigil is disputed (P8 rule 5)"),
        }
    }
}

impl core::error::Error for KeysError {}

/// One envelope of the answer, as read before the audit.
struct Item<'a> {
    bytes: &'a [u8],
    id: [u8; 32],
    kind: Kind,
    ts: u64,
}

/// Check `answer` (a conduit's `GET /v1/keys/{sigil}` body) against
/// `sigil`, with `keyring` (its pinned keys: the sigil's own, if known,
/// and the audit logs whose proofs count, P8 rule 3), within `limits`.
pub fn check_keys(
    answer: &[u8],
    sigil: &Sigil,
    keyring: &Keyring,
    limits: &KeysLimits,
) -> Result<KeyHistory, KeysError> {
    if sigil.hash_prefix().is_empty() {
        return Err(KeysError::NotAKeySigil);
    }
    if answer.len() > limits.max_bytes {
        return Err(KeysError::Oversize {
            len: answer.len(),
            limit: limits.max_bytes,
        });
    }
    let envelope_limits = Limits::DEFAULT;
    let mut items: Vec<Item<'_>> = Vec::new();
    let mut proofs: Vec<&[u8]> = Vec::new();
    let mut birth_key: Option<(PublicKey, u64)> = None;
    for piece in pieces(answer, envelope_limits.max_size, MAX_NESTING) {
        let (offset, bytes) = match piece {
            Piece::Item { offset, bytes } => (offset, bytes),
            Piece::Unsplittable {
                error: SplitError::Empty,
                ..
            } => return Err(KeysError::Empty),
            Piece::Unsplittable { offset, error } => {
                return Err(KeysError::Unsplittable { offset, error });
            }
        };
        if items.len() + proofs.len() >= limits.max_envelopes.saturating_mul(2) {
            return Err(KeysError::TooManyItems {
                limit: limits.max_envelopes,
            });
        }
        if InclusionProof::decode(bytes).is_ok() {
            proofs.push(bytes);
            continue;
        }
        let Ok(v) = EnvelopeRef::decode_with(bytes, &envelope_limits) else {
            return Err(KeysError::NotAnItem { offset });
        };
        if !v.from_sigil().same_key_as(sigil) {
            return Err(KeysError::ForeignEnvelope {
                offset,
                from: String::from(v.from()),
            });
        }
        let kind = v.kind();
        if !matches!(kind, Kind::Birth | Kind::Molt | Kind::Deprecation) {
            return Err(KeysError::UnexpectedKind {
                offset,
                kind: kind.name(),
            });
        }
        if kind == Kind::Birth {
            // Self-certifying (P7): the key the birth announces must be
            // the one the sigil names, at the sigil's own length.
            let key = v
                .attestation("birth")
                .and_then(|a| BirthAttestation::parse(a).ok())
                .filter(|b| sigil.names_key(b.key))
                .and_then(|b| PublicKey::from_bytes(b.key).ok());
            let Some(key) = key else {
                return Err(KeysError::ForeignBirth { offset });
            };
            if birth_key.is_none_or(|(_, t)| v.ts() < t) {
                birth_key = Some((key, v.ts()));
            }
        }
        let id = *v.id();
        if items.iter().any(|i| i.id == id) {
            return Err(KeysError::Duplicate { id });
        }
        if items.len() >= limits.max_envelopes {
            return Err(KeysError::TooManyItems {
                limit: limits.max_envelopes,
            });
        }
        items.push(Item {
            bytes,
            id,
            kind,
            ts: v.ts(),
        });
    }
    let own = match birth_key {
        Some((key, ts)) => HistoryKey {
            key,
            since: ts,
            origin: HistoryOrigin::Birth,
            molt: None,
        },
        None => match keyring.lookup(sigil) {
            Some((key, Provenance::Pinned)) => HistoryKey {
                key,
                since: 0,
                origin: HistoryOrigin::Pinned,
                molt: None,
            },
            _ => return Err(KeysError::NoBirth),
        },
    };

    // The set judged by the trace audit: signatures, P8, P9 (module docs).
    let envelopes: Vec<&[u8]> = items.iter().map(|i| i.bytes).collect();
    let input = Input {
        name: String::from("keys answer"),
        bytes: crate::bundle::encode(&envelopes, &proofs, &[]),
    };
    let opts = AuditOptions {
        max_envelopes: limits.max_envelopes,
        ..AuditOptions::default()
    };
    let report = audit(&[input], keyring, &opts);
    if report.envelopes.len() != items.len() {
        // Every item decoded above: the audit lists each once.
        return Err(KeysError::TooManyItems {
            limit: limits.max_envelopes,
        });
    }
    if report.envelopes.iter().any(|e| e.has(ReasonCode::Disputed)) {
        return Err(KeysError::Disputed);
    }
    // Molts first (an envelope signed by an unproven molt's key is that
    // molt's fault), then the rest, in the answer's order.
    let order = items
        .iter()
        .enumerate()
        .filter(|(_, i)| i.kind == Kind::Molt)
        .chain(
            items
                .iter()
                .enumerate()
                .filter(|(_, i)| i.kind != Kind::Molt),
        );
    let mut molts: Vec<(u64, HistoryKey)> = Vec::new();
    for (n, item) in order {
        let r = &report.envelopes[n];
        let blocking: Vec<&'static str> = r
            .reasons
            .iter()
            // What a key history rests on is each envelope's origin and
            // the P8 rules: a co-signature that does not verify (a relay's
            // receipt by a key the caller does not hold) is not its
            // concern; the rules that read co-signatures (P8 rule 4) give
            // codes of their own, about no index.
            .filter(|x| {
                !x.code.is_warning()
                    && x.code != ReasonCode::MissingParent
                    && x.index.is_none_or(|k| k == 0)
            })
            .map(|x| x.code.name())
            .collect();
        if item.kind == Kind::Molt {
            let proven = report.proofs.iter().any(|p| {
                p.status == herald_core::Status::Valid
                    && p.id.as_deref() == Some(hex(&item.id).as_str())
            });
            if !blocking.is_empty() && !blocking.iter().all(|c| *c == "molt_unproven") {
                return Err(rejected(item, blocking));
            }
            if !proven {
                let detail = report
                    .proofs
                    .iter()
                    .find(|p| p.id.as_deref() == Some(hex(&item.id).as_str()))
                    .map(|p| p.detail.clone());
                return Err(KeysError::MoltUnproven {
                    id: item.id,
                    detail,
                });
            }
            let molt = EnvelopeRef::decode(item.bytes)
                .ok()
                .and_then(|v| {
                    Molt::parse(v.payload())
                        .ok()
                        .map(|m| (*m.new_key, m.not_before))
                })
                .and_then(|(k, nb)| PublicKey::from_bytes(&k).ok().map(|k| (k, nb)));
            let Some((key, not_before)) = molt else {
                return Err(rejected(item, vec!["malformed"]));
            };
            molts.push((
                item.ts,
                HistoryKey {
                    key,
                    since: not_before,
                    origin: HistoryOrigin::Molt(0),
                    molt: Some(item.id),
                },
            ));
        } else if !blocking.is_empty() {
            return Err(rejected(item, blocking));
        }
    }
    // P8 numbers molts in `ts` order; the rules above leave them a chain.
    molts.sort_by_key(|(ts, _)| *ts);
    let mut keys = vec![own];
    for (n, (_, mut k)) in molts.into_iter().enumerate() {
        k.origin = HistoryOrigin::Molt(n + 1);
        keys.push(k);
    }
    let deprecated = items
        .iter()
        .filter(|i| i.kind == Kind::Deprecation)
        .map(|i| i.ts)
        .min();
    Ok(KeyHistory {
        sigil: *sigil,
        keys,
        deprecated,
    })
}

fn rejected(item: &Item<'_>, mut reasons: Vec<&'static str>) -> KeysError {
    reasons.dedup();
    KeysError::Rejected {
        id: item.id,
        kind: item.kind.name(),
        reasons,
    }
}
