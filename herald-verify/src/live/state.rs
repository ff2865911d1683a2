//! [`LiveState`]: what the P10 and P8 rules of live reception read and
//! write, inside one transaction of whatever holds the state. The rules
//! themselves stay in [`crate::live`] and [`crate::lifecycle`]; a backend
//! only answers these four questions. Two implement it: the redb
//! [`Store`] (inside a write transaction, [`StoreTxn`]) and the conduit
//! fleet's PostgreSQL database (herald-conduit, docs/conduit.md *Fleet*),
//! so the rules are never written twice.
//!
//! An implementation must make [`LiveState::claim`] exact (two
//! transactions never both get [`Claim::Fresh`] for one pair) and must
//! serialise the record of an identity between [`LiveState::record`] and
//! the end of the transaction, so that two molts racing through two
//! receivers end `disputed` exactly as through one (P8 rule 5).

use alloc::{
    string::{String, ToString},
    vec::Vec,
};

use super::store::{Claim, Store, StoreError, claim_in, contains_in};

/// The 10-byte identity key of a P8 record: the key-hash prefix all its
/// sigil forms share.
pub type IdentityKey = [u8; 10];

/// The replay cache and lifecycle records of live reception, inside one
/// transaction (module docs).
pub trait LiveState {
    /// The stored P8 record of `who` (its bytes, as [`LiveState::save_record`]
    /// was given them), if any. Inside the transaction, later writers of
    /// `who` wait for this one.
    fn record(&mut self, who: &IdentityKey) -> Result<Option<Vec<u8>>, StoreError>;

    /// Store the P8 record of `who` and index its molts' envelope ids.
    fn save_record(
        &mut self,
        who: &IdentityKey,
        record: &[u8],
        molts: &[[u8; 32]],
    ) -> Result<(), StoreError>;

    /// P10: claim `(signer, nonce)`, kept until `retain_until`; a pair
    /// already held with a retain-until ≥ `now` is [`Claim::Replayed`] and
    /// nothing is written.
    fn claim(
        &mut self,
        signer: &[u8; 32],
        nonce: &[u8; 16],
        retain_until: u64,
        now: u64,
    ) -> Result<Claim, StoreError>;

    /// Whether `(signer, nonce)` is held at `now` (a read that changes
    /// nothing).
    fn contains(
        &mut self,
        signer: &[u8; 32],
        nonce: &[u8; 16],
        now: u64,
    ) -> Result<bool, StoreError>;

    /// The error for a stored record that does not decode.
    fn corrupted(&self, detail: String) -> StoreError;
}

/// A [`Store`] inside one of its write transactions (from
/// [`Store::begin_write`]), for [`Receiver::finish`](crate::Receiver::finish).
pub struct StoreTxn<'a> {
    /// The store (for its path in errors).
    store: &'a Store,
    /// The write transaction.
    txn: &'a redb::WriteTransaction,
}

impl<'a> StoreTxn<'a> {
    /// The live state of `store` inside `txn`, a write transaction of its
    /// database: what a receive writes is in `txn`, committed by the caller
    /// with the caller's own tables (a conduit's stored envelopes).
    pub fn new(store: &'a Store, txn: &'a redb::WriteTransaction) -> Self {
        Self { store, txn }
    }
}

/// A [`Store`] read without a transaction of the caller's, each record in
/// a read transaction of its own: the lock-free state of
/// [`Receiver::precheck_all`](crate::Receiver::precheck_all)
/// ([`Store::reader`]). It only reads: a claim or a record write through
/// it is refused.
pub struct StoreReader<'a> {
    store: &'a Store,
}

impl core::fmt::Debug for StoreReader<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("StoreReader")
            .field("store", self.store)
            .finish()
    }
}

impl Store {
    /// This store as a read-only [`LiveState`], for
    /// [`Receiver::precheck_all`](crate::Receiver::precheck_all).
    pub fn reader(&self) -> StoreReader<'_> {
        StoreReader { store: self }
    }
}

impl StoreReader<'_> {
    fn read_only(&self, operation: &'static str) -> StoreError {
        StoreError::Backend {
            name: self.store.path().display().to_string(),
            operation,
            detail: String::from("a store reader only reads"),
        }
    }
}

impl LiveState for StoreReader<'_> {
    fn record(&mut self, who: &IdentityKey) -> Result<Option<Vec<u8>>, StoreError> {
        super::table::raw(self.store, who)
    }

    fn save_record(&mut self, _: &IdentityKey, _: &[u8], _: &[[u8; 32]]) -> Result<(), StoreError> {
        Err(self.read_only("lifecycle write"))
    }

    fn claim(&mut self, _: &[u8; 32], _: &[u8; 16], _: u64, _: u64) -> Result<Claim, StoreError> {
        Err(self.read_only("claim"))
    }

    fn contains(
        &mut self,
        signer: &[u8; 32],
        nonce: &[u8; 16],
        now: u64,
    ) -> Result<bool, StoreError> {
        self.store.contains(signer, nonce, now)
    }

    fn corrupted(&self, detail: String) -> StoreError {
        StoreError::Corrupted {
            path: self.store.path().to_path_buf(),
            detail,
        }
    }
}

impl core::fmt::Debug for StoreTxn<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("StoreTxn")
            .field("store", self.store)
            .finish_non_exhaustive()
    }
}

impl LiveState for StoreTxn<'_> {
    fn record(&mut self, who: &IdentityKey) -> Result<Option<Vec<u8>>, StoreError> {
        super::table::raw_in(self.store, self.txn, who)
    }

    fn save_record(
        &mut self,
        who: &IdentityKey,
        record: &[u8],
        molts: &[[u8; 32]],
    ) -> Result<(), StoreError> {
        super::table::save_raw_in(self.store, self.txn, who, record, molts)
    }

    fn claim(
        &mut self,
        signer: &[u8; 32],
        nonce: &[u8; 16],
        retain_until: u64,
        now: u64,
    ) -> Result<Claim, StoreError> {
        claim_in(self.txn, signer, nonce, retain_until, now)
            .map_err(|e| StoreError::storage(self.store.path(), "receive", e))
    }

    fn contains(
        &mut self,
        signer: &[u8; 32],
        nonce: &[u8; 16],
        now: u64,
    ) -> Result<bool, StoreError> {
        contains_in(self.txn, signer, nonce, now)
            .map_err(|e| StoreError::storage(self.store.path(), "receive", e))
    }

    fn corrupted(&self, detail: String) -> StoreError {
        StoreError::Corrupted {
            path: self.store.path().to_path_buf(),
            detail,
        }
    }
}
