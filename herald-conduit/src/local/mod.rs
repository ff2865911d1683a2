//! The local backend: the redb store in the state directory (the default).
//!
//! The conduit's tables ([`tables`]) share the replay cache's redb
//! database, so an acknowledged envelope's claim, bytes, inbox entry and
//! trace entry commit together (herald-verify's `Receiver`, one write
//! transaction per batch); a storage failure reopens the store
//! ([`store`]). A notary keeps the P9 audit log in `--log` ([`notary`]):
//! each group of committed batches is appended with one sync and answered
//! against one tree head signed over it, which is recorded for repeats
//! ([`heads`]).

mod erase;
mod heads;
mod notary;
mod store;
mod tables;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use herald_core::{EnvelopeRef, SigningKey};
use herald_verify::{
    ConsistencyProof, Keyring, Leaf, LiveState, Prechecked, Receiver, SignedTreeHead, Store,
    StoreError, StoreTxn,
};

use crate::backend::{AuditLog, Backend, Failure, Inclusion, Pending};
use crate::blocking::{off_runtime, on_cores};
use crate::erase::{Erasure, Tombstone};
use crate::page::Page;
use crate::stored::{RECIPIENT_LEN, Stored};
use crate::writer::{self, Committed, Job, Outcome, Prepared, Step, Txn};
use crate::{Conduit, Config, OpenError};

pub(crate) use notary::Notary;

use heads::{PendingHeads, Unrecorded};
use store::Live;
use tables::{Reader, Tables};

/// The store's owner name (herald-verify `Store`).
pub(crate) const STORE_OWNER: &str = "herald-conduit";
/// The store file in the state directory.
pub(crate) const STORE_FILE: &str = "conduit.redb";

/// The redb backend.
pub(crate) struct Local {
    /// The receiver and its store, reopened after a storage failure.
    live: Live,
    /// The audit log (notary).
    log: Option<NotaryLog>,
    /// Tree heads answered with, not yet recorded.
    sent: Unrecorded,
}

/// The notary's log, shared with the witness rounds.
pub(crate) type SharedNotary = Arc<Mutex<Notary>>;

/// The local audit log as its endpoints read it.
struct NotaryLog(SharedNotary);

/// The receiver's store in `state` (created if absent), with the conduit's
/// tables: the redb store of the local backend, and the one a fleet's
/// receiver holds its configuration in.
pub(crate) fn open_store(state: &Path) -> Result<Store, OpenError> {
    herald_verify::create_private_dir(state).map_err(OpenError::State)?;
    let store =
        Store::open_or_create(state.join(STORE_FILE), STORE_OWNER).map_err(OpenError::Store)?;
    tables::create_tables(&store).map_err(OpenError::Store)?;
    Ok(store)
}

impl Local {
    /// The backend over `store` (from [`open_store`]); with `notary`, the
    /// log in `config`'s log directory is opened (created for `key`) and
    /// the leaves a crash left out appended, a head signed at `now`.
    pub(crate) fn open(
        config: &Config,
        key: &SigningKey,
        receiver: Receiver,
        keyring: Keyring,
        now: u64,
    ) -> Result<Self, OpenError> {
        let log = if config.roles.notary {
            let reader = Reader::new(receiver.store()).map_err(OpenError::Store)?;
            let notary =
                Notary::open(&config.log_dir(), key, &reader, now).map_err(OpenError::Log)?;
            Some(NotaryLog(Arc::new(Mutex::new(notary))))
        } else {
            None
        };
        Ok(Self {
            live: Live::new(
                receiver,
                keyring,
                config.state.join(STORE_FILE),
                config.max_body,
            ),
            log,
            sent: Unrecorded::default(),
        })
    }

    /// The notary's log, for the witness rounds (`crate::witnesses`).
    pub(crate) fn notary(&self) -> Option<SharedNotary> {
        self.log.as_ref().map(|l| Arc::clone(&l.0))
    }

