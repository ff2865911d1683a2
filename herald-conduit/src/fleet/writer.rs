//! The accepting transaction of the fleet backend: a batch of posts in
//! one PostgreSQL transaction, which first locks the `arrivals` row (the
//! fleet's acceptances are serialised: dense arrival numbers and leaf
//! indices, and P8 lifecycle reads and writes that never interleave), then
//! runs herald-verify's rules over a [`Snapshot`] and stores each accepted
//! envelope, its inbox entry (dense positions per recipient) and its log
//! leaf, and commits once (synchronous commit: on disk before any 201).
//! Then, for a notary, it waits for a tree head covering the batch (signed
//! by this conduit if it is the sequencer) and answers with inclusion
//! proofs.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use herald_core::EnvelopeRef;
use herald_verify::{Leaf, LiveState, Receiver, SignedTreeHead};
use tokio_postgres::Transaction;

use super::state::{Fetched, Missing, Snapshot, Statements, write_back};
use super::{Fleet, FleetError, big, notify, unbig};
use crate::Conduit;
use crate::refusal::Refusal;
use crate::stored::{RECIPIENT_LEN, Stored};
use crate::writer::{self, Batch, Committed, Job, New, Outcome, Prepared, Step, Txn};

/// How long a conduit waits for a tree head before it looks again without
/// a notification, and tries to take the sequencer's turn: the sequencer
/// may be gone (`log::TAKEOVER_EVERY`).
const HEAD_PATIENCE: Duration = Duration::from_millis(200);

/// Answer every post of `committed` (a batch [`accept`]ed): for a notary
/// once a tree head covers the batch, with inclusion proofs.
pub(crate) async fn answer(conduit: &Conduit, fleet: &Fleet, committed: Committed) {
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
        let _ = fleet
            .sequence(&conduit.key, now, conduit.config.batch)
            .await;
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
        head_ok = wait_for_head(conduit, fleet, size, deadline, now).await;
    }
    let head = if notary && head_ok {
        fleet.head().await.ok().flatten()
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
                let body = Arc::new(created_body(conduit, fleet, head, arrival, forwarded).await);
                answers.push((job.id, Arc::clone(&body)));
                Outcome::Created(body)
            }
            Step::Existing(stored) => {
                let earlier = answers
                    .iter()
                    .find(|(id, _)| *id == job.id)
                    .map(|(_, b)| Arc::clone(b));
                let body = match earlier {
                    Some(body) => body,
                    None => match recorded_answer(fleet, &job.id, job.deadline).await {
                        Some(body) => Arc::new(body),
                        None => Arc::new(
                            created_body(conduit, fleet, head, stored.arrival, stored.bytes).await,
                        ),
                    },
                };
                Outcome::Created(body)
            }
        };
        writer::reply(conduit, job, outcome);
    }
    let refs: Vec<([u8; 32], &[u8])> = answers.iter().map(|(id, b)| (*id, b.as_slice())).collect();
    if !refs.is_empty() {
        let _ = fleet.put_answers(&refs).await;
    }
}

