//! The batch writer, over any [`Backend`]: posts that passed the front
//! door queue here and are received in batches, each batch in one
//! transaction of the backend (claims, lifecycle, stored envelopes,
//! inboxes, traces; a fleet's log leaves too) committed durably once, then
//! (notary) logged under a tree head signed over them. Only then is any
//! post of the batch answered 201: 200 concurrent posts cost a few
//! fsyncs, not 200. How the stages overlap: [`pipeline`].
//!
//! One post, top to bottom: [`Backend::prepare`] (precheck, then
//! [`settle`]: rate and receipt, on every core) → [`Backend::receive`] →
//! [`receive_one`] in its transaction → [`Backend::answer`] →
//! [`created_body`] → [`reply`].
//!
//! The writer is asynchronous, tasks of the runtime that serves HTTP: a
//! backend whose work blocks (redb's commits and syncs, [`Backend::blocks`])
//! has each stage on a thread of its own ([`crate::blocking::own_thread`]),
//! a fleet's database work is awaited.
//!
//! [`Backend::prepare`]: crate::backend::Backend::prepare
//! [`Backend::receive`]: crate::backend::Backend::receive
//! [`Backend::answer`]: crate::backend::Backend::answer
//! [`Backend::blocks`]: crate::backend::Backend::blocks

mod pipeline;

use std::sync::Arc;
use std::time::Instant;

use herald_core::cbor::{Map, Value};
use herald_core::{Envelope, EnvelopeRef, Scope, Status};
use herald_verify::{EnvelopeReport, InclusionProof, LiveState, Prechecked, StoreError};
use tokio::sync::mpsc::{Receiver, Sender};
use tokio::sync::{Mutex, oneshot};

use crate::Conduit;
use crate::refusal::Refusal;
use crate::stored::{RECIPIENT_LEN, Stored, recipient};

pub(crate) use pipeline::run;

/// Most posts received in one batch.
const MAX_BATCH: usize = 512;

/// A post waiting for the writer.
pub(crate) struct Job {
    pub(crate) bytes: Vec<u8>,
    pub(crate) id: [u8; 32],
    pub(crate) trace: [u8; 32],
    /// The `from` sigil's rate-limit key (`rate`).
    pub(crate) sender: Option<[u8; RECIPIENT_LEN]>,
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
    /// The envelope was erased: `410` with its tombstone (CONDUIT.md
    /// *Retention and erasure*), never stored again.
    Erased(Vec<u8>),
}

/// The queue in front of the writer.
pub(crate) type Queue = Sender<Job>;

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

/// A batch received and committed, not yet logged or answered.
pub(crate) struct Committed {
    pub(crate) batch: Vec<Job>,
    /// One per post received (none when the transaction failed to begin).
    pub(crate) steps: Vec<Step>,
    /// Why nothing of the batch may be acknowledged.
    pub(crate) failed: Option<String>,
    pub(crate) now: u64,
}

/// A batch as a backend prepares and receives it: the conduit, the posts
/// taken from the queue, and the time they are judged at.
#[derive(Clone, Copy)]
pub(crate) struct Batch<'a> {
    pub(crate) conduit: &'a Conduit,
    pub(crate) jobs: &'a [Job],
    pub(crate) now: u64,
}

/// What [`crate::backend::Backend::receive`] made of a batch: its steps
/// (none when nothing was received), and why nothing of it may be
/// acknowledged.
pub(crate) type Received = (Vec<Step>, Option<String>);

/// An accepted post as [`Txn::store`] stores it.
pub(crate) struct New<'a> {
    pub(crate) job: &'a Job,
    /// Its recipient's inbox.
    pub(crate) to: Option<[u8; RECIPIENT_LEN]>,
    /// Its bytes as forwarded, and a view of them.
    pub(crate) forwarded: &'a [u8],
    pub(crate) view: &'a EnvelopeRef<'a>,
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

