//! The persistent replay cache (PROFILE.md P10, spec §3.7) and identity
//! lifecycle state (P8) of live reception.
//!
//! P10: "The cache is persistent and survives a crash without losing entries
//! it acknowledged." A [`Store`] is one [redb] database file. Its tables:
//!
//! | table | key | value |
//! |---|---|---|
//! | `replay` | signer public key (32 bytes) ‖ nonce (16 bytes) | retain-until, Unix seconds (`u64`) |
//! | `lifecycle` | identity: the 10-byte key-hash prefix all its sigil forms share | the identity's witnessed P8 state, one P1 (CBOR) map |
//! | `molts` | molt envelope id (32 bytes) | the molting identity (10 bytes) |
//!
//! The `lifecycle` record (written by [`crate::witness`], see
//! docs/lifecycle.md "Live mode") is the map
//! `{v: 1, birth?: {key: bstr 32, molt_policy?: bstr, duress_witness?:
//! bstr, lineage: [bstr 10]}, keys: [[bstr 32, uint]], molts: [{id, from, new_key: bstr 32, ts,
//! not_before, flags: uint, leaf: bstr}], deprecated?: uint, disputed:
//! bool, duress: [uint]}`: the birth key and the birth's `molt_policy` and
//! `duress_witness` attestation values (their P1 bytes) and the identities
//! its lineage names, the greatest `ts`
//! accepted per key of the identity (P8 rule 2's `t_last`), every molt
//! witnessed (its outgoing key `from`, the verdict of rules 2, 4 and 5 and
//! whether an inclusion proof was accepted, as `flags`, and its P9 leaf),
//! the deprecation time, whether the identity is disputed (rule 5), and the
//! times of its valid duress envelopes. `molts` indexes molts by id, to
//! find the molt an inclusion proof is about.
//!
//! A received envelope's lifecycle writes and its replay claim are one
//! write transaction, committed before the receive returns: the state and
//! the cache never disagree after a crash.
//!
//! Durability: every [`Store::claim`] that answers [`Claim::Fresh`] has
//! committed its write transaction with [`redb::Durability::Immediate`]
//! first ("guaranteed to be persistent as soon as `WriteTransaction::commit`
//! returns", redb 4 docs), so an acknowledged claim survives the process
//! being killed. Concurrency: redb runs one write transaction at a time, and
//! a claim reads and writes in one, so two callers (threads of one process,
//! sharing one `Store`) never both get `Fresh` for the same pair. A second
//! process cannot open the file while one has it open
//! ([`StoreError::Locked`]).

use alloc::{boxed::Box, string::String};
use core::fmt;
use std::path::{Path, PathBuf};

use redb::{
    Database, Durability, ReadableDatabase, ReadableTable, ReadableTableMetadata, TableDefinition,
};

/// The `replay` table: `signer key ‖ nonce` → retain-until (P10).
const REPLAY: TableDefinition<'static, &'static [u8; 48], u64> = TableDefinition::new("replay");

/// The `lifecycle` table: identity (key-hash prefix) → its P8 record.
pub(crate) const LIFECYCLE: TableDefinition<'static, &'static [u8; 10], &'static [u8]> =
    TableDefinition::new("lifecycle");

/// The `molts` table: molt envelope id → the molting identity.
pub(crate) const MOLTS: TableDefinition<'static, &'static [u8; 32], &'static [u8; 10]> =
    TableDefinition::new("molts");

/// What [`Store::claim`] found (P10).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Claim {
    /// The pair was not cached (or its entry had expired): it is now, durably.
    Fresh,
    /// The pair is cached and still retained: `replayed_nonce`.
    Replayed,
}

/// The replay store could not be used. Every variant names the file.
#[derive(Debug)]
#[non_exhaustive]
pub enum StoreError {
    /// The file could not be opened or created (permissions, a directory, …).
    Open {
        /// The database file.
        path: PathBuf,
        /// What redb reported.
        error: Box<redb::Error>,
    },
    /// The file is open elsewhere (another process, or another [`Store`] of
    /// this one): redb lets one handle write at a time.
    Locked {
        /// The database file.
        path: PathBuf,
    },
    /// The file is not a redb database, is damaged, or holds tables of
    /// other types than a replay store's.
    Corrupted {
        /// The database file.
        path: PathBuf,
        /// What is wrong, as redb reported it.
        detail: String,
    },
    /// A read, write or commit failed after the file was opened.
    Storage {
        /// The database file.
        path: PathBuf,
        /// The operation that failed (`claim`, `purge`, …).
        operation: &'static str,
        /// What redb reported.
        error: Box<redb::Error>,
    },
}

