//! The keys a sigil may sign reads with (CONDUIT.md *Who may read what*:
//! "a key it holds for that sigil (keyring, birth, molt)"), kept between
//! reads so that a reader's every request does not read the store again.
//!
//! What [`crate::backend::Backend::signing_keys`] answers depends on the
//! sigil's lifecycle record and on the time (a molt's `not_before`, a
//! deprecation's time), so an answer is kept only for the second it was
//! computed at ([`crate::Conduit::now`]) and only while the conduit has
//! committed nothing since: the redb backend counts its commits
//! ([`crate::Conduit::lifecycle_generation`], raised after each commit of
//! received envelopes, accepted or refused, since a refused molt can still
//! dispute a sigil, P8 rule 5), and the count is read before the store is,
//! so an answer read before a commit is never used after it. A fleet
//! keeps nothing: another conduit of the fleet can store a molt or a
//! deprecation at any time.
//!
//! Bounded ([`MAX_KEPT`]): when full, what no longer counts goes first;
//! past that, nothing more is kept until the next second.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use herald_core::{PublicKey, Sigil};

use super::App;
use crate::backend::Failure;

/// Sigils whose keys are kept at most.
const MAX_KEPT: usize = 65_536;

/// One sigil's keys at one second and commit count.
struct Kept {
    at: u64,
    generation: u64,
    keys: Vec<PublicKey>,
}

/// The keys kept per sigil.
#[derive(Default)]
pub(crate) struct SignerKeys {
    inner: Mutex<HashMap<Sigil, Kept>>,
}

impl SignerKeys {
    /// The keys that may sign for `sigil` at `now` (Unix seconds), as
    /// [`crate::backend::Backend::signing_keys`] gives them.
    pub(crate) async fn of(
        &self,
        app: &App,
        sigil: Sigil,
        now: u64,
    ) -> Result<Vec<PublicKey>, Failure> {
        let conduit = &app.conduit;
        let Some(generation) = conduit.lifecycle_generation() else {
            return conduit.backend.signing_keys(sigil, now).await;
        };
        if let Some(keys) = self.get(&sigil, now, generation) {
            return Ok(keys);
        }
        let keys = conduit.backend.signing_keys(sigil, now).await?;
        if !keys.is_empty() {
            self.put(sigil, now, generation, keys.clone());
        }
        Ok(keys)
    }

    fn get(&self, sigil: &Sigil, now: u64, generation: u64) -> Option<Vec<PublicKey>> {
        let inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        inner
            .get(sigil)
            .filter(|k| k.at == now && k.generation == generation)
            .map(|k| k.keys.clone())
    }

    fn put(&self, sigil: Sigil, now: u64, generation: u64, keys: Vec<PublicKey>) {
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        if !inner.contains_key(&sigil) && inner.len() >= MAX_KEPT {
            inner.retain(|_, k| k.at == now && k.generation == generation);
            if inner.len() >= MAX_KEPT {
                return;
            }
        }
        inner.insert(
            sigil,
            Kept {
                at: now,
                generation,
                keys,
            },
        );
    }

    /// Sigils kept (for tests).
    #[cfg(test)]
    fn len(&self) -> usize {
        self.inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use herald_core::{SigilForm, SigningKey};

    fn sigil(n: u32) -> Sigil {
        let mut bytes = [0u8; 32];
        bytes[..4].copy_from_slice(&n.to_be_bytes());
        Sigil::from_key(&bytes, SigilForm::Default)
    }

    #[test]
    fn kept_for_one_second_and_one_commit_count() {
        let s = SignerKeys::default();
        let key = SigningKey::from_seed(&[9; 32]).public_key();
        s.put(sigil(1), 100, 7, vec![key]);
        assert_eq!(s.get(&sigil(1), 100, 7), Some(vec![key]));
        assert_eq!(s.get(&sigil(1), 101, 7), None, "another second");
        assert_eq!(s.get(&sigil(1), 100, 8), None, "a commit since");
        assert_eq!(s.get(&sigil(2), 100, 7), None, "another sigil");
    }

    #[test]
    fn bounded_and_the_stale_go_first() {
        let s = SignerKeys::default();
        let key = SigningKey::from_seed(&[9; 32]).public_key();
        let max = u32::try_from(MAX_KEPT).unwrap_or(u32::MAX);
        for n in 0..=max {
            s.put(sigil(n), 1, 1, vec![key]);
        }
        assert_eq!(s.len(), MAX_KEPT, "full: nothing more kept");
        assert_eq!(s.get(&sigil(max), 1, 1), None);
        s.put(sigil(max), 2, 1, vec![key]);
        assert_eq!(s.len(), 1, "the stale went first");
        assert_eq!(s.get(&sigil(max), 2, 1), Some(vec![key]));
    }
}
