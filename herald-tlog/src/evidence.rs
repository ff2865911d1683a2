//! Split-view evidence (spec §5.3, THREATS §4.4): two checkpoints
//! validly signed by one log key for one origin that cannot both be true,
//! kept as a self-contained proof of misbehaviour that anyone checks
//! offline.
//!
//! - Same size, different roots: the two notes are the proof.
//! - Sizes `m < n`: the proof adds the root `x` of the larger tree at size
//!   `m` and an RFC 9162 consistency proof from `(m, x)` to `(n, root_b)`.
//!   That proof binds `x` as the only root the size-`n` tree can have had at
//!   size `m` (short of a SHA-256 collision), so `x ≠ root_a` shows the log
//!   signed two trees neither of which extends the other.
//!
//! The file format (text):
//!
//! ```text
//! herald-split-view-v1
//! log <verifier key>
//! prefix <base64 root of the larger tree at the smaller size>   (sizes differ)
//! proof <base64 hash>                                            (zero or more)
//! note <length>
//! <length bytes: the smaller (or first) signed checkpoint>
//! note <length>
//! <length bytes: the other signed checkpoint>
//! ```

use core::fmt;

use data_encoding::BASE64;
use herald_merkle::{Hash, verify_consistency};

use crate::checkpoint::{CheckpointError, SignedCheckpoint};
use crate::note::NoteVerifier;

/// First line of an evidence file.
const MAGIC: &str = "herald-split-view-v1";

/// Evidence of a split view.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitView {
    log: NoteVerifier,
    prefix: Option<(Hash, Vec<Hash>)>,
    a: Vec<u8>,
    b: Vec<u8>,
}

/// Evidence that does not prove a split view.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EvidenceError {
    /// The file is not in the evidence format.
    Format {
        /// Its line (from 1).
        line: usize,
        /// The rule broken.
        rule: &'static str,
    },
    /// A checkpoint is malformed or not signed by the log key.
    Checkpoint {
        /// Which (1 or 2).
        which: u8,
        /// Why.
        error: CheckpointError,
    },
    /// The two checkpoints are of different origins.
    Origins,
    /// They are consistent: no misbehaviour.
    Consistent,
    /// The consistency proof of the larger tree does not verify.
    Proof,
    /// Sizes differ but no prefix root and proof are given, or sizes are
    /// equal and they are.
    Shape,
}

impl fmt::Display for EvidenceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EvidenceError::Format { line, rule } => write!(f, "evidence line {line}: {rule}"),
            EvidenceError::Checkpoint { which, error } => write!(f, "checkpoint {which}: {error}"),
            EvidenceError::Origins => f.write_str("the checkpoints are of different origins"),
            EvidenceError::Consistent => {
                f.write_str("the checkpoints are consistent: no split view")
            }
            EvidenceError::Proof => {
                f.write_str("the consistency proof does not verify against the larger checkpoint")
            }
            EvidenceError::Shape => {
                f.write_str("a prefix root and proof are needed exactly when the sizes differ")
            }
        }
    }
}

impl std::error::Error for EvidenceError {}

/// What verified evidence shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Proven {
    /// The origin.
    pub origin: String,
    /// The two sizes.
    pub sizes: (u64, u64),
    /// The two roots the log signed.
    pub roots: (Hash, Hash),
}

impl SplitView {
    /// Evidence from two signed checkpoints (smaller first) and, when
    /// their sizes differ, the larger tree's root at the smaller size and
    /// the consistency proof from there (from that log's tiles).
    #[must_use]
    pub fn new(log: NoteVerifier, a: &[u8], b: &[u8], prefix: Option<(Hash, Vec<Hash>)>) -> Self {
        SplitView {
            log,
            prefix,
            a: a.to_vec(),
            b: b.to_vec(),
        }
    }

    /// The log key the evidence is about.
    #[must_use]
    pub fn log(&self) -> &NoteVerifier {
        &self.log
    }

