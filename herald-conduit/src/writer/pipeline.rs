//! The writer's stages, whatever the backend.
//!
//! 1. **Store**, on two threads taking turns: each takes the queued posts
//!    as a batch and prechecks them (signatures, the relay's receipt) on
//!    every core; then, in its turn, has the backend receive the batch in
//!    one transaction and commit it ([`Backend::receive`]), and hands it to
//!    the answer stage. One thread's precheck overlaps the other's commit.
//! 2. **Answer**, on one thread: the backend logs the leaves of every batch
//!    committed since it last ran (notary: one sync, one tree head over
//!    them, or a fleet's head covering them) and only then answers their
//!    posts ([`Backend::answer`]). So a commit overlaps the logging of the
//!    batches before it.
//!
//! A backend whose answers wait for more than its own log (a fleet's for a
//! head any conduit may sign, [`Backend::overlap`]) runs both stages on one
//! thread instead, one batch after the other.
//!
//! Batches reach the answer stage in commit order (the turn is held until
//! the hand over), so leaf indices stay arrival numbers. No post is
//! answered before its commit and its leaf are both durable.
//!
//! [`Backend::receive`]: crate::backend::Backend::receive
//! [`Backend::answer`]: crate::backend::Backend::answer
//! [`Backend::overlap`]: crate::backend::Backend::overlap

use std::sync::mpsc::{Receiver, SyncSender};
use std::sync::{Mutex, PoisonError};
use std::thread::Builder;

use super::{Committed, Job, prepare, receive_loop};
use crate::Conduit;

/// Committed batches that may wait for the answer stage at most: the store
/// stage runs this far ahead before it waits.
const LOG_QUEUE: usize = 8;

/// The turn to commit and hand over to the answer stage (`None`: no
/// answer thread, or closing: finish on this thread).
type Turn = Mutex<Option<SyncSender<Committed>>>;

/// Run the stages until every sender of `jobs` is gone.
pub(crate) fn run(conduit: &Conduit, jobs: Receiver<Job>) {
    let jobs = &Mutex::new(jobs);
    if !conduit.backend.overlap() {
        // One stage: receive, then answer, on this thread.
        let alone: &Turn = &Mutex::new(None);
        receive_loop(conduit, jobs, &mut |b| accept(conduit, alone, b));
        conduit.backend.close(conduit);
        return;
    }
    let (to_log, committed) = std::sync::mpsc::sync_channel::<Committed>(LOG_QUEUE);
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
                    conduit.backend.answer(conduit, group);
                }
            });
        if logger.is_ok() {
            *lock(turn) = Some(to_log);
        } else {
            // No answer thread: both stages here (`turn` stays `None`).
            drop(to_log);
        }
        let worker = || receive_loop(conduit, jobs, &mut |b| accept(conduit, turn, b));
        let second = Builder::new()
            .name("herald-conduit-writer".into())
            .spawn_scoped(scope, worker);
        worker();
        if let Ok(second) = second {
            let _ = second.join();
        }
        // The queue is closed: the answer stage ends after its last batch.
        drop(lock(turn).take());
    });
    conduit.backend.close(conduit);
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Precheck `batch`, then in this thread's turn have the backend receive
/// and commit it, and hand it to the answer stage.
fn accept(conduit: &Conduit, turn: &Turn, batch: Vec<Job>) {
    let now = conduit.now();
    // The signature work on every core, outside the turn. The prechecked
    // posts borrow the batch: the backend gets it back with them.
    let prepared = prepare(conduit, &batch, now);
    let to_log = lock(turn);
    let (steps, failed) = conduit.backend.receive(conduit, &batch, prepared, now);
    let mut committed = Committed {
        batch,
        steps,
        failed,
        now,
    };
    if let Some(log) = to_log.as_ref() {
        match log.send(committed) {
            Ok(()) => return,
            // The answer stage is gone (it panicked): finish here.
            Err(back) => committed = back.0,
        }
    }
    drop(to_log);
    conduit.backend.answer(conduit, vec![committed]);
}
