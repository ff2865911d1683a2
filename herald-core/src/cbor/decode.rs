//! The strict decoder of PROFILE.md P1: it accepts exactly the byte strings
//! the encoder produces, borrows from the input, and never allocates.

use core::fmt;

use super::encode::major;
use super::float::{FloatError, FloatForm, classify, f16_to_f64};
use super::value_ref::{ArrayRef, MapRef, ValueRef};

/// Resource limits, checked before any work proportional to a claimed length
/// (P1 defaults: depth 32, 65 536 items per container, 1 MiB per item).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Deepest container nesting; a top-level map is depth 1 (P13). Never
    /// more than [`MAX_NESTING`], whatever is set here.
    pub max_depth: usize,
    /// Most items in one array, or entries in one map.
    pub max_items: usize,
    /// Most bytes in one top-level item.
    pub max_size: usize,
}

/// The deepest nesting the decoder follows whatever [`Limits::max_depth`]
/// says: it recurses once per level, and 512 levels fit comfortably in a
/// 2 MiB thread stack (and in far less in release builds). Deeper input is
/// `DepthExceeded`, never a stack overflow.
pub const MAX_NESTING: usize = 512;

impl Limits {
    /// The P1 defaults.
    pub const DEFAULT: Self = Self {
        max_depth: 32,
        max_items: 65_536,
        max_size: 1 << 20,
    };
}

impl Default for Limits {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// The P1 rule an input broke.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Rule {
    /// The input ended inside an item (or a length claims more than is left).
    Truncated,
    /// Bytes follow the item.
    TrailingBytes,
    /// A head is not in its shortest form.
    NonShortestHead,
    /// Additional information 28–30 is reserved.
    ReservedAdditionalInfo,
    /// An indefinite-length string, array or map.
    IndefiniteLength,
    /// A "break" byte outside any indefinite-length item.
    UnexpectedBreak,
    /// A tag (none are registered in this profile).
    Tag,
    /// `undefined` or another simple value besides false, true and null.
    DisallowedSimple,
    /// A NaN or infinite float.
    NonFiniteFloat,
    /// The float −0.0.
    NegativeZero,
    /// A float with an integral value that fits a CBOR integer.
    IntegralFloat,
    /// A float written wider than needed to represent it exactly.
    NonShortestFloat,
    /// A text string that is not valid UTF-8.
    InvalidUtf8,
    /// A map key that is not a text string.
    NonTextKey,
    /// Map keys out of canonical order.
    UnsortedKeys,
    /// The same map key twice.
    DuplicateKey,
    /// Containers nested deeper than [`Limits::max_depth`].
    DepthExceeded,
    /// A container with more than [`Limits::max_items`] items.
    TooManyItems,
    /// An item larger than [`Limits::max_size`].
    TooLarge,
}

impl Rule {
    /// A stable snake_case name for this rule (used in vectors and reports).
    pub const fn name(self) -> &'static str {
        match self {
            Self::Truncated => "truncated",
            Self::TrailingBytes => "trailing_bytes",
            Self::NonShortestHead => "non_shortest_head",
            Self::ReservedAdditionalInfo => "reserved_additional_info",
            Self::IndefiniteLength => "indefinite_length",
            Self::UnexpectedBreak => "unexpected_break",
            Self::Tag => "tag",
            Self::DisallowedSimple => "disallowed_simple",
            Self::NonFiniteFloat => "non_finite_float",
            Self::NegativeZero => "negative_zero",
            Self::IntegralFloat => "integral_float",
            Self::NonShortestFloat => "non_shortest_float",
            Self::InvalidUtf8 => "invalid_utf8",
            Self::NonTextKey => "non_text_key",
            Self::UnsortedKeys => "unsorted_keys",
            Self::DuplicateKey => "duplicate_key",
            Self::DepthExceeded => "depth_exceeded",
            Self::TooManyItems => "too_many_items",
            Self::TooLarge => "too_large",
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Self::Truncated => "input ends inside an item",
            Self::TrailingBytes => "bytes after the item",
            Self::NonShortestHead => "head not in shortest form",
            Self::ReservedAdditionalInfo => "reserved additional information (28-30)",
            Self::IndefiniteLength => "indefinite length",
            Self::UnexpectedBreak => "break outside an indefinite-length item",
            Self::Tag => "tags are not allowed",
            Self::DisallowedSimple => "simple value other than false, true, null",
            Self::NonFiniteFloat => "NaN or infinite float",
            Self::NegativeZero => "negative zero",
            Self::IntegralFloat => "integral float must be an integer",
            Self::NonShortestFloat => "float not in shortest exact width",
            Self::InvalidUtf8 => "text is not valid UTF-8",
            Self::NonTextKey => "map key is not a text string",
            Self::UnsortedKeys => "map keys out of canonical order",
            Self::DuplicateKey => "duplicate map key",
            Self::DepthExceeded => "nesting deeper than the limit",
            Self::TooManyItems => "container has more items than the limit",
            Self::TooLarge => "item larger than the size limit",
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.describe())
    }
}

