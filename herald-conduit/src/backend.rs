//! Where a conduit keeps what it accepts: a [`Backend`] (CONDUIT.md
//! *Operation*). Two implement it: [`crate::local`], the redb store in the
//! state directory (the default), and [`crate::fleet`], a PostgreSQL
//! database shared by a fleet of conduits (`--store postgres://...`;
//! docs/conduit.md *Fleet*). The HTTP surface ([`crate::http`]) and the
//! batch writer ([`crate::writer`]) see only this trait, held as
//! `Arc<dyn Backend>`.
//!
//! A storage failure is a [`Failure`]: its text names files or the
//! database, so it is logged and never shown to a client (docs/conduit.md
//! *Storage failures*).

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use herald_core::{PublicKey, Sigil, SigningKey};
use herald_verify::{ConsistencyProof, InclusionProof, SignedTreeHead};

use crate::Conduit;
use crate::erase::{Erasure, Tombstone};
use crate::keys::Indexed;
use crate::page::Page;
use crate::stored::{RECIPIENT_LEN, Stored};
use crate::writer::{Batch, Committed, Prepared, Received};

/// A future a backend answers with (boxed: the trait is object safe).
pub(crate) type Pending<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A failure of the storage: logged, never sent.
pub(crate) type Failure = String;

/// A page read, or why it could not be.
pub(crate) type PageRead = Result<Page, Failure>;

/// What a page lists (CONDUIT.md *Bounded answers*).
pub(crate) enum Listing {
    /// A recipient's inbox, by its sigil's key hash.
    Inbox([u8; RECIPIENT_LEN]),
    /// The envelopes of a trace, by its id.
    Trace([u8; 32]),
}

/// What `GET /v1/proof/inclusion/{id}` finds.
pub(crate) enum Inclusion {
    /// No leaf with that id.
    Unknown,
    /// Its leaf is not under a signed tree head yet.
    NotCovered,
    /// The proof against the latest tree head.
    Proof(Box<InclusionProof>),
}

/// A conduit's storage: the batch writer's transactions, the reads of
/// CONDUIT.md's endpoints, and (notary) the audit log.
pub(crate) trait Backend: Send + Sync {
    /// Whether the storage takes work now (`/healthz`).
    fn healthy(&self) -> Pending<'_, bool>;

    // The writer (crate::writer), tasks: its stages call these in order.

    /// Whether the writer's calls block their thread (redb's commits and
    /// syncs, the rules, signatures: the writer then drives each stage on
    /// a thread of its own, `crate::blocking::own_thread`); else they are
    /// awaited on the runtime's workers, and step off them for their CPU
    /// work (`crate::blocking::off_runtime`).
    fn blocks(&self) -> bool;

    /// Whether this conduit's own writer is the only one that changes
    /// lifecycle records (redb), so that what it read of them stays
    /// current until its next commit (`crate::http::signers`); a fleet's
    /// other conduits write them too.
    fn sole_writer(&self) -> bool;

    /// Precheck the posts of `batch` (P13 origin, signatures in batch
    /// equations) against the senders' lifecycle records as last
    /// committed, and [`crate::writer::settle`] them, on every core.
    fn prepare<'a>(&'a self, batch: Batch<'a>) -> Pending<'a, Vec<Prepared<'a>>>;

