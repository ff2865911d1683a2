//! The answer cache (PROFILE.md P15: answers are cached with their TTL).
//! Bounded in entries; only checked answers are stored.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

use crate::{Query, Resolved, Source};

/// A channel's answers to a query, and when they expire.
type Entries = HashMap<(Source, Query), (Instant, Vec<Resolved>)>;

/// Answers by channel and query, until they expire.
#[derive(Debug)]
pub(crate) struct Cache {
    entries: Mutex<Entries>,
    capacity: usize,
}

impl Cache {
    /// An empty cache holding at most `capacity` queries' answers.
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            entries: Mutex::new(HashMap::new()),
            capacity,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Entries> {
        // A panic elsewhere while holding the lock leaves a map that is
        // still consistent (each operation is one insert or remove).
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The unexpired answers `source` gave to `query`.
    pub(crate) fn get(&self, source: Source, query: &Query, now: Instant) -> Option<Vec<Resolved>> {
        let mut map = self.lock();
        let key = (source, query.clone());
        match map.get(&key) {
            Some((expires, answers)) if *expires > now => Some(answers.clone()),
            Some(_) => {
                map.remove(&key);
                None
            }
            None => None,
        }
    }

    /// Keep `answers` until the shortest of their TTLs passes (not at all
    /// when one has none or a zero TTL).
    pub(crate) fn put(&self, source: Source, query: &Query, answers: &[Resolved], now: Instant) {
        let Some(ttl) = answers.iter().map(|a| a.ttl).min().flatten() else {
            return;
        };
        if ttl.is_zero() || answers.is_empty() {
            return;
        }
        let Some(expires) = now.checked_add(ttl) else {
            return;
        };
        let mut map = self.lock();
        if map.len() >= self.capacity {
            map.retain(|_, (e, _)| *e > now);
        }
        if map.len() < self.capacity {
            map.insert((source, query.clone()), (expires, answers.to_vec()));
        }
    }
}
