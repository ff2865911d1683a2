//! The Mainline DHT channel (PROFILE.md P15 *Distributed lookup*), behind
//! the `dht` feature: BEP 5 announces of a sigil's conduits under
//! `SHA-1("herald.dht.v1" || 16-byte sigil digest)`, and BEP 44 records
//! signed by the sigil's own key naming its conduit, through the `mainline`
//! crate. Nothing learned there is trusted beyond what hashes and
//! signatures prove.

mod announce;
mod lookup;
mod node;
pub(crate) mod record;

pub use announce::{AnnounceError, DhtAnnouncer};
pub use lookup::DhtChannel;
pub use node::{DEFAULT_DHT_TIMEOUT, DEFAULT_MAX_PEERS, DhtConfig, MAX_RECORDS};
pub use record::{
    DOMAIN as DHT_DOMAIN, RecordError as DhtRecordError, info_hash as dht_info_hash,
    valid_conduit_url as dht_conduit_url_ok,
};
