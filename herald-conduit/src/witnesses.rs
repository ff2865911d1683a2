//! The notary asks witnesses to cosign its checkpoints (CONDUIT.md,
//! *Witnesses*; C2SP tlog-witness v1.0.0, tlog-cosignature v1): each new
//! checkpoint goes to every `--witness` with the consistency proof from
//! the size that witness last cosigned (a 409 names it, and the submission
//! is retried from there, herald-witness's [`client`]); each answer is
//! checked against that witness's verifier key before it is published
//! (herald-witness's [`WitnessTarget::cosign`], the round a Herald's
//! sequencer runs too);
//! `GET /checkpoint` then serves the checkpoint with the cosignatures
//! gathered so far.
//!
//! This never blocks or fails a post: the rounds run on their own thread,
//! which takes the notary lock only to read the checkpoint and a proof,
//! never across a request. A witness that is down or answers wrongly is
//! logged (`tracing`) and retried with a backoff (1 s doubling to
//! 30 s). A round's checkpoint is published once every witness has
//! cosigned it, or after 5 s with the cosignatures it has (more are added
//! as they come); only then does a newer checkpoint start a new round, so
//! a slow witness under steady traffic still gets to cosign.

use std::sync::Mutex;
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender};
use std::time::{Duration, Instant};

use herald_merkle::Hash;
use herald_tlog::checkpoint::SignedCheckpoint;
use herald_tlog::note::{NoteSignature, NoteVerifier};
use herald_witness::client::{Backoff, WitnessTarget};

use crate::Conduit;
use crate::local::SharedNotary;

/// How often the round thread looks for a new tree head or a due retry
/// when nothing nudges it.
const TICK: Duration = Duration::from_millis(250);
/// How long a round waits for every witness before its checkpoint is
/// published with the cosignatures it has and a newer one may start.
const PATIENCE: Duration = Duration::from_secs(5);

/// The witnesses of a conduit and what they have cosigned.
#[derive(Debug)]
pub(crate) struct Witnesses {
    targets: Vec<WitnessTarget>,
    /// The log whose checkpoints they cosign (a local notary's; a fleet
    /// does not submit to witnesses yet).
    notary: Option<SharedNotary>,
    nudge: SyncSender<()>,
    rounds: Mutex<Option<Receiver<()>>>,
    /// The newest checkpoint submitted, with the cosignatures so far.
    published: Mutex<Option<String>>,
}

impl Witnesses {
    /// The witnesses of `targets`, cosigning `notary`'s checkpoints (no
    /// targets or no log: the thread is never started).
    pub(crate) fn new(targets: Vec<WitnessTarget>, notary: Option<SharedNotary>) -> Self {
        let (nudge, rounds) = std::sync::mpsc::sync_channel(1);
        Self {
            targets,
            notary,
            nudge,
            rounds: Mutex::new(Some(rounds)),
            published: Mutex::new(None),
        }
    }

    /// A new tree head was signed: start a round now rather than at the
    /// next tick. Never waits.
    pub(crate) fn nudge(&self) {
        // Full: a nudge is already pending; disconnected: shutting down.
        if !self.targets.is_empty() {
            let _ = self.nudge.try_send(());
        }
    }

    /// The newest checkpoint submitted to the witnesses with the
    /// cosignatures gathered so far (`GET /checkpoint`), once there is one.
    pub(crate) fn published(&self) -> Option<String> {
        self.published.lock().ok().and_then(|p| p.clone())
    }

    /// Start the round thread (when there are witnesses); it ends when the
    /// conduit closes. Join it after the server has stopped.
    pub(crate) fn spawn(
        conduit: &std::sync::Arc<Conduit>,
    ) -> std::io::Result<Option<std::thread::JoinHandle<()>>> {
        if conduit.witnesses.targets.is_empty() || conduit.witnesses.notary.is_none() {
            return Ok(None);
        }
        let Some(rounds) = conduit
            .witnesses
            .rounds
            .lock()
            .ok()
            .and_then(|mut r| r.take())
        else {
            return Ok(None);
        };
        let conduit = std::sync::Arc::clone(conduit);
        std::thread::Builder::new()
            .name("herald-conduit-witnesses".into())
            .spawn(move || run(&conduit, &rounds))
            .map(Some)
    }
}

/// What the notary knows of one witness.
struct Peer {
    /// The size it last cosigned for this log (0: unknown).
    cosigned: u64,
    /// Its cosignatures of the current round's checkpoint, once it gave
    /// them.
    line: Option<Vec<NoteSignature>>,
    /// When to try it again.
    backoff: Backoff,
}

/// One checkpoint being cosigned.
struct Round {
    checkpoint: SignedCheckpoint,
    started: Instant,
    /// How many cosignatures the published copy of it carries, if any.
    published: Option<usize>,
}

