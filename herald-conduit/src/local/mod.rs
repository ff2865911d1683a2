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
mod stages;
mod store;
mod tables;

use std::path::Path;
use std::sync::{Arc, Mutex};

use herald_core::{EnvelopeRef, SigningKey};
use herald_verify::{Keyring, Leaf, Receiver, SignedTreeHead, Store, StoreError};

use crate::backend::{AuditLog, Backend, Failure, Listing, PageRead, Pending};
use crate::erase::{Erasure, Tombstone};
use crate::stored::{RECIPIENT_LEN, Stored};
use crate::writer::{self, Batch, Committed, Prepared, Received};
use crate::{Conduit, Config, OpenError};

pub(crate) use notary::{Notary, SharedNotary};

use heads::{PendingHeads, Unrecorded};
use notary::NotaryLog;
use store::Live;
use tables::Reader;

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
}

impl Backend for Local {
    fn healthy(&self) -> Pending<'_, bool> {
        // A failed write hands the store to its repairer (`store`).
        Box::pin(std::future::ready(self.live.healthy()))
    }

    fn blocks(&self) -> bool {
        true
    }

    fn sole_writer(&self) -> bool {
        true
    }

    fn prepare<'a>(&'a self, batch: Batch<'a>) -> Pending<'a, Vec<Prepared<'a>>> {
        Box::pin(async move { self.prepare_here(batch) })
    }

    fn receive<'a>(
        &'a self,
        batch: Batch<'a>,
        prepared: Vec<Prepared<'a>>,
    ) -> Pending<'a, Received> {
        Box::pin(async move { self.receive_here(batch, prepared) })
    }

    fn answer<'a>(&'a self, conduit: &'a Conduit, group: Vec<Committed>) -> Pending<'a, ()> {
        Box::pin(async move { self.answer_here(conduit, group) })
    }

    fn idle<'a>(&'a self, conduit: &'a Conduit) -> Pending<'a, ()> {
        Box::pin(async move { self.idle_here(conduit) })
    }

    fn close<'a>(&'a self, _: &'a Conduit) -> Pending<'a, ()> {
        Box::pin(async move { self.sent.flush(&self.live) })
    }

    /// The log's sync overlaps the next batch's commit.
    fn overlap(&self) -> bool {
        true
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

    fn page_of(&self, listing: Listing, after: u64, max_bytes: usize) -> Pending<'_, PageRead> {
        self.read_blocking(move |r| match listing {
            Listing::Inbox(who) => r.inbox_page(&who, after, max_bytes),
            Listing::Trace(trace) => r.trace_page(&trace, after, max_bytes),
        })
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

    fn log(&self) -> Option<&dyn AuditLog> {
        self.log.as_ref().map(|l| l as &dyn AuditLog)
    }
}
