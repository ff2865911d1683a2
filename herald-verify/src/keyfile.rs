//! Secret key files (CLI.md: `NAME.key`, mode 0600, the format our own),
//! read and written in one place for every program that holds a key: the
//! `herald` command and the Python bindings.
//!
//! ```text
//! herald-secret-key-v1
//! <64 lowercase hex digits: the RFC 8032 seed>
//! ```
//!
//! The seed only ever lives in [`Zeroizing`] buffers of fixed size (no
//! reallocation leaves copies behind) and is never printed: error messages
//! name the file and what is wrong, not what it holds.

use alloc::string::String;
use core::fmt;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use data_encoding::HEXLOWER;
use herald_core::SigningKey;
use zeroize::Zeroizing;

use herald_fs::{FileError, create_private_file, open_regular};

/// First line of a key file.
pub(crate) const MAGIC: &str = "herald-secret-key-v1";

/// Length of a key file: the magic line and the seed's line.
pub(crate) const LEN: usize = MAGIC.len() + 1 + 64 + 1;

/// A key file is the magic line, 64 hex digits and newlines: far below this.
const MAX_LEN: usize = 256;

/// Whether `bytes` look like a secret key file (never to be sent anywhere).
pub fn is_key_file(bytes: &[u8]) -> bool {
    bytes.starts_with(MAGIC.as_bytes())
}

/// A secret key file could not be loaded. Every variant names the file;
/// none carries a byte of what it holds.
#[derive(Debug)]
#[non_exhaustive]
pub enum KeyFileError {
    /// The file could not be opened or read, or is not a regular file.
    File(FileError),
    /// The file is a public key file (a keyring line), not a secret key.
    PublicKeyFile(PathBuf),
    /// Group or others may read the file (CLI.md: refused).
    Exposed {
        /// The file.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// The file is not in the key file format.
    NotAKey {
        /// The file.
        path: PathBuf,
        /// What is wrong, in words.
        what: String,
    },
}

impl fmt::Display for KeyFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::File(FileError::Io(io)) => write!(f, "{}: {}", io.path.display(), io.error),
            Self::File(e) => e.fmt(f),
            Self::PublicKeyFile(path) => write!(
                f,
                "{}: is a public key file (a keyring line), not a secret key; \
                 give the NAME.key that `herald keygen` wrote beside it",
                path.display()
            ),
            Self::Exposed { path, mode } => write!(
                f,
                "{}: secret key file has mode {mode:04o}, readable by group or others; \
                 run `chmod 600 {}`",
                path.display(),
                path.display()
            ),
            Self::NotAKey { path, what } => write!(
                f,
                "{}: not a herald secret key file ({what})",
                path.display()
            ),
        }
    }
}

impl std::error::Error for KeyFileError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::File(e) => Some(e),
            _ => None,
        }
    }
}

/// The key file text for `key`, in a buffer wiped when dropped.
pub fn encode(key: &SigningKey) -> Zeroizing<[u8; LEN]> {
    let seed = key.to_seed();
    let mut text = Zeroizing::new([0u8; LEN]);
    let (magic, rest) = text.split_at_mut(MAGIC.len() + 1);
    let (line, newline) = magic.split_at_mut(MAGIC.len());
    line.copy_from_slice(MAGIC.as_bytes());
    newline.fill(b'\n');
    if let Some(digits) = rest.get_mut(..64) {
        HEXLOWER.encode_mut(seed.as_ref(), digits);
    }
    if let Some(last) = rest.last_mut() {
        *last = b'\n';
    }
    text
}

/// Write `key` to the new file `path` (it must not exist), mode 0600
/// whatever the umask, synced before returning.
pub fn save(path: &Path, key: &SigningKey) -> Result<(), FileError> {
    let mut file = create_private_file(path)?;
    let text = encode(key);
    file.write_all(text.as_ref())
        .and_then(|()| file.sync_all())
        .map_err(|e| {
            let _ = std::fs::remove_file(path);
            FileError::io(path, "write", e)
        })
}

/// Load the key of the secret key file `path`, refusing a file that group
/// or others may read (CLI.md) and anything but a regular file.
pub fn load(path: &Path) -> Result<SigningKey, KeyFileError> {
    // A regular file only: a FIFO would block `open` (docs/performance.md
    // *Memory under hostile input*, B6).
    let (mut file, meta) = open_regular(path).map_err(KeyFileError::File)?;
    let mut buf = Zeroizing::new([0u8; MAX_LEN]);
    let mut len = 0;
    while let Some(space) = buf.get_mut(len..) {
        if space.is_empty() {
            break;
        }
        match file.read(space) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(KeyFileError::File(FileError::io(path, "read", e))),
        }
    }
    let not_a_key = |what: &str| KeyFileError::NotAKey {
        path: path.to_path_buf(),
        what: what.into(),
    };
    let head = buf.get(..len).unwrap_or_default();
    // What the file is decides the message: a public key file given as the
    // secret key is named as such, not told to `chmod 600`.
    if head.starts_with(b"sigil:") || head.starts_with(b"#") {
        return Err(KeyFileError::PublicKeyFile(path.to_path_buf()));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = meta.permissions().mode() & 0o7777;
        if mode & 0o077 != 0 && is_key_file(head) {
            return Err(KeyFileError::Exposed {
                path: path.to_path_buf(),
                mode,
            });
        }
    }
    #[cfg(not(unix))]
    let _ = meta;
    if len == MAX_LEN {
        return Err(not_a_key("too long"));
    }
    let text = core::str::from_utf8(head).map_err(|_| not_a_key("not text"))?;
    let mut lines = text.lines();
    if lines.next() != Some(MAGIC) {
        return Err(not_a_key(&std::format!("the first line must be {MAGIC:?}")));
    }
    let seed = lines
        .next()
        .and_then(decode_seed)
        .ok_or_else(|| not_a_key("the second line must be 64 lowercase hex digits"))?;
    if lines.any(|l| !l.is_empty()) {
        return Err(not_a_key("unexpected lines after the seed"));
    }
    Ok(SigningKey::from_seed(&seed))
}

/// The seed of a line of exactly 64 lowercase hex digits.
fn decode_seed(line: &str) -> Option<Zeroizing<[u8; 32]>> {
    let mut seed = Zeroizing::new([0u8; 32]);
    if line.len() != 64 {
        return None;
    }
    HEXLOWER.decode_mut(line.as_bytes(), seed.as_mut()).ok()?;
    Some(seed)
}

#[cfg(all(test, unix))]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;
    use herald_core::SigilForm;
    use std::os::unix::fs::PermissionsExt;
    use std::string::ToString;

    #[test]
    fn round_trip_and_refusals() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k.key");
        let key = SigningKey::from_seed(&[7; 32]);
        save(&path, &key).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(
            load(&path).unwrap().sigil(SigilForm::Default),
            key.sigil(SigilForm::Default)
        );
        // No silent overwrite.
        assert!(save(&path, &key).is_err());
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        let err = load(&path).unwrap_err().to_string();
        assert!(err.contains("0640") && err.contains("k.key"), "{err}");
        let public = dir.path().join("k.pub");
        std::fs::write(&public, "sigil:abc ed25519 00\n").unwrap();
        assert!(matches!(load(&public), Err(KeyFileError::PublicKeyFile(_))));
    }

    #[test]
    fn seed_parsing_is_strict() {
        assert!(decode_seed(&"ab".repeat(32)).is_some());
        assert!(decode_seed(&"AB".repeat(32)).is_none());
        assert!(decode_seed(&"ab".repeat(31)).is_none());
    }
}
