//! Tool-definition pinning (docs/mcp.md *What is pinned*).
//!
//! A server's tool set is the `tools` of its complete `tools/list` result
//! (every page). Its digest is SHA-256 over the P1 encoding of the map
//! `{name: definition}`: P1 sorts the keys and canonicalises every value,
//! so the digest depends on what the tools are, not on their order in the
//! list or on the JSON's spacing or key order. Any change to a name, a
//! description, a schema or an annotation changes it.
//!
//! The digest goes into an `mcp_tools` attestation on the session genesis;
//! `--pin FILE` holds it between sessions as JSON
//! `{"sha256": "<hex>", "tools": ["<name>", …]}`.

use std::fmt;
use std::path::{Path, PathBuf};

use data_encoding::HEXLOWER;
use herald_core::cbor::{Map, Value, to_value};
use herald_verify::Io;
use sha2::{Digest, Sha256};

/// The attestation type naming a session's tool set (P12: an
/// uninterpreted `(type, value)` blob).
pub(crate) const TOOLS_ATTESTATION: &str = "mcp_tools";

/// What is wrong with a tool set or a pin file.
#[derive(Debug)]
#[non_exhaustive]
pub(crate) enum PinError {
    /// A tool definition is not an object with a text `name`.
    BadTool {
        /// Its position in the list.
        index: usize,
    },
    /// Two tools have the same name.
    DuplicateName(String),
    /// A definition holds a value P1 cannot encode (such as `-0.0`).
    Unencodable(String),
    /// The pin file cannot be read or written (its path and the operation
    /// named: the one `Io` shape).
    Io(Io),
    /// The pin file is not `{"sha256": "<64 hex>", …}`.
    BadPinFile(PathBuf),
}

impl fmt::Display for PinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BadTool { index } => {
                write!(
                    f,
                    "tools/list: tool {index} is not an object with a text name"
                )
            }
            Self::DuplicateName(name) => write!(f, "tools/list: two tools are named {name:?}"),
            Self::Unencodable(e) => write!(f, "tools/list: a definition cannot be signed: {e}"),
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

/// A server's tool set, reduced to its digest and names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ToolSet {
    /// SHA-256 over P1 of `{name: definition}`.
    pub sha256: [u8; 32],
    /// The tool names, sorted.
    pub names: Vec<String>,
}

impl ToolSet {
    /// The tool set of these definitions (the `tools` of every page).
    pub(crate) fn of(tools: &[serde_json::Value]) -> Result<Self, PinError> {
        let mut map = Map::new();
        for (index, tool) in tools.iter().enumerate() {
            let name = tool
                .get("name")
                .and_then(serde_json::Value::as_str)
                .ok_or(PinError::BadTool { index })?;
            let value = to_value(tool).map_err(|e| PinError::Unencodable(e.to_string()))?;
            if map.insert(name, value).is_some() {
                return Err(PinError::DuplicateName(name.into()));
            }
        }
        let names = map.iter().map(|(k, _)| k.to_owned()).collect();
        let sha256 = Sha256::digest(Value::Map(map).to_vec()).into();
        Ok(Self { sha256, names })
    }

    /// The empty tool set (a server without tools).
    pub(crate) fn empty() -> Self {
        Self {
            sha256: Sha256::digest(Value::Map(Map::new()).to_vec()).into(),
            names: Vec::new(),
        }
    }

    /// The digest in lowercase hex.
    pub(crate) fn hex(&self) -> String {
        HEXLOWER.encode(&self.sha256)
    }

    /// The `mcp_tools` attestation value: `{sha256: bstr 32, tools: [text]}`.
    pub(crate) fn attestation(&self) -> Value {
        let mut m = Map::new();
        m.insert("sha256", Value::Bytes(self.sha256.to_vec()));
        m.insert(
            "tools",
            Value::Array(self.names.iter().map(|n| Value::text(n.as_str())).collect()),
        );
        Value::Map(m)
    }
}

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
    fn digest_ignores_order_and_sees_every_change() {
        let a = json!({"name": "a", "inputSchema": {"type": "object"}});
        let b = json!({"name": "b", "description": "B"});
        let one = ToolSet::of(&[a.clone(), b.clone()]).unwrap();
        let two = ToolSet::of(&[b, a.clone()]).unwrap();
        assert_eq!(one, two);
        assert_eq!(one.names, ["a", "b"]);
        let changed = ToolSet::of(&[a, json!({"name": "b", "description": "B!"})]).unwrap();
        assert_ne!(one.sha256, changed.sha256);
    }

    #[test]
    fn bad_tool_sets_are_named() {
        let err = ToolSet::of(&[json!({"name": 3})]).unwrap_err();
        assert!(err.to_string().contains("tool 0"), "{err}");
        let err = ToolSet::of(&[json!({"name": "x"}), json!({"name": "x"})]).unwrap_err();
        assert!(err.to_string().contains("\"x\""), "{err}");
    }

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
