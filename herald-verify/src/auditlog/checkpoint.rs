//! The log's checkpoint: the signed tree head of the largest size the log
//! has signed, kept in `checkpoint` in the log directory (docs/audit-log.md,
//! "What a local writer cannot do").
//!
//! A record of `leaves.dat` is closed by a checksum anyone can recompute, so
//! a local writer who changed a leaf could make the log sign a second root
//! for a size it had already signed: a split view. The checkpoint closes
//! that: [`Log::open`](super::Log::open) verifies it under the log's key and
//! recomputes the root of its size from the leaf file, and refuses the log
//! ([`LogError::RootNeverSigned`]) when they differ. Every tree head the log
//! signs past the checkpoint's size replaces it, durably, before the head
//! is handed out; so every head the log ever signed is for a prefix that
//! the next open checks.
//!
//! The file is two slots of [`SLOT`] bytes, each a big-endian `u16` length
//! and a tree head's wire form, zero-padded. A new checkpoint is written
//! over the slot that does not hold the current one and `fdatasync`'d: the
//! file never changes size, so one data sync makes it durable (a log that
//! signs a head per batch, as a notary conduit does, pays one sync for it,
//! not a new file, two syncs and a rename). A write torn by a crash leaves
//! the other slot's checkpoint, the one before, and the torn head was never
//! handed out. Opening takes the larger of the slots that decode and verify
//! under the log's key, and refuses a file where neither does. The first
//! form of the file, one bare tree head, is read too, and replaced by the
//! two-slot form (a new file, synced, renamed over it, the directory
//! synced) the first time the log signs past it.

use alloc::string::String;
use alloc::vec::Vec;
use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};

use herald_core::PublicKey;

use super::file::LogError;
use super::sth::SignedTreeHead;
use herald_fs as files;
use herald_merkle::Tree;

/// The checkpoint file in a log directory.
pub const CHECKPOINT_FILE: &str = "checkpoint";

/// Bytes of one slot: a `u16` length, then a tree head (about 150 bytes).
pub const SLOT: usize = 512;

/// Largest checkpoint file read: two slots, or one bare tree head.
const MAX_LEN: u64 = 4096;

/// What the checkpoint holds now.
#[derive(Debug)]
struct State {
    /// The size of the largest tree head signed (0: none).
    size: u64,
    /// The slot holding it, when the file has the two-slot form.
    slot: Option<usize>,
    /// The file, open for writing once a head was written in place.
    file: Option<File>,
}

/// The checkpoint of a log, guarding its rewrite.
#[derive(Debug)]
pub(crate) struct Checkpoint {
    path: PathBuf,
    state: Mutex<State>,
}

