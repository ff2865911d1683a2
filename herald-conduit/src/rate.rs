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

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use herald_verify::Prechecked;

use crate::config::Config;
use crate::stored::RECIPIENT_LEN;

/// Most sender buckets kept (each ~60 bytes with its map slot).
pub(crate) const MAX_SENDERS: usize = 65_536;

/// A token bucket.
#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

impl Bucket {
    fn full(burst: f64, now: Instant) -> Self {
        Self {
            tokens: burst,
            at: now,
        }
    }

    /// Its tokens at `now`, refilled at `rate` up to `burst`.
    fn refill(&mut self, now: Instant, rate: f64, burst: f64) {
        let since = now.saturating_duration_since(self.at).as_secs_f64();
        self.tokens = (self.tokens + since * rate).min(burst);
        self.at = now;
    }

    /// Take one token; `Err(seconds)` to wait.
    fn take(&mut self, now: Instant, rate: f64, burst: f64) -> Result<(), u64> {
        self.refill(now, rate, burst);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            Ok(())
        } else {
            Err(((1.0 - self.tokens) / rate).ceil().max(1.0) as u64)
        }
    }
}

/// `(rate, burst)` per second, when limited.
type Limit = Option<(f64, f64)>;

/// The conduit's rate limits.
#[derive(Debug)]
pub(crate) struct Limiter {
    sender: Limit,
    unknown: Limit,
    senders: Mutex<HashMap<[u8; RECIPIENT_LEN], Bucket>>,
    unknowns: Mutex<Option<Bucket>>,
    cap: usize,
}

impl Limiter {
    pub(crate) fn new(config: &Config) -> Self {
        let sender = config.rate.filter(|r| *r > 0).map(|rate| {
            let rate = f64::from(rate);
            let burst = f64::from(config.burst.unwrap_or(0).max(1)).max(rate.min(1.0));
            (rate, burst)
        });
        let unknown = (config.rate_unknown > 0).then(|| {
            let rate = f64::from(config.rate_unknown);
            (rate, rate.max(1.0))
        });
        Self::with_cap(sender, unknown, MAX_SENDERS)
    }

    fn with_cap(sender: Limit, unknown: Limit, cap: usize) -> Self {
        Self {
            sender,
            unknown,
            senders: Mutex::new(HashMap::new()),
            unknowns: Mutex::new(None),
            cap: cap.max(1),
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
        let Some((rate, burst)) = self.unknown else {
            return Ok(());
        };
        let now = Instant::now();
        let mut b = self.unknowns.lock().unwrap_or_else(PoisonError::into_inner);
        b.get_or_insert_with(|| Bucket::full(burst, now))
            .take(now, rate, burst)
    }

    /// One token of `sender`'s bucket.
    fn take_sender(&self, sender: [u8; RECIPIENT_LEN]) -> Result<(), u64> {
        let Some((rate, burst)) = self.sender else {
            return Ok(());
        };
        let now = Instant::now();
        let mut map = self.senders.lock().unwrap_or_else(PoisonError::into_inner);
        if !map.contains_key(&sender) && map.len() >= self.cap {
            // A full bucket is the same as none.
            map.retain(|_, b| {
                b.refill(now, rate, burst);
                b.tokens < burst
            });
            if map.len() >= self.cap
                && let Some(oldest) = map.iter().min_by_key(|(_, b)| b.at).map(|(k, _)| *k)
            {
                map.remove(&oldest);
            }
        }
        map.entry(sender)
            .or_insert_with(|| Bucket::full(burst, now))
            .take(now, rate, burst)
    }

    /// Sender buckets held.
    #[cfg(test)]
    fn senders(&self) -> usize {
        self.senders
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_sender_map_stays_bounded() {
        let l = Limiter::with_cap(Some((1.0, 1.0)), None, 100);
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
        let l = Limiter::with_cap(None, Some((5.0, 5.0)), 10);
        let taken = (0..20).filter(|_| l.take_unknown().is_ok()).count();
        assert_eq!(taken, 5);
        assert_eq!(l.take_unknown(), Err(1));
    }
}