/// A strict-decoding failure: the byte offset and the P1 rule broken there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DecodeError {
    offset: usize,
    rule: Rule,
}

impl DecodeError {
    pub(crate) const fn new(offset: usize, rule: Rule) -> Self {
        Self { offset, rule }
    }

    /// Offset of the offending byte from the start of the input.
    pub const fn offset(&self) -> usize {
        self.offset
    }

    /// The rule broken.
    pub const fn rule(&self) -> Rule {
        self.rule
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "byte {}: {} (P1)", self.offset, self.rule)
    }
}

impl core::error::Error for DecodeError {}

/// Decode exactly one canonical item filling all of `input`, with default limits.
pub fn decode(input: &[u8]) -> Result<ValueRef<'_>, DecodeError> {
    decode_with(input, &Limits::DEFAULT)
}

/// Decode exactly one canonical item filling all of `input`.
pub fn decode_with<'a>(input: &'a [u8], limits: &Limits) -> Result<ValueRef<'a>, DecodeError> {
    let (value, end) = decode_prefix(input, limits)?;
    if end != input.len() {
        return Err(DecodeError::new(end, Rule::TrailingBytes));
    }
    Ok(value)
}

/// Decode one canonical item from the start of `input`, returning it and
/// where it ends (for CBOR sequences, RFC 8742).
pub fn decode_prefix<'a>(
    input: &'a [u8],
    limits: &Limits,
) -> Result<(ValueRef<'a>, usize), DecodeError> {
    let window = input.get(..limits.max_size).unwrap_or(input);
    let mut parser = Parser {
        input: window,
        pos: 0,
        limits,
    };
    match parser.item(0) {
        Ok(value) => Ok((value, parser.pos)),
        Err(e) if e.rule == Rule::Truncated && window.len() < input.len() => {
            Err(DecodeError::new(0, Rule::TooLarge))
        }
        Err(e) => Err(e),
    }
}

struct Head {
    major: u8,
    ai: u8,
    arg: u64,
}

struct Parser<'a, 'l> {
    input: &'a [u8],
    pos: usize,
    limits: &'l Limits,
}

