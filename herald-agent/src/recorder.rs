//! Where a trace goes: the trace file always, and with a conduit (the MCP
//! proxy's `--conduit URL`) the conduit first (CONDUIT.md `POST
//! /v1/envelopes`), which makes the recorder a translator between its
//! agent and HTTP (spec §5.1).
//!
//! With a conduit, an envelope counts as recorded once the conduit has
//! acknowledged it with a `201` that returns it with a `conduit_receipt`
//! verifying under the conduit's key (spec §5.2: senders that require
//! non-repudiation of hand-off require the receipt; herald-conduit's
//! [`crate::sender`]): the conduit must be a relay. The key is the one given
//! (`--conduit-key`), or else the one the conduit's
//! `/.well-known/herald-conduit` names, fetched on first use and pinned
//! for the life of the process. The file then gets the bytes the conduit
//! forwarded, so it proves the hand-off. A refusal (a refusal envelope the
//! conduit signed for this envelope, CONDUIT.md), no answer, or an answer
//! that proves nothing (a `201` without a valid receipt, an unsigned
//! refusal) is returned as an error carrying the reason, and the file
//! still gets the envelope as signed: the chain of the session stays
//! whole, and the client is told why the call or its result was held back.
//!
//! When the file is made durable ([`SyncPolicy`], docs/mcp.md *Release
//! order*): an envelope that comes before forwarding something to the
//! server ([`Before::Forward`]: a call's request, a cancellation, the
//! session's genesis) is written to the file first; one that comes before
//! releasing something to the client ([`Before::Release`]: a result, a
//! refusal, a warning) is written and then `fdatasync`ed, which makes the
//! request before it durable too. With [`SyncPolicy::Each`] every
//! envelope is `fdatasync`ed before anything depends on it.

use std::fmt;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use herald_core::{Envelope, PublicKey};
use herald_http::client::Url;
use tokio::sync::OnceCell;

use crate::sender::{self, SendError};
use crate::trace_file::{TraceFile, TraceFileError};

/// How long one `POST /v1/envelopes` may take: the conduit answers within
/// its deadline (5 s by default, spec §5.2), plus the connection.
const POST_TIMEOUT: Duration = Duration::from_secs(10);

/// Why an envelope was not recorded as asked.
#[derive(Debug)]
#[non_exhaustive]
pub enum RecordError {
    /// The trace file refused the append: nothing was recorded.
    File(TraceFileError),
    /// The conduit refused the envelope (its status and reason); the file has it.
    Refused {
        /// The HTTP status.
        status: u16,
        /// The refusal's reason (a P11 code or CONDUIT.md reason).
        reason: String,
    },
    /// The conduit gave no answer; the file has the envelope.
    Unreachable(String),
    /// The conduit's answer proves no delivery (a `201` without a valid
    /// receipt, a refusal it did not sign); the file has the envelope.
    Unproven(String),
}

impl fmt::Display for RecordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::File(e) => write!(f, "cannot record the envelope: {e}"),
            Self::Refused { status, reason } => {
                write!(f, "the conduit refused the envelope ({status}): {reason}")
            }
            Self::Unreachable(e) => write!(f, "the conduit did not acknowledge the envelope: {e}"),
            Self::Unproven(e) => write!(f, "the conduit's answer is not a delivery: {e}"),
        }
    }
}

impl std::error::Error for RecordError {}

/// When the trace file is `fdatasync`ed (`--sync`, docs/mcp.md *Release
/// order*).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum SyncPolicy {
    /// `--sync release` (the default): once per call, before its result is
    /// released to the client. A request is written (`write(2)` returned)
    /// before its call is forwarded, and made durable by its result's sync.
    #[default]
    Release,
    /// `--sync each`: after every envelope, so a call is forwarded only
    /// once its request is durable (two syncs per call).
    Each,
}

impl SyncPolicy {
    /// The `--sync` value naming this policy.
    pub fn name(self) -> &'static str {
        match self {
            Self::Release => "release",
            Self::Each => "each",
        }
    }
}

/// What recording an envelope comes before, which says how durable it
/// must be by then ([`SyncPolicy`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Before {
    /// Forwarding to the server (a request, a cancellation, the genesis):
    /// written, and durable too with [`SyncPolicy::Each`].
    Forward,
    /// Releasing to the client (a result, a refusal, a warning): durable,
    /// with everything written before it.
    Release,
}

/// A conduit (`--conduit`) and the key its receipts are checked under.
#[derive(Debug, Clone)]
pub struct Conduit {
    url: Url,
    /// Given, or pinned from its well-known document on first use; shared
    /// by every session of the process.
    key: Arc<OnceCell<PublicKey>>,
    /// Longest wait for each request.
    timeout: Duration,
}

impl Conduit {
    /// The conduit at `addr`; `key` when given (`--conduit-key`), else
    /// pinned on first use.
    pub fn new(addr: SocketAddr, key: Option<PublicKey>) -> Self {
        Self::at(Url::root(addr), key)
    }

    /// The conduit at `url` (its base URL: `http://HOST:PORT[/PREFIX]`);
    /// `key` when given, else pinned on first use.
    pub fn at(url: Url, key: Option<PublicKey>) -> Self {
        Self::with_timeout(url, key, POST_TIMEOUT)
    }

    /// [`Conduit::at`], each request within `timeout`.
    pub fn with_timeout(url: Url, key: Option<PublicKey>, timeout: Duration) -> Self {
        Self {
            url,
            key: Arc::new(OnceCell::new_with(key)),
            timeout,
        }
    }

    /// The conduit's base URL.
    pub fn url(&self) -> &Url {
        &self.url
    }