    /// `f` over a read view of the store.
    fn read<T>(
        live: &Live,
        f: impl FnOnce(&Reader<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let receiver = live.get()?;
        let reader = Reader::new(receiver.store())?;
        f(&reader)
    }

    /// `f` over a read view, on the blocking pool.
    fn read_blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Reader<'_>) -> Result<T, StoreError> + Send + 'static,
    ) -> Pending<'_, Result<T, Failure>> {
        let live = self.live.clone();
        Box::pin(async move {
            match tokio::task::spawn_blocking(move || Self::read(&live, f)).await {
                Ok(r) => r.map_err(|e| e.to_string()),
                Err(_) => Err("a store read did not finish".into()),
            }
        })
    }

    /// The 201 body of the envelope that arrived `arrival`-th: (notary)
    /// with its inclusion proof against `head`, else the latest head.
    fn created_body(
        &self,
        arrival: u64,
        forwarded: Vec<u8>,
        head: Option<&SignedTreeHead>,
    ) -> Vec<u8> {
        let Some(NotaryLog(notary)) = &self.log else {
            return writer::created_body(forwarded, false, arrival, None);
        };
        let leaf = EnvelopeRef::decode(&forwarded)
            .ok()
            .map(|e| Leaf::from_envelope(&e));
        let proof = notary.lock().ok().and_then(|n| match head {
            Some(h) => n.inclusion_under(arrival, leaf, h).ok().flatten(),
            None => n.inclusion(arrival, leaf).ok().flatten(),
        });
        writer::created_body(forwarded, true, arrival, proof)
    }

    /// The first 201 body of `stored`, the stored envelope `id`, rebuilt
    /// (spec §11.3): without a notary the body is the stored envelope;
    /// with one, against the first head that answered its leaf, recorded
    /// in the store or (the writer) in `pending`, taken before `reader`'s
    /// snapshot ([`Unrecorded::snapshot`]), or the body a conduit before
    /// `conduit_heads` recorded. `None` when not yet answered.
    fn first_answer_of(
        &self,
        reader: &Reader<'_>,
        id: &[u8; 32],
        stored: &Stored,
        pending: Option<&PendingHeads>,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        if self.log.is_none() {
            return Ok(Some(self.created_body(
                stored.arrival,
                stored.bytes.clone(),
                None,
            )));
        }
        if let Some(body) = reader.answer(id)? {
            return Ok(Some(body));
        }
        // The first head covering the leaf, recorded or pending: a head
        // can be in both while its record commits.
        let recorded = reader
            .head_covering(stored.arrival)?
            .and_then(|(_, wire)| SignedTreeHead::decode(&wire).ok());
        let pending = pending.and_then(|p| p.covering(stored.arrival));
        let head = match (recorded, pending) {
            (Some(r), Some(p)) if p.size() < r.size() => Some(p.clone()),
            (Some(r), _) => Some(r),
            (None, p) => p.cloned(),
        };
        Ok(head.map(|h| self.created_body(stored.arrival, stored.bytes.clone(), Some(&h))))
    }

    /// Whether the envelope that arrived `arrival`-th may be acknowledged
    /// as far as the log goes: no notary, or its leaf is under the latest
    /// signed tree head (so durable: the head is signed after the sync).
    fn signed_over(&self, arrival: u64) -> bool {
        match &self.log {
            None => true,
            Some(NotaryLog(n)) => n
                .lock()
                .is_ok_and(|n| n.sth().is_some_and(|s| s.size() > arrival)),
        }
    }

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

    fn store(
        &mut self,
        job: &Job,
        to: Option<[u8; RECIPIENT_LEN]>,
        forwarded: &[u8],
        view: &EnvelopeRef<'_>,
    ) -> Result<u64, String> {
        let lifecycle = crate::keys::Lifecycle::of(view);
        self.tables
            .put(&job.id, &job.trace, to, lifecycle, forwarded)
            .map_err(|e| e.to_string())
    }
}

