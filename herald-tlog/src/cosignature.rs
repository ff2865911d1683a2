//! C2SP tlog-cosignature v1 with Ed25519 (signature type 0x04): a witness's
//! timestamped statement that the checkpoint is the largest consistent tree
//! head it has seen for that origin.
//!
//! The signed message is `cosignature/v1\ntime <t>\n` followed by the whole
//! checkpoint body; the signature field is the big-endian u64 time, then
//! the 64-byte Ed25519 signature.

use herald_core::{PublicKey, SigningKey};

use crate::note::{NoteError, NoteSignature, TYPE_COSIGNATURE, key_id};

/// Header line of the signed message (tlog-cosignature "Ed25519 signed
/// message").
const HEADER: &str = "cosignature/v1\n";

/// Length of the signature field: u64 time and an Ed25519 signature.
pub const SIGNATURE_LEN: usize = 8 + 64;

/// Largest timestamp allowed (tlog-cosignature: at most 2^63 − 1).
pub const MAX_TIME: u64 = (1 << 63) - 1;

/// The message a cosignature signs: header, time line, checkpoint body.
#[must_use]
pub fn message(time: u64, body: &[u8]) -> Vec<u8> {
    let mut m = Vec::with_capacity(HEADER.len() + 26 + body.len());
    m.extend_from_slice(HEADER.as_bytes());
    m.extend_from_slice(format!("time {time}\n").as_bytes());
    m.extend_from_slice(body);
    m
}

/// Cosign checkpoint `body` at `time` with the witness key named `name`
/// (tlog-cosignature v1). `time` must be in `1..=MAX_TIME` (tlog-witness:
/// the timestamp is never zero).
pub fn sign(
    name: &str,
    key: &SigningKey,
    time: u64,
    body: &[u8],
) -> Result<NoteSignature, NoteError> {
    if time == 0 || time > MAX_TIME {
        return Err(NoteError::BadSignatureLine {
            offset: 0,
            rule: "cosignature time must be in 1..=2^63-1",
        });
    }
    let sig = key.sign(&message(time, body));
    let mut field = Vec::with_capacity(SIGNATURE_LEN);
    field.extend_from_slice(&time.to_be_bytes());
    field.extend_from_slice(&sig);
    NoteSignature::new(
        name,
        key_id(name, TYPE_COSIGNATURE, key.public_key().as_bytes()),
        field,
    )
}

/// The time of a valid cosignature `field` by `key` over `body`, or `None`.
pub(crate) fn verify(key: &PublicKey, body: &[u8], field: &[u8]) -> Option<u64> {
    let (time, sig) = field.split_first_chunk::<8>()?;
    let sig: &[u8; 64] = sig.try_into().ok()?;
    let time = u64::from_be_bytes(*time);
    if time > MAX_TIME {
        return None;
    }
    key.verify(&message(time, body), sig).ok().map(|()| time)
}
