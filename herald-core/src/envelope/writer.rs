//! Building and signing an envelope into a caller's buffer, with no
//! allocator (spec §3.1, PROFILE.md P3–P5, P7): the no-alloc twin of the
//! [`EnvelopeBuilder`](super::EnvelopeBuilder), writing through the same
//! [`super::seal`], so both give the same bytes for the same inputs.

use core::fmt;

use rand_core::CryptoRng;

use super::seal::{Fields, OpenParts, seal, wire_len, write_body};
use super::{EnvelopeError, EnvelopeRef};
use crate::cbor::{BufferFull, Encoder, LenSink, Limits, Sink, SliceSink};
use crate::key::SigningKey;
use crate::kind::Kind;
use crate::nonce::Nonce;
use crate::sigil::{Sigil, SigilForm};

/// The P1 encoding of `null`: the payload when none is given.
const NULL: &[u8] = &[0xf6];

/// Builds and signs an envelope (spec §3.1, P3) into a `&mut [u8]` the
/// caller owns: a genesis or a reply, with a payload given as its P1
/// encoding, and the nonce drawn from the caller's RNG. Needs neither an
/// allocator nor an operating system.
///
/// No attestations or extra fields (use the alloc
/// [`EnvelopeBuilder`](super::EnvelopeBuilder) for those). The result is
/// decoded strictly before it is returned, so a payload that is not one
/// canonical P1 item is refused with the decoder's reason.
#[derive(Clone, Debug)]
pub struct EnvelopeWriter<'p> {
    parent: Option<([u8; 32], [u8; 32])>,
    pub(super) to: Option<Sigil>,
    pub(super) ts: u64,
    pub(super) nonce: Option<Nonce>,
    pub(super) expires: Option<u64>,
    pub(super) kind: Kind,
    pub(super) lineage_proof: Option<[u8; 32]>,
    payload: &'p [u8],
    from_form: SigilForm,
    from: Option<Sigil>,
    pub(super) limits: Limits,
}

/// Writing an envelope into a fixed buffer failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum WriteError {
    /// The buffer is shorter than the envelope; nothing was signed.
    BufferTooSmall {
        /// Bytes the envelope needs.
        needed: usize,
        /// Bytes the buffer has.
        available: usize,
    },
    /// The envelope would exceed `Limits::max_size` (P1).
    TooLarge {
        /// Its size.
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// The result does not decode (P1, P3): a payload that is not one
    /// canonical item, `expires` before `ts`, or limits it does not fit.
    Invalid(EnvelopeError),
}

impl fmt::Display for WriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BufferTooSmall { needed, available } => write!(
                f,
                "the envelope needs {needed} bytes but the buffer has {available}"
            ),
            Self::TooLarge { size, limit } => write!(
                f,
                "envelope of {size} bytes exceeds the {limit}-byte limit (P1)"
            ),
            Self::Invalid(e) => e.fmt(f),
        }
    }
}

impl core::error::Error for WriteError {}

