//! The Herald channel (PROFILE.md P14, CONDUIT.md `herald heraldry serve`
//! `GET /v1/certifications/{sigil}`): every certification each listed
//! Herald holds about a sigil, with its proof, judged by the verifier's
//! quorum ([`herald_verify::Heralds`]).
//!
//! One `GET` per Herald that has a URL in the list, all at once, each
//! bounded in time ([`HERALD_TIMEOUT`], and the resolver's deadline) and
//! in bytes and items ([`MAX_CERTIFICATIONS_BYTES`],
//! [`MAX_CERTIFICATION_ITEMS`]). What a Herald answers proves nothing by
//! itself: a certification counts only under the P14 rules, and a claim
//! only at the list's threshold of distinct Heralds, so a Herald that lies,
//! withholds or is down can fail to answer but never make a claim
//! certified alone. As a [`crate::Channel`] it answers the key a quorum
//! certifies (`key_source: "herald"`), which the resolver checks against
//! the sigil like any other answer.

use core::time::Duration;
use std::sync::Arc;

use herald_core::{Sigil, SigilForm};
use herald_http::client::{Client, ClientError, Limits, Url};
use herald_verify::{CertificationItem, Certified, Heralds};
use tokio::task::JoinSet;

use crate::{Lookup, Query, ResolveError, Resolved, Source};

/// How long one Herald may take by default.
pub const HERALD_TIMEOUT: Duration = Duration::from_secs(5);

/// Most bytes read of one Herald's answer (a few hundred certifications
/// with their proofs).
pub const MAX_CERTIFICATIONS_BYTES: usize = 4 << 20;

/// Most certifications read of one Herald's answer.
pub const MAX_CERTIFICATION_ITEMS: usize = 1024;

/// The listed Heralds, asked for their certifications.
#[derive(Clone, Debug)]
pub struct HeraldChannel {
    heralds: Arc<Heralds>,
    now: u64,
    timeout: Duration,
    max_bytes: usize,
    max_items: usize,
}

/// What the Heralds answered about one sigil.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct Fetched {
    /// Every certification with its proof, in list order.
    pub items: Vec<CertificationItem>,
    /// Each Herald that did not answer (its URL), and why.
    pub failures: Vec<(String, ResolveError)>,
}

impl HeraldChannel {
    /// Ask `heralds` (their list's URLs), judging at `now` (Unix seconds).
    pub fn new(heralds: Arc<Heralds>, now: u64) -> Self {
        Self {
            heralds,
            now,
            timeout: HERALD_TIMEOUT,
            max_bytes: MAX_CERTIFICATIONS_BYTES,
            max_items: MAX_CERTIFICATION_ITEMS,
        }
    }

    /// Bound each request to `timeout`.
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Read at most `max_bytes` and `max_items` of each answer.
    #[must_use]
    pub fn with_limits(mut self, max_bytes: usize, max_items: usize) -> Self {
        self.max_bytes = max_bytes;
        self.max_items = max_items;
        self
    }

    /// The Heralds.
    pub fn heralds(&self) -> &Heralds {
        &self.heralds
    }

    /// Every listed Herald's certifications about `sigil` (asked by its
    /// default form), all Heralds at once.
    pub async fn fetch(&self, sigil: &Sigil) -> Fetched {
        let subject = sigil.to_form(SigilForm::Default).unwrap_or(*sigil);
        let client = Client::new(Limits {
            connect_timeout: self.timeout,
            timeout: self.timeout,
            max_body: self.max_bytes,
        });
        let mut asks = JoinSet::new();
        for (n, h) in self.heralds.list().heralds().iter().enumerate() {
            let Some(text) = h.url.clone() else { continue };
            let max_items = self.max_items;
            asks.spawn(async move {
                let answer = ask(client, &text, &subject, max_items).await;
                (n, text, answer)
            });
        }
        let mut answers = Vec::new();
        while let Some(done) = asks.join_next().await {
            if let Ok(answer) = done {
                answers.push(answer);
            }
        }
        answers.sort_by_key(|(n, _, _)| *n);
        let mut fetched = Fetched::default();
        for (_, url, answer) in answers {
            match answer {
                Ok(items) => fetched.items.extend(items),
                Err(e) => {
                    tracing::warn!(herald = %url, %sigil, error = %e, "a Herald gave no certifications");
                    fetched.failures.push((url, e));
                }
            }
        }
        fetched
    }

    /// What the quorum certifies about `sigil` from the Heralds' answers
    /// (and `also`, certifications the caller holds), with the Heralds that
    /// did not answer.
    pub async fn certified(
        &self,
        sigil: &Sigil,
        also: &[CertificationItem],
    ) -> (Certified, Vec<(String, ResolveError)>) {
        let mut fetched = self.fetch(sigil).await;
        fetched.items.extend_from_slice(also);
        (
            self.heralds.judge(&fetched.items, self.now),
            fetched.failures,
        )
    }
}

/// One Herald's `GET /v1/certifications/{sigil}`; `404` is no
/// certification.
async fn ask(
    client: Client,
    text: &str,
    subject: &Sigil,
    max_items: usize,
) -> Result<Vec<CertificationItem>, ResolveError> {
    let url = Url::parse(text)
        .and_then(|u| u.join(&format!("/v1/certifications/{subject}")))
        .map_err(|e| ResolveError::Unreachable {
            detail: format!("Herald URL {text:?}: {e}"),
        })?;
    let response = client.get(&url).await.map_err(|e| match e {
        ClientError::Timeout | ClientError::ConnectTimeout => ResolveError::Timeout,
        ClientError::TooLarge(limit) => ResolveError::TooLarge { limit },
        other => ResolveError::Unreachable {
            detail: format!("{}: {other}", url.authority()),
        },
    })?;
    match response.status {
        200 => {}
        404 => return Ok(Vec::new()),
        status => {
            return Err(ResolveError::Unreachable {
                detail: format!("{}: HTTP {status}", url.authority()),
            });
        }
    }
    CertificationItem::decode_sequence(&response.body, max_items).map_err(|e| {
        ResolveError::Malformed {
            problem: format!("{}: {e}", url.authority()),
        }
    })
}

impl crate::Channel for HeraldChannel {
    fn source(&self) -> Source {
        Source::Herald
    }

    /// The key a quorum of the Heralds certifies for the sigil asked; a
    /// bare handle is not theirs to answer here.
    fn lookup<'a>(&'a self, query: &'a Query) -> Lookup<'a> {
        Box::pin(async move {
            let Some(sigil) = query.sigil else {
                return Ok(Vec::new());
            };
            let (certified, failures) = self.certified(&sigil, &[]).await;
            let answers: Vec<Resolved> = certified
                .keys()
                .filter(|k| sigil.names_key(k.as_bytes()))
                .map(|k| Resolved::new(sigil, k, Source::Herald))
                .collect();
            match (answers.is_empty(), failures.into_iter().next()) {
                (true, Some((_, e))) => Err(e),
                _ => Ok(answers),
            }
        })
    }
}
