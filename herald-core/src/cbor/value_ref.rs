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
            raw: self.raw_iter(),
        }
    }

    /// Offsets (in the decoded input) of the first item and of the end of the last.
    pub fn items_span(&self) -> Range<usize> {
        self.start..self.end
    }

    /// The items in order, texts left as bytes.
    pub(crate) fn raw_iter(&self) -> RawItems<'a> {
        RawItems {
            input: self.input,
            pos: self.start,
            left: self.len,
        }
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
    raw: RawItems<'a>,
}

impl<'a> ArrayIter<'a> {
    /// The next item with its offsets in the decoded input.
    pub fn next_spanned(&mut self) -> Option<(Range<usize>, ValueRef<'a>)> {
        let (span, raw) = self.raw.next_spanned()?;
        Some((span, raw.value()?))
    }
}

impl<'a> Iterator for ArrayIter<'a> {
    type Item = ValueRef<'a>;
    fn next(&mut self) -> Option<ValueRef<'a>> {
        self.next_spanned().map(|(_, v)| v)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.raw.left, Some(self.raw.left))
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
            raw: self.raw_entries(),
        }
    }

    /// The value under `key`.
    pub fn get(&self, key: &str) -> Option<ValueRef<'a>> {
        self.get_raw(key.as_bytes())?.value()
    }

    /// The value under `key`, its text (if text) left as bytes. Keys are
    /// compared as bytes and the values before it skipped unread: nothing
    /// is checked as UTF-8 again.
    pub(crate) fn get_raw(&self, key: &[u8]) -> Option<RawRef<'a>> {
        let mut pos = self.start;
        for _ in 0..self.len {
            let (k, value_start) = text_at(self.input, pos)?;
            if k == key {
                return read_raw(self.input, value_start).map(|(v, _)| v);
            }
            pos = skip(self.input, value_start, 1)?;
        }
        None
    }

    /// The entries in canonical key order, keys and texts left as bytes.
    pub(crate) fn raw_entries(&self) -> RawEntries<'a> {
        RawEntries {
            input: self.input,
            pos: self.start,
            left: self.len,
        }
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
    raw: RawEntries<'a>,
}

impl<'a> MapIter<'a> {
    /// The next entry: its text key as `&str`, its value, and the byte
    /// ranges of both.
    pub fn next_entry(&mut self) -> Option<Entry<'a>> {
        let e = self.raw.next()?;
        Some(Entry {
            key: core::str::from_utf8(e.key).ok()?,
            value: e.value.value()?,
            span: e.span,
            value_span: e.value_span,
        })
    }
}

impl<'a> Iterator for MapIter<'a> {
    type Item = (&'a str, ValueRef<'a>);
    fn next(&mut self) -> Option<Self::Item> {
        self.next_entry().map(|e| (e.key, e.value))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.raw.left, Some(self.raw.left))
    }
}

/// An item of validated bytes with a text left as its bytes: the strict
/// decoder checked them as UTF-8 once (P1), so code that only compares a
/// text, or checks that an item is one, never checks it again; only
/// [`RawRef::value`] makes the `&str` (and checks it).
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum RawRef<'a> {
    /// A text string's bytes.
    Text(&'a [u8]),
    /// Any other item (never [`ValueRef::Text`]).
    Value(ValueRef<'a>),
}

impl<'a> RawRef<'a> {
    /// The item as a [`ValueRef`].
    pub(crate) fn value(&self) -> Option<ValueRef<'a>> {
        match *self {
            Self::Text(t) => core::str::from_utf8(t).ok().map(ValueRef::Text),
            Self::Value(v) => Some(v),
        }
    }

    /// The text's bytes, if this is a text string.
    pub(crate) fn text(&self) -> Option<&'a [u8]> {
        match *self {
            Self::Text(t) => Some(t),
            Self::Value(_) => None,
        }
    }

    fn other(&self) -> Option<&ValueRef<'a>> {
        match self {
            Self::Text(_) => None,
            Self::Value(v) => Some(v),
        }
    }

    /// As [`ValueRef::as_bytes`].
    pub(crate) fn as_bytes(&self) -> Option<&'a [u8]> {
        self.other()?.as_bytes()
    }

    /// As [`ValueRef::as_unsigned`].
    pub(crate) fn as_unsigned(&self) -> Option<u64> {
        self.other()?.as_unsigned()
    }

    /// As [`ValueRef::as_array`].
    pub(crate) fn as_array(&self) -> Option<ArrayRef<'a>> {
        self.other()?.as_array()
    }

    /// As [`ValueRef::as_map`].
    pub(crate) fn as_map(&self) -> Option<MapRef<'a>> {
        self.other()?.as_map()
    }

    /// As [`ValueRef::as_number`].
    pub(crate) fn as_number(&self) -> Option<f64> {
        self.other()?.as_number()
    }
}

