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
//! `leaves.dat` header (block 0; nothing else ever lives in it): 16 bytes
//! `herald-leaves-v1`, the acknowledged end (u64 big-endian: the byte
//! offset just past the last acknowledged record), the acknowledged leaf
//! count (u64 BE), and `sha256` of those 32 bytes; zeros to 4096. A record
//! (from byte 4096 on): the leaf length (u32 BE, 1…[`MAX_LEAF_LEN`]), the
//! P9 leaf bytes, and `sha256(index u64 BE ‖ leaf)`, which binds each
//! record to its position.
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
//! [`Log`] is open (a second opener waits).

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{self, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use herald_core::{EnvelopeRef, PublicKey, Sigil, SigilForm, SigningKey};

use super::checkpoint::{CHECKPOINT_FILE, Checkpoint};
use super::leaf::MAX_LEAF_LEN;
use super::{ConsistencyProof, InclusionProof, Leaf, SignedTreeHead, SthError, TreeHead, sha256};
use crate::files::{self, FileError};
use crate::keyring::key_line;
use crate::merkle::{self, Hash, ProofError, Tree};
use crate::report::hex;

/// The leaf file in a log directory.
pub const DATA_FILE: &str = "leaves.dat";
/// The log's public key (a keyring line) in a log directory.
pub const KEY_FILE: &str = "log.pub";
/// The log's settings in a log directory.
pub const CONFIG_FILE: &str = "log.conf";
/// The first line of `log.conf`.
pub const CONFIG_MAGIC: &str = "herald-log-v1";
/// Size of the header block of `leaves.dat`; records start here.
#[doc(hidden)]
pub const HEADER_LEN: u64 = 4096;

const MAGIC: &[u8; 16] = b"herald-leaves-v1";
/// Magic, end, count, checksum.
const MARK_LEN: usize = 16 + 8 + 8 + 32;
/// Length prefix and checksum around each leaf.
const RECORD_OVERHEAD: u64 = 4 + 32;
/// Read buffer for the scan on open.
const SCAN_BUFFER: usize = 1 << 20;
/// Largest `log.pub` or `log.conf` read: a key line or a path, far less.
const MAX_SMALL_FILE: u64 = 64 << 10;

/// The log could not be created, opened, appended to or asked for a proof.
/// Every variant about a file names it.
#[derive(Debug)]
#[non_exhaustive]
pub enum LogError {
    /// A file operation failed.
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What was being done (`open`, `read`, `append`, …).
        action: &'static str,
        /// The OS error.
        error: io::Error,
    },
    /// The directory is not a log (a file is missing or not in its format).
    NotALog {
        /// The file concerned.
        path: PathBuf,
        /// What is wrong.
        problem: String,
    },
    /// `create`: the directory already holds (part of) a log.
    Exists {
        /// The file found.
        path: PathBuf,
    },
    /// Acknowledged data is damaged or missing. Never repaired silently.
    Corrupted {
        /// The leaf file.
        path: PathBuf,
        /// Byte offset of the damaged record (or of the end of the file).
        offset: u64,
        /// What is wrong.
        problem: String,
    },
    /// A write or sync failed earlier; this handle refuses to go on (what
    /// reached the disk is decided by reopening).
    Poisoned {
        /// The leaf file.
        path: PathBuf,
    },
    /// An envelope's `id` is not the hash of its body (P4 `id_mismatch`):
    /// it is not logged.
    IdMismatch {
        /// Position of the envelope in the batch (0-based).
        position: usize,
        /// The id it carries.
        id: [u8; 32],
    },
    /// A leaf with this id is logged already, with other contents.
    LeafConflict {
        /// The id.
        id: [u8; 32],
        /// The index of the leaf logged.
        index: u64,
    },
    /// A leaf is larger than [`MAX_LEAF_LEN`].
    LeafTooLarge {
        /// Its length in bytes.
        len: usize,
    },
    /// No leaf with this id.
    UnknownId {
        /// The id.
        id: [u8; 32],
    },
    /// A tree size beyond the number of leaves.
    SizeBeyondLog {
        /// The size asked for.
        size: u64,
        /// The number of leaves.
        len: u64,
    },
    /// The leaf is not in the tree of the size asked for.
    NotInTree {
        /// The leaf's index.
        index: u64,
        /// The size asked for.
        size: u64,
    },
    /// The first `size` leaves no longer hash to the root the log signed
    /// for that size (its checkpoint): a record was changed since. The log
    /// is refused rather than made to sign a second root for one size.
    RootNeverSigned {
        /// The checkpoint file.
        checkpoint: PathBuf,
        /// The size it signed.
        size: u64,
        /// The leaves in the leaf file.
        leaves: u64,
    },
    /// A log file or the directory is not a regular file (directory), is
    /// too large, or group or others may write it.
    File(FileError),
    /// A tree head could not be signed (wrong key).
    Sth(SthError),
    /// A proof could not be made (e.g. a consistency proof from size 0, P9).
    Proof(ProofError),
}

