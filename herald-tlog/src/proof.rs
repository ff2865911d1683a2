//! C2SP tlog-proof v1: an offline-verifiable proof that an entry is in a
//! log, as text: the entry's index, its RFC 9162 inclusion proof and the
//! log's checkpoint (with any witness cosignatures), verbatim.
//!
//! ```text
//! c2sp.org/tlog-proof@v1
//! extra <base64>           (optional, never trusted)
//! index <decimal>
//! <base64 hash>            (zero or more, from the leaf's sibling up)
//!
//! <signed checkpoint>
//! ```
//!
//! Parsing checks the format only; [`TlogProof::verify_inclusion`] checks
//! the path against a checkpoint the caller has already verified (its log
//! signature and, under a tlog-policy, its cosignatures:
//! [`Policy::verify_checkpoint`](crate::Policy::verify_checkpoint) on
//! [`TlogProof::checkpoint`]).

use core::fmt;

use data_encoding::BASE64;
use herald_merkle::{Hash, ProofError, leaf_hash, verify_inclusion};

use crate::checkpoint::{Checkpoint, parse_decimal};

/// The first line of every proof.
pub const HEADER: &str = "c2sp.org/tlog-proof@v1";

/// Most hashes an inclusion proof may carry (a tree of 2^64 leaves needs 64).
pub const MAX_PATH: usize = 64;

/// Largest proof text read, in bytes (the path, and a checkpoint with a few
/// hundred cosignatures).
pub const MAX_PROOF_TEXT: usize = 64 << 10;

/// A proof text is malformed, or does not prove its entry.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TlogProofError {
    /// A line breaks the tlog-proof format. `line` counts from 1.
    Line {
        /// The line.
        line: usize,
        /// The rule broken.
        rule: &'static str,
    },
    /// The text is longer than [`MAX_PROOF_TEXT`].
    TooLarge,
    /// The path does not lead from the entry to the checkpoint's root.
    Inclusion(ProofError),
}

impl fmt::Display for TlogProofError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Line { line, rule } => write!(f, "tlog-proof line {line}: {rule}"),
            Self::TooLarge => write!(f, "tlog-proof longer than {MAX_PROOF_TEXT} bytes"),
            Self::Inclusion(e) => write!(f, "tlog-proof does not include its entry: {e}"),
        }
    }
}

impl std::error::Error for TlogProofError {}

/// A parsed tlog-proof.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TlogProof {
    extra: Option<Vec<u8>>,
    index: u64,
    path: Vec<Hash>,
    checkpoint: String,
}

impl TlogProof {
    /// A proof of entry `index` with inclusion `path`, in the tree of the
    /// signed checkpoint `checkpoint` (its note text, signature lines and
    /// all, as a log or witness serves it).
    pub fn new(index: u64, path: Vec<Hash>, checkpoint: &str) -> Self {
        Self {
            extra: None,
            index,
            path,
            checkpoint: checkpoint.to_owned(),
        }
    }

    /// The same proof carrying opaque `extra` data (never authenticated).
    #[must_use]
    pub fn with_extra(mut self, extra: Vec<u8>) -> Self {
        self.extra = Some(extra);
        self
    }

    /// Parse a proof text (tlog-proof "Format"): the header, an optional
    /// `extra` line, `index` in decimal without leading zeros, up to
    /// [`MAX_PATH`] canonical base64 hashes, an empty line, then the
    /// checkpoint (kept verbatim, checked when verified).
    pub fn parse(text: &str) -> Result<Self, TlogProofError> {
        if text.len() > MAX_PROOF_TEXT {
            return Err(TlogProofError::TooLarge);
        }
        let err = |line, rule| TlogProofError::Line { line, rule };
        let (head, checkpoint) = text
            .split_once("\n\n")
            .ok_or(err(1, "no empty line before the checkpoint"))?;
        let mut lines = head.split('\n').enumerate().map(|(i, l)| (i + 1, l));
        if lines.next().map(|(_, l)| l) != Some(HEADER) {
            return Err(err(1, "first line is not c2sp.org/tlog-proof@v1"));
        }
        let (mut n, mut line) = lines.next().ok_or(err(2, "index line missing"))?;
        let mut extra = None;
        if let Some(data) = line.strip_prefix("extra ") {
            extra = Some(
                BASE64
                    .decode(data.as_bytes())
                    .map_err(|_| err(n, "extra is not base64"))?,
            );
            (n, line) = lines.next().ok_or(err(n + 1, "index line missing"))?;
        }
        let index = line
            .strip_prefix("index ")
            .and_then(parse_decimal)
            .ok_or(err(n, "expected: index <decimal without leading zeros>"))?;
        let mut path = Vec::new();
        for (n, line) in lines {
            if path.len() == MAX_PATH {
                return Err(err(n, "more than 64 hashes"));
            }
            let hash: Hash = BASE64
                .decode(line.as_bytes())
                .ok()
                .and_then(|h| h.try_into().ok())
                .ok_or(err(n, "a proof line is not canonical base64 of 32 bytes"))?;
            path.push(hash);
        }
        if checkpoint.is_empty() {
            return Err(err(
                head.split('\n').count() + 2,
                "the checkpoint is missing",
            ));
        }
        Ok(Self {
            extra,
            index,
            path,
            checkpoint: checkpoint.to_owned(),
        })
    }

