//! Signed tree heads (PROFILE.md P9, CLI.md `herald log`).
//!
//! A tree head is the P1 map `{log: sigil, size: uint, root: bstr 32, ts:
//! uint}`; it is signed with Ed25519 over `herald.sth.v1 ‖ P1(map)`
//! ([`herald_core::STH_TAG`]; the tag is ASCII and a map starts with a head
//! byte ≥ 0xa0, so it cannot be confused with another tag, P5). The wire
//! form is the same map with `sig: bstr 64` added.
//!
//! Verification ([`SignedTreeHead::verify`]): `log` must be a key sigil in
//! default or long form (a reserved name never signs; a short sigil is
//! refused as an STH signer, P2 `short_sigil_misuse`), the resolver must know
//! the key it names, and the signature must verify strictly (P5).

use alloc::string::ToString;
use alloc::vec::Vec;
use core::fmt;

use herald_core::cbor::{Map, Value, ValueRef};
use herald_core::{KeyResolver, PublicKey, ReasonCode, STH_TAG, Sigil, SigningKey};

use super::{Fields, FormatError, decode_item};
use herald_merkle::Hash;

const OBJECT: &str = "signed tree head";
const KEYS: &[&str] = &["ts", "log", "sig", "root", "size"];

/// A signed tree head could not be made or does not verify (P9).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SthError {
    /// `log` is a short sigil, which may not sign a tree head (P2).
    ShortSigil {
        /// The `log` sigil.
        log: Sigil,
    },
    /// `log` is a reserved name, which never signs (P2).
    ReservedSigil {
        /// The `log` sigil.
        log: Sigil,
    },
    /// No key is known for `log`.
    UnknownLog {
        /// The `log` sigil.
        log: Sigil,
    },
    /// The signature does not verify with the key `log` names (P5).
    BadSignature {
        /// The `log` sigil.
        log: Sigil,
    },
    /// Signing: the key is not the one `log` names.
    WrongKey {
        /// The `log` sigil.
        log: Sigil,
        /// The sigil of the key offered.
        key: Sigil,
    },
}

impl SthError {
    /// The P11 reason code closest to this error.
    pub fn code(&self) -> ReasonCode {
        match self {
            Self::ShortSigil { .. } => ReasonCode::ShortSigilMisuse,
            Self::ReservedSigil { .. } => ReasonCode::ReservedSigil,
            Self::UnknownLog { .. } => ReasonCode::UnknownSigner,
            Self::BadSignature { .. } | Self::WrongKey { .. } => ReasonCode::BadSignature,
        }
    }
}

impl fmt::Display for SthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let code = self.code().name();
        match self {
            Self::ShortSigil { log } => write!(
                f,
                "{code}: {log} is a short sigil, which cannot sign a tree head (P2)"
            ),
            Self::ReservedSigil { log } => {
                write!(
                    f,
                    "{code}: {log} is a reserved name, which never signs (P2)"
                )
            }
            Self::UnknownLog { log } => write!(f, "{code}: no key for log {log} in the keyring"),
            Self::BadSignature { log } => write!(
                f,
                "{code}: the tree head signature does not verify with the key of {log}"
            ),
            Self::WrongKey { log, key } => {
                write!(f, "the key {key} is not the key of log {log}")
            }
        }
    }
}

impl core::error::Error for SthError {}

/// Check that `log` may sign a tree head (P2).
fn signer_allowed(log: &Sigil) -> Result<(), SthError> {
    if log.is_reserved() {
        return Err(SthError::ReservedSigil { log: *log });
    }
    if log.is_short() {
        return Err(SthError::ShortSigil { log: *log });
    }
    Ok(())
}

/// An unsigned tree head `{log, size, root, ts}` (P9).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TreeHead {
    log: Sigil,
    size: u64,
    root: Hash,
    ts: u64,
}

impl TreeHead {
    /// The head of the tree of `size` leaves with root `root` of log `log`,
    /// at `ts` (Unix seconds).
    pub fn new(log: Sigil, size: u64, root: Hash, ts: u64) -> Self {
        Self {
            log,
            size,
            root,
            ts,
        }
    }

    /// The log's sigil.
    pub fn log(&self) -> &Sigil {
        &self.log
    }

    /// The number of leaves.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The Merkle root `MTH(D[0:size])`.
    pub fn root(&self) -> &Hash {
        &self.root
    }

    /// When it was signed, Unix seconds.
    pub fn ts(&self) -> u64 {
        self.ts
    }

    fn to_map(&self) -> Map {
        let mut map = Map::new();
        map.insert("log", Value::text(self.log.to_string()));
        map.insert("size", Value::Unsigned(self.size));
        map.insert("root", Value::Bytes(self.root.to_vec()));
        map.insert("ts", Value::Unsigned(self.ts));
        map
    }

