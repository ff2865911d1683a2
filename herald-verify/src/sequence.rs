//! Splitting input into envelopes: a file holds one envelope or a CBOR
//! sequence of them (RFC 8742, CLI.md).
//!
//! Splitting only needs each item to be *well-formed* CBOR (RFC 8949 §5.3.1),
//! not canonical: a non-canonical envelope is still cut out and then
//! reported `malformed` by the strict check, so one bad envelope does not
//! hide the ones after it. Input that is not well-formed cannot be split
//! further and ends the file with one `malformed` entry.

use alloc::vec::Vec;
use core::fmt;

mod parallel;
mod read;
pub(crate) use parallel::for_each_piece;
pub use read::{ItemEnds, ReadError, ReadLimits, read, read_expecting, read_items};

/// Why the rest of an input cannot be split into items.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SplitError {
    /// The input is empty: verifying nothing must not look like success.
    Empty,
    /// The input ends inside an item.
    Truncated,
    /// A byte that cannot start a CBOR item here (reserved or stray break).
    NotWellFormed,
    /// Nesting deeper than the splitter follows.
    TooDeep,
    /// An item larger than the size limit.
    TooLarge,
    /// The input is text that looks like JSON: envelopes are CBOR (JSON is
    /// a display form only, spec §3.1).
    LooksLikeJson,
}

impl fmt::Display for SplitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Empty => "empty input: no envelope to verify",
            Self::Truncated => "input ends inside a CBOR item (truncated)",
            Self::NotWellFormed => "not well-formed CBOR",
            Self::TooDeep => "CBOR nested too deeply",
            Self::TooLarge => "CBOR item larger than the envelope size limit",
            Self::LooksLikeJson => {
                "this looks like JSON; envelopes are CBOR (JSON is display only)"
            }
        })
    }
}

impl SplitError {
    /// A short stable name of what is wrong, for the bindings' errors
    /// (`code` in JavaScript, `rule` in Python), the P1 rule's name where
    /// there is one (`truncated`, `depth_exceeded`, `too_large`):
    /// `empty`, `truncated`, `not_well_formed`, `depth_exceeded`,
    /// `too_large`, `looks_like_json`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Empty => "empty",
            Self::Truncated => "truncated",
            Self::NotWellFormed => "not_well_formed",
            Self::TooDeep => "depth_exceeded",
            Self::TooLarge => "too_large",
            Self::LooksLikeJson => "looks_like_json",
        }
    }
}

impl std::error::Error for SplitError {}

/// One piece of an input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Piece<'a> {
    /// A well-formed CBOR item at this offset (to be checked as an envelope).
    Item {
        /// Offset in the input.
        offset: usize,
        /// Its bytes.
        bytes: &'a [u8],
    },
    /// The input cannot be split from this offset on.
    Unsplittable {
        /// Offset in the input.
        offset: usize,
        /// Why.
        error: SplitError,
    },
}

/// Split `input` into well-formed items; at most one trailing
/// [`Piece::Unsplittable`], and one for an empty input.
pub fn split(input: &[u8], max_item: usize, max_depth: usize) -> Vec<Piece<'_>> {
    pieces(input, max_item, max_depth).collect()
}

/// The pieces [`split`] returns, one at a time: an audit of a stream of
/// tiny items need not hold them all at once (docs/fuzzing.md, F2).
pub fn pieces(input: &[u8], max_item: usize, max_depth: usize) -> Pieces<'_> {
    Pieces {
        input,
        pos: 0,
        max_item,
        max_depth,
        done: false,
        open: Open::default(),
    }
}

/// [`pieces`] from offset `from` on (the end of an item: a piece before
/// it is known).
pub(crate) fn pieces_from(
    input: &[u8],
    from: usize,
    max_item: usize,
    max_depth: usize,
) -> Pieces<'_> {
    let mut p = pieces(input, max_item, max_depth);
    p.pos = from;
    p
}

/// Iterator of [`pieces`].
#[derive(Clone, Debug)]
pub struct Pieces<'a> {
    input: &'a [u8],
    pos: usize,
    max_item: usize,
    max_depth: usize,
    done: bool,
    /// The splitter's stack, one for every item.
    open: Open,
}

impl<'a> Iterator for Pieces<'a> {
    type Item = Piece<'a>;

