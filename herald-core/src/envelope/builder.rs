//! The envelope builder (feature `alloc`; spec §3.1, PROFILE.md P3–P7):
//! `body(E, 0)` written straight from its fields in canonical key order,
//! hashed for the id, signed, and made the wire form without decoding it
//! again.

use alloc::{string::String, vec::Vec};
use core::convert::Infallible;

use rand_core::{CryptoRng, RngCore};
use sha2::{Digest, Sha256};

use super::owned::{BuildError, Envelope, P3_KEYS, SignatureEntry, never_fails};
use super::{EnvelopeRef, VERSION};
use crate::cbor::{Encoder, Limits, MAX_NESTING, Map, Value, key_cmp, to_value};
use crate::key::SigningKey;
use crate::kind::Kind;
use crate::nonce::Nonce;
use crate::scope::Scope;
use crate::sigil::{Sigil, SigilForm};

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
    pub fn sign(self, key: &SigningKey) -> Result<Envelope, BuildError> {
        let nonce = match self.nonce {
            Some(n) => n,
            None => Nonce::generate().map_err(|_| BuildError::Random)?,
        };
        self.sign_with_nonce(key, nonce)
    }

    /// Sign with `key` as `from`, drawing the nonce (if none was set) from `rng`.
    pub fn sign_with_rng<R: CryptoRng + RngCore>(
        self,
        key: &SigningKey,
        rng: &mut R,
    ) -> Result<Envelope, BuildError> {
        let nonce = self.nonce.unwrap_or_else(|| Nonce::from_rng(rng));
        self.sign_with_nonce(key, nonce)
    }

    /// Sign with `key` as `from` and this nonce.
    fn sign_with_nonce(self, key: &SigningKey, nonce: Nonce) -> Result<Envelope, BuildError> {
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
        Ok(Envelope::built(wire, self.limits, id))
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
        never_fails(enc.map(count as u64));
        marks.head = enc.sink_mut().len();
        let mut extras = self.extra.iter().peekable();
        for (key, here) in P3_KEYS.iter().zip(present) {
            while let Some((k, v)) = extras.next_if(|(k, _)| key_cmp(k, key).is_lt()) {
                never_fails(enc.text(k));
                never_fails(v.encode(&mut enc));
            }
            match *key {
                "id" => marks.id = enc.sink_mut().len(),
                "trace" => marks.trace = enc.sink_mut().len(),
                _ => {}
            }
            if !here {
                continue;
            }
            never_fails(enc.text(key));
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
            never_fails(r);
        }
        for (k, v) in extras {
            never_fails(enc.text(k));
            never_fails(v.encode(&mut enc));
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
        never_fails(enc.map((marks.count + 1 + usize::from(genesis)) as u64));
        enc.sink_mut().extend_from_slice(part(marks.head..marks.id));
        never_fails(enc.text("id"));
        never_fails(enc.bytes(id));
        enc.sink_mut()
            .extend_from_slice(part(marks.id..marks.trace));
        if genesis {
            never_fails(enc.text("trace"));
            never_fails(enc.bytes(id));
        }
        enc.sink_mut()
            .extend_from_slice(part(marks.trace..marks.signatures));
        never_fails(enc.array(1));
        never_fails(origin.write(&mut enc));
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
