//! The DHT channel against a real Mainline DHT testnet on loopback
//! (PROFILE.md P15 *Distributed lookup*; docs/resolution.md *Mainline
//! DHT*). Every node binds 127.0.0.1: nothing leaves the machine.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::net::UdpSocket;
use std::time::{Duration, Instant};

use herald_core::{SigilForm, SigningKey};
use herald_resolve::{DhtChannel, DhtConfig, Query, ResolveError, Resolver, Source};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// A lookup whose only bootstrap node never answers ends within its bound,
/// not resolved, and the node it ran bound loopback only.
#[test]
fn a_silent_dht_gives_not_resolved_within_the_bound() {
    let silent = UdpSocket::bind("127.0.0.1:0").unwrap();
    let config = DhtConfig::new()
        .with_bootstrap(vec![silent.local_addr().unwrap().to_string()])
        .with_timeout(Duration::from_millis(800));
    let channel = DhtChannel::new(&config).unwrap();
    assert!(channel.local_addr().ip().is_loopback());
    let resolver = Resolver::new()
        .with_channel(Box::new(channel))
        .with_timeout(Duration::from_secs(5));
    let sigil = SigningKey::from_seed(&[0x31; 32]).sigil(SigilForm::Default);
    let started = Instant::now();
    let resolution = runtime().block_on(resolver.resolve(&Query::sigil(sigil)));
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert!(!resolution.is_resolved());
    // Either the query ran out of nodes to ask (nothing known) or hit the
    // bound (reported): never an answer.
    for failure in &resolution.failures {
        assert_eq!(failure.source, Source::Dht);
        assert_eq!(failure.error, ResolveError::Timeout);
    }
}

/// The only conduit announced under a sigil accepts and never answers:
/// the lookup ends at its bound with a `Timeout` failure, not resolved.
#[test]
fn a_peer_that_never_answers_times_out() {
    let net = mainline::Testnet::builder(4).build().unwrap();
    assert!(net.bootstrap.iter().all(|n| n.starts_with("127.0.0.1:")));
    let config = DhtConfig::new()
        .with_bootstrap(net.bootstrap.clone())
        .with_timeout(Duration::from_millis(1500));
    let tarpit = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let sigil = SigningKey::from_seed(&[0x32; 32]).sigil(SigilForm::Default);
    let announcer = herald_resolve::DhtAnnouncer::new(&config).unwrap();
    let rt = runtime();
    rt.block_on(announcer.announce_conduit(&sigil, tarpit.local_addr().unwrap().port()))
        .unwrap();
    let channel = DhtChannel::new(&config).unwrap();
    let resolver = Resolver::new().with_channel(Box::new(channel));
    let started = Instant::now();
    let resolution = rt.block_on(resolver.resolve(&Query::sigil(sigil)));
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert!(!resolution.is_resolved());
    assert_eq!(resolution.failures.len(), 1, "{:?}", resolution.failures);
    assert_eq!(resolution.failures[0].source, Source::Dht);
    assert_eq!(resolution.failures[0].error, ResolveError::Timeout);
}
