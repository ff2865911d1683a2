//! A resolution's answer: a sigil, its key, and where that came from.

use core::fmt;
use core::time::Duration;

use herald_core::{PublicKey, Sigil};

use crate::Handle;

/// Where a key was learned (PROFILE.md P15; CLI.md `resolve --json`
/// `source`, `verify --json` `key_source`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Source {
    /// A pinned keyring.
    Keyring,
    /// A birth envelope the verifier holds, whose key hashes to its sigil (P7).
    Birth,
    /// A TXT record at a handle's `_herald` name.
    Dns,
    /// A conduit's `GET /v1/keys/{sigil}` (CONDUIT.md).
    Conduit,
    /// The Mainline DHT.
    Dht,
    /// A `key` claim a quorum of the verifier's Heralds certified (PROFILE
    /// P14).
    Herald,
}

impl Source {
    /// The name in reports: `keyring`, `birth`, `dns`, `conduit`, `dht`,
    /// `herald`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Keyring => "keyring",
            Self::Birth => "birth",
            Self::Dns => "dns",
            Self::Conduit => "conduit",
            Self::Dht => "dht",
            Self::Herald => "herald",
        }
    }

    /// The channel named `name` in `--resolve dns,conduit,dht`.
    pub fn from_name(name: &str) -> Option<Self> {
        [
            Self::Keyring,
            Self::Birth,
            Self::Dns,
            Self::Conduit,
            Self::Dht,
        ]
        .into_iter()
        .find(|s| s.name() == name)
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One answer: `key` is the key of `sigil`, learned through `source`.
///
/// Built by a channel with [`Resolved::new`] and the `with_` methods; a
/// [`crate::Resolver`] hands out only answers whose key hashes to their
/// sigil (P2).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Resolved {
    /// The sigil, in the form the channel named it.
    pub sigil: Sigil,
    /// Its key.
    pub key: PublicKey,
    /// Where the key was learned.
    pub source: Source,
    /// The handle the answer was found at (DNS), if any.
    pub handle: Option<Handle>,
    /// For DNS: whether the answer was DNSSEC-validated (`Some(true)` only
    /// then; a zone whose signatures fail is an error, never `Some(false)`).
    pub dnssec: Option<bool>,
    /// How long the answer may be cached (`None`: not cached).
    pub ttl: Option<Duration>,
    /// Where the sigil's mail is delivered (a DNS record's `conduit=`), if said.
    pub conduit: Option<String>,
    /// For a conduit: the sigil's key history (its birth, proven molts and
    /// deprecation, checked by [`herald_verify::check_keys`]). `key` is
    /// the sigil's own key, which hashes to it; the current key is the
    /// history's last, a molt's key that does not (P8).
    pub history: Option<herald_verify::KeyHistory>,
}

impl Resolved {
    /// `key` for `sigil`, from `source`, with nothing else said.
    pub fn new(sigil: Sigil, key: PublicKey, source: Source) -> Self {
        Self {
            sigil,
            key,
            source,
            handle: None,
            dnssec: None,
            ttl: None,
            conduit: None,
            history: None,
        }
    }

    /// With the sigil's key history (a conduit's answer).
    #[must_use]
    pub fn with_history(mut self, history: herald_verify::KeyHistory) -> Self {
        self.history = Some(history);
        self
    }

    /// The key that signs for the sigil now: the history's last (a
    /// molt's), else `key`.
    pub fn current_key(&self) -> &PublicKey {
        self.history
            .as_ref()
            .and_then(|h| h.current())
            .map_or(&self.key, |k| &k.key)
    }

    /// Found at `handle`.
    #[must_use]
    pub fn with_handle(mut self, handle: Handle) -> Self {
        self.handle = Some(handle);
        self
    }

    /// DNSSEC-validated or not.
    #[must_use]
    pub fn with_dnssec(mut self, validated: bool) -> Self {
        self.dnssec = Some(validated);
        self
    }

    /// Cacheable for `ttl`.
    #[must_use]
    pub fn with_ttl(mut self, ttl: Duration) -> Self {
        self.ttl = Some(ttl);
        self
    }

    /// The sigil's conduit.
    #[must_use]
    pub fn with_conduit(mut self, url: String) -> Self {
        self.conduit = Some(url);
        self
    }

    /// Whether the key hashes to the sigil (P2): the check every answer
    /// passes before a resolver hands it out.
    pub fn key_matches(&self) -> bool {
        self.sigil.names_key(self.key.as_bytes())
    }
}
