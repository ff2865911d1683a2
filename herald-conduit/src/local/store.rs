//! The store, reopened after an I/O error (docs/conduit.md *Storage
//! failures*).
//!
//! After a failed write (a full disk, a file size limit, an I/O error) redb
//! fails every later operation of that handle, reads included, until the
//! database is closed and opened again; opening it repairs it from its last
//! durable commit, which holds everything acknowledged (CONDUIT.md: a 201
//! is on disk before it is sent). So a storage failure the writer meets is
//! logged and hands the store to a repairer thread: it takes the receiver
//! out (new work is turned away: `/healthz` answers 503, posts a `storage`
//! problem), waits for the work in progress to let go of it, closes the
//! database, opens it again and proves that a post fits: it commits a probe
//! record as large as two of the largest posts, durably, and erases it
//! (table `conduit_probe`). It retries every [`RETRY`] until that works
//! (space was freed); then the conduit takes work again.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use herald_verify::{Keyring, Receiver, Store, StoreError};
use redb::TableDefinition;

use super::STORE_OWNER;

/// How often the repairer tries to open the store again.
pub(crate) const RETRY: Duration = Duration::from_secs(1);
/// How often it looks whether the work in progress let go of the store.
const RELEASE_POLL: Duration = Duration::from_millis(10);
/// The probe record's table: written and erased by the repairer only.
const PROBE: TableDefinition<'static, &'static str, &'static [u8]> =
    TableDefinition::new("conduit_probe");

/// The conduit's receiver and store, swapped for a fresh one after a
/// storage failure. Cheap to clone (one shared state).
#[derive(Clone, Debug)]
pub(crate) struct Live {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    /// `None` while the store is being reopened.
    slot: RwLock<Option<Arc<Receiver>>>,
    path: PathBuf,
    keyring: Keyring,
    /// Bytes of the probe record.
    probe: usize,
    /// A repairer is running.
    repairing: AtomicBool,
}

impl Live {
    /// The store of `receiver` (at `path`), which verifies with `keyring`
    /// and the keys births teach, as [`super::Local::open`] builds it;
    /// posts are at most `max_body` bytes.
    pub(crate) fn new(
        receiver: Receiver,
        keyring: Keyring,
        path: PathBuf,
        max_body: usize,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                slot: RwLock::new(Some(Arc::new(receiver))),
                path,
                keyring,
                probe: max_body.saturating_mul(2),
                repairing: AtomicBool::new(false),
            }),
        }
    }

    /// The receiver and its store, for one piece of work (a batch, a read):
    /// hold it no longer, so that a repair can close the store.
    pub(crate) fn get(&self) -> Result<Arc<Receiver>, StoreError> {
        let slot = self
            .inner
            .slot
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        slot.clone().ok_or_else(|| self.down())
    }

    /// The error of work turned away while the store is reopened.
    pub(crate) fn down(&self) -> StoreError {
        StoreError::storage(
            &self.inner.path,
            "use the store while it is reopened",
            redb::Error::DatabaseClosed,
        )
    }

    /// Whether the store takes work (not failed, not being reopened).
    pub(crate) fn healthy(&self) -> bool {
        !self.inner.repairing.load(Ordering::SeqCst)
    }

    /// A write to the store failed with `error`: log it and reopen the
    /// store (once: a failure met while a repair runs is that one's).
    pub(crate) fn failed(&self, error: &dyn std::fmt::Display) {
        if self.inner.repairing.swap(true, Ordering::SeqCst) {
            return;
        }
        tracing::error!(%error, "the store failed; closing and reopening it");
        let inner = Arc::clone(&self.inner);
        let spawned = std::thread::Builder::new()
            .name("herald-conduit-repair".into())
            .spawn(move || inner.repair());
        if let Err(e) = spawned {
            tracing::error!(error = %e, "could not start the store's repairer");
            self.inner.repairing.store(false, Ordering::SeqCst);
        }
    }
}

impl Inner {
    /// Close the store once nothing holds it, then open it until it opens.
    fn repair(self: Arc<Self>) {
        let taken = self
            .slot
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(mut held) = taken {
            let receiver = loop {
                match Arc::try_unwrap(held) {
                    Ok(r) => break r,
                    Err(still) => {
                        held = still;
                        std::thread::sleep(RELEASE_POLL);
                    }
                }
            };
            // redb closes the database when its last handle drops.
            drop(receiver.into_store());
        }
        loop {
            match self.open() {
                Ok(receiver) => {
                    *self.slot.write().unwrap_or_else(PoisonError::into_inner) =
                        Some(Arc::new(receiver));
                    self.repairing.store(false, Ordering::SeqCst);
                    tracing::info!("the store is open again; taking work");
                    return;
                }
                Err(e) => {
                    tracing::warn!(error = %e, retry_ms = RETRY.as_millis(), "the store does not open yet");
                }
            }
            // The conduit is gone: nobody needs the store any more.
            if Arc::strong_count(&self) == 1 {
                return;
            }
            std::thread::sleep(RETRY);
        }
    }

    /// Open the store and prove that a post fits (closed again if not).
    fn open(&self) -> Result<Receiver, StoreError> {
        let store = Store::open(&self.path, STORE_OWNER)?;
        super::tables::create_tables(&store)?;
        let err = |e: redb::Error| StoreError::storage(&self.path, "write a probe record", e);
        let record = vec![0u8; self.probe];
        for write in [true, false] {
            let txn = store.begin_write("write a probe record")?;
            {
                let mut t = txn.open_table(PROBE).map_err(|e| err(e.into()))?;
                if write {
                    t.insert("probe", record.as_slice())
                        .map_err(|e| err(e.into()))?;
                } else {
                    t.remove("probe").map_err(|e| err(e.into()))?;
                }
            }
            txn.commit().map_err(|e| err(e.into()))?;
        }
        // CONDUIT.md revision 3: the origin first, as at the first open.
        Ok(Receiver::new(store, self.keyring.clone()).with_origin_first(true))
    }
}
