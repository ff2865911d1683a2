//! `add-checkpoint` (C2SP tlog-witness v1.0.0) as a function of the request
//! body and the clock.

use core::fmt;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Mutex;

use data_encoding::BASE64;
use herald_core::SigningKey;
use herald_merkle::{Hash, verify_consistency};
use herald_tlog::checkpoint::{CheckpointError, SignedCheckpoint};
use herald_tlog::cosignature;
use herald_tlog::note::NoteVerifier;

use crate::state::{Latest, State, StateError};

/// Most consistency proof lines a request may carry (tlog-witness).
const MAX_PROOF_LINES: usize = 63;

/// The media type of a 409's body (tlog-witness).
pub const SIZE_MEDIA_TYPE: &str = "text/x.tlog.size";

/// An HTTP answer: status, content type, body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reply {
    /// The HTTP status code.
    pub status: u16,
    /// The `Content-Type`.
    pub content_type: &'static str,
    /// The body.
    pub body: Vec<u8>,
}

impl Reply {
    fn text(status: u16, body: impl Into<String>) -> Self {
        let mut body = body.into();
        body.push('\n');
        Reply {
            status,
            content_type: "text/plain; charset=utf-8",
            body: body.into_bytes(),
        }
    }
}

/// The witness could not start.
#[derive(Debug)]
#[non_exhaustive]
pub enum WitnessError {
    /// Its state could not be read.
    State(StateError),
    /// Its name is not a valid key name.
    Name,
    /// Two log keys share a name and key id.
    DuplicateLogKey(String),
}

impl fmt::Display for WitnessError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WitnessError::State(e) => e.fmt(f),
            WitnessError::Name => f.write_str("witness name is empty or holds a space or '+'"),
            WitnessError::DuplicateLogKey(o) => write!(f, "log key for {o:?} given twice"),
        }
    }
}

impl std::error::Error for WitnessError {}

/// A witness: its cosigning key and name, the logs it knows (by origin),
/// and its state.
pub struct Witness {
    name: String,
    key: SigningKey,
    verifier: NoteVerifier,
    logs: BTreeMap<String, Vec<NoteVerifier>>,
    state: Mutex<State>,
}

impl fmt::Debug for Witness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Witness")
            .field("name", &self.name)
            .field("logs", &self.logs.keys())
            .finish_non_exhaustive()
    }
}

impl Witness {
    /// A witness named `name` cosigning with `key`, for the logs whose
    /// origin and checkpoint keys are `logs`, with its state in `dir`.
    pub fn open(
        name: &str,
        key: SigningKey,
        logs: Vec<(String, NoteVerifier)>,
        dir: &Path,
    ) -> Result<Self, WitnessError> {
        let verifier =
            NoteVerifier::cosigner(name, key.public_key()).map_err(|_| WitnessError::Name)?;
        let mut map: BTreeMap<String, Vec<NoteVerifier>> = BTreeMap::new();
        for (origin, v) in logs {
            let keys = map.entry(origin.clone()).or_default();
            if keys
                .iter()
                .any(|k| k.name() == v.name() && k.key_id() == v.key_id())
            {
                return Err(WitnessError::DuplicateLogKey(origin));
            }
            keys.push(v);
        }
        Ok(Witness {
            name: name.to_owned(),
            key,
            verifier,
            logs: map,
            state: Mutex::new(State::open(dir).map_err(WitnessError::State)?),
        })
    }

    /// The witness's verifier key (type 0x04), for policies.
    #[must_use]
    pub fn verifier(&self) -> &NoteVerifier {
        &self.verifier
    }

    /// The latest cosigned tree of `origin`.
    #[must_use]
    pub fn latest(&self, origin: &str) -> Option<Latest> {
        self.state.lock().ok()?.latest(origin)
    }

