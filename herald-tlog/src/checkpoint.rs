//! C2SP tlog-checkpoint v1: the body of a signed note that commits to a log,
//! `<origin>\n<size>\n<base64 root>\n`, then optional extension lines. The
//! root is the RFC 6962 (RFC 9162 §2.1.1) hash of the first `size` leaves,
//! the very tree a HERALD audit log builds over its P9 leaves.

use core::fmt;

use data_encoding::BASE64;
use herald_verify::merkle::Hash;

/// A checkpoint body could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CheckpointError {
    /// Fewer than three lines, or a line (origin, extension) is empty.
    Lines,
    /// The size is not a decimal number without leading zeros.
    Size,
    /// The root is not the base64 of 32 bytes.
    Root,
}

impl fmt::Display for CheckpointError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Lines => "a checkpoint is an origin, a size and a root line, each non-empty",
            Self::Size => "the size line is not a decimal number without leading zeros",
            Self::Root => "the root line is not the base64 of 32 bytes",
        })
    }
}

impl std::error::Error for CheckpointError {}

/// A log checkpoint: the origin that names the log, its size and root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checkpoint {
    /// The log's origin line (e.g. `example.com/log`).
    pub origin: String,
    /// The number of leaves.
    pub size: u64,
    /// The RFC 6962 root of those leaves.
    pub root: Hash,
    /// Extension lines, opaque, in order.
    pub extensions: Vec<String>,
}

impl Checkpoint {
    /// Read a checkpoint from a note's text (which ends with a newline).
    pub fn parse(text: &str) -> Result<Self, CheckpointError> {
        let body = text.strip_suffix('\n').ok_or(CheckpointError::Lines)?;
        let mut lines = body.split('\n');
        let (Some(origin), Some(size), Some(root)) = (lines.next(), lines.next(), lines.next())
        else {
            return Err(CheckpointError::Lines);
        };
        if origin.is_empty() {
            return Err(CheckpointError::Lines);
        }
        let canonical = !size.is_empty()
            && size.bytes().all(|b| b.is_ascii_digit())
            && (size == "0" || !size.starts_with('0'));
        let size = size
            .parse::<u64>()
            .ok()
            .filter(|_| canonical)
            .ok_or(CheckpointError::Size)?;
        let root = BASE64
            .decode(root.as_bytes())
            .ok()
            .and_then(|r| Hash::try_from(r).ok())
            .ok_or(CheckpointError::Root)?;
        let extensions: Vec<String> = lines.map(String::from).collect();
        if extensions.iter().any(String::is_empty) {
            return Err(CheckpointError::Lines);
        }
        Ok(Self {
            origin: origin.into(),
            size,
            root,
            extensions,
        })
    }

    /// The note text: origin, size, base64 root, extensions, each ending
    /// with a newline.
    pub fn to_text(&self) -> String {
        let mut text = std::format!(
            "{}\n{}\n{}\n",
            self.origin,
            self.size,
            BASE64.encode(&self.root)
        );
        for e in &self.extensions {
            text.push_str(e);
            text.push('\n');
        }
        text
    }
}
