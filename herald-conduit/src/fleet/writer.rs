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

use herald_core::EnvelopeRef;
use herald_verify::{EnvelopeReport, Leaf, Prechecked, SignedTreeHead};

use super::{Fleet, FleetError, TxnState, Writer, big, notify, unbig};
use crate::Conduit;
use crate::refusal::Refusal;
use crate::stored::{RECIPIENT_LEN, Stored};
use crate::writer::{self, Committed, Job, Outcome, Prepared, Step, Txn};

/// How long a conduit waits for a tree head before it looks again without
/// a notification, and tries to take the sequencer's turn: the sequencer
/// may be gone (`log::TAKEOVER_EVERY`).
const HEAD_PATIENCE: Duration = Duration::from_millis(200);

/// Answer every post of `committed` (a batch [`accept`]ed): for a notary
/// once a tree head covers the batch, with inclusion proofs.
pub(crate) fn answer(conduit: &Conduit, fleet: &Fleet, committed: Committed) {
    let Committed {
        batch,
        steps,
        failed,
        now,
    } = committed;
    if let Some(msg) = failed {
        for job in batch {
            writer::reply(conduit, job, Outcome::Failed(msg.clone()));
        }
        return;
    }
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
        writer::reply(conduit, job, outcome);
    }
    let refs: Vec<([u8; 32], &[u8])> = answers.iter().map(|(id, b)| (*id, b.as_slice())).collect();
    if !refs.is_empty() {
        let _ = fleet.block_on(fleet.put_answers(&refs));
    }
}

/// Receive `batch` (prechecked as `prepared`) in one transaction of the
/// fleet database; the steps, committed. A database failure fails the
/// whole batch (rolled back: nothing of it acknowledged).
pub(crate) fn accept(
    conduit: &Conduit,
    fleet: &Fleet,
    batch: &[Job],
    prepared: Vec<Prepared<'_>>,
) -> Result<Vec<Step>, String> {
    let text = |e: FleetError| e.to_string();
    let mut guard = fleet.writer_client().map_err(text)?;
    let Writer { client, stmts } = guard
        .as_mut()
        .ok_or_else(|| text(FleetError::Corrupted("no writer connection".into())))?;
    let txn = fleet
        .block_on(client.transaction())
        .map_err(FleetError::db("begin"))
        .map_err(text)?;
    let next: i64 = fleet
        .block_on(txn.query_one("SELECT next FROM arrivals FOR UPDATE", &[]))
        .map_err(FleetError::db("lock the arrival counter"))
        .map_err(text)?
        .get(0);
    let mut t = FleetTxn {
        state: TxnState {
            fleet,
            txn: &txn,
            stmts,
        },
        next: unbig(next),
    };
    let mut steps = Vec::with_capacity(batch.len());
    for (job, prep) in batch.iter().zip(prepared) {
        let step = if Instant::now() >= job.deadline {
            Step::Done(Outcome::Refused(Refusal::Deadline))
        } else {
            writer::receive_one(conduit, &mut t, job, prep)?
        };
        steps.push(step);
    }
    let next = t.next;
    if steps.iter().any(|s| matches!(s, Step::New { .. })) {
        // Delivered as the transaction commits (`notify`).
        fleet
            .block_on(txn.batch_execute(&format!("NOTIFY {}", notify::LEAVES)))
            .map_err(FleetError::db("notify"))
            .map_err(text)?;
    }
    // Committed even when nothing was accepted: a refused envelope may
    // still have changed what the fleet witnessed (a molt overlapping
    // another disputes the sigil, P8 rule 5).
    fleet
        .block_on(txn.execute("UPDATE arrivals SET next = $1", &[&big(next)]))
        .map_err(FleetError::db("advance the arrival counter"))
        .map_err(text)?;
    fleet
        .block_on(txn.commit())
        .map_err(FleetError::db("commit"))
        .map_err(text)?;
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

/// A lifecycle index row (`GET /v1/keys/{sigil}`, [`crate::keys`]).
pub(crate) const INDEX: &str =
    "INSERT INTO lifecycle_envelopes (identity, arrival, kind, id) VALUES ($1, $2, $3, $4)";

/// The accepting transaction as the writer's [`receive_one`] sees it;
/// `next` is the arrival number the next accepted envelope takes.
///
/// [`receive_one`]: crate::writer::receive_one
struct FleetTxn<'f, 't, 'c> {
    state: TxnState<'f, 't, 'c>,
    next: u64,
}

