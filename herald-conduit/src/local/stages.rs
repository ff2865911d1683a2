//! The writer's stages on the redb store ([`Backend::blocks`]: the writer
//! drives each on a thread of its own): a batch prechecked and settled on
//! every core, received in one write transaction of the store, its leaves
//! logged (notary: one sync, one tree head over a group of batches) and
//! its posts answered.
//!
//! [`Backend::blocks`]: crate::backend::Backend::blocks

use std::sync::Arc;

use herald_core::EnvelopeRef;
use herald_verify::{LiveState, Receiver, SignedTreeHead, StoreTxn};

use super::heads::PendingHeads;
use super::tables::{Reader, Tables};
use super::{Local, NotaryLog};
use crate::Conduit;
use crate::blocking::on_cores;
use crate::stored::Stored;
use crate::writer::{self, Batch, Committed, Job, New, Outcome, Prepared, Received, Step, Txn};

impl Local {
    /// Notary: log the new envelopes of `steps` (one sync) and sign a tree
    /// head over them; the head their 201 bodies are answered with (`None`
    /// without a notary or while the log is empty).
    fn notarize<'s>(
        &self,
        conduit: &Conduit,
        steps: impl Iterator<Item = &'s Step>,
        now: u64,
    ) -> Result<Option<SignedTreeHead>, String> {
        let Some(NotaryLog(notary)) = &self.log else {
            return Ok(None);
        };
        let mut arrivals = Vec::new();
        let mut views = Vec::new();
        for step in steps {
            if let Step::New { arrival, forwarded } = step {
                let view = EnvelopeRef::decode(forwarded)
                    .map_err(|_| "a stored envelope no longer decodes")?;
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

    /// The answer to a repeat of an envelope stored before: its first 201
    /// body, rebuilt against the head that first answered it (this group's,
    /// pending, or recorded), else against the latest head; never a 201 for
    /// an envelope whose leaf the log (notary) does not hold under a signed
    /// tree head (its first batch failed to log it: a 500 until a restart
    /// logs it).
    fn existing(
        &self,
        head: Option<&SignedTreeHead>,
        reader: Option<&(PendingHeads, Reader<'_>)>,
        job: &Job,
        stored: Stored,
    ) -> Outcome {
        let first = reader.and_then(|(pending, r)| {
            self.first_answer_of(r, &job.id, &stored, Some(pending))
                .ok()
        });
        if let Some(body) = first.flatten() {
            return Outcome::Created(Arc::new(body));
        }
        // First stored in a batch of this group: answered with its head.
        if let Some(head) = head.filter(|h| h.size() > stored.arrival) {
            let body = self.created_body(stored.arrival, stored.bytes, Some(head));
            return Outcome::Created(Arc::new(body));
        }
        if !self.signed_over(stored.arrival) {
            return Outcome::Failed(format!(
                "envelope {} is stored but not yet in the audit log",
                stored.arrival
            ));
        }
        Outcome::Created(Arc::new(self.created_body(
            stored.arrival,
            stored.bytes,
            None,
        )))
    }
}

/// A batch's write transaction of the store.
struct LocalTxn<'a, 't> {
    receiver: &'a Receiver,
    /// The receiver's tables in the transaction.
    state: StoreTxn<'a>,
    tables: &'a mut Tables<'t>,
}

impl Txn for LocalTxn<'_, '_> {
    fn stored(&mut self, id: &[u8; 32]) -> Result<Option<Stored>, String> {
        self.tables.get(id).map_err(|e| e.to_string())
    }

    fn erased(&mut self, id: &[u8; 32]) -> Result<Option<Vec<u8>>, String> {
        self.tables.erased(id).map_err(|e| e.to_string())
    }

    fn live(&mut self) -> (&Receiver, &mut dyn LiveState) {
        (self.receiver, &mut self.state)
    }

    fn store(&mut self, new: &New<'_>) -> Result<u64, String> {
        let lifecycle = crate::keys::Lifecycle::of(new.view);
        let job = new.job;
        self.tables
            .put(&job.id, &job.trace, new.to, lifecycle, new.forwarded)
            .map_err(|e| e.to_string())
    }
}

/// The writer's stages on the redb store, on the calling thread (the
/// stage's own: [`Backend::blocks`](crate::backend::Backend::blocks)).
impl Local {
    /// [`Backend::prepare`](crate::backend::Backend::prepare): each core
    /// prechecks its part of the batch against a read view of the store
    /// and settles it.
    pub(super) fn prepare_here<'b>(&self, batch: Batch<'b>) -> Vec<Prepared<'b>> {
        let parts = on_cores(batch.jobs, |jobs| {
            let posts = writer::posts(jobs);
            let pre = match self.live.get() {
                Ok(r) => r.precheck_all(&mut r.store().reader(), &posts, batch.now),
                Err(_) => posts.iter().map(|_| Err(self.live.down())).collect(),
            };
            let judged: Vec<_> = pre.iter().zip(jobs).collect();
            let settled = writer::settle(batch.conduit, &judged, batch.now);
            drop(judged);
            writer::prepared(pre, settled, batch.now)
        });
        parts.into_iter().flatten().collect()
    }

    /// [`Backend::receive`](crate::backend::Backend::receive), on this thread.
    pub(super) fn receive_here(&self, batch: Batch<'_>, prepared: Vec<Prepared<'_>>) -> Received {
        let Batch {
            conduit,
            jobs: batch,
            ..
        } = batch;
        let receiver = self.live.get();
        let began = receiver.as_ref().map_err(|e| e.to_string()).and_then(|r| {
            r.store()
                .begin_write("receive a batch")
                .map(|txn| (r, txn))
                .map_err(|e| e.to_string())
        });
        let (steps, failed) = match began {
            Ok((receiver, txn)) => {
                let mut steps = Vec::with_capacity(batch.len());
                match Tables::open(&txn) {
                    Ok(mut tables) => {
                        let mut t = LocalTxn {
                            receiver,
                            state: StoreTxn::new(receiver.store(), &txn),
                            tables: &mut tables,
                        };
                        for (job, prep) in batch.iter().zip(prepared) {
                            steps.push(
                                writer::receive_one(conduit, &mut t, job, &prep)
                                    .unwrap_or_else(|e| Step::Done(Outcome::Failed(e))),
                            );
                        }
                    }
                    Err(e) => {
                        let e = format!("store: {e}");
                        steps.extend(batch.iter().map(|_| Step::Done(Outcome::Failed(e.clone()))));
                    }
                }
                let heads = self.sent.record_in(&txn);
                // Committed even when nothing was accepted: a refused
                // envelope may still have changed what the receiver
                // witnessed (a molt overlapping another disputes the
                // sigil, P8 rule 5), and that must last.
                let failed = txn.commit().err().map(|e| format!("store commit: {e}"));
                // After the commit: signing keys read before it go stale
                // (http::signers).
                conduit.lifecycle_committed();
                if failed.is_none() {
                    self.sent.recorded(&heads);
                }
                (steps, failed)
            }
            Err(e) => (Vec::new(), Some(e)),
        };
        drop(receiver);
        // The store may be unusable until reopened (docs/conduit.md
        // *Storage failures*).
        if let Some(e) = &failed {
            self.live.failed(e);
        }
        (steps, failed)
    }

    /// Log the new envelopes of `group` (notary: one sync, one tree head
    /// over all of them), then answer every post of it, every 201 body
    /// against that one head, which joins the pending heads.
    pub(super) fn answer_here(&self, conduit: &Conduit, group: Vec<Committed>) {
        let now = group
            .iter()
            .map(|c| c.now)
            .max()
            .unwrap_or_else(|| conduit.now());
        let stored = group
            .iter()
            .filter(|c| c.failed.is_none())
            .flat_map(|c| &c.steps);
        let (head, logged) = match self.notarize(conduit, stored, now) {
            Ok(head) => (head, None),
            Err(e) => (None, Some(e)),
        };
        // The pending heads before the snapshot, so a head recorded in
        // between is in one of them (`first_answer_of`).
        let pending = self.sent.snapshot();
        let receiver = self.live.get().ok();
        let reader = receiver
            .as_ref()
            .and_then(|r| Reader::new(r.store()).ok())
            .map(|r| (pending, r));
        let mut created = false;
        let mut replies = Vec::new();
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
                        Outcome::Created(Arc::new(self.created_body(
                            arrival,
                            forwarded,
                            head.as_ref(),
                        )))
                    }
                    Some(Step::Existing(stored)) => {
                        self.existing(head.as_ref(), reader.as_ref(), &job, stored)
                    }
                };
                replies.push((job, outcome));
            }
        }
        // The head joins the pending ones before any client holds an
        // answer against it: a repeat sent after the answer finds it.
        if created && let Some(head) = head {
            self.sent.add(head);
        }
        for (job, outcome) in replies {
            writer::reply(conduit, job, outcome);
        }
    }

    /// [`Backend::idle`](crate::backend::Backend::idle), on this thread.
    pub(super) fn idle_here(&self, conduit: &Conduit) {
        // A fresh tree head when the last is a batch interval old.
        if let Some(NotaryLog(n)) = &self.log
            && let Ok(mut n) = n.lock()
        {
            let _ = n.sign(&conduit.key, conduit.now());
        }
        self.sent.flush(&self.live);
    }
}