impl<'a> Parser<'a, '_> {
    fn err(&self, at: usize, rule: Rule) -> DecodeError {
        DecodeError::new(at, rule)
    }

    fn remaining(&self) -> usize {
        self.input.len() - self.pos
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&end| end <= self.input.len())
            .ok_or(DecodeError::new(self.input.len(), Rule::Truncated))?;
        let input: &'a [u8] = self.input;
        let bytes = input
            .get(self.pos..end)
            .ok_or(DecodeError::new(self.pos, Rule::Truncated))?;
        self.pos = end;
        Ok(bytes)
    }

    fn be(&mut self, n: usize) -> Result<u64, DecodeError> {
        Ok(self
            .take(n)?
            .iter()
            .fold(0u64, |acc, &b| (acc << 8) | u64::from(b)))
    }

    /// Read a head, enforcing the shortest-form rule for integer arguments.
    fn head(&mut self) -> Result<Head, DecodeError> {
        let start = self.pos;
        let initial = *self
            .take(1)?
            .first()
            .ok_or(self.err(start, Rule::Truncated))?;
        let major = initial >> 5;
        let ai = initial & 0x1f;
        if major == major::TAG {
            return Err(self.err(start, Rule::Tag));
        }
        if major == major::SIMPLE {
            return Ok(Head { major, ai, arg: 0 });
        }
        let arg = match ai {
            0..=23 => u64::from(ai),
            24 => self.be(1)?,
            25 => self.be(2)?,
            26 => self.be(4)?,
            27 => self.be(8)?,
            28..=30 => return Err(self.err(start, Rule::ReservedAdditionalInfo)),
            _ => return Err(self.err(start, Rule::IndefiniteLength)),
        };
        let shortest = match ai {
            24 => arg >= 24,
            25 => arg > 0xff,
            26 => arg > 0xffff,
            27 => arg > 0xffff_ffff,
            _ => true,
        };
        if !shortest {
            return Err(self.err(start, Rule::NonShortestHead));
        }
        Ok(Head { major, ai, arg })
    }

    /// A claimed length or count, bounded by what is left of the input.
    fn claim(&self, at: usize, arg: u64, min_bytes_each: usize) -> Result<usize, DecodeError> {
        usize::try_from(arg)
            .ok()
            .and_then(|n| n.checked_mul(min_bytes_each))
            .filter(|&need| need <= self.remaining())
            .map(|need| need / min_bytes_each)
            .ok_or(self.err(at, Rule::Truncated))
    }

    /// The item at the cursor, checked and returned (the top-level item).
    fn item(&mut self, depth: usize) -> Result<ValueRef<'a>, DecodeError> {
        let start = self.pos;
        let head = self.head()?;
        match head.major {
            major::UNSIGNED => Ok(ValueRef::Unsigned(head.arg)),
            major::NEGATIVE => Ok(ValueRef::Negative(head.arg)),
            major::BYTES => {
                let n = self.claim(start, head.arg, 1)?;
                Ok(ValueRef::Bytes(self.take(n)?))
            }
            major::TEXT => {
                let n = self.claim(start, head.arg, 1)?;
                let body_start = self.pos;
                let bytes = self.take(n)?;
                core::str::from_utf8(bytes)
                    .map(ValueRef::Text)
                    .map_err(|e| self.err(body_start + e.valid_up_to(), Rule::InvalidUtf8))
            }
            major::ARRAY => Ok(ValueRef::Array(self.array(start, head.arg, depth)?)),
            major::MAP => Ok(ValueRef::Map(self.map(start, head.arg, depth)?)),
            _ => self.simple(start, head.ai),
        }
    }

    /// An item inside a container: checked as [`Parser::item`] checks it,
    /// in the same order, but nothing is built (a view re-reads it).
    fn nested(&mut self, depth: usize) -> Result<(), DecodeError> {
        let start = self.pos;
        let head = self.head()?;
        match head.major {
            major::UNSIGNED | major::NEGATIVE => Ok(()),
            major::BYTES => {
                let n = self.claim(start, head.arg, 1)?;
                self.take(n).map(|_| ())
            }
            major::TEXT => self.text_body(start, head.arg),
            major::ARRAY => self.array(start, head.arg, depth).map(|_| ()),
            major::MAP => self.map(start, head.arg, depth).map(|_| ()),
            _ => self.simple(start, head.ai).map(|_| ()),
        }
    }

    /// An array's items, after its head at `start`.
    fn array(&mut self, start: usize, arg: u64, depth: usize) -> Result<ArrayRef<'a>, DecodeError> {
        let n = self.container(start, arg, 1, depth)?;
        let items_start = self.pos;
        for _ in 0..n {
            self.nested(depth + 1)?;
        }
        Ok(ArrayRef::new(self.input, items_start, self.pos, n))
    }

    /// A map's entries, after its head at `start`: text keys in canonical
    /// order, no key twice.
    fn map(&mut self, start: usize, arg: u64, depth: usize) -> Result<MapRef<'a>, DecodeError> {
        let n = self.container(start, arg, 2, depth)?;
        let entries_start = self.pos;
        let mut prev: Option<&'a [u8]> = None;
        for _ in 0..n {
            let key_start = self.pos;
            let key_head = self.head()?;
            if key_head.major != major::TEXT {
                return Err(self.err(key_start, Rule::NonTextKey));
            }
            self.text_body(key_start, key_head.arg)?;
            let key = self.input.get(key_start..self.pos).unwrap_or_default();
            if let Some(prev) = prev {
                // The heads differ for keys of different lengths under 24
                // bytes: most pairs are ordered by their first byte.
                let order = match (prev.first(), key.first()) {
                    (Some(a), Some(b)) if a != b => a.cmp(b),
                    _ => prev.cmp(key),
                };
                match order {
                    core::cmp::Ordering::Less => {}
                    core::cmp::Ordering::Equal => {
                        return Err(self.err(key_start, Rule::DuplicateKey));
                    }
                    core::cmp::Ordering::Greater => {
                        return Err(self.err(key_start, Rule::UnsortedKeys));
                    }
                }
            }
            prev = Some(key);
            self.nested(depth + 1)?;
        }
        Ok(MapRef::new(self.input, entries_start, self.pos, n))
    }

    /// A text's bytes after its head at `start`, checked as UTF-8 (P1).
    /// ASCII, most text here, needs no more than `is_ascii`.
    fn text_body(&mut self, start: usize, arg: u64) -> Result<(), DecodeError> {
        let n = self.claim(start, arg, 1)?;
        let body_start = self.pos;
        let bytes = self.take(n)?;
        if bytes.is_ascii() {
            return Ok(());
        }
        core::str::from_utf8(bytes)
            .map(|_| ())
            .map_err(|e| self.err(body_start + e.valid_up_to(), Rule::InvalidUtf8))
    }

    fn container(
        &self,
        start: usize,
        arg: u64,
        min_bytes_each: usize,
        depth: usize,
    ) -> Result<usize, DecodeError> {
        if depth + 1 > self.limits.max_depth.min(MAX_NESTING) {
            return Err(self.err(start, Rule::DepthExceeded));
        }
        if arg > self.limits.max_items as u64 {
            return Err(self.err(start, Rule::TooManyItems));
        }
        self.claim(start, arg, min_bytes_each)
    }

    fn simple(&mut self, start: usize, ai: u8) -> Result<ValueRef<'a>, DecodeError> {
        let (value, width) = match ai {
            20 => return Ok(ValueRef::Bool(false)),
            21 => return Ok(ValueRef::Bool(true)),
            22 => return Ok(ValueRef::Null),
            24 => {
                self.take(1)?;
                return Err(self.err(start, Rule::DisallowedSimple));
            }
            25 => (f16_to_f64(self.be(2)? as u16), 2),
            26 => (f64::from(f32::from_bits(self.be(4)? as u32)), 4),
            27 => (f64::from_bits(self.be(8)?), 8),
            28..=30 => return Err(self.err(start, Rule::ReservedAdditionalInfo)),
            31 => return Err(self.err(start, Rule::UnexpectedBreak)),
            _ => return Err(self.err(start, Rule::DisallowedSimple)),
        };
        let canonical_width = match classify(value) {
            Err(FloatError::NegativeZero) => return Err(self.err(start, Rule::NegativeZero)),
            Err(_) => return Err(self.err(start, Rule::NonFiniteFloat)),
            Ok(FloatForm::Int(_)) => return Err(self.err(start, Rule::IntegralFloat)),
            Ok(FloatForm::F16(_)) => 2,
            Ok(FloatForm::F32(_)) => 4,
            Ok(FloatForm::F64(_)) => 8,
        };
        if canonical_width != width {
            return Err(self.err(start, Rule::NonShortestFloat));
        }
        Ok(ValueRef::Float(value))
    }
}
