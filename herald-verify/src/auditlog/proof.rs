//! Inclusion and consistency proof objects (PROFILE.md P9, CLI.md
//! `herald log`), and their verification.
//!
//! - Inclusion proof: the P1 map `{log: sigil, index: uint, size: uint,
//!   leaf: bstr (the P9 leaf bytes), path: [bstr 32], sth: STH}`.
//! - Consistency proof: `{log: sigil, size1: uint, size2: uint, path: [bstr
//!   32], sth1: STH, sth2: STH}`.
//!
//! Each proof names its log and sizes twice (in itself and in its signed
//! tree heads); verification requires them to agree, so no field of a
//! proof is taken on trust: [`InclusionProof::verify`] checks that `log` is
//! the `sth`'s log (the same sigil string), that `size` is the `sth`'s
//! size, the `sth` signature against a keyring (P2, P5), and the RFC 9162
//! §2.1.3.2 path from `sha256(0x00 ‖ leaf)` at `index` to the signed root.
//! [`ConsistencyProof::verify`] checks both tree heads, that both are of
//! the proof's log, that `size1`/`size2` are theirs, and the RFC 9162
//! §2.1.4.2 path between the two signed roots (`0 < size1 ≤ size2`, P9).
//! Two tree heads signed by one log that no consistency proof joins are a
//! split view (spec §5.3): the log's own signatures prove it.

use alloc::vec::Vec;
use core::fmt;

use herald_core::cbor::{Map, Value};
use herald_core::{EnvelopeRef, KeyResolver, PublicKey, Sigil};

use super::{Fields, FormatError, Leaf, SignedTreeHead, SthError, decode_item};
use herald_merkle::{self as merkle, Hash, ProofError};

/// Largest proof object a reader accepts, bytes: an inclusion proof holds
/// a leaf of at most [`super::leaf::MAX_LEAF_LEN`] bytes, a path of at most
/// [`super::MAX_PATH`] hashes (2 KiB) and a signed tree head of about 200
/// bytes; a consistency proof two heads and a path. 16 KiB is far above
/// either, and a file past it is refused before it is read (the memory bound).
pub const MAX_PROOF_LEN: u64 = 16 << 10;

const INCLUSION: &str = "inclusion proof";
const INCLUSION_KEYS: &[&str] = &["log", "sth", "leaf", "path", "size", "index"];
const CONSISTENCY: &str = "consistency proof";
const CONSISTENCY_KEYS: &[&str] = &["log", "path", "sth1", "sth2", "size1", "size2"];

/// A proof does not hold (P9). Each variant says which part failed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CheckError {
    /// A signed tree head does not verify.
    Sth {
        /// `sth`, `sth1` or `sth2`.
        which: &'static str,
        /// Why.
        error: SthError,
    },
    /// The proof's `log` is not its tree head's.
    LogMismatch {
        /// `sth`, `sth1` or `sth2`.
        which: &'static str,
        /// The proof's `log`.
        proof: Sigil,
        /// The tree head's `log`.
        sth: Sigil,
    },
    /// A size in the proof is not its tree head's size.
    SizeMismatch {
        /// The proof's field (`size`, `size1`, `size2`).
        field: &'static str,
        /// Its value.
        proof: u64,
        /// The tree head's size.
        sth: u64,
    },
    /// The Merkle path does not lead to the signed root(s) (RFC 9162).
    Path(ProofError),
    /// The envelope offered is not the one the leaf records.
    Envelope(EnvelopeMismatch),
}

/// How an envelope differs from a leaf (see [`InclusionProof::matches`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EnvelopeMismatch {
    /// The envelope's `id` is not `sha256(body)` (P4): it names no envelope.
    IdNotBody,
    /// The envelope's id is not the leaf's.
    Id,
    /// Same id, but the leaf's other fields are not the envelope's leaf
    /// (hashes, bucket, or the consented metadata).
    Fields,
}

impl CheckError {
    /// The stable name of the part that failed, as the conformance vectors
    /// name it (`vectors/README.md`): `sth_signature`, `unknown_log`,
    /// `short_sigil`, `reserved_sigil`, `log_mismatch`, `size_mismatch`,
    /// `path`, `envelope_mismatch`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Sth { error, .. } => match error {
                SthError::ShortSigil { .. } => "short_sigil",
                SthError::ReservedSigil { .. } => "reserved_sigil",
                SthError::UnknownLog { .. } => "unknown_log",
                SthError::BadSignature { .. } | SthError::WrongKey { .. } => "sth_signature",
            },
            Self::LogMismatch { .. } => "log_mismatch",
            Self::SizeMismatch { .. } => "size_mismatch",
            Self::Path(_) => "path",
            Self::Envelope(_) => "envelope_mismatch",
        }
    }
}

