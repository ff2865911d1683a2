//! The HERALD reference conduit (spec §5, CONDUIT.md): a pass-through that
//! stores each accepted envelope and delivers it to its recipient's inbox,
//! optionally a signing relay (a `conduit_receipt`, P6) and a notary (the
//! P9 audit log, tree heads and inclusion proofs), over HTTP.
//!
//! Live verification is herald-verify's [`Receiver`] (P8, P10, P11, P13);
//! the conduit's own tables share its store, so an acknowledged envelope's
//! claim, bytes, inbox entry and trace entry commit together, and (notary)
//! its leaf is synced to the log before the 201 is sent.
//!
//! The notary's log is also served in C2SP form (`GET /checkpoint`,
//! `GET /tile/...`, module `tlog`) through herald-tlog, so tlog-tiles clients
//! and tlog-witness witnesses read it with no HERALD-specific code; with
//! `--witness`, each new checkpoint is submitted to the witnesses and
//! served with their cosignatures ([`witnesses`]).
//!
//! Storage has two backends: the redb store in the state directory (the
//! default) and, with [`Config::store`], a PostgreSQL database shared by a
//! fleet of conduits ([`fleet`], issue 22), over which the same
//! [`Receiver`] rules run through herald-verify's `LiveState`.
#![forbid(unsafe_code)]

pub mod client;
pub mod config;
pub mod fleet;
mod head;
mod http;
pub mod mailbox;
pub mod metrics;
pub mod notary;
pub mod page;
mod rate;
pub mod refusal;
mod storage;
mod tlog;
pub mod witnesses;
mod writer;

use std::fmt;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use herald_core::SigningKey;
use herald_verify::{Clock, FileError, Keyring, Receiver, Store, StoreError, SystemClock};
use tokio::sync::watch;

pub use config::{Config, Roles};
pub use refusal::Refusal;

use mailbox::Reader;
use notary::Notary;

/// The store's owner name (herald-verify [`Store`]).
pub const STORE_OWNER: &str = "herald-conduit";
/// The store file in the state directory.
pub const STORE_FILE: &str = "conduit.redb";

/// Why a conduit could not open its state.
#[derive(Debug)]
#[non_exhaustive]
pub enum OpenError {
    /// The state directory.
    State(FileError),
    /// The store (replay cache, envelopes, inboxes).
    Store(StoreError),
    /// The audit log (notary).
    Log(String),
    /// `--origin` is not a valid C2SP origin and key name.
    Origin(String),
    /// The fleet database (`--store postgres://...`).
    Fleet(fleet::FleetError),
}

impl fmt::Display for OpenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::State(e) => write!(f, "state directory: {e}"),
            Self::Store(e) => write!(f, "store: {e}"),
            Self::Log(e) => write!(f, "{e}"),
            Self::Origin(e) => write!(f, "--origin: {e}"),
            Self::Fleet(e) => write!(f, "--store: {e}"),
        }
    }
}

impl std::error::Error for OpenError {}

/// An open conduit: its key, its receiver and store, its log.
pub struct Conduit {
    config: Config,
    key: SigningKey,
    /// The receiver and its store, reopened after a storage failure.
    live: storage::Live,
    clock: Box<dyn Clock>,
    notary: Option<Mutex<Notary>>,
    /// The fleet database, with `--store postgres://...` (then `notary`
    /// is `None`: the log is the fleet's).
    fleet: Option<fleet::Fleet>,
    deliveries: watch::Sender<u64>,
    closing: watch::Sender<bool>,
    metrics: metrics::Metrics,
    /// `--rate`, `--burst`, `--rate-unknown`.
    limits: rate::Limiter,
    /// The largest envelope a sender may post: `--max-body`, and for a
    /// relay no more than leaves room for its receipt within P1's limit.
    sender_max_body: usize,
    accepting: AtomicBool,
    /// The C2SP origin of the log's checkpoints (`--origin`, or the
    /// conduit's sigil).
    origin: String,
    /// The witnesses that cosign the notary's checkpoints (`--witness`).
    witnesses: witnesses::Witnesses,
}

impl fmt::Debug for Conduit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Conduit")
            .field("config", &self.config)
            .field("live", &self.live)
            .finish_non_exhaustive()
    }
}

