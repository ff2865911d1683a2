//! The witness's record of the latest checkpoint it cosigned for each
//! origin (tlog-witness: "MUST persist the new checkpoint before
//! responding"), in one file, `DIR/witness.state`:
//!
//! ```text
//! herald-witness-state-v1
//! <size> <base64 root> <origin>
//! ...
//! ```
//!
//! Every update writes a temporary file, syncs it, renames it over the
//! state file and syncs the directory ([`herald_fs::replace`]), so after a
//! crash at any moment the file is either the old or the new record, never
//! a mix, and a cosignature is only ever sent after its record is durable. A state file that does
//! not parse stops the witness (it never silently restarts from zero, which
//! would let it cosign a rolled-back tree).
//!
//! The directory is created mode 0700 and the file written mode 0600
//! whatever the umask, and a directory group or others may write is
//! refused (herald-fs's rule, the one herald-verify keeps its own state
//! by): what the witness vouches for is its owner's alone to read and
//! rewrite.

use core::fmt;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use data_encoding::BASE64;
use herald_fs::FileError;
use herald_merkle::Hash;

/// The state file's name in the state directory.
pub const STATE_FILE: &str = "witness.state";

/// First line of the state file.
const MAGIC: &str = "herald-witness-state-v1";

/// The latest cosigned tree of one origin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Latest {
    /// Its size.
    pub size: u64,
    /// Its root.
    pub root: Hash,
}

/// The state could not be read or written.
#[derive(Debug)]
#[non_exhaustive]
pub enum StateError {
    /// The state directory or file could not be created, read or written
    /// owner-only (herald-fs's rule: [`FileError`]).
    File(FileError),
    /// The file is not a state file.
    Corrupt {
        /// The file.
        path: PathBuf,
        /// Its line (from 1).
        line: usize,
    },
}

impl From<FileError> for StateError {
    fn from(e: FileError) -> Self {
        StateError::File(e)
    }
}

impl fmt::Display for StateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StateError::File(e) => e.fmt(f),
            StateError::Corrupt { path, line } => write!(
                f,
                "{}: line {line} is not `<size> <base64 root> <origin>` (refusing to start: a \
                 witness that forgot its state could cosign a rolled-back log)",
                path.display()
            ),
        }
    }
}

impl std::error::Error for StateError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            StateError::File(e) => Some(e),
            StateError::Corrupt { .. } => None,
        }
    }
}

/// The latest cosigned tree of every origin, and where it is kept.
#[derive(Debug)]
pub struct State {
    dir: PathBuf,
    latest: BTreeMap<String, Latest>,
}

impl State {
    /// Open the state in `dir` (created if missing; a missing file is an
    /// empty state).
    pub fn open(dir: &Path) -> Result<Self, StateError> {
        herald_fs::create_private_dir(dir)?;
        let path = dir.join(STATE_FILE);
        let text = match fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(FileError::io(&path, "read", e).into()),
        };
        let mut latest = BTreeMap::new();
        if !text.is_empty() {
            let corrupt = |line| StateError::Corrupt {
                path: path.clone(),
                line,
            };
            let mut lines = text.lines();
            if lines.next() != Some(MAGIC) || !text.ends_with('\n') {
                return Err(corrupt(1));
            }
            for (i, line) in lines.enumerate() {
                let mut parts = line.splitn(3, ' ');
                let parsed = (|| {
                    let size = parts.next()?.parse().ok()?;
                    let root: Hash = BASE64
                        .decode(parts.next()?.as_bytes())
                        .ok()?
                        .try_into()
                        .ok()?;
                    let origin = parts.next().filter(|o| !o.is_empty())?;
                    Some((origin.to_owned(), Latest { size, root }))
                })();
                let (origin, l) = parsed.ok_or_else(|| corrupt(i + 2))?;
                latest.insert(origin, l);
            }
        }
        Ok(State {
            dir: dir.to_path_buf(),
            latest,
        })
    }

    /// The latest cosigned tree of `origin`, if any.
    #[must_use]
    pub fn latest(&self, origin: &str) -> Option<Latest> {
        self.latest.get(origin).copied()
    }

    /// Record `latest` for `origin`, durably, before returning.
    pub fn update(&mut self, origin: &str, latest: Latest) -> Result<(), StateError> {
        let mut next = self.latest.clone();
        next.insert(origin.to_owned(), latest);
        let mut text = format!("{MAGIC}\n");
        for (o, l) in &next {
            text.push_str(&format!("{} {} {o}\n", l.size, BASE64.encode(&l.root)));
        }
        let path = self.dir.join(STATE_FILE);
        let tmp = self.dir.join(format!("{STATE_FILE}.tmp"));
        herald_fs::replace(&path, &tmp, text.as_bytes())?;
        self.latest = next;
        Ok(())
    }
}

#[cfg(all(test, unix))]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(path: &Path) -> u32 {
        fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn state_is_owner_only_under_umask_022() {
        let old = rustix::process::umask(rustix::fs::Mode::from_raw_mode(0o022));
        let top = tempfile::tempdir().unwrap();
        let dir = top.path().join("state");
        let mut state = State::open(&dir).unwrap();
        state
            .update(
                "example.com/log",
                Latest {
                    size: 3,
                    root: [7; 32],
                },
            )
            .unwrap();
        rustix::process::umask(old);
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&dir.join(STATE_FILE)), 0o600);
        // A stale temporary file from a crash does not stop the next update.
        fs::write(dir.join(format!("{STATE_FILE}.tmp")), b"torn").unwrap();
        state
            .update(
                "example.com/log",
                Latest {
                    size: 4,
                    root: [8; 32],
                },
            )
            .unwrap();
        assert_eq!(mode(&dir.join(STATE_FILE)), 0o600);
        assert_eq!(
            State::open(&dir)
                .unwrap()
                .latest("example.com/log")
                .unwrap()
                .size,
            4
        );
        // A state directory others may write is refused, with its mode.
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o777)).unwrap();
        let err = State::open(&dir).unwrap_err();
        assert!(
            matches!(
                err,
                StateError::File(FileError::Exposed { mode: 0o777, .. })
            ),
            "{err}"
        );
        assert!(err.to_string().contains("chmod go-w"), "{err}");
        // A file where the directory should be is refused.
        let file = top.path().join("file");
        fs::write(&file, b"").unwrap();
        assert!(matches!(
            State::open(&file),
            Err(StateError::File(FileError::Io(herald_fs::Io {
                action: "create directory",
                ..
            })))
        ));
    }
}
