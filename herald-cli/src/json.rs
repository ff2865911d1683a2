//! JSON, both ways (PROFILE.md P1, P3).
//!
//! - [`to_cbor`]: `--payload-json` and `--attest TYPE=JSON` into a P1
//!   value. Integers become CBOR integers exactly (the whole range
//!   −2^64 … 2^64−1, read from the literal's digits, never through f64);
//!   other numbers become floats through [`Value::from_f64`] (which still
//!   reduces an integral one such as `2.0` to an integer, P1); strings →
//!   text, objects → maps (a duplicate key is an error), arrays, booleans,
//!   `null`.
//! - [`display`]: the P3 JSON display form of a decoded value: the same
//!   map, with every byte string (`id`, `parent`, `trace`, `nonce`, `sig`,
//!   and any other) as lowercase hex. Display only: never hashed or signed.

use std::fmt;

use herald_core::cbor::{Map, Value};
use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

/// Deepest JSON nesting accepted: the P1 decoder's depth limit.
const MAX_DEPTH: usize = 32;

/// JSON text into a P1 value.
pub(crate) fn to_cbor(text: &str) -> Result<Value, String> {
    let raw: &RawValue = serde_json::from_str(text).map_err(|e| format!("invalid JSON: {e}"))?;
    convert(raw, 0)
}

fn convert(raw: &RawValue, depth: usize) -> Result<Value, String> {
    if depth > MAX_DEPTH {
        return Err(format!("JSON nested deeper than {MAX_DEPTH} levels (P1)"));
    }
    let text = raw.get().trim();
    let json = |e: serde_json::Error| format!("invalid JSON: {e}");
    match text.as_bytes().first() {
        Some(b'{') => {
            let Entries(entries) = serde_json::from_str(text).map_err(json)?;
            let mut map = Map::new();
            for (key, value) in entries {
                let value = convert(value, depth + 1)?;
                map.insert(key, value);
            }
            Ok(Value::Map(map))
        }
        Some(b'[') => {
            let items: Vec<&RawValue> = serde_json::from_str(text).map_err(json)?;
            items
                .into_iter()
                .map(|item| convert(item, depth + 1))
                .collect::<Result<Vec<_>, _>>()
                .map(Value::Array)
        }
        Some(b'"') => serde_json::from_str::<String>(text)
            .map(Value::Text)
            .map_err(json),
        Some(b't') => Ok(Value::Bool(true)),
        Some(b'f') => Ok(Value::Bool(false)),
        Some(b'n') => Ok(Value::Null),
        _ => number(text),
    }
}

/// A JSON number literal (already validated by serde_json).
fn number(text: &str) -> Result<Value, String> {
    if !text.contains(['.', 'e', 'E']) {
        let range =
            || format!("integer {text} is outside the CBOR integer range -2^64 … 2^64-1 (P1)");
        let n: i128 = text.parse().map_err(|_| range())?;
        if !(-(1i128 << 64)..(1i128 << 64)).contains(&n) {
            return Err(range());
        }
        return Ok(Value::from(n));
    }
    let x: f64 = text
        .parse()
        .map_err(|_| format!("number {text} is not a float"))?;
    Value::from_f64(x).map_err(|e| format!("number {text}: {e}"))
}

/// The entries of a JSON object in order, refusing a repeated key (P1 maps
/// have unique keys; JSON parsers disagree on which duplicate wins).
struct Entries<'a>(Vec<(String, &'a RawValue)>);

impl<'de> Deserialize<'de> for Entries<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Entries<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Self::Value, A::Error> {
                let mut entries: Vec<(String, &'de RawValue)> = Vec::new();
                let mut seen = std::collections::HashSet::new();
                while let Some((key, value)) = access.next_entry::<String, &'de RawValue>()? {
                    if !seen.insert(key.clone()) {
                        return Err(serde::de::Error::custom(format_args!(
                            "duplicate key {key:?}"
                        )));
                    }
                    entries.push((key, value));
                }
                Ok(Entries(entries))
            }
        }
        deserializer.deserialize_map(V)
    }
}

pub(crate) use herald_verify::display_json as display;

#[cfg(test)]
mod tests {
    use super::*;

    fn cbor(json: &str) -> Value {
        to_cbor(json).unwrap()
    }

    #[test]
    fn numbers_keep_their_range() {
        assert_eq!(cbor("0"), Value::Unsigned(0));
        assert_eq!(cbor("-0"), Value::Unsigned(0));
        assert_eq!(cbor("18446744073709551615"), Value::Unsigned(u64::MAX));
        assert_eq!(
            cbor("-9223372036854775809"),
            Value::Negative(9_223_372_036_854_775_808)
        );
        assert_eq!(cbor("-18446744073709551616"), Value::Negative(u64::MAX));
        assert!(to_cbor("18446744073709551616").is_err());
        assert!(to_cbor("-18446744073709551617").is_err());
        assert_eq!(cbor("2.0"), Value::Unsigned(2));
        assert_eq!(cbor("1e2"), Value::Unsigned(100));
        assert_eq!(cbor("1.5"), Value::from_f64(1.5).unwrap());
        assert!(to_cbor("-0.0").is_err());
        assert!(to_cbor("1e400").is_err());
    }

    #[test]
    fn structure() {
        let v = cbor(r#" {"b": [true, null, "x"], "a": {"c": -1}} "#);
        let bytes = v.to_vec();
        let back = herald_core::cbor::decode(&bytes).unwrap();
        assert_eq!(display(back), r#"{"a":{"c":-1},"b":[true,null,"x"]}"#);
        assert!(
            to_cbor(r#"{"a": 1, "a": 2}"#)
                .unwrap_err()
                .contains("duplicate")
        );
        assert!(to_cbor("{").is_err());
        assert!(to_cbor("1 2").is_err());
        let deep = format!("{}{}", "[".repeat(40), "]".repeat(40));
        assert!(to_cbor(&deep).unwrap_err().contains("deeper"));
    }

    #[test]
    fn display_form() {
        let mut m = Map::new();
        m.insert("b", Value::Bytes(vec![0xde, 0xad]));
        m.insert("t", Value::text("q\"\n\u{1}"));
        m.insert("f", Value::from_f64(0.1).unwrap());
        m.insert("n", Value::Negative(u64::MAX));
        let bytes = Value::Map(m).to_vec();
        let shown = display(herald_core::cbor::decode(&bytes).unwrap());
        assert_eq!(
            shown,
            r#"{"b":"dead","f":0.1,"n":-18446744073709551616,"t":"q\"\n\u0001"}"#
        );
        // The display form of a float reads back as the same float.
        let v: serde_json::Value = serde_json::from_str(&shown).unwrap();
        assert_eq!(v["f"].as_f64(), Some(0.1));
    }
}
