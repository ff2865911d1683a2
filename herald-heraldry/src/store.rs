//! The Herald's state: its log of certifications (PROFILE P14 *The
//! Herald's log*), one append-only file, `DIR/certifications.log`, of
//! records `u32 length ‖ SHA-256(bytes) ‖ bytes`, each `bytes` the P1
//! bytes of one certification, in the order issued.
//!
//! Crash safety (CONDUIT.md: what a server acknowledged is on disk before
//! the answer is sent): a batch of records is written past the end in one
//! write and synced before any of them is answered or enters a checkpoint,
//! so every acknowledged certification, and every entry a checkpoint
//! covers, is durable. A crash can only leave a torn last record (an
//! append in flight, never answered): [`Store::open`] cuts it off. A
//! damaged record followed by others is corruption and stops the Herald
//! (it never silently drops an entry a checkpoint may cover: the log never
//! rolls back).
//!
//! One process at a time: the file is locked (`flock`) while open, so
//! `herald heraldry certify` refuses while a server holds the state
//! ([`StoreError::Locked`]).
//!
//! The directory is created owner-only (herald-fs's rule) and the file
//! 0600.

use core::fmt;
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use herald_core::{EnvelopeRef, SigilForm};
use herald_fs::{FileError, Io};
use herald_merkle::{Tree, leaf_hash};
use sha2::{Digest, Sha256};

use crate::certification::Certification;

/// The log file's name in the state directory.
pub const LOG_FILE: &str = "certifications.log";

/// Bytes before a record's entry: its length and checksum.
const RECORD_HEAD: usize = 4 + 32;

/// The largest entry (a certification within P1's 1 MiB).
const MAX_ENTRY: u32 = 1 << 20;

/// The state could not be opened or written.
#[derive(Debug)]
#[non_exhaustive]
pub enum StoreError {
    /// The state directory or file (herald-fs's rule).
    File(FileError),
    /// Reading or writing the log failed.
    Io(Io),
    /// Another process holds the state (a running `heraldry serve`).
    Locked {
        /// The log file.
        path: PathBuf,
    },
    /// A record before the last is damaged: the Herald refuses to start
    /// rather than drop entries its checkpoints may cover.
    Corrupted {
        /// The log file.
        path: PathBuf,
        /// The damaged record's byte offset.
        offset: u64,
    },
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::File(e) => e.fmt(f),
            StoreError::Io(e) => e.fmt(f),
            StoreError::Locked { path } => write!(
                f,
                "{}: held by another process (a running `herald heraldry serve`?)",
                path.display()
            ),
            StoreError::Corrupted { path, offset } => write!(
                f,
                "{}: the record at byte {offset} is damaged and others follow it (refusing \
                 to start: dropping it would roll the log back)",
                path.display()
            ),
        }
    }
}

impl std::error::Error for StoreError {}

impl From<FileError> for StoreError {
    fn from(e: FileError) -> Self {
        StoreError::File(e)
    }
}

/// The log of certifications, its tree, and the indices the server reads.
#[derive(Debug)]
pub struct Store {
    path: PathBuf,
    file: File,
    end: u64,
    tree: Tree,
    /// Where each entry's record starts, and its length.
    offsets: Vec<(u64, u32)>,
    /// Entries about each subject (default-form sigil text).
    by_subject: HashMap<String, Vec<u64>>,
    /// The entry answering each request (its `parent`).
    by_request: HashMap<[u8; 32], u64>,
    /// Entries carrying each `handle` claim value (lower case).
    by_handle: HashMap<String, Vec<u64>>,
    /// Bytes cut from a torn tail at open.
    torn: u64,
}

fn io<'a>(path: &'a Path, action: &'static str) -> impl FnOnce(std::io::Error) -> StoreError + 'a {
    move |e| StoreError::Io(Io::new(path, action, e))
}

