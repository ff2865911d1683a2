//! The conduit channel (PROFILE.md P15 *Conduits*, CONDUIT.md `GET
//! /v1/keys/{sigil}`): a sigil's birth, molts and deprecation from any
//! conduit, learned without trusting it.
//!
//! One `GET` on herald-http's client, bounded in time (the resolver's
//! deadline, and [`ConduitChannel::with_timeout`]) and in bytes
//! ([`herald_verify::KEYS_MAX_BYTES`]); the answer is then judged by
//! [`herald_verify::check_keys`] against the sigil asked for, with the
//! caller's pinned keys (the audit logs whose molt proofs count, P8 rule
//! 3). A conduit that answers with anything that does not hold (a birth
//! for another sigil, a molt without its proof, a truncated or oversize
//! body) is a failure, never a key; a conduit that holds nothing (`404`)
//! knows nothing.
//!
//! Used for `--conduit URL`, and for the `conduit=` URL a DNS record names
//! ([`ConduitChannel::named_by`]), whose answer then also says which key
//! is current after molts.

use core::time::Duration;

use herald_core::Sigil;
use herald_http::client::{Client, Limits, Url};
use herald_verify::{KEYS_MAX_BYTES, KeyHistory, Keyring, KeysError, KeysLimits, check_keys};

use crate::{Lookup, Query, ResolveError, Resolved, Source};

/// How long one conduit may take by default (the resolver's whole budget
/// bounds it too).
pub const CONDUIT_TIMEOUT: Duration = Duration::from_secs(5);

/// A conduit asked for `GET /v1/keys/{sigil}`.
#[derive(Debug)]
pub struct ConduitChannel {
    url: Url,
    /// The URL as given (answers name it).
    text: String,
    keyring: Keyring,
    timeout: Duration,
    limits: KeysLimits,
}

impl ConduitChannel {
    /// The conduit at `url` (`http://host[:port][/prefix]`), judging its
    /// answers with `keyring`'s pinned keys (log keys for molt proofs, P8
    /// rule 3).
    pub fn new(url_text: &str, keyring: Keyring) -> Result<Self, ResolveError> {
        let url = Url::parse(url_text).map_err(|e| ResolveError::Unreachable {
            detail: format!("conduit URL {url_text:?}: {e}"),
        })?;
        Ok(Self {
            url,
            text: url_text.to_owned(),
            keyring,
            timeout: CONDUIT_TIMEOUT,
            limits: KeysLimits::default(),
        })
    }

    /// The conduit a DNS answer names (its record's `conduit=`), if any.
    pub fn named_by(answer: &Resolved, keyring: Keyring) -> Option<Result<Self, ResolveError>> {
        answer.conduit.as_deref().map(|u| Self::new(u, keyring))
    }

    /// `answer` (a DNS answer) with the key history of the conduit its
    /// record names (`conduit=`), when that conduit proves one whose own
    /// key is the answer's: the molts and deprecation since the record was
    /// published. `answer` unchanged when it names no conduit or that
    /// conduit knows nothing; the error when its answer does not hold
    /// (the DNS answer itself stands: the record bound the handle and the
    /// sigil's own key).
    pub async fn follow(answer: Resolved, keyring: Keyring) -> (Resolved, Option<ResolveError>) {
        let channel = match Self::named_by(&answer, keyring) {
            None => return (answer, None),
            Some(Err(e)) => return (answer, Some(e)),
            Some(Ok(c)) => c,
        };
        match channel.history(&answer.sigil).await {
            Ok(Some(h)) if h.keys.first().is_some_and(|k| k.key == answer.key) => {
                (answer.with_history(h), None)
            }
            Ok(Some(_)) => (
                answer,
                Some(ResolveError::KeyMismatch {
                    sigil: channel.text.clone(),
                }),
            ),
            Ok(None) => (answer, None),
            Err(e) => (answer, Some(e)),
        }
    }

    /// Bound each request to `timeout`.
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Read at most `limits` of an answer.
    #[must_use]
    pub fn with_limits(mut self, limits: KeysLimits) -> Self {
        self.limits = limits;
        self
    }

    /// The conduit's URL as given.
    pub fn url(&self) -> &Url {
        &self.url
    }

    /// `sigil`'s key history as this conduit proves it; `None` when it
    /// holds nothing of the sigil (`404`).
    pub async fn history(&self, sigil: &Sigil) -> Result<Option<KeyHistory>, ResolveError> {
        let url =
            self.url
                .join(&format!("/v1/keys/{sigil}"))
                .map_err(|e| ResolveError::Unreachable {
                    detail: e.to_string(),
                })?;
        let max_bytes = self.limits.max_bytes.min(KEYS_MAX_BYTES);
        let client = Client::new(Limits {
            connect_timeout: self.timeout,
            timeout: self.timeout,
            max_body: max_bytes,
        });
        let response = client.get(&url).await.map_err(|e| match e {
            herald_http::client::ClientError::Timeout
            | herald_http::client::ClientError::ConnectTimeout => ResolveError::Timeout,
            herald_http::client::ClientError::TooLarge(limit) => ResolveError::TooLarge { limit },
            other => ResolveError::Unreachable {
                detail: format!("{}: {other}", self.url.authority()),
            },
        })?;
        match response.status {
            200 => {}
            404 => return Ok(None),
            status => {
                return Err(ResolveError::Unreachable {
                    detail: format!("{}: HTTP {status}", self.url.authority()),
                });
            }
        }
        match check_keys(&response.body, sigil, &self.keyring, &self.limits) {
            Ok(h) => Ok(Some(h)),
            Err(KeysError::Oversize { limit, .. }) => Err(ResolveError::TooLarge { limit }),
            Err(e) => {
                tracing::warn!(conduit = %self.url.authority(), %sigil, error = %e, "a conduit's keys answer does not hold");
                Err(ResolveError::Malformed {
                    problem: format!("{}: {e}", self.url.authority()),
                })
            }
        }
    }
}

impl crate::Channel for ConduitChannel {
    fn source(&self) -> Source {
        Source::Conduit
    }

    /// A sigil's history; a bare handle is not a conduit's to answer.
    fn lookup<'a>(&'a self, query: &'a Query) -> Lookup<'a> {
        Box::pin(async move {
            let Some(sigil) = query.sigil else {
                return Ok(Vec::new());
            };
            let Some(history) = self.history(&sigil).await? else {
                return Ok(Vec::new());
            };
            let Some(own) = history.keys.first() else {
                return Ok(Vec::new());
            };
            let answer = Resolved::new(sigil, own.key, Source::Conduit)
                .with_conduit(self.text.clone())
                .with_history(history);
            Ok(vec![answer])
        })
    }
}
