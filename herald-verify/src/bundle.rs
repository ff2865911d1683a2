//! Proof bundles: one file holding envelopes, the inclusion proofs they
//! need, and optionally keys, verified as a unit (`herald verify BUNDLE`),
//! so that a molt's inclusion proof (PROFILE.md P8 rule 3, P9) travels with
//! the very molt it names. The format is `docs/audit-log.md`, "Proof
//! bundles".
//!
//! A bundle is one P1 map:
//!
//! | key | type | value |
//! |---|---|---|
//! | `format` | text | `herald-bundle-v1` |
//! | `envelopes` | array (≥ 1) of bstr | each one envelope's wire bytes |
//! | `proofs` | array of bstr | each one inclusion proof (CLI.md `herald log prove`) |
//! | `keys` | array of text | optional: keyring lines (CLI.md) |
//! | `checkpoints` | array of bstr | optional: C2SP checkpoints (signed notes) with cosignatures, for a [`LogPolicy`] |
//! | `certifications` | array of bstr | optional: Herald certifications, each the P1 map `{certification, proof}` a Herald serves (PROFILE P14; judged by a verifier given Heralds, carried otherwise) |
//!
//! Envelopes and proofs are byte strings holding their own encodings: the
//! bundle only carries them, each is checked over the very bytes it was
//! made as, and one bad item never hides the others (each gets its own
//! report). The container itself is decoded strictly (P1, exactly these
//! keys, each of its type); a bundle that is not in this format is one
//! `malformed` entry of the report.
//!
//! Trust: a key line's sigil must name its key (the line is refused
//! otherwise), so a bundle key can only verify envelopes of the sigil it
//! hashes to; such keys are reported as `key_source: "bundle"`. A bundle
//! key never makes a log or a Herald trusted: a proof's signed tree head
//! verifies only under a key the verifier pinned ([`Keyring::pinned`]).
//!
//! Witnesses (docs/audit-log.md *C2SP forms*): when the verifier gives a
//! [`LogPolicy`] (`herald verify --log-policy`), a proof counts only when
//! one of the bundle's `checkpoints` is its tree head, signed by the log
//! and cosigned by the policy's quorum. That is decided here, in
//! `check_proofs`, once for every proof, so a molt (P8 rule 3) is proven
//! only under the policy too.

use alloc::{
    collections::{BTreeMap, BTreeSet},
    string::String,
    vec::Vec,
};
use core::fmt;

use herald_core::cbor::{self, DecodeError, Limits, Map, Value, ValueRef};
use herald_core::{EnvelopeRef, PublicKey, Status};

use crate::auditlog::{InclusionProof, TreeHead};
use crate::keyring::{Keyring, KeyringError, Provenance, key_line};
use crate::report::{ProofReport, Source, hex};

/// The `format` value of this version of the bundle format.
pub const FORMAT: &str = "herald-bundle-v1";

/// The bundle's own container limits: a map of arrays of strings (depth
/// 2), at most 65 536 items in each array (P1's default per container).
/// The size is bounded by the caller's input cap, not here; each envelope
/// in it is held to the audit's P1 limits when it is checked.
const LIMITS: Limits = Limits {
    max_depth: 2,
    max_items: 65_536,
    max_size: usize::MAX,
};

/// A bundle's container is not in the `herald-bundle-v1` format. Every
/// variant names what is wrong; a key line's error names its position.
#[derive(Debug)]
#[non_exhaustive]
pub enum BundleError {
    /// The bytes are not one canonical CBOR item (P1).
    Cbor(DecodeError),
    /// The item is not a map.
    NotAMap,
    /// `format` is not `herald-bundle-v1`.
    Format,
    /// A key that the format does not have.
    UnknownField(String),
    /// A key the format requires is absent.
    MissingField(&'static str),
    /// A field is not of its type.
    FieldType {
        /// The field.
        field: &'static str,
        /// What it must be.
        expected: &'static str,
    },
    /// `envelopes` is empty: verifying nothing must not look like success.
    NoEnvelopes,
    /// A `keys` line is not a keyring line whose sigil names its key.
    Key {
        /// Its position in `keys`, from 0.
        index: usize,
        /// What is wrong with it.
        error: KeyringError,
    },
}

impl fmt::Display for BundleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Cbor(e) => write!(f, "bundle: {e}"),
            Self::NotAMap => f.write_str("bundle: not a CBOR map"),
            Self::Format => write!(f, "bundle: `format` is not \"{FORMAT}\""),
            Self::UnknownField(k) => write!(f, "bundle: unknown field `{k}`"),
            Self::MissingField(k) => write!(f, "bundle: missing field `{k}`"),
            Self::FieldType { field, expected } => {
                write!(f, "bundle: `{field}` must be {expected}")
            }
            Self::NoEnvelopes => f.write_str("bundle: `envelopes` is empty"),
            Self::Key { index, error } => write!(f, "bundle: `keys` item {index}: {error}"),
        }
    }
}

