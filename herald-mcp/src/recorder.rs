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

/// The trace file and, optionally, a conduit. Sessions served at once
/// (streamable HTTP) share one file; each append holds it alone.
#[derive(Debug, Clone)]
pub struct Recorder {
    file: Arc<Mutex<TraceFile>>,
    conduit: Option<SocketAddr>,
}

impl Recorder {
    /// Record into `file`, and through `conduit` when given.
    pub fn new(file: TraceFile, conduit: Option<SocketAddr>) -> Self {
        Self {
            file: Arc::new(Mutex::new(file)),
            conduit,
        }
    }

    /// Record `envelope`; returns the bytes recorded (the conduit's, when
    /// it acknowledged). The envelope is in the file whenever this returns
    /// anything but [`RecordError::File`].
    pub async fn record(&mut self, envelope: &Envelope) -> Result<Vec<u8>, RecordError> {
        let Some(addr) = self.conduit else {
            self.append(envelope.as_bytes())?;
            return Ok(envelope.as_bytes().to_vec());
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
                self.append(&bytes)?;
                Ok(bytes)
            }
            Err(e) => {
                self.append(envelope.as_bytes())?;
                Err(e)
            }
        }
    }

    fn append(&mut self, bytes: &[u8]) -> Result<(), RecordError> {
        // A panic while appending leaves at most a torn tail, which the
        // file's next open cuts: go on with the file as it is.
        let mut file = self.file.lock().unwrap_or_else(|p| p.into_inner());
        file.append(bytes).map_err(RecordError::File)
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