impl Store {
    /// Open (or create) the state in `dir`, lock it, read every record and
    /// cut a torn tail.
    pub fn open(dir: &Path) -> Result<Self, StoreError> {
        herald_fs::create_private_dir(dir)?;
        let path = dir.join(LOG_FILE);
        let mut file = if path.exists() {
            let (_, meta) = herald_fs::open_regular(&path)?;
            herald_fs::check_private(&path, &meta)?;
            OpenOptions::new()
                .read(true)
                .write(true)
                .open(&path)
                .map_err(io(&path, "open"))?
        } else {
            drop(herald_fs::create_private_file(&path)?);
            OpenOptions::new()
                .read(true)
                .write(true)
                .open(&path)
                .map_err(io(&path, "open"))?
        };
        file.try_lock().map_err(|e| match e {
            std::fs::TryLockError::WouldBlock => StoreError::Locked { path: path.clone() },
            std::fs::TryLockError::Error(e) => StoreError::Io(Io::new(&path, "lock", e)),
        })?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(io(&path, "read"))?;
        let mut store = Store {
            path: path.clone(),
            file,
            end: 0,
            tree: Tree::new(),
            offsets: Vec::new(),
            by_subject: HashMap::new(),
            by_request: HashMap::new(),
            by_handle: HashMap::new(),
            torn: 0,
        };
        let mut at = 0usize;
        while at < bytes.len() {
            match record(&bytes[at..]) {
                Record::Whole(entry, len) => {
                    store.index(u64::try_from(at).unwrap_or(u64::MAX), entry);
                    at += len;
                }
                Record::Torn => break,
                Record::Damaged(len) if at + len == bytes.len() => break,
                Record::Damaged(_) => {
                    return Err(StoreError::Corrupted {
                        path,
                        offset: u64::try_from(at).unwrap_or(u64::MAX),
                    });
                }
            }
        }
        store.end = u64::try_from(at).unwrap_or(u64::MAX);
        let len = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
        if store.end < len {
            store.torn = len - store.end;
            tracing::warn!(
                path = %store.path.display(),
                bytes = store.torn,
                "cutting the torn tail of the certification log (an append in flight at a crash, never answered)"
            );
            store
                .file
                .set_len(store.end)
                .map_err(io(&store.path, "truncate"))?;
            store.file.sync_all().map_err(io(&store.path, "sync"))?;
        }
        Ok(store)
    }

    fn index(&mut self, offset: u64, entry: &[u8]) {
        let index = self.tree.len();
        self.tree.push(leaf_hash(entry));
        self.offsets
            .push((offset, u32::try_from(entry.len()).unwrap_or(u32::MAX)));
        let Ok(env) = EnvelopeRef::decode(entry) else {
            return;
        };
        if let Some(parent) = env.parent() {
            self.by_request.entry(*parent).or_insert(index);
        }
        if let Some(c) = Certification::of(&env) {
            if let Some(s) = c.subject.to_form(SigilForm::Default) {
                self.by_subject
                    .entry(s.to_string())
                    .or_default()
                    .push(index);
            }
            if c.claim == "handle"
                && let Some(h) = c.value.as_text()
            {
                self.by_handle
                    .entry(h.to_ascii_lowercase())
                    .or_default()
                    .push(index);
            }
        }
    }

    /// Append `entries`, durably, before returning their indices.
    pub fn append(&mut self, entries: &[Vec<u8>]) -> Result<Vec<u64>, StoreError> {
        let mut buf = Vec::new();
        for e in entries {
            let len = u32::try_from(e.len()).unwrap_or(u32::MAX).min(MAX_ENTRY);
            buf.extend_from_slice(&len.to_be_bytes());
            buf.extend_from_slice(&Sha256::digest(e));
            buf.extend_from_slice(e);
        }
        self.file
            .seek(SeekFrom::Start(self.end))
            .map_err(io(&self.path, "seek"))?;
        self.file.write_all(&buf).map_err(io(&self.path, "write"))?;
        self.file.sync_data().map_err(io(&self.path, "sync"))?;
        let mut at = self.end;
        let mut out = Vec::with_capacity(entries.len());
        for e in entries {
            self.index(at, e);
            out.push(self.tree.len() - 1);
            at += u64::try_from(RECORD_HEAD + e.len()).unwrap_or(u64::MAX);
        }
        self.end = at;
        Ok(out)
    }

    /// The tree of every entry.
    #[must_use]
    pub fn tree(&self) -> &Tree {
        &self.tree
    }

    /// How many entries the log holds.
    #[must_use]
    pub fn len(&self) -> u64 {
        self.tree.len()
    }

