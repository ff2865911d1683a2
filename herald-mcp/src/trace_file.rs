//! The `--trace FILE`: envelopes appended as a CBOR sequence (RFC 8742,
//! CLI.md *Files*), durable before anything depends on them.
//!
//! - Append only: the file is opened with `O_APPEND` and every envelope is
//!   one `write_all` followed by `sync_data`, so an envelope the wrapper has
//!   acted on (a request forwarded, a result released) is on disk first.
//! - A crash can only leave a torn last item (an append that was never
//!   acknowledged). Opening the file cuts such a tail back to the last whole
//!   envelope; anything else that does not split into CBOR items is refused
//!   rather than appended to, so a wrong path never corrupts another file.
//! - A failed append is rolled back to the previous length.

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use herald_core::cbor::MAX_NESTING;
use herald_verify::sequence::{Piece, SplitError, split};

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
    len: u64,
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
        for piece in split(&bytes, MAX_ITEM, MAX_NESTING) {
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

    /// Append one envelope and make it durable; on failure the file is
    /// cut back to what it held before.
    pub fn append(&mut self, envelope: &[u8]) -> Result<(), TraceFileError> {
        let done = self
            .file
            .write_all(envelope)
            .and_then(|()| self.file.sync_data());
        match done {
            Ok(()) => {
                self.len += envelope.len() as u64;
                Ok(())
            }
            Err(error) => {
                // Best effort: a later open cuts a torn tail anyway.
                let _ = self.file.set_len(self.len);
                Err(TraceFileError::Io {
                    path: self.path.clone(),
                    action: "append an envelope",
                    error,
                })
            }
        }
    }
}