impl StoreError {
    pub(crate) fn storage(
        path: &Path,
        operation: &'static str,
        error: impl Into<redb::Error>,
    ) -> Self {
        match error.into() {
            redb::Error::Corrupted(detail) => Self::Corrupted {
                path: path.to_path_buf(),
                detail,
            },
            error @ (redb::Error::TableTypeMismatch { .. }
            | redb::Error::TableIsMultimap(_)
            | redb::Error::TypeDefinitionChanged { .. }) => Self::Corrupted {
                path: path.to_path_buf(),
                detail: std::format!("not a replay store: {error}"),
            },
            error => Self::Storage {
                path: path.to_path_buf(),
                operation,
                error: Box::new(error),
            },
        }
    }

    fn open(path: &Path, error: redb::DatabaseError) -> Self {
        match error {
            redb::DatabaseError::DatabaseAlreadyOpen
            | redb::DatabaseError::LockProtocolMismatch => Self::Locked {
                path: path.to_path_buf(),
            },
            redb::DatabaseError::Storage(redb::StorageError::Corrupted(detail)) => {
                Self::Corrupted {
                    path: path.to_path_buf(),
                    detail,
                }
            }
            // redb's "not a redb database: magic number mismatch".
            redb::DatabaseError::Storage(redb::StorageError::Io(e))
                if e.kind() == std::io::ErrorKind::InvalidData =>
            {
                Self::Corrupted {
                    path: path.to_path_buf(),
                    detail: std::format!("{e}"),
                }
            }
            redb::DatabaseError::UpgradeRequired(version) => Self::Corrupted {
                path: path.to_path_buf(),
                detail: std::format!("redb file format {version}, not this redb's"),
            },
            error => Self::Open {
                path: path.to_path_buf(),
                error: Box::new(error.into()),
            },
        }
    }

    /// The database file concerned.
    pub fn path(&self) -> &Path {
        match self {
            Self::Open { path, .. }
            | Self::Locked { path }
            | Self::Corrupted { path, .. }
            | Self::Storage { path, .. } => path,
        }
    }
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Open { path, error } => {
                write!(
                    f,
                    "{}: cannot open the replay store: {error}",
                    path.display()
                )
            }
            Self::Locked { path } => write!(
                f,
                "{}: the replay store is already open (another process or handle)",
                path.display()
            ),
            Self::Corrupted { path, detail } => write!(
                f,
                "{}: not a usable replay store (damaged or not one): {detail}",
                path.display()
            ),
            Self::Storage {
                path,
                operation,
                error,
            } => write!(
                f,
                "{}: replay store {operation} failed: {error}",
                path.display()
            ),
        }
    }
}

impl std::error::Error for StoreError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Open { error, .. } | Self::Storage { error, .. } => Some(&**error),
            Self::Locked { .. } | Self::Corrupted { .. } => None,
        }
    }
}

/// The persistent replay cache (P10): `(from key, nonce)` pairs and how long
/// each is kept. `Send + Sync`; share it between threads behind an `Arc`.
#[derive(Debug)]
pub struct Store {
    db: Database,
    path: PathBuf,
}

impl Store {
    /// Open the store at `path`, creating the file on first use.
    ///
    /// Every open verifies the checksum of every page of the file (redb's
    /// integrity check, which reads the whole file), so a damaged file or
    /// one that is not a redb database is [`StoreError::Corrupted`] rather
    /// than trusted. After a crash redb repairs the file from its last
    /// durable commit, which holds every claim acknowledged (P10).
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let path = path.as_ref();
        let db = Database::builder()
            .set_check_integrity_on_open(true)
            .create(path)
            .map_err(|e| StoreError::open(path, e))?;
        let store = Self {
            db,
            path: path.to_path_buf(),
        };
        // Create the tables, so that reads never meet a missing one, and
        // check that existing ones have this store's types.
        let txn = store.begin_write("open")?;
        txn.open_table(REPLAY)
            .map_err(|e| StoreError::storage(path, "open", e))?;
        txn.open_table(LIFECYCLE)
            .map_err(|e| StoreError::storage(path, "open", e))?;
        txn.open_table(MOLTS)
            .map_err(|e| StoreError::storage(path, "open", e))?;
        txn.commit()
            .map_err(|e| StoreError::storage(path, "open", e))?;
        Ok(store)
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The underlying database, for the other tables of this crate (the P8
    /// `lifecycle` and `molts` tables beside `replay`).
    pub(crate) fn database(&self) -> &Database {
        &self.db
    }

    /// A write transaction committed with [`Durability::Immediate`].
    pub(crate) fn begin_write(
        &self,
        operation: &'static str,
    ) -> Result<redb::WriteTransaction, StoreError> {
        let mut txn = self
            .db
            .begin_write()
            .map_err(|e| StoreError::storage(&self.path, operation, e))?;
        // redb's default, stated so that no change of default weakens P10.
        txn.set_durability(Durability::Immediate)
            .map_err(|e| StoreError::storage(&self.path, operation, e))?;
        Ok(txn)
    }

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
    Ok(cached.is_some_and(|until| until >= now))
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

// A `Store` is shared between receiver threads (P10 live reception).
const _: fn() = || {
    fn shared<T: Send + Sync>() {}
    shared::<Store>();
};
