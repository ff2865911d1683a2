//! The `--trace FILE`: envelopes appended as a CBOR sequence (RFC 8742,
//! CLI.md *Files*), each written before anything depends on it and made
//! durable before the client is told anything that depends on it
//! (docs/mcp.md *Release order*).
//!
//! - Append only: the file is opened with `O_APPEND` and every envelope is
//!   one `write_all` ([`TraceFile::write`]); once it returns, the envelope
//!   is in the kernel's page cache and survives a crash of this process.
//!   [`TraceFile::sync`] (`fdatasync`) makes everything written so far
//!   durable, so one sync covers a call's request and its result.
//!   [`TraceFile::append`] is both (`--sync each`).
//! - A crash can only leave a torn last item (an append that was never
//!   acknowledged). Opening the file cuts such a tail back to the last whole
//!   envelope; anything else that does not split into CBOR items is refused
//!   rather than appended to, so a wrong path never corrupts another file.
//! - A failed write or append is rolled back to the previous length.

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use herald_core::cbor::MAX_NESTING;
use herald_verify::{Piece, SplitError, split_sequence};

/// Largest envelope the splitter accepts when reading the file back (P1).
const MAX_ITEM: usize = 1 << 20;

/// Why the trace file cannot be opened or appended to.
#[derive(Debug)]
#[non_exhaustive]
pub enum TraceFileError {
    /// The file system refused (open, read, write, sync, truncate).
    Io {
        /// The trace file.
        path: PathBuf,
        /// What was being done.
        action: &'static str,
        /// The error.
        error: std::io::Error,
    },
    /// The existing file is not a CBOR sequence of envelopes.
    NotATrace {
        /// The trace file.
        path: PathBuf,
        /// Offset of the first byte that cannot be split.
        offset: usize,
        /// Why.
        error: SplitError,
    },
}

impl fmt::Display for TraceFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io {
                path,
                action,
                error,
            } => write!(f, "{}: cannot {action}: {error}", path.display()),
            Self::NotATrace {
                path,
                offset,
                error,
            } => write!(
                f,
                "{}: not a trace file (a CBOR sequence of envelopes): at byte {offset}: {error}; \
                 refusing to append to it",
                path.display()
            ),
        }
    }
}

impl std::error::Error for TraceFileError {}

/// An open trace file.
#[derive(Debug)]
pub struct TraceFile {
    file: File,
    path: PathBuf,
    /// The end of the last whole envelope written.
    len: u64,
    /// How much of the file is known durable (`fdatasync`ed).
    synced: u64,
    /// Bytes cut from a torn tail when opening.
    recovered: u64,
}

impl TraceFile {
    /// Open (or create, mode 0600: tool arguments may be private) the trace
    /// file at `path`, cutting a torn last item left by a crash.
    pub fn open(path: &Path) -> Result<Self, TraceFileError> {
        let io = |action: &'static str| {
            move |error| TraceFileError::Io {
                path: path.to_path_buf(),
                action,
                error,
            }
        };
        let mut options = OpenOptions::new();
        options.read(true).append(true).create(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let file = options.open(path).map_err(io("open"))?;
        let bytes = std::fs::read(path).map_err(io("read"))?;
        let mut keep = bytes.len();
        for piece in split_sequence(&bytes, MAX_ITEM, MAX_NESTING) {
            match piece {
                Piece::Item { .. }
                | Piece::Unsplittable {
                    error: SplitError::Empty,
                    ..
                } => {}
                Piece::Unsplittable {
                    offset,
                    error: SplitError::Truncated,
                } => keep = offset,
                Piece::Unsplittable { offset, error } => {
                    return Err(TraceFileError::NotATrace {
                        path: path.to_path_buf(),
                        offset,
                        error,
                    });
                }
            }
        }
        let len = keep as u64;
        let recovered = (bytes.len() - keep) as u64;
        if recovered > 0 {
            file.set_len(len).map_err(io("cut the torn last item"))?;
            file.sync_data().map_err(io("sync"))?;
        }
        Ok(Self {
            file,
            path: path.to_path_buf(),
            len,
            // What was there when opened counts as durable: it is not ours
            // to vouch for, and a later sync covers it anyway.
            synced: len,
            recovered,
        })
    }

