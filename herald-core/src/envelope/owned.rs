//! Owned envelopes and the builder (feature `alloc`; spec §3, PROFILE.md
//! P3–P7). Building goes through the P1 encoder; co-signing splices one
//! signature map into the received bytes without re-encoding the rest.

use alloc::{string::String, vec::Vec};
use core::convert::Infallible;
use core::fmt;

use rand_core::{CryptoRng, RngCore};
use sha2::{Digest, Sha256};

use super::{ED25519, EnvelopeError, EnvelopeRef, VERSION};
use crate::cbor::{
    Encoder, Limits, MAX_NESTING, Map, SerdeError, Sink, Value, key_cmp, major, to_value,
    write_head,
};
use crate::key::SigningKey;
use crate::kind::Kind;
use crate::nonce::Nonce;
use crate::reason::Reason;
use crate::scope::Scope;
use crate::sigil::{Sigil, SigilForm};
use crate::verify::{CheckOptions, Checked, KeyResolver, check};

/// The top-level keys P3 defines, in canonical order (P1: shorter first,
/// then bytewise); anything else is an extra (unknown) field.
const P3_KEYS: [&str; 14] = [
    "v",
    "id",
    "to",
    "ts",
    "from",
    "kind",
    "nonce",
    "trace",
    "parent",
    "expires",
    "payload",
    "signatures",
    "attestations",
    "lineage_proof",
];

/// Building or co-signing an envelope failed.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum BuildError {
    /// The OS random source failed while drawing a nonce.
    Random,
    /// The envelope would exceed the size limit (P1: 1 MiB by default).
    TooLarge {
        /// Its size.
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// An extra field may not use a P3 key.
    ReservedKey(String),
    /// Only signature 0 has scope origin; co-sign in another scope (P5).
    OriginScope,
    /// A payload or attestation value that P1 cannot hold.
    Serde(SerdeError),
    /// The result does not decode (a bug, or limits smaller than the envelope).
    Invalid(EnvelopeError),
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Random => f.write_str("the OS random source failed"),
            Self::TooLarge { size, limit } => {
                write!(
                    f,
                    "envelope of {size} bytes exceeds the {limit}-byte limit (P1)"
                )
            }
            Self::ReservedKey(k) => write!(f, "{k:?} is a P3 field, not an extra one"),
            Self::OriginScope => f.write_str("scope origin is only for signature 0 (P5)"),
            Self::Serde(e) => e.fmt(f),
            Self::Invalid(e) => e.fmt(f),
        }
    }
}

impl core::error::Error for BuildError {}

impl From<SerdeError> for BuildError {
    fn from(e: SerdeError) -> Self {
        Self::Serde(e)
    }
}

/// An owned envelope: canonical bytes that decode as P3 (the bytes are the
/// envelope; every accessor reads them through [`Envelope::view`]).
///
/// Invariant: `bytes` decode with `limits` ([`EnvelopeRef::decode_with`]),
/// and `id` is the `id` they carry (kept so that [`Envelope::id`] does not
/// decode again).
#[derive(Clone, PartialEq, Eq)]
pub struct Envelope {
    bytes: Vec<u8>,
    limits: Limits,
    id: [u8; 32],
}

impl Envelope {
    /// Take ownership of received bytes, decoding them strictly (P1, P3).
    pub fn from_bytes(bytes: Vec<u8>) -> Result<Self, EnvelopeError> {
        Self::from_bytes_with(bytes, Limits::DEFAULT)
    }

    /// As [`Envelope::from_bytes`], with other decoder limits.
    pub fn from_bytes_with(bytes: Vec<u8>, limits: Limits) -> Result<Self, EnvelopeError> {
        let id = *EnvelopeRef::decode_with(&bytes, &limits)?.id();
        Ok(Self { bytes, limits, id })
    }

