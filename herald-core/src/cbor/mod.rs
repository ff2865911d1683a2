//! Canonical CBOR: PROFILE.md P1 (spec §3.5, RFC 8949 §4.2.1).
//!
//! - [`Encoder`] writes canonical heads and scalars into any [`Sink`].
//! - [`decode`] is the strict decoder: it accepts exactly what the encoder
//!   produces and returns zero-copy [`ValueRef`] views, or a [`DecodeError`]
//!   naming the byte offset and the [`Rule`] broken.
//! - With `alloc`, [`Value`] is an owned value that always encodes, and
//!   [`to_value`] / [`from_value`] carry serde types through ciborium into P1.

#[cfg(feature = "alloc")]
mod de;
mod decode;
mod encode;
mod float;
#[cfg(feature = "alloc")]
mod serde;
#[cfg(feature = "alloc")]
mod value;
mod value_ref;

pub use decode::{DecodeError, Limits, MAX_NESTING, Rule, decode, decode_prefix, decode_with};
pub use encode::{BufferFull, EncodeError, Encoder, LenSink, Sink, SliceSink};
pub use float::FloatError;
#[cfg(feature = "alloc")]
pub use serde::{SerdeError, from_ciborium, from_value, to_ciborium, to_value};
#[cfg(feature = "alloc")]
pub use value::{Float, Map, Value};
pub(crate) use value_ref::RawRef;
pub use value_ref::{ArrayIter, ArrayRef, Entry, MapIter, MapRef, ValueRef};

pub(crate) use encode::{major, write_head};

/// Canonical order of two text map keys (P1): the bytewise order of their
/// encodings, which for text is shorter first, then bytewise.
pub fn key_cmp(a: &str, b: &str) -> core::cmp::Ordering {
    a.len()
        .cmp(&b.len())
        .then_with(|| a.as_bytes().cmp(b.as_bytes()))
}
