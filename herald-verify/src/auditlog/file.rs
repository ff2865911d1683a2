//! A file-backed, append-only audit log in a directory (PROFILE.md P9;
//! `herald log init DIR`).
//!
//! | file | contents |
//! |---|---|
//! | `log.pub` | the log's public key, one keyring line (CLI.md): `<sigil> ed25519 <hex>` |
//! | `log.conf` | `herald-log-v1`, then optionally `key <path>`: where the secret key file is (the key itself is never copied here) |
//! | `leaves.dat` | a 4096-byte header block, then one record per leaf |
//! | `checkpoint` | the signed tree head of the largest size the log has signed ([`super::checkpoint`]) |
//!
//! The directory is created 0700 and its files 0600 whatever the umask;
//! [`Log::open`] refuses a directory or file that group or others may write
//! ([`LogError::File`]), and a leaf file whose first `size` leaves no
//! longer hash to the checkpoint's signed root
//! ([`LogError::RootNeverSigned`]).
//!
//! The leaf file's format and reader live in `auditlog/leaves.rs`,
//! `log.pub` and `log.conf` are read in `auditlog/config.rs`, and the
//! errors are in `auditlog/error.rs`.
//!
//! Appending ([`Log::append_leaves`]): the new records are written past the
//! end in one write and `fdatasync`'d; only then are their indices returned
//! (acknowledged); then the header's acknowledged end is rewritten (not
//! synced: the next append's sync makes it durable). So at every instant
//! the durable header's end is at most the end of the durable, intact
//! records, and every acknowledged record is durable.
//!
//! Opening ([`Log::open`]) reads every record once, checks its length,
//! checksum and leaf, and rebuilds the Merkle tree and the id index in
//! memory (O(n) hashing, once). A record before the header's acknowledged
//! end that is damaged, a file shorter than that end, or a duplicate id is
//! [`LogError::Corrupted`] (file and byte offset): acknowledged data is
//! never dropped. Past that end lies only what an append in flight at a
//! crash wrote: complete records are kept (their appender never saw an
//! index; appending them again is idempotent and returns the same one),
//! and from the first incomplete or damaged record on the tail is cut off
//! and reported as a [`Recovery`]. That reading, without the repair, is
//! [`scan_leaf_file`], over any reader (the `log_file` fuzz target feeds it
//! bytes, docs/fuzzing.md).
//!
//! One process at a time: the leaf file is locked exclusively while a
//! [`Log`] is open; a second opener is refused at once
//! ([`LogError::Locked`]), never left waiting.

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{self, BufReader, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use herald_core::{EnvelopeRef, PublicKey, Sigil, SigilForm, SigningKey};

use super::checkpoint::{CHECKPOINT_FILE, Checkpoint};
use super::leaf::MAX_LEAF_LEN;
use super::{ConsistencyProof, InclusionProof, Leaf, SignedTreeHead, TreeHead};
use crate::keyring::key_line;
use herald_fs::{self as files, FileError};
use herald_merkle::{self as merkle, Hash, Tree};

use super::config::CONFIG_MAGIC;
pub use super::config::{CONFIG_FILE, KEY_FILE};
use super::config::{read_config, read_key};
pub use super::error::{LogError, Recovery};
pub use super::leaves::{DATA_FILE, HEADER_LEN, LeafScan, scan_leaf_file};
use super::leaves::{
    MARK_LEN, RECORD_OVERHEAD, RecordError, SCAN_BUFFER, mark, read_record, record_check,
};

/// The index a leaf got from [`Log::append_leaves`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Appended {
    /// The leaf's index.
    pub index: u64,
    /// `false` when the id was logged already (same index back, P9).
    pub new: bool,
}

/// An open audit log: the Merkle tree and id index of every leaf, in
/// memory, over its directory (see the module documentation).
///
/// Proofs and tree heads are computed from the tree built when the log was
/// opened (methods on `&Log`: nothing is rebuilt per proof).
#[derive(Debug)]
pub struct Log {
    dir: PathBuf,
    data_path: PathBuf,
    file: File,
    key: PublicKey,
    key_path: Option<PathBuf>,
    tree: Tree,
    ids: HashMap<[u8; 32], u64>,
    offsets: Vec<u64>,
    end: u64,
    recovery: Option<Recovery>,
    poisoned: bool,
    checkpoint: Checkpoint,
}