impl fmt::Display for CheckError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Sth { which, error } => write!(f, "`{which}`: {error}"),
            Self::LogMismatch { which, proof, sth } => write!(
                f,
                "the proof is for log {proof} but `{which}` is signed tree head of log {sth}"
            ),
            Self::SizeMismatch { field, proof, sth } => write!(
                f,
                "`{field}` is {proof} but its signed tree head is of size {sth}"
            ),
            Self::Path(e) => write!(f, "Merkle path: {e}"),
            Self::Envelope(EnvelopeMismatch::IdNotBody) => {
                f.write_str("the envelope's id is not the hash of its body (id_mismatch, P4)")
            }
            Self::Envelope(EnvelopeMismatch::Id) => {
                f.write_str("the envelope's id is not the leaf's id")
            }
            Self::Envelope(EnvelopeMismatch::Fields) => f.write_str(
                "the leaf has the envelope's id but not its parent/trace hashes, bucket or \
                 consented metadata",
            ),
        }
    }
}

impl core::error::Error for CheckError {}

fn check_sth(
    sth: &SignedTreeHead,
    which: &'static str,
    log: &Sigil,
    keys: &impl KeyResolver,
) -> Result<PublicKey, CheckError> {
    if sth.log() != log {
        return Err(CheckError::LogMismatch {
            which,
            proof: *log,
            sth: *sth.log(),
        });
    }
    sth.verify(keys)
        .map_err(|error| CheckError::Sth { which, error })
}

fn check_size(field: &'static str, proof: u64, sth: &SignedTreeHead) -> Result<(), CheckError> {
    if proof == sth.size() {
        Ok(())
    } else {
        Err(CheckError::SizeMismatch {
            field,
            proof,
            sth: sth.size(),
        })
    }
}

fn path_value(path: &[Hash]) -> Value {
    Value::Array(path.iter().map(|h| Value::Bytes(h.to_vec())).collect())
}

/// Proof that a leaf is in a log's tree of a given size (P9, CLI.md).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InclusionProof {
    log: Sigil,
    index: u64,
    size: u64,
    leaf: Leaf,
    leaf_bytes: Vec<u8>,
    path: Vec<Hash>,
    sth: SignedTreeHead,
}

impl InclusionProof {
    /// Assemble a proof; the log and size are the tree head's.
    pub fn new(index: u64, leaf: Leaf, path: Vec<Hash>, sth: SignedTreeHead) -> Self {
        Self {
            log: *sth.log(),
            index,
            size: sth.size(),
            leaf_bytes: leaf.encode(),
            leaf,
            path,
            sth,
        }
    }

    /// The log's sigil, as the proof states it.
    pub fn log(&self) -> &Sigil {
        &self.log
    }

    /// The leaf's index.
    pub fn index(&self) -> u64 {
        self.index
    }

    /// The tree size, as the proof states it.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The leaf.
    pub fn leaf(&self) -> &Leaf {
        &self.leaf
    }

    /// The leaf bytes (P9).
    pub fn leaf_bytes(&self) -> &[u8] {
        &self.leaf_bytes
    }

    /// The audit path, leaf side first (RFC 9162 §2.1.3.1).
    pub fn path(&self) -> &[Hash] {
        &self.path
    }

    /// The signed tree head the path leads to.
    pub fn sth(&self) -> &SignedTreeHead {
        &self.sth
    }

    /// The proof as a P1 map.
    pub fn to_value(&self) -> Value {
        let mut map = Map::new();
        map.insert(
            "log",
            Value::text(alloc::string::ToString::to_string(&self.log)),
        );
        map.insert("index", Value::Unsigned(self.index));
        map.insert("size", Value::Unsigned(self.size));
        map.insert("leaf", Value::Bytes(self.leaf_bytes.clone()));
        map.insert("path", path_value(&self.path));
        map.insert("sth", self.sth.to_value());
        Value::Map(map)
    }

    /// The proof's P1 bytes.
    pub fn encode(&self) -> Vec<u8> {
        self.to_value().to_vec()
    }

