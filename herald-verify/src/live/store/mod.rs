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
//! | `meta` | `format`, `owner` | [`STORE_FORMAT`] (8 bytes, big-endian); the owner's name (UTF-8) |
//!
//! State is refused, never reset (docs/performance.md *Memory under hostile
//! input*, B4): [`Store::open`] opens only a store that exists, is not empty,
//! passes redb's integrity check and carries this format and the expected owner
//! (the name its creator gave, e.g. the conduit key's sigil), so a truncated
//! store, or one copied from another service, is an error naming the file, not
//! a fresh empty cache that would let every acknowledged nonce be replayed.
//! [`Store::create`] makes a new one only where nothing exists: it builds the
//! whole store (tables and `meta`) in a temporary file of the same directory
//! and links it into place, so a crash leaves either no store or a complete
//! one. The file is mode 0600 whatever the umask, and a store that group or
//! others may write is refused.
//!
//! The `lifecycle` record (written by [`crate::lifecycle`], see
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

mod error;
mod replay;

pub use error::StoreError;
pub use replay::Claim;
pub(crate) use replay::{claim_in, contains_in};

use alloc::string::{String, ToString};
use std::path::{Path, PathBuf};

use herald_fs::{self as files, FileError};

use redb::{Database, Durability, ReadableDatabase, TableDefinition};

/// The `replay` table: `signer key ‖ nonce` → retain-until (P10).
pub(super) const REPLAY: TableDefinition<'static, &'static [u8; 48], u64> =
    TableDefinition::new("replay");

/// The `lifecycle` table: identity (key-hash prefix) → its P8 record.
pub(crate) const LIFECYCLE: TableDefinition<'static, &'static [u8; 10], &'static [u8]> =
    TableDefinition::new("lifecycle");

/// The `molts` table: molt envelope id → the molting identity.
pub(crate) const MOLTS: TableDefinition<'static, &'static [u8; 32], &'static [u8; 10]> =
    TableDefinition::new("molts");

/// The `meta` table: `format` → [`STORE_FORMAT`], `owner` → the owner's name.
const META: TableDefinition<'static, &'static str, &'static [u8]> = TableDefinition::new("meta");

/// The store format this code writes and reads (the `meta` table's
/// `format`, big-endian). A store of another format is refused.
pub const STORE_FORMAT: u64 = 1;

/// Longest owner name, bytes.
pub const MAX_OWNER: usize = 256;

/// The persistent replay cache (P10): `(from key, nonce)` pairs and how long
/// each is kept. `Send + Sync`; share it between threads behind an `Arc`.
#[derive(Debug)]
pub struct Store {
    db: Database,
    path: PathBuf,
}

