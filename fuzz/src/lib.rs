//! Bodies of the libFuzzer targets in `fuzz_targets/` (docs/fuzzing.md).
//!
//! Each target is a one-liner calling a function here. The functions live
//! in two files that depend only on what the main workspace's tests also
//! have, so `herald-core/tests/fuzz_replay.rs` and
//! `herald-verify/tests/fuzz_replay.rs` compile the very same files with
//! `#[path]` and replay the committed corpus on the stable toolchain:
//!
//! - [`core_targets`]: herald-core, ciborium, sha2 (herald-core's tests);
//! - [`verify_targets`]: herald-verify, herald-core, sha2, serde_json
//!   (herald-verify's tests).

pub mod core_targets;
pub mod verify_targets;

pub use core_targets::{cbor_decode, cbor_differential, envelope_check, sigil_parse};
pub use verify_targets::{
    bundle_verify, keyring_parse, log_file, merkle_proof, proof_object, sequence_split, trace_audit,
};
