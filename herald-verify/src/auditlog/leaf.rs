//! The P9 leaf of an envelope (PROFILE.md P9, spec §5.3: "only id, hash of
//! parent, hash of trace, and a coarse timestamp bucket").
//!
//! A leaf is the P1 encoding of the map
//!
//! | key | type | value |
//! |---|---|---|
//! | `id` | bstr 32 | the envelope's id |
//! | `parent_hash` | bstr 32 or `null` | `sha256(parent)`; `null` for a genesis |
//! | `trace_hash` | bstr 32 | `sha256(trace)` |
//! | `bucket` | uint | `ts − (ts mod 3600)` |
//! | `from` | text, sigil | only with consent |
//! | `to` | text, sigil | only with consent, and only when the envelope has a `to` |
//! | `ts` | uint | only with consent |
//!
//! Consent: the envelope carries at least one attestation of type
//! `log_metadata_consent` and every such attestation has the value `true`
//! (P12: its value is a bool). Attestations are inside the origin-signed
//! body, so they are the sender's. Anything else (no such attestation, a
//! `false`, a malformed value) gives the minimal leaf: when in doubt, log
//! less.

use alloc::string::ToString;
use alloc::vec::Vec;

use herald_core::cbor::{Map, Value, ValueRef};
use herald_core::{EnvelopeRef, Sigil};

use super::{Fields, FormatError, decode_item, sha256};
use herald_merkle::{self as merkle, Hash};

/// The attestation type that lets a leaf carry `from`, `to` and `ts` (P9).
pub const CONSENT_ATTESTATION: &str = "log_metadata_consent";

/// Width of a timestamp bucket in seconds (P9).
pub(crate) const BUCKET_SECONDS: u64 = 3600;

/// Largest leaf a log stores, in bytes. A P9 leaf is at most about 300
/// bytes (two 52-character sigils, three hashes, two integers).
pub const MAX_LEAF_LEN: usize = 1024;

const OBJECT: &str = "leaf";
const KEYS: &[&str] = &[
    "id",
    "ts",
    "to",
    "from",
    "bucket",
    "trace_hash",
    "parent_hash",
];

/// Metadata a sender consented to log (P9).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Metadata {
    from: Sigil,
    to: Option<Sigil>,
    ts: u64,
}

/// A P9 leaf: what the audit log records of one envelope.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Leaf {
    id: [u8; 32],
    parent_hash: Option<Hash>,
    trace_hash: Hash,
    bucket: u64,
    metadata: Option<Metadata>,
}

impl Leaf {
    /// The leaf of `envelope` (P9): minimal, or with `from`, `to` and `ts`
    /// when the sender consented (see the module documentation). The id is
    /// taken as carried; a log checks it against the body first
    /// ([`crate::auditlog::Log::append_envelopes`]).
    pub fn from_envelope(envelope: &EnvelopeRef<'_>) -> Self {
        let consented = consents(envelope).then(|| (envelope.from_sigil(), envelope.to()));
        Self::from_parts(
            *envelope.id(),
            envelope.parent().copied(),
            *envelope.trace(),
            envelope.ts(),
            consented.map(|(from, to)| (from, to.map(|(_, sigil)| sigil))),
        )
    }

    /// The leaf of an envelope with these fields (P9): `parent` is `None`
    /// for a genesis; `consented` is `Some((from, to))` when the sender
    /// consented to `from`, `to` and `ts` being logged.
    pub fn from_parts(
        id: [u8; 32],
        parent: Option<[u8; 32]>,
        trace: [u8; 32],
        ts: u64,
        consented: Option<(Sigil, Option<Sigil>)>,
    ) -> Self {
        Self {
            id,
            parent_hash: parent.map(|p| sha256(&p)),
            trace_hash: sha256(&trace),
            bucket: bucket(ts),
            metadata: consented.map(|(from, to)| Metadata { from, to, ts }),
        }
    }

    /// The envelope id.
    pub fn id(&self) -> &[u8; 32] {
        &self.id
    }

    /// `sha256(parent)`, or `None` for a genesis.
    pub fn parent_hash(&self) -> Option<&Hash> {
        self.parent_hash.as_ref()
    }

    /// `sha256(trace)`.
    pub fn trace_hash(&self) -> &Hash {
        &self.trace_hash
    }

    /// `ts − (ts mod 3600)`.
    pub fn bucket(&self) -> u64 {
        self.bucket
    }

    /// Whether the leaf carries the consented metadata.
    pub fn has_metadata(&self) -> bool {
        self.metadata.is_some()
    }

    /// `from`, with consent.
    pub fn from(&self) -> Option<&Sigil> {
        self.metadata.as_ref().map(|m| &m.from)
    }

