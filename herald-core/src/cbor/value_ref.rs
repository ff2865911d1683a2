//! Borrowed, zero-copy views of strictly decoded CBOR (P1).
//!
//! A [`ValueRef`] can only be obtained from the strict decoder, so the bytes
//! behind every view are canonical: iterating a container re-reads them
//! without checking again, and never allocates.

use core::fmt;
use core::ops::Range;

use super::encode::major;
use super::float::f16_to_f64;

/// A strictly decoded CBOR item, borrowing from the input (P1).
#[derive(Clone, Copy, PartialEq)]
pub enum ValueRef<'a> {
    /// An unsigned integer.
    Unsigned(u64),
    /// The negative integer `-1 - n`.
    Negative(u64),
    /// A byte string.
    Bytes(&'a [u8]),
    /// A text string.
    Text(&'a str),
    /// An array.
    Array(ArrayRef<'a>),
    /// A map with text keys in canonical order.
    Map(MapRef<'a>),
    /// A non-integral finite float in its shortest width.
    Float(f64),
    /// `true` or `false`.
    Bool(bool),
    /// `null`.
    Null,
}

impl<'a> ValueRef<'a> {
    /// The text, if this is a text string.
    pub fn as_text(&self) -> Option<&'a str> {
        match *self {
            Self::Text(s) => Some(s),
            _ => None,
        }
    }

    /// The bytes, if this is a byte string.
    pub fn as_bytes(&self) -> Option<&'a [u8]> {
        match *self {
            Self::Bytes(b) => Some(b),
            _ => None,
        }
    }

    /// The value, if this is an unsigned integer.
    pub fn as_unsigned(&self) -> Option<u64> {
        match *self {
            Self::Unsigned(n) => Some(n),
            _ => None,
        }
    }

    /// The map, if this is one.
    pub fn as_map(&self) -> Option<MapRef<'a>> {
        match *self {
            Self::Map(m) => Some(m),
            _ => None,
        }
    }

    /// The array, if this is one.
    pub fn as_array(&self) -> Option<ArrayRef<'a>> {
        match *self {
            Self::Array(a) => Some(a),
            _ => None,
        }
    }

    /// The value as an f64 if it is a number (integers convert, possibly rounding).
    pub fn as_number(&self) -> Option<f64> {
        match *self {
            Self::Unsigned(n) => Some(n as f64),
            Self::Negative(n) => Some(-1.0 - n as f64),
            Self::Float(x) => Some(x),
            _ => None,
        }
    }

    /// A short name of the item's type, for error messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Self::Unsigned(_) | Self::Negative(_) => "integer",
            Self::Bytes(_) => "byte string",
            Self::Text(_) => "text",
            Self::Array(_) => "array",
            Self::Map(_) => "map",
            Self::Float(_) => "float",
            Self::Bool(_) => "bool",
            Self::Null => "null",
        }
    }
}

impl fmt::Debug for ValueRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unsigned(n) => write!(f, "{n}"),
            Self::Negative(n) => write!(f, "-{}", u128::from(*n) + 1),
            Self::Bytes(b) => {
                f.write_str("h'")?;
                for byte in *b {
                    write!(f, "{byte:02x}")?;
                }
                f.write_str("'")
            }
            Self::Text(s) => write!(f, "{s:?}"),
            Self::Array(a) => f.debug_list().entries(a.iter()).finish(),
            Self::Map(m) => f.debug_map().entries(m.iter()).finish(),
            Self::Float(x) => write!(f, "{x:?}"),
            Self::Bool(b) => write!(f, "{b}"),
            Self::Null => f.write_str("null"),
        }
    }
}

/// A decoded array: its items are re-read from canonical bytes on iteration.
#[derive(Clone, Copy)]
pub struct ArrayRef<'a> {
    input: &'a [u8],
    start: usize,
    end: usize,
    len: usize,
}

impl<'a> ArrayRef<'a> {
    pub(crate) fn new(input: &'a [u8], start: usize, end: usize, len: usize) -> Self {
        Self {
            input,
            start,
            end,
            len,
        }
    }

    /// Number of items.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no items.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The items in order.
    pub fn iter(&self) -> ArrayIter<'a> {
        ArrayIter {
            input: self.input,
            pos: self.start,
            left: self.len,
        }
    }

    /// Offsets (in the decoded input) of the first item and of the end of the last.
    pub fn items_span(&self) -> Range<usize> {
        self.start..self.end
    }
}

impl PartialEq for ArrayRef<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.input.get(self.start..self.end) == other.input.get(other.start..other.end)
            && self.len == other.len
    }
}

impl fmt::Debug for ArrayRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<'a> IntoIterator for ArrayRef<'a> {
    type Item = ValueRef<'a>;
    type IntoIter = ArrayIter<'a>;
    fn into_iter(self) -> ArrayIter<'a> {
        self.iter()
    }
}

/// Iterator over an [`ArrayRef`].
#[derive(Clone, Debug)]
pub struct ArrayIter<'a> {
    input: &'a [u8],
    pos: usize,
    left: usize,
}

impl<'a> ArrayIter<'a> {
    /// The next item with its offsets in the decoded input.
    pub fn next_spanned(&mut self) -> Option<(Range<usize>, ValueRef<'a>)> {
        if self.left == 0 {
            return None;
        }
        let start = self.pos;
        let (value, end) = read(self.input, start)?;
        self.pos = end;
        self.left -= 1;
        Some((start..end, value))
    }
}

