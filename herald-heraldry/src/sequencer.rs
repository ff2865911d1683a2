//! The sequencer: the one thread that appends to the Herald's log and
//! publishes its checkpoints (PROFILE P14 *The Herald's log*).
//!
//! Certifications arrive on a bounded queue; whatever is waiting is
//! appended in one write and one sync (group commit). Every `batch`
//! (default 1 s), when the log has grown, a checkpoint is signed and
//! submitted to every witness (C2SP tlog-witness, herald-witness's
//! `WitnessTarget::cosign`, the conduit's round too; in parallel), their
//! cosignatures checked against their keys and added;
//! the checkpoint is then published (`GET /checkpoint`) and every waiting
//! request is answered with its C2SP tlog-proof against it. So a `201`
//! carries a proof a verifier's log policy can accept, and nothing is
//! answered before it is durable and in a published checkpoint.
//!
//! A witness that fails is logged and skipped with a backoff (1 s doubling
//! to 30 s); one that does not answer within 2 s is not waited for (and
//! not asked again until it answers); the checkpoint is published with the
//! cosignatures it has.

use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use herald_merkle::Hash;
use herald_tlog::TlogProof;
use herald_tlog::note::NoteSignature;
use herald_witness::client::Backoff;
use tokio::sync::oneshot;

use crate::herald::Herald;
use crate::store::Store;

/// The longest a checkpoint waits for its witnesses before it is
/// published with the cosignatures it has.
const PATIENCE: Duration = Duration::from_secs(2);

/// A certification to log, and where its answer goes: the entry's bytes
/// (the first issued for its request, when one was) and its proof.
pub(crate) struct Job {
    pub(crate) entry: Vec<u8>,
    pub(crate) request: Option<[u8; 32]>,
    pub(crate) reply: oneshot::Sender<Result<(Vec<u8>, String), String>>,
}

/// The latest checkpoint published, with its cosignatures.
#[derive(Clone, Debug)]
pub(crate) struct Published {
    pub(crate) size: u64,
    pub(crate) text: String,
}

struct Peer {
    cosigned: u64,
    backoff: Backoff,
    /// A submission to it is in flight.
    busy: bool,
}

/// Witnesses' answers: (witness, size submitted, cosignatures or why not).
type Answer = (usize, u64, Result<Vec<NoteSignature>, String>);
type Results = (Sender<Answer>, Receiver<Answer>);

/// The proof of entry `index` against `published`, from `store`'s tree.
pub(crate) fn proof(store: &Store, index: u64, published: &Published) -> Option<String> {
    let hashes = store.tree().inclusion_proof(index, published.size).ok()?;
    Some(TlogProof::new(index, hashes, &published.text).to_text())
}

/// Run until the queue's senders are gone.
pub(crate) fn run(herald: &Arc<Herald>, queue: &Receiver<Job>) {
    let mut peers: Vec<Peer> = herald
        .witnesses
        .iter()
        .map(|_| Peer {
            cosigned: 0,
            backoff: Backoff::new(),
            busy: false,
        })
        .collect();
    let results: Results = std::sync::mpsc::channel();
    let mut waiting: Vec<(u64, Job)> = Vec::new();
    let mut next = Instant::now();
    loop {
        let mut batch = Vec::new();
        match queue.recv_timeout(next.saturating_duration_since(Instant::now())) {
            Ok(j) => batch.push(j),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return,
        }
        while let Ok(j) = queue.try_recv() {
            batch.push(j);
        }
        if !batch.is_empty() {
            append(herald, batch, &mut waiting);
        }
        if Instant::now() >= next {
            next = Instant::now() + herald.batch;
            round(herald, &mut peers, &results);
            answer(herald, &mut waiting);
        }
    }
}

/// Append the new entries of `batch` (a request answered before gets its
/// first entry), durably; park each job until a checkpoint covers it.
fn append(herald: &Herald, batch: Vec<Job>, waiting: &mut Vec<(u64, Job)>) {
    let Ok(mut store) = herald.store.lock() else {
        return;
    };
    let mut fresh: Vec<Vec<u8>> = Vec::new();
    let mut jobs: Vec<(Option<u64>, Job)> = Vec::new();
    // Two jobs for one request in one batch: the first is logged.
    let mut seen: Vec<[u8; 32]> = Vec::new();
    for job in batch {
        let known = job.request.and_then(|r| store.answered(&r));
        let dup = job.request.is_some_and(|r| seen.contains(&r));
        if known.is_none() && !dup {
            if let Some(r) = job.request {
                seen.push(r);
            }
            fresh.push(job.entry.clone());
        }
        jobs.push((known, job));
    }
    match store.append(&fresh) {
        Ok(_) => {
            for (known, job) in jobs {
                let index = known.or_else(|| job.request.and_then(|r| store.answered(&r)));
                match index {
                    Some(i) => waiting.push((i, job)),
                    // An operator's entry through the queue has no request.
                    None => waiting.push((store.len() - 1, job)),
                }
            }
        }
        Err(e) => {
            tracing::error!(error = %e, "the certification log could not be written");
            for (_, job) in jobs {
                let _ = job.reply.send(Err("storage".to_owned()));
            }
        }
    }
}

