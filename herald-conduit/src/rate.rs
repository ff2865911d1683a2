//! Rate limits (CONDUIT.md `429 rate_limited`; docs/conduit.md *Hostile
//! posts*): a token bucket per sender sigil (`--rate`, `--burst`), and one
//! bucket shared by every post from a sender the conduit holds no key for
//! and every birth (`--rate-unknown`).
//!
//! A sigil's bucket is charged only for a post whose origin signature
//! verified ([`Prechecked::origin_verified`]): a post anyone could forge,
//! such as an unsigned one naming a victim's `from`, never spends the
//! victim's tokens. A birth verifies under the key it brings itself, so
//! births share the unknown senders' bucket: fresh keys cost nothing to
//! make, and a per-sigil rate does not limit them.
//!
//! The per-sigil map is bounded ([`MAX_SENDERS`]): a full bucket is the
//! same as none and is dropped first; past that, the bucket charged the
//! longest ago.

use herald_http::rate::{Limit, PerKey, Shared};
use herald_verify::Prechecked;

use crate::config::Config;
use crate::stored::RECIPIENT_LEN;

/// Most sender buckets kept (each ~60 bytes with its map slot).
pub(crate) const MAX_SENDERS: usize = 65_536;

/// The conduit's rate limits, on herald-http's token buckets (the
/// Herald's are the same, herald-heraldry).
#[derive(Debug)]
pub(crate) struct Limiter {
    senders: PerKey<[u8; RECIPIENT_LEN]>,
    unknowns: Shared,
}

impl Limiter {
    pub(crate) fn new(config: &Config) -> Self {
        let sender = config.rate.filter(|r| *r > 0).and_then(|rate| {
            let rate = f64::from(rate);
            let burst = f64::from(config.burst.unwrap_or(0).max(1)).max(rate.min(1.0));
            Limit::new(rate, burst)
        });
        let unknown = (config.rate_unknown > 0).then(|| {
            let rate = f64::from(config.rate_unknown);
            Limit::new(rate, rate.max(1.0))
        });
        Self::with_cap(sender, unknown.flatten(), MAX_SENDERS)
    }

    fn with_cap(sender: Option<Limit>, unknown: Option<Limit>, cap: usize) -> Self {
        Self {
            senders: PerKey::new(sender, cap),
            unknowns: Shared::new(unknown),
        }
    }

    /// Charge a prechecked post: its sender's bucket when its origin
    /// verified, the unknown senders' bucket when it is a birth or its
    /// sender has no key here; `Err(seconds)` when that bucket is empty.
    /// Any other post (a forgery naming a known sender) is charged nothing:
    /// it is refused `422` for its origin, at the cost of at most one
    /// verification (its co-signatures are verified only after its origin).
    pub(crate) fn charge(
        &self,
        pre: &Prechecked<'_>,
        sender: Option<[u8; RECIPIENT_LEN]>,
        birth: bool,
    ) -> Result<(), u64> {
        let verified = pre.origin_verified();
        if (verified && birth) || (!verified && pre.origin_signer_unknown()) {
            return self.take_unknown();
        }
        match sender {
            Some(s) if verified => self.take_sender(s),
            _ => Ok(()),
        }
    }

    /// One token of the unknown senders' bucket (also charged by a signed
    /// read before its sigil's keys are looked up: `http::reads`).
    pub(crate) fn take_unknown(&self) -> Result<(), u64> {
        self.unknowns.take()
    }

    /// One token of `sender`'s bucket.
    fn take_sender(&self, sender: [u8; RECIPIENT_LEN]) -> Result<(), u64> {
        self.senders.take(&sender)
    }

    /// Sender buckets held.
    #[cfg(test)]
    fn senders(&self) -> usize {
        self.senders.len()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_sender_map_stays_bounded() {
        let l = Limiter::with_cap(Limit::new(1.0, 1.0), None, 100);
        for i in 0..1_000u32 {
            let mut s = [0u8; RECIPIENT_LEN];
            s[..4].copy_from_slice(&i.to_be_bytes());
            assert!(l.take_sender(s).is_ok());
            // A sender just charged is refused until its token returns.
            assert!(l.take_sender(s).is_err());
            assert!(l.senders() <= 100);
        }
        assert_eq!(l.senders(), 100);
    }

    #[test]
    fn the_unknown_bucket_holds_one_second() {
        let l = Limiter::with_cap(None, Limit::new(5.0, 5.0), 10);
        let taken = (0..20).filter(|_| l.take_unknown().is_ok()).count();
        assert_eq!(taken, 5);
        assert_eq!(l.take_unknown(), Err(1));
    }
}
