//! A Mainline DHT node of our own (PROFILE.md P15 *Distributed lookup*):
//! which nodes it bootstraps from and which address it binds.

use std::io;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, ToSocketAddrs};
use std::time::Duration;

use mainline::Dht;
use mainline::async_dht::AsyncDht;

/// How long a DHT lookup may take by default: within the resolver's 5 s
/// in all ([`crate::DEFAULT_TIMEOUT`]), leaving time for the channels asked
/// before it.
pub const DEFAULT_DHT_TIMEOUT: Duration = Duration::from_secs(4);

/// Most announced peers (conduits) one lookup asks for the key.
pub const DEFAULT_MAX_PEERS: usize = 8;

/// Most BEP 44 items one lookup reads before it keeps the newest valid one.
pub const MAX_RECORDS: usize = 32;

/// How a DHT node is set up.
///
/// `bootstrap` empty means the public Mainline DHT (the `mainline` crate's
/// default routers): used only when a user asks for the DHT without naming
/// bootstrap nodes. A node whose bootstrap nodes are all loopback addresses
/// binds 127.0.0.1 and asks only loopback peers (a local network, e.g. a
/// test's: nothing can leave the machine); any other binds 0.0.0.0 and
/// never asks loopback, private or link-local peers.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct DhtConfig {
    /// Bootstrap nodes, `HOST:PORT` (IPv4: BEP 5 as the crate implements it).
    pub bootstrap: Vec<String>,
    /// The UDP port to bind (0: any free port).
    pub port: u16,
    /// The whole lookup's bound ([`DEFAULT_DHT_TIMEOUT`]).
    pub timeout: Duration,
    /// Most announced peers asked ([`DEFAULT_MAX_PEERS`]).
    pub max_peers: usize,
}

impl Default for DhtConfig {
    fn default() -> Self {
        Self {
            bootstrap: Vec::new(),
            port: 0,
            timeout: DEFAULT_DHT_TIMEOUT,
            max_peers: DEFAULT_MAX_PEERS,
        }
    }
}

impl DhtConfig {
    /// The public DHT, other settings at their defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Bootstrap from `nodes` (`HOST:PORT`) instead of the public DHT.
    #[must_use]
    pub fn with_bootstrap(mut self, nodes: Vec<String>) -> Self {
        self.bootstrap = nodes;
        self
    }

    /// Bound each lookup to `timeout`.
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Ask at most `n` announced peers.
    #[must_use]
    pub fn with_max_peers(mut self, n: usize) -> Self {
        self.max_peers = n;
        self
    }

    /// Bind UDP port `port`.
    #[must_use]
    pub fn with_port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }
}

/// A running node and whether its network is loopback-only.
pub(super) struct Node {
    pub(super) dht: AsyncDht,
    pub(super) local: bool,
    pub(super) addr: SocketAddrV4,
}

/// The bootstrap nodes' IPv4 addresses; an error names a node that does
/// not resolve to one.
fn resolve_bootstrap(nodes: &[String]) -> io::Result<Vec<SocketAddrV4>> {
    let mut out = Vec::new();
    for node in nodes {
        let before = out.len();
        out.extend(node.to_socket_addrs()?.filter_map(|a| match a {
            SocketAddr::V4(v4) => Some(v4),
            SocketAddr::V6(_) => None,
        }));
        if out.len() == before {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("DHT bootstrap node {node:?} has no IPv4 address"),
            ));
        }
    }
    Ok(out)
}

/// Start a node for `config` (its actor thread runs until dropped). An
/// announcer on a loopback-only network serves other nodes' requests from
/// the start (server mode); otherwise the crate's adaptive mode decides.
pub(super) fn start(config: &DhtConfig, announcer: bool) -> io::Result<Node> {
    let mut builder = Dht::builder();
    builder.port(config.port);
    // Each UDP request waits at most a quarter of the lookup, so an
    // unresponsive node cannot eat the whole bound.
    builder.request_timeout((config.timeout / 4).clamp(
        Duration::from_millis(200),
        mainline::DEFAULT_REQUEST_TIMEOUT,
    ));
    let local = if config.bootstrap.is_empty() {
        tracing::info!("DHT: bootstrapping from the public Mainline DHT");
        builder.bind_address(Ipv4Addr::UNSPECIFIED);
        false
    } else {
        let nodes = resolve_bootstrap(&config.bootstrap)?;
        let local = nodes.iter().all(|a| a.ip().is_loopback());
        builder.bootstrap(&nodes).bind_address(if local {
            Ipv4Addr::LOCALHOST
        } else {
            Ipv4Addr::UNSPECIFIED
        });
        local
    };
    if announcer && local {
        builder.server_mode();
    }
    let dht = builder.build()?;
    // The actor thread answers within one socket read timeout (50 ms).
    #[allow(deprecated)]
    let addr = dht.info().local_addr();
    Ok(Node {
        dht: dht.as_async(),
        local,
        addr,
    })
}

/// Whether a peer announced on the DHT may be asked: on a loopback-only
/// network only loopback peers; otherwise only globally routable ones (a
/// DHT answer must not make us probe this host or its private network).
pub(super) fn may_ask(peer: &SocketAddrV4, local: bool) -> bool {
    let ip = peer.ip();
    if peer.port() == 0 {
        return false;
    }
    if local {
        return ip.is_loopback();
    }
    !(ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || ip.octets()[0] == 0
        || (ip.octets()[0] == 100 && (ip.octets()[1] & 0xc0) == 64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peers_asked() {
        let p = |a: [u8; 4], port| SocketAddrV4::new(Ipv4Addr::from(a), port);
        assert!(may_ask(&p([127, 0, 0, 1], 80), true));
        assert!(!may_ask(&p([127, 0, 0, 1], 0), true));
        assert!(!may_ask(&p([8, 8, 8, 8], 80), true));
        assert!(may_ask(&p([8, 8, 8, 8], 80), false));
        for private in [
            [127, 0, 0, 1],
            [10, 1, 2, 3],
            [192, 168, 1, 1],
            [172, 16, 0, 1],
            [169, 254, 1, 1],
            [0, 0, 0, 0],
            [100, 64, 0, 1],
            [224, 0, 0, 1],
        ] {
            assert!(!may_ask(&p(private, 80), false), "{private:?}");
        }
    }

    #[test]
    fn a_bootstrap_name_without_ipv4_is_an_error() {
        assert!(resolve_bootstrap(&["[::1]:1".to_owned()]).is_err());
        assert_eq!(
            resolve_bootstrap(&["127.0.0.1:9".to_owned()]).ok(),
            Some(vec![SocketAddrV4::new(Ipv4Addr::LOCALHOST, 9)])
        );
    }
}