impl LogError {
    pub(crate) fn io(path: &Path, action: &'static str, error: io::Error) -> Self {
        Self::Io {
            path: path.to_path_buf(),
            action,
            error,
        }
    }

    fn corrupted(path: &Path, offset: u64, problem: impl Into<String>) -> Self {
        Self::Corrupted {
            path: path.to_path_buf(),
            offset,
            problem: problem.into(),
        }
    }

    pub(crate) fn not_a_log(path: &Path, problem: impl Into<String>) -> Self {
        Self::NotALog {
            path: path.to_path_buf(),
            problem: problem.into(),
        }
    }
}

impl fmt::Display for LogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io {
                path,
                action,
                error,
            } => write!(f, "{}: {action}: {error}", path.display()),
            Self::NotALog { path, problem } => {
                write!(f, "{}: not a herald log: {problem}", path.display())
            }
            Self::Exists { path } => write!(
                f,
                "{}: already exists: the directory already holds a log (or part of one)",
                path.display()
            ),
            Self::Corrupted {
                path,
                offset,
                problem,
            } => write!(
                f,
                "{}: corrupted at byte {offset}: {problem}",
                path.display()
            ),
            Self::Poisoned { path } => write!(
                f,
                "{}: an earlier write to the log failed; reopen it to see what was kept",
                path.display()
            ),
            Self::IdMismatch { position, id } => write!(
                f,
                "envelope {position} (id {}): the id is not the hash of its body \
                 (id_mismatch, P4); nothing was logged",
                hex(id)
            ),
            Self::LeafConflict { id, index } => write!(
                f,
                "id {} is logged already (leaf {index}) with a different leaf",
                hex(id)
            ),
            Self::LeafTooLarge { len } => {
                write!(
                    f,
                    "a leaf of {len} bytes is over the {MAX_LEAF_LEN} allowed"
                )
            }
            Self::UnknownId { id } => write!(f, "no leaf with id {} in the log", hex(id)),
            Self::SizeBeyondLog { size, len } => {
                write!(f, "tree size {size} is beyond the {len} leaves of the log")
            }
            Self::NotInTree { index, size } => write!(
                f,
                "the leaf is number {index}, not in the tree of size {size}"
            ),
            Self::RootNeverSigned {
                checkpoint,
                size,
                leaves,
            } => write!(
                f,
                "{}: the first {size} of the {leaves} leaves no longer hash to the root \
                 the log signed for size {size}: a leaf record was changed since; \
                 the log is refused so that it never signs two roots for one size",
                checkpoint.display()
            ),
            Self::File(e) => write!(f, "{e}"),
            Self::Sth(e) => write!(f, "{e}"),
            Self::Proof(e) => write!(f, "{e}"),
        }
    }
}

impl From<FileError> for LogError {
    fn from(e: FileError) -> Self {
        Self::File(e)
    }
}

impl std::error::Error for LogError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io { error, .. } => Some(error),
            Self::File(e) => Some(e),
            _ => None,
        }
    }
}

/// What [`Log::open`] repaired after an interrupted append. Nothing here
/// was ever acknowledged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recovery {
    /// The leaf file.
    pub path: PathBuf,
    /// Complete records past the acknowledged end, kept as leaves.
    pub adopted: u64,
    /// Where the cut-off tail began, if one was cut.
    pub torn_at: Option<u64>,
    /// Bytes cut off.
    pub torn_bytes: u64,
    /// Why the first cut-off record was not kept.
    pub torn_problem: Option<String>,
}

impl fmt::Display for Recovery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: recovered an interrupted append:",
            self.path.display()
        )?;
        if let Some(at) = self.torn_at {
            write!(
                f,
                " cut {} bytes of unacknowledged data at byte {at}",
                self.torn_bytes
            )?;
            if let Some(p) = &self.torn_problem {
                write!(f, " ({p})")?;
            }
            if self.adopted > 0 {
                f.write_str(";")?;
            }
        }
        if self.adopted > 0 {
            write!(
                f,
                " kept {} complete leaves written after the last acknowledgement",
                self.adopted
            )?;
        }
        Ok(())
    }
}

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
    /// Waits while another process has the log open.
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
        file.lock()
            .map_err(|e| LogError::io(&data_path, "lock", e))?;
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
        FileError::Io { error, .. } if error.kind() == io::ErrorKind::AlreadyExists => {
            LogError::Exists {
                path: path.to_path_buf(),
            }
        }
        e => LogError::File(e),
    })?;
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .map_err(|e| LogError::io(path, "write", e))
}

