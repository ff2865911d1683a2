//! Monitoring Herald logs (PROFILE P14 *The Herald's log*: "a monitor
//! watching a sigil or a handle sees every certification about it, as CT
//! monitors see certificates for a domain"; `herald heraldry monitor`).
//!
//! For each log of a C2SP tlog-policy that names a URL, and each further
//! source given for its origin (a mirror, or what another party was
//! shown), the monitor reads the checkpoint, checks the log's signature and
//! the policy's witness quorum, and checks every pair of checkpoints of
//! one log against each other: one size with two roots, or a smaller tree
//! that is not a prefix of the larger (read from its tiles), is a split
//! view, kept as herald-tlog's self-contained evidence. The checkpoint it
//! kept from its last run (`state`) is one of the pair, so a log that
//! rolls back or forks between runs is caught too. It then reads every
//! entry of the largest consistent tree from the tiles (each checked
//! against the checkpoint's root) and reports the certifications about the
//! watched sigils and handles, newest first.

use core::fmt;
use std::path::{Path, PathBuf};

use data_encoding::HEXLOWER;
use herald_core::cbor::Value;
use herald_core::{EnvelopeRef, Sigil};
use herald_tlog::checkpoint::SignedCheckpoint;
use herald_tlog::evidence::SplitView;
use herald_tlog::tiles::{FetchError, TileReader};
use herald_tlog::{Checkpoint, Policy};
use sha2::{Digest, Sha256};

use crate::certification::Certification;

/// What to look for.
#[derive(Clone, Debug, Default)]
pub struct Watch {
    /// Sigils whose certifications are reported.
    pub subjects: Vec<Sigil>,
    /// Handles (lower case) whose `handle` certifications are reported.
    pub handles: Vec<String>,
}

impl Watch {
    fn matches(&self, c: &Certification) -> bool {
        self.subjects.iter().any(|s| s.same_key_as(&c.subject))
            || (c.claim == "handle"
                && c.value
                    .as_text()
                    .is_some_and(|h| self.handles.iter().any(|w| w.eq_ignore_ascii_case(h))))
    }
}

/// One certification found.
#[derive(Clone, Debug)]
pub struct Found {
    /// The log's origin.
    pub origin: String,
    /// Its index in the log.
    pub index: u64,
    /// The Herald that issued it (its `from`).
    pub herald: String,
    /// Its id.
    pub id: [u8; 32],
    /// When it was issued.
    pub ts: u64,
    /// What it says.
    pub certification: Certification,
}

/// A split view: two checkpoints of one log that cannot both be true.
#[derive(Clone, Debug)]
pub struct Split {
    /// The log's origin.
    pub origin: String,
    /// Where the two checkpoints came from.
    pub sources: (String, String),
    /// The evidence (herald-tlog's format, checked offline).
    pub evidence: SplitView,
}

/// What a run found.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Per log: origin, largest consistent size, the witnesses whose
    /// cosignature verified, and whether the policy's quorum held.
    pub logs: Vec<(String, u64, Vec<String>, bool)>,
    /// Sources that could not be read or did not verify.
    pub problems: Vec<String>,
    /// Split views.
    pub splits: Vec<Split>,
    /// The certifications about what is watched, newest first.
    pub found: Vec<Found>,
}

/// The monitor could not run at all.
#[derive(Debug)]
#[non_exhaustive]
pub enum MonitorError {
    /// The state directory.
    State(herald_fs::FileError),
}

impl fmt::Display for MonitorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MonitorError::State(e) => write!(f, "--state: {e}"),
        }
    }
}

impl std::error::Error for MonitorError {}

/// A source, what it answered, and where its tiles are.
type Input = (String, Result<Vec<u8>, String>, Option<String>);

struct Seen {
    source: String,
    bytes: Vec<u8>,
    checkpoint: Checkpoint,
    tiles: Option<String>,
}