    /// Check the evidence offline: both notes signed by the log key, one
    /// origin, and the two trees cannot both be true.
    pub fn verify(&self) -> Result<Proven, EvidenceError> {
        let open = |which, bytes: &[u8]| {
            SignedCheckpoint::open(bytes, std::slice::from_ref(&self.log))
                .map(|(c, _)| c.checkpoint().clone())
                .map_err(|error| EvidenceError::Checkpoint { which, error })
        };
        let a = open(1, &self.a)?;
        let b = open(2, &self.b)?;
        if a.origin() != b.origin() {
            return Err(EvidenceError::Origins);
        }
        match (&self.prefix, a.size().cmp(&b.size())) {
            (None, core::cmp::Ordering::Equal) => {
                if a.root() == b.root() {
                    return Err(EvidenceError::Consistent);
                }
            }
            (Some((x, proof)), core::cmp::Ordering::Less) => {
                verify_consistency(a.size(), b.size(), proof, x, b.root())
                    .map_err(|_| EvidenceError::Proof)?;
                if x == a.root() {
                    return Err(EvidenceError::Consistent);
                }
            }
            _ => return Err(EvidenceError::Shape),
        }
        Ok(Proven {
            origin: a.origin().to_owned(),
            sizes: (a.size(), b.size()),
            roots: (*a.root(), *b.root()),
        })
    }

    /// The evidence file.
    #[must_use]
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = format!("{MAGIC}\nlog {}\n", self.log).into_bytes();
        if let Some((x, proof)) = &self.prefix {
            out.extend_from_slice(format!("prefix {}\n", BASE64.encode(x)).as_bytes());
            for h in proof {
                out.extend_from_slice(format!("proof {}\n", BASE64.encode(h)).as_bytes());
            }
        }
        for note in [&self.a, &self.b] {
            out.extend_from_slice(format!("note {}\n", note.len()).as_bytes());
            out.extend_from_slice(note);
        }
        out
    }

    /// Parse an evidence file (does not verify it: see [`SplitView::verify`]).
    pub fn parse(bytes: &[u8]) -> Result<Self, EvidenceError> {
        let mut rest = bytes;
        let mut line_no = 0usize;
        let next_line = |rest: &mut &[u8]| -> Option<String> {
            let end = rest.iter().position(|&b| b == b'\n')?;
            let l = core::str::from_utf8(&rest[..end]).ok()?.to_owned();
            *rest = &rest[end + 1..];
            Some(l)
        };
        let bad = |line, rule| EvidenceError::Format { line, rule };
        line_no += 1;
        if next_line(&mut rest).as_deref() != Some(MAGIC) {
            return Err(bad(line_no, "not herald-split-view-v1"));
        }
        line_no += 1;
        let log = next_line(&mut rest)
            .and_then(|l| l.strip_prefix("log ").map(str::to_owned))
            .and_then(|v| NoteVerifier::parse(&v).ok())
            .ok_or(bad(line_no, "not `log <verifier key>`"))?;
        let hash = |s: &str| -> Option<Hash> { BASE64.decode(s.as_bytes()).ok()?.try_into().ok() };
        let mut prefix: Option<(Hash, Vec<Hash>)> = None;
        let mut notes = Vec::new();
        while notes.len() < 2 {
            line_no += 1;
            let l = next_line(&mut rest).ok_or(bad(line_no, "missing line"))?;
            if let Some(x) = l.strip_prefix("prefix ") {
                if prefix.is_some() || !notes.is_empty() {
                    return Err(bad(line_no, "prefix out of place"));
                }
                prefix = Some((
                    hash(x).ok_or(bad(line_no, "prefix is not a base64 hash"))?,
                    Vec::new(),
                ));
            } else if let Some(h) = l.strip_prefix("proof ") {
                let (_, proof) = prefix
                    .as_mut()
                    .filter(|_| notes.is_empty())
                    .ok_or(bad(line_no, "proof without prefix"))?;
                proof.push(hash(h).ok_or(bad(line_no, "proof is not a base64 hash"))?);
            } else if let Some(n) = l.strip_prefix("note ") {
                let n: usize = n.parse().map_err(|_| bad(line_no, "note length"))?;
                if rest.len() < n {
                    return Err(bad(line_no, "note shorter than its length"));
                }
                let (note, tail) = rest.split_at(n);
                line_no += note.iter().filter(|&&b| b == b'\n').count();
                notes.push(note.to_vec());
                rest = tail;
            } else {
                return Err(bad(line_no, "unknown line"));
            }
        }
        if !rest.is_empty() {
            return Err(bad(line_no + 1, "trailing bytes"));
        }
        let b = notes.pop().unwrap_or_default();
        let a = notes.pop().unwrap_or_default();
        Ok(SplitView { log, prefix, a, b })
    }
}