/// The header mark: magic, acknowledged end, acknowledged count, checksum.
fn mark(end: u64, count: u64) -> [u8; MARK_LEN] {
    let mut out = [0u8; MARK_LEN];
    let (body, check) = out.split_at_mut(32);
    let (magic, rest) = body.split_at_mut(16);
    magic.copy_from_slice(MAGIC);
    let (e, c) = rest.split_at_mut(8);
    e.copy_from_slice(&end.to_be_bytes());
    c.copy_from_slice(&count.to_be_bytes());
    let digest = sha256(body);
    check.copy_from_slice(&digest);
    out
}

/// `sha256(index u64 BE ‖ leaf)`: the checksum closing a record.
fn record_check(index: u64, leaf: &[u8]) -> Hash {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    h.update(index.to_be_bytes());
    h.update(leaf);
    h.finalize().into()
}

/// A small log file (`log.conf`, `log.pub`) as text: regular, owner-only
/// writable, at most [`MAX_SMALL_FILE`] bytes.
fn read_small(path: &Path) -> Result<String, LogError> {
    if let Err(e) = path.symlink_metadata()
        && e.kind() == io::ErrorKind::NotFound
    {
        return Err(LogError::not_a_log(path, "missing"));
    }
    let (_, meta) = files::open_regular(path)?;
    files::check_private(path, &meta)?;
    let bytes = files::read_capped(path, MAX_SMALL_FILE, "log file")?;
    String::from_utf8(bytes).map_err(|_| LogError::not_a_log(path, "not UTF-8 text"))
}

fn read_config(path: &Path) -> Result<Option<PathBuf>, LogError> {
    let text = read_small(path)?;
    let mut lines = text.lines();
    if lines.next() != Some(CONFIG_MAGIC) {
        return Err(LogError::not_a_log(
            path,
            std::format!("the first line must be {CONFIG_MAGIC:?}"),
        ));
    }
    let mut key_path = None;
    for (i, line) in lines.enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        match line.strip_prefix("key ") {
            Some(p) if key_path.is_none() && !p.is_empty() => key_path = Some(PathBuf::from(p)),
            _ => {
                return Err(LogError::not_a_log(
                    path,
                    std::format!("line {}: expected `key <path>` (once)", i + 2),
                ));
            }
        }
    }
    Ok(key_path)
}

fn read_key(path: &Path) -> Result<PublicKey, LogError> {
    let text = read_small(path)?;
    let mut keys = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'));
    let (Some(line), None) = (keys.next(), keys.next()) else {
        return Err(LogError::not_a_log(path, "expected exactly one key line"));
    };
    let bad = |what: &str| LogError::not_a_log(path, std::format!("{what} (CLI.md key format)"));
    let mut parts = line.split_ascii_whitespace();
    let (Some(sigil), Some("ed25519"), Some(hex_key), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(bad("expected `<sigil> ed25519 <64 hex chars>`"));
    };
    let sigil = Sigil::parse(sigil).map_err(|e| bad(&e.to_string()))?;
    let bytes =
        decode_hex32(hex_key).ok_or_else(|| bad("the key must be 64 lowercase hex chars"))?;
    let key = PublicKey::from_bytes(&bytes).map_err(|e| bad(&e.to_string()))?;
    if sigil.is_reserved() || !sigil.names_key(key.as_bytes()) {
        return Err(bad("the sigil is not this key's"));
    }
    Ok(key)
}

fn decode_hex32(s: &str) -> Option<[u8; 32]> {
    let bytes = s.as_bytes();
    if bytes.len() != 64 {
        return None;
    }
    let nibble = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    let mut out = [0u8; 32];
    for (o, pair) in out.iter_mut().zip(bytes.chunks_exact(2)) {
        *o = (nibble(*pair.first()?)? << 4) | nibble(*pair.get(1)?)?;
    }
    Some(out)
}

/// Why a record could not be read.
enum RecordError {
    /// The OS failed: not a judgement on the data.
    Io(io::Error),
    /// The bytes are not a valid record here.
    Invalid(String),
}

fn read_exact(reader: &mut impl Read, buf: &mut [u8]) -> Result<(), RecordError> {
    reader.read_exact(buf).map_err(RecordError::Io)
}

