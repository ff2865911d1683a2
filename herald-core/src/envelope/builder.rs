//! The envelope builder (feature `alloc`; spec §3.1, PROFILE.md P3–P7):
//! `body(E, 0)` written straight from its fields in canonical key order,
//! hashed for the id, signed, and made the wire form without decoding it
//! again (all in [`super::seal`], shared with the no-alloc
//! [`EnvelopeWriter`](super::EnvelopeWriter)).

use alloc::{string::String, vec::Vec};

use rand_core::CryptoRng;

use super::owned::{BuildError, Envelope};
use super::seal::{OpenParts, P3_KEYS, seal, wire_len, write_body};
use super::{EnvelopeRef, EnvelopeWriter};
use crate::cbor::{BufferFull, Encoder, Limits, MAX_NESTING, Map, Sink, Value, key_cmp, to_value};
use crate::key::SigningKey;
use crate::kind::Kind;
use crate::nonce::Nonce;
use crate::sigil::{Sigil, SigilForm};

/// Builds and signs an envelope (spec §3.1, P3): a genesis or a reply.
///
/// The fixed fields are an [`EnvelopeWriter`]'s (the no-alloc builder);
/// this adds owned payload values, attestations and extra fields.
#[derive(Clone, Debug)]
pub struct EnvelopeBuilder {
    head: EnvelopeWriter<'static>,
    /// `(type, value)` of each attestation, written as `{type, value}`.
    attestations: Vec<(String, Value)>,
    payload: Value,
    extra: Map,
}

impl EnvelopeBuilder {
    fn with_head(head: EnvelopeWriter<'static>) -> Self {
        Self {
            head,
            attestations: Vec::new(),
            payload: Value::Null,
            extra: Map::new(),
        }
    }

