//! JavaScript values through the P1 encoder and the strict decoder.
//!
//! JavaScript → CBOR: `null`/`undefined` (null), booleans, numbers (P1
//! numeric reduction: `2.0` is the integer 2; NaN, ±Infinity and -0 are
//! refused), `bigint` (−2^64 … 2^64−1), strings, `Uint8Array` (a byte
//! string), arrays, and plain objects (text keys; properties whose value is
//! `undefined` are left out, as `JSON.stringify` does). Anything else
//! (functions, symbols, Maps, Dates) throws, naming the type.
//! CBOR → JavaScript: the inverse; integers beyond ±(2^53 − 1) come back as
//! `bigint`, byte strings as `Uint8Array`, maps as plain objects.

use herald_core::cbor::{self, Limits, MAX_NESTING, Map, Value, ValueRef};
use herald_verify::Piece;
use js_sys::{Array, BigInt, Object, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::{JsCast, JsValue};

use crate::error::coded;

/// The largest integer a JavaScript number holds exactly.
const MAX_SAFE: u64 = (1 << 53) - 1;

/// The P1 canonical CBOR encoding of `value`.
#[wasm_bindgen]
pub fn encode(value: JsValue) -> Result<Vec<u8>, JsValue> {
    Ok(to_value(&value)?.to_vec())
}

/// Decode exactly one canonical CBOR item (P1, strict: trailing bytes,
/// non-shortest forms, tags and the like throw with `code` the P1 rule).
#[wasm_bindgen]
pub fn decode(bytes: &[u8]) -> Result<JsValue, JsValue> {
    let v = cbor::decode(bytes).map_err(|e| coded(e.rule().name(), e.to_string()))?;
    Ok(to_js(v))
}

/// The items of a CBOR sequence (RFC 8742; a trace file, CLI.md), each
/// well-formed and at most an envelope's size (P1), as `Uint8Array`s; an
/// empty input has none. Throws (`code` the rule) where it cannot be split.
#[wasm_bindgen(js_name = splitSequence)]
pub fn split_sequence(bytes: &[u8]) -> Result<Array, JsValue> {
    if bytes.is_empty() {
        return Ok(<Array>::new());
    }
    herald_verify::split_sequence(bytes, Limits::DEFAULT.max_size, MAX_NESTING)
        .into_iter()
        .map(|piece| match piece {
            Piece::Item { bytes, .. } => Ok(JsValue::from(Uint8Array::from(bytes))),
            Piece::Unsplittable { offset, error } => {
                Err(coded(error.name(), format!("byte {offset}: {error}")))
            }
        })
        .collect()
}

/// A JavaScript value as a P1 value.
pub(crate) fn to_value(v: &JsValue) -> Result<Value, JsValue> {
    convert(v, 0)
}

fn convert(v: &JsValue, depth: usize) -> Result<Value, JsValue> {
    if v.is_null() || v.is_undefined() {
        return Ok(Value::Null);
    }
    if let Some(b) = v.as_bool() {
        return Ok(Value::Bool(b));
    }
    if let Some(s) = v.as_string() {
        return Ok(Value::Text(s));
    }
    if let Some(f) = v.as_f64() {
        return Value::from_f64(f).map_err(|e| coded(e.name(), e.to_string()));
    }
    if v.is_bigint() {
        let text: String = BigInt::unchecked_from_js_ref(v)
            .to_string(10)
            .map(String::from)
            .unwrap_or_default();
        return text
            .parse::<i128>()
            .ok()
            .filter(|n| *n <= i128::from(u64::MAX) && *n >= -1 - i128::from(u64::MAX))
            .map(Value::from)
            .ok_or_else(|| {
                coded(
                    "integer_range",
                    "integer outside the CBOR range -(2**64) .. 2**64-1 (P1)",
                )
            });
    }
    if let Some(bytes) = v.dyn_ref::<Uint8Array>() {
        return Ok(Value::Bytes(bytes.to_vec()));
    }
    if !v.is_object() || v.is_function() {
        return Err(unsupported(v));
    }
    if depth >= Limits::DEFAULT.max_depth {
        return Err(coded(
            "depth_exceeded",
            format!(
                "nesting deeper than {} (P1 limit)",
                Limits::DEFAULT.max_depth
            ),
        ));
    }
    if <Array>::is_array(v) {
        return <Array>::unchecked_from_js_ref(v)
            .iter()
            .map(|item| convert(&item, depth + 1))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array);
    }
    let object = <Object>::unchecked_from_js_ref(v);
    let proto = <Object>::get_prototype_of(v);
    let plain = <Object>::get_prototype_of(&<Object>::new().into());
    if !(proto.is_null() || JsValue::from(proto) == JsValue::from(plain)) {
        return Err(unsupported(v));
    }
    let mut map = Map::new();
    for entry in <Object>::entries(object).iter() {
        let pair = <Array>::unchecked_from_js_ref(&entry);
        let value = pair.get(1);
        if value.is_undefined() {
            continue;
        }
        let key = pair.get(0).as_string().unwrap_or_default();
        map.insert(key, convert(&value, depth + 1)?);
    }
    Ok(Value::Map(map))
}

fn unsupported(v: &JsValue) -> JsValue {
    let what = v
        .dyn_ref::<Object>()
        .map(|o| String::from(o.constructor().name()))
        .unwrap_or_else(|| v.js_typeof().as_string().unwrap_or_default());
    coded(
        "unsupported_type",
        format!(
            "{what} has no P1 encoding (use null, boolean, number, bigint, string, \
             Uint8Array, an array or a plain object)"
        ),
    )
}

/// A decoded CBOR value as a JavaScript value.
pub(crate) fn to_js(v: ValueRef<'_>) -> JsValue {
    match v {
        ValueRef::Unsigned(n) if n <= MAX_SAFE => JsValue::from_f64(n as f64),
        ValueRef::Unsigned(n) => BigInt::from(n).into(),
        ValueRef::Negative(n) if n < MAX_SAFE => JsValue::from_f64(-1.0 - n as f64),
        ValueRef::Negative(n) => BigInt::from(-1 - i128::from(n)).into(),
        ValueRef::Bytes(b) => Uint8Array::from(b).into(),
        ValueRef::Text(s) => JsValue::from_str(s),
        ValueRef::Array(a) => a.iter().map(to_js).collect::<Array>().into(),
        ValueRef::Map(m) => {
            let pairs: Array = m
                .iter()
                .map(|(k, item)| <Array>::of2(&JsValue::from_str(k), &to_js(item)))
                .collect();
            // fromEntries defines own data properties: a "__proto__" key
            // stays a key, never the prototype.
            <Object>::from_entries(&pairs).map_or(JsValue::NULL, JsValue::from)
        }
        ValueRef::Float(f) => JsValue::from_f64(f),
        ValueRef::Bool(b) => JsValue::from_bool(b),
        ValueRef::Null => JsValue::NULL,
    }
}
