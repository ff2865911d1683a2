//! The audit log (PROFILE.md P9, spec §5.3, EXT §2): leaves, signed tree
//! heads, inclusion and consistency proof objects, and a file-backed,
//! crash-safe, append-only log. The Merkle tree itself is
//! herald-merkle (RFC 9162).
//!
//! - [`leaf`]: the P9 leaf of an envelope, `{id, parent_hash, trace_hash,
//!   bucket}` and, with the sender's `log_metadata_consent`, `from`, `to`,
//!   `ts`.
//! - [`sth`]: the signed tree head `{log, size, root, ts}` signed with
//!   [`herald_core::STH_TAG`], and its wire form with `sig` (CLI.md).
//! - [`proof`]: the inclusion proof `{log, index, size, leaf, path, sth}`
//!   and the consistency proof `{log, size1, size2, path, sth1, sth2}`
//!   (CLI.md), and their verification against a keyring.
//! - [`file`](mod@file): [`Log`], a log in a directory (`herald log init`), with an
//!   fsync'd, checksummed leaf file that survives being killed at any
//!   moment without losing an acknowledged leaf.
//! - [`c2sp`]: the log as C2SP checkpoints and tiles, and tlog-policy
//!   quorums over its tree heads.
//!
//! Every object decodes strictly (P1 through [`herald_core::cbor`], exactly
//! the keys of its format, each of its type), so a decoded object
//! re-encodes to the bytes it came from. Decoding errors are
//! [`FormatError`]s naming the object and the field. The format and the
//! crash-safety argument are in `docs/audit-log.md`.

pub(crate) mod c2sp;
pub(crate) mod checkpoint;
mod config;
mod error;
pub(crate) mod file;
pub(crate) mod leaf;
mod leaves;
pub(crate) mod proof;
pub(crate) mod sth;

use alloc::{string::String, vec::Vec};
use core::fmt;

use herald_core::Sigil;
use herald_core::cbor::{DecodeError, ValueRef};

use herald_merkle::Hash;

pub use file::{Appended, Log, LogError, Recovery};
pub use leaf::Leaf;
pub use proof::{AuditObject, CheckError, ConsistencyProof, InclusionProof};
pub use sth::{SignedTreeHead, SthError, TreeHead};

/// Longest proof path accepted: a tree of at most `2^64 − 1` leaves has
/// proofs of at most 64 hashes (RFC 9162 §2.1.3, §2.1.4).
pub const MAX_PATH: usize = 64;

/// An audit-log object (leaf, tree head, proof) is not in its P9 / CLI.md
/// format. Every variant names the object, and all but the first four the
/// field.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FormatError {
    /// The bytes are not canonical CBOR (P1).
    Cbor {
        /// The object, e.g. `"inclusion proof"`.
        object: &'static str,
        /// What the strict decoder found.
        error: DecodeError,
    },
    /// The object is not a CBOR map.
    NotAMap {
        /// The object.
        object: &'static str,
        /// The CBOR type found instead.
        found: &'static str,
    },
    /// A map that is none of the objects expected (by its keys).
    UnknownObject {
        /// What was expected, e.g. `"audit log object"`.
        object: &'static str,
        /// The keys that would have told it apart.
        keys: &'static str,
    },
    /// The object is larger than its format allows.
    TooLarge {
        /// The object.
        object: &'static str,
        /// Its length in bytes.
        len: usize,
        /// The largest length allowed.
        max: usize,
    },
    /// A field of the format is absent.
    MissingField {
        /// The object.
        object: &'static str,
        /// The field.
        field: &'static str,
    },
    /// A key that is not part of the format.
    UnknownField {
        /// The object.
        object: &'static str,
        /// The key found.
        field: String,
    },
    /// A field has the wrong CBOR type or length.
    FieldType {
        /// The object.
        object: &'static str,
        /// The field.
        field: &'static str,
        /// What it must be.
        expected: &'static str,
    },
    /// A field has the right type but a value the format does not allow.
    FieldValue {
        /// The object.
        object: &'static str,
        /// The field.
        field: &'static str,
        /// What is wrong.
        problem: String,
    },
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Cbor { object, error } => {
                write!(f, "{object}: not canonical CBOR (P1): {error}")
            }
            Self::NotAMap { object, found } => {
                write!(f, "{object}: expected a CBOR map, found {found}")
            }
            Self::UnknownObject { object, keys } => {
                write!(f, "not an {object}: it has none of the keys {keys}")
            }
            Self::TooLarge { object, len, max } => {
                write!(f, "{object}: {len} bytes, more than the {max} allowed")
            }
            Self::MissingField { object, field } => {
                write!(f, "{object}: missing field `{field}`")
            }
            Self::UnknownField { object, field } => {
                write!(f, "{object}: unknown field `{field}`")
            }
            Self::FieldType {
                object,
                field,
                expected,
            } => write!(f, "{object}: field `{field}` must be {expected}"),
            Self::FieldValue {
                object,
                field,
                problem,
            } => write!(f, "{object}: field `{field}`: {problem}"),
        }
    }
}

impl core::error::Error for FormatError {}

