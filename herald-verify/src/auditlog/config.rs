//! The small files of a log directory: `log.pub`, the log's key (one
//! keyring line, read by the keyring parser), and `log.conf`, its settings.

use alloc::string::{String, ToString};
use std::io;
use std::path::{Path, PathBuf};

use herald_core::PublicKey;

use super::LogError;
use crate::keyring::Keyring;
use herald_fs as files;

/// The log's public key (a keyring line) in a log directory.
pub const KEY_FILE: &str = "log.pub";
/// The log's settings in a log directory.
pub const CONFIG_FILE: &str = "log.conf";
/// The first line of `log.conf`.
pub(crate) const CONFIG_MAGIC: &str = "herald-log-v1";
/// Largest `log.pub` or `log.conf` read: a key line or a path, far less.
const MAX_SMALL_FILE: u64 = 64 << 10;

/// A small log file (`log.conf`, `log.pub`) as text: regular, owner-only
/// writable, at most [`MAX_SMALL_FILE`] bytes.
pub(super) fn read_small(path: &Path) -> Result<String, LogError> {
    if let Err(e) = path.symlink_metadata()
        && e.kind() == io::ErrorKind::NotFound
    {
        return Err(LogError::not_a_log(path, "missing"));
    }
    let bytes = files::read_private(path, MAX_SMALL_FILE, "log file")?;
    String::from_utf8(bytes).map_err(|_| LogError::not_a_log(path, "not UTF-8 text"))
}

pub(super) fn read_config(path: &Path) -> Result<Option<PathBuf>, LogError> {
    let text = read_small(path)?;
    let mut lines = text.lines();
    if lines.next() != Some(CONFIG_MAGIC) {
        return Err(LogError::not_a_log(
            path,
            std::format!("the first line must be {CONFIG_MAGIC:?}"),
        ));
    }
    let mut key_path = None;
    for (i, line) in lines.enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        match line.strip_prefix("key ") {
            Some(p) if key_path.is_none() && !p.is_empty() => key_path = Some(PathBuf::from(p)),
            _ => {
                return Err(LogError::not_a_log(
                    path,
                    std::format!("line {}: expected `key <path>` (once)", i + 2),
                ));
            }
        }
    }
    Ok(key_path)
}

/// The log's key from `log.pub`: exactly one keyring line, read by the
/// keyring parser (CLI.md format, P2 sigil, P5 key).
pub(super) fn read_key(path: &Path) -> Result<PublicKey, LogError> {
    let text = read_small(path)?;
    let mut ring = Keyring::new();
    let keys = ring
        .parse(&text, &path.display().to_string())
        .map_err(|e| LogError::not_a_log(path, std::format!("{e}")))?;
    match (keys, ring.keys().next()) {
        (1, Some(key)) => Ok(key),
        _ => Err(LogError::not_a_log(path, "expected exactly one key line")),
    }
}