    /// The borrowed view.
    pub fn view(&self) -> EnvelopeRef<'_> {
        match EnvelopeRef::decode_with(&self.bytes, &self.limits) {
            Ok(view) => view,
            // The bytes were decoded with these limits on construction and
            // are immutable since.
            #[allow(clippy::panic)]
            Err(e) => panic!("Envelope invariant broken: {e}"),
        }
    }

    /// The wire bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The wire bytes, owned.
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }

    /// The id carried (kept from construction: no decoding).
    pub fn id(&self) -> [u8; 32] {
        self.id
    }

    /// Check the envelope (see [`check`](crate::check)), collecting every reason.
    pub fn check(
        &self,
        keys: &dyn KeyResolver,
        opts: &CheckOptions<'_>,
    ) -> (Checked<'_>, Vec<Reason>) {
        let mut reasons = Vec::new();
        let checked = check(&self.bytes, keys, opts, &mut reasons);
        (checked, reasons)
    }

    /// Append a signature by `key` in `scope` over `tag(scope) || body(E, k)`
    /// (P5, P6), `by` in the default sigil form, with an optional claimed `ts`.
    pub fn cosign(
        &self,
        key: &SigningKey,
        scope: Scope,
        ts: Option<u64>,
    ) -> Result<Self, BuildError> {
        self.cosign_as(key, key.sigil(SigilForm::Default), scope, ts)
    }

    /// As [`Envelope::cosign`], naming the signer by `by` (a sigil of `key`).
    pub fn cosign_as(
        &self,
        key: &SigningKey,
        by: Sigil,
        scope: Scope,
        ts: Option<u64>,
    ) -> Result<Self, BuildError> {
        let tag = scope.tag().ok_or(BuildError::OriginScope)?;
        let view = self.view();
        let k = view.signature_count();
        let body = view.body(k).ok_or(BuildError::OriginScope)?;
        let sig = key.sign_parts(|feed| {
            feed(tag);
            body.feed(feed);
        });
        let mut by_buf = [0u8; 52];
        let entry = SignatureEntry {
            by: by.write_str(&mut by_buf),
            scope: scope.name(),
            sig: &sig,
            ts,
        };
        let mut map = Vec::with_capacity(128);
        never(entry.write(&mut Encoder::new(&mut map)))?;
        let span = view.signatures_value();
        let items = view
            .fields()
            .signatures
            .map(|a| a.items_span())
            .unwrap_or(span.end..span.end);
        let mut head = [0u8; 9];
        let head = write_head(&mut head, major::ARRAY, k as u64 + 1);
        let mut bytes = Vec::with_capacity(self.bytes.len() + 128);
        bytes.extend_from_slice(self.bytes.get(..span.start).unwrap_or_default());
        bytes.extend_from_slice(head);
        bytes.extend_from_slice(self.bytes.get(items).unwrap_or_default());
        bytes.extend_from_slice(&map);
        bytes.extend_from_slice(self.bytes.get(span.end..).unwrap_or_default());
        finish(bytes, self.limits)
    }
}

impl fmt::Debug for Envelope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let view = self.view();
        f.debug_struct("Envelope")
            .field("id", &crate::cbor::ValueRef::Bytes(view.id()))
            .field("from", &view.from())
            .field("kind", &view.kind())
            .field("signatures", &view.signature_count())
            .finish_non_exhaustive()
    }
}

/// The size check and the full decode, for bytes spliced from received ones.
fn finish(bytes: Vec<u8>, limits: Limits) -> Result<Envelope, BuildError> {
    if bytes.len() > limits.max_size {
        return Err(BuildError::TooLarge {
            size: bytes.len(),
            limit: limits.max_size,
        });
    }
    Envelope::from_bytes_with(bytes, limits).map_err(BuildError::Invalid)
}

/// Builds and signs an envelope (spec §3.1, P3): a genesis or a reply.
#[derive(Clone, Debug)]
pub struct EnvelopeBuilder {
    parent: Option<([u8; 32], [u8; 32])>,
    to: Option<Sigil>,
    ts: u64,
    nonce: Option<Nonce>,
    expires: Option<u64>,
    kind: Kind,
    lineage_proof: Option<[u8; 32]>,
    /// `(type, value)` of each attestation, written as `{type, value}`.
    attestations: Vec<(String, Value)>,
    payload: Value,
    extra: Map,
    from_form: SigilForm,
    from: Option<Sigil>,
    limits: Limits,
}