/// The writer's stages on the redb store, on the calling thread: the
/// [`Backend`] methods run them off the runtime's workers.
impl Local {
    /// [`Backend::precheck`], on this thread.
    fn precheck_here<'b>(
        &self,
        posts: &[&'b [u8]],
        now: u64,
    ) -> Vec<Result<Prechecked<'b>, StoreError>> {
        match self.live.get() {
            Ok(r) => r.precheck_all(&mut r.store().reader(), posts, now),
            Err(_) => posts.iter().map(|_| Err(self.live.down())).collect(),
        }
    }

    /// [`Backend::receive`], on this thread.
    fn receive_here(
        &self,
        conduit: &Conduit,
        batch: &[Job],
        prepared: Vec<Prepared<'_>>,
    ) -> (Vec<Step>, Option<String>) {
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
    fn answer_here(&self, conduit: &Conduit, group: Vec<Committed>) {
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

    /// [`Backend::idle`], on this thread.
    fn idle_here(&self, conduit: &Conduit) {
        // A fresh tree head when the last is a batch interval old.
        if let Some(NotaryLog(n)) = &self.log
            && let Ok(mut n) = n.lock()
        {
            let _ = n.sign(&conduit.key, conduit.now());
        }
        self.sent.flush(&self.live);
    }
}

impl Backend for Local {
    fn healthy(&self) -> Pending<'_, bool> {
        // A failed write hands the store to its repairer (`store`).
        Box::pin(std::future::ready(self.live.healthy()))
    }

    fn precheck<'a, 'b: 'a>(
        &'a self,
        posts: &'a [&'b [u8]],
        now: u64,
    ) -> Pending<'a, Vec<Result<Prechecked<'b>, StoreError>>> {
        Box::pin(async move {
            off_runtime(|| {
                let parts = on_cores(posts, |part| self.precheck_here(part, now));
                parts.into_iter().flatten().collect()
            })
        })
    }

    fn receive<'a>(
        &'a self,
        conduit: &'a Conduit,
        batch: &'a [Job],
        prepared: Vec<Prepared<'a>>,
        _now: u64,
    ) -> Pending<'a, (Vec<Step>, Option<String>)> {
        Box::pin(async move { off_runtime(|| self.receive_here(conduit, batch, prepared)) })
    }

    fn answer<'a>(&'a self, conduit: &'a Conduit, group: Vec<Committed>) -> Pending<'a, ()> {
        Box::pin(async move { off_runtime(|| self.answer_here(conduit, group)) })
    }

    fn idle<'a>(&'a self, conduit: &'a Conduit) -> Pending<'a, ()> {
        Box::pin(async move { off_runtime(|| self.idle_here(conduit)) })
    }

    fn close<'a>(&'a self, _: &'a Conduit) -> Pending<'a, ()> {
        Box::pin(async move { off_runtime(|| self.sent.flush(&self.live)) })
    }

    fn idle_every(&self, batch: Duration) -> Duration {
        batch
    }

    /// The log's sync overlaps the next batch's commit.
    fn overlap(&self) -> bool {
        true
    }

    fn duty<'a>(&'a self, _: &'a Conduit) -> Pending<'a, ()> {
        Box::pin(std::future::ready(()))
    }

    fn envelope(&self, id: [u8; 32]) -> Pending<'_, Result<Option<Stored>, Failure>> {
        let found = Self::read(&self.live, |r| r.envelope(&id)).map_err(|e| e.to_string());
        Box::pin(std::future::ready(found))
    }

    fn signing_keys(
        &self,
        sigil: herald_core::Sigil,
        at: u64,
    ) -> Pending<'_, Result<Vec<herald_core::PublicKey>, Failure>> {
        let keys = self
            .live
            .get()
            .and_then(|r| r.signing_keys(&sigil, at))
            .map_err(|e| e.to_string());
        Box::pin(std::future::ready(keys))
    }

    fn answered(&self, id: [u8; 32]) -> Pending<'_, Option<Vec<u8>>> {
        let body = Self::read(&self.live, |r| match r.envelope(&id)? {
            Some(stored) => self.first_answer_of(r, &id, &stored, None),
            None => Ok(None),
        });
        Box::pin(std::future::ready(body.ok().flatten()))
    }

    fn inbox_page(
        &self,
        recipient: [u8; RECIPIENT_LEN],
        after: u64,
        max_bytes: usize,
    ) -> Pending<'_, Result<Page, Failure>> {
        self.read_blocking(move |r| r.inbox_page(&recipient, after, max_bytes))
    }

    fn trace_page(
        &self,
        trace: [u8; 32],
        after: u64,
        max_bytes: usize,
    ) -> Pending<'_, Result<Page, Failure>> {
        self.read_blocking(move |r| r.trace_page(&trace, after, max_bytes))
    }

    fn concat(&self, ids: Vec<[u8; 32]>) -> Pending<'_, Result<Vec<u8>, Failure>> {
        self.read_blocking(move |r| r.concat(&ids))
    }

    fn lifecycle(
        &self,
        identity: [u8; RECIPIENT_LEN],
    ) -> Pending<'_, Result<Vec<crate::keys::Indexed>, Failure>> {
        self.read_blocking(move |r| r.lifecycle(&identity))
    }

    fn tombstone(&self, id: [u8; 32]) -> Pending<'_, Result<Option<Tombstone>, Failure>> {
        self.read_blocking(move |r| r.tombstone(&id))
    }

    /// One durable write transaction; a notary's envelope whose leaf no
    /// signed tree head covers yet is left (its leaf is rebuilt from its
    /// bytes after a crash: `notary`).
    fn erase(&self, erasures: Vec<Erasure>) -> Pending<'_, Result<Vec<[u8; 32]>, Failure>> {
        let erasures: Vec<Erasure> = erasures
            .into_iter()
            .filter(|e| self.signed_over(e.arrival))
            .collect();
        let live = self.live.clone();
        Box::pin(async move {
            match tokio::task::spawn_blocking(move || erase::erase(&live, &erasures)).await {
                Ok(r) => r,
                Err(_) => Err("an erasure did not finish".into()),
            }
        })
    }

    fn oldest(&self, from: u64, limit: usize) -> Pending<'_, Result<(Vec<Stored>, u64), Failure>> {
        self.read_blocking(move |r| r.oldest(from, limit))
    }

    fn deliveries(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        None
    }

    fn log(&self) -> Option<&dyn AuditLog> {
        self.log.as_ref().map(|l| l as &dyn AuditLog)
    }
}