    /// Receive `batch` (its posts prepared as `prepared`) in one
    /// transaction and commit it durably; nothing of it is answered yet.
    fn receive<'a>(
        &'a self,
        batch: Batch<'a>,
        prepared: Vec<Prepared<'a>>,
    ) -> Pending<'a, Received>;

    /// Log what `group` stored (notary: one sync, one tree head) and answer
    /// every post of it.
    fn answer<'a>(&'a self, conduit: &'a Conduit, group: Vec<Committed>) -> Pending<'a, ()>;

    /// Between batches: keep the tree head fresh (notary), record what is
    /// pending. Nothing by default.
    fn idle<'a>(&'a self, _conduit: &'a Conduit) -> Pending<'a, ()> {
        Box::pin(std::future::ready(()))
    }

    /// The writer is done (the conduit closes): record what is pending.
    /// Nothing by default.
    fn close<'a>(&'a self, _conduit: &'a Conduit) -> Pending<'a, ()> {
        Box::pin(std::future::ready(()))
    }

    /// How long the writer waits for a post before [`Backend::idle`]: a
    /// tree head every `batch` (`--batch-ms`).
    fn idle_every(&self, batch: Duration) -> Duration {
        batch
    }

    /// Whether a batch may be received while the batches before it are
    /// still being answered ([`crate::writer`]'s pipeline); else one
    /// task receives and answers each batch in turn, and the posts that
    /// arrive meanwhile make the next batch larger.
    fn overlap(&self) -> bool;

    /// Background work, a task of its own until the conduit closes (a
    /// fleet's sequencer); by default none, done at once.
    fn duty<'a>(&'a self, _conduit: &'a Conduit) -> Pending<'a, ()> {
        Box::pin(std::future::ready(()))
    }

    // Reads (crate::http).

    /// The stored envelope `id`.
    fn envelope(&self, id: [u8; 32]) -> Pending<'_, Result<Option<Stored>, Failure>>;

    /// The first 201 body of `id` when it is acknowledged already (spec
    /// §11.3: a repeat gets its first answer); `None` otherwise or when it
    /// cannot be read now (the writer then judges the post).
    fn answered(&self, id: [u8; 32]) -> Pending<'_, Option<Vec<u8>>>;

    /// The page of `listing` after position `after`, of at most
    /// `max_bytes` bytes (CONDUIT.md *Bounded answers*).
    fn page_of(&self, listing: Listing, after: u64, max_bytes: usize) -> Pending<'_, PageRead>;

    /// The page of `recipient`'s inbox ([`Backend::page_of`]).
    fn inbox_page(
        &self,
        recipient: [u8; RECIPIENT_LEN],
        after: u64,
        max_bytes: usize,
    ) -> Pending<'_, PageRead> {
        self.page_of(Listing::Inbox(recipient), after, max_bytes)
    }

    /// The page of `trace` ([`Backend::page_of`]).
    fn trace_page(&self, trace: [u8; 32], after: u64, max_bytes: usize) -> Pending<'_, PageRead> {
        self.page_of(Listing::Trace(trace), after, max_bytes)
    }

    /// The envelopes `ids` as forwarded, concatenated in that order (one
    /// chunk of an answer); an id not stored is left out.
    fn concat(&self, ids: Vec<[u8; 32]>) -> Pending<'_, Result<Vec<u8>, Failure>>;

    /// The lifecycle index of `identity` (a sigil's 10 key-hash bytes):
    /// its first [`crate::keys::MAX_ROWS`] rows in arrival order, each with
    /// its stored envelope's length; a row whose envelope is gone is left
    /// out (`GET /v1/keys/{sigil}`, [`crate::keys`]).
    fn lifecycle(
        &self,
        identity: [u8; RECIPIENT_LEN],
    ) -> Pending<'_, Result<Vec<Indexed>, Failure>>;

    /// The keys that may sign for `sigil` at `at` (CONDUIT.md *Who may
    /// read what*: keyring, birth, molt; [`herald_verify::signing_keys`]),
    /// from the lifecycle records every conduit of a fleet shares.
    fn signing_keys(&self, sigil: Sigil, at: u64) -> Pending<'_, Result<Vec<PublicKey>, Failure>>;

    /// Claim a signed read's signature (its first 16 bytes) until `until`
    /// for every conduit sharing this storage: `false` when one of them
    /// accepted it already (CONDUIT.md *Who may read what*: each signature
    /// once). A lone conduit's window is in memory (`http::window`), so it
    /// claims nothing here.
    fn claim_read(
        &self,
        _signature: [u8; 16],
        _until: u64,
        _now: u64,
    ) -> Pending<'_, Result<bool, Failure>> {
        Box::pin(std::future::ready(Ok(true)))
    }

    // Retention and erasure (crate::erase).

    /// The tombstone of the erased envelope `id`, if it was erased.
    fn tombstone(&self, id: [u8; 32]) -> Pending<'_, Result<Option<Tombstone>, Failure>>;

    /// Erase, in one transaction, each of `erasures` whose envelope is
    /// still stored (and, for a notary, under a signed tree head): its
    /// bytes, its inbox and trace entries and its first 201 body go, its
    /// tombstone is written. The ids erased.
    fn erase(&self, erasures: Vec<Erasure>) -> Pending<'_, Result<Vec<[u8; 32]>, Failure>>;

    /// Up to `limit` stored envelopes of arrival `from` or later, oldest
    /// first (a retention pass), the erased skipped, in bounded work; and
    /// the arrival after the last one looked at.
    fn oldest(&self, from: u64, limit: usize) -> Pending<'_, Result<(Vec<Stored>, u64), Failure>>;

    /// What changes when another conduit (of a fleet) delivers, so that
    /// an inbox long poll looks again; `None` (the default) when only this
    /// conduit does.
    fn deliveries(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        None
    }

    /// The audit log, when the conduit is a notary.
    fn log(&self) -> Option<&dyn AuditLog>;
}

/// What `GET /v1/proof/consistency` asks for: the proof from `size1` to
/// `size2` (default: the latest head's size), its heads signed at `now`.
#[derive(Clone, Copy)]
pub(crate) struct Between {
    pub(crate) size1: u64,
    pub(crate) size2: Option<u64>,
    pub(crate) now: u64,
}

/// The notary's audit log (spec §5.3, P9) as its endpoints read it.
pub(crate) trait AuditLog: Send + Sync {
    /// The latest signed tree head (`None` while the log is empty).
    fn sth(&self) -> Pending<'_, Result<Option<SignedTreeHead>, Failure>>;

    /// The inclusion proof of the leaf of envelope `id`.
    fn inclusion(&self, id: [u8; 32]) -> Pending<'_, Result<Inclusion, Failure>>;

    /// The consistency proof `between` two sizes, its heads signed with
    /// `key`; `Err(message)` for sizes the log does not have.
    fn consistency<'a>(
        &'a self,
        key: &'a SigningKey,
        between: Between,
    ) -> Pending<'a, Result<Result<ConsistencyProof, String>, Failure>>;

    /// The C2SP checkpoint of the latest head (`GET /checkpoint`).
    fn checkpoint<'a>(
        &'a self,
        key: &'a SigningKey,
        origin: &'a str,
    ) -> Pending<'a, Result<String, Failure>>;

    /// The tlog-tiles resource `path` (`tile/...`); `None`: no such tile.
    fn tile(&self, path: String) -> Pending<'_, Result<Option<Vec<u8>>, Failure>>;

    /// Leaves in the log (`/metrics`), if it can be read now.
    fn size(&self) -> Pending<'_, Option<u64>>;
}
