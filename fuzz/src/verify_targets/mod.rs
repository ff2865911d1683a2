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
use herald_verify::Bundle;
use herald_verify::MAX_LEAF_LEN;
use herald_verify::MAX_LISTED_UNPARSED;
use herald_verify::key_line;
use herald_verify::{
    AuditObject, CheckError, ConsistencyProof, InclusionProof, Leaf, LogError, SignedTreeHead,
    SthError, TreeHead,
};
use herald_verify::{AuditOptions, Input, Keyring, Provenance, Summary, audit};
use herald_verify::{
    Piece, ReadLimits, SplitError, encode_bundle, is_bundle, not_envelopes, read_sequence,
    split_sequence,
};
use herald_verify::{internal::HEADER_LEN, internal::LeafScan, internal::scan_leaf_file};
use herald_verify::{
    merkle, merkle::Hash, merkle::Tree, merkle::consistency_proof_len, merkle::inclusion_proof_len,
    merkle::leaf_hash, merkle::root_from_leaves, merkle::verify_consistency,
    merkle::verify_inclusion,
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
