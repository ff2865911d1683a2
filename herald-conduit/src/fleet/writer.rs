//! The accepting transaction of the fleet backend: a batch of posts in
//! one PostgreSQL transaction, which first locks the `arrivals` row (the
//! fleet's acceptances are serialised: dense arrival numbers and leaf
//! indices, and P8 lifecycle reads and writes that never interleave), then
//! runs herald-verify's rules over [`TxnState`] and stores each accepted
//! envelope, its inbox entry (dense positions per recipient) and its log
//! leaf, and commits once (synchronous commit: on disk before any 201).
//! Then, for a notary, it waits for a tree head covering the batch (signed
//! by this conduit if it is the sequencer) and answers with inclusion
//! proofs.

use std::sync::Arc;
use std::time::{Duration, Instant};

use herald_core::{EnvelopeRef, Status};
use herald_verify::Leaf;

use super::{Fleet, FleetError, TxnState, Writer, big, unbig};
use crate::Conduit;
use crate::mailbox::{self, Stored};
use crate::refusal::Refusal;
use crate::writer::{self, Job, Outcome, Prepared, Step};

/// How often a conduit waiting for a tree head (or an answer) looks again.
const POLL: Duration = Duration::from_millis(5);

/// Answer every post of `batch` after [`accept`]: for a notary once a
/// tree head covers the batch, with inclusion proofs.
pub(crate) fn answer(
    conduit: &Conduit,
    fleet: &Fleet,
    batch: Vec<Job>,
    accepted: Result<Vec<Step>, FleetError>,
    now: u64,
) {
    let steps = match accepted {
        Ok(s) => s,
        Err(e) => {
            let msg = e.to_string();
            for job in batch {
                let _ = job.reply.send(Outcome::Failed(msg.clone()));
            }
            return;
        }
    };
    let notary = conduit.config.roles.notary;
    if notary {
        let _ = fleet.sequence(&conduit.key, now, conduit.config.batch);
    }
    let covered = steps
        .iter()
        .filter_map(|s| match s {
            Step::New { arrival, .. } => Some(*arrival + 1),
            Step::Existing(st) => Some(st.arrival + 1),
            Step::Done(_) => None,
        })
        .max();
    let latest = batch.iter().map(|j| j.deadline).max();
    let mut head_ok = true;
    if notary && let (Some(size), Some(deadline)) = (covered, latest) {
        head_ok = wait_for_head(conduit, fleet, size, deadline, now);
    }
    let head = if notary && head_ok {
        fleet.block_on(fleet.head()).ok().flatten()
    } else {
        None
    };
    let head = head.as_ref();
    let mut answers: Vec<([u8; 32], Arc<Vec<u8>>)> = Vec::new();
    for (job, step) in batch.into_iter().zip(steps) {
        let outcome = match step {
            Step::Done(o) => o,
            Step::New { .. } | Step::Existing(_) if !head_ok => Outcome::Refused(Refusal::Deadline),
            Step::New { arrival, forwarded } => {
                let body = Arc::new(created_body(conduit, fleet, head, arrival, forwarded));
                answers.push((job.id, Arc::clone(&body)));
                Outcome::Created(body)
            }
            Step::Existing(stored) => {
                let earlier = answers
                    .iter()
                    .find(|(id, _)| *id == job.id)
                    .map(|(_, b)| Arc::clone(b));
                match earlier
                    .or_else(|| recorded_answer(fleet, &job.id, job.deadline).map(Arc::new))
                {
                    Some(body) => Outcome::Created(body),
                    None => Outcome::Created(Arc::new(created_body(
                        conduit,
                        fleet,
                        head,
                        stored.arrival,
                        stored.bytes,
                    ))),
                }
            }
        };
        if let Outcome::Created(_) = outcome {
            conduit.deliveries.send_modify(|n| *n += 1);
        }
        let _ = job.reply.send(outcome);
    }
    let refs: Vec<([u8; 32], &[u8])> = answers.iter().map(|(id, b)| (*id, b.as_slice())).collect();
    if !refs.is_empty() {
        let _ = fleet.block_on(fleet.put_answers(&refs));
    }
}

