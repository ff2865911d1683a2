//! A resolution channel (PROFILE.md P15): DNS, a conduit, the Mainline
//! DHT. A channel only proposes answers; the [`crate::Resolver`] checks
//! every one against its sigil before it is used.

use core::future::Future;
use core::pin::Pin;

use herald_core::Sigil;

use crate::{Handle, ResolveError, Resolved, Source};

/// What a [`Channel`] is asked: a handle, a sigil, or both (a sender's
/// `from` and the handle its `handle` attestation claims, P15: the answer
/// must name that sigil at that handle).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Query {
    /// The handle to look up (`acme.com`, `alice@acme.com`), if any.
    pub handle: Option<Handle>,
    /// The sigil whose key is wanted, if known.
    pub sigil: Option<Sigil>,
}

impl Query {
    /// Which sigils does `handle` name (`herald resolve HANDLE`)?
    pub fn handle(handle: Handle) -> Self {
        Self {
            handle: Some(handle),
            sigil: None,
        }
    }

    /// Which key is `sigil` (`herald resolve SIGIL`)?
    pub fn sigil(sigil: Sigil) -> Self {
        Self {
            handle: None,
            sigil: Some(sigil),
        }
    }

    /// Does `handle` name `sigil`, and with which key (a sender's `handle`
    /// attestation, P15: both directions agree)?
    pub fn sigil_at(sigil: Sigil, handle: Handle) -> Self {
        Self {
            handle: Some(handle),
            sigil: Some(sigil),
        }
    }
}

/// A channel's pending answer.
pub type Lookup<'a> =
    Pin<Box<dyn Future<Output = Result<Vec<Resolved>, ResolveError>> + Send + 'a>>;

/// One way of learning keys (PROFILE.md P15).
///
/// [`Channel::lookup`] proposes answers for a [`Query`]: every key with
/// the sigil it is claimed for, and, for DNS, the handle it was found at.
/// `Ok(vec![])` means the channel knows nothing (or cannot answer this
/// kind of query, e.g. DNS asked for a bare sigil). The resolver, not the
/// channel, checks each key against its sigil, keeps only the answers for
/// the asked sigil and handle, caches them, and bounds the lookup in time;
/// a channel still bounds what it reads (answer sizes).
pub trait Channel: Send + Sync {
    /// Which channel this is (its `key_source` in reports).
    fn source(&self) -> Source;

    /// Propose answers for `query`.
    fn lookup<'a>(&'a self, query: &'a Query) -> Lookup<'a>;
}
