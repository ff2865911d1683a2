//! The writer: posts that passed the front door queue here and are
//! received in batches, each batch in one write transaction of the store
//! ([`herald_verify::Receiver::finish`]: claims, lifecycle, stored
//! envelopes, inboxes, traces) committed durably once, then (notary) its
//! leaves appended to the log with one sync and a tree head signed over
//! them. Only then is any post of the batch answered 201: 200 concurrent
//! posts cost a few fsyncs, not 200 (issue 16). How the stages overlap:
//! [`pipeline`].

mod heads;
mod pipeline;

use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use herald_core::cbor::{Map, Value};
use herald_core::{Envelope, EnvelopeRef, Scope, Status};
use herald_verify::{EnvelopeReport, Prechecked, StoreError, StoreTxn};
use tokio::sync::oneshot;

use crate::Conduit;
use crate::mailbox::{self, Stored};
use crate::refusal::Refusal;

/// Most posts received in one batch.
const MAX_BATCH: usize = 512;

/// How often a fleet conduit's writer wakes when idle (sequencer duty).
const FLEET_IDLE: std::time::Duration = std::time::Duration::from_millis(5);

/// A post waiting for the writer.
pub(crate) struct Job {
    pub(crate) bytes: Vec<u8>,
    pub(crate) id: [u8; 32],
    pub(crate) trace: [u8; 32],
    /// The `from` sigil's rate-limit key (`rate`).
    pub(crate) sender: Option<[u8; mailbox::RECIPIENT_LEN]>,
    /// Whether it claims to be a birth (P7).
    pub(crate) birth: bool,
    pub(crate) deadline: Instant,
    pub(crate) reply: oneshot::Sender<Outcome>,
}

/// How a post ended.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// Acknowledged: the 201 body.
    Created(Arc<Vec<u8>>),
    /// Refused for a reason a refusal envelope states.
    Refused(Refusal),
    /// Storage failed: nothing acknowledged (500).
    Failed(String),
}

/// The queue in front of the writer.
pub(crate) type Queue = SyncSender<Job>;

/// Offer `job` without waiting: whether it was queued (a full queue is
/// load to shed).
pub(crate) fn offer(queue: &Queue, job: Job) -> bool {
    queue.try_send(job).is_ok()
}

/// Whether `bytes` is the envelope that `id` names (the id is the hash of
/// its body: P4), so a repeat of it is idempotent and a forgery claiming
/// the id is judged, not answered with the stored copy.
pub(crate) fn is_envelope_of(bytes: &[u8], id: &[u8; 32]) -> bool {
    EnvelopeRef::decode(bytes).is_ok_and(|e| e.id() == id && e.computed_id() == *id)
}

/// What became of one post inside a batch's transaction.
pub(crate) enum Step {
    /// Stored now, with its arrival number and forwarded bytes.
    New { arrival: u64, forwarded: Vec<u8> },
    /// Stored before (idempotent repeat).
    Existing(Stored),
    /// Answered without storing.
    Done(Outcome),
}

/// The writer loop: until every sender of `jobs` is gone.
pub(crate) fn run(conduit: &Conduit, jobs: Receiver<Job>) {
    let jobs = Mutex::new(jobs);
    let Some(fleet) = &conduit.fleet else {
        return pipeline::run(conduit, &jobs);
    };
    // The fleet's one transaction holds the leaves too: one stage.
    receive_loop(conduit, &jobs, &|| {}, &mut |batch| {
        let now = conduit.now();
        let accepted = {
            let prepared = prepare(conduit, &batch, now);
            crate::fleet::writer::accept(conduit, fleet, &batch, prepared)
        };
        crate::fleet::writer::answer(conduit, fleet, batch, accepted, now);
    });
}