    /// Whether the log is empty.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.tree.is_empty()
    }

    /// Bytes cut from a torn tail when the state was opened.
    #[must_use]
    pub fn torn(&self) -> u64 {
        self.torn
    }

    /// The bytes of entry `index`.
    pub fn entry(&self, index: u64) -> Result<Vec<u8>, StoreError> {
        let (offset, len) = usize::try_from(index)
            .ok()
            .and_then(|i| self.offsets.get(i))
            .copied()
            .ok_or_else(|| {
                StoreError::Io(Io::new(
                    &self.path,
                    "read",
                    std::io::Error::other("no such entry"),
                ))
            })?;
        let mut buf = vec![0u8; usize::try_from(len).unwrap_or(0)];
        read_at(
            &self.file,
            offset + u64::try_from(RECORD_HEAD).unwrap_or(0),
            &mut buf,
        )
        .map_err(io(&self.path, "read"))?;
        Ok(buf)
    }

    /// The entry that answered request `id`, if any.
    #[must_use]
    pub fn answered(&self, id: &[u8; 32]) -> Option<u64> {
        self.by_request.get(id).copied()
    }

    /// The entries about `subject` (a sigil in default form, as text).
    #[must_use]
    pub fn about(&self, subject: &str) -> &[u64] {
        self.by_subject.get(subject).map_or(&[], Vec::as_slice)
    }

    /// The entries certifying the handle `handle` (lower case).
    #[must_use]
    pub fn with_handle(&self, handle: &str) -> &[u64] {
        self.by_handle.get(handle).map_or(&[], Vec::as_slice)
    }
}

#[cfg(unix)]
fn read_at(file: &File, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    file.read_exact_at(buf, offset)
}

#[cfg(not(unix))]
fn read_at(file: &File, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
    let mut f = file.try_clone()?;
    f.seek(SeekFrom::Start(offset))?;
    f.read_exact(buf)
}

enum Record<'a> {
    /// An intact record: its entry and its whole length.
    Whole(&'a [u8], usize),
    /// Shorter than its length says: cut at a crash.
    Torn,
    /// Whole but its checksum fails (or its length is impossible): its
    /// whole length.
    Damaged(usize),
}

fn record(bytes: &[u8]) -> Record<'_> {
    let Some(head) = bytes.get(..RECORD_HEAD) else {
        return Record::Torn;
    };
    let len = u32::from_be_bytes([head[0], head[1], head[2], head[3]]);
    if len > MAX_ENTRY {
        return Record::Damaged(bytes.len());
    }
    let total = RECORD_HEAD + usize::try_from(len).unwrap_or(usize::MAX);
    let Some(entry) = bytes.get(RECORD_HEAD..total) else {
        return Record::Torn;
    };
    if Sha256::digest(entry).as_slice() == &head[4..] {
        Record::Whole(entry, total)
    } else {
        Record::Damaged(total)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn torn_tail_is_cut_and_damage_before_the_end_refused() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("s");
        {
            let mut s = Store::open(&state).unwrap();
            assert!(matches!(
                Store::open(&state),
                Err(StoreError::Locked { .. })
            ));
            assert_eq!(
                s.append(&[b"one".to_vec(), b"two".to_vec()]).unwrap(),
                [0, 1]
            );
            assert_eq!(s.append(&[b"three".to_vec()]).unwrap(), [2]);
            assert_eq!(s.entry(1).unwrap(), b"two");
        }
        let path = state.join(LOG_FILE);
        let full = std::fs::read(&path).unwrap();
        // A torn last record is cut.
        std::fs::write(&path, &full[..full.len() - 2]).unwrap();
        let s = Store::open(&state).unwrap();
        assert_eq!(
            (s.len(), s.torn()),
            (2, u64::try_from(RECORD_HEAD + 3).unwrap())
        );
        drop(s);
        // A damaged record with others after it stops the store.
        let mut bad = full.clone();
        bad[RECORD_HEAD] ^= 1;
        std::fs::write(&path, &bad).unwrap();
        assert!(matches!(
            Store::open(&state),
            Err(StoreError::Corrupted { offset: 0, .. })
        ));
    }
}