/// Strictly decode `bytes` as one CBOR item (P1) for `object`.
pub(crate) fn decode_item<'a>(
    bytes: &'a [u8],
    object: &'static str,
) -> Result<ValueRef<'a>, FormatError> {
    herald_core::cbor::decode(bytes).map_err(|error| FormatError::Cbor { object, error })
}

/// Most keys any audit-log object has.
const MAX_KEYS: usize = 8;

/// A decoded map read field by field, with exactly the keys `allowed`. The
/// map is walked once; each field is then a lookup by position.
pub(crate) struct Fields<'a> {
    object: &'static str,
    allowed: &'static [&'static str],
    values: [Option<ValueRef<'a>>; MAX_KEYS],
}

impl<'a> Fields<'a> {
    /// `value` as a map of `object` whose keys are all in `allowed` (at
    /// most [`MAX_KEYS`] of them).
    pub(crate) fn new(
        value: ValueRef<'a>,
        object: &'static str,
        allowed: &'static [&'static str],
    ) -> Result<Self, FormatError> {
        let map = value.as_map().ok_or(FormatError::NotAMap {
            object,
            found: value.type_name(),
        })?;
        let mut values = [None; MAX_KEYS];
        for (key, item) in map.iter() {
            let slot = allowed
                .iter()
                .position(|k| *k == key)
                .and_then(|i| values.get_mut(i))
                .ok_or_else(|| FormatError::UnknownField {
                    object,
                    field: key.into(),
                })?;
            *slot = Some(item);
        }
        Ok(Self {
            object,
            allowed,
            values,
        })
    }

    /// The value of `field`, if present.
    pub(crate) fn optional(&self, field: &str) -> Option<ValueRef<'a>> {
        let i = self.allowed.iter().position(|k| *k == field)?;
        self.values.get(i).copied().flatten()
    }

    /// Whether `field` is present.
    pub(crate) fn has(&self, field: &str) -> bool {
        self.optional(field).is_some()
    }

    /// The value of `field`.
    pub(crate) fn required(&self, field: &'static str) -> Result<ValueRef<'a>, FormatError> {
        self.optional(field).ok_or(FormatError::MissingField {
            object: self.object,
            field,
        })
    }

    /// A type error on `field`.
    pub(crate) fn type_error(&self, field: &'static str, expected: &'static str) -> FormatError {
        FormatError::FieldType {
            object: self.object,
            field,
            expected,
        }
    }

    /// A value error on `field`.
    pub(crate) fn value_error(
        &self,
        field: &'static str,
        problem: impl Into<String>,
    ) -> FormatError {
        FormatError::FieldValue {
            object: self.object,
            field,
            problem: problem.into(),
        }
    }

    /// `field` as an unsigned integer.
    pub(crate) fn uint(&self, field: &'static str) -> Result<u64, FormatError> {
        self.required(field)?
            .as_unsigned()
            .ok_or_else(|| self.type_error(field, "an unsigned integer"))
    }

    /// `field` as a byte string.
    pub(crate) fn bytes(&self, field: &'static str) -> Result<&'a [u8], FormatError> {
        self.required(field)?
            .as_bytes()
            .ok_or_else(|| self.type_error(field, "a byte string"))
    }

    /// `field` as a 32-byte hash (P9: hashes are exactly 32 bytes).
    pub(crate) fn hash(&self, field: &'static str) -> Result<Hash, FormatError> {
        as_hash(self.required(field)?)
            .ok_or_else(|| self.type_error(field, "a 32-byte byte string"))
    }

    /// `field` as a sigil string (P2, strictly parsed).
    pub(crate) fn sigil(&self, field: &'static str) -> Result<Sigil, FormatError> {
        self.sigil_of(field, self.required(field)?)
    }

    /// `value` (the value of `field`) as a sigil string.
    pub(crate) fn sigil_of(
        &self,
        field: &'static str,
        value: ValueRef<'_>,
    ) -> Result<Sigil, FormatError> {
        let text = value
            .as_text()
            .ok_or_else(|| self.type_error(field, "a sigil (text)"))?;
        Sigil::parse(text).map_err(|e| self.value_error(field, std::format!("{text:?}: {e}")))
    }

    /// `field` as an array of at most [`MAX_PATH`] 32-byte hashes.
    pub(crate) fn path(&self, field: &'static str) -> Result<Vec<Hash>, FormatError> {
        const EXPECTED: &str = "an array of 32-byte byte strings";
        let items = self
            .required(field)?
            .as_array()
            .ok_or_else(|| self.type_error(field, EXPECTED))?;
        if items.len() > MAX_PATH {
            return Err(self.value_error(
                field,
                std::format!(
                    "{} hashes, more than the {MAX_PATH} any proof needs",
                    items.len()
                ),
            ));
        }
        items
            .iter()
            .map(|item| as_hash(item).ok_or_else(|| self.type_error(field, EXPECTED)))
            .collect()
    }
}

/// A 32-byte byte string as a hash.
fn as_hash(value: ValueRef<'_>) -> Option<Hash> {
    value.as_bytes().and_then(|b| Hash::try_from(b).ok())
}

/// `sha256(bytes)`.
pub(crate) fn sha256(bytes: &[u8]) -> Hash {
    use sha2::Digest;
    sha2::Sha256::digest(bytes).into()
}
