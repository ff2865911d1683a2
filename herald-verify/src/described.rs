//! A key's own description: the `description` of the `birth` attestation
//! (PROFILE P7) of the birth envelope that introduced the key into a set
//! (`key_source` `"birth"`, CLI.md `verify --json`).
//!
//! The description is self-asserted: the key's holder wrote it about
//! itself when it drew the key, and nobody vouched for it. Show it as
//! such (quoted, marked self-described), never as a keyring label, and
//! let a keyring label win where there is one.

use alloc::vec::Vec;
use std::collections::HashMap;

use herald_core::attestation::BirthAttestation;
use herald_core::{EnvelopeRef, Kind, ReasonCode, Sigil, SigilForm};

use crate::keyring::KeyOrigin;
use crate::report::EnvelopeReport;

/// A key and the description its own birth gave it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SelfDescribed<'b> {
    /// The birth key (P7 `birth.key`), whose sigil is the birth's `from`.
    pub key: &'b [u8; 32],
    /// Its self-description (P7 `birth.description`), as written.
    pub description: &'b str,
}

/// The key and description of `bytes` when its report says it is a birth
/// whose origin verified under the key it carries: `key_source` `"birth"`,
/// no reason about signature 0 nor `id_mismatch` (the rule by which a
/// set learns a birth's key, PROFILE P7), kind `birth`, a well-formed
/// `birth` attestation whose key the `from` sigil names. `None` for any
/// other item, including envelopes merely signed by a key a birth
/// introduced (their sender is named by looking the key up).
pub fn self_described<'b>(report: &EnvelopeReport, bytes: &'b [u8]) -> Option<SelfDescribed<'b>> {
    if report.key_source != Some(KeyOrigin::Birth)
        || report
            .reasons
            .iter()
            .any(|r| r.index == Some(0) || r.code == ReasonCode::IdMismatch)
    {
        return None;
    }
    let envelope = EnvelopeRef::decode(bytes).ok()?;
    if envelope.kind() != Kind::Birth {
        return None;
    }
    let birth = BirthAttestation::parse(envelope.attestation("birth")?).ok()?;
    envelope
        .from_sigil()
        .names_key(birth.key)
        .then_some(SelfDescribed {
            key: birth.key,
            description: birth.description,
        })
}

/// The self-described keys of a set, looked up by any sigil form that
/// names them (in constant time: a set may hold a birth per envelope).
#[derive(Clone, Debug, Default)]
pub struct Descriptions<'b> {
    /// By the 10 bytes of key hash every sigil form starts with (P2).
    by_prefix: HashMap<[u8; 10], Vec<SelfDescribed<'b>>>,
}

impl<'b> Descriptions<'b> {
    /// No key described.
    pub fn new() -> Self {
        Self::default()
    }

    /// Add a described key; a key already described keeps its first
    /// description (its births in set order).
    pub fn insert(&mut self, described: SelfDescribed<'b>) {
        let sigil = Sigil::from_key(described.key, SigilForm::Short);
        let mut prefix = [0u8; 10];
        prefix.copy_from_slice(sigil.hash_prefix());
        let slot = self.by_prefix.entry(prefix).or_default();
        if !slot.iter().any(|d| d.key == described.key) {
            slot.push(described);
        }
    }

    /// The described key `sigil` names, if any.
    pub fn get(&self, sigil: &Sigil) -> Option<&SelfDescribed<'b>> {
        let prefix: [u8; 10] = sigil.hash_prefix().get(..10)?.try_into().ok()?;
        self.by_prefix
            .get(&prefix)?
            .iter()
            .find(|d| sigil.names_key(d.key))
    }
}

impl<'b> FromIterator<SelfDescribed<'b>> for Descriptions<'b> {
    fn from_iter<I: IntoIterator<Item = SelfDescribed<'b>>>(iter: I) -> Self {
        let mut all = Self::new();
        for d in iter {
            all.insert(d);
        }
        all
    }
}