impl core::error::Error for BundleError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Self::Cbor(e) => Some(e),
            Self::Key { error, .. } => Some(error),
            _ => None,
        }
    }
}

/// A decoded bundle, borrowing the bytes it was decoded from.
#[derive(Clone, Debug)]
pub struct Bundle<'a> {
    envelopes: Vec<(usize, &'a [u8])>,
    proofs: Vec<(usize, &'a [u8])>,
    keys: Vec<PublicKey>,
    checkpoints: Vec<(usize, &'a [u8])>,
    certifications: Vec<(usize, &'a [u8])>,
}

/// What a verifier demands of a proof's tree head beyond the log key's
/// signature: a quorum of witness cosignatures (C2SP tlog-policy;
/// `auditlog::c2sp` implements it for herald-tlog's `Policy`). The
/// bundle hands over the tree head and its checkpoints' bytes.
pub trait LogPolicy: fmt::Debug + Send + Sync {
    /// Whether one of `checkpoints` (each a checkpoint's bytes, as the
    /// bundle carries them) is `head`, signed by its log and cosigned as
    /// the policy demands: who vouches for it, or why none does.
    fn covers(&self, head: &TreeHead, checkpoints: &[&[u8]]) -> Result<String, String>;
}

/// Whether `bytes` is meant as a bundle: its first item is a map with a
/// `format` key and no `v` (every envelope has `v`, P3). A bundle that is
/// not canonical CBOR is not recognised, and is then reported by the
/// sequence splitter with the P1 rule it breaks.
pub fn is_bundle(bytes: &[u8]) -> bool {
    match cbor::decode_prefix(bytes, &LIMITS) {
        Ok((value, _)) => value
            .as_map()
            .is_some_and(|m| m.get("format").is_some() && m.get("v").is_none()),
        Err(_) => false,
    }
}

/// The byte offset of `part` inside `whole` (`part` is a sub-slice of it).
fn offset_in(whole: &[u8], part: &[u8]) -> usize {
    (part.as_ptr() as usize).saturating_sub(whole.as_ptr() as usize)
}

/// The byte strings of the array `field`.
fn byte_strings<'a>(
    whole: &'a [u8],
    value: ValueRef<'a>,
    field: &'static str,
) -> Result<Vec<(usize, &'a [u8])>, BundleError> {
    let expected = "an array of byte strings";
    let array = value
        .as_array()
        .ok_or(BundleError::FieldType { field, expected })?;
    array
        .iter()
        .map(|item| {
            let b = item
                .as_bytes()
                .ok_or(BundleError::FieldType { field, expected })?;
            Ok((offset_in(whole, b), b))
        })
        .collect()
}

impl<'a> Bundle<'a> {
    /// Decode a bundle strictly (module documentation).
    pub fn decode(bytes: &'a [u8]) -> Result<Self, BundleError> {
        let value = cbor::decode_with(bytes, &LIMITS).map_err(BundleError::Cbor)?;
        let map = value.as_map().ok_or(BundleError::NotAMap)?;
        let (mut format, mut envelopes, mut proofs, mut keys) = (None, None, None, None);
        let (mut checkpoints, mut certifications) = (None, None);
        for (key, item) in map.iter() {
            match key {
                "format" => format = Some(item),
                "envelopes" => envelopes = Some(item),
                "proofs" => proofs = Some(item),
                "keys" => keys = Some(item),
                "checkpoints" => checkpoints = Some(item),
                "certifications" => certifications = Some(item),
                other => return Err(BundleError::UnknownField(other.into())),
            }
        }
        let format = format.ok_or(BundleError::MissingField("format"))?;
        if format.as_text() != Some(FORMAT) {
            return Err(BundleError::Format);
        }
        let envelopes = byte_strings(
            bytes,
            envelopes.ok_or(BundleError::MissingField("envelopes"))?,
            "envelopes",
        )?;
        if envelopes.is_empty() {
            return Err(BundleError::NoEnvelopes);
        }
        let proofs = byte_strings(
            bytes,
            proofs.ok_or(BundleError::MissingField("proofs"))?,
            "proofs",
        )?;
        let checkpoints = match checkpoints {
            Some(c) => byte_strings(bytes, c, "checkpoints")?,
            None => Vec::new(),
        };
        let certifications = match certifications {
            Some(c) => byte_strings(bytes, c, "certifications")?,
            None => Vec::new(),
        };
        let mut parsed = Vec::new();
        if let Some(keys) = keys {
            let expected = "an array of keyring lines";
            let field = "keys";
            let array = keys
                .as_array()
                .ok_or(BundleError::FieldType { field, expected })?;
            for (index, item) in array.iter().enumerate() {
                let line = item
                    .as_text()
                    .ok_or(BundleError::FieldType { field, expected })?;
                parsed.push(parse_key(line).map_err(|error| BundleError::Key { index, error })?);
            }
        }
        Ok(Self {
            envelopes,
            proofs,
            keys: parsed,
            checkpoints,
            certifications,
        })
    }

    /// The envelopes' bytes, each with its byte offset in the bundle.
    pub fn envelopes(&self) -> &[(usize, &'a [u8])] {
        &self.envelopes
    }

    /// The inclusion proofs' bytes, each with its byte offset in the bundle.
    pub fn proofs(&self) -> &[(usize, &'a [u8])] {
        &self.proofs
    }

    /// The keys the bundle carries.
    pub fn keys(&self) -> &[PublicKey] {
        &self.keys
    }

    /// The checkpoints' bytes (for a [`LogPolicy`]), each with its byte
    /// offset in the bundle.
    pub fn checkpoints(&self) -> &[(usize, &'a [u8])] {
        &self.checkpoints
    }

    /// The Herald certifications' bytes (each a `{certification, proof}`
    /// item, PROFILE P14), each with its byte offset in the bundle.
    pub fn certifications(&self) -> &[(usize, &'a [u8])] {
        &self.certifications
    }
}

/// One keyring line, which must hold exactly one key.
fn parse_key(line: &str) -> Result<PublicKey, KeyringError> {
    let mut one = Keyring::new();
    one.parse_as(line, "bundle key", Provenance::Bundle)?;
    let mut keys = one.keys();
    match (keys.next(), keys.next()) {
        (Some(key), None) => Ok(key),
        _ => Err(KeyringError::Syntax {
            origin: "bundle key".into(),
            line: 1,
            problem: "expected exactly one `<sigil> ed25519 <64 hex chars>` line",
        }),
    }
}

/// The P1 bytes of a bundle of `envelopes`, `proofs` (inclusion proofs'
/// bytes) and `keys`. Nothing is checked here: `herald bundle` checks its
/// inputs, and [`Bundle::decode`] reads any bundle strictly.
pub fn encode(envelopes: &[&[u8]], proofs: &[&[u8]], keys: &[PublicKey]) -> Vec<u8> {
    encode_with_checkpoints(envelopes, proofs, keys, &[])
}

/// [`encode`], also carrying `checkpoints` (each a C2SP checkpoint's
/// bytes, with its cosignatures), when there are any.
pub fn encode_with_checkpoints(
    envelopes: &[&[u8]],
    proofs: &[&[u8]],
    keys: &[PublicKey],
    checkpoints: &[&[u8]],
) -> Vec<u8> {
    encode_with_certifications(envelopes, proofs, keys, checkpoints, &[])
}

/// [`encode_with_checkpoints`], also carrying Herald `certifications`
/// (each a `{certification, proof}` item's bytes, PROFILE P14), when there
/// are any.
pub fn encode_with_certifications(
    envelopes: &[&[u8]],
    proofs: &[&[u8]],
    keys: &[PublicKey],
    checkpoints: &[&[u8]],
    certifications: &[&[u8]],
) -> Vec<u8> {
    let strings =
        |items: &[&[u8]]| Value::Array(items.iter().map(|b| Value::Bytes(b.to_vec())).collect());
    let mut map = Map::new();
    map.insert("format", Value::text(FORMAT));
    map.insert("envelopes", strings(envelopes));
    map.insert("proofs", strings(proofs));
    if !keys.is_empty() {
        map.insert(
            "keys",
            Value::Array(keys.iter().map(|k| Value::text(key_line(k))).collect()),
        );
    }
    if !checkpoints.is_empty() {
        map.insert("checkpoints", strings(checkpoints));
    }
    if !certifications.is_empty() {
        map.insert("certifications", strings(certifications));
    }
    Value::Map(map).to_vec()
}

/// One proof to check, and where it came from.
#[derive(Clone, Debug)]
pub(crate) struct ProofInput<'a> {
    /// The inclusion proof's bytes.
    pub bytes: &'a [u8],
    /// The bundle and the offset in it.
    pub source: Source,
    /// The checkpoints of the bundle it came from.
    pub checkpoints: Vec<&'a [u8]>,
}

/// Check every proof against the pinned keys of `keyring` and the
/// envelopes of the set (`bytes[i]`, whose `id` field is `ids[i]` when it
/// decoded; each is decoded again with `limits` only when a proof names
/// its id): a proof is valid when it decodes, verifies (its tree head under
/// a pinned key, its Merkle path, P9) and its leaf is exactly the leaf of
/// an envelope of the set whose id is the hash of its body, and (with
/// `policy`) one of its bundle's checkpoints covers its tree head. Returns
/// a report per proof, in order, and the ids of the envelopes proven
/// included.
pub(crate) fn check_proofs(
    proofs: &[ProofInput<'_>],
    bytes: &[&[u8]],
    ids: &[Option<&[u8; 32]>],
    limits: &Limits,
    keyring: &Keyring,
    policy: Option<&dyn LogPolicy>,
) -> (Vec<ProofReport>, BTreeSet<[u8; 32]>) {
    let mut reports = Vec::with_capacity(proofs.len());
    let mut proven = BTreeSet::new();
    // The set's envelopes by id, built once (not a scan of the set per proof).
    let mut by_id: BTreeMap<[u8; 32], Vec<usize>> = BTreeMap::new();
    if !proofs.is_empty() {
        for (i, id) in ids.iter().enumerate() {
            if let Some(id) = id {
                by_id.entry(**id).or_default().push(i);
            }
        }
    }
    for p in proofs {
        let mut report = ProofReport {
            status: Status::Invalid,
            source: p.source.clone(),
            ..ProofReport::default()
        };
        match InclusionProof::decode(p.bytes) {
            Err(e) => report.detail = std::format!("{e}"),
            Ok(proof) => {
                report.id = Some(hex(proof.leaf().id()));
                report.log = Some(std::format!("{}", proof.log()));
                report.index = Some(proof.index());
                report.size = Some(proof.size());
                let named: Vec<EnvelopeRef<'_>> = by_id
                    .get(proof.leaf().id())
                    .map_or(&[][..], Vec::as_slice)
                    .iter()
                    .filter_map(|&i| EnvelopeRef::decode_with(bytes.get(i)?, limits).ok())
                    .collect();
                let witnessed = |()| match policy {
                    None => Ok(None),
                    Some(rule) => rule
                        .covers(proof.sth().head(), &p.checkpoints)
                        .map(Some)
                        .map_err(|e| std::format!("log policy: {e}")),
                };
                match verdict(&proof, &named, keyring).and_then(witnessed) {
                    Ok(by) => {
                        report.witnessed = by;
                        report.status = Status::Valid;
                        proven.insert(*proof.leaf().id());
                    }
                    Err(detail) => report.detail = detail,
                }
            }
        }
        reports.push(report);
    }
    (reports, proven)
}

/// Why `proof` does not hold, if it does not; `named` are the envelopes of
/// the set with its leaf's id.
fn verdict(
    proof: &InclusionProof,
    named: &[EnvelopeRef<'_>],
    keyring: &Keyring,
) -> Result<(), String> {
    proof
        .verify(&keyring.pinned())
        .map_err(|e| std::format!("{e}"))?;
    if named.is_empty() {
        return Err(std::format!(
            "no envelope of the set has the leaf's id {}",
            hex(proof.leaf().id())
        ));
    }
    let mut last = String::new();
    for v in named {
        match proof.matches(v) {
            Ok(()) => return Ok(()),
            Err(e) => last = std::format!("{e}"),
        }
    }
    Err(last)
}