    /// Handle `POST /add-checkpoint` with `body` at Unix time `now`
    /// (tlog-witness "add-checkpoint"): 200 with the cosignature line; 400
    /// malformed; 403 no valid log signature; 404 unknown origin; 409 with
    /// the latest size (`text/x.tlog.size`) when `old` is not it; 422 when
    /// the proof does not verify; 500 when the state cannot be stored.
    pub fn add_checkpoint(&self, body: &[u8], now: u64) -> Reply {
        let req = match Request::parse(body) {
            Ok(r) => r,
            Err(reason) => return Reply::text(400, reason),
        };
        let (checkpoint, note) = match SignedCheckpoint::parse_unverified(req.checkpoint) {
            Ok(c) => c,
            Err(CheckpointError::EmptyTreeRoot) => {
                return Reply::text(
                    422,
                    "a checkpoint of size 0 must have the empty tree's root",
                );
            }
            Err(e) => return Reply::text(400, e.to_string()),
        };
        let Some(keys) = self.logs.get(checkpoint.origin()) else {
            return Reply::text(404, format!("unknown origin {:?}", checkpoint.origin()));
        };
        if let Err(e) = note.verify(keys) {
            return Reply::text(403, e.to_string());
        }
        if req.old > checkpoint.size() {
            return Reply::text(400, "old size is above the checkpoint's size");
        }
        // Check against the latest and persist under one lock (tlog-witness:
        // atomically, or two requests could roll the record back).
        let Ok(mut state) = self.state.lock() else {
            return Reply::text(500, "witness state lock poisoned");
        };
        // A recorded size 0 is the empty tree: the same as no record.
        let latest = state.latest(checkpoint.origin()).filter(|l| l.size > 0);
        let latest_size = latest.map_or(0, |l| l.size);
        if req.old != latest_size {
            return Reply {
                status: 409,
                content_type: SIZE_MEDIA_TYPE,
                body: format!("{latest_size}\n").into_bytes(),
            };
        }
        match latest {
            None if !req.proof.is_empty() => {
                return Reply::text(422, "old size 0 needs an empty proof");
            }
            None => {}
            Some(l)
                if l.size == checkpoint.size()
                    && (l.root != *checkpoint.root() || !req.proof.is_empty()) =>
            {
                return Reply::text(422, "same size, different root (or a proof)");
            }
            Some(l) if l.size == checkpoint.size() => {}
            Some(l) => {
                if let Err(e) = verify_consistency(
                    l.size,
                    checkpoint.size(),
                    &req.proof,
                    &l.root,
                    checkpoint.root(),
                ) {
                    return Reply::text(422, format!("consistency proof: {e}"));
                }
            }
        }
        let record = Latest {
            size: checkpoint.size(),
            root: *checkpoint.root(),
        };
        if let Err(e) = state.update(checkpoint.origin(), record) {
            // The error names the state's path: logged for the operator,
            // never sent to the log that asked.
            tracing::error!("storing the checkpoint: {e}");
            return Reply::text(500, "storing the checkpoint failed");
        }
        drop(state);
        let time = now.clamp(1, cosignature::MAX_TIME);
        match cosignature::sign(&self.name, &self.key, time, note.text().as_bytes()) {
            Ok(line) => Reply {
                status: 200,
                content_type: "text/plain; charset=utf-8",
                body: line.line().into_bytes(),
            },
            Err(e) => Reply::text(500, e.to_string()),
        }
    }
}

/// A parsed add-checkpoint body.
struct Request<'a> {
    old: u64,
    proof: Vec<Hash>,
    checkpoint: &'a [u8],
}

impl<'a> Request<'a> {
    fn parse(body: &'a [u8]) -> Result<Self, String> {
        let mut rest = body;
        let mut line = || -> Result<&'a [u8], String> {
            let end = rest
                .iter()
                .position(|&b| b == b'\n')
                .ok_or("a line without its newline")?;
            let (l, tail) = rest.split_at(end);
            rest = tail.get(1..).unwrap_or_default();
            Ok(l)
        };
        let first = line()?;
        let old = first
            .strip_prefix(b"old ")
            .and_then(|d| core::str::from_utf8(d).ok())
            .and_then(|d| {
                let canonical = !d.is_empty()
                    && d.bytes().all(|b| b.is_ascii_digit())
                    && (d == "0" || !d.starts_with('0'));
                if canonical { d.parse().ok() } else { None }
            })
            .ok_or("first line is not `old <size>`")?;
        let mut proof = Vec::new();
        loop {
            let l = line()?;
            if l.is_empty() {
                break;
            }
            if proof.len() == MAX_PROOF_LINES {
                return Err(format!("more than {MAX_PROOF_LINES} proof lines"));
            }
            let h: Hash = BASE64
                .decode(l)
                .ok()
                .and_then(|h| h.try_into().ok())
                .ok_or("a proof line is not base64 of 32 bytes")?;
            proof.push(h);
        }
        Ok(Request {
            old,
            proof,
            checkpoint: rest,
        })
    }
}