/// Read the record at `offset` (index `index`), which must end by `limit`;
/// its leaf bytes when its length and checksum hold.
fn read_record(
    reader: &mut impl Read,
    offset: u64,
    limit: u64,
    index: u64,
) -> Result<Vec<u8>, RecordError> {
    let room = limit.saturating_sub(offset);
    if room < 4 {
        return Err(RecordError::Invalid(std::format!(
            "an incomplete record: {room} of its 4 length bytes"
        )));
    }
    let mut len = [0u8; 4];
    read_exact(reader, &mut len)?;
    let len = u32::from_be_bytes(len);
    if len == 0 || usize::try_from(len).ok().is_none_or(|l| l > MAX_LEAF_LEN) {
        return Err(RecordError::Invalid(std::format!(
            "record length {len} is not within 1..={MAX_LEAF_LEN}"
        )));
    }
    let whole = RECORD_OVERHEAD + u64::from(len);
    if room < whole {
        return Err(RecordError::Invalid(std::format!(
            "an incomplete record: {room} of its {whole} bytes"
        )));
    }
    let mut leaf = std::vec![0u8; usize::try_from(len).unwrap_or(0)];
    read_exact(reader, &mut leaf)?;
    let mut check = [0u8; 32];
    read_exact(reader, &mut check)?;
    if check != record_check(index, &leaf) {
        return Err(RecordError::Invalid(std::format!(
            "the checksum of record {index} does not match"
        )));
    }
    Ok(leaf)
}

/// What reading a leaf file found ([`scan_leaf_file`]): the records
/// [`Log::open`] keeps, the Merkle tree and id index rebuilt from them, and
/// what an interrupted append left to repair (docs/audit-log.md, "Files"
/// and "Crash safety"; PROFILE.md P9).
#[derive(Clone, Debug, PartialEq, Eq)]
#[doc(hidden)]
pub struct LeafScan {
    tree: Tree,
    ids: HashMap<[u8; 32], u64>,
    offsets: Vec<u64>,
    /// End of the last good record.
    end: u64,
    /// The header's acknowledged count.
    marked_count: u64,
    /// Where the tail to cut off starts, and why.
    torn: Option<(u64, String)>,
}

impl LeafScan {
    /// Number of records kept (acknowledged, and complete ones past the
    /// acknowledged end).
    pub fn len(&self) -> u64 {
        self.tree.len()
    }

    /// Whether no record was kept.
    pub fn is_empty(&self) -> bool {
        self.tree.is_empty()
    }

    /// The Merkle tree of the kept records' leaves, in order.
    pub fn tree(&self) -> &Tree {
        &self.tree
    }

    /// The index of the kept leaf with this id.
    pub fn index_of(&self, id: &[u8; 32]) -> Option<u64> {
        self.ids.get(id).copied()
    }

    /// The byte offset of each kept record, in order.
    pub fn offsets(&self) -> &[u64] {
        &self.offsets
    }

    /// The byte offset just past the last kept record: the acknowledged
    /// end once the log is repaired.
    pub fn end(&self) -> u64 {
        self.end
    }

    /// The acknowledged leaf count the header states.
    pub fn acknowledged(&self) -> u64 {
        self.marked_count
    }

    /// Where the tail that [`Log::open`] cuts off begins, and why its first
    /// record was not kept (`None`: every byte past the header is a kept
    /// record).
    pub fn torn(&self) -> Option<(u64, &str)> {
        self.torn.as_ref().map(|(at, why)| (*at, why.as_str()))
    }

    /// Whether [`Log::open`] repairs this file (a [`Recovery`]): a tail to
    /// cut, or complete records past the acknowledged end to adopt.
    pub fn needs_repair(&self) -> bool {
        self.torn.is_some() || self.len() > self.marked_count
    }
}