/// A backend's transaction as [`receive_one`] uses it.
pub(crate) trait Txn {
    /// The envelope stored as `id`, if any.
    fn stored(&mut self, id: &[u8; 32]) -> Result<Option<Stored>, String>;
    /// The tombstone of `id` if it was erased (`crate::erase`).
    fn erased(&mut self, id: &[u8; 32]) -> Result<Option<Vec<u8>>, String>;
    /// The receiver whose rules judge the posts, and the live state they
    /// read and write in this transaction.
    fn live(&mut self) -> (&herald_verify::Receiver, &mut dyn LiveState);
    /// The P8 and P10 rules over `pre` in this transaction
    /// (herald-verify's `Receiver::finish`). Borrowed, and a clone of it
    /// finished: a backend that reads its state ahead of the rules (the
    /// fleet's) may judge a post again.
    fn judge(&mut self, pre: &Prechecked<'_>) -> Result<EnvelopeReport, String> {
        let (receiver, state) = self.live();
        receiver
            .finish(state, pre.clone())
            .map_err(|e| e.to_string())
    }
    /// Store the accepted post `new` with its inbox entry: its arrival
    /// number.
    fn store(&mut self, new: &New<'_>) -> Result<u64, String>;
}

/// Receive one post in `txn`: refused when its deadline passed. A storage
/// failure is an `Err` (the backend decides what else of the batch fails
/// with it); a refusal is a step. `prep` is borrowed: a backend may
/// receive the batch again.
pub(crate) fn receive_one(
    conduit: &Conduit,
    txn: &mut dyn Txn,
    job: &Job,
    prep: &Prepared<'_>,
) -> Result<Step, String> {
    if Instant::now() >= job.deadline {
        return Ok(Step::Done(Outcome::Refused(Refusal::Deadline)));
    }
    if is_envelope_of(&job.bytes, &job.id) {
        if let Some(stored) = txn.stored(&job.id)? {
            // Accepted before (through another conduit of a fleet too).
            return Ok(Step::Existing(stored));
        }
        // Erased: its tombstone, before the replay cache would call it a
        // replay (its claim remains).
        if let Some(tombstone) = txn.erased(&job.id)? {
            return Ok(Step::Done(Outcome::Erased(tombstone)));
        }
    }
    let Prepared {
        pre,
        forwarded,
        refused,
        now,
    } = prep;
    if let Some(r) = refused {
        // Over a rate limit (the front door's rules: `crate::rate`).
        return Ok(Step::Done(Outcome::Refused(r.clone())));
    }
    let report = txn.judge(pre.as_ref().map_err(|e| e.to_string())?)?;
    if report.status() != Status::Valid {
        return Ok(Step::Done(Outcome::Refused(refusal_of(&report))));
    }
    // Its origin verified only now, with a key an earlier post of the
    // batch taught: the receipt is made now.
    let malformed = || {
        Ok(Step::Done(Outcome::Refused(Refusal::Invalid(vec![
            "malformed",
        ]))))
    };
    let Some(forwarded) = forwarded
        .clone()
        .or_else(|| self::forwarded(conduit, &job.bytes, *now))
    else {
        return malformed();
    };
    let Ok(view) = EnvelopeRef::decode(&forwarded) else {
        return malformed();
    };
    let to = view.to().and_then(|(_, s)| recipient(&s));
    let arrival = txn.store(&New {
        job,
        to,
        forwarded: &forwarded,
        view: &view,
    })?;
    Ok(Step::New { arrival, forwarded })
}

/// The next batch of at most [`MAX_BATCH`] queued posts: `Some(None)`
/// when none came for [`crate::backend::Backend::idle_every`], `None` once
/// every sender is gone. Several tasks may share `jobs`: each batch goes
/// to one of them.
async fn next_batch(conduit: &Conduit, jobs: &Mutex<Receiver<Job>>) -> Option<Option<Vec<Job>>> {
    let wake = conduit.backend.idle_every(conduit.config.batch);
    let mut jobs = jobs.lock().await;
    match tokio::time::timeout(wake, jobs.recv()).await {
        Ok(Some(first)) => {
            let mut next = vec![first];
            while next.len() < MAX_BATCH {
                match jobs.try_recv() {
                    Ok(job) => next.push(job),
                    Err(_) => break,
                }
            }
            Some(Some(next))
        }
        Ok(None) => None,
        Err(_) => Some(None),
    }
}

/// What a prechecked post needs before its receive: a refusal over its
/// sender's rate, and its bytes as forwarded.
pub(crate) type Settled = (Option<Refusal>, Option<Vec<u8>>);

/// Settle `posts` (each prechecked, with its job) on this thread: charge
/// the senders' rates and sign the receipts (relay). A backend's
/// [`crate::backend::Backend::prepare`] runs it on every core.
pub(crate) fn settle(
    conduit: &Conduit,
    posts: &[(&Result<Prechecked<'_>, StoreError>, &Job)],
    now: u64,
) -> Vec<Settled> {
    posts
        .iter()
        .map(|(pre, job)| {
            let charged = match pre {
                Ok(p) => conduit.limits.charge(p, job.sender, job.birth),
                Err(_) => Ok(()),
            };
            let verified = pre.as_ref().is_ok_and(|p| p.origin_verified());
            let refused = charged.err().map(Refusal::RateLimited);
            // Made only when its origin verified and it is not refused.
            let forwarded = (verified && refused.is_none())
                .then(|| forwarded(conduit, &job.bytes, now))
                .flatten();
            (refused, forwarded)
        })
        .collect()
}

/// [`settle`] the posts of `batch` prechecked as `pre` (in order) on every
/// core: the batch prepared.
pub(crate) fn settle_all<'b>(
    batch: Batch<'_>,
    pre: Vec<Result<Prechecked<'b>, StoreError>>,
) -> Vec<Prepared<'b>> {
    let posts: Vec<_> = pre.iter().zip(batch.jobs).collect();
    let settled = crate::blocking::on_cores(&posts, |part| settle(batch.conduit, part, batch.now));
    drop(posts);
    prepared(pre, settled.into_iter().flatten(), batch.now)
}

/// The posts prechecked as `pre` and settled as `settled` (in order),
/// prepared at `now`.
pub(crate) fn prepared<'b>(
    pre: Vec<Result<Prechecked<'b>, StoreError>>,
    settled: impl IntoIterator<Item = Settled>,
    now: u64,
) -> Vec<Prepared<'b>> {
    pre.into_iter()
        .zip(settled)
        .map(|(pre, (refused, forwarded))| Prepared {
            pre,
            forwarded,
            refused,
            now,
        })
        .collect()
}

