//! Secret key files (CLI.md: `NAME.key`, mode 0600, format our own).
//!
//! ```text
//! herald-secret-key-v1
//! <64 lowercase hex digits: the RFC 8032 seed>
//! ```
//!
//! The seed only ever lives in [`Zeroizing`] buffers of fixed size (no
//! reallocation leaves copies behind) and is never printed: error messages
//! name the file and what is wrong, not what it holds.

use std::io::Read;
use std::path::Path;

use herald_core::SigningKey;
use zeroize::Zeroizing;

use crate::error::CliError;
use crate::output::{Existing, write_atomic};

/// First line of a key file.
const MAGIC: &str = "herald-secret-key-v1";

/// A key file is the magic line, 64 hex digits and newlines: far below this.
const MAX_LEN: usize = 256;

/// Whether `bytes` look like a secret key file (never to be sent anywhere).
pub(crate) fn is_key_file(bytes: &[u8]) -> bool {
    bytes.starts_with(MAGIC.as_bytes())
}

/// Write `key`'s seed to `path` with mode 0600, atomically; an existing
/// file is kept unless `existing` is [`Existing::Replace`].
pub(crate) fn write(path: &Path, key: &SigningKey, existing: Existing) -> Result<(), CliError> {
    let seed = key.to_seed();
    let mut text = Zeroizing::new([0u8; MAGIC.len() + 1 + 64 + 1]);
    let (magic, rest) = text.split_at_mut(MAGIC.len() + 1);
    magic[..MAGIC.len()].copy_from_slice(MAGIC.as_bytes());
    magic[MAGIC.len()] = b'\n';
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for (i, b) in seed.iter().enumerate() {
        rest[2 * i] = DIGITS[usize::from(b >> 4)];
        rest[2 * i + 1] = DIGITS[usize::from(b & 0xf)];
    }
    rest[64] = b'\n';
    write_atomic(path, text.as_ref(), 0o600, existing)
}

/// Load the key of the secret key file `path`, refusing a file that group
/// or others may read (CLI.md).
pub(crate) fn load(path: &Path) -> Result<SigningKey, CliError> {
    let name = path.display();
    // A regular file only: a FIFO would block `open` (issue 14, B6).
    let (mut file, meta) = herald_verify::files::open_regular(path).map_err(CliError::file)?;
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
            Err(e) => return Err(CliError::io(path, &e)),
        }
    }
    let not_a_key =
        |what: &str| CliError::new(format!("{name}: not a herald secret key file ({what})"));
    let head = buf.get(..len).unwrap_or_default();
    // What the file is decides the message: a public key file given as the
    // secret key is named as such, not told to `chmod 600` (issue 18).
    if head.starts_with(b"sigil:") || head.starts_with(b"#") {
        return Err(CliError::new(format!(
            "{name}: is a public key file (a keyring line), not a secret key; \
             give the NAME.key that `herald keygen` wrote beside it"
        )));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = meta.permissions().mode() & 0o7777;
        if mode & 0o077 != 0 && head.starts_with(MAGIC.as_bytes()) {
            return Err(CliError::new(format!(
                "{name}: secret key file has mode {mode:04o}, readable by group or others; \
                 run `chmod 600 {name}`"
            )));
        }
    }
    if len == MAX_LEN {
        return Err(not_a_key("too long"));
    }
    let text = std::str::from_utf8(buf.get(..len).unwrap_or_default())
        .map_err(|_| not_a_key("not text"))?;
    let mut lines = text.lines();
    if lines.next() != Some(MAGIC) {
        return Err(not_a_key(&format!("the first line must be {MAGIC:?}")));
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

fn decode_seed(line: &str) -> Option<Zeroizing<[u8; 32]>> {
    let digits = line.as_bytes();
    if digits.len() != 64 {
        return None;
    }
    let nibble = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    let mut seed = Zeroizing::new([0u8; 32]);
    for (out, pair) in seed.iter_mut().zip(digits.chunks_exact(2)) {
        *out = (nibble(*pair.first()?)? << 4) | nibble(*pair.get(1)?)?;
    }
    Some(seed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use herald_core::SigilForm;

    #[test]
    fn round_trip_and_refusals() {
        let dir = std::env::temp_dir().join(format!(
            "herald-keyfile-{}",
            crate::output::random_suffix().unwrap()
        ));
        std::fs::create_dir(&dir).unwrap();
        let path = dir.join("k.key");
        let key = SigningKey::from_seed(&[7; 32]);
        write(&path, &key, Existing::Keep).unwrap();
        let back = load(&path).unwrap();
        assert_eq!(
            back.sigil(SigilForm::Default),
            key.sigil(SigilForm::Default)
        );
        // No silent overwrite.
        assert!(write(&path, &key, Existing::Keep).is_err());
        write(&path, &key, Existing::Replace).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
            let err = load(&path).unwrap_err().to_string();
            assert!(err.contains("0640") && err.contains("k.key"), "{err}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn seed_parsing_is_strict() {
        assert!(decode_seed(&"ab".repeat(32)).is_some());
        assert!(decode_seed(&"AB".repeat(32)).is_none());
        assert!(decode_seed(&"ab".repeat(31)).is_none());
    }
}