impl Log {
    /// Make a new, empty log in `dir` (created if missing) for `key`;
    /// `key_path` (the secret key file, not copied) is recorded in
    /// `log.conf` when given. Refused when any log file exists in `dir`.
    pub fn create(dir: &Path, key: &PublicKey, key_path: Option<&Path>) -> Result<Self, LogError> {
        files::create_private_dir(dir)?;
        for path in [KEY_FILE, CONFIG_FILE, DATA_FILE, CHECKPOINT_FILE].map(|f| dir.join(f)) {
            if path.exists() {
                return Err(LogError::Exists { path });
            }
        }
        let files = [KEY_FILE, CONFIG_FILE, DATA_FILE].map(|f| dir.join(f));
        for path in &files {
            if path.exists() {
                return Err(LogError::Exists { path: path.clone() });
            }
        }
        let [key_file, config_file, data_file] = files;
        let mut config = std::format!("{CONFIG_MAGIC}\n");
        if let Some(p) = key_path {
            let text = p.to_str().filter(|t| !t.contains('\n')).ok_or_else(|| {
                LogError::not_a_log(&config_file, "the key path must be UTF-8 without newlines")
            })?;
            config.push_str(&std::format!("key {text}\n"));
        }
        write_new(&key_file, std::format!("{}\n", key_line(key)).as_bytes())?;
        write_new(&config_file, config.as_bytes())?;
        let mut header = std::vec![0u8; usize::try_from(HEADER_LEN).unwrap_or(4096)];
        if let Some(h) = header.get_mut(..MARK_LEN) {
            h.copy_from_slice(&mark(HEADER_LEN, 0));
        }
        write_new(&data_file, &header)?;
        // Make the new names durable (not every filesystem can).
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
        Self::open(dir)
    }