    fn next(&mut self) -> Option<Piece<'a>> {
        if self.done {
            return None;
        }
        let (input, pos) = (self.input, self.pos);
        if input.is_empty() {
            self.done = true;
            return Some(Piece::Unsplittable {
                offset: 0,
                error: SplitError::Empty,
            });
        }
        if pos >= input.len() {
            self.done = true;
            return None;
        }
        match item_end_in(input, pos, self.max_item, self.max_depth, &mut self.open) {
            Ok(end) => {
                self.pos = end;
                Some(Piece::Item {
                    offset: pos,
                    bytes: input.get(pos..end).unwrap_or_default(),
                })
            }
            Err(error) => {
                self.done = true;
                let error = if pos == 0 && looks_like_json(input) {
                    SplitError::LooksLikeJson
                } else {
                    error
                };
                Some(Piece::Unsplittable { offset: pos, error })
            }
        }
    }
}

/// An input that is plainly something other than envelopes, told by its
/// shape before it is split: one line for the whole input where splitting
/// would report every byte offset (CLI.md: unparseable input is one
/// `malformed` entry). Decided on the first `JSON_SNIFF` bytes, which
/// [`read`] always has before it stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum NotEnvelopes {
    /// A secret key file (`herald-secret-key-v1`, CLI.md `NAME.key`).
    SecretKeyFile,
    /// A public key file: keyring lines (CLI.md `<sigil> ed25519 <hex> [label]`).
    PublicKeyFile,
    /// Text (UTF-8 without control characters): envelopes are CBOR (P1),
    /// and no CBOR sequence of envelopes is valid UTF-8 (a map's first
    /// byte never starts a character).
    Text,
}

impl fmt::Display for NotEnvelopes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::SecretKeyFile => "this is a secret key file (NAME.key), not envelopes",
            Self::PublicKeyFile => "this is a public key file (keyring lines), not envelopes",
            Self::Text => "this is text, not CBOR: envelopes are CBOR (P1)",
        })
    }
}

/// What `input` plainly is when it is not envelopes ([`NotEnvelopes`]);
/// `None` for anything else, CBOR or not, which is split as usual. JSON is
/// left to the splitter, which says so ([`SplitError::LooksLikeJson`]).
pub fn not_envelopes(input: &[u8]) -> Option<NotEnvelopes> {
    let head = input.get(..JSON_SNIFF).unwrap_or(input);
    if head.starts_with(crate::keyfile::MAGIC.as_bytes()) {
        return Some(NotEnvelopes::SecretKeyFile);
    }
    let text = match core::str::from_utf8(head) {
        Ok(text) => text,
        // A character cut by the sniff's end still counts as text.
        Err(e) if e.error_len().is_none() => {
            core::str::from_utf8(head.get(..e.valid_up_to())?).ok()?
        }
        Err(_) => return None,
    };
    let control = |c: char| c.is_control() && !matches!(c, '\n' | '\r' | '\t');
    if text.trim().is_empty() || text.chars().any(control) || looks_like_json(head) {
        return None;
    }
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'));
    let mut words = first.unwrap_or_default().split_ascii_whitespace();
    let keyring_line =
        words.next().is_some_and(|w| w.starts_with("sigil:")) && words.next() == Some("ed25519");
    Some(if keyring_line {
        NotEnvelopes::PublicKeyFile
    } else {
        NotEnvelopes::Text
    })
}

/// How much of an input [`looks_like_json`] reads, so that its answer,
/// like every other split decision, depends on a bounded prefix
/// ([`read`] relies on it).
pub(crate) const JSON_SNIFF: usize = 4096;

/// Whether `input` is text opening a JSON object or array: its first
/// [`JSON_SNIFF`] bytes are UTF-8 (a character cut at the end allowed).
fn looks_like_json(input: &[u8]) -> bool {
    let head = input.get(..JSON_SNIFF).unwrap_or(input);
    let text = head.trim_ascii_start();
    matches!(text.first(), Some(b'{' | b'['))
        && core::str::from_utf8(text).map_or_else(|e| e.error_len().is_none(), |_| true)
}

/// The stack of open containers [`item_end_in`] walks with: items still
/// expected in each, [`Open::INDEFINITE`] for one that ends at a break. One
/// stack serves every item of a sequence (no allocation per item); it is
/// empty between items.
#[derive(Clone, Debug, Default)]
pub(crate) struct Open(Vec<u64>);

impl Open {
    /// An indefinite-length container: no count can reach it, since a
    /// definite count is at most the input's length (it is refused as
    /// truncated otherwise).
    const INDEFINITE: u64 = u64::MAX;

    /// One item completed: count it against the open containers, closing
    /// those that are full. Returns whether the top-level item is complete.
    #[inline]
    fn finish(&mut self) -> bool {
        loop {
            match self.0.last_mut() {
                None => return true,
                Some(&mut Self::INDEFINITE) => return false,
                Some(left) => {
                    *left -= 1;
                    if *left > 0 {
                        return false;
                    }
                    self.0.pop();
                }
            }
        }
    }
}

