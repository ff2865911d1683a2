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
//! One signer holds at most [`MAX_PER_SIGNER`] of them (an eighth): past
//! its share, that signer's requests are turned away (`503`) until its own
//! oldest expire, and every other signer still reads. One authenticated
//! agent reading as fast as it can therefore never fills the window for
//! the others; filling it takes eight signers the conduit holds keys for,
//! all reading at full speed for 300 s.
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

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Mutex;

/// Seconds a signature is accepted either side of its `created`
/// (CONDUIT.md: within 300 s).
pub(crate) const MAX_AGE: u64 = 300;
/// Signatures remembered at most (about 48 MiB at most).
pub(crate) const MAX_REMEMBERED: usize = 1 << 20;
/// Signatures one signer (its sigil's [`Signer`] bytes) holds at most:
/// an eighth of the window (about 437 signed reads a second, sustained).
pub(crate) const MAX_PER_SIGNER: usize = MAX_REMEMBERED / 8;
/// Bytes of a signature that name it.
pub(crate) const KEY_LEN: usize = 16;

/// What names a signature in the window.
pub(crate) type Key = [u8; KEY_LEN];

/// Who signed: the key-hash prefix of the `keyid` sigil
/// ([`crate::stored::recipient`]).
pub(crate) type Signer = [u8; crate::stored::RECIPIENT_LEN];

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
    /// The window is full of signatures not yet expired, or the signer
    /// holds its share of it.
    Full,
}

#[derive(Default)]
struct Inner {
    seen: HashSet<Key>,
    /// Expiry (`created + MAX_AGE`) → the signatures that expire then,
    /// with their signers.
    by_expiry: BTreeMap<u64, Vec<(Key, Signer)>>,
    /// Signatures held per signer (only signers holding some).
    held: HashMap<Signer, usize>,
}

/// Signatures accepted and not yet expired.
#[derive(Default)]
pub(crate) struct Window {
    inner: Mutex<Inner>,
    /// `(all, per signer)` when not [`MAX_REMEMBERED`] and
    /// [`MAX_PER_SIGNER`].
    limit: Option<(usize, usize)>,
}

impl Window {
    /// A window of at most `limit` signatures, `share` per signer.
    #[cfg(test)]
    fn with_limit(limit: usize, share: usize) -> Self {
        Self {
            limit: Some((limit, share)),
            ..Self::default()
        }
    }

    /// Whether `signature` is remembered (accepted before and not
    /// expired): a replay, refused before its keys are looked up.
    pub(crate) fn holds(&self, signature: &[u8; 64]) -> bool {
        let inner = self
            .inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        inner.seen.contains(&key_of(signature))
    }

    /// Claim `signature` by `signer`, created at `created`, at `now`:
    /// forget what expired before `now`, then remember it unless it is
    /// there already or the window (or the signer's share) is full.
    pub(crate) fn claim(
        &self,
        signature: &[u8; 64],
        signer: Signer,
        created: u64,
        now: u64,
    ) -> Claim {
        let key = key_of(signature);
        let (limit, share) = self.limit.unwrap_or((MAX_REMEMBERED, MAX_PER_SIGNER));
        let mut inner = self
            .inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let Inner {
            seen,
            by_expiry,
            held,
        } = &mut *inner;
        while let Some(entry) = by_expiry.first_entry() {
            if *entry.key() >= now {
                break;
            }
            for (k, s) in entry.remove() {
                seen.remove(&k);
                if let Some(n) = held.get_mut(&s) {
                    *n = n.saturating_sub(1);
                    if *n == 0 {
                        held.remove(&s);
                    }
                }
            }
        }
        if seen.contains(&key) {
            return Claim::Replayed;
        }
        let mine = held.get(&signer).copied().unwrap_or(0);
        if seen.len() >= limit || mine >= share {
            return Claim::Full;
        }
        seen.insert(key);
        *held.entry(signer).or_default() += 1;
        by_expiry
            .entry(created.saturating_add(MAX_AGE))
            .or_default()
            .push((key, signer));
        Claim::Fresh
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sig(n: u8) -> [u8; 64] {
        [n; 64]
    }

    const A: Signer = [0xa; 10];
    const B: Signer = [0xb; 10];

    #[test]
    fn each_signature_once_until_it_expires() {
        let w = Window::default();
        assert!(!w.holds(&sig(1)));
        assert_eq!(w.claim(&sig(1), A, 1000, 1000), Claim::Fresh);
        assert!(w.holds(&sig(1)));
        assert_eq!(w.claim(&sig(1), A, 1000, 1100), Claim::Replayed);
        assert_eq!(w.claim(&sig(2), A, 1000, 1100), Claim::Fresh);
        // Still remembered on its last accepted second, forgotten after
        // (when the conduit refuses it as too old anyway).
        assert_eq!(w.claim(&sig(1), A, 1000, 1000 + MAX_AGE), Claim::Replayed);
        assert_eq!(w.claim(&sig(1), A, 1000, 1001 + MAX_AGE), Claim::Fresh);
    }

    #[test]
    fn a_full_window_refuses_rather_than_forgets() {
        let w = Window::with_limit(2, 2);
        assert_eq!(w.claim(&sig(1), A, 1000, 1000), Claim::Fresh);
        assert_eq!(w.claim(&sig(2), B, 1010, 1000), Claim::Fresh);
        assert_eq!(w.claim(&sig(3), A, 1000, 1000), Claim::Full);
        assert_eq!(w.claim(&sig(1), A, 1000, 1000), Claim::Replayed);
        // The first expires: room again.
        assert_eq!(w.claim(&sig(3), A, 1301, 1301), Claim::Fresh);
        assert_eq!(w.claim(&sig(4), A, 1301, 1301), Claim::Full);
    }

    /// One signer reading as fast as it can fills its share, not the
    /// window: another signer still reads, and the first reads again as
    /// its own signatures expire.
    #[test]
    fn one_signer_never_fills_the_window_for_the_others() {
        let w = Window::default();
        let mut n = 0u32;
        let mut next = || {
            n += 1;
            let mut s = [0u8; 64];
            s[..4].copy_from_slice(&n.to_be_bytes());
            s
        };
        // ~3 500 reads a second for 300 s: more than the whole window.
        let mut refused = 0;
        for i in 0..(MAX_REMEMBERED as u64 + 10) {
            let t = 1000 + i / 3_500;
            if w.claim(&next(), A, t, t) == Claim::Full {
                refused += 1;
            }
        }
        assert!(refused > 0, "the signer's share was never reached");
        let t = 1000 + (MAX_REMEMBERED as u64) / 3_500;
        assert_eq!(w.claim(&next(), B, t, t), Claim::Fresh, "another signer");
        assert_eq!(w.claim(&next(), A, t, t), Claim::Full);
        // A's first signatures expire: A reads again.
        let later = 1000 + MAX_AGE + 1;
        assert_eq!(
            w.claim(&next(), A, later.max(t), later.max(t)),
            Claim::Fresh
        );
    }
}
