//! The identity records in a live receiver's [`Store`] (PROFILE.md P8):
//! the `lifecycle` table (identity → [`IdentityRecord`] bytes) and the
//! `molts` index (molt id → identity), layout in [`crate::live::store`].

use alloc::vec::Vec;

use redb::{ReadableDatabase, ReadableTable};

use super::state::{LiveState, StoreTxn};
use super::store::{LIFECYCLE, MOLTS, Store, StoreError};
use crate::lifecycle::rules::Lineages;
use crate::lifecycle::{Identity, IdentityRecord};
use crate::report::hex;

pub(crate) fn corrupted(store: &Store, who: &Identity, problem: &str) -> StoreError {
    StoreError::Corrupted {
        path: store.path().to_path_buf(),
        detail: std::format!("lifecycle record of identity {}: {problem}", hex(who)),
    }
}

/// The record of `who` in `table`.
fn load_from(
    store: &Store,
    table: &impl ReadableTable<&'static [u8; 10], &'static [u8]>,
    who: &Identity,
    op: &'static str,
) -> Result<Option<IdentityRecord>, StoreError> {
    let Some(bytes) = table
        .get(who)
        .map_err(|e| StoreError::storage(store.path(), op, e))?
    else {
        return Ok(None);
    };
    IdentityRecord::decode(bytes.value())
        .map(Some)
        .map_err(|p| corrupted(store, who, p))
}

/// The record of `who`, read without taking the write lock.
pub(crate) fn load(store: &Store, who: &Identity) -> Result<Option<IdentityRecord>, StoreError> {
    const OP: &str = "lifecycle read";
    let err = |e: redb::Error| StoreError::storage(store.path(), OP, e);
    let txn = store.database().begin_read().map_err(|e| err(e.into()))?;
    let table = txn.open_table(LIFECYCLE).map_err(|e| err(e.into()))?;
    load_from(store, &table, who, OP)
}

/// The stored bytes of the record of `who`, read without taking the
/// write lock.
pub(crate) fn raw(store: &Store, who: &Identity) -> Result<Option<Vec<u8>>, StoreError> {
    const OP: &str = "lifecycle read";
    let err = |e: redb::Error| StoreError::storage(store.path(), OP, e);
    let txn = store.database().begin_read().map_err(|e| err(e.into()))?;
    let table = txn.open_table(LIFECYCLE).map_err(|e| err(e.into()))?;
    Ok(table
        .get(who)
        .map_err(|e| err(e.into()))?
        .map(|v| v.value().to_vec()))
}

/// The record of `who` inside the write transaction `txn`.
pub(crate) fn load_in(
    store: &Store,
    txn: &redb::WriteTransaction,
    who: &Identity,
) -> Result<Option<IdentityRecord>, StoreError> {
    const OP: &str = "lifecycle read";
    let table = txn
        .open_table(LIFECYCLE)
        .map_err(|e| StoreError::storage(store.path(), OP, e))?;
    load_from(store, &table, who, OP)
}

/// The stored bytes of the record of `who` inside `txn`.
pub(crate) fn raw_in(
    store: &Store,
    txn: &redb::WriteTransaction,
    who: &Identity,
) -> Result<Option<Vec<u8>>, StoreError> {
    const OP: &str = "lifecycle read";
    let err = |e: redb::Error| StoreError::storage(store.path(), OP, e);
    let table = txn.open_table(LIFECYCLE).map_err(|e| err(e.into()))?;
    Ok(table
        .get(who)
        .map_err(|e| err(e.into()))?
        .map(|v| v.value().to_vec()))
}

/// Write the record bytes of `who`, and index its molts by id, in `txn`.
pub(crate) fn save_raw_in(
    store: &Store,
    txn: &redb::WriteTransaction,
    who: &Identity,
    record: &[u8],
    molts: &[[u8; 32]],
) -> Result<(), StoreError> {
    const OP: &str = "lifecycle write";
    let err = |e: redb::Error| StoreError::storage(store.path(), OP, e);
    txn.open_table(LIFECYCLE)
        .map_err(|e| err(e.into()))?
        .insert(who, record)
        .map_err(|e| err(e.into()))?;
    let mut index = txn.open_table(MOLTS).map_err(|e| err(e.into()))?;
    for id in molts {
        index.insert(id, who).map_err(|e| err(e.into()))?;
    }
    Ok(())
}

/// Write the record of `who`, and index its molts by id, in `txn`.
pub(crate) fn save_in(
    store: &Store,
    txn: &redb::WriteTransaction,
    who: &Identity,
    state: &IdentityRecord,
) -> Result<(), StoreError> {
    save_via(&mut StoreTxn::new(store, txn), who, state)
}

/// The record of `who` in a [`LiveState`].
pub(crate) fn load_via(
    state: &mut dyn LiveState,
    who: &Identity,
) -> Result<Option<IdentityRecord>, StoreError> {
    let Some(bytes) = state.record(who)? else {
        return Ok(None);
    };
    IdentityRecord::decode(&bytes).map(Some).map_err(|p| {
        state.corrupted(std::format!(
            "lifecycle record of identity {}: {p}",
            hex(who)
        ))
    })
}

/// Write the record of `who` (and index its molts) in a [`LiveState`].
pub(crate) fn save_via(
    state: &mut dyn LiveState,
    who: &Identity,
    record: &IdentityRecord,
) -> Result<(), StoreError> {
    let molts: Vec<[u8; 32]> = record.molts.iter().map(|m| m.id).collect();
    state.save_record(who, &record.encode(), &molts)
}

/// The records of a [`LiveState`], as the lineage rules read them (live
/// mode: only what was witnessed).
pub(crate) struct Stored<'s> {
    pub(crate) state: &'s mut dyn LiveState,
}

impl Lineages for Stored<'_> {
    type Error = StoreError;

    fn deprecated(&mut self, who: &Identity) -> Result<Option<u64>, StoreError> {
        Ok(load_via(self.state, who)?.and_then(|r| r.deprecated))
    }

    fn parents(&mut self, who: &Identity) -> Result<Vec<Identity>, StoreError> {
        Ok(load_via(self.state, who)?
            .and_then(|r| r.birth)
            .map(|b| b.lineage)
            .unwrap_or_default())
    }
}
