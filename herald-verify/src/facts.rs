//! What an audit keeps of each envelope that decoded, in place of its
//! decoded view (the memory bound): fixed-size facts, about a third of an
//! [`EnvelopeRef`]'s size. A step that needs more (the lifecycle of an
//! identity with lifecycle envelopes, a bundled proof's envelope) decodes
//! the envelope again from its bytes.

use herald_core::{EnvelopeRef, Kind, SigilForm};

use crate::keyring::Keyring;
use crate::lifecycle::rules::Stamp;
use crate::lifecycle::{Identity, identity};

/// The facts of one envelope that its report and the trace steps read,
/// its ids borrowed from its bytes in the input: 32 bytes, kept until
/// the reports are written.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Facts<'a> {
    /// The `id` field (not necessarily the computed id).
    pub(crate) id: &'a [u8; 32],
    pub(crate) trace: &'a [u8; 32],
    pub(crate) parent: Option<&'a [u8; 32]>,
    pub(crate) kind: Kind,
    /// `parent` is null.
    pub(crate) genesis: bool,
}

impl<'a> Facts<'a> {
    pub(crate) fn of(v: &EnvelopeRef<'a>) -> Self {
        Self {
            id: v.id(),
            trace: v.trace(),
            parent: v.parent(),
            kind: v.kind(),
            genesis: v.is_genesis(),
        }
    }
}

/// What the lifecycle (P8) and the replay step (P10) read of an
/// envelope's sender: 64 bytes, dropped once they have run.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sender<'a> {
    pub(crate) nonce: &'a [u8; 16],
    pub(crate) ts: u64,
    /// The identity `from` names (P2).
    pub(crate) identity: Option<Identity>,
    /// The key a replay is keyed by: the keyring's key for `from`, else
    /// the sigil's hash prefix (P10).
    pub(crate) signer: [u8; 32],
    /// The keyring (pinned, bundled or learned keys) holds `from`'s key.
    pub(crate) key_known: bool,
}

impl<'a> Sender<'a> {
    pub(crate) fn of(v: &EnvelopeRef<'a>, keys: &Keyring) -> Self {
        let from = v.from_sigil();
        let key = keys.lookup(&from).map(|(k, _)| *k.as_bytes());
        Self {
            nonce: v.nonce(),
            ts: v.ts(),
            identity: identity(&from),
            signer: key.unwrap_or_else(|| sigil_identity(v)),
            key_known: key.is_some(),
        }
    }
}

/// What the lifecycle rules read of an envelope.
pub(crate) fn stamp(facts: &Facts<'_>, sender: &Sender<'_>) -> Stamp {
    Stamp {
        id: *facts.id,
        ts: sender.ts,
        kind: facts.kind,
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
