//! Tool-definition pinning between sessions (docs/mcp.md *What is
//! pinned*): `--pin FILE` holds a tool set's digest (herald-agent's
//! [`ToolSet`], the one the session genesis attests) as JSON
//! `{"sha256": "<hex>", "tools": ["<name>", …]}`.

use std::fmt;
use std::path::{Path, PathBuf};

use data_encoding::HEXLOWER;
use herald_agent::mcp::ToolSet;
use herald_verify::Io;

/// What is wrong with a pin file.
#[derive(Debug)]
#[non_exhaustive]
pub(crate) enum PinError {
    /// The pin file cannot be read or written (its path and the operation
    /// named: the one `Io` shape).
    Io(Io),
    /// The pin file is not `{"sha256": "<64 hex>", …}`.
    BadPinFile(PathBuf),
}

impl fmt::Display for PinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io(e) => e.fmt(f),
            Self::BadPinFile(path) => write!(
                f,
                "{}: not a pin file (JSON {{\"sha256\": \"<64 lowercase hex>\", \"tools\": [..]}})",
                path.display()
            ),
        }
    }
}

impl std::error::Error for PinError {}

/// What a pin file said about a tool set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum PinCheck {
    /// The file did not exist: it now pins this tool set.
    Pinned,
    /// The tool set is the pinned one.
    Matches,
    /// The tool set differs from the pinned one, whose digest is this.
    Changed {
        /// The pinned digest, hex.
        pinned: String,
    },
}

/// Compare `set` with the pin file at `path`, writing it (mode 0644,
/// atomically) when it does not exist yet (trust on first use).
pub(crate) fn check_pin_file(path: &Path, set: &ToolSet) -> Result<PinCheck, PinError> {
    match std::fs::read(path) {
        Ok(bytes) => {
            let json: serde_json::Value = serde_json::from_slice(&bytes)
                .map_err(|_| PinError::BadPinFile(path.to_path_buf()))?;
            let pinned = json
                .get("sha256")
                .and_then(serde_json::Value::as_str)
                .filter(|h| h.len() == 64 && HEXLOWER.decode(h.as_bytes()).is_ok())
                .ok_or_else(|| PinError::BadPinFile(path.to_path_buf()))?;
            if pinned == set.hex() {
                Ok(PinCheck::Matches)
            } else {
                Ok(PinCheck::Changed {
                    pinned: pinned.to_owned(),
                })
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let text = serde_json::json!({"sha256": set.hex(), "tools": set.names});
            let tmp = path.with_extension("pin-tmp");
            std::fs::write(&tmp, format!("{text:#}\n"))
                .map_err(|e| PinError::Io(Io::new(&tmp, "write", e)))?;
            std::fs::rename(&tmp, path).map_err(|e| PinError::Io(Io::new(path, "replace", e)))?;
            Ok(PinCheck::Pinned)
        }
        Err(e) => Err(PinError::Io(Io::new(path, "read", e))),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn a_pin_file_that_cannot_be_read_names_it_and_the_operation() {
        let dir = tempfile::tempdir().unwrap();
        let set = ToolSet::of(&[json!({"name": "a"})]).unwrap();
        // A directory where the pin file should be: read fails, not NotFound.
        let err = check_pin_file(dir.path(), &set).unwrap_err();
        let text = err.to_string();
        assert!(
            text.starts_with(&format!("{}: cannot read: ", dir.path().display())),
            "{text}"
        );
    }

    #[test]
    fn pin_file_is_trust_on_first_use() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tools.pin");
        let set = ToolSet::of(&[json!({"name": "a"})]).unwrap();
        assert_eq!(check_pin_file(&path, &set).unwrap(), PinCheck::Pinned);
        assert_eq!(check_pin_file(&path, &set).unwrap(), PinCheck::Matches);
        let other = ToolSet::of(&[json!({"name": "b"})]).unwrap();
        assert_eq!(
            check_pin_file(&path, &other).unwrap(),
            PinCheck::Changed { pinned: set.hex() }
        );
        std::fs::write(&path, "nope").unwrap();
        assert!(matches!(
            check_pin_file(&path, &set),
            Err(PinError::BadPinFile(_))
        ));
    }
}