/// Receive `batch` (prechecked as `prepared`) in one transaction of the
/// fleet database; the steps, committed. The rules run over a
/// [`Snapshot`] of what they read, fetched under the `arrivals` lock, and
/// run again after a miss (everything of that try is dropped: nothing is
/// written before the rules ran through the whole batch without one).
/// Typically two tries: the senders' records are read ahead, their claims
/// after the first; a birth's lineage costs a try per generation. Every
/// try reads at least one key no try read before, of the finitely many
/// the batch can reach, so the tries end. A database failure fails the
/// whole batch (rolled back: nothing of it acknowledged).
pub(crate) async fn accept(
    fleet: &Fleet,
    batch: Batch<'_>,
    prepared: &[Prepared<'_>],
) -> Result<Vec<Step>, String> {
    let Batch {
        conduit,
        jobs: batch,
        ..
    } = batch;
    let mut guard = fleet.writer_client().await?;
    let (txn, stmts, next) = Fleet::lock_arrivals(&mut guard).await?;
    let stored = stored(&txn, stmts, batch).await?;
    let erased = erased(&txn, stmts, batch).await?;
    let name = fleet.name();
    let mut fetched = Fetched::default();
    // Who the posts claim to be from (the front door's key of the `from`
    // sigil): their records are the rules' first reads.
    let mut ahead = Missing::default();
    ahead.records.extend(batch.iter().filter_map(|j| j.sender));
    fetched.missing(&txn, stmts, ahead).await?;
    let (steps, t) = loop {
        let mut t = FleetTxn {
            state: Snapshot::writing(&fetched, &name),
            receiver: &fleet.receiver,
            stored: &stored,
            erased: &erased,
            news: HashMap::new(),
            stores: Vec::new(),
            next,
        };
        // The rules (and the receipts of posts whose origin verified only
        // now) off the runtime's workers, between the queries.
        let steps = crate::blocking::off_runtime(|| {
            let mut steps = Vec::with_capacity(batch.len());
            for (job, prep) in batch.iter().zip(prepared) {
                let mark = t.state.mark();
                match writer::receive_one(conduit, &mut t, job, prep) {
                    Ok(step) => steps.push(step),
                    // Read ahead for the posts after it too: the next try
                    // fetches everything this one missed.
                    Err(_) if t.state.missed_since(mark) => t.state.undo(mark),
                    Err(e) => return Err(e),
                }
            }
            Ok(steps)
        })?;
        let missing = t.state.take_missing();
        if missing.is_empty() {
            break (steps, t);
        }
        drop(t);
        fetched.missing(&txn, stmts, missing).await?;
    };
    let FleetTxn {
        state,
        stores,
        next,
        ..
    } = t;
    write_back(state, &txn, stmts).await?;
    for s in &stores {
        s.write(&txn, stmts).await?;
    }
    if steps.iter().any(|s| matches!(s, Step::New { .. })) {
        // Delivered as the transaction commits (`notify`).
        txn.batch_execute(&format!("NOTIFY {}", notify::LEAVES))
            .await
            .map_err(FleetError::db("notify"))?;
    }
    // Committed even when nothing was accepted: a refused envelope may
    // still have changed what the fleet witnessed (a molt overlapping
    // another disputes the sigil, P8 rule 5).
    txn.execute("UPDATE arrivals SET next = $1", &[&big(next)])
        .await
        .map_err(FleetError::db("advance the arrival counter"))?;
    txn.commit().await.map_err(FleetError::db("commit"))?;
    Ok(steps)
}

const STORED: &str = "SELECT id, arrival, bytes FROM envelopes WHERE id = ANY($1)";

/// The envelopes of `batch` stored before, by id (read under the
/// `arrivals` lock: no other conduit stores meanwhile).
async fn stored(
    txn: &Transaction<'_>,
    stmts: &mut Statements,
    batch: &[Job],
) -> Result<HashMap<[u8; 32], Stored>, FleetError> {
    let st = stmts
        .get(txn, STORED)
        .await
        .map_err(FleetError::db("read an envelope"))?;
    let ids: Vec<&[u8]> = batch.iter().map(|j| j.id.as_slice()).collect();
    let rows = txn
        .query(&st, &[&ids])
        .await
        .map_err(FleetError::db("read an envelope"))?;
    Ok(rows
        .into_iter()
        .filter_map(|r| {
            let id = <[u8; 32]>::try_from(r.get::<_, &[u8]>(0)).ok()?;
            Some((
                id,
                Stored {
                    arrival: unbig(r.get(1)),
                    bytes: r.get(2),
                },
            ))
        })
        .collect())
}

const ERASED: &str = "SELECT id, tombstone FROM erased WHERE id = ANY($1)";

/// The tombstones of the envelopes of `batch` erased before, by id (read
/// under the `arrivals` lock, which erasures take too: `Fleet::erase`).
async fn erased(
    txn: &Transaction<'_>,
    stmts: &mut Statements,
    batch: &[Job],
) -> Result<HashMap<[u8; 32], Vec<u8>>, FleetError> {
    let st = stmts
        .get(txn, ERASED)
        .await
        .map_err(FleetError::db("read a tombstone"))?;
    let ids: Vec<&[u8]> = batch.iter().map(|j| j.id.as_slice()).collect();
    let rows = txn
        .query(&st, &[&ids])
        .await
        .map_err(FleetError::db("read a tombstone"))?;
    Ok(rows
        .into_iter()
        .filter_map(|r| Some((<[u8; 32]>::try_from(r.get::<_, &[u8]>(0)).ok()?, r.get(1))))
        .collect())
}

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

/// An envelope accepted in this batch, stored at the write back.
struct Store {
    id: [u8; 32],
    trace: [u8; 32],
    arrival: u64,
    to: Option<[u8; RECIPIENT_LEN]>,
    forwarded: Vec<u8>,
    leaf: Vec<u8>,
    /// Its sender and kind when it is a birth, molt or deprecation: a row
    /// of the index `GET /v1/keys/{sigil}` reads.
    lifecycle: Option<([u8; RECIPIENT_LEN], crate::keys::Lifecycle)>,
}

impl Store {
    async fn write(&self, txn: &Transaction<'_>, stmts: &mut Statements) -> Result<(), FleetError> {
        let err = FleetError::db("store an envelope");
        let st = stmts
            .get(txn, if self.to.is_some() { STORE_TO } else { STORE })
            .await
            .map_err(&err)?;
        let (id, trace, at) = (self.id.as_slice(), self.trace.as_slice(), big(self.arrival));
        let (forwarded, leaf) = (self.forwarded.as_slice(), self.leaf.as_slice());
        match &self.to {
            Some(r) => {
                txn.execute(&st, &[&id, &at, &trace, &forwarded, &leaf, &r.as_slice()])
                    .await
            }
            None => {
                txn.execute(&st, &[&id, &at, &trace, &forwarded, &leaf])
                    .await
            }
        }
        .map_err(&err)?;
        if let Some((who, kind)) = &self.lifecycle {
            let st = stmts.get(txn, INDEX).await.map_err(&err)?;
            txn.execute(&st, &[&who.as_slice(), &at, &(*kind as i16), &id])
                .await
                .map_err(err)?;
        }
        Ok(())
    }
}

/// One try of the accepting transaction as the writer's [`receive_one`]
/// sees it: the rules over a [`Snapshot`], the envelopes stored before
/// and in this try; `next` is the arrival number the next accepted
/// envelope takes.
///
/// [`receive_one`]: crate::writer::receive_one
struct FleetTxn<'a> {
    state: Snapshot<'a>,
    receiver: &'a Receiver,
    stored: &'a HashMap<[u8; 32], Stored>,
    /// Erased before: their tombstones.
    erased: &'a HashMap<[u8; 32], Vec<u8>>,
    /// Accepted in this try: its index in `stores`.
    news: HashMap<[u8; 32], usize>,
    stores: Vec<Store>,
    next: u64,
}

