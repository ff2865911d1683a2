//! [`StoreError`]: why a replay store could not be used, naming its file.

use alloc::{boxed::Box, string::String};
use core::fmt;
use std::path::{Path, PathBuf};

use super::{MAX_OWNER, STORE_FORMAT};
use herald_fs::FileError;

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
    /// The file is open elsewhere (another process, or another [`Store`](super::Store) of
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
    /// There is no store at the path: [`Store::open`](super::Store::open) never creates one.
    Missing {
        /// The path.
        path: PathBuf,
    },
    /// The path exists: [`Store::create`](super::Store::create) never replaces anything.
    Exists {
        /// The path.
        path: PathBuf,
    },
    /// The file exists but is empty (truncated, or never written): refused,
    /// never re-initialized, since a new store would forget every
    /// acknowledged nonce.
    Empty {
        /// The store file.
        path: PathBuf,
    },
    /// The store has no `meta` header or another format than
    /// [`STORE_FORMAT`].
    Format {
        /// The store file.
        path: PathBuf,
        /// The format found, if a header was.
        found: Option<u64>,
    },
    /// The store belongs to another owner (copied from elsewhere?).
    Foreign {
        /// The store file.
        path: PathBuf,
        /// The owner asked for.
        expected: String,
        /// The owner the store names.
        found: String,
    },
    /// The owner name is empty or longer than [`MAX_OWNER`] bytes.
    BadOwner {
        /// The store file.
        path: PathBuf,
    },
    /// The file is not usable as a local file: not regular, group- or
    /// world-writable, or the file system refused.
    File(FileError),
    /// A backend other than a redb file (a [`LiveState`](crate::live::state::LiveState)
    /// of its own, such as the conduit fleet's PostgreSQL database) failed.
    Backend {
        /// The backend (a database name, never a password).
        name: String,
        /// The operation that failed.
        operation: &'static str,
        /// What the backend reported.
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
    /// A redb failure of `operation` on the store at `path`, for callers
    /// writing their own tables in a store transaction
    /// ([`crate::Receiver::finish`]).
    pub fn storage(path: &Path, operation: &'static str, error: impl Into<redb::Error>) -> Self {
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

    pub(super) fn open(path: &Path, error: redb::DatabaseError) -> Self {
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

    /// The database file concerned (for [`StoreError::Backend`], its name).
    pub fn path(&self) -> &Path {
        match self {
            Self::Open { path, .. }
            | Self::Locked { path }
            | Self::Corrupted { path, .. }
            | Self::Missing { path }
            | Self::Exists { path }
            | Self::Empty { path }
            | Self::Format { path, .. }
            | Self::Foreign { path, .. }
            | Self::BadOwner { path }
            | Self::Storage { path, .. } => path,
            Self::File(e) => e.path(),
            Self::Backend { name, .. } => Path::new(name.as_str()),
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
            Self::Backend {
                name,
                operation,
                detail,
            } => write!(f, "{name}: {operation} failed: {detail}"),
            Self::Locked { path } => write!(
                f,
                "{}: the replay store is already open (another process or handle)",
                path.display()
            ),
            Self::Corrupted { path, detail } => write!(
                f,
                "{}: not a usable replay store (damaged or not one): {detail}; \
                 restore it from a backup (it is never re-created)",
                path.display()
            ),
            Self::Missing { path } => write!(
                f,
                "{}: no replay store here; create one explicitly (Store::create, `--init`)",
                path.display()
            ),
            Self::Exists { path } => write!(
                f,
                "{}: already exists; a new replay store is created only where nothing is",
                path.display()
            ),
            Self::Empty { path } => write!(
                f,
                "{}: the replay store is empty (0 bytes: truncated or never written); \
                 restore it from a backup. It is not re-created: an empty store would \
                 accept replays of every nonce it had acknowledged",
                path.display()
            ),
            Self::Format {
                path,
                found: Some(found),
            } => write!(
                f,
                "{}: replay store format {found}, this program reads format {STORE_FORMAT}",
                path.display()
            ),
            Self::Format { path, found: None } => write!(
                f,
                "{}: a redb file without a replay store header (format {STORE_FORMAT})",
                path.display()
            ),
            Self::Foreign {
                path,
                expected,
                found,
            } => write!(
                f,
                "{}: this replay store belongs to {found:?}, not {expected:?}; \
                 a store copied from elsewhere is not used",
                path.display()
            ),
            Self::BadOwner { path } => write!(
                f,
                "{}: a store owner is 1 to {MAX_OWNER} bytes",
                path.display()
            ),
            Self::File(e) => write!(f, "{e}"),
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
            Self::File(e) => Some(e),
            _ => None,
        }
    }
}
