//! The `replay` table (PROFILE.md P10): claiming a `(signer key, nonce)`
//! pair, durably, and purging pairs past their retention.

use redb::{ReadableDatabase, ReadableTable, ReadableTableMetadata};

use super::{REPLAY, Store, StoreError};

/// What [`Store::claim`] found (P10).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Claim {
    /// The pair was not cached (or its entry had expired): it is now, durably.
    Fresh,
    /// The pair is cached and still retained: `replayed_nonce`.
    Replayed,
}

impl Claim {
    /// P10's one rule for a cached pair: kept until `retain_until`
    /// (`None`: not cached), it is still held at `now` while
    /// `retain_until ≥ now` (a claim of it is [`Claim::Replayed`]); past
    /// that its entry protects nothing and may be claimed afresh. Every
    /// [`LiveState`](crate::LiveState) decides by it (the redb store here,
    /// the conduit fleet's database snapshot).
    #[must_use]
    pub fn held(retain_until: Option<u64>, now: u64) -> bool {
        retain_until.is_some_and(|until| until >= now)
    }
}

impl Store {
    /// Claim `(signer, nonce)` at time `now` (P10).
    ///
    /// In one write transaction: if the pair is cached with a retain-until
    /// ≥ `now` it is [`Claim::Replayed`] and nothing changes; otherwise
    /// (absent, or an entry past its retention, which may be reused) the pair
    /// is stored with `retain_until` and the transaction committed durably
    /// before [`Claim::Fresh`] is returned. An error means the claim may or
    /// may not have been stored: treat the envelope as not accepted.
    pub fn claim(
        &self,
        signer: &[u8; 32],
        nonce: &[u8; 16],
        retain_until: u64,
        now: u64,
    ) -> Result<Claim, StoreError> {
        const OP: &str = "claim";
        let err = |e: redb::Error| StoreError::storage(&self.path, OP, e);
        let txn = self.begin_write(OP)?;
        if claim_in(&txn, signer, nonce, retain_until, now).map_err(err)? == Claim::Replayed {
            // Dropping the transaction aborts it: nothing was written.
            return Ok(Claim::Replayed);
        }
        txn.commit().map_err(|e| err(e.into()))?;
        Ok(Claim::Fresh)
    }

    /// Whether `(signer, nonce)` is cached and retained at `now`, without
    /// claiming it (a read transaction).
    pub fn contains(
        &self,
        signer: &[u8; 32],
        nonce: &[u8; 16],
        now: u64,
    ) -> Result<bool, StoreError> {
        const OP: &str = "lookup";
        let err = |e: redb::Error| StoreError::storage(&self.path, OP, e);
        let txn = self.db.begin_read().map_err(|e| err(e.into()))?;
        let table = txn.open_table(REPLAY).map_err(|e| err(e.into()))?;
        retained(&table, signer, nonce, now).map_err(err)
    }

    /// Remove every entry whose retain-until is before `now`; returns how
    /// many were removed. Such entries no longer protect anything: an
    /// envelope carrying one of their pairs is `expired` or `stale` (P10).
    pub fn purge(&self, now: u64) -> Result<u64, StoreError> {
        const OP: &str = "purge";
        let err = |e: redb::Error| StoreError::storage(&self.path, OP, e);
        let txn = self.begin_write(OP)?;
        let mut removed = 0u64;
        {
            let mut table = txn.open_table(REPLAY).map_err(|e| err(e.into()))?;
            table
                .retain(|_, until| {
                    let keep = until >= now;
                    if !keep {
                        removed += 1;
                    }
                    keep
                })
                .map_err(|e| err(e.into()))?;
        }
        txn.commit().map_err(|e| err(e.into()))?;
        Ok(removed)
    }

    /// Number of cached pairs, retained or not yet purged.
    pub fn len(&self) -> Result<u64, StoreError> {
        const OP: &str = "len";
        let err = |e: redb::Error| StoreError::storage(&self.path, OP, e);
        let txn = self.db.begin_read().map_err(|e| err(e.into()))?;
        let table = txn.open_table(REPLAY).map_err(|e| err(e.into()))?;
        table.len().map_err(|e| err(e.into()))
    }

    /// Whether no pair is cached.
    pub fn is_empty(&self) -> Result<bool, StoreError> {
        self.len().map(|n| n == 0)
    }
}

/// [`Store::claim`] inside the caller's write transaction `txn`: on
/// [`Claim::Fresh`] the pair is written (not yet committed); on
/// [`Claim::Replayed`] nothing is.
pub(crate) fn claim_in(
    txn: &redb::WriteTransaction,
    signer: &[u8; 32],
    nonce: &[u8; 16],
    retain_until: u64,
    now: u64,
) -> Result<Claim, redb::Error> {
    let mut table = txn.open_table(REPLAY)?;
    if retained(&table, signer, nonce, now)? {
        return Ok(Claim::Replayed);
    }
    table.insert(&replay_key(signer, nonce), retain_until)?;
    Ok(Claim::Fresh)
}

/// Whether `(signer, nonce)` is in `table` with a retain-until ≥ `now`.
pub(crate) fn retained(
    table: &impl ReadableTable<&'static [u8; 48], u64>,
    signer: &[u8; 32],
    nonce: &[u8; 16],
    now: u64,
) -> Result<bool, redb::Error> {
    let cached = table.get(&replay_key(signer, nonce))?.map(|v| v.value());
    Ok(Claim::held(cached, now))
}

/// [`Store::contains`] inside the caller's write transaction.
pub(crate) fn contains_in(
    txn: &redb::WriteTransaction,
    signer: &[u8; 32],
    nonce: &[u8; 16],
    now: u64,
) -> Result<bool, redb::Error> {
    retained(&txn.open_table(REPLAY)?, signer, nonce, now)
}

/// `signer ‖ nonce`, the `replay` table key.
fn replay_key(signer: &[u8; 32], nonce: &[u8; 16]) -> [u8; 48] {
    let mut key = [0u8; 48];
    key[..32].copy_from_slice(signer);
    key[32..].copy_from_slice(nonce);
    key
}
