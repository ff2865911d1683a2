//! Local files HERALD reads or keeps, by one rule: regular files only,
//! size caps checked before reading, owner-only modes for state, and state
//! replaced atomically and durably.
//!
//! Every reader of a keyring, key file, bundle, proof, log or store goes
//! through [`open_regular`] or [`read_capped`], so a FIFO, a device or a
//! directory is refused with its name instead of blocking `open` or reading
//! without end, and a file past its cap is refused before a byte of it is
//! read. State (herald-verify's audit log, replay and lifecycle store and
//! secret key files; herald-witness's record of what it cosigned) is
//! created owner-only whatever the umask ([`create_private_dir`],
//! [`create_private_file`]), and refused when group or others may write it
//! ([`check_private`]): a local writer could otherwise rewrite what the
//! state vouches for. A state file rewritten in place is [`replace`]d: a
//! new file synced, renamed over the old one, the directory synced, so a
//! crash at any moment leaves the old bytes or the new, never a mix.
//!
//! [`Io`] is the one shape of an I/O failure in HERALD's errors: the path,
//! the operation, the operating system's error.
#![forbid(unsafe_code)]

use std::fmt;
use std::fs::{File, FileType, Metadata};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

/// A local file could not be used. Every variant names the file.
#[derive(Debug)]
#[non_exhaustive]
pub enum FileError {
    /// The operating system refused an operation.
    Io(Io),
    /// The path names something other than a regular file: a FIFO, a
    /// socket, a device, a directory, ….
    NotRegular {
        /// The path.
        path: PathBuf,
        /// What it is, in words ("a FIFO").
        kind: &'static str,
    },
    /// The path, where a directory is expected, names something else.
    NotDirectory {
        /// The path.
        path: PathBuf,
        /// What it is, in words ("a regular file").
        kind: &'static str,
    },
    /// The file is larger than the cap for its kind.
    TooLarge {
        /// The file.
        path: PathBuf,
        /// What the file is (`keyring`, `bundle`, …).
        what: &'static str,
        /// The cap, bytes.
        limit: u64,
    },
    /// Group or others may write the file or directory.
    Exposed {
        /// The file or directory.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
}

/// The operating system refused `action` on `path`: the one shape of an
/// I/O failure in HERALD's errors ([`FileError::Io`], herald-verify's
/// `KeyringError` and `LogError`, herald-witness's `StateError`, …),
/// worded `PATH: cannot ACTION: ERROR` (CLI.md error lines). A path is
/// local: an error holding one is never sent to a remote client.
#[derive(Debug)]
#[non_exhaustive]
pub struct Io {
    /// The file or directory.
    pub path: PathBuf,
    /// What was being done (`open`, `read`, `create`, …).
    pub action: &'static str,
    /// The operating system's error.
    pub error: io::Error,
}

impl Io {
    /// `error` while `action` on `path`.
    pub fn new(path: &Path, action: &'static str, error: io::Error) -> Self {
        Self {
            path: path.to_path_buf(),
            action,
            error,
        }
    }
}

impl fmt::Display for Io {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: cannot {}: {}",
            self.path.display(),
            self.action,
            self.error
        )
    }
}

impl std::error::Error for Io {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

impl FileError {
    /// An I/O error while `action` on `path`.
    pub fn io(path: &Path, action: &'static str, error: io::Error) -> Self {
        Self::Io(Io::new(path, action, error))
    }

    /// The file concerned.
    pub fn path(&self) -> &Path {
        match self {
            Self::Io(Io { path, .. })
            | Self::NotRegular { path, .. }
            | Self::NotDirectory { path, .. }
            | Self::TooLarge { path, .. }
            | Self::Exposed { path, .. } => path,
        }
    }
}

impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io(io) => io.fmt(f),
            Self::NotRegular { path, kind } => {
                write!(f, "{}: {kind}, not a regular file", path.display())
            }
            Self::NotDirectory { path, kind } => {
                write!(f, "{}: {kind}, not a directory", path.display())
            }
            Self::TooLarge { path, what, limit } => write!(
                f,
                "{}: larger than the {what} limit of {limit} bytes",
                path.display()
            ),
            Self::Exposed { path, mode } => write!(
                f,
                "{}: mode {mode:04o} lets group or others write it; \
                 run `chmod go-w {}` if that is not intended",
                path.display(),
                path.display()
            ),
        }
    }
}