    /// The conduit's key: given, or fetched from its well-known document
    /// and pinned.
    pub async fn key(&self) -> Result<PublicKey, SendError> {
        self.key
            .get_or_try_init(|| sender::conduit_key(&self.url, self.timeout))
            .await
            .copied()
    }

    /// Post `envelope` and check the answer: its forwarded bytes once
    /// delivered (the module's rules).
    pub async fn send(&self, envelope: &[u8]) -> Result<sender::Delivered, SendError> {
        let key = self.key().await?;
        sender::deliver(&self.url, envelope, &key, self.timeout).await
    }

    /// Post `envelope`; its forwarded bytes once delivered (the module's rules).
    async fn deliver(&self, envelope: &Envelope) -> Result<Vec<u8>, RecordError> {
        match self.send(envelope.as_bytes()).await {
            Ok(delivered) => Ok(delivered.envelope),
            Err(SendError::Refused { status, refusal }) => Err(RecordError::Refused {
                status,
                reason: refusal.reason,
            }),
            Err(e @ SendError::Unproven { .. }) => Err(RecordError::Unproven(e.to_string())),
            Err(e) => Err(RecordError::Unreachable(e.to_string())),
        }
    }
}

/// The trace file and, optionally, a conduit. Sessions served at once
/// (streamable HTTP) share one file; each append holds it alone.
#[derive(Debug, Clone)]
pub struct Recorder {
    file: Arc<Mutex<TraceFile>>,
    conduit: Option<Conduit>,
    sync: SyncPolicy,
}

impl Recorder {
    /// Record into `file`, and through `conduit` when given, syncing the
    /// file as `sync` says.
    pub fn new(file: TraceFile, conduit: Option<Conduit>, sync: SyncPolicy) -> Self {
        Self {
            file: Arc::new(Mutex::new(file)),
            conduit,
            sync,
        }
    }

    /// Record `envelope`, which comes `before` something; returns the
    /// bytes the conduit forwarded when it acknowledged with other bytes
    /// than those sent (its receipt), `None` when the file holds the
    /// envelope as signed. The envelope is in the file whenever this
    /// returns anything but [`RecordError::File`].
    pub async fn record(
        &mut self,
        envelope: &Envelope,
        before: Before,
    ) -> Result<Option<Vec<u8>>, RecordError> {
        let Some(conduit) = &self.conduit else {
            self.append(envelope.as_bytes(), before)?;
            return Ok(None);
        };
        let delivered = conduit.deliver(envelope).await;
        match delivered {
            Ok(bytes) => {
                self.append(&bytes, before)?;
                Ok((bytes != envelope.as_bytes()).then_some(bytes))
            }
            Err(e) => {
                self.append(envelope.as_bytes(), before)?;
                Err(e)
            }
        }
    }

    /// Make everything written to the file so far durable (before
    /// releasing an answer that follows an envelope recorded
    /// [`Before::Forward`], such as a call the conduit refused).
    pub fn sync(&mut self) -> Result<(), RecordError> {
        let mut file = self.file.lock().unwrap_or_else(|p| p.into_inner());
        file.sync().map_err(RecordError::File)
    }

    /// The trace file's length and how much of it is durable
    /// (`fdatasync`ed): what a release-order check compares.
    pub fn lengths(&self) -> (u64, u64) {
        let file = self.file.lock().unwrap_or_else(|p| p.into_inner());
        (file.len(), file.durable())
    }

    fn append(&mut self, bytes: &[u8], before: Before) -> Result<(), RecordError> {
        // A panic while appending leaves at most a torn tail, which the
        // file's next open cuts: go on with the file as it is.
        let mut file = self.file.lock().unwrap_or_else(|p| p.into_inner());
        match (self.sync, before) {
            (SyncPolicy::Release, Before::Forward) => file.write(bytes),
            (SyncPolicy::Each, _) | (_, Before::Release) => file.append(bytes),
        }
        .map_err(RecordError::File)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use herald_core::cbor::Value;
    use herald_core::{EnvelopeBuilder, SigningKey};

    fn envelope(key: &SigningKey, text: &str) -> Envelope {
        EnvelopeBuilder::genesis(1_700_000_000)
            .payload(Value::text(text))
            .sign(key)
            .unwrap()
    }

    /// (file length, durable length) after recording a request (before
    /// forwarding it) and then its result (before releasing it).
    async fn lengths(sync: SyncPolicy) -> [(u64, u64); 2] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.herald");
        let mut recorder = Recorder::new(TraceFile::open(&path).unwrap(), None, sync);
        let key = SigningKey::generate_os();
        let mut seen = [(0, 0); 2];
        for (i, before) in [Before::Forward, Before::Release].into_iter().enumerate() {
            let e = envelope(&key, &format!("envelope {i}"));
            assert_eq!(recorder.record(&e, before).await.unwrap(), None);
            // Written either way: in the file before anything is forwarded.
            assert!(std::fs::read(&path).unwrap().ends_with(e.as_bytes()));
            seen[i] = recorder.lengths();
        }
        seen
    }

    #[tokio::test]
    async fn a_request_is_written_and_its_result_synced_with_it() {
        let [(req, req_durable), (all, all_durable)] = lengths(SyncPolicy::Release).await;
        assert!(req > 0 && all > req);
        // One sync per call: the request is not yet durable when forwarded;
        // the result's sync makes both durable before it is released.
        assert_eq!((req_durable, all_durable), (0, all));
    }

    #[tokio::test]
    async fn with_sync_each_a_request_is_durable_before_it_is_forwarded() {
        let [(req, req_durable), (all, all_durable)] = lengths(SyncPolicy::Each).await;
        assert_eq!((req_durable, all_durable), (req, all));
    }
}
