//! Why a resolution channel gave no usable answer.

use core::fmt;

use crate::HandleError;

/// A channel failed, or its answer could not be used. Reported, never
/// trusted (PROFILE.md P15); the text names what is wrong and never a
/// secret.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ResolveError {
    /// No answer within the time allowed.
    Timeout,
    /// The channel could not be reached or answered with an error.
    Unreachable {
        /// What failed (the server, the protocol error).
        detail: String,
    },
    /// DNSSEC validation failed for a zone that is signed: never a silent
    /// downgrade to an unvalidated answer.
    Dnssec {
        /// What did not validate.
        detail: String,
    },
    /// A record or answer does not follow its grammar (P15).
    Malformed {
        /// What is wrong.
        problem: String,
    },
    /// An answer's key does not hash to the sigil it was given for (P2).
    KeyMismatch {
        /// The sigil, as the answer named it.
        sigil: String,
    },
    /// An answer is larger than the channel reads.
    TooLarge {
        /// The limit, in bytes.
        limit: usize,
    },
    /// A handle does not parse.
    Handle(HandleError),
    /// The channel is not built into this program.
    NotBuiltIn {
        /// Its name (`dns`, `conduit`, `dht`).
        channel: &'static str,
    },
}

impl fmt::Display for ResolveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Timeout => f.write_str("no answer in time"),
            Self::Unreachable { detail } => write!(f, "no answer: {detail}"),
            Self::Dnssec { detail } => write!(f, "DNSSEC validation failed: {detail}"),
            Self::Malformed { problem } => write!(f, "malformed answer: {problem}"),
            Self::KeyMismatch { sigil } => {
                write!(f, "the key given for {sigil} does not hash to it")
            }
            Self::TooLarge { limit } => write!(f, "answer larger than {limit} bytes"),
            Self::Handle(e) => write!(f, "bad handle: {e}"),
            Self::NotBuiltIn { channel } => {
                write!(f, "the {channel} channel is not built into this program")
            }
        }
    }
}

impl std::error::Error for ResolveError {}

impl From<HandleError> for ResolveError {
    fn from(e: HandleError) -> Self {
        Self::Handle(e)
    }
}
