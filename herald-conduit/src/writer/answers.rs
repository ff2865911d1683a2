//! The 201 bodies sent but not yet recorded in the store (spec §11.3: a
//! repeat of an acknowledged envelope gets its first answer).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::Conduit;
use crate::mailbox;

/// A 201 body and the id it answers.
pub(super) type Answer = ([u8; 32], Arc<Vec<u8>>);

/// The 201 bodies sent but not yet recorded: the next batch's transaction
/// records them (or, when the conduit is idle or closing, one of their
/// own, [`mailbox::put_answers`]), so the log stage that sends them never
/// waits for the store's write lock. A body stays here until its record is
/// committed, so a repeat always finds its first answer.
#[derive(Default)]
pub(super) struct Unrecorded(Mutex<HashMap<[u8; 32], Arc<Vec<u8>>>>);

impl Unrecorded {
    fn lock(&self) -> MutexGuard<'_, HashMap<[u8; 32], Arc<Vec<u8>>>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Bodies just sent.
    pub(super) fn add(&self, answers: Vec<Answer>) {
        self.lock().extend(answers);
    }

    /// The body sent for `id`, if not recorded yet.
    pub(super) fn get(&self, id: &[u8; 32]) -> Option<Arc<Vec<u8>>> {
        self.lock().get(id).cloned()
    }

    fn pending(&self) -> Vec<Answer> {
        self.lock()
            .iter()
            .map(|(id, b)| (*id, Arc::clone(b)))
            .collect()
    }

    /// Record the pending bodies in `txn`; what to pass to
    /// [`Unrecorded::recorded`] once it commits. Best effort, as the
    /// answers are: a failure leaves them for the next transaction.
    pub(super) fn record_in(&self, txn: &redb::WriteTransaction) -> Vec<Answer> {
        let pending = self.pending();
        match mailbox::put_answers_in(txn, &refs(&pending)) {
            Ok(()) => pending,
            Err(_) => Vec::new(),
        }
    }

    /// Forget `recorded`, now committed.
    pub(super) fn recorded(&self, recorded: &[Answer]) {
        let mut map = self.lock();
        for (id, _) in recorded {
            map.remove(id);
        }
    }

    /// Record what is pending in a transaction of its own (best effort: a
    /// lost answer is rebuilt from the store and the log).
    pub(super) fn flush(&self, conduit: &Conduit) {
        let pending = self.pending();
        if !pending.is_empty() && mailbox::put_answers(conduit.store(), &refs(&pending)).is_ok() {
            self.recorded(&pending);
        }
    }
}

fn refs(answers: &[Answer]) -> Vec<([u8; 32], &[u8])> {
    answers.iter().map(|(id, b)| (*id, b.as_slice())).collect()
}
