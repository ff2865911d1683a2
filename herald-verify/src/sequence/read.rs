//! Reading a CBOR sequence from a stream, stopping where nothing more can
//! be used (docs/fuzzing.md, hostile input).
//!
//! An audit splits its input ([`super::split`]) and stops at the first
//! point it cannot split past, and after `max_envelopes` items. [`read`]
//! stops reading at the same points, so a hostile stream (a head claiming
//! 2^63 bytes, a stray break, a gigabyte of zeros) costs what its first
//! bytes cost, and the audit of what was read is the audit of the whole
//! stream (tests/sequence_read.rs). Only a stream of well-formed items that
//! goes on runs into the byte limit, [`ReadError::TooLarge`].

use alloc::vec::Vec;
use core::fmt;
use std::io::{self, Read};

use super::{Open, SplitError, item_end_in};

/// What [`read`] may read and what the audit after it will use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadLimits {
    /// Largest item the audit accepts (`AuditOptions::limits.max_size`, P1).
    pub max_item: usize,
    /// Deepest nesting the audit's splitter follows.
    pub max_depth: usize,
    /// Items after which the audit uses nothing (`AuditOptions::max_envelopes`).
    pub max_items: usize,
    /// Most bytes read before [`ReadError::TooLarge`].
    pub max_bytes: u64,
}

/// Why [`read`] failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum ReadError {
    /// The stream goes on past [`ReadLimits::max_bytes`] with items the
    /// audit would still use.
    TooLarge {
        /// The limit.
        limit: u64,
    },
    /// Reading failed.
    Io(io::Error),
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooLarge { limit } => write!(f, "input larger than {limit} bytes"),
            Self::Io(e) => write!(f, "read failed: {e}"),
        }
    }
}

impl std::error::Error for ReadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io(e) => Some(e),
            Self::TooLarge { .. } => None,
        }
    }
}

/// Bytes asked of the reader per round, at least: more than the splitter's
/// JSON sniff, so a stop at offset 0 has what that needs. A round also asks
/// for as many bytes as the unfinished item holds, so re-scanning it stays
/// linear in its size. 64 KiB: a stop reads at most that much past the
/// item it stops at, and a file of many megabytes takes a few hundred
/// system calls, not thousands.
const ROUND: usize = 64 << 10;
const _: () = assert!(ROUND > super::JSON_SNIFF);

/// Read a CBOR sequence (or a proof bundle) from `reader`: everything up to
/// the end of the stream, or up to where an audit with these limits stops
/// using it, whichever comes first.
///
/// It stops after the first item that cannot be split (not well-formed,
/// nested too deeply, larger than `max_item`, decided on the bytes that
/// show it), and after item `max_items + 1` (the audit reports that one as
/// over its cap). A stream whose first item is a map may be a bundle, which
/// can be larger than one envelope: that item is read up to `max_bytes`,
/// and when it is a bundle (`bundle::is_bundle`) the rest of the stream is
/// read as it is. An empty stream reads as empty.
pub fn read(reader: &mut dyn Read, limits: &ReadLimits) -> Result<Vec<u8>, ReadError> {
    read_expecting(reader, limits, 0)
}

/// [`read`], reserving `expected` bytes (at most `max_bytes`) at once: for
/// a file of known size the buffer is exactly the file, where growing it by
/// doubling could hold up to twice the input (the memory bound).
pub fn read_expecting(
    reader: &mut dyn Read,
    limits: &ReadLimits,
    expected: u64,
) -> Result<Vec<u8>, ReadError> {
    read_recording(reader, limits, expected, false).map(|(bytes, _)| bytes)
}

/// Where the items of a CBOR sequence (RFC 8742, CLI.md) that
/// [`read_items`] read end, so that the audit of what was
/// read cuts them there instead of walking them again (`audit_compact_read`):
/// the ends of the well-formed items from offset 0 on, as the audit's
/// splitter finds them with the same limits (an item it reads under the
/// bundle limit and that fits `max_item` ends where that splitter says:
/// every check the walk makes is met with room to spare).
#[derive(Clone, Debug, Default)]
pub struct ItemEnds {
    ends: Vec<u32>,
    /// The length of the bytes the ends are of.
    len: usize,
    max_item: usize,
    max_depth: usize,
}

