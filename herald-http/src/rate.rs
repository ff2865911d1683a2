//! Rate limits every HERALD server answers `429 rate_limited` with
//! (CONDUIT.md `429 rate_limited`, spec §5.2 refusals): token buckets, one
//! per key (a sender's or a subject's sigil) in a bounded map, and one
//! shared by every request the server cannot attribute to anyone it knows.
//!
//! The map is bounded: a full bucket is the same as none and is dropped
//! first; past that, the bucket charged the longest ago.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

/// A rate: `rate` tokens a second, at most `burst` held.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limit {
    rate: f64,
    burst: f64,
}

impl Limit {
    /// `rate` a second, `burst` (at least one) held; `None` when `rate`
    /// is not positive (no limit).
    #[must_use]
    pub fn new(rate: f64, burst: f64) -> Option<Self> {
        (rate > 0.0 && rate.is_finite()).then(|| Self {
            rate,
            burst: burst.max(1.0),
        })
    }

    /// `n` per `seconds`, all of them at once (a window of `seconds`);
    /// `None` when `n` is 0.
    #[must_use]
    pub fn per(n: u32, seconds: u32) -> Option<Self> {
        Self::new(f64::from(n) / f64::from(seconds.max(1)), f64::from(n))
    }
}

/// A token bucket.
#[derive(Debug, Clone, Copy)]
pub struct Bucket {
    tokens: f64,
    at: Instant,
}

impl Bucket {
    /// A bucket holding `limit`'s burst at `now`.
    #[must_use]
    pub fn full(limit: Limit, now: Instant) -> Self {
        Self {
            tokens: limit.burst,
            at: now,
        }
    }

    /// Its tokens at `now`, refilled at the limit's rate up to its burst.
    fn refill(&mut self, now: Instant, limit: Limit) {
        let since = now.saturating_duration_since(self.at).as_secs_f64();
        self.tokens = (self.tokens + since * limit.rate).min(limit.burst);
        self.at = now;
    }

    /// Take one token at `now`; `Err(seconds)` to wait (at least 1).
    pub fn take(&mut self, now: Instant, limit: Limit) -> Result<(), u64> {
        self.refill(now, limit);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            Ok(())
        } else {
            // Bounded: at most 1 / rate seconds, a positive finite rate.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let wait = ((1.0 - self.tokens) / limit.rate).ceil().max(1.0) as u64;
            Err(wait)
        }
    }
}

/// One bucket shared by everyone it charges (`None`: no limit).
#[derive(Debug)]
pub struct Shared {
    limit: Option<Limit>,
    bucket: Mutex<Option<Bucket>>,
}

impl Shared {
    /// A bucket of `limit`.
    #[must_use]
    pub fn new(limit: Option<Limit>) -> Self {
        Self {
            limit,
            bucket: Mutex::new(None),
        }
    }

    /// One token; `Err(seconds)` to wait.
    pub fn take(&self) -> Result<(), u64> {
        let Some(limit) = self.limit else {
            return Ok(());
        };
        let now = Instant::now();
        let mut b = self.bucket.lock().unwrap_or_else(PoisonError::into_inner);
        b.get_or_insert_with(|| Bucket::full(limit, now))
            .take(now, limit)
    }
}

/// A bucket per key, at most `cap` kept (`None`: no limit).
#[derive(Debug)]
pub struct PerKey<K> {
    limit: Option<Limit>,
    map: Mutex<HashMap<K, Bucket>>,
    cap: usize,
}

impl<K: Hash + Eq + Clone> PerKey<K> {
    /// Buckets of `limit`, at most `cap` (at least one) held.
    #[must_use]
    pub fn new(limit: Option<Limit>, cap: usize) -> Self {
        Self {
            limit,
            map: Mutex::new(HashMap::new()),
            cap: cap.max(1),
        }
    }

    /// One token of `key`'s bucket; `Err(seconds)` to wait.
    pub fn take(&self, key: &K) -> Result<(), u64> {
        let Some(limit) = self.limit else {
            return Ok(());
        };
        let now = Instant::now();
        let mut map = self.map.lock().unwrap_or_else(PoisonError::into_inner);
        if !map.contains_key(key) && map.len() >= self.cap {
            // A full bucket is the same as none.
            map.retain(|_, b| {
                b.refill(now, limit);
                b.tokens < limit.burst
            });
            if map.len() >= self.cap
                && let Some(oldest) = map.iter().min_by_key(|(_, b)| b.at).map(|(k, _)| k.clone())
            {
                map.remove(&oldest);
            }
        }
        map.entry(key.clone())
            .or_insert_with(|| Bucket::full(limit, now))
            .take(now, limit)
    }

    /// Buckets held.
    #[must_use]
    pub fn len(&self) -> usize {
        self.map
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// No bucket held.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_map_stays_bounded() {
        let l = PerKey::new(Limit::new(1.0, 1.0), 100);
        for i in 0..1_000u32 {
            assert!(l.take(&i).is_ok());
            // A key just charged is refused until its token returns.
            assert!(l.take(&i).is_err());
            assert!(l.len() <= 100);
        }
        assert_eq!(l.len(), 100);
    }

    #[test]
    fn a_shared_bucket_holds_its_burst() {
        let l = Shared::new(Limit::new(5.0, 5.0));
        let taken = (0..20).filter(|_| l.take().is_ok()).count();
        assert_eq!(taken, 5);
        assert_eq!(l.take(), Err(1));
    }

    #[test]
    fn a_window_refuses_with_the_wait_to_its_next_token() {
        // 3 a minute: three at once, then a token every 20 s.
        let l = PerKey::new(Limit::per(3, 60), 10);
        assert!((0..3).all(|_| l.take(&"a").is_ok()));
        assert_eq!(l.take(&"a"), Err(20));
        // Another key has its own bucket.
        assert!(l.take(&"b").is_ok());
        assert!(Limit::per(0, 60).is_none());
        assert!(PerKey::<u8>::new(None, 1).take(&0).is_ok());
    }
}
