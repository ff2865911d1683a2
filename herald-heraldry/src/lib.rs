//! A Herald (spec §8.2, PROFILE P14; CONDUIT.md `herald heraldry serve`):
//! an identity that certifies claims about other sigils and publishes
//! every certification in its own C2SP transparency log, cosigned by
//! witnesses, so a verifier trusts a quorum of independent Heralds and a
//! monitor sees every claim made about a sigil.
//!
//! - [`Herald`]: its key, origin, state ([`store`]) and witnesses;
//!   [`Herald::certify`] for the operator's claims (`herald heraldry
//!   certify`).
//! - [`http`]: the HTTP surface on herald-http's accept loop; requests are
//!   checked by `request` (P14: `handle` through the P15 DNS record,
//!   `key` from the request's own signature) and refused with signed
//!   [`Refusal`]s; `rate` bounds what one subject, and all unknown
//!   subjects together, can make it certify.
//! - the sequencer: group commit to the log, checkpoints cosigned by
//!   `herald witness serve` instances (C2SP tlog-witness), answers with
//!   C2SP tlog-proofs.
//! - [`monitor`]: follows Herald logs from a C2SP tlog-policy (consistency,
//!   split views as evidence) and lists the certifications about watched
//!   sigils and handles.
#![forbid(unsafe_code)]

pub mod certification;
mod herald;
pub mod http;
mod log;
pub mod monitor;
mod rate;
mod refusal;
mod request;
mod sequencer;
pub mod store;

pub use certification::Certification;
pub use herald::{Config, DEFAULT_RATE_SUBJECT, DEFAULT_RATE_UNKNOWN, Herald, OpenError, now};
pub use refusal::Refusal;