impl std::error::Error for FileError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io(io) => Some(&io.error),
            _ => None,
        }
    }
}

/// What a file type is, in words.
pub fn kind(file_type: &FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "a FIFO";
        }
        if file_type.is_socket() {
            return "a socket";
        }
        if file_type.is_char_device() {
            return "a character device";
        }
        if file_type.is_block_device() {
            return "a block device";
        }
    }
    if file_type.is_dir() {
        "a directory"
    } else if file_type.is_symlink() {
        "a symbolic link"
    } else if file_type.is_file() {
        "a regular file"
    } else {
        "not a regular file"
    }
}

/// Open the regular file at `path` for reading, never blocking: the type is
/// checked before `open` (a FIFO would block it until a writer came) and
/// again on the opened handle (the path may have changed in between).
pub fn open_regular(path: &Path) -> Result<(File, Metadata), FileError> {
    let before = std::fs::metadata(path).map_err(|e| FileError::io(path, "open", e))?;
    regular(path, &before)?;
    let file = File::open(path).map_err(|e| FileError::io(path, "open", e))?;
    let meta = file
        .metadata()
        .map_err(|e| FileError::io(path, "read metadata of", e))?;
    regular(path, &meta)?;
    Ok((file, meta))
}

fn regular(path: &Path, meta: &Metadata) -> Result<(), FileError> {
    if meta.is_file() {
        Ok(())
    } else {
        Err(FileError::NotRegular {
            path: path.to_path_buf(),
            kind: kind(&meta.file_type()),
        })
    }
}

/// The bytes of the regular file `path`, refusing one of more than `limit`
/// bytes before reading it (its size), and while reading (a file that grows).
pub fn read_capped(path: &Path, limit: u64, what: &'static str) -> Result<Vec<u8>, FileError> {
    let (file, meta) = open_regular(path)?;
    read_opened(path, file, &meta, limit, what)
}

/// [`read_capped`] for state: also refused when group or others may write
/// it ([`check_private`]), on the same open handle.
pub fn read_private(path: &Path, limit: u64, what: &'static str) -> Result<Vec<u8>, FileError> {
    let (file, meta) = open_regular(path)?;
    check_private(path, &meta)?;
    read_opened(path, file, &meta, limit, what)
}

/// The bytes of the opened file `path`, refusing more than `limit`.
fn read_opened(
    path: &Path,
    file: File,
    meta: &Metadata,
    limit: u64,
    what: &'static str,
) -> Result<Vec<u8>, FileError> {
    let too_large = || FileError::TooLarge {
        path: path.to_path_buf(),
        what,
        limit,
    };
    if meta.len() > limit {
        return Err(too_large());
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| FileError::io(path, "read", e))?;
    if bytes.len() as u64 > limit {
        return Err(too_large());
    }
    Ok(bytes)
}

/// Refuse `path` (whose metadata is `meta`) when group or others may write
/// it. On other platforms than Unix there are no mode bits to check.
pub fn check_private(path: &Path, meta: &Metadata) -> Result<(), FileError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = meta.permissions().mode() & 0o7777;
        if mode & 0o022 != 0 {
            return Err(FileError::Exposed {
                path: path.to_path_buf(),
                mode,
            });
        }
    }
    #[cfg(not(unix))]
    let _ = (path, meta);
    Ok(())
}

/// Create the directory `path` and any missing parents, each created one
/// mode 0700 whatever the umask; an existing `path` must be a directory
/// that group and others cannot write.
pub fn create_private_dir(path: &Path) -> Result<(), FileError> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder
        .create(path)
        .map_err(|e| FileError::io(path, "create directory", e))?;
    let meta = std::fs::metadata(path).map_err(|e| FileError::io(path, "open", e))?;
    if !meta.is_dir() {
        return Err(FileError::NotDirectory {
            path: path.to_path_buf(),
            kind: kind(&meta.file_type()),
        });
    }
    check_private(path, &meta)
}