    /// The signed message: `herald.sth.v1 ‖ P1({log, size, root, ts})`.
    pub fn signed_message(&self) -> Vec<u8> {
        let body = Value::Map(self.to_map()).to_vec();
        let mut message = Vec::with_capacity(STH_TAG.len() + body.len());
        message.extend_from_slice(STH_TAG);
        message.extend_from_slice(&body);
        message
    }

    /// Sign with `key`, which must be the key `log` names; `log` must not be
    /// a short or reserved sigil (P2).
    pub fn sign(self, key: &SigningKey) -> Result<SignedTreeHead, SthError> {
        signer_allowed(&self.log)?;
        let public = key.public_key();
        if !self.log.names_key(public.as_bytes()) {
            return Err(SthError::WrongKey {
                log: self.log,
                key: public.sigil(herald_core::SigilForm::Default),
            });
        }
        let sig = key.sign(&self.signed_message());
        Ok(SignedTreeHead { head: self, sig })
    }
}

/// A tree head with its signature: the wire form `{log, size, root, ts,
/// sig}` (CLI.md).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignedTreeHead {
    head: TreeHead,
    sig: [u8; 64],
}

impl SignedTreeHead {
    /// A head and a signature claimed for it (check with [`Self::verify`]).
    pub fn from_parts(head: TreeHead, sig: [u8; 64]) -> Self {
        Self { head, sig }
    }

    /// The signed tree head fields.
    pub fn head(&self) -> &TreeHead {
        &self.head
    }

    /// The Ed25519 signature.
    pub fn sig(&self) -> &[u8; 64] {
        &self.sig
    }

    /// The log's sigil.
    pub fn log(&self) -> &Sigil {
        &self.head.log
    }

    /// The number of leaves.
    pub fn size(&self) -> u64 {
        self.head.size
    }

    /// The Merkle root.
    pub fn root(&self) -> &Hash {
        &self.head.root
    }

    /// When it was signed, Unix seconds.
    pub fn ts(&self) -> u64 {
        self.head.ts
    }

    /// The wire form as a P1 map.
    pub fn to_value(&self) -> Value {
        let mut map = self.head.to_map();
        map.insert("sig", Value::Bytes(self.sig.to_vec()));
        Value::Map(map)
    }

    /// The wire form's P1 bytes.
    pub fn encode(&self) -> Vec<u8> {
        self.to_value().to_vec()
    }

    /// Strictly decode the wire form (P1; exactly the five keys, each of
    /// its type). The signature is not checked: see [`Self::verify`].
    pub fn decode(bytes: &[u8]) -> Result<Self, FormatError> {
        Self::from_ref(decode_item(bytes, OBJECT)?, OBJECT)
    }

    /// Decode from a value already strictly decoded, naming it `object` in
    /// errors (a proof's `sth`, `sth1`, `sth2`).
    pub(crate) fn from_ref(value: ValueRef<'_>, object: &'static str) -> Result<Self, FormatError> {
        let f = Fields::new(value, object, KEYS)?;
        let log = f.sigil("log")?;
        let size = f.uint("size")?;
        let root = f.hash("root")?;
        let ts = f.uint("ts")?;
        let sig = <[u8; 64]>::try_from(f.bytes("sig")?)
            .map_err(|_| f.type_error("sig", "a 64-byte byte string"))?;
        Ok(Self {
            head: TreeHead {
                log,
                size,
                root,
                ts,
            },
            sig,
        })
    }

    /// Verify the signature with the key `keys` resolves for `log` (P2, P5,
    /// P9); the key is returned. A key bound to the sigil by an accepted
    /// molt (P8) is tried when the sigil's own key does not verify.
    pub fn verify(&self, keys: &impl KeyResolver) -> Result<PublicKey, SthError> {
        let log = self.head.log;
        signer_allowed(&log)?;
        let own = keys.resolve(&log);
        let molted = keys.resolve_molted(&log);
        if own.is_none() && molted.is_none() {
            return Err(SthError::UnknownLog { log });
        }
        let message = self.head.signed_message();
        for key in [own, molted].into_iter().flatten() {
            if key.verify(&message, &self.sig).is_ok() {
                return Ok(key);
            }
        }
        Err(SthError::BadSignature { log })
    }

    /// Verify the signature with `key`, which must be the key `log` names.
    pub fn verify_with_key(&self, key: &PublicKey) -> Result<(), SthError> {
        let log = self.head.log;
        signer_allowed(&log)?;
        if !log.names_key(key.as_bytes()) {
            return Err(SthError::WrongKey {
                log,
                key: key.sigil(herald_core::SigilForm::Default),
            });
        }
        key.verify(&self.head.signed_message(), &self.sig)
            .map_err(|_| SthError::BadSignature { log })
    }
}