impl EnvelopeBuilder {
    /// A genesis (`parent: null`, `trace: id`, P4) at `ts`, with a `null` payload.
    pub fn genesis(ts: u64) -> Self {
        Self {
            parent: None,
            to: None,
            ts,
            nonce: None,
            expires: None,
            kind: Kind::Message,
            lineage_proof: None,
            attestations: Vec::new(),
            payload: Value::Null,
            extra: Map::new(),
            from_form: SigilForm::Default,
            from: None,
            limits: Limits::DEFAULT,
        }
    }

    /// A reply to `parent`: same trace (spec §3.3a), `parent` = its id.
    pub fn reply(parent: &EnvelopeRef<'_>, ts: u64) -> Self {
        Self {
            parent: Some((*parent.id(), *parent.trace())),
            ..Self::genesis(ts)
        }
    }

    /// A reply given the parent's id and trace.
    pub fn reply_to(parent_id: [u8; 32], trace: [u8; 32], ts: u64) -> Self {
        Self {
            parent: Some((parent_id, trace)),
            ..Self::genesis(ts)
        }
    }

    /// `to`.
    pub fn to(mut self, to: Sigil) -> Self {
        self.to = Some(to);
        self
    }

    /// `kind`.
    pub fn kind(mut self, kind: Kind) -> Self {
        self.kind = kind;
        self
    }

    /// `expires`, Unix seconds (≥ `ts`).
    pub fn expires(mut self, expires: u64) -> Self {
        self.expires = Some(expires);
        self
    }

    /// The nonce (otherwise drawn when signing).
    pub fn nonce(mut self, nonce: Nonce) -> Self {
        self.nonce = Some(nonce);
        self
    }

    /// `lineage_proof`.
    pub fn lineage_proof(mut self, id: [u8; 32]) -> Self {
        self.lineage_proof = Some(id);
        self
    }

    /// The payload.
    pub fn payload(mut self, payload: Value) -> Self {
        self.payload = payload;
        self
    }

    /// The payload from any serde type, canonicalised through P1.
    pub fn payload_serde<T: serde::Serialize + ?Sized>(
        self,
        payload: &T,
    ) -> Result<Self, BuildError> {
        Ok(self.payload(to_value(payload)?))
    }

    /// Append an attestation `{type, value}`.
    pub fn attest(mut self, ty: &str, value: Value) -> Self {
        self.attestations.push((ty.into(), value));
        self
    }

    /// Append an attestation whose value is any serde type.
    pub fn attest_serde<T: serde::Serialize + ?Sized>(
        self,
        ty: &str,
        value: &T,
    ) -> Result<Self, BuildError> {
        Ok(self.attest(ty, to_value(value)?))
    }

    /// A top-level field outside P3 (reported by verifiers as `unknown_field`).
    pub fn extra_field(mut self, key: &str, value: Value) -> Result<Self, BuildError> {
        if P3_KEYS.contains(&key) {
            return Err(BuildError::ReservedKey(key.into()));
        }
        self.extra.insert(key, value);
        Ok(self)
    }

    /// Name `from` (and the origin's `by`) in this sigil form.
    pub fn from_form(mut self, form: SigilForm) -> Self {
        self.from_form = form;
        self
    }

    /// Sign for `sigil` rather than for the signing key's own sigil: after a
    /// molt (P8) the new key signs for the sigil of the birth key.
    pub fn from_sigil(mut self, sigil: Sigil) -> Self {
        self.from = Some(sigil);
        self
    }

    /// Decoder limits the result must fit (P1 defaults otherwise).
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Sign with `key` as `from`, drawing the nonce (if none was set) from
    /// the operating system's CSPRNG.
    #[cfg(feature = "getrandom")]
    pub fn sign(mut self, key: &SigningKey) -> Result<Envelope, BuildError> {
        if self.nonce.is_none() {
            self.nonce = Some(Nonce::generate().map_err(|_| BuildError::Random)?);
        }
        self.sign_with_rng(key, &mut NoRng)
    }

