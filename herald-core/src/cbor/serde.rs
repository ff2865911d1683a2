//! serde payloads and attestation values (feature `alloc`, issue: P1 through
//! ciborium): any `T: Serialize` becomes a [`Value`] inside the profile, and
//! any [`Value`] can be read back as `T: Deserialize`.

use alloc::{string::String, vec::Vec};
use core::fmt;

use super::float::FloatError;
use super::value::{Map, Value};

/// A serde value that has no canonical P1 form, or a type mismatch on the way back.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SerdeError {
    /// serde (through ciborium) refused the value; its message.
    Serde(String),
    /// A float P1 cannot encode (NaN, ±Infinity, −0.0).
    Float(FloatError),
    /// A map key that is not text (P1 allows text keys only).
    NonTextKey,
    /// The same map key twice.
    DuplicateKey(String),
    /// A CBOR tag (none are registered in this profile).
    Tag(u64),
    /// An integer outside −2^64 … 2^64−1.
    IntegerRange,
}

impl fmt::Display for SerdeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Serde(m) => write!(f, "serde: {m}"),
            Self::Float(e) => e.fmt(f),
            Self::NonTextKey => f.write_str("map keys must be text (P1)"),
            Self::DuplicateKey(k) => write!(f, "duplicate map key {k:?} (P1)"),
            Self::Tag(t) => write!(f, "tag {t} is not allowed (P1)"),
            Self::IntegerRange => f.write_str("integer outside the CBOR range"),
        }
    }
}

impl core::error::Error for SerdeError {}

/// Serialize `value` into a P1 [`Value`].
pub fn to_value<T: serde::Serialize + ?Sized>(value: &T) -> Result<Value, SerdeError> {
    let raw =
        ciborium::Value::serialized(value).map_err(|e| SerdeError::Serde(alloc::format!("{e}")))?;
    from_ciborium(raw)
}

/// Deserialize a `T` from a P1 [`Value`].
///
/// Integers are accepted where the type wants a float, since P1 writes an
/// integral float as an integer.
pub fn from_value<T: serde::de::DeserializeOwned>(value: &Value) -> Result<T, SerdeError> {
    T::deserialize(super::de::ValueDeserializer(value)).map_err(|e| SerdeError::Serde(e.0))
}

/// Convert a `ciborium::Value` into P1, rejecting what the profile cannot hold.
pub fn from_ciborium(v: ciborium::Value) -> Result<Value, SerdeError> {
    use ciborium::Value as C;
    Ok(match v {
        C::Integer(i) => {
            let i = i128::from(i);
            if !(-(1i128 << 64)..(1i128 << 64)).contains(&i) {
                return Err(SerdeError::IntegerRange);
            }
            Value::from(i)
        }
        C::Bytes(b) => Value::Bytes(b),
        C::Float(x) => Value::from_f64(x).map_err(SerdeError::Float)?,
        C::Text(s) => Value::Text(s),
        C::Bool(b) => Value::Bool(b),
        C::Null => Value::Null,
        C::Tag(t, _) => return Err(SerdeError::Tag(t)),
        C::Array(items) => Value::Array(
            items
                .into_iter()
                .map(from_ciborium)
                .collect::<Result<Vec<_>, _>>()?,
        ),
        C::Map(entries) => {
            let mut map = Map::new();
            for (k, v) in entries {
                let C::Text(k) = k else {
                    return Err(SerdeError::NonTextKey);
                };
                let v = from_ciborium(v)?;
                if map.get(&k).is_some() {
                    return Err(SerdeError::DuplicateKey(k));
                }
                map.insert(k, v);
            }
            Value::Map(map)
        }
        _ => return Err(SerdeError::Serde("unsupported CBOR value".into())),
    })
}

/// Convert a P1 [`Value`] into a `ciborium::Value`.
pub fn to_ciborium(v: &Value) -> ciborium::Value {
    use ciborium::Value as C;
    match v {
        Value::Unsigned(n) => C::Integer((*n).into()),
        Value::Negative(n) => match ciborium::value::Integer::try_from(-1 - i128::from(*n)) {
            Ok(i) => C::Integer(i),
            Err(_) => C::Float(-1.0 - *n as f64),
        },
        Value::Bytes(b) => C::Bytes(b.clone()),
        Value::Text(s) => C::Text(s.clone()),
        Value::Array(items) => C::Array(items.iter().map(to_ciborium).collect()),
        Value::Map(m) => C::Map(
            m.iter()
                .map(|(k, v)| (C::Text(k.into()), to_ciborium(v)))
                .collect(),
        ),
        Value::Float(x) => C::Float(x.get()),
        Value::Bool(b) => C::Bool(*b),
        Value::Null => C::Null,
    }
}