impl Checkpoint {
    /// Read and check the checkpoint of the log in `dir` whose key is `key`
    /// and whose leaves make `tree`; no file is size 0 (nothing signed).
    pub(crate) fn load(dir: &Path, key: &PublicKey, tree: &Tree) -> Result<Self, LogError> {
        let path = dir.join(CHECKPOINT_FILE);
        let (size, slot) = match path.symlink_metadata() {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => (0, None),
            _ => {
                let bytes = files::read_private(&path, MAX_LEN, "checkpoint")?;
                let (slot, sth) = latest(&path, &bytes, key)?;
                let root = tree.root_at(sth.size()).ok();
                if root.as_ref() != Some(sth.root()) {
                    return Err(LogError::RootNeverSigned {
                        checkpoint: path,
                        size: sth.size(),
                        leaves: tree.len(),
                    });
                }
                (sth.size(), slot)
            }
        };
        Ok(Self {
            path,
            state: Mutex::new(State {
                size,
                slot,
                file: None,
            }),
        })
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The size of the largest tree head signed (0: none).
    pub(crate) fn size(&self) -> u64 {
        self.state().size
    }

    /// Record `sth` when it is larger than the checkpoint, durably: over
    /// the slot not holding the current one, then `fdatasync`; or, the
    /// first time (no file, or the one-head form), as a new two-slot file,
    /// synced, renamed over the old one, the directory synced.
    pub(crate) fn record(&self, sth: &SignedTreeHead) -> Result<(), LogError> {
        let mut state = self.state();
        if sth.size() <= state.size {
            return Ok(());
        }
        let encoded: Vec<u8> = sth.encode();
        let slot = slot_bytes(&encoded).ok_or_else(|| {
            LogError::not_a_log(
                &self.path,
                std::format!("a tree head of {} bytes does not fit a slot", encoded.len()),
            )
        })?;
        match state.slot {
            Some(held) => {
                if state.file.is_none() {
                    let file = OpenOptions::new()
                        .write(true)
                        .open(&self.path)
                        .map_err(|e| LogError::io(&self.path, "open", e))?;
                    state.file = Some(file);
                }
                let other = 1 - held;
                if let Some(mut file) = state.file.as_ref() {
                    file.seek(SeekFrom::Start((other * SLOT) as u64))
                        .and_then(|_| file.write_all(&slot))
                        .and_then(|()| file.sync_data())
                        .map_err(|e| LogError::io(&self.path, "write", e))?;
                }
                state.slot = Some(other);
            }
            None => {
                let mut both = slot;
                both.resize(2 * SLOT, 0);
                self.replace(&both)?;
                state.slot = Some(0);
                state.file = None;
            }
        }
        state.size = sth.size();
        Ok(())
    }

    /// Replace the file with `bytes`: a new file, synced, renamed over the
    /// old one, the directory synced ([`files::replace`]).
    fn replace(&self, bytes: &[u8]) -> Result<(), LogError> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        let temp = dir.join(std::format!(".{CHECKPOINT_FILE}.new"));
        Ok(files::replace(&self.path, &temp, bytes)?)
    }
}

/// One slot holding `sth` (its wire form), or `None` if it does not fit.
fn slot_bytes(sth: &[u8]) -> Option<Vec<u8>> {
    let len = u16::try_from(sth.len())
        .ok()
        .filter(|_| sth.len() + 2 <= SLOT)?;
    let mut slot = Vec::with_capacity(SLOT);
    slot.extend_from_slice(&len.to_be_bytes());
    slot.extend_from_slice(sth);
    slot.resize(SLOT, 0);
    Some(slot)
}

/// The latest checkpoint in `bytes` (the file at `path`) and its slot: of
/// the two-slot form, the larger of the slots that decode and verify under
/// `key`; else the one bare tree head of the first form.
fn latest(
    path: &Path,
    bytes: &[u8],
    key: &PublicKey,
) -> Result<(Option<usize>, SignedTreeHead), LogError> {
    let check = |head: &[u8]| -> Result<SignedTreeHead, String> {
        let sth = SignedTreeHead::decode(head).map_err(|e| std::format!("{e}"))?;
        sth.verify_with_key(key)
            .map_err(|e| std::format!("not signed by the log's key: {e}"))?;
        Ok(sth)
    };
    if bytes.len() != 2 * SLOT {
        return check(bytes)
            .map(|sth| (None, sth))
            .map_err(|e| LogError::not_a_log(path, e));
    }
    let mut best: Option<(usize, SignedTreeHead)> = None;
    let mut problems = Vec::new();
    for (i, slot) in bytes.chunks_exact(SLOT).enumerate() {
        let len = slot
            .get(..2)
            .and_then(|b| b.try_into().ok())
            .map_or(0, |b| usize::from(u16::from_be_bytes(b)));
        let found = slot
            .get(2..2 + len)
            .filter(|_| len > 0)
            .ok_or_else(|| String::from("no tree head"))
            .and_then(check);
        match found {
            Ok(sth) if best.as_ref().is_none_or(|(_, b)| b.size() < sth.size()) => {
                best = Some((i, sth));
            }
            Ok(_) => {}
            Err(e) => problems.push(std::format!("slot {i}: {e}")),
        }
    }
    best.map(|(i, sth)| (Some(i), sth))
        .ok_or_else(|| LogError::not_a_log(path, problems.join("; ")))
}
