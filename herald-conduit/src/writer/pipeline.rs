//! The writer's stages (redb backend; a fleet's transaction holds its
//! leaves, so it runs [`super::receive_loop`] alone).
//!
//! 1. **Store**, on two threads taking turns: each takes the queued posts
//!    as a batch and prechecks them (signatures, the relay's receipt) on
//!    every core; then, in its turn, receives the batch in one write
//!    transaction of the store, commits it (durably) and hands it to the
//!    log stage. One thread's precheck overlaps the other's commit.
//! 2. **Log** (notary), on one thread: appends the leaves of every batch
//!    committed since it last ran with one sync, signs one tree head over
//!    them, and only then answers their posts. So a store commit overlaps
//!    the log sync of the batches before it, and the log syncs once for
//!    all of them.
//!
//! Batches reach the log in commit order (the turn is held until the hand
//! over), so leaf indices stay arrival numbers. A crash between the stages
//! leaves the store ahead of the log, which
//! [`Notary::open`](crate::notary::Notary::open) repairs: no post is
//! answered before its store commit and its leaf are both durable. The
//! tree head a group's 201 bodies were answered with is recorded for
//! repeats ([`Unrecorded`]) in the store stage's next transaction.

use std::sync::mpsc::{Receiver, SyncSender};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::Builder;
use std::time::Instant;

use super::heads::Unrecorded;
use super::{Job, Outcome, Step, notarize, prepare, receive_loop, receive_one};
use crate::Conduit;
use crate::mailbox::{Reader, Stored, Tables};
use crate::refusal::Refusal;
use herald_verify::SignedTreeHead;

/// Committed batches that may wait for the log at most: the store runs
/// this far ahead of the log before it waits.
const LOG_QUEUE: usize = 8;

/// A batch received and committed to the store, not yet logged or
/// answered.
struct Committed {
    batch: Vec<Job>,
    steps: Vec<Step>,
    /// Why nothing of the batch may be acknowledged.
    failed: Option<String>,
    now: u64,
}

/// The turn to commit and hand over to the log stage (`None`: no log
/// thread, or closing: finish on this thread).
type Turn = Mutex<Option<SyncSender<Committed>>>;

