//! What `herald conduit serve` is told (CONDUIT.md, *Starting one*).

use std::path::PathBuf;
use std::time::Duration;

/// The roles beyond pass-through (CONDUIT.md; spec §5).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Roles {
    /// Append a `conduit_receipt` signature (P6) with the conduit's time.
    pub relay: bool,
    /// Append each accepted envelope's P9 leaf to the audit log.
    pub notary: bool,
}

impl Roles {
    /// The names, for `/.well-known/herald-conduit`.
    pub fn names(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        if self.relay {
            out.push("relay");
        }
        if self.notary {
            out.push("notary");
        }
        out
    }
}

/// The default `--max-body`: 1 MiB (P1).
pub const DEFAULT_MAX_BODY: usize = 1 << 20;
/// The default `--deadline-ms` (spec §5.2: a refusal within 5 s).
pub const DEFAULT_DEADLINE: Duration = Duration::from_millis(5000);
/// The default `--batch-ms`.
pub const DEFAULT_BATCH: Duration = Duration::from_millis(500);
/// The default number of posts in flight before the conduit sheds load.
pub const DEFAULT_MAX_INFLIGHT: usize = 512;
/// The default `--max-signatures` (CONDUIT.md revision 3): more are
/// refused `413 too_many_signatures` before any is verified.
pub const DEFAULT_MAX_SIGNATURES: usize = 32;
/// The default `--rate-unknown`: posts per second, all senders together,
/// from senders the conduit holds no key for, and births (docs/conduit.md
/// *Policies*); its burst is one second's worth.
pub const DEFAULT_RATE_UNKNOWN: u32 = 20;
/// The longest inbox long poll (CONDUIT.md: `wait` at most 30 s).
pub const MAX_WAIT: Duration = Duration::from_secs(30);
/// At most this many envelopes in one trace or inbox answer (CONDUIT.md
/// *Bounded answers*).
pub const MAX_INBOX_ANSWER: usize = crate::page::MAX_ENVELOPES;

/// A conduit's configuration.
#[derive(Clone, Debug)]
pub struct Config {
    /// The state directory: the store (replay cache, envelopes, inboxes).
    pub state: PathBuf,
    /// The audit log directory (notary); default `state/log`.
    pub log: Option<PathBuf>,
    /// Roles beyond pass-through.
    pub roles: Roles,
    /// Every answer within this (`--deadline-ms`).
    pub deadline: Duration,
    /// Largest envelope accepted (`--max-body`).
    pub max_body: usize,
    /// Sustained posts per second per sender sigil (`--rate`), if limited.
    pub rate: Option<u32>,
    /// Burst above `rate` (`--burst`; default: `rate`).
    pub burst: Option<u32>,
    /// Posts per second from unknown senders and births, all together
    /// (`--rate-unknown`; 0: no limit).
    pub rate_unknown: u32,
    /// Most signatures in an envelope (`--max-signatures`).
    pub max_signatures: usize,
    /// A tree head at least this often (`--batch-ms`, notary).
    pub batch: Duration,
    /// Posts in flight before shedding load.
    pub max_inflight: usize,
    /// The log's origin string (`--origin`), shown in `.well-known`.
    pub origin: Option<String>,
    /// `--store postgres://...`: the fleet database (docs/conduit.md,
    /// "Fleet"); `None`: the redb store in `state` (the default).
    pub store: Option<String>,
    /// Witnesses asked to cosign each new checkpoint (`--witness`, notary).
    pub witnesses: Vec<herald_witness::client::WitnessTarget>,
    /// Bytes of envelopes in one trace or inbox answer at most
    /// (`--max-page`, CONDUIT.md *Bounded answers*).
    pub max_page: usize,
    /// `--public`: envelopes and traces are readable by anyone (the public
    /// replay of spec Phase 2); otherwise only by a participant of the
    /// trace, with a signed request (CONDUIT.md *Who may read what*).
    /// Inboxes always need their owner's signature.
    pub public: bool,
    /// `--retain DAYS`: erase stored envelopes whose `ts` is more than
    /// this many days before the conduit's clock, in the background
    /// (CONDUIT.md *Retention and erasure*); 0 keeps them forever.
    pub retain_days: u64,
}

impl Config {
    /// A pass-through conduit over `state` with the CONDUIT.md defaults.
    pub fn new(state: impl Into<PathBuf>) -> Self {
        Self {
            state: state.into(),
            log: None,
            roles: Roles::default(),
            deadline: DEFAULT_DEADLINE,
            max_body: DEFAULT_MAX_BODY,
            rate: None,
            burst: None,
            rate_unknown: DEFAULT_RATE_UNKNOWN,
            max_signatures: DEFAULT_MAX_SIGNATURES,
            batch: DEFAULT_BATCH,
            max_inflight: DEFAULT_MAX_INFLIGHT,
            origin: None,
            store: None,
            witnesses: Vec::new(),
            max_page: crate::page::DEFAULT_MAX_PAGE,
            public: false,
            retain_days: 0,
        }
    }

    /// The audit log directory.
    pub fn log_dir(&self) -> PathBuf {
        self.log.clone().unwrap_or_else(|| self.state.join("log"))
    }
}
