//! The deterministic encoder of PROFILE.md P1 (RFC 8949 §4.2.1), writing into
//! any [`Sink`]: a buffer, a fixed slice, or a hash function with no buffer.

use core::{convert::Infallible, fmt};

use super::float::{FloatError, FloatForm, classify};

/// CBOR major types (RFC 8949 §3.1).
pub(crate) mod major {
    pub(crate) const UNSIGNED: u8 = 0;
    pub(crate) const NEGATIVE: u8 = 1;
    pub(crate) const BYTES: u8 = 2;
    pub(crate) const TEXT: u8 = 3;
    pub(crate) const ARRAY: u8 = 4;
    pub(crate) const MAP: u8 = 5;
    pub(crate) const TAG: u8 = 6;
    pub(crate) const SIMPLE: u8 = 7;
}

/// Where encoded bytes go.
///
/// Implemented for `sha2::Sha256` (hash while encoding, no buffer),
/// [`SliceSink`] (a fixed `&mut [u8]`), `heapless::Vec<u8, N>`, and with the
/// `alloc` feature `Vec<u8>`.
pub trait Sink {
    /// What writing can fail with ([`Infallible`] for growable sinks and hashers).
    type Error;
    /// Append `bytes`.
    fn put(&mut self, bytes: &[u8]) -> Result<(), Self::Error>;
}

impl<S: Sink + ?Sized> Sink for &mut S {
    type Error = S::Error;
    fn put(&mut self, bytes: &[u8]) -> Result<(), Self::Error> {
        (**self).put(bytes)
    }
}

impl Sink for sha2::Sha256 {
    type Error = Infallible;
    fn put(&mut self, bytes: &[u8]) -> Result<(), Infallible> {
        sha2::Digest::update(self, bytes);
        Ok(())
    }
}

impl Sink for sha2::Sha512 {
    type Error = Infallible;
    fn put(&mut self, bytes: &[u8]) -> Result<(), Infallible> {
        sha2::Digest::update(self, bytes);
        Ok(())
    }
}

#[cfg(feature = "alloc")]
impl Sink for alloc::vec::Vec<u8> {
    type Error = Infallible;
    fn put(&mut self, bytes: &[u8]) -> Result<(), Infallible> {
        self.extend_from_slice(bytes);
        Ok(())
    }
}

impl<const N: usize> Sink for heapless::Vec<u8, N> {
    type Error = BufferFull;
    fn put(&mut self, bytes: &[u8]) -> Result<(), BufferFull> {
        self.extend_from_slice(bytes).map_err(|_| BufferFull)
    }
}

/// A fixed output buffer was too small for the encoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BufferFull;

impl fmt::Display for BufferFull {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("output buffer too small")
    }
}

impl core::error::Error for BufferFull {}

/// A [`Sink`] over a caller's fixed buffer, for targets with no allocator.
#[derive(Debug)]
pub struct SliceSink<'a> {
    buf: &'a mut [u8],
    len: usize,
}

impl<'a> SliceSink<'a> {
    /// Write into `buf` from its start.
    pub fn new(buf: &'a mut [u8]) -> Self {
        Self { buf, len: 0 }
    }

    /// The bytes written so far.
    pub fn written(&self) -> &[u8] {
        self.buf.get(..self.len).unwrap_or_default()
    }

    /// Consume the sink, returning the written prefix of the buffer.
    pub fn into_written(self) -> &'a [u8] {
        let len = self.len;
        let buf: &'a [u8] = self.buf;
        buf.get(..len).unwrap_or_default()
    }
}

impl Sink for SliceSink<'_> {
    type Error = BufferFull;
    fn put(&mut self, bytes: &[u8]) -> Result<(), BufferFull> {
        let end = self.len.checked_add(bytes.len()).ok_or(BufferFull)?;
        let dst = self.buf.get_mut(self.len..end).ok_or(BufferFull)?;
        dst.copy_from_slice(bytes);
        self.len = end;
        Ok(())
    }
}

/// Counts bytes instead of storing them: the encoded length of a value.
#[derive(Clone, Copy, Debug, Default)]
pub struct LenSink(pub usize);

impl Sink for LenSink {
    type Error = Infallible;
    fn put(&mut self, bytes: &[u8]) -> Result<(), Infallible> {
        self.0 += bytes.len();
        Ok(())
    }
}

/// Why encoding failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EncodeError<E> {
    /// The sink refused the bytes.
    Sink(E),
    /// A float that P1 cannot encode.
    Float(FloatError),
}

impl<E: fmt::Display> fmt::Display for EncodeError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Sink(e) => write!(f, "cannot write encoding: {e}"),
            Self::Float(e) => e.fmt(f),
        }
    }
}

impl<E: fmt::Debug + fmt::Display> core::error::Error for EncodeError<E> {}

impl<E> From<FloatError> for EncodeError<E> {
    fn from(e: FloatError) -> Self {
        Self::Float(e)
    }
}

