//! HERALD key resolution (PROFILE.md P15, spec §2.1, §8.1): a sigil or a
//! handle (`acme.com`, `alice@acme.com`) to a key.
//!
//! A [`Resolver`] asks, in order, the pinned keyring, the births it holds
//! (P7), then the [`Channel`]s the caller enables (DNS, conduits, the
//! Mainline DHT, in the caller's order). Every answer is checked against
//! its sigil (the key must hash to it, P2) before it is used, so a channel
//! can fail to answer but never substitute a key; a channel that fails or
//! times out is reported in the [`Resolution`], never trusted. Answers are
//! cached for their TTL, and resolution is bounded in time (5 s by
//! default, [`DEFAULT_TIMEOUT`]) and in answer size.
//!
//! Every item is reached by one path, at the crate root (the modules are
//! private).
#![forbid(unsafe_code)]

mod cache;
mod channel;
mod conduit;
#[cfg(feature = "dht")]
mod dht;
mod dns;
mod error;
mod handle;
mod herald;
mod resolved;
mod resolver;

pub use channel::{Channel, Lookup, Query};
pub use conduit::{CONDUIT_TIMEOUT, ConduitChannel};
#[cfg(feature = "dht")]
pub use dht::{
    AnnounceError, DEFAULT_DHT_TIMEOUT, DEFAULT_MAX_PEERS, DHT_DOMAIN, DhtAnnouncer, DhtChannel,
    DhtConfig, DhtRecordError, MAX_RECORDS, dht_conduit_url_ok, dht_info_hash,
};
pub use dns::{
    AnchorError, DnsChannel, DnsServer, MAX_DNS_ANSWER, MAX_DNS_RECORDS, MAX_TRUST_ANCHORS,
    TrustAnchors,
};
pub use error::ResolveError;
pub use handle::Handle;
pub use herald::{
    Fetched, HERALD_TIMEOUT, HeraldChannel, MAX_CERTIFICATION_ITEMS, MAX_CERTIFICATIONS_BYTES,
};
pub use herald_core::handle::{HandleError, MAX_HANDLE_LEN};
pub use resolved::{Resolved, Source};
pub use resolver::{DEFAULT_TIMEOUT, Failure, MAX_CACHED, Resolution, Resolver};
