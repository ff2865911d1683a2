//! How much one subject, and everyone the Herald does not know, can make
//! it certify (docs/heralds.md *Limits*; a `429 rate_limited` signed
//! refusal, as the conduit's, CONDUIT.md `herald heraldry serve`: "a
//! signed refusal as for the conduit").
//!
//! A `key` certification costs its requester a fresh key, which is free:
//! a limit per subject alone would not stop anyone filling the Herald's
//! log. So, as a conduit holds births to `--rate-unknown`:
//!
//! - a request from a subject the Herald's log says nothing about yet
//!   spends a token of one bucket shared by all of them
//!   (`--rate-unknown`, a second's worth), before any signature is
//!   verified or DNS record read;
//! - every request whose origin signature verified spends a token of its
//!   subject's own bucket (`--rate-subject` a minute): a forgery naming a
//!   subject never spends that subject's tokens.
//!
//! A subject the log already names is charged only its own bucket, so a
//! flood of fresh keys never delays it.

use herald_core::Sigil;
use herald_http::rate::{Limit, PerKey, Shared};

/// Most subject buckets kept.
const MAX_SUBJECTS: usize = 65_536;

/// The Herald's rate limits.
#[derive(Debug)]
pub(crate) struct Limits {
    unknown: Shared,
    subjects: PerKey<Sigil>,
}

impl Limits {
    /// `per_subject` requests a minute per subject, `unknown` a second
    /// from every subject the log does not name yet together (0: no
    /// limit).
    pub(crate) fn new(per_subject: u32, unknown: u32) -> Self {
        Self {
            unknown: Shared::new(Limit::per(unknown, 1)),
            subjects: PerKey::new(Limit::per(per_subject, 60), MAX_SUBJECTS),
        }
    }

    /// A token of the shared bucket of subjects the log does not name;
    /// `Err(seconds)` to wait.
    pub(crate) fn unknown(&self) -> Result<(), u64> {
        self.unknown.take()
    }

    /// A token of `subject`'s bucket (default form); `Err(seconds)`.
    pub(crate) fn subject(&self, subject: &Sigil) -> Result<(), u64> {
        self.subjects.take(subject)
    }
}