/// Receive `batch` (prechecked as `prepared`) in one transaction of the
/// fleet database; the steps, committed.
pub(crate) fn accept(
    conduit: &Conduit,
    fleet: &Fleet,
    batch: &[Job],
    prepared: Vec<Prepared<'_>>,
) -> Result<Vec<Step>, FleetError> {
    let mut guard = fleet.writer_client()?;
    let Writer { client, stmts } = guard
        .as_mut()
        .ok_or_else(|| FleetError::Corrupted("no writer connection".into()))?;
    let txn = fleet
        .block_on(client.transaction())
        .map_err(FleetError::db("begin"))?;
    let next: i64 = fleet
        .block_on(txn.query_one("SELECT next FROM arrivals FOR UPDATE", &[]))
        .map_err(FleetError::db("lock the arrival counter"))?
        .get(0);
    let mut next = unbig(next);
    let mut steps = Vec::with_capacity(batch.len());
    for (job, prep) in batch.iter().zip(prepared) {
        let step = if Instant::now() >= job.deadline {
            Step::Done(Outcome::Refused(Refusal::Deadline))
        } else {
            let mut state = TxnState {
                fleet,
                txn: &txn,
                stmts,
            };
            receive_one(conduit, &mut state, job, prep, &mut next)?
        };
        steps.push(step);
    }
    // Committed even when nothing was accepted: a refused envelope may
    // still have changed what the fleet witnessed (a molt overlapping
    // another disputes the sigil, P8 rule 5).
    fleet
        .block_on(txn.execute("UPDATE arrivals SET next = $1", &[&big(next)]))
        .map_err(FleetError::db("advance the arrival counter"))?;
    fleet
        .block_on(txn.commit())
        .map_err(FleetError::db("commit"))?;
    Ok(steps)
}

const STORED: &str = "SELECT arrival, bytes FROM envelopes WHERE id = $1";
/// An accepted envelope and its leaf, in one statement.
const STORE: &str = "WITH e AS (INSERT INTO envelopes (id, arrival, trace, bytes) \
     VALUES ($1, $2, $3, $4)) \
     INSERT INTO log_leaves (seq, id, leaf) VALUES ($2, $1, $5)";
/// The same and its inbox entry: the recipient's next position, dense.
const STORE_TO: &str = "WITH e AS (INSERT INTO envelopes (id, arrival, trace, bytes) \
     VALUES ($1, $2, $3, $4)), \
     l AS (INSERT INTO log_leaves (seq, id, leaf) VALUES ($2, $1, $5)), \
     p AS (INSERT INTO inbox_len (recipient, len) VALUES ($6, 1) \
           ON CONFLICT (recipient) DO UPDATE SET len = inbox_len.len + 1 RETURNING len) \
     INSERT INTO inbox (recipient, position, id) SELECT $6, len, $1 FROM p";

/// The stored envelope `id`, inside the transaction.
fn stored_in(
    state: &mut TxnState<'_, '_, '_>,
    id: &[u8; 32],
) -> Result<Option<Stored>, FleetError> {
    let st = state
        .stmt(STORED)
        .map_err(FleetError::db("read an envelope"))?;
    Ok(state
        .fleet
        .block_on(state.txn.query_opt(&st, &[&id.as_slice()]))
        .map_err(FleetError::db("read an envelope"))?
        .map(|r| Stored {
            arrival: unbig(r.get(0)),
            bytes: r.get(1),
        }))
}

