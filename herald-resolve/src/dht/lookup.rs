//! The DHT channel (PROFILE.md P15 *Distributed lookup*): sigil → the
//! conduits announced under its info-hash (BEP 5) → the key, from one of
//! those conduits' `GET /v1/keys/{sigil}` (checked by hash, as any
//! conduit's answer) → the conduit the sigil's own key names in its BEP 44
//! record, if it published one.
//!
//! An announced address is only a place to ask: whoever announces it
//! proves nothing, and the key it serves counts only when it hashes to the
//! sigil (P2). A record counts only when signed by that key. The lookup is
//! bounded in time ([`DhtConfig::timeout`]) and in the peers and records
//! it considers.

use std::collections::HashSet;
use std::io;
use std::net::SocketAddrV4;
use std::time::Duration;

use futures_lite::StreamExt;
use herald_core::Sigil;
use herald_verify::Keyring;
use tokio::time::{Instant, timeout_at};

use super::node::{self, DhtConfig, MAX_RECORDS, Node};
use super::record;
use crate::{Channel, ConduitChannel, Lookup, Query, ResolveError, Resolved, Source};

/// Most time one announced peer is given to answer.
const PEER_TIME: Duration = Duration::from_secs(2);

/// Most time spent on the BEP 44 record once a key is found.
const RECORD_TIME: Duration = Duration::from_millis(1500);

/// Resolution through the Mainline DHT (P15), a [`Channel`] for
/// [`crate::Resolver`].
pub struct DhtChannel {
    node: Node,
    timeout: Duration,
    max_peers: usize,
    keyring: Keyring,
}

impl core::fmt::Debug for DhtChannel {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("DhtChannel")
            .field("addr", &self.node.addr)
            .field("local", &self.node.local)
            .finish_non_exhaustive()
    }
}

impl DhtChannel {
    /// Start a DHT client node for `config`.
    pub fn new(config: &DhtConfig) -> io::Result<Self> {
        Ok(Self {
            node: node::start(config, false)?,
            timeout: config.timeout,
            max_peers: config.max_peers,
            keyring: Keyring::new(),
        })
    }

    /// Judge the conduits' answers with `keyring`'s pinned keys (the audit
    /// logs whose molt proofs count, P8 rule 3), as [`ConduitChannel`] does.
    #[must_use]
    pub fn with_keyring(mut self, keyring: Keyring) -> Self {
        self.keyring = keyring;
        self
    }

    /// The UDP address this node is bound to.
    pub fn local_addr(&self) -> SocketAddrV4 {
        self.node.addr
    }

    async fn lookup_sigil(&self, sigil: Sigil) -> Result<Vec<Resolved>, ResolveError> {
        let Some(info_hash) = record::info_hash(&sigil).map(mainline::Id::from) else {
            // A short or reserved sigil has no info-hash: nothing to ask.
            return Ok(Vec::new());
        };
        let deadline = Instant::now() + self.timeout;
        let mut peers = self.node.dht.get_peers(info_hash);
        let mut seen = HashSet::new();
        let mut last_error = None;
        let mut timed_out = false;
        'batches: loop {
            let batch = match timeout_at(deadline, peers.next()).await {
                Err(_) => {
                    timed_out = true;
                    break;
                }
                Ok(None) => break,
                Ok(Some(batch)) => batch,
            };
            for peer in batch {
                if seen.len() >= self.max_peers {
                    break 'batches;
                }
                if !node::may_ask(&peer, self.node.local) || !seen.insert(peer) {
                    continue;
                }
                let url = format!("http://{peer}");
                // One slow peer must not hold the others back.
                let now = Instant::now();
                let until = deadline.min(now + PEER_TIME);
                match timeout_at(
                    until,
                    self.ask(&url, sigil, until.saturating_duration_since(now)),
                )
                .await
                {
                    Err(_) if Instant::now() >= deadline => {
                        timed_out = true;
                        break 'batches;
                    }
                    Err(_) => {
                        last_error.get_or_insert(ResolveError::Timeout);
                    }
                    Ok(Ok(answers)) => {
                        if let Some(found) = answers.into_iter().find(Resolved::key_matches) {
                            return Ok(vec![self.with_record(found, url, deadline).await]);
                        }
                    }
                    Ok(Err(error)) => {
                        tracing::debug!(%peer, %error, "DHT peer gave no key");
                        // A bad answer says more than a slow peer.
                        if error != ResolveError::Timeout || last_error.is_none() {
                            last_error = Some(error);
                        }
                    }
                }
            }
        }
        match (last_error, timed_out) {
            (Some(error), _) => Err(error),
            (None, true) => Err(ResolveError::Timeout),
            (None, false) => Ok(Vec::new()),
        }
    }

    /// `found` as a DHT answer: its conduit is the one the sigil's own key
    /// names in a valid BEP 44 record, else the announced `peer_url` that
    /// served the key.
    async fn with_record(
        &self,
        mut found: Resolved,
        peer_url: String,
        deadline: Instant,
    ) -> Resolved {
        found.conduit = Some(match self.record(&found, deadline).await {
            Some(record) => record.conduit,
            None => peer_url,
        });
        found.source = Source::Dht;
        found
    }

    /// The key of `sigil` from the conduit announced at `url` (CONDUIT.md
    /// `GET /v1/keys/{sigil}`, judged as [`ConduitChannel`] judges any
    /// conduit's answer).
    async fn ask(
        &self,
        url: &str,
        sigil: Sigil,
        left: Duration,
    ) -> Result<Vec<Resolved>, ResolveError> {
        ConduitChannel::new(url, self.keyring.clone())?
            .with_timeout(left)
            .lookup(&Query::sigil(sigil))
            .await
    }

    /// The newest valid record of `found`'s key, read until the query ends,
    /// [`MAX_RECORDS`] items, [`RECORD_TIME`] or the deadline: the key is
    /// the answer, the record only says where its mail goes.
    async fn record(&self, found: &Resolved, deadline: Instant) -> Option<record::Record> {
        let until = deadline.min(Instant::now() + RECORD_TIME);
        let mut items = self
            .node
            .dht
            .get_mutable(found.key.as_bytes(), Some(record::DOMAIN), None);
        let mut best: Option<record::Record> = None;
        for _ in 0..MAX_RECORDS {
            let Ok(Some(item)) = timeout_at(until, items.next()).await else {
                break;
            };
            match record::check(&found.sigil, &item) {
                Ok(r) if best.as_ref().is_none_or(|b| r.seq > b.seq) => best = Some(r),
                Ok(_) => {}
                Err(error) => tracing::debug!(%error, "DHT record ignored"),
            }
        }
        best
    }
}

impl Channel for DhtChannel {
    fn source(&self) -> Source {
        Source::Dht
    }

    fn lookup<'a>(&'a self, query: &'a Query) -> Lookup<'a> {
        Box::pin(async move {
            match query.sigil {
                // The DHT is keyed by sigils; a handle alone is DNS's.
                Some(sigil) if query.handle.is_none() => self.lookup_sigil(sigil).await,
                _ => Ok(Vec::new()),
            }
        })
    }
}