    /// Bytes of a torn last item cut when the file was opened (0 normally).
    pub fn recovered(&self) -> u64 {
        self.recovered
    }

    /// The file's length: the end of its last whole envelope.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the file holds no envelope yet.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes of the file known durable: everything before the last
    /// successful [`Self::sync`] (what was there when it was opened counts).
    pub fn durable(&self) -> u64 {
        self.synced
    }

    /// Write one envelope (`write(2)` returned: in the page cache, not yet
    /// durable); on failure the file is cut back to what it held before.
    pub fn write(&mut self, envelope: &[u8]) -> Result<(), TraceFileError> {
        match self.file.write_all(envelope) {
            Ok(()) => {
                self.len += envelope.len() as u64;
                Ok(())
            }
            Err(error) => Err(self.roll_back(self.len, "append an envelope", error)),
        }
    }

    /// Make everything written so far durable (`fdatasync`); nothing to do
    /// when it already is. A failure cuts nothing: what was written may
    /// or may not be on disk, and the caller must not act as if it were.
    pub fn sync(&mut self) -> Result<(), TraceFileError> {
        if self.synced == self.len {
            return Ok(());
        }
        self.file.sync_data().map_err(|error| TraceFileError::Io {
            path: self.path.clone(),
            action: "sync the file (fdatasync)",
            error,
        })?;
        self.synced = self.len;
        Ok(())
    }

    /// Append one envelope and make it durable, with everything written
    /// before it; on failure the file is cut back to what it held before
    /// this envelope.
    pub fn append(&mut self, envelope: &[u8]) -> Result<(), TraceFileError> {
        let before = self.len;
        self.write(envelope)?;
        match self.file.sync_data() {
            Ok(()) => {
                self.synced = self.len;
                Ok(())
            }
            Err(error) => Err(self.roll_back(before, "append an envelope", error)),
        }
    }

    /// Cut the file back to `len` after a failed append (best effort: a
    /// later open cuts a torn tail anyway) and name the failure.
    fn roll_back(
        &mut self,
        len: u64,
        action: &'static str,
        error: std::io::Error,
    ) -> TraceFileError {
        let _ = self.file.set_len(len);
        self.len = len;
        self.synced = self.synced.min(len);
        TraceFileError::Io {
            path: self.path.clone(),
            action,
            error,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// Two whole CBOR items (text strings), as envelopes would be.
    const ONE: &[u8] = b"\x63one";
    const TWO: &[u8] = b"\x63two";

    #[test]
    fn a_write_is_in_the_file_at_once_and_a_sync_makes_all_of_it_durable() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.herald");
        let mut file = TraceFile::open(&path).unwrap();
        file.write(ONE).unwrap();
        // In the file for any reader (a crash of this process keeps it),
        // not yet known durable.
        assert_eq!(std::fs::read(&path).unwrap(), ONE);
        assert_eq!((file.len(), file.durable()), (4, 0));
        file.write(TWO).unwrap();
        file.sync().unwrap();
        assert_eq!(file.durable(), 8);
        file.sync().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), [ONE, TWO].concat());
    }

    #[test]
    fn an_append_makes_what_was_written_before_it_durable_too() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.herald");
        let mut file = TraceFile::open(&path).unwrap();
        file.write(ONE).unwrap();
        file.append(TWO).unwrap();
        assert_eq!((file.len(), file.durable()), (8, 8));
        // What an existing file held when opened is not ours to sync.
        let reopened = TraceFile::open(&path).unwrap();
        assert_eq!((reopened.len(), reopened.durable()), (8, 8));
    }
}
