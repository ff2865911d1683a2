//! The keys that may sign for an identity at a given time, outside any
//! envelope (P2, P8): what a conduit accepts for a signed request
//! (CONDUIT.md *Who may read what*: "a key it holds for that sigil
//! (keyring, birth, molt)"), judged by the rules an envelope of that time
//! would be ([`super::rules::judge`]).

use alloc::vec::Vec;

use herald_core::{PublicKey, Sigil};

use super::IdentityRecord;
use crate::keyring::Keyring;

/// The keys that may sign for `sigil` at `at` (Unix seconds), given the
/// `keyring` and what was witnessed of the identity (`record`):
///
/// - the sigil's own key: pinned in the keyring, or its witnessed birth's
///   when `births` (a receiver that learns birth keys, P7); unless an
///   accepted molt retired it at or before `at` (P8: `rotated_key`);
/// - the new key of each molt it accepted (rules 2, 4, 5) whose
///   `not_before` is at or before `at`, unless a later molt retired it.
///   Rule 3's inclusion proof is not asked: it lets a verifier that did not
///   witness the molt rely on envelopes of the new key, while the holder
///   of these keys witnessed it, and a signed request is no envelope
///   anyone else relies on. (Without it, an identity could sign nothing at
///   a conduit from its molt's `not_before` on: the old key is retired
///   then, and a conduit is given no proofs.)
///
/// and none at all when the identity is `disputed` (rule 5) or was
/// deprecated before `at`.
pub fn signing_keys(
    keyring: &Keyring,
    sigil: &Sigil,
    record: Option<&IdentityRecord>,
    births: bool,
    at: u64,
) -> Vec<PublicKey> {
    let empty = IdentityRecord::default();
    let record = record.unwrap_or(&empty);
    if record.disputed || record.deprecated.is_some_and(|d| at > d) {
        return Vec::new();
    }
    let mut keys: Vec<[u8; 32]> = Vec::new();
    // A pinned key is checked already (P5: a prime-order point); a key
    // from a record is checked here.
    let pinned = keyring.lookup(sigil).map(|(k, _)| k);
    let own = match pinned {
        Some(k) => Some(*k.as_bytes()),
        None => record
            .birth
            .as_ref()
            .filter(|b| births && sigil.names_key(&b.key))
            .map(|b| b.key),
    };
    keys.extend(own);
    // A molted-in key stands for the sigil only once the molt was witnessed
    // for this identity: its record is found by the sigil's key hash.
    if own.is_some() || record.birth.is_some() {
        keys.extend(
            record
                .molts
                .iter()
                .filter(|m| m.accepted() && at >= m.not_before)
                .map(|m| m.new_key),
        );
    }
    let mut out: Vec<PublicKey> = Vec::new();
    for k in keys {
        if record.retired(&k, at).is_some() {
            continue;
        }
        let key = match pinned {
            Some(p) if p.as_bytes() == &k => Ok(p),
            _ => PublicKey::from_bytes(&k),
        };
        if let Ok(key) = key
            && !out.contains(&key)
        {
            out.push(key);
        }
    }
    out
}

impl IdentityRecord {
    /// A record as a [`crate::LiveState`] stores it (its `record`), if it
    /// is one.
    pub fn from_stored(bytes: &[u8]) -> Option<Self> {
        Self::decode(bytes).ok()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::lifecycle::{RecordedBirth, RecordedMolt};
    use herald_core::{SigilForm, SigningKey};

    fn birth(key: &SigningKey) -> RecordedBirth {
        RecordedBirth {
            key: *key.public_key().as_bytes(),
            molt_policy: None,
            duress_witness: None,
            lineage: Vec::new(),
        }
    }

    fn molt(from: &SigningKey, to: &SigningKey, not_before: u64, proven: bool) -> RecordedMolt {
        RecordedMolt {
            id: [1; 32],
            from: *from.public_key().as_bytes(),
            new_key: *to.public_key().as_bytes(),
            ts: not_before - 10,
            not_before,
            cooloff: false,
            cosign_missing: false,
            disputed: false,
            proven,
            leaf: Vec::new(),
        }
    }

    #[test]
    fn birth_then_molt_then_deprecation() {
        let (old, new) = (
            SigningKey::from_seed(&[1; 32]),
            SigningKey::from_seed(&[2; 32]),
        );
        let sigil = old.sigil(SigilForm::Default);
        let keyring = Keyring::new();
        let none = signing_keys(&keyring, &sigil, None, true, 100);
        assert!(none.is_empty(), "nothing witnessed, nothing pinned");
        let mut r = IdentityRecord {
            birth: Some(birth(&old)),
            ..IdentityRecord::default()
        };
        assert_eq!(
            signing_keys(&keyring, &sigil, Some(&r), true, 100),
            [old.public_key()]
        );
        assert!(signing_keys(&keyring, &sigil, Some(&r), false, 100).is_empty());
        // Another sigil never gets this identity's keys.
        let other = new.sigil(SigilForm::Default);
        assert!(signing_keys(&keyring, &other, Some(&r), true, 100).is_empty());
        r.molts.push(molt(&old, &new, 200, true));
        assert_eq!(
            signing_keys(&keyring, &sigil, Some(&r), true, 199),
            [old.public_key()]
        );
        assert_eq!(
            signing_keys(&keyring, &sigil, Some(&r), true, 200),
            [new.public_key()]
        );
        r.molts[0].proven = false;
        assert_eq!(
            signing_keys(&keyring, &sigil, Some(&r), true, 200),
            [new.public_key()]
        );
        // A molt refused (rule 2's cool-off) neither retires nor adds a key.
        r.molts[0].cooloff = true;
        assert_eq!(
            signing_keys(&keyring, &sigil, Some(&r), true, 200),
            [old.public_key()]
        );
        r.molts[0].cooloff = false;
        r.deprecated = Some(300);
        assert_eq!(
            signing_keys(&keyring, &sigil, Some(&r), true, 300),
            [new.public_key()]
        );
        assert!(signing_keys(&keyring, &sigil, Some(&r), true, 301).is_empty());
        r.deprecated = None;
        r.disputed = true;
        assert!(signing_keys(&keyring, &sigil, Some(&r), true, 250).is_empty());
    }

    #[test]
    fn a_pinned_key_needs_no_birth() {
        let k = SigningKey::from_seed(&[3; 32]);
        let mut keyring = Keyring::new();
        keyring.insert(k.public_key(), crate::keyring::Provenance::Pinned);
        let sigil = k.sigil(SigilForm::Long);
        assert_eq!(
            signing_keys(&keyring, &sigil, None, false, 1),
            [k.public_key()]
        );
    }

    #[test]
    fn a_stored_record_reads_back() {
        let k = SigningKey::from_seed(&[4; 32]);
        let r = IdentityRecord {
            birth: Some(birth(&k)),
            deprecated: Some(9),
            ..IdentityRecord::default()
        };
        assert_eq!(IdentityRecord::from_stored(&r.encode()), Some(r));
        assert_eq!(IdentityRecord::from_stored(b"junk"), None);
    }
}