/// Writes canonical heads and scalars (P1) into a [`Sink`].
///
/// Every head is written in its shortest form, lengths are always definite,
/// floats are reduced and narrowed. The one rule this low-level writer cannot
/// check is map-key order: a caller writing a map writes its text keys in
/// canonical order ([`key_cmp`](super::key_cmp)). [`Value`](super::Value)
/// and the envelope encoder do this for you.
#[derive(Debug)]
pub struct Encoder<S> {
    sink: S,
}

impl<S: Sink> Encoder<S> {
    /// An encoder writing into `sink`.
    pub fn new(sink: S) -> Self {
        Self { sink }
    }

    /// The sink, with everything written so far.
    pub fn into_inner(self) -> S {
        self.sink
    }

    /// The sink.
    pub fn sink_mut(&mut self) -> &mut S {
        &mut self.sink
    }

    /// A head: major type and argument, in shortest form (P1).
    pub(crate) fn head(&mut self, major: u8, arg: u64) -> Result<(), S::Error> {
        let mut buf = [0u8; 9];
        let head = write_head(&mut buf, major, arg);
        self.sink.put(head)
    }

    /// An unsigned integer.
    pub fn unsigned(&mut self, n: u64) -> Result<(), S::Error> {
        self.head(major::UNSIGNED, n)
    }

    /// The negative integer `-1 - n`.
    pub fn negative(&mut self, n: u64) -> Result<(), S::Error> {
        self.head(major::NEGATIVE, n)
    }

    /// Any signed integer.
    pub fn int(&mut self, n: i64) -> Result<(), S::Error> {
        if n >= 0 {
            self.unsigned(n.unsigned_abs())
        } else {
            self.negative(n.unsigned_abs() - 1)
        }
    }

    /// A byte string.
    pub fn bytes(&mut self, b: &[u8]) -> Result<(), S::Error> {
        self.head(major::BYTES, b.len() as u64)?;
        self.sink.put(b)
    }

    /// A text string (valid UTF-8 by construction).
    pub fn text(&mut self, s: &str) -> Result<(), S::Error> {
        self.head(major::TEXT, s.len() as u64)?;
        self.sink.put(s.as_bytes())
    }

    /// An array head for `len` items, which the caller writes next.
    pub fn array(&mut self, len: u64) -> Result<(), S::Error> {
        self.head(major::ARRAY, len)
    }

    /// A map head for `len` entries, which the caller writes next, keys in canonical order.
    pub fn map(&mut self, len: u64) -> Result<(), S::Error> {
        self.head(major::MAP, len)
    }

    /// `true` or `false`.
    pub fn bool(&mut self, b: bool) -> Result<(), S::Error> {
        self.sink.put(&[if b { 0xf5 } else { 0xf4 }])
    }

    /// `null`.
    pub fn null(&mut self) -> Result<(), S::Error> {
        self.sink.put(&[0xf6])
    }

    /// A number given as a float: integral values in integer range become
    /// integers; others take the shortest exact width; NaN, ±Infinity and −0.0
    /// are errors (P1).
    pub fn float(&mut self, v: f64) -> Result<(), EncodeError<S::Error>> {
        let form = classify(v)?;
        self.float_form(form).map_err(EncodeError::Sink)
    }

    pub(crate) fn float_form(&mut self, form: FloatForm) -> Result<(), S::Error> {
        match form {
            FloatForm::Int(i) if i >= 0 => self.unsigned(i as u64),
            FloatForm::Int(i) => self.negative((-1 - i) as u64),
            FloatForm::F16(h) => {
                let [a, b] = h.to_be_bytes();
                self.sink.put(&[0xf9, a, b])
            }
            FloatForm::F32(x) => {
                let [a, b, c, d] = x.to_bits().to_be_bytes();
                self.sink.put(&[0xfa, a, b, c, d])
            }
            FloatForm::F64(x) => {
                let mut buf = [0xfb; 9];
                buf[1..].copy_from_slice(&x.to_bits().to_be_bytes());
                self.sink.put(&buf)
            }
        }
    }
}

/// Write the shortest head for (`major`, `arg`) into `buf`, returning it.
pub(crate) fn write_head(buf: &mut [u8; 9], major: u8, arg: u64) -> &[u8] {
    let mt = major << 5;
    let len = if arg < 24 {
        buf[0] = mt | arg as u8;
        1
    } else if arg <= 0xff {
        buf[0] = mt | 24;
        buf[1] = arg as u8;
        2
    } else if arg <= 0xffff {
        buf[0] = mt | 25;
        buf[1..3].copy_from_slice(&(arg as u16).to_be_bytes());
        3
    } else if arg <= 0xffff_ffff {
        buf[0] = mt | 26;
        buf[1..5].copy_from_slice(&(arg as u32).to_be_bytes());
        5
    } else {
        buf[0] = mt | 27;
        buf[1..9].copy_from_slice(&arg.to_be_bytes());
        9
    };
    &buf[..len]
}
