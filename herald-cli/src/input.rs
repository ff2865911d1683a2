//! Reading inputs: a path, or `-` for standard input; an envelope file, a
//! CBOR sequence of envelopes (CLI.md, RFC 8742), or a proof bundle
//! (`herald_verify::Bundle`), whose envelopes are its items.

use std::io::{BufRead, Read, Seek, SeekFrom};
use std::path::Path;

use herald_core::cbor::Limits;
use herald_core::{Envelope, EnvelopeRef};
use herald_verify::{
    Bundle, ItemEnds, Piece, ReadError, ReadLimits, is_bundle, not_envelopes,
    read_sequence_items as read_sequence_items_from, sequence_pieces,
};

use crate::display_form;
use crate::error::CliError;

/// Deepest CBOR nesting the splitter follows: the decoder's own ceiling
/// (the strict decoder then applies the P1 limit of 32 to each envelope),
/// as the audit splits.
pub(crate) const SPLIT_DEPTH: usize = herald_core::cbor::MAX_NESTING;

/// Largest input read (a file or standard input): 256 MiB, far above any
/// honest trace file and far below what a hostile stream could claim. The
/// `HERALD_MAX_INPUT` environment variable (bytes) changes it.
pub(crate) const MAX_INPUT: u64 = 256 << 20;

fn max_input() -> u64 {
    std::env::var("HERALD_MAX_INPUT")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(MAX_INPUT)
}

/// The bytes of `path`, or of standard input for `-`, refusing more than
/// the input limit before reading past it.
pub(crate) fn read(path: &Path) -> Result<Vec<u8>, CliError> {
    let limit = max_input();
    read_limited(path, limit, || too_large(path, limit))
}

/// The bytes of an envelope, trace or bundle file ([`read`]); a file in
/// the JSON display form (P3, `inspect --json`) is turned back into P1
/// first, and a note on standard error says so.
///
/// JSON that is not an envelope's display form is returned as it is, after
/// a note on why, so that it is reported `malformed` like any input that
/// does not split into envelopes (CLI.md).
pub(crate) fn read_envelopes(path: &Path) -> Result<Vec<u8>, CliError> {
    let bytes = read(path)?;
    match from_display_form(path, bytes.clone(), display_form::envelope) {
        Ok(p1) => Ok(p1),
        Err(e) => {
            crate::notice::note(&format!("{e}; not read as the JSON display form"));
            Ok(bytes)
        }
    }
}

/// The bytes of the proof object file `path` (or `-`), at most
/// [`herald_verify::MAX_PROOF_LEN`] bytes.
pub(crate) fn read_proof(path: &Path) -> Result<Vec<u8>, CliError> {
    let limit = herald_verify::MAX_PROOF_LEN;
    let bytes = read_limited(path, limit, || {
        CliError::new(format!(
            "{}: larger than the {limit} bytes a proof object can be",
            display_name(path)
        ))
    })?;
    from_display_form(path, bytes, display_form::audit_object)
}

/// [`read`] with the limit `limit`, and `too_large` as the error past it.
/// `bytes`, or when they are JSON, each JSON value through `convert`.
fn from_display_form(
    path: &Path,
    bytes: Vec<u8>,
    convert: fn(&str) -> Result<Vec<u8>, String>,
) -> Result<Vec<u8>, CliError> {
    if !display_form::is_json(&bytes) {
        return Ok(bytes);
    }
    let name = display_name(path);
    let text = std::str::from_utf8(&bytes)
        .map_err(|_| CliError::new(format!("{name}: starts like JSON but is not UTF-8")))?;
    let mut out = Vec::new();
    let mut count = 0usize;
    for value in display_form::values(text) {
        count += 1;
        let bad = |e: String| CliError::new(format!("{name}: JSON value {count}: {e}"));
        out.extend(convert(value.map_err(bad)?).map_err(bad)?);
    }
    crate::notice::note(&format!(
        "{name}: read as the JSON display form (P3): {count} object{} turned into P1 CBOR",
        if count == 1 { "" } else { "s" }
    ));
    Ok(out)
}

fn read_limited(
    path: &Path,
    limit: u64,
    too_large: impl Fn() -> CliError,
) -> Result<Vec<u8>, CliError> {
    let mut bytes = Vec::new();
    if is_stdin(path) {
        std::io::stdin()
            .lock()
            .take(limit + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| CliError::new(format!("standard input: {e}")))?;
    } else {
        let (file, meta) = open(path)?;
        if meta.len() > limit {
            return Err(too_large());
        }
        file.take(limit + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| CliError::io(path, &e))?;
    }
    if bytes.len() as u64 > limit {
        return Err(too_large());
    }
    Ok(bytes)
}

/// The CBOR sequence (or proof bundle) in `path`, or on standard input for
/// `-`, read only as far as an audit uses it (`read_sequence`): a hostile
/// stream stops at its first unsplittable item or after item
/// `max_items + 1`, long before the input limit; a stream of good items
/// past the limit is refused. `max_items` is the audit's cap for `verify`,
/// `usize::MAX` where every envelope must be read.
pub(crate) fn read_sequence(path: &Path, max_items: usize) -> Result<Vec<u8>, CliError> {
    read_sequence_items(path, max_items).map(|(bytes, _)| bytes)
}