/// Create the new file `path` (it must not exist), mode 0600 whatever the
/// umask, open for reading and writing.
pub fn create_private_file(path: &Path) -> Result<File, FileError> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true).write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options
        .open(path)
        .map_err(|e| FileError::io(path, "create", e))
}

/// Replace the file `path` with `bytes`, atomically and durably: `temp`
/// (in the same directory; one a crash left behind is removed first) is
/// created owner-only, written and synced, then renamed over `path`, and
/// the directory is synced, so after a crash at any moment `path` holds
/// the old bytes or the new, never a mix, and the new are on disk when
/// this returns.
pub fn replace(path: &Path, temp: &Path, bytes: &[u8]) -> Result<(), FileError> {
    match std::fs::remove_file(temp) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => {
            return Err(FileError::io(temp, "remove", e));
        }
        _ => {}
    }
    // The file is closed at the end of this block, before the rename.
    {
        let mut file = create_private_file(temp)?;
        file.write_all(bytes)
            .and_then(|()| file.sync_all())
            .map_err(|e| FileError::io(temp, "write", e))?;
    }
    std::fs::rename(temp, path).map_err(|e| FileError::io(path, "replace", e))?;
    sync_parent(path)
}

/// Sync the directory holding `path`, so that a rename or a creation in it
/// survives a crash. Only Unix opens a directory as a file; elsewhere the
/// rename is all there is.
fn sync_parent(path: &Path) -> Result<(), FileError> {
    #[cfg(unix)]
    {
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| FileError::io(dir, "sync", e))?;
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn private_modes_hold_under_any_umask() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("a/b");
        create_private_dir(&sub).unwrap();
        assert_eq!(mode(&sub), 0o700);
        assert_eq!(mode(&dir.path().join("a")), 0o700);
        let file = sub.join("f");
        drop(create_private_file(&file).unwrap());
        assert_eq!(mode(&file), 0o600);
        assert!(matches!(create_private_file(&file), Err(FileError::Io(_))));
        std::fs::set_permissions(&sub, std::fs::Permissions::from_mode(0o777)).unwrap();
        let err = create_private_dir(&sub).unwrap_err();
        assert!(
            matches!(err, FileError::Exposed { mode: 0o777, .. }),
            "{err}"
        );
        // A file where the directory should be: named, with what was tried.
        let err = create_private_dir(&file).unwrap_err();
        assert!(
            matches!(
                &err,
                FileError::Io(Io {
                    action: "create directory",
                    ..
                })
            ),
            "{err}"
        );
    }

    #[test]
    fn a_replaced_file_holds_the_new_bytes_owner_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state");
        let temp = dir.path().join("state.tmp");
        std::fs::write(&path, b"old").unwrap();
        // A temporary file a crash left behind, readable by all.
        std::fs::write(&temp, b"stale").unwrap();
        std::fs::set_permissions(&temp, std::fs::Permissions::from_mode(0o644)).unwrap();
        replace(&path, &temp, b"new").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        assert_eq!(mode(&path), 0o600);
        assert!(!temp.exists());
        let err = replace(&dir.path().join("no/such"), &dir.path().join("no/t"), b"x").unwrap_err();
        assert!(err.to_string().contains("cannot create"), "{err}");
    }

    #[test]
    fn non_regular_files_are_refused_not_opened() {
        let dir = tempfile::tempdir().unwrap();
        let err = read_capped(dir.path(), 10, "keyring").unwrap_err();
        assert!(err.to_string().contains("a directory"), "{err}");
        let err = read_capped(Path::new("/dev/zero"), 10, "keyring").unwrap_err();
        assert!(err.to_string().contains("a character device"), "{err}");
        let big = dir.path().join("big");
        std::fs::write(&big, [0u8; 11]).unwrap();
        let err = read_capped(&big, 10, "keyring").unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "{}: larger than the keyring limit of 10 bytes",
                big.display()
            )
        );
        assert_eq!(read_capped(&big, 11, "keyring").unwrap().len(), 11);
    }
}
