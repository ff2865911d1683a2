//! The formats of the transparency-log ecosystem (C2SP), over
//! [`herald_core`]'s Ed25519 keys and [`herald_merkle`]'s RFC 9162 tree, so
//! existing witnesses and monitors can watch a HERALD audit log and HERALD
//! verifiers can use theirs:
//!
//! - [`note`]: C2SP signed-note v1.0.0: parse, sign, verify; Ed25519 key
//!   ids and the verifier-key text form.
//! - [`checkpoint`]: C2SP tlog-checkpoint v1.0.0.
//! - [`cosignature`]: C2SP tlog-cosignature v1 (signature type 0x04).
//! - [`tile`]: C2SP tlog-tiles paths, hash tiles and entry bundles;
//!   [`tiles`]: the writer (a log's tiles for its current size) and the
//!   reader (roots and proofs from tiles and a checkpoint alone).
//! - [`policy`]: C2SP tlog-policy files and quorum evaluation.
//! - [`proof`]: C2SP tlog-proof: an entry's index, inclusion path and
//!   checkpoint as one offline-verifiable text (a Herald's certifications,
//!   PROFILE P14).
//! - [`evidence`]: split-view evidence, checked offline.
//! - [`log`]: a log ([`log::TiledLog`]) as a checkpoint and tiles: what a
//!   server publishes, as a function of the log. The HERALD audit log
//!   (PROFILE P9) is one through herald-verify (`auditlog::c2sp`), which
//!   also checks its tree heads against a policy.
//!
//! The Merkle tree is [`herald_merkle`] (RFC 9162); nothing here hashes a
//! tree a second way.
//!
//! **Why a note never collides with a P9 STH.** The log key signs two kinds
//! of message. A P9 STH message is `herald.sth.v1` followed by the P1 CBOR
//! map `{log, size, root, ts}`: its 14th byte is the CBOR map header `0xa4`,
//! which is not valid UTF-8 (a continuation byte cannot start a character).
//! A signed note's text must be valid UTF-8 with no control character other
//! than newline (C2SP signed-note), and [`note::Note::new`] and
//! [`note::Note::parse`] enforce that before anything is signed or
//! verified. So no byte string is both, and a signature on one can never be
//! replayed as a signature on the other. Cosignatures are by witness keys,
//! start with `cosignature/v1\n`, and use signature type 0x04 in their key
//! id, so they too are apart.
#![forbid(unsafe_code)]

pub mod checkpoint;
pub mod cosignature;
pub mod evidence;
pub mod log;
pub mod note;
pub mod policy;
pub mod proof;
pub mod tile;
pub mod tiles;

pub use checkpoint::{Checkpoint, CheckpointError};
pub use note::{Note, NoteError, NoteSignature, NoteVerifier, VerifierKeyError};
pub use policy::{Policy, PolicyError};
pub use proof::{TlogProof, TlogProofError};
pub use tile::{TileId, TileKind};
