//! A Herald (PROFILE P14; CONDUIT.md `herald heraldry serve`): its key,
//! its log's origin, its state, its witnesses, and how it checks handles.

use core::fmt;
use std::path::Path;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use herald_core::{Sigil, SigilForm, SigningKey};
use herald_resolve::{DnsChannel, DnsServer};
use herald_tlog::note::NoteVerifier;
use herald_witness::client::WitnessTarget;

use crate::certification::Certification;
use crate::rate::Limits;
use crate::sequencer::{self, Published};
use crate::store::{Store, StoreError};

/// How a Herald runs (`herald heraldry serve`'s options).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Config {
    /// The log's origin (C2SP tlog-checkpoint), also its key name.
    pub origin: String,
    /// Witnesses cosigning its checkpoints (`--witness VKEY=URL`).
    pub witnesses: Vec<WitnessTarget>,
    /// Where `handle` claims are resolved (`--dns`; `None`: the system's
    /// resolver).
    pub dns: Option<DnsServer>,
    /// How often a checkpoint is signed and cosigned (`--batch-ms`).
    pub batch: Duration,
    /// Every request's answer within this (`--deadline-ms`).
    pub deadline: Duration,
    /// The largest request body (`--max-body`).
    pub max_body: usize,
    /// Requests in flight at once; past it `overloaded`.
    pub max_inflight: usize,
    /// How long what is issued on request counts (`not_after` = issue
    /// time + this; `None`: no `not_after`).
    pub validity: Option<Duration>,
    /// Requests a minute one subject may make (`--rate-subject`; 0: no
    /// limit), past it `429 rate_limited` (docs/heralds.md *Limits*).
    pub rate_subject: u32,
    /// Requests a second from every subject the log does not name yet,
    /// all together (`--rate-unknown`; 0: no limit): fresh keys are free,
    /// so this is what bounds how fast the log can be filled.
    pub rate_unknown: u32,
}

/// The default `--rate-subject`: requests a minute per subject.
pub const DEFAULT_RATE_SUBJECT: u32 = 10;
/// The default `--rate-unknown`: requests a second from subjects the log
/// does not name yet, together (as the conduit's default for births).
pub const DEFAULT_RATE_UNKNOWN: u32 = 20;

impl Config {
    /// Defaults for `origin`: no witnesses, the system's DNS, 1 s batches,
    /// a 5 s deadline, 64 KiB bodies, 4096 requests in flight, 90 days of
    /// validity, [`DEFAULT_RATE_SUBJECT`] and [`DEFAULT_RATE_UNKNOWN`].
    #[must_use]
    pub fn new(origin: &str) -> Self {
        Self {
            origin: origin.to_owned(),
            witnesses: Vec::new(),
            dns: None,
            batch: Duration::from_secs(1),
            deadline: Duration::from_secs(5),
            max_body: 64 * 1024,
            max_inflight: 4096,
            validity: Some(Duration::from_secs(90 * 86_400)),
            rate_subject: DEFAULT_RATE_SUBJECT,
            rate_unknown: DEFAULT_RATE_UNKNOWN,
        }
    }
}

/// A Herald could not start.
#[derive(Debug)]
#[non_exhaustive]
pub enum OpenError {
    /// Its state.
    Store(StoreError),
    /// `--origin` is not a valid origin and key name.
    Origin(String),
}

impl fmt::Display for OpenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OpenError::Store(e) => write!(f, "state: {e}"),
            OpenError::Origin(e) => write!(f, "--origin: {e}"),
        }
    }
}

impl std::error::Error for OpenError {}

/// A Herald: shared by the HTTP handlers and the sequencer.
pub struct Herald {
    pub(crate) key: SigningKey,
    pub(crate) origin: String,
    pub(crate) witnesses: Vec<WitnessTarget>,
    pub(crate) batch: Duration,
    pub(crate) config: Config,
    pub(crate) store: Mutex<Store>,
    published: sequencer::Shared,
    pub(crate) dns: Option<DnsChannel>,
    pub(crate) limits: Limits,
}

impl fmt::Debug for Herald {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Herald")
            .field("sigil", &self.sigil().to_string())
            .field("origin", &self.origin)
            .finish_non_exhaustive()
    }
}

/// Seconds since the epoch.
#[must_use]
pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl Herald {
    /// Open the Herald's state in `dir` (locked while it runs). Call it
    /// within a tokio runtime when `config.dns` is set (the DNS channel is
    /// built on it).
    pub fn open(key: SigningKey, dir: &Path, config: Config) -> Result<Self, OpenError> {
        NoteVerifier::ed25519(&config.origin, key.public_key())
            .map_err(|e| OpenError::Origin(e.to_string()))?;
        let store = Store::open(dir).map_err(OpenError::Store)?;
        Ok(Self {
            key,
            limits: Limits::new(config.rate_subject, config.rate_unknown),
            origin: config.origin.clone(),
            witnesses: config.witnesses.clone(),
            batch: config.batch,
            config,
            store: Mutex::new(store),
            published: RwLock::new(None),
            dns: None,
        })
    }

    /// With the DNS channel `handle` claims are checked through (within a
    /// tokio runtime).
    pub fn with_dns(mut self) -> Result<Self, herald_resolve::ResolveError> {
        let server = self.config.dns.unwrap_or(DnsServer::System);
        self.dns = Some(DnsChannel::new(server, None)?);
        Ok(self)
    }

    /// The Herald's sigil (default form).
    #[must_use]
    pub fn sigil(&self) -> Sigil {
        self.key.sigil(SigilForm::Default)
    }

    /// The log's verifier key (C2SP signed-note, type 0x01).
    #[must_use]
    pub fn log_key(&self) -> Option<NoteVerifier> {
        NoteVerifier::ed25519(&self.origin, self.key.public_key()).ok()
    }

    /// The latest checkpoint published with its cosignatures.
    pub(crate) fn published(&self) -> Option<Published> {
        self.published.read().ok().and_then(|p| p.clone())
    }

    pub(crate) fn publish(&self, p: Published) {
        if let Ok(mut w) = self.published.write() {
            *w = Some(p);
        }
    }

    /// Whether the log holds a certification about `subject` (default
    /// form). The store's lock is taken off the runtime: the sequencer
    /// holds it across a write and its sync.
    pub(crate) async fn knows(self: &Arc<Self>, subject: Sigil) -> bool {
        let herald = Arc::clone(self);
        tokio::task::spawn_blocking(move || {
            herald
                .store
                .lock()
                .is_ok_and(|s| !s.about(&subject.to_string()).is_empty())
        })
        .await
        .unwrap_or(false)
    }

    /// Issue `certification` as the operator (`herald heraldry certify`):
    /// sign it, append it durably; its index in the log.
    pub fn certify(&self, certification: &Certification) -> Result<(u64, Vec<u8>), StoreError> {
        let env = certification.issue(&self.key, None, now()).map_err(|e| {
            StoreError::Io(herald_fs::Io::new(
                Path::new("certification"),
                "sign",
                std::io::Error::other(e.to_string()),
            ))
        })?;
        let bytes = env.into_bytes();
        let mut store = self.store.lock().map_err(|_| {
            StoreError::Io(herald_fs::Io::new(
                Path::new("store"),
                "lock",
                std::io::Error::other("poisoned"),
            ))
        })?;
        let index = store.append(std::slice::from_ref(&bytes))?;
        Ok((index.first().copied().unwrap_or(0), bytes))
    }
}