    /// Strictly decode a proof (P1; exactly its keys, each of its type;
    /// `leaf` a P9 leaf; `sth` a signed tree head). Nothing is verified yet.
    pub fn decode(bytes: &[u8]) -> Result<Self, FormatError> {
        Self::from_fields(&Fields::new(
            decode_item(bytes, INCLUSION)?,
            INCLUSION,
            INCLUSION_KEYS,
        )?)
    }

    fn from_fields(f: &Fields<'_>) -> Result<Self, FormatError> {
        let leaf_bytes = f.bytes("leaf")?;
        let leaf = Leaf::decode(leaf_bytes)
            .map_err(|e| f.value_error("leaf", std::format!("not a P9 leaf: {e}")))?;
        Ok(Self {
            log: f.sigil("log")?,
            index: f.uint("index")?,
            size: f.uint("size")?,
            leaf,
            leaf_bytes: leaf_bytes.to_vec(),
            path: f.path("path")?,
            sth: SignedTreeHead::from_ref(f.required("sth")?, "inclusion proof `sth`")?,
        })
    }

    /// Verify the proof against `keys` (see the module documentation); the
    /// log's key is returned.
    pub fn verify(&self, keys: &impl KeyResolver) -> Result<PublicKey, CheckError> {
        let key = check_sth(&self.sth, "sth", &self.log, keys)?;
        check_size("size", self.size, &self.sth)?;
        merkle::verify_inclusion(
            &merkle::leaf_hash(&self.leaf_bytes),
            self.index,
            self.size,
            &self.path,
            self.sth.root(),
        )
        .map_err(CheckError::Path)?;
        Ok(key)
    }

    /// Whether the leaf is `envelope`'s leaf (P9): its id is the leaf's id
    /// and the hash of its body, and the leaf bytes are exactly
    /// [`Leaf::from_envelope`]'s. The envelope's signatures are not checked
    /// here (`herald verify` does that).
    pub fn matches(&self, envelope: &EnvelopeRef<'_>) -> Result<(), CheckError> {
        if envelope.computed_id() != *envelope.id() {
            return Err(CheckError::Envelope(EnvelopeMismatch::IdNotBody));
        }
        if envelope.id() != self.leaf.id() {
            return Err(CheckError::Envelope(EnvelopeMismatch::Id));
        }
        if Leaf::from_envelope(envelope).encode() != self.leaf_bytes {
            return Err(CheckError::Envelope(EnvelopeMismatch::Fields));
        }
        Ok(())
    }
}

/// Proof that a log's tree of `size1` leaves is a prefix of its tree of
/// `size2` leaves (P9, CLI.md).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConsistencyProof {
    log: Sigil,
    size1: u64,
    size2: u64,
    path: Vec<Hash>,
    sth1: SignedTreeHead,
    sth2: SignedTreeHead,
}

impl ConsistencyProof {
    /// Both tree heads are of one size with different roots: no path can
    /// join them, and the log's own signatures show two histories (spec
    /// §5.3; the conformance vectors' `split_view`). Meaningful once the
    /// heads' signatures verify.
    pub fn shows_split_view(&self) -> bool {
        self.sth1.size() == self.sth2.size() && self.sth1.root() != self.sth2.root()
    }

    /// Assemble a proof; the log is `sth2`'s and the sizes the tree heads'.
    pub fn new(path: Vec<Hash>, sth1: SignedTreeHead, sth2: SignedTreeHead) -> Self {
        Self {
            log: *sth2.log(),
            size1: sth1.size(),
            size2: sth2.size(),
            path,
            sth1,
            sth2,
        }
    }

    /// The log's sigil, as the proof states it.
    pub fn log(&self) -> &Sigil {
        &self.log
    }

    /// The older size.
    pub fn size1(&self) -> u64 {
        self.size1
    }

    /// The newer size.
    pub fn size2(&self) -> u64 {
        self.size2
    }

    /// The consistency path (RFC 9162 §2.1.4.1).
    pub fn path(&self) -> &[Hash] {
        &self.path
    }

    /// The tree head of size `size1`.
    pub fn sth1(&self) -> &SignedTreeHead {
        &self.sth1
    }

    /// The tree head of size `size2`.
    pub fn sth2(&self) -> &SignedTreeHead {
        &self.sth2
    }