impl Conduit {
    /// Open (or create) the conduit's state in `config.state`, verifying
    /// with `keyring` and the keys births teach (P7); with `notary`, open
    /// the log and append the leaves a crash left out.
    pub fn open(config: Config, key: SigningKey, keyring: Keyring) -> Result<Self, OpenError> {
        let origin = match &config.origin {
            Some(o) => o.clone(),
            None => key
                .public_key()
                .sigil(herald_core::SigilForm::Default)
                .to_string(),
        };
        herald_tlog::NoteVerifier::ed25519(&origin, key.public_key())
            .map_err(|e| OpenError::Origin(e.to_string()))?;
        herald_verify::create_private_dir(&config.state).map_err(OpenError::State)?;
        let store = Store::open_or_create(config.state.join(STORE_FILE), STORE_OWNER)
            .map_err(OpenError::Store)?;
        mailbox::create_tables(&store).map_err(OpenError::Store)?;
        let clock: Box<dyn Clock> = Box::new(SystemClock);
        let fleet = match &config.store {
            Some(url) => {
                Some(fleet::Fleet::open(url, &key.public_key()).map_err(OpenError::Fleet)?)
            }
            None => None,
        };
        let notary = if config.roles.notary && fleet.is_none() {
            let reader = Reader::new(&store).map_err(OpenError::Store)?;
            Some(Mutex::new(
                Notary::open(&config.log_dir(), &key, &reader, clock.now())
                    .map_err(OpenError::Log)?,
            ))
        } else {
            None
        };
        let limits = rate::Limiter::new(&config);
        let sender_max_body = sender_max_body(&config, &key);
        Ok(Self {
            witnesses: witnesses::Witnesses::new(config.witnesses.clone()),
            live: storage::Live::new(
                // CONDUIT.md revision 3: the origin first (docs/conduit.md).
                Receiver::new(store, keyring.clone()).with_origin_first(true),
                keyring,
                config.state.join(STORE_FILE),
                config.max_body,
            ),
            config,
            key,
            clock,
            notary,
            fleet,
            deliveries: watch::Sender::new(0),
            closing: watch::Sender::new(false),
            metrics: metrics::Metrics::default(),
            limits,
            sender_max_body,
            accepting: AtomicBool::new(true),
            origin,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The conduit's public key.
    pub fn public_key(&self) -> herald_core::PublicKey {
        self.key.public_key()
    }

    /// The origin line of the log's C2SP checkpoints and the key name of
    /// their signature: `--origin`, by default the conduit's sigil.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The receiver and its store (replay cache and the conduit's
    /// tables), for one piece of work: an error while the store is being
    /// reopened after a storage failure (docs/conduit.md *Storage
    /// failures*).
    pub fn receiver(&self) -> Result<Arc<Receiver>, StoreError> {
        self.live.get()
    }

    /// `f` over a read view of the store.
    pub fn read<T>(
        &self,
        f: impl FnOnce(&Reader<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let receiver = self.receiver()?;
        let reader = Reader::new(receiver.store())?;
        f(&reader)
    }

    /// Whether the conduit takes work: not shutting down, and its store
    /// not being reopened (`/healthz`).
    pub fn healthy(&self) -> bool {
        self.accepting.load(Ordering::SeqCst) && self.live.healthy()
    }

    /// Now, Unix seconds.
    fn now(&self) -> u64 {
        self.clock.now()
    }

    /// Sign a fresh tree head when the last is a batch interval old.
    fn refresh_tree_head(&self) {
        if let Some(f) = &self.fleet
            && self.config.roles.notary
        {
            let _ = f.sequence(&self.key, self.now(), self.config.batch);
        }
        if let Some(n) = &self.notary
            && let Ok(mut n) = n.lock()
        {
            let _ = n.sign(&self.key, self.now());
        }
    }

    /// Whether the envelope that arrived `arrival`-th may be acknowledged
    /// as far as the log goes: no notary, or its leaf is under the latest
    /// signed tree head (so durable: the head is signed after the sync).
    fn signed_over(&self, arrival: u64) -> bool {
        match &self.notary {
            None => true,
            Some(n) => n
                .lock()
                .is_ok_and(|n| n.sth().is_some_and(|s| s.size() > arrival)),
        }
    }

    /// The 201 body of the envelope that arrived `arrival`-th: (notary)
    /// with its inclusion proof against `head`, else the latest head.
    fn created_body(
        &self,
        arrival: u64,
        forwarded: Vec<u8>,
        head: Option<&herald_verify::SignedTreeHead>,
    ) -> Vec<u8> {
        let Some(notary) = &self.notary else {
            return writer::body(forwarded, None, None);
        };
        let leaf = herald_core::EnvelopeRef::decode(&forwarded)
            .ok()
            .map(|e| herald_verify::Leaf::from_envelope(&e));
        let proof = notary
            .lock()
            .ok()
            .and_then(|n| match head {
                Some(h) => n.inclusion_under(arrival, leaf, h).ok().flatten(),
                None => n.inclusion(arrival, leaf).ok().flatten(),
            })
            .map(|p| p.to_value());
        writer::body(forwarded, Some(arrival), proof)
    }

    /// The first 201 body of the stored envelope `id`, rebuilt (spec §11.3):
    /// none without a notary (the body is the stored envelope); with one,
    /// against the first head that answered its leaf, recorded in the store
    /// or (the writer) in `pending`, or the body a conduit before
    /// `conduit_heads` recorded. `None` when the envelope is not stored or
    /// not yet answered.
    fn first_answer(
        &self,
        reader: &Reader<'_>,
        id: &[u8; 32],
        pending: Option<&dyn Fn(u64) -> Option<herald_verify::SignedTreeHead>>,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        match reader.envelope(id)? {
            Some(stored) => self.first_answer_of(reader, id, &stored, pending),
            None => Ok(None),
        }
    }

    /// [`Conduit::first_answer`] of `stored`, the envelope `id` as read
    /// already.
    fn first_answer_of(
        &self,
        reader: &Reader<'_>,
        id: &[u8; 32],
        stored: &mailbox::Stored,
        pending: Option<&dyn Fn(u64) -> Option<herald_verify::SignedTreeHead>>,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        if self.notary.is_none() {
            return Ok(Some(self.created_body(
                stored.arrival,
                stored.bytes.clone(),
                None,
            )));
        }
        if let Some(body) = reader.answer(id)? {
            return Ok(Some(body));
        }
        // Every recorded head is older (smaller) than every pending one:
        // the pending heads are recorded all at once.
        let head = match reader.head_covering(stored.arrival)? {
            Some((_, wire)) => herald_verify::SignedTreeHead::decode(&wire).ok(),
            None => pending.and_then(|p| p(stored.arrival)),
        };
        Ok(head.map(|h| self.created_body(stored.arrival, stored.bytes.clone(), Some(&h))))
    }
}

/// The largest envelope a sender may post to a conduit of `config` with
/// `key` (CONDUIT.md `413 too_large`): `--max-body`, and for a relay at
/// most P1's limit less the room its `conduit_receipt` takes, so that the
/// copy it stores and forwards still decodes under P1 (docs/conduit.md
/// *Hostile posts*). The room is measured on a receipt whose `ts` takes its
/// longest encoding, plus the 8 bytes a longer array head could add.
fn sender_max_body(config: &Config, key: &SigningKey) -> usize {
    if !config.roles.relay {
        return config.max_body;
    }
    let room = herald_core::EnvelopeBuilder::genesis(0)
        .sign(key)
        .ok()
        .and_then(|e| {
            let plain = e.as_bytes().len();
            e.cosign(key, herald_core::Scope::ConduitReceipt, Some(u64::MAX))
                .ok()
                .map(|c| c.as_bytes().len().saturating_sub(plain))
        })
        .unwrap_or(256)
        + 8;
    let p1 = herald_core::cbor::Limits::DEFAULT.max_size;
    config.max_body.min(p1.saturating_sub(room))
}

/// Serve `conduit` on `listener` until `shutdown` completes: then stop
/// accepting, answer what is in flight (long polls end at once, empty),
/// close the connections still open after the shutdown grace, let the
/// writer finish its batch, and return (CONDUIT.md *Operation*). Slow and
/// idle clients are held to [`herald_http::server::Limits`]'s defaults
/// (docs/conduit.md *Limits against slow and idle clients*).
pub async fn serve(
    conduit: Conduit,
    listener: tokio::net::TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let conduit = Arc::new(conduit);
    let (queue, jobs) = std::sync::mpsc::sync_channel(conduit.config.max_inflight);
    let writer = {
        let conduit = Arc::clone(&conduit);
        std::thread::Builder::new()
            .name("herald-conduit-writer".into())
            .spawn(move || writer::run(&conduit, jobs))?
    };
    let witnesses = witnesses::Witnesses::spawn(&conduit)?;
    let app = http::router(Arc::clone(&conduit), queue);
    let closing = Arc::clone(&conduit);
    let result = herald_http::server::serve(
        listener,
        app,
        herald_http::server::Limits::default(),
        async move {
            shutdown.await;
            closing.accepting.store(false, Ordering::SeqCst);
            closing.closing.send_replace(true);
        },
    )
    .await;
    // The router (and with it the queue) is gone: the writer drains and ends.
    let _ = tokio::task::spawn_blocking(move || writer.join()).await;
    if let Some(w) = witnesses {
        let _ = tokio::task::spawn_blocking(move || w.join()).await;
    }
    result
}

pub use herald_http::server::{LISTEN_BACKLOG, listen, termination};