    /// `to`, with consent and when the envelope had one.
    pub fn to(&self) -> Option<&Sigil> {
        self.metadata.as_ref().and_then(|m| m.to.as_ref())
    }

    /// `ts`, with consent.
    pub fn ts(&self) -> Option<u64> {
        self.metadata.as_ref().map(|m| m.ts)
    }

    /// The leaf as a P1 map (keys in canonical order by construction).
    pub fn to_value(&self) -> Value {
        let mut map = Map::new();
        map.insert("id", Value::Bytes(self.id.to_vec()));
        map.insert(
            "parent_hash",
            self.parent_hash
                .map_or(Value::Null, |h| Value::Bytes(h.to_vec())),
        );
        map.insert("trace_hash", Value::Bytes(self.trace_hash.to_vec()));
        map.insert("bucket", Value::Unsigned(self.bucket));
        if let Some(m) = &self.metadata {
            map.insert("from", Value::text(m.from.to_string()));
            if let Some(to) = &m.to {
                map.insert("to", Value::text(to.to_string()));
            }
            map.insert("ts", Value::Unsigned(m.ts));
        }
        Value::Map(map)
    }

    /// The leaf bytes: the P1 encoding hashed into the tree (P9).
    pub fn encode(&self) -> Vec<u8> {
        self.to_value().to_vec()
    }

    /// The Merkle leaf hash `sha256(0x00 ‖ leaf)` (RFC 9162; P9).
    pub fn hash(&self) -> Hash {
        merkle::leaf_hash(&self.encode())
    }

    /// Strictly decode leaf bytes (P1, P9): exactly the keys above, each of
    /// its type; `bucket` a multiple of 3600; `from` and `ts` together (and
    /// `to` only with them), with `bucket` the bucket of `ts`.
    pub fn decode(bytes: &[u8]) -> Result<Self, FormatError> {
        if bytes.len() > MAX_LEAF_LEN {
            return Err(FormatError::TooLarge {
                object: OBJECT,
                len: bytes.len(),
                max: MAX_LEAF_LEN,
            });
        }
        Self::from_ref(decode_item(bytes, OBJECT)?)
    }

    fn from_ref(value: ValueRef<'_>) -> Result<Self, FormatError> {
        let f = Fields::new(value, OBJECT, KEYS)?;
        let id = f.hash("id")?;
        let parent_hash = match f.required("parent_hash")? {
            ValueRef::Null => None,
            _ => Some(f.hash("parent_hash")?),
        };
        let trace_hash = f.hash("trace_hash")?;
        let bucket_value = f.uint("bucket")?;
        if bucket_value % BUCKET_SECONDS != 0 {
            return Err(f.value_error("bucket", "not a multiple of 3600 (P9)"));
        }
        let metadata = match (f.has("from"), f.has("ts")) {
            (false, false) => {
                if f.has("to") {
                    return Err(f.value_error("to", "present without `from` and `ts` (P9)"));
                }
                None
            }
            (true, true) => {
                let ts = f.uint("ts")?;
                if bucket(ts) != bucket_value {
                    return Err(f.value_error("bucket", "not the bucket of `ts` (P9)"));
                }
                let to = match f.optional("to") {
                    Some(v) => Some(f.sigil_of("to", v)?),
                    None => None,
                };
                Some(Metadata {
                    from: f.sigil("from")?,
                    to,
                    ts,
                })
            }
            (true, false) => return Err(missing("ts")),
            (false, true) => return Err(missing("from")),
        };
        Ok(Self {
            id,
            parent_hash,
            trace_hash,
            bucket: bucket_value,
            metadata,
        })
    }
}

fn missing(field: &'static str) -> FormatError {
    FormatError::MissingField {
        object: OBJECT,
        field,
    }
}

/// `ts − (ts mod 3600)` (P9).
pub(crate) fn bucket(ts: u64) -> u64 {
    ts - ts % BUCKET_SECONDS
}

/// Whether the sender of `envelope` consented to `from`, `to` and `ts`
/// being logged: at least one `log_metadata_consent` attestation, and every
/// one of them `true`.
pub(crate) fn consents(envelope: &EnvelopeRef<'_>) -> bool {
    let Some(attestations) = envelope.attestations() else {
        return false;
    };
    let mut seen = false;
    for a in attestations.iter() {
        let Some(m) = a.as_map() else { continue };
        if m.get("type").and_then(|t| t.as_text()) != Some(CONSENT_ATTESTATION) {
            continue;
        }
        if m.get("value") != Some(ValueRef::Bool(true)) {
            return false;
        }
        seen = true;
    }
    seen
}
