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
//! `GET /tile/...`, module `http::tlog`) through herald-tlog, so tlog-tiles clients
//! and tlog-witness witnesses read it with no HERALD-specific code; with
//! `--witness`, each new checkpoint is submitted to the witnesses and
//! served with their cosignatures (module `witnesses`).
//!
//! Storage is a `Backend` (module `backend`) of two kinds: the redb store
//! in the state directory (module `local`, the default) and, with
//! [`Config::store`], a PostgreSQL database shared by a fleet of conduits
//! (module `fleet`; docs/conduit.md *Fleet*), over which the same
//! [`Receiver`] rules run through herald-verify's `LiveState`.
#![forbid(unsafe_code)]

mod backend;
mod blocking;
pub mod client;
pub mod config;
mod erase;
mod fleet;
mod http;
mod keys;
mod local;
pub mod metrics;
pub mod page;
mod rate;
pub mod refusal;
mod stored;
mod witnesses;
mod writer;

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use herald_core::SigningKey;
use herald_verify::{Clock, FileError, Keyring, Receiver, StoreError, SystemClock};
use tokio::sync::watch;

pub use config::{Config, Roles};
pub use refusal::Refusal;

use backend::Backend;

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
    Fleet(String),
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

/// An open conduit: its key, its backend, its front door's limits.
pub struct Conduit {
    config: Config,
    key: SigningKey,
    /// Where accepted envelopes are kept: the redb store in the state
    /// directory, or the fleet's PostgreSQL database.
    backend: Arc<dyn Backend>,
    clock: Box<dyn Clock>,
    deliveries: watch::Sender<u64>,
    closing: watch::Sender<bool>,
    metrics: metrics::Metrics,
    /// `--rate`, `--burst`, `--rate-unknown`.
    limits: rate::Limiter,
    /// The largest envelope a sender may post: `--max-body`, and for a
    /// relay no more than leaves room for its receipt within P1's limit.
    sender_max_body: usize,
    accepting: AtomicBool,
    /// Commits of received envelopes by the redb backend
    /// ([`Conduit::lifecycle_generation`]).
    committed: AtomicU64,
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
            .finish_non_exhaustive()
    }
}

impl Conduit {
    /// Open (or create) the conduit's state in `config.state`, verifying
    /// with `keyring` and the keys births teach (P7); with `notary`, open
    /// the log and append the leaves a crash left out; with `config.store`,
    /// connect to the fleet's database instead. The redb files are opened
    /// off the runtime's workers (module `blocking`); the fleet's database is
    /// awaited.
    pub async fn open(
        config: Config,
        key: SigningKey,
        keyring: Keyring,
    ) -> Result<Self, OpenError> {
        let origin = match &config.origin {
            Some(o) => o.clone(),
            None => key
                .public_key()
                .sigil(herald_core::SigilForm::Default)
                .to_string(),
        };
        herald_tlog::NoteVerifier::ed25519(&origin, key.public_key())
            .map_err(|e| OpenError::Origin(e.to_string()))?;
        let store = blocking::off_runtime(|| local::open_store(&config.state))?;
        // CONDUIT.md revision 3: the origin first (docs/conduit.md).
        let receiver = Receiver::new(store, keyring.clone()).with_origin_first(true);
        let clock: Box<dyn Clock> = Box::new(SystemClock);
        let (backend, notary): (Arc<dyn Backend>, _) = match &config.store {
            Some(url) => {
                let fleet =
                    fleet::Fleet::open(url, &key.public_key(), receiver, config.roles.notary)
                        .await
                        .map_err(|e| OpenError::Fleet(e.to_string()))?;
                (Arc::new(fleet), None)
            }
            None => {
                let local = blocking::off_runtime(|| {
                    local::Local::open(&config, &key, receiver, keyring, clock.now())
                })?;
                let notary = local.notary();
                (Arc::new(local), notary)
            }
        };
        let limits = rate::Limiter::new(&config);
        let sender_max_body = sender_max_body(&config, &key);
        Ok(Self {
            witnesses: witnesses::Witnesses::new(config.witnesses.clone(), notary),
            backend,
            config,
            key,
            clock,
            deliveries: watch::Sender::new(0),
            closing: watch::Sender::new(false),
            metrics: metrics::Metrics::default(),
            limits,
            sender_max_body,
            accepting: AtomicBool::new(true),
            committed: AtomicU64::new(0),
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

    /// Now, Unix seconds.
    fn now(&self) -> u64 {
        self.clock.now()
    }

    /// Count a commit of received envelopes, accepted or not (a refused
    /// molt can still change what the receiver witnessed, P8 rule 5):
    /// called after the commit, so that a lifecycle record read before it
    /// is never taken for current (`http::signers`).
    pub(crate) fn lifecycle_committed(&self) {
        self.committed.fetch_add(1, Ordering::Release);
    }

    /// The count of [`Conduit::lifecycle_committed`], when this conduit's
    /// own writer is the only one that changes lifecycle records (redb);
    /// `None` for a fleet, whose other conduits write them too.
    pub(crate) fn lifecycle_generation(&self) -> Option<u64> {
        self.backend
            .sole_writer()
            .then(|| self.committed.load(Ordering::Acquire))
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
    let (queue, jobs) = tokio::sync::mpsc::channel(conduit.config.max_inflight.max(1));
    let writer = tokio::spawn(writer::run(Arc::clone(&conduit), jobs));
    let duty = {
        let conduit = Arc::clone(&conduit);
        tokio::spawn(async move { conduit.backend.duty(&conduit).await })
    };
    let witnesses = witnesses::Witnesses::spawn(&conduit)?;
    // CONDUIT.md *Retention and erasure*: `--retain DAYS`.
    let retention = (conduit.config.retain_days > 0).then(|| {
        tokio::spawn(erase::retain(
            Arc::clone(&conduit),
            conduit.config.retain_days,
        ))
    });
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
    let _ = writer.await;
    let _ = duty.await;
    if let Some(r) = retention {
        let _ = r.await;
    }
    if let Some(w) = witnesses {
        let _ = tokio::task::spawn_blocking(move || w.join()).await;
    }
    result
}

pub use herald_http::server::{LISTEN_BACKLOG, listen, termination};