impl ItemEnds {
    /// The ends, when they are of `bytes` read with these limits.
    pub(crate) fn of(&self, bytes: &[u8], max_item: usize, max_depth: usize) -> Option<&[u32]> {
        let fits = self.len == bytes.len()
            && self.max_item == max_item
            && self.max_depth == max_depth
            && self
                .ends
                .last()
                .is_none_or(|&end| end as usize <= bytes.len());
        fits.then_some(&self.ends[..])
    }
}

/// [`read_expecting`], also giving where each item of the sequence
/// (RFC 8742, CLI.md) read ends.
pub fn read_items(
    reader: &mut dyn Read,
    limits: &ReadLimits,
    expected: u64,
) -> Result<(Vec<u8>, ItemEnds), ReadError> {
    read_recording(reader, limits, expected, true)
}

/// [`read_items`], the ends recorded only when `record`.
fn read_recording(
    reader: &mut dyn Read,
    limits: &ReadLimits,
    expected: u64,
    record: bool,
) -> Result<(Vec<u8>, ItemEnds), ReadError> {
    let exact = usize::try_from(expected.min(limits.max_bytes)).unwrap_or(0);
    let mut buf = Vec::with_capacity(exact);
    let mut scan = Scan {
        end: 0,
        items: 0,
        bundle: false,
        open: Open::default(),
        ends: record.then(Vec::new),
    };
    loop {
        let want = ROUND.max(buf.len() - scan.end);
        let at_end = fill(reader, &mut buf, want, limits.max_bytes)?;
        if (!scan.bundle && scan.advance(&buf, limits) == Next::Stop) || at_end {
            let mut ends = scan.ends.unwrap_or_default();
            if scan.bundle {
                ends.clear();
            }
            ends.shrink_to_fit();
            let ends = ItemEnds {
                ends,
                len: buf.len(),
                max_item: limits.max_item,
                max_depth: limits.max_depth,
            };
            return Ok((buf, ends));
        }
    }
}

/// Append up to `want` bytes (never past `max_bytes + 1` in all); whether
/// the stream ended.
fn fill(
    reader: &mut dyn Read,
    buf: &mut Vec<u8>,
    want: usize,
    max_bytes: u64,
) -> Result<bool, ReadError> {
    let room = max_bytes.saturating_add(1).saturating_sub(buf.len() as u64);
    let ask = room.min(want as u64);
    let got = reader.take(ask).read_to_end(buf).map_err(ReadError::Io)?;
    if buf.len() as u64 > max_bytes {
        return Err(ReadError::TooLarge { limit: max_bytes });
    }
    Ok((got as u64) < ask)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Next {
    More,
    Stop,
}

/// How far the items read so far go.
struct Scan {
    /// End of the last complete item.
    end: usize,
    /// Complete items.
    items: usize,
    /// The stream is a bundle: read it to the end.
    bundle: bool,
    /// The splitter's stack, one for every item.
    open: Open,
    /// The end of every complete item (`None` once one lies past
    /// `u32::MAX`: then none are given).
    ends: Option<Vec<u32>>,
}

impl Scan {
    fn advance(&mut self, buf: &[u8], limits: &ReadLimits) -> Next {
        while self.end < buf.len() {
            let first_map = self.end == 0 && buf.first().is_some_and(|b| b >> 5 == 5);
            let max = if first_map {
                usize::try_from(limits.max_bytes).unwrap_or(usize::MAX)
            } else {
                limits.max_item
            };
            match item_end_in(buf, self.end, max, limits.max_depth, &mut self.open) {
                Ok(end) => {
                    if first_map {
                        if crate::bundle::is_bundle(buf.get(..end).unwrap_or_default()) {
                            self.bundle = true;
                            return Next::More;
                        }
                        if end > limits.max_item {
                            return Next::Stop; // too large for an envelope
                        }
                    }
                    self.end = end;
                    self.items += 1;
                    if let Some(ends) = &mut self.ends {
                        match u32::try_from(end) {
                            Ok(end) => ends.push(end),
                            Err(_) => self.ends = None,
                        }
                    }
                    if self.items > limits.max_items {
                        return Next::Stop;
                    }
                }
                Err(SplitError::Truncated) => return Next::More,
                // The splitter stops here too. At offset 0 it also sniffs
                // for JSON, over the first JSON_SNIFF bytes: the first round
                // read those (ROUND > JSON_SNIFF), or the stream ended.
                Err(_) => return Next::Stop,
            }
        }
        Next::More
    }
}