impl<'p> EnvelopeWriter<'p> {
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
            payload: NULL,
            from_form: SigilForm::Default,
            from: None,
            limits: Limits::DEFAULT,
        }
    }

    /// A reply to `parent`: same trace (spec §3.3a), `parent` = its id.
    pub fn reply(parent: &EnvelopeRef<'_>, ts: u64) -> Self {
        Self::reply_to(*parent.id(), *parent.trace(), ts)
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

    /// The nonce (otherwise drawn from the RNG when signing).
    pub fn nonce(mut self, nonce: Nonce) -> Self {
        self.nonce = Some(nonce);
        self
    }

    /// `lineage_proof`.
    pub fn lineage_proof(mut self, id: [u8; 32]) -> Self {
        self.lineage_proof = Some(id);
        self
    }

    /// The payload, as the P1 encoding of one item (e.g. written with an
    /// [`Encoder`] into a [`SliceSink`]); copied as is.
    pub fn payload_cbor(mut self, encoded: &'p [u8]) -> Self {
        self.payload = encoded;
        self
    }

    /// Name `from` (and the origin's `by`) in this sigil form.
    pub fn from_form(mut self, form: SigilForm) -> Self {
        self.from_form = form;
        self
    }

    /// Sign for `sigil` rather than for the signing key's own sigil (P8).
    pub fn from_sigil(mut self, sigil: Sigil) -> Self {
        self.from = Some(sigil);
        self
    }

    /// Decoder limits the result must fit (P1 defaults otherwise).
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The envelope's size in bytes once signed as `key` (the buffer
    /// [`Self::sign_into`] needs).
    pub fn size(&self, key: &SigningKey) -> usize {
        let nonce = Nonce([0; 16]);
        self.with_fields(key, &nonce, |fields, from| {
            let marks = match write_body(fields, self, LenSink(0)) {
                Ok(marks) => marks,
                Err(never) => match never {},
            };
            wire_len(&marks, from)
        })
    }

    /// Sign with `key` as `from` into `buf`, drawing the nonce (if none was
    /// set) from `rng`, which must be a CSPRNG: on a microcontroller, its
    /// hardware RNG (P10: a repeated nonce makes the envelope a replay).
    /// Returns the envelope, decoded, borrowing its bytes in `buf`.
    pub fn sign_into<'b, R: CryptoRng + ?Sized>(
        &self,
        key: &SigningKey,
        rng: &mut R,
        buf: &'b mut [u8],
    ) -> Result<EnvelopeRef<'b>, WriteError> {
        let needed = self.size(key);
        if needed > self.limits.max_size {
            return Err(WriteError::TooLarge {
                size: needed,
                limit: self.limits.max_size,
            });
        }
        let available = buf.len();
        let too_small = |_: BufferFull| WriteError::BufferTooSmall { needed, available };
        if needed > available {
            return Err(too_small(BufferFull));
        }
        let nonce = self.nonce.unwrap_or_else(|| Nonce::from_rng(rng));
        let len = self.with_fields(key, &nonce, |fields, from| {
            let marks = write_body(fields, self, SliceSink::new(buf)).map_err(too_small)?;
            seal(buf, &marks, key, self.kind, from)
                .map(|(_, len)| len)
                .map_err(too_small)
        })?;
        let buf: &'b [u8] = buf;
        let wire = buf
            .get(..len)
            .ok_or(WriteError::BufferTooSmall { needed, available })?;
        EnvelopeRef::decode_with(wire, &self.limits).map_err(WriteError::Invalid)
    }

    /// Call `f` with the fixed fields, signed as `key`, and the `from` string.
    pub(super) fn with_fields<T>(
        &self,
        key: &SigningKey,
        nonce: &Nonce,
        f: impl FnOnce(&Fields<'_>, &str) -> T,
    ) -> T {
        let from = self.from.unwrap_or_else(|| key.sigil(self.from_form));
        let mut from_buf = [0u8; 52];
        let from = from.write_str(&mut from_buf);
        let mut to_buf = [0u8; 52];
        let fields = Fields {
            parent: self.parent.as_ref().map(|(p, t)| (p, t)),
            to: self.to.map(|t| t.write_str(&mut to_buf)),
            ts: self.ts,
            from,
            kind: self.kind,
            nonce,
            expires: self.expires,
            lineage_proof: self.lineage_proof.as_ref(),
        };
        f(&fields, from)
    }
}

/// The writer's payload (copied as given); no attestations or extras.
impl OpenParts for EnvelopeWriter<'_> {
    fn has_attestations(&self) -> bool {
        false
    }

    fn extra_count(&self) -> usize {
        0
    }

    fn write_extras<S: Sink>(
        &self,
        _: &mut Encoder<S>,
        _: &mut usize,
        _: Option<&str>,
    ) -> Result<(), S::Error> {
        Ok(())
    }

    fn write_payload<S: Sink>(&self, enc: &mut Encoder<S>) -> Result<(), S::Error> {
        enc.sink_mut().put(self.payload)
    }

    fn write_attestations<S: Sink>(&self, _: &mut Encoder<S>) -> Result<(), S::Error> {
        Ok(())
    }
}