    /// Sign with `key` as `from`, drawing the nonce (if none was set) from `rng`.
    pub fn sign_with_rng<R: CryptoRng + RngCore>(
        self,
        key: &SigningKey,
        rng: &mut R,
    ) -> Result<Envelope, BuildError> {
        let nonce = self.nonce.unwrap_or_else(|| Nonce::from_rng(rng));
        let from = self.from.unwrap_or_else(|| key.sigil(self.from_form));
        let mut from_buf = [0u8; 52];
        let from = from.write_str(&mut from_buf);
        let mut body0 = Vec::with_capacity(256 + self.payload_hint());
        let marks = self.write_body(&mut body0, from, &nonce);
        let id: [u8; 32] = Sha256::digest(&body0).into();
        let tag = self.kind.origin_tag();
        let sig = key.sign_parts(|feed| {
            feed(tag);
            feed(&body0);
        });
        let origin = SignatureEntry {
            by: from,
            scope: Scope::Origin.name(),
            sig: &sig,
            ts: None,
        };
        let wire = self.wire(&body0, &marks, &id, &origin);
        if wire.len() > self.limits.max_size {
            return Err(BuildError::TooLarge {
                size: wire.len(),
                limit: self.limits.max_size,
            });
        }
        if !self.decodes_as_written() {
            // Some rule refuses it: the full decode names which, exactly as
            // it would for received bytes (and accepts it, should the
            // checks below be more cautious than the decoder).
            return Envelope::from_bytes_with(wire, self.limits).map_err(BuildError::Invalid);
        }
        debug_assert!(EnvelopeRef::decode_with(&wire, &self.limits).is_ok());
        Ok(Envelope {
            bytes: wire,
            limits: self.limits,
            id,
        })
    }

    /// Whether what [`Self::write`] produced decodes with `self.limits`
    /// (P1, P3), without decoding it. The size was checked by the caller.
    ///
    /// `write` excludes by construction everything else the strict decode
    /// (`scan.rs`) rejects: heads are shortest, map keys are text, sorted
    /// and unique (P3 keys and extras merged; `extra_field` refuses P3 keys;
    /// a [`Map`] keeps its keys sorted and unique), floats are canonical
    /// ([`Value`] cannot hold others), text is UTF-8, there are no tags or
    /// other simple values; every P3 field has its type (`v` is
    /// [`VERSION`], `from`/`to` and `by` are written by [`Sigil::write_str`],
    /// which [`Sigil::parse`] reads back, `kind` by [`Kind::name`], ids,
    /// nonce and lineage proof have their fixed lengths); every required
    /// field is there; and each attestation is a `{type: text, value}` map
    /// ([`Self::attest`]). Unknown (extra) fields are only a warning. What
    /// remains depends on the caller's values:
    /// - `expires ≥ ts` (P3);
    /// - the nesting depth (`Limits::max_depth`, never above
    ///   [`MAX_NESTING`]): the top-level map is depth 1, `signatures` and
    ///   its maps reach depth 3, an attestation's value sits at depth 4,
    ///   the payload and extra fields at depth 2;
    /// - the items of every container (`Limits::max_items`): the top-level
    ///   map, the origin signature map (4 entries), `attestations`, each
    ///   attestation map (2) and every container inside the values.
    fn decodes_as_written(&self) -> bool {
        let max_depth = self.limits.max_depth.min(MAX_NESTING);
        let max_items = self.limits.max_items;
        let present = 6 // v, id, ts, from, nonce, parent …
            + 3 // … trace (a genesis writes it too), payload, signatures
            + usize::from(self.to.is_some())
            + usize::from(self.kind != Kind::Message)
            + usize::from(self.expires.is_some())
            + usize::from(!self.attestations.is_empty())
            + usize::from(self.lineage_proof.is_some());
        // Levels as the decoder counts them: a container at level d needs
        // d + 1 <= max_depth; the top-level map is at level 0.
        let fits = |v: &Value, level: usize| fits(v, level, max_depth, max_items);
        self.expires.is_none_or(|x| x >= self.ts)
            && max_depth >= 3
            // The origin signature map (4 entries) and each attestation
            // map (2) are smaller than the top-level map (at least 9).
            && present + self.extra.len() <= max_items
            && self.attestations.len() <= max_items
            && self.attestations.iter().all(|(_, v)| fits(v, 3))
            && fits(&self.payload, 1)
            && self.extra.iter().all(|(_, v)| fits(v, 1))
    }

    fn payload_hint(&self) -> usize {
        match &self.payload {
            Value::Text(t) => t.len(),
            Value::Bytes(b) => b.len(),
            _ => 64,
        }
    }