fn fetch(base: &str, path: &str) -> Result<Vec<u8>, FetchError> {
    let url = format!("{}/{path}", base.trim_end_matches('/'));
    herald_witness::client::get(&url).map_err(|reason| FetchError {
        path: path.to_owned(),
        reason,
    })
}

fn state_file(dir: &Path, origin: &str) -> PathBuf {
    dir.join(format!(
        "{}.checkpoint",
        HEXLOWER.encode(&Sha256::digest(origin.as_bytes())[..16])
    ))
}

/// Follow every log of `policy` (and `extra` sources: `(origin, URL)`),
/// keeping the largest consistent checkpoint of each in `state` when given.
pub fn follow(
    policy: &Policy,
    extra: &[(String, String)],
    state: Option<&Path>,
    watch: &Watch,
) -> Result<Report, MonitorError> {
    if let Some(dir) = state {
        herald_fs::create_private_dir(dir).map_err(MonitorError::State)?;
    }
    let mut report = Report::default();
    for log in policy.logs() {
        let origin = log.key.name().to_owned();
        let key = log.key.clone();
        let mut seen: Vec<Seen> = Vec::new();
        let mut inputs: Vec<Input> = Vec::new();
        if let Some(dir) = state {
            let f = state_file(dir, &origin);
            if f.exists() {
                inputs.push((
                    format!("the checkpoint kept from the last run ({})", f.display()),
                    std::fs::read(&f).map_err(|e| e.to_string()),
                    None,
                ));
            }
        }
        let urls = log.url.iter().cloned().chain(
            extra
                .iter()
                .filter(|(o, _)| *o == origin)
                .map(|(_, u)| u.clone()),
        );
        for url in urls {
            let r = fetch(&url, "checkpoint").map_err(|e| e.to_string());
            inputs.push((url.clone(), r, Some(url)));
        }
        let mut cosigned = Vec::new();
        let mut quorum = false;
        for (source, bytes, tiles) in inputs {
            let opened = bytes.and_then(|b| {
                SignedCheckpoint::open(&b, std::slice::from_ref(&key))
                    .map(|(c, _)| (b, c.checkpoint().clone()))
                    .map_err(|e| e.to_string())
            });
            match opened {
                Ok((bytes, checkpoint)) => {
                    if tiles.is_some() {
                        match policy.verify_checkpoint(&bytes) {
                            Ok((_, names)) => {
                                quorum = true;
                                cosigned = names;
                            }
                            Err(e) => report.problems.push(format!("{source}: {e}")),
                        }
                    }
                    seen.push(Seen {
                        source,
                        bytes,
                        checkpoint,
                        tiles,
                    });
                }
                Err(e) => report.problems.push(format!("{source}: {e}")),
            }
        }
        let mut split = false;
        for i in 0..seen.len() {
            for j in i + 1..seen.len() {
                if let Some(s) = compare(&key, &seen[i], &seen[j], &mut report.problems) {
                    split = true;
                    report.splits.push(Split {
                        origin: origin.clone(),
                        sources: (seen[i].source.clone(), seen[j].source.clone()),
                        evidence: s,
                    });
                }
            }
        }
        let Some(largest) = seen
            .iter()
            .filter(|s| s.tiles.is_some())
            .max_by_key(|s| s.checkpoint.size())
        else {
            continue;
        };
        report
            .logs
            .push((origin.clone(), largest.checkpoint.size(), cosigned, quorum));
        if let (Some(dir), false) = (state, split) {
            let f = state_file(dir, &origin);
            let tmp = f.with_extension("tmp");
            if let Err(e) = herald_fs::replace(&f, &tmp, &largest.bytes) {
                report.problems.push(format!("--state: {e}"));
            }
        }
        if let Some(base) = &largest.tiles {
            scan(&origin, base, &largest.checkpoint, watch, &mut report);
        }
    }
    report
        .found
        .sort_by_key(|f| core::cmp::Reverse((f.ts, f.index)));
    Ok(report)
}

