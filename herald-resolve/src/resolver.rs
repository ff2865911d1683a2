//! The resolver (PROFILE.md P15): keyring, births, then the caller's
//! channels in order, every answer checked against its sigil.

use core::fmt;
use std::time::{Duration, Instant};

use herald_verify::{Keyring, Provenance};

use crate::cache::Cache;
use crate::{Channel, Query, ResolveError, Resolved, Source};

/// How long one resolution may take in all, by default (P15).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

/// Most queries whose answers a [`Resolver`] caches.
pub const MAX_CACHED: usize = 4096;

/// A channel that gave no usable answer, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Failure {
    /// The channel.
    pub source: Source,
    /// What went wrong.
    pub error: ResolveError,
}

impl Failure {
    /// `source` gave no usable answer because of `error`.
    #[must_use]
    pub const fn new(source: Source, error: ResolveError) -> Self {
        Self { source, error }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.source, self.error)
    }
}

/// What a resolution found: checked answers from the first source that
/// had any, and every channel that failed before (or instead).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Resolution {
    /// Answers whose keys hash to their sigils and that fit the query.
    pub answers: Vec<Resolved>,
    /// Channels that failed, timed out or gave bad answers.
    pub failures: Vec<Failure>,
}

impl Resolution {
    /// Whether anything was resolved.
    pub fn is_resolved(&self) -> bool {
        !self.answers.is_empty()
    }
}

/// Resolves sigils and handles to keys (PROFILE.md P15).
///
/// Asks the keyring (pinned keys, then keys learned from births) for a
/// bare sigil, then each channel in the order they were added, and stops
/// at the first that gives a checked answer. A query naming a handle is
/// answered by channels only: a keyring does not confirm a handle.
pub struct Resolver {
    keyring: Keyring,
    channels: Vec<Box<dyn Channel>>,
    timeout: Duration,
    cache: Cache,
}

impl fmt::Debug for Resolver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Resolver")
            .field("keys", &self.keyring.len())
            .field(
                "channels",
                &self.channels.iter().map(|c| c.source()).collect::<Vec<_>>(),
            )
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl Default for Resolver {
    fn default() -> Self {
        Self::new()
    }
}

impl Resolver {
    /// A resolver with no keys and no channels, [`DEFAULT_TIMEOUT`].
    pub fn new() -> Self {
        Self {
            keyring: Keyring::new(),
            channels: Vec::new(),
            timeout: DEFAULT_TIMEOUT,
            cache: Cache::new(MAX_CACHED),
        }
    }

    /// Ask `keyring` first (its pinned keys, then the keys it learned from births).
    #[must_use]
    pub fn with_keyring(mut self, keyring: Keyring) -> Self {
        self.keyring = keyring;
        self
    }

    /// Ask `channel` after the keyring and the channels added before.
    #[must_use]
    pub fn with_channel(mut self, channel: Box<dyn Channel>) -> Self {
        self.channels.push(channel);
        self
    }

    /// Bound each resolution to `timeout` in all.
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The channels, in the order they are asked.
    pub fn channels(&self) -> impl Iterator<Item = Source> + '_ {
        self.channels.iter().map(|c| c.source())
    }

    /// Resolve `query`. Needs a tokio runtime with timers.
    pub async fn resolve(&self, query: &Query) -> Resolution {
        let mut out = Resolution::default();
        if let (Some(answer), None) = (self.keyring_answer(query), &query.handle) {
            out.answers.push(answer);
            return out;
        }
        let deadline = Instant::now() + self.timeout;
        for channel in &self.channels {
            let source = channel.source();
            let now = Instant::now();
            if let Some(hit) = self.cache.get(source, query, now) {
                out.answers = hit;
                return out;
            }
            let left = deadline.saturating_duration_since(now);
            let answers = match tokio::time::timeout(left, channel.lookup(query)).await {
                Err(_) => Err(ResolveError::Timeout),
                Ok(result) => result,
            };
            match answers {
                Err(error) => {
                    tracing::debug!(%source, %error, "resolution channel failed");
                    out.failures.push(Failure { source, error });
                }
                Ok(answers) => {
                    let kept = check(query, source, answers, &mut out.failures);
                    if !kept.is_empty() {
                        self.cache.put(source, query, &kept, Instant::now());
                        out.answers = kept;
                        return out;
                    }
                }
            }
        }
        out
    }

    /// The keyring's key for a bare sigil query.
    fn keyring_answer(&self, query: &Query) -> Option<Resolved> {
        let sigil = query.sigil?;
        let (key, provenance) = self.keyring.lookup(&sigil)?;
        let source = match provenance {
            Provenance::Pinned => Source::Keyring,
            Provenance::Birth => Source::Birth,
            Provenance::Dns => Source::Dns,
            Provenance::Conduit => Source::Conduit,
            Provenance::Herald => Source::Herald,
            // A bundle's key verifies envelopes it came with, nothing more.
            Provenance::Bundle => return None,
        };
        Some(Resolved::new(sigil, key, source))
    }
}

/// The answers of `source` that are usable for `query`: the key hashes to
/// the sigil (P2; otherwise a failure is reported), the sigil is the asked
/// one and the handle the asked one (P15: both directions agree).
fn check(
    query: &Query,
    source: Source,
    answers: Vec<Resolved>,
    failures: &mut Vec<Failure>,
) -> Vec<Resolved> {
    let mut kept = Vec::new();
    for mut answer in answers {
        if !answer.key_matches() {
            tracing::warn!(%source, sigil = %answer.sigil, "answer's key does not hash to its sigil");
            failures.push(Failure {
                source,
                error: ResolveError::KeyMismatch {
                    sigil: answer.sigil.to_string(),
                },
            });
            continue;
        }
        if let Some(sigil) = &query.sigil {
            if !sigil.names_key(answer.key.as_bytes()) {
                continue;
            }
            answer.sigil = *sigil;
        }
        if query.handle.is_some() && answer.handle != query.handle {
            continue;
        }
        kept.push(answer);
    }
    kept
}