    /// Write `body(E, 0)` straight into `out` (P1, P3, P4: no `id`, no
    /// `trace` for a genesis, `signatures: []`). Keys go out in canonical
    /// order, extra fields merged in among them, without building a map.
    /// Returns where the wire form differs from it.
    fn write_body(&self, out: &mut Vec<u8>, from: &str, nonce: &Nonce) -> Marks {
        let mut enc = Encoder::new(out);
        let mut to_buf = [0u8; 52];
        let to = self.to.map(|t| t.write_str(&mut to_buf));
        let trace: Option<&[u8; 32]> = self.parent.as_ref().map(|(_, trace)| trace);
        let present = [
            true,                          // v
            false,                         // id: never in a body
            to.is_some(),                  // to
            true,                          // ts
            true,                          // from
            self.kind != Kind::Message,    // kind
            true,                          // nonce
            trace.is_some(),               // trace: a reply's only
            true,                          // parent
            self.expires.is_some(),        // expires
            true,                          // payload
            true,                          // signatures
            !self.attestations.is_empty(), // attestations
            self.lineage_proof.is_some(),  // lineage_proof
        ];
        let count = present.iter().filter(|p| **p).count() + self.extra.len();
        let mut marks = Marks {
            count,
            head: 0,
            id: 0,
            trace: 0,
            signatures: 0,
        };
        never_write(enc.map(count as u64));
        marks.head = enc.sink_mut().len();
        let mut extras = self.extra.iter().peekable();
        for (key, here) in P3_KEYS.iter().zip(present) {
            while let Some((k, v)) = extras.next_if(|(k, _)| key_cmp(k, key).is_lt()) {
                never_write(enc.text(k));
                never_write(v.encode(&mut enc));
            }
            match *key {
                "id" => marks.id = enc.sink_mut().len(),
                "trace" => marks.trace = enc.sink_mut().len(),
                _ => {}
            }
            if !here {
                continue;
            }
            never_write(enc.text(key));
            let r = match *key {
                "v" => enc.text(VERSION),
                "to" => enc.text(to.unwrap_or_default()),
                "ts" => enc.unsigned(self.ts),
                "from" => enc.text(from),
                "kind" => enc.text(self.kind.name()),
                "nonce" => enc.bytes(&nonce.0),
                "trace" => enc.bytes(trace.map_or(&[][..], |t| &t[..])),
                "parent" => match &self.parent {
                    Some((p, _)) => enc.bytes(p),
                    None => enc.null(),
                },
                "expires" => enc.unsigned(self.expires.unwrap_or_default()),
                "payload" => self.payload.encode(&mut enc),
                "signatures" => {
                    marks.signatures = enc.sink_mut().len();
                    enc.array(0)
                }
                "attestations" => self.write_attestations(&mut enc),
                _ => enc.bytes(self.lineage_proof.as_ref().map_or(&[][..], |p| &p[..])),
            };
            never_write(r);
        }
        for (k, v) in extras {
            never_write(enc.text(k));
            never_write(v.encode(&mut enc));
        }
        marks
    }

    fn write_attestations(&self, enc: &mut Encoder<&mut Vec<u8>>) -> Result<(), Infallible> {
        enc.array(self.attestations.len() as u64)?;
        for (ty, value) in &self.attestations {
            // {type, value}: P1 order (shorter key first).
            enc.map(2)?;
            enc.text("type")?;
            enc.text(ty)?;
            enc.text("value")?;
            value.encode(enc)?;
        }
        Ok(())
    }

    /// The wire form from `body(E, 0)` as [`Self::write_body`] wrote it:
    /// one more entry (two for a genesis) in the map head, `id` where it
    /// sorts, a genesis's `trace` (= `id`, P4) where it sorts, and the
    /// origin signature in `signatures`; every other byte is copied.
    fn wire(
        &self,
        body0: &[u8],
        marks: &Marks,
        id: &[u8; 32],
        origin: &SignatureEntry<'_>,
    ) -> Vec<u8> {
        let genesis = self.parent.is_none();
        let mut wire = Vec::with_capacity(body0.len() + 200);
        let mut enc = Encoder::new(&mut wire);
        let part = |r: core::ops::Range<usize>| body0.get(r).unwrap_or_default();
        never_write(enc.map((marks.count + 1 + usize::from(genesis)) as u64));
        enc.sink_mut().extend_from_slice(part(marks.head..marks.id));
        never_write(enc.text("id"));
        never_write(enc.bytes(id));
        enc.sink_mut()
            .extend_from_slice(part(marks.id..marks.trace));
        if genesis {
            never_write(enc.text("trace"));
            never_write(enc.bytes(id));
        }
        enc.sink_mut()
            .extend_from_slice(part(marks.trace..marks.signatures));
        never_write(enc.array(1));
        never_write(origin.write(&mut enc));
        enc.sink_mut()
            .extend_from_slice(part(marks.signatures + 1..body0.len()));
        wire
    }
}