/// Take the queued posts in batches of at most [`MAX_BATCH`] and hand
/// each to `batch`; when idle, keep the tree head fresh and call `idle`.
/// Several threads may share `jobs`: each batch goes to one of them.
fn receive_loop(
    conduit: &Conduit,
    jobs: &Mutex<Receiver<Job>>,
    idle: &dyn Fn(),
    batch: &mut dyn FnMut(Vec<Job>),
) {
    // A fleet's sequencer signs heads for other conduits' acceptances too:
    // it looks for new leaves often.
    let wake = match &conduit.fleet {
        Some(_) => conduit.config.batch.min(FLEET_IDLE),
        None => conduit.config.batch,
    };
    loop {
        let next = {
            let jobs = jobs.lock().unwrap_or_else(PoisonError::into_inner);
            match jobs.recv_timeout(wake) {
                Ok(first) => {
                    let mut next = vec![first];
                    while next.len() < MAX_BATCH {
                        match jobs.try_recv() {
                            Ok(job) => next.push(job),
                            Err(_) => break,
                        }
                    }
                    Some(next)
                }
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => return,
            }
        };
        match next {
            Some(next) => batch(next),
            None => {
                conduit.refresh_tree_head();
                idle();
            }
        }
    }
}

/// What can be done for a post without the write lock.
pub(crate) struct Prepared<'b> {
    pub(crate) pre: Result<Prechecked<'b>, StoreError>,
    /// The envelope with the relay's receipt (relay), or as received; made
    /// only for a post whose origin verified and that is not refused.
    pub(crate) forwarded: Option<Vec<u8>>,
    /// Refused before the receive: over a rate limit (`rate`).
    pub(crate) refused: Option<Refusal>,
    pub(crate) now: u64,
}

/// The bytes to store and forward of `job`, received valid: as prepared,
/// or made now at `now` (its origin verified only under the write lock,
/// with a key an earlier post of the batch taught).
pub(crate) fn forwarded_now(
    conduit: &Conduit,
    job: &Job,
    prepared: Option<Vec<u8>>,
    now: u64,
) -> Option<Vec<u8>> {
    prepared.or_else(|| forwarded(conduit, &job.bytes, now))
}

/// Precheck every post of `batch` and sign its receipt (relay), spread
/// over the available cores; each core's part has its signatures verified
/// in batch equations ([`herald_verify::Receiver::precheck_all`]).
fn prepare<'b>(conduit: &Conduit, batch: &'b [Job], now: u64) -> Vec<Prepared<'b>> {
    let part = |jobs: &'b [Job]| -> Vec<Prepared<'b>> {
        let posts: Vec<&'b [u8]> = jobs.iter().map(|j| j.bytes.as_slice()).collect();
        let pre = match &conduit.fleet {
            Some(fleet) => conduit
                .receiver()
                .map(|r| r.precheck_all(&mut crate::fleet::ReadState { fleet }, &posts, now)),
            None => conduit
                .receiver()
                .map(|r| r.precheck_all(&mut r.store().reader(), &posts, now)),
        };
        let pre = pre.unwrap_or_else(|_| posts.iter().map(|_| Err(conduit.live.down())).collect());
        pre.into_iter()
            .zip(jobs)
            .map(|(pre, job)| {
                let charged = match &pre {
                    Ok(p) => conduit.limits.charge(p, job.sender, job.birth),
                    Err(_) => Ok(()),
                };
                let verified = pre.as_ref().is_ok_and(|p| p.origin_verified());
                let refused = charged.err().map(Refusal::RateLimited);
                Prepared {
                    forwarded: (verified && refused.is_none())
                        .then(|| forwarded(conduit, &job.bytes, now))
                        .flatten(),
                    pre,
                    refused,
                    now,
                }
            })
            .collect()
    };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    if threads < 2 || batch.len() < 4 {
        return part(batch);
    }
    let chunk = batch.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let handles: Vec<_> = batch
            .chunks(chunk)
            .map(|jobs| scope.spawn(move || part(jobs)))
            .collect();
        let mut out = Vec::with_capacity(batch.len());
        for (h, jobs) in handles.into_iter().zip(batch.chunks(chunk)) {
            match h.join() {
                Ok(v) => out.extend(v),
                // A panicking precheck: do that part here, where a panic
                // surfaces.
                Err(_) => out.extend(part(jobs)),
            }
        }
        out
    })
}

/// The bytes to store and forward: with the relay's `conduit_receipt` at
/// `now` (relay), else as received; `None` when not an envelope.
fn forwarded(conduit: &Conduit, bytes: &[u8], now: u64) -> Option<Vec<u8>> {
    let env = Envelope::from_bytes(bytes.to_vec()).ok()?;
    if conduit.config.roles.relay {
        env.cosign(&conduit.key, Scope::ConduitReceipt, Some(now))
            .ok()
            .map(Envelope::into_bytes)
    } else {
        Some(env.into_bytes())
    }
}