/// Two checkpoints of one log: split-view evidence when they conflict.
fn compare(
    key: &herald_tlog::NoteVerifier,
    a: &Seen,
    b: &Seen,
    problems: &mut Vec<String>,
) -> Option<SplitView> {
    let (small, large) = if a.checkpoint.size() <= b.checkpoint.size() {
        (a, b)
    } else {
        (b, a)
    };
    let (s, l) = (&small.checkpoint, &large.checkpoint);
    let prefix = if s.size() == l.size() || s.size() == 0 {
        None
    } else {
        let base = large.tiles.as_ref()?;
        match TileReader::new(|p: &str| fetch(base, p), l).and_then(|r| r.prefix_proof(s.size())) {
            Ok(p) => Some(p),
            Err(e) => {
                problems.push(format!("{}: tiles: {e}", large.source));
                return None;
            }
        }
    };
    let consistent = match &prefix {
        None => s.size() == 0 || s.root() == l.root(),
        Some((x, _)) => x == s.root(),
    };
    if consistent {
        return None;
    }
    let evidence = SplitView::new(key.clone(), &small.bytes, &large.bytes, prefix);
    evidence.verify().ok()?;
    Some(evidence)
}

/// Every entry of the tree of `checkpoint` read from the tiles at `base`,
/// each checked against the root; the certifications `watch` matches.
fn scan(origin: &str, base: &str, checkpoint: &Checkpoint, watch: &Watch, report: &mut Report) {
    let reader = match TileReader::new(|p: &str| fetch(base, p), checkpoint) {
        Ok(r) => r,
        Err(e) => {
            report.problems.push(format!("{base}: tiles: {e}"));
            return;
        }
    };
    let bundles = checkpoint.size().div_ceil(256);
    for b in 0..bundles {
        let entries = match reader.entries(b) {
            Ok(e) => e,
            Err(e) => {
                report.problems.push(format!("{base}: entries: {e}"));
                return;
            }
        };
        for (k, entry) in entries.iter().enumerate() {
            let Ok(env) = EnvelopeRef::decode(entry) else {
                continue;
            };
            let Some(c) = Certification::of(&env) else {
                continue;
            };
            if watch.matches(&c) {
                report.found.push(Found {
                    origin: origin.to_owned(),
                    index: b * 256 + u64::try_from(k).unwrap_or(0),
                    herald: env.from().to_owned(),
                    id: *env.id(),
                    ts: env.ts(),
                    certification: c,
                });
            }
        }
    }
}

/// A claim value as JSON (P3's display form for what a claim holds:
/// text, hex bytes, numbers, maps, arrays).
#[must_use]
pub fn value_json(v: &Value) -> serde_json::Value {
    match v {
        Value::Unsigned(n) => serde_json::Value::from(*n),
        Value::Negative(n) => {
            i64::try_from(*n).map_or(serde_json::Value::Null, |n| serde_json::Value::from(-1 - n))
        }
        Value::Bytes(b) => serde_json::Value::from(HEXLOWER.encode(b)),
        Value::Text(t) => serde_json::Value::from(t.as_str()),
        Value::Array(a) => serde_json::Value::Array(a.iter().map(value_json).collect()),
        Value::Map(m) => serde_json::Value::Object(
            m.iter()
                .map(|(k, v)| (k.to_owned(), value_json(v)))
                .collect(),
        ),
        Value::Float(f) => serde_json::Value::from(f.get()),
        Value::Bool(b) => serde_json::Value::from(*b),
        Value::Null => serde_json::Value::Null,
    }
}

/// One found certification as JSON.
#[must_use]
pub fn found_json(f: &Found) -> serde_json::Value {
    let c = &f.certification;
    serde_json::json!({
        "origin": f.origin,
        "index": f.index,
        "herald": f.herald,
        "id": HEXLOWER.encode(&f.id),
        "ts": f.ts,
        "subject": c.subject.to_string(),
        "claim": c.claim,
        "value": value_json(&c.value),
        "not_after": c.not_after,
        "revokes": c.revokes.map(|r| HEXLOWER.encode(&r)),
    })
}
