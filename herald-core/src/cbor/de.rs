//! A serde `Deserializer` over [`Value`] (feature `alloc`).
//!
//! Reading goes through this rather than ciborium's value deserializer
//! because P1's numeric reduction writes `2.0` as the integer `2`: an `f64`
//! field must accept an integer, which serde's own `f64` visitor does when
//! the deserializer reports what the value is (`deserialize_any`).

use alloc::string::{String, ToString};
use core::fmt;

use serde::de::{self, DeserializeSeed, IntoDeserializer, MapAccess, SeqAccess, Visitor};

use super::value::Value;

/// A deserialization error: serde's message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DeError(pub(crate) String);

impl fmt::Display for DeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl core::error::Error for DeError {}

impl de::Error for DeError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Self(msg.to_string())
    }
}

/// Deserializes from a borrowed [`Value`].
pub(crate) struct ValueDeserializer<'de>(pub(crate) &'de Value);

impl<'de> de::Deserializer<'de> for ValueDeserializer<'de> {
    type Error = DeError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.0 {
            Value::Unsigned(n) => visitor.visit_u64(*n),
            Value::Negative(n) => match i64::try_from(*n) {
                Ok(n) => visitor.visit_i64(-1 - n),
                Err(_) => visitor.visit_i128(-1 - i128::from(*n)),
            },
            Value::Bytes(b) => visitor.visit_borrowed_bytes(b),
            Value::Text(s) => visitor.visit_borrowed_str(s),
            Value::Array(items) => visitor.visit_seq(Seq(items.iter())),
            Value::Map(m) => visitor.visit_map(Entries {
                iter: m.iter(),
                value: None,
            }),
            Value::Float(x) => visitor.visit_f64(x.get()),
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Null => visitor.visit_unit(),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.0 {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        match self.0 {
            Value::Text(s) => visitor.visit_enum(s.as_str().into_deserializer()),
            Value::Map(m) if m.len() == 1 => {
                let mut it = m.iter();
                match it.next() {
                    Some((variant, value)) => visitor.visit_enum(Enum { variant, value }),
                    None => Err(de::Error::custom("empty enum map")),
                }
            }
            _ => Err(de::Error::custom("an enum is text or a one-entry map")),
        }
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.0 {
            // serde writes Vec<u8> as an array; accept a byte string too.
            Value::Bytes(b) => {
                visitor.visit_seq(de::value::SeqDeserializer::new(b.iter().copied()))
            }
            _ => self.deserialize_any(visitor),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct tuple tuple_struct map struct
        identifier ignored_any
    }
}

struct Seq<'de>(core::slice::Iter<'de, Value>);

impl<'de> SeqAccess<'de> for Seq<'de> {
    type Error = DeError;
    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, DeError> {
        self.0
            .next()
            .map(|v| seed.deserialize(ValueDeserializer(v)))
            .transpose()
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

struct Entries<'de, I> {
    iter: I,
    value: Option<&'de Value>,
}

impl<'de, I: Iterator<Item = (&'de str, &'de Value)>> MapAccess<'de> for Entries<'de, I> {
    type Error = DeError;
    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, DeError> {
        match self.iter.next() {
            Some((k, v)) => {
                self.value = Some(v);
                seed.deserialize(de::value::BorrowedStrDeserializer::new(k))
                    .map(Some)
            }
            None => Ok(None),
        }
    }
    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, DeError> {
        match self.value.take() {
            Some(v) => seed.deserialize(ValueDeserializer(v)),
            None => Err(de::Error::custom("map value without a key")),
        }
    }
}

struct Enum<'de> {
    variant: &'de str,
    value: &'de Value,
}

impl<'de> de::EnumAccess<'de> for Enum<'de> {
    type Error = DeError;
    type Variant = Self;
    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Self), DeError> {
        let v = seed.deserialize(de::value::BorrowedStrDeserializer::<DeError>::new(
            self.variant,
        ))?;
        Ok((v, self))
    }
}

impl<'de> de::VariantAccess<'de> for Enum<'de> {
    type Error = DeError;
    fn unit_variant(self) -> Result<(), DeError> {
        match self.value {
            Value::Null => Ok(()),
            _ => Err(de::Error::custom("a unit variant carries null")),
        }
    }
    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, DeError> {
        seed.deserialize(ValueDeserializer(self.value))
    }
    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, DeError> {
        de::Deserializer::deserialize_any(ValueDeserializer(self.value), visitor)
    }
    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        de::Deserializer::deserialize_any(ValueDeserializer(self.value), visitor)
    }
}