impl<'a> From<ValueRef<'a>> for RawRef<'a> {
    fn from(v: ValueRef<'a>) -> Self {
        match v {
            ValueRef::Text(s) => Self::Text(s.as_bytes()),
            other => Self::Value(other),
        }
    }
}

/// As the [`ValueRef`] it stands for.
impl fmt::Debug for RawRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.value() {
            Some(v) => v.fmt(f),
            None => f.write_str("<not UTF-8>"),
        }
    }
}

/// One map entry, its key and a text value left as bytes.
#[derive(Clone, Debug)]
pub(crate) struct RawEntry<'a> {
    /// The key's bytes.
    pub(crate) key: &'a [u8],
    /// The value.
    pub(crate) value: RawRef<'a>,
    /// From the first byte of the key to the end of the value.
    pub(crate) span: Range<usize>,
    /// The value's bytes.
    pub(crate) value_span: Range<usize>,
}

/// Iterator of [`MapRef::raw_entries`].
#[derive(Clone, Debug)]
pub(crate) struct RawEntries<'a> {
    input: &'a [u8],
    pos: usize,
    left: usize,
}

impl<'a> Iterator for RawEntries<'a> {
    type Item = RawEntry<'a>;
    fn next(&mut self) -> Option<RawEntry<'a>> {
        if self.left == 0 {
            return None;
        }
        let start = self.pos;
        let (key, value_start) = text_at(self.input, start)?;
        let (value, end) = read_raw(self.input, value_start)?;
        self.pos = end;
        self.left -= 1;
        Some(RawEntry {
            key,
            value,
            span: start..end,
            value_span: value_start..end,
        })
    }
}

/// Iterator of [`ArrayRef::raw_iter`].
#[derive(Clone, Debug)]
pub(crate) struct RawItems<'a> {
    input: &'a [u8],
    pos: usize,
    left: usize,
}

impl<'a> RawItems<'a> {
    /// The next item with its offsets in the decoded input.
    pub(crate) fn next_spanned(&mut self) -> Option<(Range<usize>, RawRef<'a>)> {
        if self.left == 0 {
            return None;
        }
        let start = self.pos;
        let (value, end) = read_raw(self.input, start)?;
        self.pos = end;
        self.left -= 1;
        Some((start..end, value))
    }
}

impl<'a> Iterator for RawItems<'a> {
    type Item = RawRef<'a>;
    fn next(&mut self) -> Option<RawRef<'a>> {
        self.next_spanned().map(|(_, v)| v)
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

/// The text string at `pos` of validated bytes, as bytes, and its end.
fn text_at(input: &[u8], pos: usize) -> Option<(&[u8], usize)> {
    let (major, _, arg, next) = read_head(input, pos)?;
    if major != major::TEXT {
        return None;
    }
    let end = next.checked_add(usize::try_from(arg).ok()?)?;
    Some((input.get(next..end)?, end))
}

/// Read one item from validated bytes, a text left as its bytes (see
/// [`RawRef`]), returning it and its end offset. Returns `None` only on
/// bytes the strict decoder would not have accepted.
pub(crate) fn read_raw(input: &[u8], pos: usize) -> Option<(RawRef<'_>, usize)> {
    let (major, ai, arg, next) = read_head(input, pos)?;
    let len = usize::try_from(arg).ok();
    let value = match major {
        major::UNSIGNED => ValueRef::Unsigned(arg),
        major::NEGATIVE => ValueRef::Negative(arg),
        major::BYTES => {
            let end = next.checked_add(len?)?;
            return Some((RawRef::Value(ValueRef::Bytes(input.get(next..end)?)), end));
        }
        major::TEXT => {
            let end = next.checked_add(len?)?;
            return Some((RawRef::Text(input.get(next..end)?), end));
        }
        major::ARRAY => {
            let n = len?;
            let end = skip(input, next, n)?;
            return Some((
                RawRef::Value(ValueRef::Array(ArrayRef::new(input, next, end, n))),
                end,
            ));
        }
        major::MAP => {
            let n = len?;
            let end = skip(input, next, n.checked_mul(2)?)?;
            return Some((
                RawRef::Value(ValueRef::Map(MapRef::new(input, next, end, n))),
                end,
            ));
        }
        major::SIMPLE => match ai {
            20 => ValueRef::Bool(false),
            21 => ValueRef::Bool(true),
            22 => ValueRef::Null,
            25 => ValueRef::Float(f16_to_f64(arg as u16)),
            26 => ValueRef::Float(f64::from(f32::from_bits(arg as u32))),
            27 => ValueRef::Float(f64::from_bits(arg)),
            _ => return None,
        },
        _ => return None,
    };
    Some((RawRef::Value(value), next))
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