impl Store {
    /// Open the existing store at `path`, which must name `owner`.
    ///
    /// Refused, naming the file, when: nothing is there
    /// ([`StoreError::Missing`]); it is not a regular file, or group or
    /// others may write it ([`StoreError::File`]); it is empty
    /// ([`StoreError::Empty`]); redb's integrity check fails, which reads
    /// every page ([`StoreError::Corrupted`]); its header is missing or of
    /// another format ([`StoreError::Format`]); or it names another owner
    /// ([`StoreError::Foreign`]). After a crash redb repairs the file from
    /// its last durable commit, which holds every claim acknowledged (P10).
    pub fn open(path: impl AsRef<Path>, owner: &str) -> Result<Self, StoreError> {
        let path = path.as_ref();
        check_owner(path, owner)?;
        let meta = match std::fs::metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(StoreError::Missing {
                    path: path.to_path_buf(),
                });
            }
            Err(e) => return Err(StoreError::File(FileError::io(path, "open", e))),
            Ok(meta) => meta,
        };
        if !meta.is_file() {
            return Err(StoreError::File(FileError::NotRegular {
                path: path.to_path_buf(),
                kind: files::kind(&meta.file_type()),
            }));
        }
        files::check_private(path, &meta).map_err(StoreError::File)?;
        if meta.len() == 0 {
            return Err(StoreError::Empty {
                path: path.to_path_buf(),
            });
        }
        let db = Database::builder()
            .set_check_integrity_on_open(true)
            .open(path)
            .map_err(|e| StoreError::open(path, e))?;
        let store = Self {
            db,
            path: path.to_path_buf(),
        };
        store.check_header(owner)?;
        Ok(store)
    }

    /// Create a new store at `path`, owned by `owner` (a name for the
    /// service it protects, e.g. its key's sigil; 1 to [`MAX_OWNER`]
    /// bytes). Refused when anything exists at `path`
    /// ([`StoreError::Exists`]).
    ///
    /// The store is built whole (tables and header, committed durably) in a
    /// temporary file, mode 0600, in the same directory, then hard-linked to
    /// `path`, which fails rather than replace a file that appeared
    /// meanwhile. A crash leaves no store or a complete one, never an empty
    /// file that [`Store::open`] would refuse.
    pub fn create(path: impl AsRef<Path>, owner: &str) -> Result<Self, StoreError> {
        let path = path.as_ref();
        check_owner(path, owner)?;
        if path.symlink_metadata().is_ok() {
            return Err(StoreError::Exists {
                path: path.to_path_buf(),
            });
        }
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        let temp = dir.join(std::format!(
            ".{name}.new-{}",
            std::process::id()
                ^ (std::time::UNIX_EPOCH
                    .elapsed()
                    .unwrap_or_default()
                    .subsec_nanos())
        ));
        let built = build(&temp, owner);
        let linked = built.and_then(|()| match std::fs::hard_link(&temp, path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(StoreError::Exists {
                path: path.to_path_buf(),
            }),
            Err(e) => Err(StoreError::File(FileError::io(path, "create", e))),
        });
        // The temporary name goes whatever happened (`path` keeps the file).
        let _ = std::fs::remove_file(&temp);
        linked?;
        sync_dir(dir);
        Self::open(path, owner)
    }

    /// [`Store::open`] the store at `path`, or [`Store::create`] it when
    /// nothing exists there. A store that exists but cannot be opened is
    /// an error, never replaced.
    pub fn open_or_create(path: impl AsRef<Path>, owner: &str) -> Result<Self, StoreError> {
        let path = path.as_ref();
        match Self::open(path, owner) {
            Err(StoreError::Missing { .. }) => match Self::create(path, owner) {
                // Created by someone else meanwhile: open theirs.
                Err(StoreError::Exists { .. }) => Self::open(path, owner),
                other => other,
            },
            other => other,
        }
    }

    /// The owner this store was created for.
    pub fn owner(&self) -> Result<String, StoreError> {
        let err = |e: redb::Error| StoreError::storage(&self.path, "open", e);
        let txn = self.db.begin_read().map_err(|e| err(e.into()))?;
        let meta = txn.open_table(META).map_err(|e| err(e.into()))?;
        let owner = meta.get("owner").map_err(|e| err(e.into()))?;
        Ok(owner
            .map(|v| String::from_utf8_lossy(v.value()).into_owned())
            .unwrap_or_default())
    }

    /// Check the `meta` header: this format, this owner, and every table.
    fn check_header(&self, owner: &str) -> Result<(), StoreError> {
        let path = &self.path;
        let err = |e: redb::Error| StoreError::storage(path, "open", e);
        let txn = self.db.begin_read().map_err(|e| err(e.into()))?;
        let meta = match txn.open_table(META) {
            Ok(t) => t,
            Err(redb::TableError::TableDoesNotExist(_)) => {
                return Err(StoreError::Format {
                    path: path.clone(),
                    found: None,
                });
            }
            Err(e) => return Err(err(e.into())),
        };
        let format = meta.get("format").map_err(|e| err(e.into()))?;
        let format = format.and_then(|v| <[u8; 8]>::try_from(v.value()).ok());
        let format = format.map(u64::from_be_bytes);
        if format != Some(STORE_FORMAT) {
            return Err(StoreError::Format {
                path: path.clone(),
                found: format,
            });
        }
        let found = meta.get("owner").map_err(|e| err(e.into()))?;
        let found = found.map(|v| v.value().to_vec()).unwrap_or_default();
        if found != owner.as_bytes() {
            return Err(StoreError::Foreign {
                path: path.clone(),
                expected: owner.to_string(),
                found: String::from_utf8_lossy(&found).into_owned(),
            });
        }
        // Every table is there with this store's types.
        let missing = |e: redb::TableError| StoreError::Corrupted {
            path: path.clone(),
            detail: std::format!("{e}"),
        };
        txn.open_table(REPLAY).map_err(missing)?;
        txn.open_table(LIFECYCLE).map_err(missing)?;
        txn.open_table(MOLTS).map_err(missing)?;
        Ok(())
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The underlying database: the P8 `lifecycle` and `molts` tables of
    /// this crate beside `replay`, and tables of the caller's that must be
    /// committed in the same transaction as a claim (a conduit's stored
    /// envelopes and inboxes, see [`crate::Receiver::finish`]). Names of
    /// tables this crate uses: `meta`, `replay`, `lifecycle`, `molts`.
    pub fn database(&self) -> &Database {
        &self.db
    }

    /// A write transaction committed with [`Durability::Immediate`], for
    /// [`crate::Receiver::finish`] (through [`StoreTxn::new`](crate::StoreTxn::new)):
    /// many receives, one durable commit.
    /// `operation` names what it is for in a storage error.
    pub fn begin_write(
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
}

/// Refuse an owner name that is empty or longer than [`MAX_OWNER`].
fn check_owner(path: &Path, owner: &str) -> Result<(), StoreError> {
    if owner.is_empty() || owner.len() > MAX_OWNER {
        return Err(StoreError::BadOwner {
            path: path.to_path_buf(),
        });
    }
    Ok(())
}

/// Write a complete new store (every table, the header) to the new file
/// `temp`, mode 0600, committed durably.
fn build(temp: &Path, owner: &str) -> Result<(), StoreError> {
    drop(files::create_private_file(temp).map_err(StoreError::File)?);
    let db = Database::builder()
        .create(temp)
        .map_err(|e| StoreError::open(temp, e))?;
    let err = |e: redb::Error| StoreError::storage(temp, "create", e);
    let mut txn = db.begin_write().map_err(|e| err(e.into()))?;
    txn.set_durability(Durability::Immediate)
        .map_err(|e| err(e.into()))?;
    {
        let mut meta = txn.open_table(META).map_err(|e| err(e.into()))?;
        meta.insert("format", STORE_FORMAT.to_be_bytes().as_slice())
            .map_err(|e| err(e.into()))?;
        meta.insert("owner", owner.as_bytes())
            .map_err(|e| err(e.into()))?;
    }
    txn.open_table(REPLAY).map_err(|e| err(e.into()))?;
    txn.open_table(LIFECYCLE).map_err(|e| err(e.into()))?;
    txn.open_table(MOLTS).map_err(|e| err(e.into()))?;
    txn.commit().map_err(|e| err(e.into()))?;
    Ok(())
}

/// Make a new directory entry durable (best effort: not every platform
/// can open a directory).
fn sync_dir(dir: &Path) {
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
}

// A `Store` is shared between receiver threads (P10 live reception).
const _: fn() = || {
    fn shared<T: Send + Sync>() {}
    shared::<Store>();
};