/// Receive one post inside the batch's transaction.
fn receive_one(
    conduit: &Conduit,
    txn: &redb::WriteTransaction,
    tables: &mut mailbox::Tables<'_>,
    job: &Job,
    prep: Prepared<'_>,
) -> Step {
    let fail = |e: &dyn std::fmt::Display| Step::Done(Outcome::Failed(e.to_string()));
    match tables.get(&job.id) {
        Ok(Some(stored)) if is_envelope_of(&job.bytes, &job.id) => return Step::Existing(stored),
        Ok(_) => {}
        Err(e) => return fail(&e),
    }
    let Prepared {
        pre,
        forwarded,
        refused,
        now,
    } = prep;
    if let Some(r) = refused {
        return Step::Done(Outcome::Refused(r));
    }
    let finished = pre.and_then(|pre| {
        let receiver = conduit.receiver()?;
        receiver.finish(&mut StoreTxn::new(receiver.store(), txn), pre)
    });
    let report = match finished {
        Ok(r) => r,
        Err(e) => return fail(&e),
    };
    if report.status() != Status::Valid {
        return Step::Done(Outcome::Refused(refusal_of(&report)));
    }
    let Some(forwarded) = forwarded_now(conduit, job, forwarded, now) else {
        return Step::Done(Outcome::Refused(Refusal::Invalid(vec!["malformed"])));
    };
    let view = env_view(&forwarded);
    let to = view
        .as_ref()
        .and_then(|v| v.to())
        .and_then(|(_, s)| mailbox::recipient(&s));
    match tables.put(&job.id, &job.trace, to, &forwarded) {
        Ok(arrival) => Step::New { arrival, forwarded },
        Err(e) => fail(&e),
    }
}

fn env_view(bytes: &[u8]) -> Option<EnvelopeRef<'_>> {
    EnvelopeRef::decode(bytes).ok()
}

/// The refusal a report calls for (CONDUIT.md): `409` when the pair is
/// held by another envelope, else `422` with every P11 code.
pub(crate) fn refusal_of(report: &EnvelopeReport) -> Refusal {
    if report.has(herald_core::ReasonCode::ReplayedNonce) {
        return Refusal::Replayed;
    }
    let mut codes: Vec<&'static str> = report.reasons.iter().map(|r| r.code.name()).collect();
    codes.dedup();
    if codes.is_empty() {
        codes.push("malformed");
    }
    Refusal::Invalid(codes)
}

/// Notary: log the new envelopes of `steps` (one sync) and sign a tree
/// head over them; the head their 201 bodies are answered with (`None`
/// without a notary or while the log is empty).
fn notarize<'s>(
    conduit: &Conduit,
    steps: impl Iterator<Item = &'s Step>,
    now: u64,
) -> Result<Option<herald_verify::SignedTreeHead>, String> {
    let Some(notary) = &conduit.notary else {
        return Ok(None);
    };
    let mut arrivals = Vec::new();
    let mut views = Vec::new();
    for step in steps {
        if let Step::New { arrival, forwarded } = step {
            let view = env_view(forwarded).ok_or("a stored envelope no longer decodes")?;
            arrivals.push(*arrival);
            views.push(view);
        }
    }
    let mut n = notary.lock().map_err(|_| "the notary lock is poisoned")?;
    if !views.is_empty() {
        let indices = n.append(&views).map_err(|e| format!("audit log: {e}"))?;
        if indices != arrivals {
            return Err("audit log: leaf indices differ from arrival numbers".into());
        }
    }
    n.sign(&conduit.key, now)
        .map_err(|e| format!("audit log: {e}"))?;
    let head = n.sth().cloned();
    drop(n);
    conduit.witnesses.nudge();
    Ok(head)
}

/// The P1 map of a 201 body (CONDUIT.md): `{envelope, index?, proof?}`.
pub(crate) fn body(forwarded: Vec<u8>, index: Option<u64>, proof: Option<Value>) -> Vec<u8> {
    let mut map = Map::new();
    map.insert("envelope", Value::Bytes(forwarded));
    if let Some(i) = index {
        map.insert("index", Value::from(i));
    }
    if let Some(p) = proof {
        map.insert("proof", p);
    }
    Value::Map(map).to_vec()
}
