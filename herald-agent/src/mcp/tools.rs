//! Tool-definition pinning (docs/mcp.md *What is pinned*).
//!
//! A server's tool set is the `tools` of its complete `tools/list` result
//! (every page). Its digest is SHA-256 over the P1 encoding of the map
//! `{name: definition}`: P1 sorts the keys and canonicalises every value,
//! so the digest depends on what the tools are, not on their order in the
//! list or on the JSON's spacing or key order. Any change to a name, a
//! description, a schema or an annotation changes it.
//!
//! The digest goes into an `mcp_tools` attestation on the session genesis
//! (and `herald mcp proxy --pin FILE` holds it between sessions).

use core::fmt;

use data_encoding::HEXLOWER;
use herald_core::cbor::{Map, Value, to_value};
use sha2::{Digest, Sha256};

/// The attestation type naming a session's tool set (P12: an
/// uninterpreted `(type, value)` blob).
pub const TOOLS_ATTESTATION: &str = "mcp_tools";

/// What is wrong with a tool set.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolSetError {
    /// A tool definition is not an object with a text `name`.
    BadTool {
        /// Its position in the list.
        index: usize,
    },
    /// Two tools have the same name.
    DuplicateName(String),
    /// A definition holds a value P1 cannot encode (such as `-0.0`).
    Unencodable(String),
}

impl fmt::Display for ToolSetError {
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
        }
    }
}

impl std::error::Error for ToolSetError {}

/// A server's tool set, reduced to its digest and names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolSet {
    /// SHA-256 over P1 of `{name: definition}`.
    pub sha256: [u8; 32],
    /// The tool names, sorted.
    pub names: Vec<String>,
}

impl ToolSet {
    /// The tool set of these definitions (the `tools` of every page).
    pub fn of(tools: &[serde_json::Value]) -> Result<Self, ToolSetError> {
        let mut map = Map::new();
        for (index, tool) in tools.iter().enumerate() {
            let name = tool
                .get("name")
                .and_then(serde_json::Value::as_str)
                .ok_or(ToolSetError::BadTool { index })?;
            let value = to_value(tool).map_err(|e| ToolSetError::Unencodable(e.to_string()))?;
            if map.insert(name, value).is_some() {
                return Err(ToolSetError::DuplicateName(name.into()));
            }
        }
        let names = map.iter().map(|(k, _)| k.to_owned()).collect();
        let sha256 = Sha256::digest(Value::Map(map).to_vec()).into();
        Ok(Self { sha256, names })
    }

    /// The empty tool set (a server without tools).
    #[must_use]
    pub fn empty() -> Self {
        Self {
            sha256: Sha256::digest(Value::Map(Map::new()).to_vec()).into(),
            names: Vec::new(),
        }
    }

    /// The digest in lowercase hex.
    #[must_use]
    pub fn hex(&self) -> String {
        HEXLOWER.encode(&self.sha256)
    }

    /// The `mcp_tools` attestation value: `{sha256: bstr 32, tools: [text]}`.
    #[must_use]
    pub fn attestation(&self) -> Value {
        let mut m = Map::new();
        m.insert("sha256", Value::Bytes(self.sha256.to_vec()));
        m.insert("tools", names(&self.names));
        Value::Map(m)
    }
}

/// The P12 `tools` attestation value: the names as an array of text.
pub(super) fn names<S: AsRef<str>>(names: &[S]) -> Value {
    Value::Array(names.iter().map(|n| Value::text(n.as_ref())).collect())
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
        assert_eq!(ToolSet::of(&[]).unwrap(), ToolSet::empty());
    }

    #[test]
    fn bad_tool_sets_are_named() {
        let err = ToolSet::of(&[json!({"name": 3})]).unwrap_err();
        assert!(err.to_string().contains("tool 0"), "{err}");
        let err = ToolSet::of(&[json!({"name": "x"}), json!({"name": "x"})]).unwrap_err();
        assert!(err.to_string().contains("\"x\""), "{err}");
    }
}
