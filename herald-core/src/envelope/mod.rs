//! Envelopes (spec §3, PROFILE.md P3, P4): a borrowed [`EnvelopeRef`]
//! decoded with no allocation, and with `alloc` an owned [`Envelope`] and
//! its [`EnvelopeBuilder`].

mod body;
#[cfg(feature = "alloc")]
mod builder;
#[cfg(feature = "alloc")]
mod owned;
pub(crate) mod scan;
mod seal;
mod signature;
mod writer;

use core::fmt;

pub use body::Body;
#[cfg(feature = "alloc")]
pub use builder::EnvelopeBuilder;
#[cfg(feature = "alloc")]
pub use owned::{BuildError, Envelope};
pub use scan::VERSION;
pub(crate) use signature::RawSignature;
pub use signature::{ED25519, SignatureRef};
pub use writer::{EnvelopeWriter, WriteError};

use crate::cbor::{ArrayRef, Limits, MapRef, ValueRef};
use crate::kind::Kind;
use crate::reason::{Reason, ReasonCode};
use crate::sigil::Sigil;
use scan::Fields;

/// An envelope's bytes did not decode as a P3 envelope: the first
/// problem found (use [`check`](crate::check) for all of them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EnvelopeError(pub Reason);

impl fmt::Display for EnvelopeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "not a HERALD envelope: {}", self.0)
    }
}

impl core::error::Error for EnvelopeError {}

/// A decoded envelope borrowing the received bytes (P3). Every field has
/// its P3 type; nothing was allocated or re-encoded. Signatures are not yet
/// checked: see [`check`](crate::check).
///
/// Only the scan's fields are kept (a verifier holds one of these per
/// envelope of a trace): an `EnvelopeRef` is only made when every required
/// field is present, so the fallbacks of the accessors below are never
/// reached.
#[derive(Clone, Debug)]
pub struct EnvelopeRef<'a> {
    fields: Fields<'a>,
}

/// What an accessor of a required field would return were it absent
/// (unreachable: [`EnvelopeRef::from_fields`] requires them).
const ABSENT_32: &[u8; 32] = &[0; 32];
/// See [`ABSENT_32`].
const ABSENT_16: &[u8; 16] = &[0; 16];

impl<'a> EnvelopeRef<'a> {
    /// Strictly decode one envelope filling `bytes` (P1, P3), default limits.
    pub fn decode(bytes: &'a [u8]) -> Result<Self, EnvelopeError> {
        Self::decode_with(bytes, &Limits::DEFAULT)
    }

    /// Strictly decode one envelope filling `bytes` (P1, P3).
    pub fn decode_with(bytes: &'a [u8], limits: &Limits) -> Result<Self, EnvelopeError> {
        let mut first: Option<Reason> = None;
        let fields = scan::scan(bytes, limits, scan::Shapes::Skip, &mut |r: Reason| {
            if first.is_none() && !r.code.is_warning() {
                first = Some(r);
            }
        });
        if let Some(r) = first {
            return Err(EnvelopeError(r));
        }
        let fields = fields.ok_or(EnvelopeError(Reason::new(
            ReasonCode::Malformed,
            crate::reason::Detail::Note("not an envelope"),
        )))?;
        Self::from_fields(fields).ok_or(EnvelopeError(Reason::new(
            ReasonCode::Malformed,
            crate::reason::Detail::Note("required field missing (P3)"),
        )))
    }

    pub(crate) fn from_fields(fields: Fields<'a>) -> Option<Self> {
        let complete = !fields.faulty
            && fields.from.is_some()
            && fields.spans.signatures_value.is_some()
            && fields.id.is_some()
            && fields.trace.is_some()
            && fields.ts.is_some()
            && fields.nonce.is_some()
            && fields.payload.is_some()
            && fields.signatures.is_some();
        complete.then_some(Self { fields })
    }

