//! What can go wrong with a log in a directory ([`super::Log`]), and what
//! opening one repaired after an interrupted append.

use alloc::string::String;
use core::fmt;
use std::io;
use std::path::{Path, PathBuf};

use super::SthError;
use super::leaf::MAX_LEAF_LEN;
use crate::report::hex;
use herald_fs::{FileError, Io};
use herald_merkle::ProofError;

/// The log could not be created, opened, appended to or asked for a proof.
/// Every variant about a file names it.
#[derive(Debug)]
#[non_exhaustive]
pub enum LogError {
    /// A file operation failed.
    Io(Io),
    /// The directory is not a log (a file is missing or not in its format).
    NotALog {
        /// The file concerned.
        path: PathBuf,
        /// What is wrong.
        problem: String,
    },
    /// Another process (or handle) has the log open: one writer at a time.
    /// Refused at once rather than waited for, so that a command against a
    /// log a running notary holds fails with this error instead of hanging.
    Locked {
        /// The leaf file.
        path: PathBuf,
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
        Self::Io(Io::new(path, action, error))
    }

    pub(crate) fn corrupted(path: &Path, offset: u64, problem: impl Into<String>) -> Self {
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
            Self::Io(io) => write!(f, "{}: {}: {}", io.path.display(), io.action, io.error),
            Self::NotALog { path, problem } => {
                write!(f, "{}: not a herald log: {problem}", path.display())
            }
            Self::Locked { path } => write!(
                f,
                "{}: the log is open in another process (one writer at a time); \
                 stop it or ask it (a conduit serves its log over HTTP)",
                path.display()
            ),
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
            Self::Io(io) => Some(&io.error),
            Self::File(e) => Some(e),
            _ => None,
        }
    }
}

/// What [`Log::open`](super::Log::open) repaired after an interrupted append. Nothing here
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