/// The posts of `jobs` as [`Prechecked`] reads them.
pub(crate) fn posts(jobs: &[Job]) -> Vec<&[u8]> {
    jobs.iter().map(|j| j.bytes.as_slice()).collect()
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

/// The 201 body (CONDUIT.md), a P1 map `{envelope, index?, proof?}`: the
/// envelope as forwarded and, for a notary (`notary`), its leaf index
/// `arrival` and its inclusion proof when a tree head covers it.
pub(crate) fn created_body(
    forwarded: Vec<u8>,
    notary: bool,
    arrival: u64,
    proof: Option<InclusionProof>,
) -> Vec<u8> {
    let mut map = Map::new();
    map.insert("envelope", Value::Bytes(forwarded));
    if notary {
        map.insert("index", Value::from(arrival));
        if let Some(p) = proof {
            map.insert("proof", p.to_value());
        }
    }
    Value::Map(map).to_vec()
}

/// Answer `job` with `outcome` (the post's handler may be gone: its
/// deadline passed); count a delivery for the long polls.
pub(crate) fn reply(conduit: &Conduit, job: Job, outcome: Outcome) {
    if let Outcome::Created(_) = outcome {
        conduit.deliveries.send_modify(|n| *n += 1);
    }
    let _ = job.reply.send(outcome);
}
