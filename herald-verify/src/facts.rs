//! What an audit keeps of each envelope that decoded, in place of its
//! decoded view (issue 14): fixed-size facts, about a third of an
//! [`EnvelopeRef`]'s size. A step that needs more (the lifecycle of an
//! identity with lifecycle envelopes, a bundled proof's envelope) decodes
//! the envelope again from its bytes.

use herald_core::{EnvelopeRef, Kind, SigilForm};

use crate::keyring::Keyring;
use crate::lifecycle::rules::Stamp;
use crate::lifecycle::{Identity, identity};

/// The facts of one envelope: its ids and nonce borrowed from its bytes
/// in the input, 88 bytes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Facts<'a> {
    /// The `id` field (not necessarily the computed id).
    pub(crate) id: &'a [u8; 32],
    pub(crate) trace: &'a [u8; 32],
    pub(crate) parent: Option<&'a [u8; 32]>,
    pub(crate) nonce: &'a [u8; 16],
    pub(crate) ts: u64,
    pub(crate) kind: Kind,
    /// `parent` is null.
    pub(crate) genesis: bool,
    /// The identity `from` names (P2), for the lifecycle.
    pub(crate) identity: Option<Identity>,
    /// The key a replay is keyed by: the keyring's key for `from`, else
    /// the sigil's hash prefix (P10).
    pub(crate) signer: [u8; 32],
    /// The keyring (pinned, bundled or learned keys) holds `from`'s key.
    pub(crate) key_known: bool,
}

impl<'a> Facts<'a> {
    pub(crate) fn of(v: &EnvelopeRef<'a>, keys: &Keyring) -> Self {
        let from = v.from_sigil();
        let key = keys.lookup(&from).map(|(k, _)| *k.as_bytes());
        Self {
            id: v.id(),
            trace: v.trace(),
            parent: v.parent(),
            nonce: v.nonce(),
            ts: v.ts(),
            kind: v.kind(),
            genesis: v.is_genesis(),
            identity: identity(&from),
            signer: key.unwrap_or_else(|| sigil_identity(v)),
            key_known: key.is_some(),
        }
    }
}

impl Facts<'_> {
    /// What the lifecycle rules read of it.
    pub(crate) fn stamp(&self) -> Stamp {
        Stamp {
            id: *self.id,
            ts: self.ts,
            kind: self.kind,
        }
    }
}

/// A stand-in for the signer's key when it is unknown: the sigil's hash
/// prefix in its shortest form, which every form of one key shares.
fn sigil_identity(v: &EnvelopeRef<'_>) -> [u8; 32] {
    let mut id = [0u8; 32];
    if let Some(short) = v.from_sigil().to_form(SigilForm::Short) {
        id[..10].copy_from_slice(short.hash_prefix());
    }
    id
}