/// Receive one post inside the batch's transaction. A database failure is
/// an `Err` (the whole batch is rolled back and answered 500); a refusal
/// is a step.
fn receive_one(
    conduit: &Conduit,
    state: &mut TxnState<'_, '_, '_>,
    job: &Job,
    prep: Prepared<'_>,
    next: &mut u64,
) -> Result<Step, FleetError> {
    if writer::is_envelope_of(&job.bytes, &job.id)
        && let Some(stored) = stored_in(state, &job.id)?
    {
        // Accepted before, through this conduit or another: idempotent.
        return Ok(Step::Existing(stored));
    }
    let Prepared {
        pre,
        forwarded,
        refused,
        now,
    } = prep;
    if let Some(r) = refused {
        // Over a rate limit (the front door's rules: `crate::rate`).
        return Ok(Step::Done(Outcome::Refused(r)));
    }
    let report = pre
        .and_then(|pre| conduit.receiver()?.finish(state, pre))
        .map_err(|e| FleetError::Corrupted(e.to_string()))?;
    if report.status() != Status::Valid {
        return Ok(Step::Done(Outcome::Refused(writer::refusal_of(&report))));
    }
    let Some(forwarded) = writer::forwarded_now(conduit, job, forwarded, now) else {
        return Ok(Step::Done(Outcome::Refused(Refusal::Invalid(vec![
            "malformed",
        ]))));
    };
    let Ok(view) = EnvelopeRef::decode(&forwarded) else {
        return Ok(Step::Done(Outcome::Refused(Refusal::Invalid(vec![
            "malformed",
        ]))));
    };
    let to = view.to().and_then(|(_, s)| mailbox::recipient(&s));
    let leaf = Leaf::from_envelope(&view).encode();
    let arrival = *next;
    let err = FleetError::db("store an envelope");
    let st = state
        .stmt(if to.is_some() { STORE_TO } else { STORE })
        .map_err(&err)?;
    let (id, trace, at) = (job.id.as_slice(), job.trace.as_slice(), big(arrival));
    let stored = match &to {
        Some(r) => state.fleet.block_on(
            state
                .txn
                .execute(&st, &[&id, &at, &trace, &forwarded, &leaf, &r.as_slice()]),
        ),
        None => state.fleet.block_on(
            state
                .txn
                .execute(&st, &[&id, &at, &trace, &forwarded, &leaf]),
        ),
    };
    stored.map_err(err)?;
    *next += 1;
    Ok(Step::New { arrival, forwarded })
}

/// Wait until a stored tree head covers `size` leaves (signing it here if
/// this conduit is the sequencer), until `deadline`.
fn wait_for_head(conduit: &Conduit, fleet: &Fleet, size: u64, deadline: Instant, now: u64) -> bool {
    loop {
        if fleet.block_on(fleet.head_size()).is_ok_and(|s| s >= size) {
            return true;
        }
        if Instant::now() + POLL >= deadline {
            return false;
        }
        std::thread::sleep(POLL);
        let _ = fleet.sequence(&conduit.key, now, conduit.config.batch);
    }
}

/// The 201 body the first acceptance recorded for `id`, waited for a
/// little (another conduit may be writing it now), so that the same
/// envelope posted to several conduits at once is answered identically.
fn recorded_answer(fleet: &Fleet, id: &[u8; 32], deadline: Instant) -> Option<Vec<u8>> {
    let until = (Instant::now() + Duration::from_secs(1)).min(deadline);
    loop {
        if let Ok(Some(body)) = fleet.block_on(fleet.answer(id)) {
            return Some(body);
        }
        if Instant::now() + POLL >= until {
            return None;
        }
        std::thread::sleep(POLL);
    }
}

/// The 201 body of the envelope that arrived `arrival`-th, its proof
/// against `head` (the batch's covering head, notary).
fn created_body(
    conduit: &Conduit,
    fleet: &Fleet,
    head: Option<&herald_verify::SignedTreeHead>,
    arrival: u64,
    forwarded: Vec<u8>,
) -> Vec<u8> {
    if !conduit.config.roles.notary {
        return writer::body(forwarded, None, None);
    }
    let proof = head
        .zip(EnvelopeRef::decode(&forwarded).ok())
        .and_then(|(h, e)| {
            fleet
                .block_on(fleet.inclusion_in(h, arrival, Leaf::from_envelope(&e)))
                .ok()
                .flatten()
        })
        .map(|p| p.to_value());
    writer::body(forwarded, Some(arrival), proof)
}
