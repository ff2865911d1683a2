//! Owned CBOR values (feature `alloc`) that can only hold what P1 can encode.

use alloc::{string::String, vec::Vec};

use super::encode::{Encoder, LenSink, Sink};
use super::float::{FloatError, FloatForm, classify};
use super::value_ref::ValueRef;
use super::{DecodeError, Limits, decode_with, key_cmp};

/// An owned value inside the P1 profile. Every `Value` encodes: maps keep
/// text keys sorted and unique, and a [`Float`] is never NaN, infinite,
/// −0.0 or integral.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// An unsigned integer.
    Unsigned(u64),
    /// The negative integer `-1 - n`.
    Negative(u64),
    /// A byte string.
    Bytes(Vec<u8>),
    /// A text string.
    Text(String),
    /// An array.
    Array(Vec<Value>),
    /// A map.
    Map(Map),
    /// A non-integral finite float.
    Float(Float),
    /// `true` or `false`.
    Bool(bool),
    /// `null`.
    Null,
}

/// A finite, non-integral float (integral values are integers in P1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Float(f64);

impl Float {
    /// `v`, when it is a float in canonical form: not NaN, not infinite, not
    /// −0.0, and not integral within CBOR's integer range.
    pub fn new(v: f64) -> Result<Self, FloatError> {
        match classify(v)? {
            FloatForm::Int(_) => Err(FloatError::Integral),
            _ => Ok(Self(v)),
        }
    }

    /// The value.
    pub fn get(self) -> f64 {
        self.0
    }
}

/// A map with text keys kept in canonical order (P1), without duplicates.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Map(Vec<(String, Value)>);

impl Map {
    /// An empty map.
    pub fn new() -> Self {
        Self(Vec::new())
    }

    fn position(&self, key: &str) -> Result<usize, usize> {
        self.0.binary_search_by(|(k, _)| key_cmp(k, key))
    }

    /// Insert, returning the value previously under `key`.
    pub fn insert(&mut self, key: impl Into<String>, value: Value) -> Option<Value> {
        let key = key.into();
        match self.position(&key) {
            Ok(i) => self
                .0
                .get_mut(i)
                .map(|slot| core::mem::replace(&mut slot.1, value)),
            Err(i) => {
                self.0.insert(i, (key, value));
                None
            }
        }
    }

    /// The value under `key`.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.position(key)
            .ok()
            .and_then(|i| self.0.get(i))
            .map(|(_, v)| v)
    }

    /// Remove and return the value under `key`.
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        self.position(key).ok().map(|i| self.0.remove(i).1)
    }

    /// Entries in canonical order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, &Value)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the map is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl<K: Into<String>> FromIterator<(K, Value)> for Map {
    fn from_iter<I: IntoIterator<Item = (K, Value)>>(iter: I) -> Self {
        let mut map = Map::new();
        for (k, v) in iter {
            map.insert(k, v);
        }
        map
    }
}

impl Value {
    /// A number: integral values in integer range become integers (P1).
    pub fn from_f64(v: f64) -> Result<Self, FloatError> {
        Ok(match classify(v)? {
            FloatForm::Int(i) => Self::from(i),
            _ => Self::Float(Float(v)),
        })
    }

    /// Text.
    pub fn text(s: impl Into<String>) -> Self {
        Self::Text(s.into())
    }

    /// Write the canonical encoding (P1).
    pub fn encode<S: Sink>(&self, enc: &mut Encoder<S>) -> Result<(), S::Error> {
        match self {
            Self::Unsigned(n) => enc.unsigned(*n),
            Self::Negative(n) => enc.negative(*n),
            Self::Bytes(b) => enc.bytes(b),
            Self::Text(s) => enc.text(s),
            Self::Array(items) => {
                enc.array(items.len() as u64)?;
                items.iter().try_for_each(|v| v.encode(enc))
            }
            Self::Map(map) => {
                enc.map(map.len() as u64)?;
                map.iter().try_for_each(|(k, v)| {
                    enc.text(k)?;
                    v.encode(enc)
                })
            }
            Self::Float(x) => match classify(x.0) {
                Ok(form) => enc.float_form(form),
                // Unreachable: a `Float` is validated on construction.
                Err(_) => enc.null(),
            },
            Self::Bool(b) => enc.bool(*b),
            Self::Null => enc.null(),
        }
    }

    /// The canonical encoding (P1), into a buffer of exactly its length:
    /// a counting pass first ([`LenSink`]), then one allocation instead of
    /// a `Vec` growing put by put (docs/performance.md, R2).
    pub fn to_vec(&self) -> Vec<u8> {
        let mut count = Encoder::new(LenSink(0));
        let len = match self.encode(&mut count) {
            Ok(()) => count.into_inner().0,
            Err(never) => match never {},
        };
        let mut enc = Encoder::new(Vec::with_capacity(len));
        match self.encode(&mut enc) {
            Ok(()) => enc.into_inner(),
            Err(never) => match never {},
        }
    }

    /// Strictly decode canonical bytes (P1), with default limits.
    pub fn decode(bytes: &[u8]) -> Result<Self, DecodeError> {
        Self::decode_with(bytes, &Limits::DEFAULT)
    }

    /// Strictly decode canonical bytes (P1).
    pub fn decode_with(bytes: &[u8], limits: &Limits) -> Result<Self, DecodeError> {
        decode_with(bytes, limits).map(|v| Self::from(&v))
    }

    /// The text, if this is a text string.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Self::Text(s) => Some(s),
            _ => None,
        }
    }

    /// The map, if this is one.
    pub fn as_map(&self) -> Option<&Map> {
        match self {
            Self::Map(m) => Some(m),
            _ => None,
        }
    }
}

impl From<&ValueRef<'_>> for Value {
    fn from(v: &ValueRef<'_>) -> Self {
        match *v {
            ValueRef::Unsigned(n) => Self::Unsigned(n),
            ValueRef::Negative(n) => Self::Negative(n),
            ValueRef::Bytes(b) => Self::Bytes(b.to_vec()),
            ValueRef::Text(s) => Self::Text(s.into()),
            ValueRef::Array(a) => Self::Array(a.iter().map(|v| Self::from(&v)).collect()),
            // Already sorted and unique: keep the order without re-sorting.
            ValueRef::Map(m) => Self::Map(Map(m
                .iter()
                .map(|(k, v)| (k.into(), Self::from(&v)))
                .collect())),
            ValueRef::Float(x) => Self::Float(Float(x)),
            ValueRef::Bool(b) => Self::Bool(b),
            ValueRef::Null => Self::Null,
        }
    }
}

impl From<i128> for Value {
    /// Integers outside −2^64 … 2^64−1 saturate; callers pass values in range.
    fn from(i: i128) -> Self {
        if i >= 0 {
            Self::Unsigned(u64::try_from(i).unwrap_or(u64::MAX))
        } else {
            Self::Negative(u64::try_from(-1 - i).unwrap_or(u64::MAX))
        }
    }
}

impl From<u64> for Value {
    fn from(n: u64) -> Self {
        Self::Unsigned(n)
    }
}

impl From<i64> for Value {
    fn from(n: i64) -> Self {
        Self::from(i128::from(n))
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Self::Bool(b)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Self::Text(s.into())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Self {
        Self::Text(s)
    }
}

impl From<Vec<u8>> for Value {
    fn from(b: Vec<u8>) -> Self {
        Self::Bytes(b)
    }
}

impl From<Map> for Value {
    fn from(m: Map) -> Self {
        Self::Map(m)
    }
}