    /// The proof text.
    #[must_use]
    pub fn to_text(&self) -> String {
        let mut s = String::from(HEADER);
        s.push('\n');
        if let Some(extra) = &self.extra {
            s.push_str("extra ");
            s.push_str(&BASE64.encode(extra));
            s.push('\n');
        }
        s.push_str(&format!("index {}\n", self.index));
        for h in &self.path {
            s.push_str(&BASE64.encode(h));
            s.push('\n');
        }
        s.push('\n');
        s.push_str(&self.checkpoint);
        s
    }

    /// The entry's index in the log.
    #[must_use]
    pub fn index(&self) -> u64 {
        self.index
    }

    /// The inclusion path, from the leaf's sibling up.
    #[must_use]
    pub fn path(&self) -> &[Hash] {
        &self.path
    }

    /// The signed checkpoint, verbatim (verify it before trusting it).
    #[must_use]
    pub fn checkpoint(&self) -> &str {
        &self.checkpoint
    }

    /// The extra data, unauthenticated.
    #[must_use]
    pub fn extra(&self) -> Option<&[u8]> {
        self.extra.as_deref()
    }

    /// Whether `entry` (the log entry's bytes; its leaf hash is RFC 9162's
    /// `SHA-256(0x00 || entry)`) is leaf [`index`](Self::index) of the tree
    /// `checkpoint` commits to. The caller verified `checkpoint`, parsed
    /// from [`checkpoint`](Self::checkpoint).
    pub fn verify_inclusion(
        &self,
        entry: &[u8],
        checkpoint: &Checkpoint,
    ) -> Result<(), TlogProofError> {
        verify_inclusion(
            &leaf_hash(entry),
            self.index,
            checkpoint.size(),
            &self.path,
            checkpoint.root(),
        )
        .map_err(TlogProofError::Inclusion)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;
    use crate::checkpoint::SignedCheckpoint;
    use herald_core::SigningKey;
    use herald_merkle::Tree;

    fn signed(tree: &Tree) -> SignedCheckpoint {
        let key = SigningKey::from_seed(&[3; 32]);
        let cp = Checkpoint::new("example.com/log", tree.len(), tree.root()).unwrap();
        SignedCheckpoint::sign(cp, "example.com/log", &key).unwrap()
    }

    #[test]
    fn a_proof_round_trips_and_proves_its_entry_only() {
        let entries: Vec<Vec<u8>> = (0..5u8).map(|i| vec![i; 3]).collect();
        let tree = Tree::from_leaf_hashes(entries.iter().map(|e| leaf_hash(e)));
        let cp = signed(&tree);
        let text = cp.note().to_text();
        let proof =
            TlogProof::new(2, tree.inclusion_proof(2, 5).unwrap(), &text).with_extra(b"x".to_vec());
        let again = TlogProof::parse(&proof.to_text()).unwrap();
        assert_eq!(again, proof);
        assert!(again.verify_inclusion(&entries[2], cp.checkpoint()).is_ok());
        assert!(
            again
                .verify_inclusion(&entries[3], cp.checkpoint())
                .is_err()
        );
    }

    #[test]
    fn malformed_texts_name_their_line() {
        for (text, line) in [
            ("c2sp.org/tlog-proof@v2\nindex 0\n\nx\n", 1),
            ("c2sp.org/tlog-proof@v1\nindex 01\n\nx\n", 2),
            ("c2sp.org/tlog-proof@v1\nextra !!\nindex 0\n\nx\n", 2),
            ("c2sp.org/tlog-proof@v1\nindex 0\nAAAA\n\nx\n", 3),
        ] {
            match TlogProof::parse(text) {
                Err(TlogProofError::Line { line: l, .. }) => assert_eq!(l, line, "{text:?}"),
                other => panic!("{text:?}: {other:?}"),
            }
        }
        assert!(TlogProof::parse("c2sp.org/tlog-proof@v1\nindex 0\n").is_err());
    }
}