    /// The proof as a P1 map.
    pub fn to_value(&self) -> Value {
        let mut map = Map::new();
        map.insert(
            "log",
            Value::text(alloc::string::ToString::to_string(&self.log)),
        );
        map.insert("size1", Value::Unsigned(self.size1));
        map.insert("size2", Value::Unsigned(self.size2));
        map.insert("path", path_value(&self.path));
        map.insert("sth1", self.sth1.to_value());
        map.insert("sth2", self.sth2.to_value());
        Value::Map(map)
    }

    /// The proof's P1 bytes.
    pub fn encode(&self) -> Vec<u8> {
        self.to_value().to_vec()
    }

    /// Strictly decode a proof (P1; exactly its keys, each of its type).
    /// Nothing is verified yet.
    pub fn decode(bytes: &[u8]) -> Result<Self, FormatError> {
        Self::from_fields(&Fields::new(
            decode_item(bytes, CONSISTENCY)?,
            CONSISTENCY,
            CONSISTENCY_KEYS,
        )?)
    }

    fn from_fields(f: &Fields<'_>) -> Result<Self, FormatError> {
        Ok(Self {
            log: f.sigil("log")?,
            size1: f.uint("size1")?,
            size2: f.uint("size2")?,
            path: f.path("path")?,
            sth1: SignedTreeHead::from_ref(f.required("sth1")?, "consistency proof `sth1`")?,
            sth2: SignedTreeHead::from_ref(f.required("sth2")?, "consistency proof `sth2`")?,
        })
    }

    /// Verify the proof against `keys` (see the module documentation); the
    /// log's key is returned.
    pub fn verify(&self, keys: &impl KeyResolver) -> Result<PublicKey, CheckError> {
        // Both heads by a key the resolver binds to the one `log` sigil
        // (the same key, unless the log's key molted in between, P8).
        check_sth(&self.sth1, "sth1", &self.log, keys)?;
        let key = check_sth(&self.sth2, "sth2", &self.log, keys)?;
        check_size("size1", self.size1, &self.sth1)?;
        check_size("size2", self.size2, &self.sth2)?;
        merkle::verify_consistency(
            self.size1,
            self.size2,
            &self.path,
            self.sth1.root(),
            self.sth2.root(),
        )
        .map_err(CheckError::Path)?;
        Ok(key)
    }
}

/// Any audit-log object a `verify-proof` may be handed: told apart by its
/// keys (`index` → inclusion, `size1` → consistency, `sig` → a bare STH).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AuditObject {
    /// A signed tree head on its own.
    TreeHead(SignedTreeHead),
    /// An inclusion proof.
    Inclusion(InclusionProof),
    /// A consistency proof.
    Consistency(ConsistencyProof),
}

impl AuditObject {
    /// Strictly decode whichever object `bytes` hold.
    pub fn decode(bytes: &[u8]) -> Result<Self, FormatError> {
        const OBJECT: &str = "audit log object";
        let value = decode_item(bytes, OBJECT)?;
        let map = value.as_map().ok_or(FormatError::NotAMap {
            object: OBJECT,
            found: value.type_name(),
        })?;
        if map.get("index").is_some() {
            InclusionProof::from_fields(&Fields::new(value, INCLUSION, INCLUSION_KEYS)?)
                .map(Self::Inclusion)
        } else if map.get("size1").is_some() {
            ConsistencyProof::from_fields(&Fields::new(value, CONSISTENCY, CONSISTENCY_KEYS)?)
                .map(Self::Consistency)
        } else if map.get("sig").is_some() {
            SignedTreeHead::from_ref(value, "signed tree head").map(Self::TreeHead)
        } else {
            Err(FormatError::UnknownObject {
                object: OBJECT,
                keys: "`index` (inclusion proof), `size1` (consistency proof), \
                       `sig` (signed tree head)",
            })
        }
    }

    /// The P1 bytes of the object.
    pub fn encode(&self) -> Vec<u8> {
        match self {
            Self::TreeHead(sth) => sth.encode(),
            Self::Inclusion(p) => p.encode(),
            Self::Consistency(p) => p.encode(),
        }
    }

    /// Verify it against `keys`; the log's key is returned.
    pub fn verify(&self, keys: &impl KeyResolver) -> Result<PublicKey, CheckError> {
        match self {
            Self::TreeHead(sth) => sth.verify(keys).map_err(|error| CheckError::Sth {
                which: "sth",
                error,
            }),
            Self::Inclusion(p) => p.verify(keys),
            Self::Consistency(p) => p.verify(keys),
        }
    }
}
