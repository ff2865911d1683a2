//! C2SP transparency-log formats for HERALD audit logs (issue 17; spec
//! §5.3): the forms Go's checksum database, Sigstore, Tessera and sigsum
//! speak, so their witnesses and monitors can watch a HERALD log and HERALD
//! verifiers can use theirs.
//!
//! - [`note`]: C2SP signed-note v1 — text, Ed25519 signature lines, key
//!   ids and the verifier-key text form;
//! - [`checkpoint`]: C2SP tlog-checkpoint v1 — origin, size and RFC 6962
//!   root as a note body;
//! - [`tiles`]: C2SP tlog-tiles — tile paths, hash tiles and entry
//!   bundles, and a tree rebuilt from them.
//!
//! A note can never be mistaken for a P9 signed tree head, although one log
//! key signs both: the P9 message starts with the STH domain tag, whose
//! bytes are not UTF-8 text without control characters, and a note body is
//! exactly such text ending in a newline ([`note`]).
#![forbid(unsafe_code)]

pub mod checkpoint;
pub mod note;
pub mod tiles;

pub use checkpoint::{Checkpoint, CheckpointError};
pub use note::{Note, NoteError, Signature, Verifier};
