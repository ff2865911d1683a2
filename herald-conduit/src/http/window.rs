//! The replay window of signed requests (CONDUIT.md *Who may read what*:
//! "each signature once (a replayed request is refused)").
//!
//! A signature is accepted only within [`MAX_AGE`] seconds of its
//! `created`, so it need be remembered only until `created + MAX_AGE`:
//! the window keeps each accepted signature until then and forgets it
//! after, in bounded memory — at most [`MAX_REMEMBERED`] signatures; past
//! that, new signed requests are turned away (`503`) until the oldest
//! expire, rather than forgetting one early (which would let it be
//! replayed).
//!
//! A signature is remembered by the first [`KEY_LEN`] bytes of its `R`
//! half: Ed25519's `R` is derived from the key and the signed base
//! (RFC 8032), so two different signed requests share those bytes with
//! probability 2^-128.
//!
//! The window is this conduit's; a fleet's conduits also claim each
//! signature in their shared database ([`crate::backend::Backend::claim_read`]),
//! so a request accepted by one is refused by all (docs/conduit.md *Who
//! may read what*).

use std::collections::{BTreeMap, HashSet};
use std::sync::Mutex;

/// Seconds a signature is accepted either side of its `created`
/// (CONDUIT.md: within 300 s).
pub(crate) const MAX_AGE: u64 = 300;
/// Signatures remembered at most (about 48 MiB at most).
pub(crate) const MAX_REMEMBERED: usize = 1 << 20;
/// Bytes of a signature that name it.
pub(crate) const KEY_LEN: usize = 16;

/// What names a signature in the window.
pub(crate) type Key = [u8; KEY_LEN];

/// The [`Key`] of `signature`.
pub(crate) fn key_of(signature: &[u8; 64]) -> Key {
    let mut key = [0u8; KEY_LEN];
    key.copy_from_slice(signature.get(..KEY_LEN).unwrap_or(&[0; KEY_LEN]));
    key
}

/// What [`Window::claim`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Claim {
    /// Not seen before: now remembered.
    Fresh,
    /// Seen before: a replay.
    Replayed,
    /// The window is full of signatures not yet expired.
    Full,
}

#[derive(Default)]
struct Inner {
    seen: HashSet<Key>,
    /// Expiry (`created + MAX_AGE`) → the signatures that expire then.
    by_expiry: BTreeMap<u64, Vec<Key>>,
}

/// Signatures accepted and not yet expired.
#[derive(Default)]
pub(crate) struct Window {
    inner: Mutex<Inner>,
    limit: Option<usize>,
}

impl Window {
    /// A window of at most `limit` signatures (default
    /// [`MAX_REMEMBERED`]).
    #[cfg(test)]
    fn with_limit(limit: usize) -> Self {
        Self {
            limit: Some(limit),
            ..Self::default()
        }
    }

    /// Claim `signature`, created at `created`, at `now`: forget what
    /// expired before `now`, then remember it unless it is there already.
    pub(crate) fn claim(&self, signature: &[u8; 64], created: u64, now: u64) -> Claim {
        let key = key_of(signature);
        let mut inner = self
            .inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let Inner { seen, by_expiry } = &mut *inner;
        while let Some(entry) = by_expiry.first_entry() {
            if *entry.key() >= now {
                break;
            }
            for k in entry.remove() {
                seen.remove(&k);
            }
        }
        if seen.contains(&key) {
            return Claim::Replayed;
        }
        if seen.len() >= self.limit.unwrap_or(MAX_REMEMBERED) {
            return Claim::Full;
        }
        seen.insert(key);
        by_expiry
            .entry(created.saturating_add(MAX_AGE))
            .or_default()
            .push(key);
        Claim::Fresh
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sig(n: u8) -> [u8; 64] {
        [n; 64]
    }

    #[test]
    fn each_signature_once_until_it_expires() {
        let w = Window::default();
        assert_eq!(w.claim(&sig(1), 1000, 1000), Claim::Fresh);
        assert_eq!(w.claim(&sig(1), 1000, 1100), Claim::Replayed);
        assert_eq!(w.claim(&sig(2), 1000, 1100), Claim::Fresh);
        // Still remembered on its last accepted second, forgotten after
        // (when the conduit refuses it as too old anyway).
        assert_eq!(w.claim(&sig(1), 1000, 1000 + MAX_AGE), Claim::Replayed);
        assert_eq!(w.claim(&sig(1), 1000, 1001 + MAX_AGE), Claim::Fresh);
    }

    #[test]
    fn a_full_window_refuses_rather_than_forgets() {
        let w = Window::with_limit(2);
        assert_eq!(w.claim(&sig(1), 1000, 1000), Claim::Fresh);
        assert_eq!(w.claim(&sig(2), 1010, 1000), Claim::Fresh);
        assert_eq!(w.claim(&sig(3), 1000, 1000), Claim::Full);
        assert_eq!(w.claim(&sig(1), 1000, 1000), Claim::Replayed);
        // The first expires: room again.
        assert_eq!(w.claim(&sig(3), 1301, 1301), Claim::Fresh);
        assert_eq!(w.claim(&sig(4), 1301, 1301), Claim::Full);
    }
}
