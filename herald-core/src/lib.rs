#![doc = include_str!("../README.md")]
#![no_std]
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_auto_cfg))]

#[cfg(feature = "alloc")]
extern crate alloc;

pub mod attestation;
pub mod cbor;
pub mod envelope;
pub mod handle;
mod key;
mod kind;
mod nonce;
pub mod payload;
mod reason;
mod scope;
pub mod sigil;
mod verify;

pub use envelope::{Body, EnvelopeError, EnvelopeRef, EnvelopeWriter, SignatureRef, WriteError};
#[cfg(feature = "alloc")]
pub use envelope::{BuildError, Envelope, EnvelopeBuilder};
#[cfg(feature = "batch")]
pub use key::verify_batch;
pub use key::{KeyError, Prepared, PublicKey, SignatureError, SigningKey};
pub use kind::Kind;
pub use nonce::Nonce;
pub use reason::{Detail, Reason, ReasonCode, ReasonSink, Reasons, Status};
pub use scope::{STH_TAG, Scope};
pub use sigil::{Reserved, Sigil, SigilError, SigilForm};
pub use verify::{
    CheckOptions, Checked, KeyResolver, KeySource, ParentLink, SignatureVerifier, Strict, check,
    check_parent, check_parent_link, check_with,
};

/// Re-exported so callers can supply their own RNG (P10 nonces, key generation).
pub use rand_core;

/// The operating system's CSPRNG (getrandom), for `verify_batch`'s
/// coefficients (P5 revision 2: drawn by the verifier, never from the
/// inputs) and, wrapped in [`rand_core::UnwrapErr`], for a caller's own
/// draws (P10 nonces, key generation).
#[cfg(feature = "getrandom")]
pub use getrandom::SysRng;