/// End offset of the well-formed item starting at `start`, at most
/// `max_item` bytes long. Iterative: a stack of open containers bounded by
/// `max_depth`, so hostile nesting costs memory proportional to the limit,
/// never the input. Every answer depends only on the bytes up to the point
/// where it is decided: an item is [`SplitError::TooLarge`] as soon as its
/// bytes read, or a string length or container count it claims (every
/// item is at least one byte), pass `max_item`, whether or not the input
/// holds the rest. `open` is the stack, reused from item to item.
pub(crate) fn item_end_in(
    input: &[u8],
    start: usize,
    max_item: usize,
    max_depth: usize,
    open: &mut Open,
) -> Result<usize, SplitError> {
    open.0.clear();
    // The furthest the item may end (no overflow: `pos - start` never
    // passes `max_item` when `start + max_item` passes `usize::MAX`).
    let limit = start.saturating_add(max_item);
    // Whether `more` bytes after `pos` would take the item past `max_item`.
    let past_limit = |pos: usize, more: u64| {
        max_item
            .checked_sub(pos - start)
            .is_none_or(|room| more > room as u64)
    };
    // The item ends at `pos`: its last head may have taken it past the limit.
    let complete = |pos: usize| {
        if pos > limit {
            Err(SplitError::TooLarge)
        } else {
            Ok(pos)
        }
    };
    let mut pos = start;
    loop {
        if pos > limit {
            return Err(SplitError::TooLarge);
        }
        let initial = *input.get(pos).ok_or(SplitError::Truncated)?;
        pos += 1;
        let (major, ai) = (initial >> 5, initial & 0x1f);
        if ai < 24 && (major == 2 || major == 3) {
            // A short string (most map keys): its length is in its head,
            // and it cannot overflow (`pos` is within the input).
            let end = pos + usize::from(ai);
            if end > limit {
                return Err(SplitError::TooLarge);
            }
            if end > input.len() {
                return Err(SplitError::Truncated);
            }
            pos = end;
            if open.finish() {
                return Ok(pos);
            }
            continue;
        }
        let arg = if ai < 24 {
            u64::from(ai)
        } else {
            let arg = match ai {
                24 => head(input, pos).map(|b| (u64::from(u8::from_be_bytes(b)), 1)),
                25 => head(input, pos).map(|b| (u64::from(u16::from_be_bytes(b)), 2)),
                26 => head(input, pos).map(|b| (u64::from(u32::from_be_bytes(b)), 4)),
                27 => head(input, pos).map(|b| (u64::from_be_bytes(b), 8)),
                31 if initial == 0xff => {
                    // A break closes the innermost indefinite container.
                    if open.0.pop() != Some(Open::INDEFINITE) {
                        return Err(SplitError::NotWellFormed);
                    }
                    if open.finish() {
                        return complete(pos);
                    }
                    continue;
                }
                31 if matches!(major, 2..=5) => {
                    if open.0.len() >= max_depth {
                        return Err(SplitError::TooDeep);
                    }
                    open.0.push(Open::INDEFINITE);
                    continue;
                }
                _ => return Err(SplitError::NotWellFormed),
            };
            let (arg, n) = arg.ok_or(SplitError::Truncated)?;
            pos += n;
            arg
        };
        match major {
            2 | 3 => {
                if past_limit(pos, arg) {
                    return Err(SplitError::TooLarge);
                }
                // At most `max_item`, so it fits a usize.
                pos = usize::try_from(arg)
                    .ok()
                    .and_then(|len| pos.checked_add(len))
                    .filter(|&end| end <= input.len())
                    .ok_or(SplitError::Truncated)?;
            }
            4 | 5 => {
                let count = if major == 5 {
                    arg.checked_mul(2)
                } else {
                    Some(arg)
                };
                let count = count.ok_or(SplitError::TooLarge)?;
                if past_limit(pos, count) {
                    return Err(SplitError::TooLarge);
                }
                if count > (input.len() - pos) as u64 {
                    return Err(SplitError::Truncated);
                }
                if count > 0 {
                    if open.0.len() >= max_depth {
                        return Err(SplitError::TooDeep);
                    }
                    open.0.push(count);
                    continue;
                }
            }
            // A tag's content follows as the next item.
            6 => continue,
            _ => {}
        }
        if open.finish() {
            return complete(pos);
        }
    }
}

/// The `N` bytes of a head's argument at `pos`, when the input holds them.
#[inline]
fn head<const N: usize>(input: &[u8], pos: usize) -> Option<[u8; N]> {
    input.get(pos..pos.checked_add(N)?)?.try_into().ok()
}
