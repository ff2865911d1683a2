//! Where the trace goes (issue 19, item 6): the `--trace FILE` always, and
//! with `--conduit URL` a conduit first (CONDUIT.md `POST /v1/envelopes`),
//! which makes the wrapper a translator between MCP and HTTP (spec §5.1).
//!
//! With a conduit, an envelope counts as recorded once the conduit has
//! acknowledged it (`201`); the file then gets the bytes the conduit
//! forwarded (with its `conduit_receipt` when it is a relay, so the file
//! proves the hand-off, spec §5.2). A refusal (a signed refusal envelope,
//! CONDUIT.md) or no answer is returned as an error carrying the reason,
//! and the file still gets the envelope as signed: the chain of the session
//! stays whole, and the client is told why the call or its result was held
//! back.
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

use herald_conduit::client;
use herald_core::cbor::Value;
use herald_core::{Envelope, EnvelopeRef};

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
    /// The conduit gave no usable answer; the file has the envelope.
    Unreachable(String),
}

impl fmt::Display for RecordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::File(e) => write!(f, "cannot record the envelope: {e}"),
            Self::Refused { status, reason } => {
                write!(f, "the conduit refused the envelope ({status}): {reason}")
            }
            Self::Unreachable(e) => write!(f, "the conduit did not acknowledge the envelope: {e}"),
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

/// The trace file and, optionally, a conduit. Sessions served at once
/// (streamable HTTP) share one file; each append holds it alone.
#[derive(Debug, Clone)]
pub struct Recorder {
    file: Arc<Mutex<TraceFile>>,
    conduit: Option<SocketAddr>,
    sync: SyncPolicy,
}

impl Recorder {
    /// Record into `file`, and through `conduit` when given, syncing the
    /// file as `sync` says.
    pub fn new(file: TraceFile, conduit: Option<SocketAddr>, sync: SyncPolicy) -> Self {
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
        let Some(addr) = self.conduit else {
            self.append(envelope.as_bytes(), before)?;
            return Ok(None);
        };
        let answer = client::post(addr, "/v1/envelopes", envelope.as_bytes(), POST_TIMEOUT).await;
        let outcome = match answer {
            Ok(r) if r.status == 201 => forwarded(&r.body, envelope)
                .ok_or_else(|| RecordError::Unreachable("a 201 without the envelope".into())),
            Ok(r) => Err(RecordError::Refused {
                status: r.status,
                reason: refusal_reason(&r),
            }),
            Err(e) => Err(RecordError::Unreachable(e.to_string())),
        };
        match outcome {
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

    /// The trace file's length and how much of it is durable.
    #[cfg(test)]
    pub(crate) fn lengths(&self) -> (u64, u64) {
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

/// The `envelope` of a `201` body, if it is `sent` (same id) as forwarded.
fn forwarded(body: &[u8], sent: &Envelope) -> Option<Vec<u8>> {
    let value = Value::decode(body).ok()?;
    let Value::Bytes(bytes) = value.as_map()?.get("envelope")? else {
        return None;
    };
    let view = EnvelopeRef::decode(bytes).ok()?;
    (*view.id() == sent.id()).then(|| bytes.clone())
}

/// The reason of a refusal: the refusal envelope's `payload.reason`, else
/// the `Herald-Reasons` header, else the body's first line.
fn refusal_reason(r: &client::Response) -> String {
    if let Ok(view) = EnvelopeRef::decode(&r.body)
        && let Some(reason) = view
            .payload()
            .as_map()
            .and_then(|m| m.get("reason"))
            .and_then(|v| v.as_text())
    {
        return reason.to_owned();
    }
    if let Some(reasons) = r.header("herald-reasons") {
        return reasons.to_owned();
    }
    String::from_utf8_lossy(&r.body)
        .lines()
        .next()
        .unwrap_or_default()
        .chars()
        .take(200)
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
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
