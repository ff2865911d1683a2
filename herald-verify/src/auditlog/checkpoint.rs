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

use alloc::vec::Vec;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use herald_core::PublicKey;

use super::file::LogError;
use super::sth::SignedTreeHead;
use crate::files;
use crate::merkle::Tree;

/// The checkpoint file in a log directory.
pub const CHECKPOINT_FILE: &str = "checkpoint";

/// Largest checkpoint file read: a signed tree head is about 150 bytes.
const MAX_LEN: u64 = 4096;

/// The size of the last checkpoint written, guarding its rewrite.
#[derive(Debug)]
pub(crate) struct Checkpoint {
    path: PathBuf,
    size: Mutex<u64>,
}

impl Checkpoint {
    /// Read and check the checkpoint of the log in `dir` whose key is `key`
    /// and whose leaves make `tree`; no file is size 0 (nothing signed).
    pub(crate) fn load(dir: &Path, key: &PublicKey, tree: &Tree) -> Result<Self, LogError> {
        let path = dir.join(CHECKPOINT_FILE);
        let size = match path.symlink_metadata() {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => 0,
            _ => {
                let bytes = files::read_private(&path, MAX_LEN, "checkpoint")?;
                let sth = SignedTreeHead::decode(&bytes)
                    .map_err(|e| LogError::not_a_log(&path, std::format!("{e}")))?;
                sth.verify_with_key(key).map_err(|e| {
                    LogError::not_a_log(&path, std::format!("not signed by the log's key: {e}"))
                })?;
                let root = tree.root_at(sth.size()).ok();
                if root.as_ref() != Some(sth.root()) {
                    return Err(LogError::RootNeverSigned {
                        checkpoint: path,
                        size: sth.size(),
                        leaves: tree.len(),
                    });
                }
                sth.size()
            }
        };
        Ok(Self {
            path,
            size: Mutex::new(size),
        })
    }

    /// The size of the largest tree head signed (0: none).
    pub(crate) fn size(&self) -> u64 {
        *self.size.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Record `sth` when it is larger than the checkpoint: written to a new
    /// file, synced, renamed over the old one, the directory synced.
    pub(crate) fn record(&self, sth: &SignedTreeHead) -> Result<(), LogError> {
        let mut size = self.size.lock().unwrap_or_else(|p| p.into_inner());
        if sth.size() <= *size {
            return Ok(());
        }
        let dir = self.path.parent().unwrap_or(Path::new("."));
        let temp = dir.join(std::format!(".{CHECKPOINT_FILE}.new"));
        let _ = std::fs::remove_file(&temp);
        let bytes: Vec<u8> = sth.encode();
        let mut file = files::create_private_file(&temp)?;
        file.write_all(&bytes)
            .and_then(|()| file.sync_all())
            .map_err(|e| LogError::io(&temp, "write", e))?;
        std::fs::rename(&temp, &self.path).map_err(|e| LogError::io(&self.path, "replace", e))?;
        if let Ok(d) = std::fs::File::open(dir) {
            let _ = d.sync_all();
        }
        *size = sth.size();
        Ok(())
    }
}