impl Txn for FleetTxn<'_, '_, '_> {
    fn stored(&mut self, id: &[u8; 32]) -> Result<Option<Stored>, String> {
        let err = |e| FleetError::db("read an envelope")(e).to_string();
        let st = self.state.stmt(STORED).map_err(err)?;
        Ok(self
            .state
            .fleet
            .block_on(self.state.txn.query_opt(&st, &[&id.as_slice()]))
            .map_err(err)?
            .map(|r| Stored {
                arrival: unbig(r.get(0)),
                bytes: r.get(1),
            }))
    }

    fn judge(&mut self, pre: Prechecked<'_>) -> Result<EnvelopeReport, String> {
        let fleet = self.state.fleet;
        fleet
            .receiver
            .finish(&mut self.state, pre)
            .map_err(|e| e.to_string())
    }

    fn store(
        &mut self,
        job: &Job,
        to: Option<[u8; RECIPIENT_LEN]>,
        forwarded: &[u8],
        view: &EnvelopeRef<'_>,
    ) -> Result<u64, String> {
        let leaf = Leaf::from_envelope(view).encode();
        let arrival = self.next;
        let err = |e| FleetError::db("store an envelope")(e).to_string();
        let st = self
            .state
            .stmt(if to.is_some() { STORE_TO } else { STORE })
            .map_err(err)?;
        let (id, trace, at) = (job.id.as_slice(), job.trace.as_slice(), big(arrival));
        let (fleet, txn) = (self.state.fleet, self.state.txn);
        let stored = match &to {
            Some(r) => fleet
                .block_on(txn.execute(&st, &[&id, &at, &trace, &forwarded, &leaf, &r.as_slice()])),
            None => fleet.block_on(txn.execute(&st, &[&id, &at, &trace, &forwarded, &leaf])),
        };
        stored.map_err(err)?;
        if let Some((who, kind)) = crate::keys::Lifecycle::of(view) {
            let st = self.state.stmt(INDEX).map_err(err)?;
            fleet
                .block_on(txn.execute(&st, &[&who.as_slice(), &at, &(kind as i16), &id]))
                .map_err(err)?;
        }
        self.next += 1;
        Ok(arrival)
    }
}

/// Wait until a stored tree head covers `size` leaves (signing it here if
/// this conduit is the sequencer), until `deadline`: woken by the
/// sequencer's notification (`notify::HEADS`).
fn wait_for_head(conduit: &Conduit, fleet: &Fleet, size: u64, deadline: Instant, now: u64) -> bool {
    loop {
        let seen = fleet.signals.heads.seen();
        if fleet.block_on(fleet.head_size()).is_ok_and(|s| s >= size) {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        let _ = fleet.sequence(&conduit.key, now, conduit.config.batch);
        let until = deadline.min(Instant::now() + HEAD_PATIENCE);
        fleet.signals.heads.wait_past(seen, until);
    }
}

/// The 201 body the first acceptance recorded for `id`, waited for a
/// little (another conduit may be writing it now: `notify::ANSWERS`), so
/// that the same envelope posted to several conduits at once is answered
/// identically.
fn recorded_answer(fleet: &Fleet, id: &[u8; 32], deadline: Instant) -> Option<Vec<u8>> {
    let until = (Instant::now() + Duration::from_secs(1)).min(deadline);
    loop {
        let seen = fleet.signals.answers.seen();
        if let Ok(Some(body)) = fleet.block_on(fleet.first_body(id)) {
            return Some(body);
        }
        if !fleet.signals.answers.wait_past(seen, until) {
            return None;
        }
    }
}

/// The 201 body of the envelope that arrived `arrival`-th, its proof
/// against `head` (the batch's covering head, notary).
fn created_body(
    conduit: &Conduit,
    fleet: &Fleet,
    head: Option<&SignedTreeHead>,
    arrival: u64,
    forwarded: Vec<u8>,
) -> Vec<u8> {
    if !conduit.config.roles.notary {
        return writer::created_body(forwarded, false, arrival, None);
    }
    let proof = head
        .zip(EnvelopeRef::decode(&forwarded).ok())
        .and_then(|(h, e)| {
            fleet
                .block_on(fleet.inclusion_in(h, arrival, Leaf::from_envelope(&e)))
                .ok()
                .flatten()
        });
    writer::created_body(forwarded, true, arrival, proof)
}
