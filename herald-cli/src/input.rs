//! Reading inputs: a path, or `-` for standard input; an envelope file or a
//! CBOR sequence of envelopes (CLI.md, RFC 8742).

use std::io::Read;
use std::path::Path;

use herald_core::cbor::Limits;
use herald_core::{Envelope, EnvelopeRef};
use herald_verify::sequence::{Piece, split};

use crate::error::CliError;

/// Deepest CBOR nesting the splitter follows (the strict decoder then
/// applies the P1 limit of 32 to each envelope).
pub(crate) const SPLIT_DEPTH: usize = 512;

/// The bytes of `path`, or of standard input for `-`.
pub(crate) fn read(path: &Path) -> Result<Vec<u8>, CliError> {
    if is_stdin(path) {
        let mut bytes = Vec::new();
        std::io::stdin()
            .lock()
            .read_to_end(&mut bytes)
            .map_err(|e| CliError::new(format!("standard input: {e}")))?;
        Ok(bytes)
    } else {
        std::fs::read(path).map_err(|e| CliError::io(path, &e))
    }
}

/// Whether `path` names standard input.
pub(crate) fn is_stdin(path: &Path) -> bool {
    path == Path::new("-")
}

/// How `path` is named in messages.
pub(crate) fn display_name(path: &Path) -> String {
    if is_stdin(path) {
        "standard input".into()
    } else {
        path.display().to_string()
    }
}

/// One well-formed item of an input, or why the input stops making sense.
pub(crate) enum Item<'a> {
    /// A strictly decoded envelope at this byte offset.
    Envelope(usize, Box<EnvelopeRef<'a>>),
    /// Bytes at this offset that are not an envelope, and why.
    Bad(usize, String),
}

/// Split `bytes` into envelopes, in order (an empty input is one `Bad`).
pub(crate) fn items(bytes: &[u8]) -> Vec<Item<'_>> {
    split(bytes, Limits::DEFAULT.max_size, SPLIT_DEPTH)
        .into_iter()
        .map(|piece| match piece {
            Piece::Item { offset, bytes } => match EnvelopeRef::decode(bytes) {
                Ok(env) => Item::Envelope(offset, Box::new(env)),
                Err(e) => Item::Bad(offset, e.to_string()),
            },
            Piece::Unsplittable { offset, error } => Item::Bad(offset, error.to_string()),
        })
        .collect()
}

/// Every envelope of the file at `path`; any item that is not one is an
/// error (exit 2) naming the file and the byte offset.
pub(crate) fn envelopes(path: &Path) -> Result<Vec<Envelope>, CliError> {
    let bytes = read(path)?;
    let name = display_name(path);
    items(&bytes)
        .into_iter()
        .map(|item| match item {
            Item::Envelope(offset, env) => Envelope::from_bytes(env.as_bytes().to_vec())
                .map_err(|e| CliError::new(format!("{name}: byte {offset}: {e}"))),
            Item::Bad(offset, why) => Err(CliError::new(format!("{name}: byte {offset}: {why}"))),
        })
        .collect()
}