/// Answer every waiting job the published checkpoint covers.
fn answer(herald: &Herald, waiting: &mut Vec<(u64, Job)>) {
    let Some(published) = herald.published() else {
        return;
    };
    let Ok(store) = herald.store.lock() else {
        return;
    };
    let mut rest = Vec::new();
    for (index, job) in waiting.drain(..) {
        if index >= published.size {
            rest.push((index, job));
            continue;
        }
        let answer = match (store.entry(index), proof(&store, index, &published)) {
            (Ok(entry), Some(p)) => Ok((entry, p)),
            _ => Err("storage".to_owned()),
        };
        let _ = job.reply.send(answer);
    }
    *waiting = rest;
}

/// Sign a checkpoint of the log as it is, when it has grown since the last
/// one (or none was published yet), have the witnesses cosign it, and
/// publish it.
fn round(herald: &Arc<Herald>, peers: &mut [Peer], results: &Results) {
    let checkpoint = {
        let Ok(store) = herald.store.lock() else {
            return;
        };
        let size = store.len();
        if herald.published().is_some_and(|p| p.size >= size) {
            return;
        }
        match herald_tlog::log::sign_checkpoint(
            &herald.origin,
            size,
            store.tree().root(),
            &herald.key,
        ) {
            Ok(c) => c,
            Err(e) => {
                tracing::error!(error = %e, "the checkpoint could not be signed");
                return;
            }
        }
    };
    let size = checkpoint.checkpoint().size();
    let now = Instant::now();
    let mut asked = 0usize;
    for (i, (target, peer)) in herald.witnesses.iter().zip(peers.iter_mut()).enumerate() {
        if peer.busy || !peer.backoff.due(now) {
            continue;
        }
        peer.busy = true;
        asked += 1;
        let (herald, target, cp, from, tx) = (
            Arc::clone(herald),
            target.clone(),
            checkpoint.clone(),
            peer.cosigned,
            results.0.clone(),
        );
        let spawned = std::thread::Builder::new()
            .name("herald-heraldry-witness".into())
            .spawn(move || {
                let proof = |old| consistency_proof(&herald.store, old, size);
                let r = target.cosign(&cp, from, proof);
                let _ = tx.send((i, size, r));
            });
        if spawned.is_err() {
            peer.busy = false;
            asked -= 1;
        }
    }
    // Wait for this round's answers, at most PATIENCE: a witness that
    // hangs delays the checkpoint by that much, never a request past its
    // deadline by more (its answer, when it comes, frees it for a later
    // round).
    let mut lines: Vec<NoteSignature> = Vec::new();
    let until = Instant::now() + PATIENCE;
    while asked > 0 {
        let Ok((i, at, r)) = results
            .1
            .recv_timeout(until.saturating_duration_since(Instant::now()))
        else {
            break;
        };
        let (Some(peer), Some(target)) = (peers.get_mut(i), herald.witnesses.get(i)) else {
            continue;
        };
        peer.busy = false;
        match r {
            Ok(got) => {
                peer.cosigned = peer.cosigned.max(at);
                peer.backoff.answered();
                if at == size {
                    asked -= 1;
                    lines.extend(got);
                }
            }
            Err(e) => {
                let retry = peer.backoff.failed();
                tracing::warn!(witness = %target.url, error = %e, retry_s = retry.as_secs(), "witness failed; retrying");
                if at == size {
                    asked -= 1;
                }
            }
        }
    }
    let mut note = checkpoint.note().clone();
    for line in lines {
        if let Err(e) = note.push(line) {
            tracing::warn!(error = %e, "a cosignature does not fit the checkpoint");
        }
    }
    herald.publish(Published {
        size,
        text: note.to_text(),
    });
}

/// The log's consistency proof from `old` to `size`, what a witness that
/// last cosigned `old` checks a new checkpoint by.
fn consistency_proof(store: &Mutex<Store>, old: u64, size: u64) -> Result<Vec<Hash>, String> {
    let s = store.lock().map_err(|_| "the store lock is poisoned")?;
    s.tree()
        .consistency_proof(old, size)
        .map_err(|e| e.to_string())
}

/// The published checkpoint, shared between the sequencer and readers.
pub(crate) type Shared = RwLock<Option<Published>>;