/// Run the stages until every sender of `jobs` is gone.
pub(super) fn run(conduit: &Conduit, jobs: &Mutex<Receiver<Job>>) {
    let (to_log, committed) = std::sync::mpsc::sync_channel::<Committed>(LOG_QUEUE);
    let sent = &Unrecorded::default();
    let flush = || sent.flush(conduit);
    let turn: &Turn = &Mutex::new(None);
    std::thread::scope(|scope| {
        let logger = Builder::new()
            .name("herald-conduit-log".into())
            .spawn_scoped(scope, move || {
                while let Ok(first) = committed.recv() {
                    let mut group = vec![first];
                    while let Ok(more) = committed.try_recv() {
                        group.push(more);
                    }
                    finish(conduit, sent, group);
                }
            });
        if logger.is_ok() {
            *lock(turn) = Some(to_log);
        } else {
            // No log thread: both stages here (`turn` stays `None`).
            drop(to_log);
        }
        let worker = || {
            receive_loop(conduit, jobs, &flush, &mut |b| {
                accept(conduit, sent, turn, b)
            })
        };
        let second = Builder::new()
            .name("herald-conduit-writer".into())
            .spawn_scoped(scope, worker);
        worker();
        if let Ok(second) = second {
            let _ = second.join();
        }
        // The queue is closed: the log stage ends after its last batch.
        drop(lock(turn).take());
    });
    flush();
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Precheck `batch`, then in this thread's turn receive and commit it and
/// hand it to the log stage.
fn accept(conduit: &Conduit, sent: &Unrecorded, turn: &Turn, batch: Vec<Job>) {
    let now = conduit.now();
    // The signature work on every core, outside the turn.
    let prepared = prepare(conduit, &batch, now);
    let to_log = lock(turn);
    let receiver = conduit.receiver();
    let began = receiver.as_ref().map_err(|e| e.to_string()).and_then(|r| {
        r.store()
            .begin_write("receive a batch")
            .map_err(|e| e.to_string())
    });
    let (steps, failed) = match began {
        Ok(txn) => {
            let mut steps = Vec::with_capacity(batch.len());
            match Tables::open(&txn) {
                Ok(mut tables) => {
                    for (job, prep) in batch.iter().zip(prepared) {
                        steps.push(if Instant::now() >= job.deadline {
                            Step::Done(Outcome::Refused(Refusal::Deadline))
                        } else {
                            receive_one(conduit, &txn, &mut tables, job, prep)
                        });
                    }
                }
                Err(e) => {
                    let e = format!("store: {e}");
                    steps.extend(batch.iter().map(|_| Step::Done(Outcome::Failed(e.clone()))));
                }
            }
            let heads = sent.record_in(&txn);
            // Committed even when nothing was accepted: a refused envelope
            // may still have changed what the receiver witnessed (a molt
            // overlapping another disputes the sigil, P8 rule 5), and that
            // must last.
            let failed = txn.commit().err().map(|e| format!("store commit: {e}"));
            if failed.is_none() {
                sent.recorded(&heads);
            }
            (steps, failed)
        }
        Err(e) => (Vec::new(), Some(e)),
    };
    drop(receiver);
    // The store may be unusable until reopened (docs/conduit.md *Storage
    // failures*).
    if let Some(e) = &failed {
        conduit.live.failed(e);
    }
    let mut committed = Committed {
        batch,
        steps,
        failed,
        now,
    };
    if let Some(log) = to_log.as_ref() {
        match log.send(committed) {
            Ok(()) => return,
            // The log stage is gone (it panicked): finish here.
            Err(back) => committed = back.0,
        }
    }
    drop(to_log);
    finish(conduit, sent, vec![committed]);
}

/// Log the new envelopes of `group` (notary: one sync, one tree head over
/// all of them), then answer every post of it, every 201 body against that
/// one head, which joins `sent`.
fn finish(conduit: &Conduit, sent: &Unrecorded, group: Vec<Committed>) {
    let now = group
        .iter()
        .map(|c| c.now)
        .max()
        .unwrap_or_else(|| conduit.now());
    let stored = group
        .iter()
        .filter(|c| c.failed.is_none())
        .flat_map(|c| &c.steps);
    let (head, logged) = match notarize(conduit, stored, now) {
        Ok(head) => (head, None),
        Err(e) => (None, Some(e)),
    };
    let receiver = conduit.receiver().ok();
    let reader = receiver.as_ref().and_then(|r| Reader::new(r.store()).ok());
    let mut created = false;
    for c in group {
        let failed = c.failed.or_else(|| logged.clone());
        let mut steps = c.steps.into_iter();
        for job in c.batch {
            let outcome = match steps.next() {
                // A store that failed before receiving: no step.
                None => Outcome::Failed(failed.clone().unwrap_or_default()),
                Some(Step::Done(o)) => o,
                Some(Step::New { .. } | Step::Existing(_)) if failed.is_some() => {
                    Outcome::Failed(failed.clone().unwrap_or_default())
                }
                Some(Step::New { arrival, forwarded }) => {
                    created = true;
                    let body = conduit.created_body(arrival, forwarded, head.as_ref());
                    Outcome::Created(Arc::new(body))
                }
                Some(Step::Existing(stored)) => {
                    existing(conduit, head.as_ref(), sent, reader.as_ref(), &job, stored)
                }
            };
            if let Outcome::Created(_) = outcome {
                conduit.deliveries.send_modify(|n| *n += 1);
            }
            let _ = job.reply.send(outcome);
        }
    }
    if created && let Some(head) = head {
        sent.add(head);
    }
}

/// The answer to a repeat of an envelope stored before: its first 201
/// body, rebuilt against the head that first answered it (this group's,
/// pending, or recorded: [`Conduit::first_answer`]), else against the
/// latest head; never a 201 for an envelope whose leaf the log (notary)
/// does not hold under a signed tree head (its first batch failed to log
/// it: a 500 until a restart logs it).
fn existing(
    conduit: &Conduit,
    head: Option<&SignedTreeHead>,
    sent: &Unrecorded,
    reader: Option<&Reader<'_>>,
    job: &Job,
    stored: Stored,
) -> Outcome {
    let pending = |arrival: u64| sent.covering(arrival);
    let first = reader.and_then(|r| {
        conduit
            .first_answer_of(r, &job.id, &stored, Some(&pending))
            .ok()
    });
    if let Some(body) = first.flatten() {
        return Outcome::Created(Arc::new(body));
    }
    // First stored in a batch of this group: answered with its head.
    if let Some(head) = head.filter(|h| h.size() > stored.arrival) {
        let body = conduit.created_body(stored.arrival, stored.bytes, Some(head));
        return Outcome::Created(Arc::new(body));
    }
    if !conduit.signed_over(stored.arrival) {
        return Outcome::Failed(format!(
            "envelope {} is stored but not yet in the audit log",
            stored.arrival
        ));
    }
    Outcome::Created(Arc::new(conduit.created_body(
        stored.arrival,
        stored.bytes,
        None,
    )))
}
