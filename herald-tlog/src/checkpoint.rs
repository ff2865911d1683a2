//! C2SP tlog-checkpoint v1.0.0: the note body `<origin>\n<size>\n<base64
//! root>\n` and optional extension lines, signed as a C2SP signed note.

use core::fmt;

use data_encoding::BASE64;
use herald_merkle::{Hash, empty_root};

use crate::note::{Note, NoteError, NoteVerifier, Verified};

/// A checkpoint body is not in the tlog-checkpoint format. `line` counts
/// from 1.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CheckpointError {
    /// A line is missing, empty or malformed.
    Line {
        /// The line number.
        line: usize,
        /// The rule broken.
        rule: &'static str,
    },
    /// The note around it is malformed or its signatures do not verify.
    Note(NoteError),
    /// A checkpoint of size 0 whose root is not `SHA-256("")`.
    EmptyTreeRoot,
}

impl fmt::Display for CheckpointError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckpointError::Line { line, rule } => write!(f, "checkpoint line {line}: {rule}"),
            CheckpointError::Note(e) => write!(f, "checkpoint {e}"),
            CheckpointError::EmptyTreeRoot => {
                f.write_str("checkpoint of size 0 whose root is not the empty tree's")
            }
        }
    }
}

impl std::error::Error for CheckpointError {}

impl From<NoteError> for CheckpointError {
    fn from(e: NoteError) -> Self {
        CheckpointError::Note(e)
    }
}

/// A checkpoint: origin, tree size, root hash, extension lines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checkpoint {
    origin: String,
    size: u64,
    root: Hash,
    extensions: Vec<String>,
}

impl Checkpoint {
    /// A checkpoint without extension lines. The origin must be a
    /// non-empty line (no newline or control character).
    pub fn new(origin: &str, size: u64, root: Hash) -> Result<Self, CheckpointError> {
        if origin.is_empty() || origin.chars().any(char::is_control) {
            return Err(CheckpointError::Line {
                line: 1,
                rule: "origin is empty or holds a control character",
            });
        }
        Ok(Checkpoint {
            origin: origin.to_owned(),
            size,
            root,
            extensions: Vec::new(),
        })
    }

    /// Parse a note text as a checkpoint body (tlog-checkpoint
    /// "Note text"): size in decimal without leading zeros, root as
    /// canonical base64 of 32 bytes, extension lines non-empty.
    pub fn parse(text: &str) -> Result<Self, CheckpointError> {
        let body = text.strip_suffix('\n').ok_or(CheckpointError::Line {
            line: 1,
            rule: "body does not end with a newline",
        })?;
        let mut lines = body.split('\n');
        let origin = lines.next().unwrap_or_default();
        if origin.is_empty() {
            return Err(CheckpointError::Line {
                line: 1,
                rule: "origin is empty",
            });
        }
        let size = lines.next().ok_or(CheckpointError::Line {
            line: 2,
            rule: "tree size missing",
        })?;
        let size = parse_decimal(size).ok_or(CheckpointError::Line {
            line: 2,
            rule: "tree size is not a decimal u64 without leading zeros",
        })?;
        let root = lines.next().ok_or(CheckpointError::Line {
            line: 3,
            rule: "root hash missing",
        })?;
        let root: Hash = BASE64
            .decode(root.as_bytes())
            .ok()
            .and_then(|r| r.try_into().ok())
            .ok_or(CheckpointError::Line {
                line: 3,
                rule: "root hash is not canonical base64 of 32 bytes",
            })?;
        let mut extensions = Vec::new();
        for (i, ext) in lines.enumerate() {
            if ext.is_empty() {
                return Err(CheckpointError::Line {
                    line: i + 4,
                    rule: "extension line is empty",
                });
            }
            extensions.push(ext.to_owned());
        }
        if size == 0 && root != empty_root() {
            return Err(CheckpointError::EmptyTreeRoot);
        }
        Ok(Checkpoint {
            origin: origin.to_owned(),
            size,
            root,
            extensions,
        })
    }

    /// The origin line: the log's identity.
    #[must_use]
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The tree size.
    #[must_use]
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The RFC 9162 root of the tree of that size.
    #[must_use]
    pub fn root(&self) -> &Hash {
        &self.root
    }

    /// The extension lines, in order.
    #[must_use]
    pub fn extensions(&self) -> &[String] {
        &self.extensions
    }

    /// The note text (body) of this checkpoint.
    #[must_use]
    pub fn to_text(&self) -> String {
        let mut s = format!(
            "{}\n{}\n{}\n",
            self.origin,
            self.size,
            BASE64.encode(&self.root)
        );
        for e in &self.extensions {
            s.push_str(e);
            s.push('\n');
        }
        s
    }
}

/// A decimal u64 as tlog formats write it: digits only, no leading zero
/// unless it is `0`.
pub(crate) fn parse_decimal(s: &str) -> Option<u64> {
    let canonical =
        !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && (s == "0" || !s.starts_with('0'));
    if canonical { s.parse().ok() } else { None }
}

/// A checkpoint with its note, whose signature by the log verified.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignedCheckpoint {
    checkpoint: Checkpoint,
    note: Note,
}

impl SignedCheckpoint {
    /// Parse a signed checkpoint and verify it with `verifiers` (C2SP
    /// signed-note rules: unknown keys ignored, a failing known key
    /// rejects, at least one must verify). Returns the verified
    /// signatures too.
    pub fn open(
        bytes: &[u8],
        verifiers: &[NoteVerifier],
    ) -> Result<(Self, Vec<Verified>), CheckpointError> {
        let (checkpoint, note) = Self::parse_unverified(bytes)?;
        let verified = note.verify(verifiers)?;
        Ok((SignedCheckpoint { checkpoint, note }, verified))
    }

    /// Parse without verifying any signature: for tools that show what a
    /// note claims, and for callers that verify it themselves.
    pub fn parse_unverified(bytes: &[u8]) -> Result<(Checkpoint, Note), CheckpointError> {
        let note = Note::parse(bytes)?;
        let checkpoint = Checkpoint::parse(note.text())?;
        Ok((checkpoint, note))
    }

    /// Sign `checkpoint` with the log key named `name` (tlog-checkpoint:
    /// the name SHOULD be the origin).
    pub fn sign(
        checkpoint: Checkpoint,
        name: &str,
        key: &herald_core::SigningKey,
    ) -> Result<Self, CheckpointError> {
        let mut note = Note::new(&checkpoint.to_text())?;
        note.sign(name, key)?;
        Ok(SignedCheckpoint { checkpoint, note })
    }

    /// The checkpoint.
    #[must_use]
    pub fn checkpoint(&self) -> &Checkpoint {
        &self.checkpoint
    }

    /// The note, with every signature line it carries.
    #[must_use]
    pub fn note(&self) -> &Note {
        &self.note
    }

    /// The note, to add cosignatures.
    pub fn note_mut(&mut self) -> &mut Note {
        &mut self.note
    }
}
