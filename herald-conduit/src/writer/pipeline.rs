//! The writer's stages, whatever the backend.
//!
//! 1. **Store**, two tasks taking turns: each takes the queued posts as a
//!    batch and prechecks them (signatures, the relay's receipt) on every
//!    core; then, in its turn, has the backend receive the batch in one
//!    transaction and commit it ([`Backend::receive`]), and hands it to the
//!    answer stage. One task's precheck overlaps the other's commit.
//! 2. **Answer**, one task: the backend logs the leaves of every batch
//!    committed since it last ran (notary: one sync, one tree head over
//!    them, or a fleet's head covering them) and only then answers their
//!    posts ([`Backend::answer`]). So a commit overlaps the logging of the
//!    batches before it.
//!
//! A backend whose answers wait for more than its own log (a fleet's for a
//! head any conduit may sign, [`Backend::overlap`]) runs both stages in one
//! task instead, one batch after the other.
//!
//! Each stage is a task of its own; a backend whose work blocks has each
//! driven on a thread of its own ([`Backend::blocks`], [`own_thread`]):
//! what blocks in a stage holds up nothing else. Batches reach the answer
//! stage in commit order (the turn is held until the hand over), so leaf
//! indices stay arrival numbers. No post is answered before its commit and
//! its leaf are both durable.
//!
//! [`Backend::receive`]: crate::backend::Backend::receive
//! [`Backend::answer`]: crate::backend::Backend::answer
//! [`Backend::overlap`]: crate::backend::Backend::overlap
//! [`Backend::blocks`]: crate::backend::Backend::blocks

use std::future::Future;
use std::sync::Arc;

use tokio::sync::Mutex;
use tokio::sync::mpsc::{Receiver, Sender};

use super::{Batch, Committed, Job, next_batch};
use crate::Conduit;
use crate::blocking::own_thread;

/// Committed batches that may wait for the answer stage at most: the store
/// stage runs this far ahead before it waits.
const LOG_QUEUE: usize = 8;

/// The turn to commit and hand over to the answer stage (`None`: no
/// answer task, or closing: finish in this task).
type Turn = Mutex<Option<Sender<Committed>>>;

/// Run the stages until every sender of `jobs` is gone.
pub(crate) async fn run(conduit: Arc<Conduit>, jobs: Receiver<Job>) {
    let jobs = Arc::new(Mutex::new(jobs));
    if !conduit.backend.overlap() {
        // One stage: receive, then answer, in this task.
        drive(&conduit, async {
            store(&conduit, &jobs, &Mutex::new(None)).await;
            conduit.backend.close(&conduit).await;
        })
        .await;
        return;
    }
    let (to_log, mut committed) = tokio::sync::mpsc::channel::<Committed>(LOG_QUEUE);
    let turn = Arc::new(Mutex::new(Some(to_log)));
    let answers = {
        let conduit = Arc::clone(&conduit);
        tokio::spawn(async move {
            drive(&conduit, async {
                while let Some(first) = committed.recv().await {
                    let mut group = vec![first];
                    while let Ok(more) = committed.try_recv() {
                        group.push(more);
                    }
                    conduit.backend.answer(&conduit, group).await;
                }
            })
            .await;
        })
    };
    let second = {
        let (conduit, jobs, turn) = (Arc::clone(&conduit), Arc::clone(&jobs), Arc::clone(&turn));
        tokio::spawn(async move { drive(&conduit, store(&conduit, &jobs, &turn)).await })
    };
    drive(&conduit, store(&conduit, &jobs, &turn)).await;
    if second.await.is_err() {
        // It panicked: a batch it held is lost (its posts' handlers answer
        // 503 at their deadline); the queue is empty and closed.
        tracing::error!("a writer task failed");
    }
    // The queue is closed: the answer stage ends after its last batch.
    drop(turn.lock().await.take());
    let _ = answers.await;
    drive(&conduit, conduit.backend.close(&conduit)).await;
}

/// Drive `stage` where its backend's work may block: on a thread of its
/// own ([`Backend::blocks`]), else in this task.
async fn drive<F: Future>(conduit: &Conduit, stage: F) -> F::Output {
    if conduit.backend.blocks() {
        own_thread(stage).await
    } else {
        stage.await
    }
}

/// The store stage: take the queued posts in batches and [`accept`] each;
/// when idle, [`crate::backend::Backend::idle`].
async fn store(conduit: &Conduit, jobs: &Mutex<Receiver<Job>>, turn: &Turn) {
    while let Some(next) = next_batch(conduit, jobs).await {
        match next {
            Some(batch) => accept(conduit, turn, batch).await,
            None => conduit.backend.idle(conduit).await,
        }
    }
}

/// Precheck `batch`, then in this task's turn have the backend receive
/// and commit it, and hand it to the answer stage.
async fn accept(conduit: &Conduit, turn: &Turn, batch: Vec<Job>) {
    let now = conduit.now();
    let jobs = Batch {
        conduit,
        jobs: &batch,
        now,
    };
    // The signature work on every core, outside the turn. The prechecked
    // posts borrow the batch: the backend gets it back with them.
    let prepared = conduit.backend.prepare(jobs).await;
    let to_log = turn.lock().await;
    let (steps, failed) = conduit.backend.receive(jobs, prepared).await;
    let mut committed = Committed {
        batch,
        steps,
        failed,
        now,
    };
    if let Some(log) = to_log.as_ref() {
        match log.send(committed).await {
            Ok(()) => return,
            // The answer stage is gone (it panicked): finish here.
            Err(back) => committed = back.0,
        }
    }
    drop(to_log);
    conduit.backend.answer(conduit, vec![committed]).await;
}
