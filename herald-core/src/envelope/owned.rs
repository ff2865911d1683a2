//! Owned envelopes (feature `alloc`; spec §3, PROFILE.md P3–P6): bytes
//! that decode as P3, and co-signing, which splices one signature map into
//! the received bytes without re-encoding the rest. Building is
//! [`super::builder`].

use alloc::{string::String, vec::Vec};
use core::fmt;

use super::seal::{SignatureEntry, never_fails};
use super::{EnvelopeError, EnvelopeRef};
use crate::cbor::{Encoder, Limits, SerdeError, major, write_head};
use crate::key::SigningKey;
use crate::reason::Reason;
use crate::scope::Scope;
use crate::sigil::{Sigil, SigilForm};
use crate::verify::{CheckOptions, Checked, KeyResolver, check};

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
    /// Bytes the builder wrote and proved to decode with `limits`
    /// ([`super::builder`]), and their id.
    pub(super) fn built(bytes: Vec<u8>, limits: Limits, id: [u8; 32]) -> Self {
        debug_assert!(EnvelopeRef::decode_with(&bytes, &limits).is_ok());
        Self { bytes, limits, id }
    }

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
        never_fails(entry.write(&mut Encoder::new(&mut map)));
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