/// The round thread: until the conduit closes.
fn run(conduit: &Conduit, rounds: &Receiver<()>) {
    let targets = &conduit.witnesses.targets;
    let mut peers: Vec<Peer> = targets
        .iter()
        .map(|_| Peer {
            cosigned: 0,
            line: None,
            backoff: Backoff::new(),
        })
        .collect();
    let mut round: Option<Round> = None;
    loop {
        match rounds.recv_timeout(TICK) {
            Ok(()) | Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return,
        }
        if *conduit.closing.borrow() {
            return;
        }
        // A round gives way to a newer checkpoint once it is complete or
        // has waited PATIENCE for a witness.
        let settled = round.as_ref().is_none_or(|r| {
            peers.iter().all(|p| p.line.is_some()) || r.started.elapsed() >= PATIENCE
        });
        if settled {
            match latest_checkpoint(conduit) {
                Ok(Some(cp))
                    if round.as_ref().is_none_or(|r| {
                        r.checkpoint.checkpoint().size() < cp.checkpoint().size()
                    }) =>
                {
                    for p in &mut peers {
                        p.line = None;
                    }
                    round = Some(Round {
                        checkpoint: cp,
                        started: Instant::now(),
                        published: None,
                    });
                }
                Ok(_) => {}
                Err(e) => tracing::warn!(error = %e, "witnesses: cannot read the checkpoint"),
            }
        }
        let Some(r) = &mut round else { continue };
        for (target, peer) in targets.iter().zip(&mut peers) {
            // A slow witness must not hold a shutdown up longer than one
            // request (herald-witness's client timeout).
            if *conduit.closing.borrow() {
                return;
            }
            if peer.line.is_some() || !peer.backoff.due(Instant::now()) {
                continue;
            }
            let size = r.checkpoint.checkpoint().size();
            let proof = |old| consistency_proof(conduit, old, size);
            match target.cosign(&r.checkpoint, peer.cosigned, proof) {
                Ok(line) => {
                    if peer.backoff.answered() {
                        tracing::info!(witness = %target.url, "witness cosigning again");
                    }
                    peer.cosigned = r.checkpoint.checkpoint().size();
                    peer.line = Some(line);
                }
                Err(e) => {
                    let retry = peer.backoff.failed();
                    tracing::warn!(
                        witness = %target.url,
                        error = %e,
                        retry_s = retry.as_secs(),
                        "witness failed; retrying"
                    );
                }
            }
        }
        // Published once complete, or after PATIENCE with what it has (and
        // again as late cosignatures arrive).
        let n = peers.iter().filter(|p| p.line.is_some()).count();
        let due = n == peers.len() || r.started.elapsed() >= PATIENCE;
        if due && r.published != Some(n) {
            let lines = peers.iter().filter_map(|p| p.line.clone()).flatten();
            publish(conduit, &r.checkpoint, lines);
            r.published = Some(n);
        }
    }
}

/// The notary's checkpoint of its latest tree head (`None` while the log
/// is empty).
fn latest_checkpoint(conduit: &Conduit) -> Result<Option<SignedCheckpoint>, String> {
    let Some(notary) = &conduit.witnesses.notary else {
        return Ok(None);
    };
    let text = {
        let mut n = notary.lock().map_err(|_| "the notary lock is poisoned")?;
        if n.log().is_empty() {
            return Ok(None);
        }
        n.checkpoint(&conduit.key, &conduit.origin)
            .map_err(|e| e.to_string())?
    };
    let own = NoteVerifier::ed25519(&conduit.origin, conduit.key.public_key())
        .map_err(|e| e.to_string())?;
    SignedCheckpoint::open(text.as_bytes(), &[own])
        .map(|(cp, _)| Some(cp))
        .map_err(|e| e.to_string())
}

/// The notary's consistency proof from `old` to `size`, what a witness
/// that last cosigned `old` checks a new checkpoint by.
fn consistency_proof(conduit: &Conduit, old: u64, size: u64) -> Result<Vec<Hash>, String> {
    let notary = conduit.witnesses.notary.as_ref().ok_or("not a notary")?;
    let n = notary.lock().map_err(|_| "the notary lock is poisoned")?;
    n.log()
        .tree()
        .consistency_proof(old, size)
        .map_err(|e| e.to_string())
}

/// Publish `cp` with `lines` (`GET /checkpoint`).
fn publish(conduit: &Conduit, cp: &SignedCheckpoint, lines: impl Iterator<Item = NoteSignature>) {
    let mut note = cp.note().clone();
    for line in lines {
        if let Err(e) = note.push(line) {
            tracing::warn!(error = %e, "witnesses: a cosignature does not fit the note");
        }
    }
    if let Ok(mut p) = conduit.witnesses.published.lock() {
        *p = Some(note.to_text());
    }
}
