//! P8 rule 3 in live mode: an inclusion proof (P9) of a molt the receiver
//! witnessed, accepted against a pinned log key and recorded durably.

use core::fmt;

use redb::ReadableTable;

use super::store::{MOLTS, Store, StoreError};
use super::table::{corrupted, load_in, save_in};
use crate::auditlog::{CheckError, InclusionProof};
use crate::keyring::Keyring;
use crate::report::hex;

/// An inclusion proof accepted by [`Receiver::accept_inclusion_proof`](crate::Receiver::accept_inclusion_proof).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ProvenMolt {
    /// The molt's number among its identity's witnessed molts (`molt N`).
    pub number: usize,
    /// Whether an earlier proof had already proven it.
    pub already: bool,
}

/// An inclusion proof was not accepted (P8 rule 3, P9).
#[derive(Debug)]
#[non_exhaustive]
pub enum MoltProofError {
    /// The proof does not verify against the receiver's pinned keys: its
    /// path, its signed tree head, or a log key that is not pinned.
    Proof(CheckError),
    /// This receiver has witnessed no molt with the leaf's id (yet): a
    /// proof is accepted after its molt, so offer it again once the molt
    /// has been received.
    UnknownMolt {
        /// The leaf's id.
        id: [u8; 32],
    },
    /// The molt was witnessed but rules 2, 4 or 5 refused it: no proof
    /// makes it count.
    MoltNotAccepted {
        /// The molt's id.
        id: [u8; 32],
    },
    /// The leaf has the molt's id but is not its P9 leaf.
    LeafMismatch {
        /// The molt's id.
        id: [u8; 32],
    },
    /// The store could not be read or written.
    Store(StoreError),
}

impl fmt::Display for MoltProofError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Proof(e) => write!(f, "the inclusion proof does not verify: {e}"),
            Self::UnknownMolt { id } => write!(
                f,
                "no molt with id {} has been received: offer the proof after its molt",
                hex(id)
            ),
            Self::MoltNotAccepted { id } => {
                write!(f, "molt {} was not accepted (P8 rules 2, 4, 5)", hex(id))
            }
            Self::LeafMismatch { id } => write!(
                f,
                "the proof's leaf has the id of molt {} but is not its leaf (P9)",
                hex(id)
            ),
            Self::Store(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for MoltProofError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Proof(e) => Some(e),
            Self::Store(e) => Some(e),
            _ => None,
        }
    }
}

impl From<StoreError> for MoltProofError {
    fn from(e: StoreError) -> Self {
        Self::Store(e)
    }
}

/// P8 rule 3: accept `proof` for a witnessed, accepted molt if it verifies
/// against a pinned log key, and record the molt as proven, durably.
pub(crate) fn accept_proof(
    store: &Store,
    keys: &Keyring,
    proof: &InclusionProof,
) -> Result<ProvenMolt, MoltProofError> {
    const OP: &str = "inclusion proof";
    let err = |e: redb::Error| MoltProofError::Store(StoreError::storage(store.path(), OP, e));
    proof
        .verify(&keys.pinned())
        .map_err(MoltProofError::Proof)?;
    let id = *proof.leaf().id();
    let txn = store.begin_write(OP)?;
    let who = txn
        .open_table(MOLTS)
        .map_err(|e| err(e.into()))?
        .get(&id)
        .map_err(|e| err(e.into()))?
        .map(|v| *v.value());
    let Some(who) = who else {
        return Err(MoltProofError::UnknownMolt { id });
    };
    let mut state = load_in(store, &txn, &who)?
        .ok_or_else(|| corrupted(store, &who, "indexed molt missing"))?;
    let (i, molt) = state
        .molts
        .iter_mut()
        .enumerate()
        .find(|(_, m)| m.id == id)
        .ok_or_else(|| corrupted(store, &who, "indexed molt missing"))?;
    if molt.leaf != proof.leaf_bytes() {
        return Err(MoltProofError::LeafMismatch { id });
    }
    if !molt.accepted() {
        return Err(MoltProofError::MoltNotAccepted { id });
    }
    let already = molt.proven;
    if !already {
        molt.proven = true;
        save_in(store, &txn, &who, &state)?;
        txn.commit().map_err(|e| err(e.into()))?;
    }
    Ok(ProvenMolt {
        number: i + 1,
        already,
    })
}
