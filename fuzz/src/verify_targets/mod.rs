//! Fuzz-target bodies over herald-verify's parsers (docs/fuzzing.md).
//!
//! Shared, unchanged, by the libFuzzer binaries (through `fuzz/src/lib.rs`)
//! and by `herald-verify/tests/fuzz_replay.rs` (through `#[path]`), so it
//! may only use what herald-verify's tests can: herald_verify, herald_core,
//! serde_json, sha2, std. Every function must never panic on any input; the
//! `assert!`s state the properties a failure would break.

use std::path::Path;
use std::sync::OnceLock;

use herald_core::cbor::{self, Limits};
use herald_core::{PublicKey, Sigil, SigningKey, Status};
use herald_merkle::{
    self as merkle, Hash, Tree, consistency_proof_len, inclusion_proof_len, leaf_hash,
    root_from_leaves, verify_consistency, verify_inclusion,
};
use herald_verify::{
    AuditObject, AuditOptions, Bundle, CheckError, ConsistencyProof, InclusionProof, Input,
    Keyring, Leaf, LogError, MAX_LEAF_LEN, MAX_LISTED_UNPARSED, Piece, Provenance, ReadLimits,
    SignedTreeHead, SplitError, SthError, Summary, TreeHead, audit, encode_bundle,
    internal::{HEADER_LEN, LeafScan, scan_leaf_file},
    is_bundle, key_line, not_envelopes, read_sequence, split_sequence,
};
use sha2::{Digest, Sha256};

mod bundle_verify;
mod keyring_parse;
mod log_file;
mod merkle_proof;
mod proof_object;
mod sequence_split;
mod trace_audit;

pub use bundle_verify::bundle_verify;
pub use keyring_parse::keyring_parse;
pub use log_file::{log_file, log_file_bytes, log_file_repaired};
pub use merkle_proof::merkle_proof;
pub use proof_object::{proof_keyring, proof_log_seed, proof_object};
pub use sequence_split::sequence_split;
pub use trace_audit::trace_audit;

/// The clock of the fuzzed audits: one hour after the tests' fixed `ts`.
pub const NOW: u64 = 1_746_432_000 + 3_600;

/// The seeds of the two pinned keys (the tests' Alice and Bob).
pub const KEY_SEEDS: [[u8; 32]; 2] = [[0x11; 32], [0x22; 32]];

/// The fixed keyring of `trace_audit`: the two keys, pinned.
pub fn fuzz_keyring() -> &'static Keyring {
    static RING: OnceLock<Keyring> = OnceLock::new();
    RING.get_or_init(|| {
        let mut ring = Keyring::new();
        for seed in KEY_SEEDS {
            ring.insert(
                SigningKey::from_seed(&seed).public_key(),
                Provenance::Pinned,
            );
        }
        ring
    })
}