/// [`read_sequence`], and where its items end (empty for the JSON display
/// form), for the audit to cut them there (`audit_compact_read`).
pub(crate) fn read_sequence_items(
    path: &Path,
    max_items: usize,
) -> Result<(Vec<u8>, ItemEnds), CliError> {
    let limits = ReadLimits {
        max_item: Limits::DEFAULT.max_size,
        max_depth: SPLIT_DEPTH,
        max_items,
        max_bytes: max_input(),
    };
    let failed = |e: ReadError| match e {
        ReadError::TooLarge { limit } => too_large(path, limit),
        e => CliError::new(format!("{}: {e}", display_name(path))),
    };
    if is_stdin(path) {
        let mut stdin = std::io::stdin().lock();
        if stdin.fill_buf().is_ok_and(display_form::is_json) {
            // Unlocked first: `read_envelopes` locks standard input again.
            drop(stdin);
            return Ok((read_envelopes(path)?, ItemEnds::default()));
        }
        read_sequence_items_from(&mut stdin, &limits, 0).map_err(failed)
    } else {
        let (mut file, meta) = open(path)?;
        let mut first = [0u8; 64];
        let n = file.read(&mut first).map_err(|e| CliError::io(path, &e))?;
        if display_form::is_json(first.get(..n).unwrap_or_default()) {
            return Ok((read_envelopes(path)?, ItemEnds::default()));
        }
        file.seek(SeekFrom::Start(0))
            .map_err(|e| CliError::io(path, &e))?;
        read_sequence_items_from(&mut file, &limits, meta.len()).map_err(|e| match e {
            ReadError::Io(e) => CliError::io(path, &e),
            e => failed(e),
        })
    }
}

/// Open the input file `path`: a regular file only, so a FIFO or a device
/// is refused by name instead of blocking `open` or reading without end
/// (docs/performance.md *Memory under hostile input*, B6). Pipes come in
/// as `-`.
fn open(path: &Path) -> Result<(std::fs::File, std::fs::Metadata), CliError> {
    herald_verify::open_regular(path).map_err(|e| match e {
        e @ herald_verify::FileError::NotRegular { .. } => {
            CliError::new(format!("{e} (read a pipe as `-`, standard input)"))
        }
        e => CliError::file(e),
    })
}

/// The error for an input past the limit, naming the way to raise it.
fn too_large(path: &Path, limit: u64) -> CliError {
    CliError::new(format!(
        "{}: input larger than {limit} bytes (set HERALD_MAX_INPUT to raise the limit)",
        display_name(path)
    ))
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

/// Split `bytes` into envelopes, in order (an empty input is one `Bad`). A
/// proof bundle's items are its envelopes, at their offsets in the bundle;
/// a bundle that is not in its format is one `Bad`, and so is a key file or
/// text (`not_envelopes`).
///
/// One item at a time: a caller that reports or stops as it goes holds one
/// item, not one per input byte (docs/performance.md *Memory under hostile
/// input*, B2: ten million one-byte items once cost 1.65 GB collected with
/// their error texts).
pub(crate) fn items(bytes: &[u8]) -> Box<dyn Iterator<Item = Item<'_>> + '_> {
    if let Some(what) = not_envelopes(bytes) {
        // A key file or text: one line, not one per byte offset.
        return Box::new(std::iter::once(Item::Bad(0, what.to_string())));
    }
    if is_bundle(bytes) {
        return match Bundle::decode(bytes) {
            Ok(b) => Box::new(b.envelopes().to_vec().into_iter().map(|(offset, env)| {
                match EnvelopeRef::decode(env) {
                    Ok(env) => Item::Envelope(offset, Box::new(env)),
                    Err(e) => Item::Bad(offset, e.to_string()),
                }
            })),
            Err(e) => Box::new(std::iter::once(Item::Bad(0, e.to_string()))),
        };
    }
    Box::new(
        sequence_pieces(bytes, Limits::DEFAULT.max_size, SPLIT_DEPTH).map(|piece| match piece {
            Piece::Item { offset, bytes } => match EnvelopeRef::decode(bytes) {
                Ok(env) => Item::Envelope(offset, Box::new(env)),
                Err(e) => Item::Bad(offset, e.to_string()),
            },
            Piece::Unsplittable { offset, error } => Item::Bad(offset, error.to_string()),
        }),
    )
}

/// Every envelope of the file at `path`; any item that is not one is an
/// error (exit 2) naming the file and the byte offset.
pub(crate) fn envelopes(path: &Path) -> Result<Vec<Envelope>, CliError> {
    let bytes = read_sequence(path, usize::MAX)?;
    let name = display_name(path);
    items(&bytes)
        .map(|item| match item {
            Item::Envelope(offset, env) => Envelope::from_bytes(env.as_bytes().to_vec())
                .map_err(|e| CliError::new(format!("{name}: byte {offset}: {e}"))),
            Item::Bad(offset, why) => Err(CliError::new(format!("{name}: byte {offset}: {why}"))),
        })
        .collect()
}
