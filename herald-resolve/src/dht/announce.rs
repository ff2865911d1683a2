//! Announcing on the Mainline DHT (PROFILE.md P15 *Distributed lookup*):
//! a conduit announces its own address under the info-hash of each sigil
//! it serves (BEP 5: the address is the one the DHT nodes see the
//! announce come from, the port the conduit's), and an agent publishes
//! the BEP 44 record, signed by its own key, naming its conduit.

use std::io;
use std::net::SocketAddrV4;
use std::time::{SystemTime, UNIX_EPOCH};

use herald_core::{Sigil, SigningKey};

use super::node::{self, DhtConfig, Node};
use super::record;

/// Why an announce or a publication did not happen.
#[derive(Debug)]
#[non_exhaustive]
pub enum AnnounceError {
    /// The sigil has no info-hash (a short or reserved sigil, P2).
    NoInfoHash(Sigil),
    /// The record could not be made.
    Record(record::RecordError),
    /// No DHT node took it (none reachable, or all refused).
    Dht(String),
}

impl core::fmt::Display for AnnounceError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::NoInfoHash(s) => write!(
                f,
                "{s} cannot be announced on the DHT: a short or reserved sigil carries too few digest bytes"
            ),
            Self::Record(e) => e.fmt(f),
            Self::Dht(e) => write!(f, "no DHT node stored it: {e}"),
        }
    }
}

impl std::error::Error for AnnounceError {}

/// A DHT node that announces conduits and publishes records.
pub struct DhtAnnouncer {
    node: Node,
}

impl core::fmt::Debug for DhtAnnouncer {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("DhtAnnouncer")
            .field("addr", &self.node.addr)
            .finish_non_exhaustive()
    }
}

impl DhtAnnouncer {
    /// Start a DHT node for `config`. It serves other nodes' requests
    /// (server mode) on a loopback-only network, and in the crate's
    /// adaptive mode otherwise.
    pub fn new(config: &DhtConfig) -> io::Result<Self> {
        Ok(Self {
            node: node::start(config, true)?,
        })
    }

    /// The UDP address this node is bound to.
    pub fn local_addr(&self) -> SocketAddrV4 {
        self.node.addr
    }

    /// Announce (BEP 5) that `sigil`'s keys and mail are served on `port`
    /// of the address the DHT sees this node at.
    pub async fn announce_conduit(&self, sigil: &Sigil, port: u16) -> Result<(), AnnounceError> {
        let info_hash = record::info_hash(sigil)
            .map(mainline::Id::from)
            .ok_or(AnnounceError::NoInfoHash(*sigil))?;
        self.node
            .dht
            .announce_peer(info_hash, Some(port))
            .await
            .map(|_| ())
            .map_err(|e| AnnounceError::Dht(e.to_string()))
    }

    /// Publish (BEP 44) `key`'s record naming `conduit`; its sequence
    /// number is the current Unix second, or one above the newest record
    /// already there.
    pub async fn publish(&self, key: &SigningKey, conduit: &str) -> Result<i64, AnnounceError> {
        let public = *key.public_key().as_bytes();
        let newest = self
            .node
            .dht
            .get_mutable_most_recent(&public, Some(record::DOMAIN))
            .await
            .map(|item| item.seq());
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
        let seq = match newest {
            Some(seen) if seen >= now => seen.saturating_add(1),
            _ => now,
        };
        let item = record::sign(key, conduit, seq).map_err(AnnounceError::Record)?;
        self.node
            .dht
            .put_mutable(item, newest)
            .await
            .map(|_| seq)
            .map_err(|e| AnnounceError::Dht(e.to_string()))
    }
}
