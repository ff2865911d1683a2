//! HERALD verifier: trace walks, keyrings, the replay cache, identity
//! lifecycle and the audit log, over [`herald_core`]'s envelopes.
#![no_std]
#![forbid(unsafe_code)]

extern crate alloc;
extern crate std;

pub mod audited;
pub mod auditlog;
pub mod batch;
pub mod bundle;
pub mod described;
pub mod display;
mod facts;
pub mod files;
#[doc(hidden)]
pub mod internal;
pub mod keyfile;
pub mod keyring;
pub mod lifecycle;
pub mod live;
pub mod merkle;
mod reasons;
pub mod receipt;
pub mod report;
pub mod sequence;
pub mod trace;
mod verdicts;

pub use audited::Audited;
pub use auditlog::{
    AuditObject, ConsistencyProof, InclusionProof, Leaf, Log, LogError, SignedTreeHead, TreeHead,
};
pub use bundle::{Bundle, BundleError};
pub use files::FileError;
pub use keyfile::KeyFileError;
pub use keyring::{Keyring, KeyringError, Pinned, Provenance};
pub use lifecycle::{IdentityRecord, MoltProofError, ProvenMolt, RecordedBirth, RecordedMolt};
pub use live::state::{IdentityKey, LiveState, StoreTxn};
pub use live::store::{Claim, Store, StoreError};
pub use live::{Clock, Prechecked, Receiver, SystemClock};
pub use reasons::{LISTED_PER_CODE, Unlisted};
pub use report::{
    EnvelopeReport, KeyOrigin, ProofReport, Report, ReportReason, SignedBy, Summary, TraceReport,
};
pub use trace::{AuditOptions, Input, audit, audited};