    /// Open the log in `dir`: read every record, rebuild the tree and the
    /// index, and repair an interrupted append (see [`Log::recovery`]).
    /// Refused with [`LogError::Locked`] while another process (or handle)
    /// has the log open.
    pub fn open(dir: &Path) -> Result<Self, LogError> {
        let dir_meta = std::fs::metadata(dir).map_err(|e| LogError::io(dir, "open", e))?;
        files::check_private(dir, &dir_meta)?;
        let config_path = dir.join(CONFIG_FILE);
        let key_path = read_config(&config_path)?;
        let key = read_key(&dir.join(KEY_FILE))?;
        let data_path = dir.join(DATA_FILE);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&data_path)
            .map_err(|e| match e.kind() {
                io::ErrorKind::NotFound => LogError::not_a_log(&data_path, "missing"),
                _ => LogError::io(&data_path, "open", e),
            })?;
        file.try_lock().map_err(|e| match e {
            std::fs::TryLockError::WouldBlock => LogError::Locked {
                path: data_path.clone(),
            },
            std::fs::TryLockError::Error(e) => LogError::io(&data_path, "lock", e),
        })?;
        let data_meta = file
            .metadata()
            .map_err(|e| LogError::io(&data_path, "stat", e))?;
        if !data_meta.is_file() {
            return Err(LogError::File(FileError::NotRegular {
                path: data_path,
                kind: files::kind(&data_meta.file_type()),
            }));
        }
        files::check_private(&data_path, &data_meta)?;
        let file_len = data_meta.len();
        let scan = scan_leaf_file(
            BufReader::with_capacity(SCAN_BUFFER, &file),
            file_len,
            &data_path,
        )?;
        let repair = scan.needs_repair();
        let checkpoint = Checkpoint::load(dir, &key, &scan.tree)?;
        let mut log = Self {
            dir: dir.to_path_buf(),
            data_path,
            file,
            key,
            key_path,
            tree: scan.tree,
            ids: scan.ids,
            offsets: scan.offsets,
            end: scan.end,
            recovery: None,
            poisoned: false,
            checkpoint,
        };
        if repair {
            log.repair(scan.torn, log.len() - scan.marked_count)?;
        }
        Ok(log)
    }

    /// Cut the torn tail, make the kept records durable, and move the
    /// acknowledged end to them.
    fn repair(&mut self, torn: Option<(u64, String)>, adopted: u64) -> Result<(), LogError> {
        let path = self.data_path.clone();
        let file_len = self
            .file
            .metadata()
            .map_err(|e| LogError::io(&path, "stat", e))?
            .len();
        if torn.is_some() {
            self.file
                .set_len(self.end)
                .map_err(|e| LogError::io(&path, "truncate the torn tail", e))?;
        }
        self.file
            .sync_all()
            .map_err(|e| LogError::io(&path, "sync", e))?;
        self.write_mark()?;
        self.file
            .sync_data()
            .map_err(|e| LogError::io(&path, "sync", e))?;
        let (torn_at, torn_problem) = match torn {
            Some((at, problem)) => (Some(at), Some(problem)),
            None => (None, None),
        };
        self.recovery = Some(Recovery {
            path,
            adopted,
            torn_at,
            torn_bytes: torn_at.map_or(0, |at| file_len.saturating_sub(at)),
            torn_problem,
        });
        Ok(())
    }

    /// The log directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The leaf file.
    pub fn data_path(&self) -> &Path {
        &self.data_path
    }

    /// The log's public key (`log.pub`).
    pub fn public_key(&self) -> &PublicKey {
        &self.key
    }

    /// The log's sigil (default form), the `log` of its tree heads.
    pub fn sigil(&self) -> Sigil {
        self.key.sigil(SigilForm::Default)
    }

    /// The secret key file recorded at creation, if any.
    pub fn key_path(&self) -> Option<&Path> {
        self.key_path.as_deref()
    }

    /// What opening repaired, if anything.
    pub fn recovery(&self) -> Option<&Recovery> {
        self.recovery.as_ref()
    }

    /// Number of leaves.
    pub fn len(&self) -> u64 {
        self.tree.len()
    }

    /// The size of the largest tree head this log has signed, as its
    /// checkpoint records it (0 when it has signed none): the leaves past it
    /// are logged but not yet under any signed head.
    pub fn signed_size(&self) -> u64 {
        self.checkpoint.size()
    }

    /// Whether the log has no leaves.
    pub fn is_empty(&self) -> bool {
        self.tree.is_empty()
    }

    /// The Merkle tree of every leaf (built once, when the log was opened,
    /// and extended by appends).
    pub fn tree(&self) -> &Tree {
        &self.tree
    }

    /// The index of the leaf with this id.
    pub fn index_of(&self, id: &[u8; 32]) -> Option<u64> {
        self.ids.get(id).copied()
    }

    /// The bytes of leaf `index`, read back from the file and checked.
    pub fn leaf_bytes(&self, index: u64) -> Result<Vec<u8>, LogError> {
        let offset = usize::try_from(index)
            .ok()
            .and_then(|i| self.offsets.get(i))
            .copied()
            .ok_or(LogError::SizeBeyondLog {
                size: index.saturating_add(1),
                len: self.len(),
            })?;
        let path = &self.data_path;
        let mut file = &self.file;
        file.seek(SeekFrom::Start(offset))
            .map_err(|e| LogError::io(path, "read", e))?;
        match read_record(&mut file, offset, self.end, index) {
            Ok(bytes) => Ok(bytes),
            Err(RecordError::Io(e)) => Err(LogError::io(path, "read", e)),
            Err(RecordError::Invalid(problem)) => Err(LogError::corrupted(path, offset, problem)),
        }
    }

    /// Leaf `index`.
    pub fn leaf(&self, index: u64) -> Result<Leaf, LogError> {
        let offset = usize::try_from(index)
            .ok()
            .and_then(|i| self.offsets.get(i))
            .copied()
            .unwrap_or(0);
        let bytes = self.leaf_bytes(index)?;
        Leaf::decode(&bytes)
            .map_err(|e| LogError::corrupted(&self.data_path, offset, e.to_string()))
    }

    /// Log `envelope` (see [`Log::append_envelopes`]).
    pub fn append(&mut self, envelope: &EnvelopeRef<'_>) -> Result<Appended, LogError> {
        self.append_envelopes(core::slice::from_ref(envelope))?
            .first()
            .copied()
            .ok_or(LogError::Poisoned {
                path: self.data_path.clone(),
            })
    }

    /// Log the P9 leaves of `envelopes`, in order, with one sync (see
    /// [`Log::append_leaves`]). Each envelope's id must be the hash of its
    /// body (P4), or nothing is logged; signatures are not checked (a log
    /// records ids it was shown, it does not vouch for their senders).
    pub fn append_envelopes(
        &mut self,
        envelopes: &[EnvelopeRef<'_>],
    ) -> Result<Vec<Appended>, LogError> {
        let mut leaves = Vec::with_capacity(envelopes.len());
        for (position, env) in envelopes.iter().enumerate() {
            if env.computed_id() != *env.id() {
                return Err(LogError::IdMismatch {
                    position,
                    id: *env.id(),
                });
            }
            leaves.push(Leaf::from_envelope(env));
        }
        self.append_leaves(&leaves)
    }

    /// Append `leaves` in order and return each one's index. A leaf whose id
    /// is logged already (earlier, or earlier in `leaves`) is not written
    /// again: its index comes back with `new: false` (P9). The new records
    /// are written in one write and synced (`fdatasync`) before this
    /// returns: a returned index is durable.
    pub fn append_leaves(&mut self, leaves: &[Leaf]) -> Result<Vec<Appended>, LogError> {
        if self.poisoned {
            return Err(LogError::Poisoned {
                path: self.data_path.clone(),
            });
        }
        let mut out = Vec::with_capacity(leaves.len());
        let mut batch: HashMap<[u8; 32], (u64, Vec<u8>)> = HashMap::new();
        let mut pending: Vec<([u8; 32], u64, Hash)> = Vec::new();
        let mut buf = Vec::new();
        let mut next = self.len();
        let mut offset = self.end;
        for leaf in leaves {
            let bytes = leaf.encode();
            let len = u32::try_from(bytes.len())
                .ok()
                .filter(|_| bytes.len() <= MAX_LEAF_LEN)
                .ok_or(LogError::LeafTooLarge { len: bytes.len() })?;
            let id = *leaf.id();
            if let Some(index) = self.index_of(&id) {
                if self.leaf_bytes(index)? != bytes {
                    return Err(LogError::LeafConflict { id, index });
                }
                out.push(Appended { index, new: false });
                continue;
            }
            if let Some((index, earlier)) = batch.get(&id) {
                if *earlier != bytes {
                    return Err(LogError::LeafConflict { id, index: *index });
                }
                out.push(Appended {
                    index: *index,
                    new: false,
                });
                continue;
            }
            buf.extend_from_slice(&len.to_be_bytes());
            buf.extend_from_slice(&bytes);
            buf.extend_from_slice(&record_check(next, &bytes));
            pending.push((id, offset, merkle::leaf_hash(&bytes)));
            out.push(Appended {
                index: next,
                new: true,
            });
            offset += RECORD_OVERHEAD + u64::from(len);
            next += 1;
            batch.insert(id, (next - 1, bytes));
        }
        if pending.is_empty() {
            return Ok(out);
        }
        if let Err(e) = self.write_records(&buf) {
            self.poisoned = true;
            // Best effort: take the unacknowledged bytes back off.
            let _ = self.file.set_len(self.end);
            return Err(e);
        }
        for (id, record_offset, hash) in pending {
            let index = self.tree.push(hash);
            self.ids.insert(id, index);
            self.offsets.push(record_offset);
        }
        self.end = offset;
        // Durable with the next append's sync; until then an open finds
        // these records past the acknowledged end, intact, and keeps them.
        if let Err(e) = self.write_mark() {
            self.poisoned = true;
            return Err(e);
        }
        Ok(out)
    }

    fn write_records(&mut self, buf: &[u8]) -> Result<(), LogError> {
        let path = &self.data_path;
        self.file
            .seek(SeekFrom::Start(self.end))
            .and_then(|_| self.file.write_all(buf))
            .map_err(|e| LogError::io(path, "append", e))?;
        self.file
            .sync_data()
            .map_err(|e| LogError::io(path, "sync", e))
    }

    fn write_mark(&mut self) -> Result<(), LogError> {
        let mark = mark(self.end, self.len());
        self.file
            .seek(SeekFrom::Start(0))
            .and_then(|_| self.file.write_all(&mark))
            .map_err(|e| LogError::io(&self.data_path, "write the header", e))
    }

    fn check_size(&self, size: Option<u64>) -> Result<u64, LogError> {
        let len = self.len();
        match size {
            None => Ok(len),
            Some(size) if size <= len => Ok(size),
            Some(size) => Err(LogError::SizeBeyondLog { size, len }),
        }
    }

    /// The unsigned head of the tree of `size` leaves (default: all) at
    /// `ts`.
    pub fn tree_head(&self, size: Option<u64>, ts: u64) -> Result<TreeHead, LogError> {
        let size = self.check_size(size)?;
        let root = self.tree.root_at(size).map_err(LogError::Proof)?;
        Ok(TreeHead::new(self.sigil(), size, root, ts))
    }

    /// The head of the tree of `size` leaves (default: all) at `ts`, signed
    /// with `key`, which must be the log's key. A head larger than any the
    /// log signed before is first recorded as its checkpoint, durably.
    pub fn signed_tree_head(
        &self,
        key: &SigningKey,
        size: Option<u64>,
        ts: u64,
    ) -> Result<SignedTreeHead, LogError> {
        let sth = self.tree_head(size, ts)?.sign(key).map_err(LogError::Sth)?;
        self.checkpoint.record(&sth)?;
        Ok(sth)
    }

    /// The inclusion proof of the leaf with `id` in the tree of `size`
    /// leaves (default: all), with that tree's head signed by `key` at `ts`.
    pub fn inclusion_proof(
        &self,
        key: &SigningKey,
        id: &[u8; 32],
        size: Option<u64>,
        ts: u64,
    ) -> Result<InclusionProof, LogError> {
        let index = self.index_of(id).ok_or(LogError::UnknownId { id: *id })?;
        let size = self.check_size(size)?;
        if index >= size {
            return Err(LogError::NotInTree { index, size });
        }
        let path = self
            .tree
            .inclusion_proof(index, size)
            .map_err(LogError::Proof)?;
        let sth = self.signed_tree_head(key, Some(size), ts)?;
        Ok(InclusionProof::new(index, self.leaf(index)?, path, sth))
    }

    /// The consistency proof from size `size1` to `size2` (default: all),
    /// with both tree heads signed by `key` at `ts` (P9: `0 < size1 ≤
    /// size2`).
    pub fn consistency_proof(
        &self,
        key: &SigningKey,
        size1: u64,
        size2: Option<u64>,
        ts: u64,
    ) -> Result<ConsistencyProof, LogError> {
        let size2 = self.check_size(size2)?;
        let path = self
            .tree
            .consistency_proof(size1, size2)
            .map_err(LogError::Proof)?;
        let sth1 = self.signed_tree_head(key, Some(size1), ts)?;
        let sth2 = self.signed_tree_head(key, Some(size2), ts)?;
        Ok(ConsistencyProof::new(path, sth1, sth2))
    }
}

/// Create `path` (it must not exist) holding `bytes`, mode 0600, synced.
fn write_new(path: &Path, bytes: &[u8]) -> Result<(), LogError> {
    let mut file = files::create_private_file(path).map_err(|e| match e {
        FileError::Io(e) if e.error.kind() == io::ErrorKind::AlreadyExists => LogError::Exists {
            path: path.to_path_buf(),
        },
        e => LogError::File(e),
    })?;
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .map_err(|e| LogError::io(path, "write", e))
}