    #[cfg(feature = "alloc")]
    pub(crate) fn fields(&self) -> &Fields<'a> {
        &self.fields
    }

    /// The bytes this envelope was decoded from.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.fields.bytes
    }

    /// The top-level map.
    pub fn map(&self) -> MapRef<'a> {
        self.fields.map
    }

    /// `id` as carried on the wire (check it with [`Self::computed_id`]).
    pub fn id(&self) -> &'a [u8; 32] {
        self.fields.id.unwrap_or(ABSENT_32)
    }

    /// `from`, as received.
    pub fn from(&self) -> &'a str {
        self.fields.from.map_or("", |f| f.text)
    }

    /// `from`, parsed.
    pub fn from_sigil(&self) -> Sigil {
        match self.fields.from {
            Some(f) => f.sigil,
            None => Sigil::from_key(ABSENT_32, crate::sigil::SigilForm::Default),
        }
    }

    /// `to`, as received and parsed.
    pub fn to(&self) -> Option<(&'a str, Sigil)> {
        self.fields.to.map(|t| (t.text, t.sigil))
    }

    /// `parent`; `None` for a genesis (`parent: null`).
    pub fn parent(&self) -> Option<&'a [u8; 32]> {
        self.fields.parent.flatten()
    }

    /// Whether this is a genesis (`parent: null`, P4).
    pub fn is_genesis(&self) -> bool {
        self.parent().is_none()
    }

    /// `trace`.
    pub fn trace(&self) -> &'a [u8; 32] {
        self.fields.trace.unwrap_or(ABSENT_32)
    }

    /// `ts`, Unix seconds.
    pub fn ts(&self) -> u64 {
        self.fields.ts.unwrap_or_default()
    }

    /// `nonce`.
    pub fn nonce(&self) -> &'a [u8; 16] {
        self.fields.nonce.unwrap_or(ABSENT_16)
    }

    /// `expires`, Unix seconds.
    pub fn expires(&self) -> Option<u64> {
        self.fields.expires
    }

    /// `kind` (absent means [`Kind::Message`]).
    pub fn kind(&self) -> Kind {
        self.fields.kind.unwrap_or_default()
    }

    /// `lineage_proof`.
    pub fn lineage_proof(&self) -> Option<&'a [u8; 32]> {
        self.fields.lineage_proof
    }

    /// `attestations`.
    pub fn attestations(&self) -> Option<ArrayRef<'a>> {
        self.fields.attestations
    }

    /// The value of the first attestation of type `ty`.
    pub fn attestation(&self, ty: &str) -> Option<ValueRef<'a>> {
        self.attestations()?.iter().find_map(|a| {
            let m = a.as_map()?;
            (m.get("type")?.as_text()? == ty)
                .then(|| m.get("value"))
                .flatten()
        })
    }

    /// `payload`.
    pub fn payload(&self) -> ValueRef<'a> {
        self.fields
            .payload
            .as_ref()
            .and_then(|(v, _)| v.value())
            .unwrap_or(ValueRef::Null)
    }

    /// The payload's canonical bytes.
    pub fn payload_bytes(&self) -> &'a [u8] {
        self.fields
            .payload
            .as_ref()
            .and_then(|(_, span)| self.fields.bytes.get(span.clone()))
            .unwrap_or_default()
    }

    /// Number of top-level keys outside P3 (each reported as `unknown_field`).
    pub fn unknown_fields(&self) -> usize {
        self.fields.unknown_fields
    }

    /// Number of signature maps.
    pub fn signature_count(&self) -> usize {
        self.fields.signatures.map_or(0, |a| a.len())
    }

    /// Signature maps in order, each parsed (an error for a malformed one).
    pub fn signatures(
        &self,
    ) -> impl Iterator<Item = Result<SignatureRef<'a>, crate::reason::Detail>> + 'a {
        self.fields
            .signatures
            .into_iter()
            .flat_map(|a| a.iter())
            .map(SignatureRef::parse)
    }

    /// `body(E, k)` (P4), or `None` when there are fewer than `k` signatures.
    pub fn body(&self, k: usize) -> Option<Body<'a>> {
        body_of(&self.fields, k)
    }

    /// `sha256(body(E, 0))`: the id this envelope should carry (P4).
    pub fn computed_id(&self) -> [u8; 32] {
        self.body(0).map(|b| b.sha256()).unwrap_or_default()
    }

    /// Span of the `signatures` value in the wire bytes.
    #[cfg(feature = "alloc")]
    pub(crate) fn signatures_value(&self) -> core::ops::Range<usize> {
        self.fields
            .spans
            .signatures_value
            .clone()
            .unwrap_or_default()
    }
}

/// `body(E, k)` from a scan's fields, when the `signatures` array is there.
pub(crate) fn body_of<'a>(fields: &Fields<'a>, k: usize) -> Option<Body<'a>> {
    let signatures = fields.signatures?;
    let value = fields.spans.signatures_value.clone()?;
    let items = signatures.items_span();
    let mut it = signatures.iter();
    let mut end = items.start;
    for _ in 0..k {
        end = it.next_spanned()?.0.end;
    }
    let genesis = matches!(fields.parent, Some(None));
    let trace = if genesis {
        fields.spans.trace.clone()
    } else {
        None
    };
    Some(Body::new(
        fields.bytes,
        fields.spans.entries.clone(),
        fields.map.len(),
        [fields.spans.id.clone(), trace],
        value,
        items.start..end,
        k,
    ))
}