/// Offsets in `body(E, 0)` as [`EnvelopeBuilder::write_body`] wrote it.
struct Marks {
    /// Entries of its top-level map.
    count: usize,
    /// End of the map head.
    head: usize,
    /// Where an `id` entry sorts.
    id: usize,
    /// Where a `trace` entry sorts (a reply's own `trace` starts there).
    trace: usize,
    /// The `[]` value of `signatures` (one byte, 0x80).
    signatures: usize,
}

/// Vec sinks cannot fail.
fn never_write(r: Result<(), Infallible>) {
    match r {
        Ok(()) => {}
        Err(never) => match never {},
    }
}

/// Whether `v`, decoded at `level` (the top-level map is level 0), stays
/// within `max_depth` and `max_items` as the strict decoder counts them (P1).
/// Recurses at most `max_depth` (≤ [`MAX_NESTING`]) levels.
fn fits(v: &Value, level: usize, max_depth: usize, max_items: usize) -> bool {
    let container = |len: usize| level < max_depth && len <= max_items;
    match v {
        Value::Array(items) => {
            container(items.len())
                && items
                    .iter()
                    .all(|i| fits(i, level + 1, max_depth, max_items))
        }
        Value::Map(m) => {
            container(m.len())
                && m.iter()
                    .all(|(_, v)| fits(v, level + 1, max_depth, max_items))
        }
        _ => true,
    }
}

/// Vec sinks cannot fail.
fn never(r: Result<(), core::convert::Infallible>) -> Result<(), BuildError> {
    match r {
        Ok(()) => Ok(()),
        Err(never) => match never {},
    }
}

/// One signature map, written directly in canonical key order
/// (`by`, `ts`, `alg`, `sig`, `scope`).
struct SignatureEntry<'a> {
    by: &'a str,
    scope: &'a str,
    sig: &'a [u8; 64],
    ts: Option<u64>,
}

impl SignatureEntry<'_> {
    fn write<S: Sink>(&self, enc: &mut Encoder<S>) -> Result<(), S::Error> {
        enc.map(if self.ts.is_some() { 5 } else { 4 })?;
        enc.text("by")?;
        enc.text(self.by)?;
        if let Some(ts) = self.ts {
            enc.text("ts")?;
            enc.unsigned(ts)?;
        }
        enc.text("alg")?;
        enc.text(ED25519)?;
        enc.text("sig")?;
        enc.bytes(self.sig)?;
        enc.text("scope")?;
        enc.text(self.scope)
    }
}

/// An RNG that is never asked for bytes (the nonce was drawn already).
#[cfg(feature = "getrandom")]
struct NoRng;

#[cfg(feature = "getrandom")]
impl RngCore for NoRng {
    fn next_u32(&mut self) -> u32 {
        0
    }
    fn next_u64(&mut self) -> u64 {
        0
    }
    fn fill_bytes(&mut self, dest: &mut [u8]) {
        dest.fill(0);
    }
    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rand_core::Error> {
        dest.fill(0);
        Ok(())
    }
}

#[cfg(feature = "getrandom")]
impl CryptoRng for NoRng {}

/// The value of a `birth` attestation for `key` (P7).
pub fn birth_attestation(key: &crate::PublicKey, description: &str, lineage: &[Sigil]) -> Value {
    let mut m = Map::new();
    m.insert("key", Value::Bytes(key.as_bytes().to_vec()));
    m.insert("description", Value::text(description));
    m.insert(
        "lineage",
        Value::Array(
            lineage
                .iter()
                .map(|s| Value::Text(alloc::format!("{s}")))
                .collect(),
        ),
    );
    Value::Map(m)
}