impl Txn for FleetTxn<'_> {
    fn stored(&mut self, id: &[u8; 32]) -> Result<Option<Stored>, String> {
        if let Some(s) = self.news.get(id).and_then(|i| self.stores.get(*i)) {
            return Ok(Some(Stored {
                arrival: s.arrival,
                bytes: s.forwarded.clone(),
            }));
        }
        Ok(self.stored.get(id).cloned())
    }

    fn erased(&mut self, id: &[u8; 32]) -> Result<Option<Vec<u8>>, String> {
        Ok(self.erased.get(id).cloned())
    }

    fn live(&mut self) -> (&Receiver, &mut dyn LiveState) {
        (self.receiver, &mut self.state)
    }

    fn store(&mut self, new: &New<'_>) -> Result<u64, String> {
        let arrival = self.next;
        self.news.insert(new.job.id, self.stores.len());
        self.stores.push(Store {
            id: new.job.id,
            trace: new.job.trace,
            arrival,
            to: new.to,
            forwarded: new.forwarded.to_vec(),
            leaf: Leaf::from_envelope(new.view).encode(),
            lifecycle: crate::keys::Lifecycle::of(new.view),
        });
        self.next += 1;
        Ok(arrival)
    }
}

/// Wait until a stored tree head covers `size` leaves (signing it here if
/// this conduit is the sequencer), until `deadline`: woken by the
/// sequencer's notification (`notify::HEADS`).
async fn wait_for_head(
    conduit: &Conduit,
    fleet: &Fleet,
    size: u64,
    deadline: Instant,
    now: u64,
) -> bool {
    loop {
        let seen = fleet.signals.heads.seen();
        if fleet.head_size().await.is_ok_and(|s| s >= size) {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        let _ = fleet
            .sequence(&conduit.key, now, conduit.config.batch)
            .await;
        let until = deadline.min(Instant::now() + HEAD_PATIENCE);
        fleet.signals.heads.wait_past(seen, until).await;
    }
}

/// The 201 body the first acceptance recorded for `id`, waited for a
/// little (another conduit may be writing it now: `notify::ANSWERS`), so
/// that the same envelope posted to several conduits at once is answered
/// identically.
async fn recorded_answer(fleet: &Fleet, id: &[u8; 32], deadline: Instant) -> Option<Vec<u8>> {
    let until = (Instant::now() + Duration::from_secs(1)).min(deadline);
    loop {
        let seen = fleet.signals.answers.seen();
        if let Ok(Some(body)) = fleet.first_body(id).await {
            return Some(body);
        }
        if !fleet.signals.answers.wait_past(seen, until).await {
            return None;
        }
    }
}

/// The 201 body of the envelope that arrived `arrival`-th, its proof
/// against `head` (the batch's covering head, notary).
async fn created_body(
    conduit: &Conduit,
    fleet: &Fleet,
    head: Option<&SignedTreeHead>,
    arrival: u64,
    forwarded: Vec<u8>,
) -> Vec<u8> {
    if !conduit.config.roles.notary {
        return writer::created_body(forwarded, false, arrival, None);
    }
    let proof = match head.zip(EnvelopeRef::decode(&forwarded).ok()) {
        Some((h, e)) => fleet
            .inclusion_in(h, arrival, Leaf::from_envelope(&e))
            .await
            .ok()
            .flatten(),
        None => None,
    };
    writer::created_body(forwarded, true, arrival, proof)
}
