//! HERALD verifier: trace walks, keyrings, the replay cache, identity
//! lifecycle and the audit log, over [`herald_core`]'s envelopes.
//!
//! Every item is reached by one path, at the crate root (the modules are
//! private): the trace audit of `herald verify` ([`audit`], [`Report`]),
//! live reception ([`Receiver`] over a [`LiveState`], the redb [`Store`]
//! one of them; feature `store`, on by default), keyrings and key files, the audit log ([`Log`] and its
//! proofs, PROFILE.md P9), proof bundles, receipts and sequence reading.
//! The Merkle tree (RFC 9162) is herald-merkle's; the hooks of this
//! workspace's fuzz targets and benchmarks are under a hidden `internal`,
//! the one public module.
#![no_std]
#![forbid(unsafe_code)]

extern crate alloc;
extern crate std;

mod auditlog;
mod batch;
mod bundle;
mod compact;
mod described;
mod display;
mod explain;
mod facts;
mod herald;
mod history;
mod input;
#[doc(hidden)]
pub mod internal;
mod keyfile;
mod keyring;
mod lifecycle;
#[cfg(feature = "store")]
mod live;
mod profile;
mod reasons;
mod receipt;
mod report;
mod sequence;
mod trace;
mod verdicts;

// The trace audit of `herald verify` (P10–P13, CLI.md *verify*).
pub use compact::{CompactReport, Links, TraceCounts};
pub use input::Input;
// What each reason code means, with its PROFILE section (`herald explain`).
pub use explain::{Explanation, explain};
// A birth's self-description: how a key the set learned from its birth is
// named for people (never a keyring label).
pub use described::{Descriptions, SelfDescribed, self_described};
pub use reasons::{LISTED_PER_CODE, Unlisted};
pub use report::{
    EnvelopeReport, ProofReport, Report, ReportReason, ReportedClaim, SignedBy, Source, Summary,
    TraceReport, hex,
};
pub use trace::{AuditOptions, MAX_LISTED_UNPARSED, audit, audit_compact, audit_compact_read};

// Reading inputs: CBOR sequences (RFC 8742) and the P3 display form.
pub use display::{diagnostic as display_diagnostic, json as display_json};
pub use sequence::{
    ItemEnds, NotEnvelopes, Piece, Pieces, ReadError, ReadLimits, SplitError, not_envelopes,
    pieces as sequence_pieces, read as read_sequence, read_expecting as read_sequence_expecting,
    read_items as read_sequence_items, split as split_sequence,
};

// Batch signature verification (P5 revision 2).
pub use batch::{
    BatchOptions, verify_all as verify_prepared, verify_all_with as verify_prepared_with,
};

// Keys: keyrings (CLI.md), secret key files, local files.
pub use herald_fs::{FileError, Io, create_private_dir, create_private_file, open_regular};
pub use keyfile::{
    KeyFileError, encode as encode_key_file, is_key_file, load as load_key_file,
    save as save_key_file,
};
pub use keyring::{
    KeyOrigin, Keyring, KeyringError, Loaded, MAX_KEYRING_BYTES, MAX_KEYRING_FILES, Pinned,
    Provenance, ResolvedAt, key_line, labelled_key_line,
};

// A sigil's key history from a conduit's `GET /v1/keys/{sigil}` (P15).
pub use history::{
    HistoryKey, HistoryOrigin, KEYS_MAX_BYTES, KEYS_MAX_ENVELOPES, KeyHistory, KeysError,
    KeysLimits, check_keys,
};

// Live reception (P8, P10): the receiver, its state, the redb store
// (feature `store`, on by default; a crate that only audits traces, reads
// sequences or checks receipts turns it off and links no redb).
pub use lifecycle::{IdentityRecord, RecordedBirth, RecordedMolt, signing_keys};
#[cfg(feature = "store")]
pub use live::proof::{MoltProofError, ProvenMolt};
#[cfg(feature = "store")]
pub use live::state::{IdentityKey, LiveState, StoreReader, StoreTxn};
#[cfg(feature = "store")]
pub use live::store::{Claim, MAX_OWNER, STORE_FORMAT, Store, StoreError};
#[cfg(feature = "store")]
pub use live::{CACHE_WINDOW, Clock, PRECHECK_CHUNK, Prechecked, Receiver, SystemClock};

// The audit log (P9): the log, its objects, its files.
pub use auditlog::c2sp::covers as policy_covers;
pub use auditlog::checkpoint::{CHECKPOINT_FILE as LOG_CHECKPOINT_FILE, SLOT as CHECKPOINT_SLOT};
pub use auditlog::file::{
    CONFIG_FILE as LOG_CONFIG_FILE, DATA_FILE as LOG_DATA_FILE, KEY_FILE as LOG_KEY_FILE,
};
pub use auditlog::leaf::{CONSENT_ATTESTATION, MAX_LEAF_LEN};
pub use auditlog::proof::{EnvelopeMismatch, MAX_PROOF_LEN};
pub use auditlog::{
    Appended, AuditObject, CheckError, ConsistencyProof, FormatError, InclusionProof, Leaf, Log,
    LogError, MAX_PATH as MAX_PROOF_PATH, Recovery, SignedTreeHead, SthError, TreeHead,
};

// Protocol profiles over a verified trace (docs/haven.md, docs/valp.md).
pub use profile::{
    Evidence as ProfileEvidence, Finding, FindingCode, Profile, ProfileError, ProfileReport,
    SIGNED_DESPITE, Step as ProfileStep, check as check_profile,
};

// Heralds (PROFILE P14): certifications, their proofs, the Herald list.
pub use herald::count::{Judgement, NotCounted};
pub use herald::item::{CertificationItem, CertificationItemError, MAX_ITEM_BYTES};
pub use herald::list::{Herald, HeraldList, HeraldListError, MAX_HERALD_LIST_BYTES};
pub use herald::quorum::{Certified, CertifiedClaim, Heralds, HeraldsError};

// Proof bundles and conduit receipts.
pub use bundle::{
    Bundle, BundleError, FORMAT as BUNDLE_FORMAT, LogPolicy, encode as encode_bundle,
    encode_with_certifications as encode_bundle_with_certifications,
    encode_with_checkpoints as encode_bundle_with_checkpoints, is_bundle,
};
pub use receipt::{ReceiptError, Refusal, check_forwarded, check_refusal, receipt_by};