impl NotaryLog {
    fn with<T>(&self, f: impl FnOnce(&mut Notary) -> Result<T, Failure>) -> Result<T, Failure> {
        match self.0.lock() {
            Ok(mut n) => f(&mut n),
            Err(_) => Err("the notary lock is poisoned".into()),
        }
    }
}

impl AuditLog for NotaryLog {
    fn sth(&self) -> Pending<'_, Result<Option<SignedTreeHead>, Failure>> {
        // A poisoned lock reads as no head, as before.
        let sth = self.0.lock().ok().and_then(|n| n.sth().cloned());
        Box::pin(std::future::ready(Ok(sth)))
    }

    fn inclusion(&self, id: [u8; 32]) -> Pending<'_, Result<Inclusion, Failure>> {
        let found = self.with(|n| {
            let Some(index) = n.log().index_of(&id) else {
                return Ok(Inclusion::Unknown);
            };
            match n.inclusion(index, None).map_err(|e| e.to_string())? {
                Some(p) => Ok(Inclusion::Proof(Box::new(p))),
                None => Ok(Inclusion::NotCovered),
            }
        });
        Box::pin(std::future::ready(found))
    }

    fn consistency<'a>(
        &'a self,
        key: &'a SigningKey,
        size1: u64,
        size2: Option<u64>,
        now: u64,
    ) -> Pending<'a, Result<Result<ConsistencyProof, String>, Failure>> {
        let proof = self.with(|n| {
            Ok(n.consistency(key, size1, size2, now)
                .map_err(|e| e.to_string()))
        });
        Box::pin(std::future::ready(proof))
    }

    fn checkpoint<'a>(
        &'a self,
        key: &'a SigningKey,
        origin: &'a str,
    ) -> Pending<'a, Result<String, Failure>> {
        let text = self.with(|n| n.checkpoint(key, origin).map_err(|e| e.to_string()));
        Box::pin(std::future::ready(text))
    }

    fn tile(&self, path: String) -> Pending<'_, Result<Option<Vec<u8>>, Failure>> {
        let tile = self.with(|n| n.tile(&path).map_err(|e| e.to_string()));
        Box::pin(std::future::ready(tile))
    }

    fn size(&self) -> Pending<'_, Option<u64>> {
        let size = self.0.lock().ok().map(|n| n.log().len());
        Box::pin(std::future::ready(size))
    }
}