    fn map_head(
        mut self,
        f: impl FnOnce(EnvelopeWriter<'static>) -> EnvelopeWriter<'static>,
    ) -> Self {
        self.head = f(self.head);
        self
    }

    /// A genesis (`parent: null`, `trace: id`, P4) at `ts`, with a `null` payload.
    pub fn genesis(ts: u64) -> Self {
        Self::with_head(EnvelopeWriter::genesis(ts))
    }

    /// A reply to `parent`: same trace (spec §3.3a), `parent` = its id.
    pub fn reply(parent: &EnvelopeRef<'_>, ts: u64) -> Self {
        Self::with_head(EnvelopeWriter::reply(parent, ts))
    }

    /// A reply given the parent's id and trace.
    pub fn reply_to(parent_id: [u8; 32], trace: [u8; 32], ts: u64) -> Self {
        Self::with_head(EnvelopeWriter::reply_to(parent_id, trace, ts))
    }

    /// `to`.
    pub fn to(self, to: Sigil) -> Self {
        self.map_head(|h| h.to(to))
    }

    /// `kind`.
    pub fn kind(self, kind: Kind) -> Self {
        self.map_head(|h| h.kind(kind))
    }

    /// `expires`, Unix seconds (≥ `ts`).
    pub fn expires(self, expires: u64) -> Self {
        self.map_head(|h| h.expires(expires))
    }

    /// The nonce (otherwise drawn when signing).
    pub fn nonce(self, nonce: Nonce) -> Self {
        self.map_head(|h| h.nonce(nonce))
    }

    /// `lineage_proof`.
    pub fn lineage_proof(self, id: [u8; 32]) -> Self {
        self.map_head(|h| h.lineage_proof(id))
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
    pub fn from_form(self, form: SigilForm) -> Self {
        self.map_head(|h| h.from_form(form))
    }

    /// Sign for `sigil` rather than for the signing key's own sigil: after a
    /// molt (P8) the new key signs for the sigil of the birth key.
    pub fn from_sigil(self, sigil: Sigil) -> Self {
        self.map_head(|h| h.from_sigil(sigil))
    }

    /// Decoder limits the result must fit (P1 defaults otherwise).
    pub fn limits(self, limits: Limits) -> Self {
        self.map_head(|h| h.limits(limits))
    }

    /// Sign with `key` as `from`, drawing the nonce (if none was set) from
    /// the operating system's CSPRNG.
    #[cfg(feature = "getrandom")]
    pub fn sign(self, key: &SigningKey) -> Result<Envelope, BuildError> {
        let nonce = match self.head.nonce {
            Some(n) => n,
            None => Nonce::generate().map_err(|_| BuildError::Random)?,
        };
        self.sign_with_nonce(key, nonce)
    }

    /// Sign with `key` as `from`, drawing the nonce (if none was set) from `rng`.
    pub fn sign_with_rng<R: CryptoRng + ?Sized>(
        self,
        key: &SigningKey,
        rng: &mut R,
    ) -> Result<Envelope, BuildError> {
        let nonce = self.head.nonce.unwrap_or_else(|| Nonce::from_rng(rng));
        self.sign_with_nonce(key, nonce)
    }

    /// Sign with `key` as `from` and this nonce.
    fn sign_with_nonce(self, key: &SigningKey, nonce: Nonce) -> Result<Envelope, BuildError> {
        let limits = self.head.limits;
        let mut wire = Vec::with_capacity(256 + self.payload_hint());
        let sealed = self.head.with_fields(key, &nonce, |fields, from| {
            let marks = match write_body(fields, &self, &mut wire) {
                Ok(marks) => marks,
                Err(never) => match never {},
            };
            let size = wire_len(&marks, from);
            if size > limits.max_size {
                return Err(BuildError::TooLarge {
                    size,
                    limit: limits.max_size,
                });
            }
            wire.resize(size, 0);
            // `wire` is exactly `wire_len` long, so sealing cannot run out of room.
            seal(&mut wire, &marks, key, fields.kind, from)
                .map(|(id, _)| id)
                .map_err(|BufferFull| BuildError::TooLarge { size, limit: size })
        });
        let id = sealed?;
        if !self.decodes_as_written() {
            // Some rule refuses it: the full decode names which, exactly as
            // it would for received bytes (and accepts it, should the
            // checks below be more cautious than the decoder).
            return Envelope::from_bytes_with(wire, limits).map_err(BuildError::Invalid);
        }
        Ok(Envelope::built(wire, limits, id))
    }

    /// Whether what [`write_body`] and [`seal`] produced decodes with `self.head.limits`
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
        let max_depth = self.head.limits.max_depth.min(MAX_NESTING);
        let max_items = self.head.limits.max_items;
        let present = 6 // v, id, ts, from, nonce, parent …
            + 3 // … trace (a genesis writes it too), payload, signatures
            + usize::from(self.head.to.is_some())
            + usize::from(self.head.kind != Kind::Message)
            + usize::from(self.head.expires.is_some())
            + usize::from(!self.attestations.is_empty())
            + usize::from(self.head.lineage_proof.is_some());
        // Levels as the decoder counts them: a container at level d needs
        // d + 1 <= max_depth; the top-level map is at level 0.
        let fits = |v: &Value, level: usize| fits(v, level, max_depth, max_items);
        self.head.expires.is_none_or(|x| x >= self.head.ts)
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
}

/// The builder's payload, attestations and extra fields, for [`write_body`].
impl OpenParts for EnvelopeBuilder {
    fn has_attestations(&self) -> bool {
        !self.attestations.is_empty()
    }

    fn extra_count(&self) -> usize {
        self.extra.len()
    }

    fn write_extras<S: Sink>(
        &self,
        enc: &mut Encoder<S>,
        next: &mut usize,
        below: Option<&str>,
    ) -> Result<(), S::Error> {
        for (k, v) in self.extra.iter().skip(*next) {
            if below.is_some_and(|b| key_cmp(k, b).is_ge()) {
                break;
            }
            enc.text(k)?;
            v.encode(enc)?;
            *next += 1;
        }
        Ok(())
    }

    fn write_payload<S: Sink>(&self, enc: &mut Encoder<S>) -> Result<(), S::Error> {
        self.payload.encode(enc)
    }

    fn write_attestations<S: Sink>(&self, enc: &mut Encoder<S>) -> Result<(), S::Error> {
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