/// Read the contents of a leaf file (`leaves.dat`, the format of
/// docs/audit-log.md "Files"; PROFILE.md P9) from `reader`, which holds
/// `file_len` bytes: the header, then every record, each checked (length,
/// checksum, P9 leaf, no repeated id). This is the reader [`Log::open`]
/// runs on the file (`path` is only named in errors); it changes nothing:
/// what `open` would repair is reported by [`LeafScan::torn`] and
/// [`LeafScan::needs_repair`].
///
/// Errors (docs/audit-log.md "Crash safety"): [`LogError::NotALog`] when the
/// header has no `herald-leaves-v1` magic; [`LogError::Corrupted`] with the
/// byte offset of the damage for a file ending inside its header (offset
/// `len`), a header whose checksum fails or whose acknowledged end lies
/// inside it (offset 16), a file shorter than its acknowledged end (offset
/// `file_len`), and an acknowledged record that is incomplete, has a bad length
/// or checksum, is not a P9 leaf or repeats an id (the record's offset; at
/// the acknowledged end when the records there are not as many as the
/// header counts); [`LogError::Io`] when `reader` fails or holds fewer than
/// `file_len` bytes.
#[doc(hidden)]
pub fn scan_leaf_file(
    mut reader: impl Read,
    file_len: u64,
    path: &Path,
) -> Result<LeafScan, LogError> {
    let mut header = [0u8; MARK_LEN];
    if file_len < HEADER_LEN {
        return Err(LogError::corrupted(
            path,
            file_len,
            std::format!("the file ends inside its {HEADER_LEN}-byte header"),
        ));
    }
    reader
        .read_exact(&mut header)
        .map_err(|e| LogError::io(path, "read", e))?;
    if header.get(..16) != Some(MAGIC.as_slice()) {
        return Err(LogError::not_a_log(
            path,
            "not a leaf file (no herald-leaves-v1 header)",
        ));
    }
    if mark(
        u64_at(&header, 16).unwrap_or(0),
        u64_at(&header, 24).unwrap_or(0),
    ) != header
    {
        return Err(LogError::corrupted(
            path,
            16,
            "the header checksum does not match",
        ));
    }
    let marked_end = u64_at(&header, 16).unwrap_or(0);
    let marked_count = u64_at(&header, 24).unwrap_or(0);
    if marked_end < HEADER_LEN {
        return Err(LogError::corrupted(
            path,
            16,
            std::format!("the acknowledged end {marked_end} is inside the header"),
        ));
    }
    if file_len < marked_end {
        return Err(LogError::corrupted(
            path,
            file_len,
            std::format!(
                "the file ends at byte {file_len}, but {marked_count} leaves were acknowledged \
                 up to byte {marked_end}: acknowledged leaves are missing (truncated?)"
            ),
        ));
    }
    // The rest of the header block holds nothing.
    let padding = HEADER_LEN - MARK_LEN as u64;
    let skipped = io::copy(&mut reader.by_ref().take(padding), &mut io::sink())
        .map_err(|e| LogError::io(path, "read", e))?;
    if skipped != padding {
        return Err(LogError::io(
            path,
            "read",
            io::ErrorKind::UnexpectedEof.into(),
        ));
    }

    let mut tree = Tree::new();
    let mut ids = HashMap::new();
    let mut offsets = Vec::new();
    let mut offset = HEADER_LEN;
    let mut torn = None;
    loop {
        let index = tree.len();
        if offset == marked_end && index != marked_count {
            return Err(LogError::corrupted(
                path,
                offset,
                std::format!(
                    "{index} records end at the acknowledged end, the header says {marked_count}"
                ),
            ));
        }
        if offset == file_len {
            break;
        }
        let acknowledged = offset < marked_end;
        let limit = if acknowledged { marked_end } else { file_len };
        let record = read_record(&mut reader, offset, limit, index).and_then(|leaf| {
            let decoded = Leaf::decode(&leaf)
                .map_err(|e| RecordError::Invalid(std::format!("record {index}: {e}")))?;
            if let Some(first) = ids.get(decoded.id()) {
                return Err(RecordError::Invalid(std::format!(
                    "record {index} repeats the id of record {first}"
                )));
            }
            Ok((leaf, *decoded.id()))
        });
        match record {
            Ok((leaf, id)) => {
                tree.push(merkle::leaf_hash(&leaf));
                ids.insert(id, index);
                offsets.push(offset);
                offset += RECORD_OVERHEAD + leaf.len() as u64;
            }
            Err(RecordError::Io(e)) => return Err(LogError::io(path, "read", e)),
            Err(RecordError::Invalid(problem)) if acknowledged => {
                return Err(LogError::corrupted(
                    path,
                    offset,
                    std::format!("{problem} (acknowledged data, up to byte {marked_end})"),
                ));
            }
            Err(RecordError::Invalid(problem)) => {
                torn = Some((offset, problem));
                break;
            }
        }
    }
    Ok(LeafScan {
        tree,
        ids,
        offsets,
        end: offset,
        marked_count,
        torn,
    })
}

fn u64_at(bytes: &[u8], at: usize) -> Option<u64> {
    let b: [u8; 8] = bytes.get(at..at.checked_add(8)?)?.try_into().ok()?;
    Some(u64::from_be_bytes(b))
}
