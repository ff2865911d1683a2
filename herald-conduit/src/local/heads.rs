//! The tree heads 201 bodies were answered with, not yet recorded in the
//! store (spec §11.3: a repeat of an acknowledged envelope gets its first
//! answer, which the first head covering its leaf rebuilds byte for byte;
//! [`super::tables`] `conduit_heads`).

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use herald_verify::SignedTreeHead;

use super::store::Live;
use super::tables as mailbox;

/// The heads answered with but not yet recorded, by tree size: the next
/// batch's transaction records them (or, when the conduit is idle or
/// closing, one of their own, [`mailbox::put_heads`]), so the log stage
/// that answers never waits for the store's write lock. A head stays here
/// until its record is committed, so a repeat always finds its first
/// answer's head.
#[derive(Default)]
pub(super) struct Unrecorded(Mutex<BTreeMap<u64, SignedTreeHead>>);

impl Unrecorded {
    fn lock(&self) -> MutexGuard<'_, BTreeMap<u64, SignedTreeHead>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A head just answered with (the first of its size is kept).
    pub(super) fn add(&self, head: SignedTreeHead) {
        self.lock().entry(head.size()).or_insert(head);
    }

    /// The heads pending now. Taken before a store snapshot is opened, the
    /// two together hold every head answered with before this call: a head
    /// leaves this set only after its record commits, so one that left
    /// between the two is in the snapshot.
    pub(super) fn snapshot(&self) -> PendingHeads {
        PendingHeads(self.lock().clone())
    }

    fn pending(&self) -> Vec<(u64, Vec<u8>)> {
        self.lock()
            .iter()
            .map(|(size, h)| (*size, h.encode()))
            .collect()
    }

    /// Record the pending heads in `txn`; what to pass to
    /// [`Unrecorded::recorded`] once it commits. Best effort, as the
    /// answers are: a failure leaves them for the next transaction.
    pub(super) fn record_in(&self, txn: &redb::WriteTransaction) -> Vec<u64> {
        let pending = self.pending();
        match mailbox::put_heads_in(txn, &refs(&pending)) {
            Ok(()) => pending.into_iter().map(|(size, _)| size).collect(),
            Err(_) => Vec::new(),
        }
    }

    /// Forget the heads of `sizes`, now committed.
    pub(super) fn recorded(&self, sizes: &[u64]) {
        let mut map = self.lock();
        for size in sizes {
            map.remove(size);
        }
    }

    /// Record what is pending in a transaction of its own (best effort: a
    /// lost head's answers are rebuilt against the latest head).
    pub(super) fn flush(&self, live: &Live) {
        let pending = self.pending();
        if !pending.is_empty()
            && let Ok(receiver) = live.get()
            && mailbox::put_heads(receiver.store(), &refs(&pending)).is_ok()
        {
            let sizes: Vec<u64> = pending.into_iter().map(|(size, _)| size).collect();
            self.recorded(&sizes);
        }
    }
}

/// The unrecorded heads at one moment ([`Unrecorded::snapshot`]).
pub(super) struct PendingHeads(BTreeMap<u64, SignedTreeHead>);

impl PendingHeads {
    /// The first head covering `arrival` (size > `arrival`).
    pub(super) fn covering(&self, arrival: u64) -> Option<&SignedTreeHead> {
        self.0
            .range(arrival.saturating_add(1)..)
            .next()
            .map(|(_, h)| h)
    }
}

fn refs(heads: &[(u64, Vec<u8>)]) -> Vec<(u64, &[u8])> {
    heads
        .iter()
        .map(|(size, h)| (*size, h.as_slice()))
        .collect()
}