impl<'a> Iterator for ArrayIter<'a> {
    type Item = ValueRef<'a>;
    fn next(&mut self) -> Option<ValueRef<'a>> {
        self.next_spanned().map(|(_, v)| v)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

/// A decoded map with text keys in canonical order.
#[derive(Clone, Copy)]
pub struct MapRef<'a> {
    input: &'a [u8],
    start: usize,
    end: usize,
    len: usize,
}

impl<'a> MapRef<'a> {
    pub(crate) fn new(input: &'a [u8], start: usize, end: usize, len: usize) -> Self {
        Self {
            input,
            start,
            end,
            len,
        }
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The entries in canonical key order.
    pub fn iter(&self) -> MapIter<'a> {
        MapIter {
            input: self.input,
            pos: self.start,
            left: self.len,
        }
    }

    /// The value under `key`.
    pub fn get(&self, key: &str) -> Option<ValueRef<'a>> {
        self.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    /// Offsets (in the decoded input) of the first entry and of the end of the last.
    pub fn entries_span(&self) -> Range<usize> {
        self.start..self.end
    }
}

impl PartialEq for MapRef<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.input.get(self.start..self.end) == other.input.get(other.start..other.end)
            && self.len == other.len
    }
}

impl fmt::Debug for MapRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// One map entry with its offsets in the decoded input.
#[derive(Clone, Debug)]
pub struct Entry<'a> {
    /// The key.
    pub key: &'a str,
    /// The value.
    pub value: ValueRef<'a>,
    /// From the first byte of the key to the end of the value.
    pub span: Range<usize>,
    /// The value's bytes.
    pub value_span: Range<usize>,
}

/// Iterator over a [`MapRef`].
#[derive(Clone, Debug)]
pub struct MapIter<'a> {
    input: &'a [u8],
    pos: usize,
    left: usize,
}

impl<'a> MapIter<'a> {
    /// The next entry with its offsets.
    pub fn next_entry(&mut self) -> Option<Entry<'a>> {
        if self.left == 0 {
            return None;
        }
        let start = self.pos;
        let (key, value_start) = read(self.input, start)?;
        let (value, end) = read(self.input, value_start)?;
        self.pos = end;
        self.left -= 1;
        Some(Entry {
            key: key.as_text()?,
            value,
            span: start..end,
            value_span: value_start..end,
        })
    }
}

impl<'a> Iterator for MapIter<'a> {
    type Item = (&'a str, ValueRef<'a>);
    fn next(&mut self) -> Option<Self::Item> {
        self.next_entry().map(|e| (e.key, e.value))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

/// Read a head from already-validated bytes: (major, additional info, argument, next offset).
fn read_head(input: &[u8], pos: usize) -> Option<(u8, u8, u64, usize)> {
    let initial = *input.get(pos)?;
    let (major, ai) = (initial >> 5, initial & 0x1f);
    let width = match ai {
        0..=23 => 0,
        24 => 1,
        25 => 2,
        26 => 4,
        27 => 8,
        _ => return None,
    };
    let arg_bytes = input.get(pos + 1..pos + 1 + width)?;
    let arg = if width == 0 {
        u64::from(ai)
    } else {
        arg_bytes
            .iter()
            .fold(0u64, |acc, &b| (acc << 8) | u64::from(b))
    };
    Some((major, ai, arg, pos + 1 + width))
}

/// Read one item from validated bytes, returning it and its end offset.
/// Returns `None` only on bytes the strict decoder would not have accepted.
pub(crate) fn read(input: &[u8], pos: usize) -> Option<(ValueRef<'_>, usize)> {
    let (major, ai, arg, next) = read_head(input, pos)?;
    let len = usize::try_from(arg).ok();
    match major {
        major::UNSIGNED => Some((ValueRef::Unsigned(arg), next)),
        major::NEGATIVE => Some((ValueRef::Negative(arg), next)),
        major::BYTES => {
            let end = next.checked_add(len?)?;
            Some((ValueRef::Bytes(input.get(next..end)?), end))
        }
        major::TEXT => {
            let end = next.checked_add(len?)?;
            let text = core::str::from_utf8(input.get(next..end)?).ok()?;
            Some((ValueRef::Text(text), end))
        }
        major::ARRAY => {
            let n = len?;
            let end = skip(input, next, n)?;
            Some((ValueRef::Array(ArrayRef::new(input, next, end, n)), end))
        }
        major::MAP => {
            let n = len?;
            let end = skip(input, next, n.checked_mul(2)?)?;
            Some((ValueRef::Map(MapRef::new(input, next, end, n)), end))
        }
        major::SIMPLE => {
            let value = match ai {
                20 => ValueRef::Bool(false),
                21 => ValueRef::Bool(true),
                22 => ValueRef::Null,
                25 => ValueRef::Float(f16_to_f64(arg as u16)),
                26 => ValueRef::Float(f64::from(f32::from_bits(arg as u32))),
                27 => ValueRef::Float(f64::from_bits(arg)),
                _ => return None,
            };
            Some((value, next))
        }
        _ => None,
    }
}

/// Offset after `count` consecutive validated items starting at `pos`.
pub(crate) fn skip(input: &[u8], mut pos: usize, mut count: usize) -> Option<usize> {
    while count > 0 {
        let (major, _, arg, next) = read_head(input, pos)?;
        pos = match major {
            major::BYTES | major::TEXT => next.checked_add(usize::try_from(arg).ok()?)?,
            major::ARRAY => {
                count = count.checked_add(usize::try_from(arg).ok()?)?;
                next
            }
            major::MAP => {
                count = count.checked_add(usize::try_from(arg).ok()?.checked_mul(2)?)?;
                next
            }
            _ => next,
        };
        if pos > input.len() {
            return None;
        }
        count -= 1;
    }
    Some(pos)
}
