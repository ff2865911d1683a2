//! The JSON display form of an envelope or any canonical value (PROFILE.md
//! P3, spec §3.1): byte strings as lowercase hex, keys in canonical order.
//! Display only: never hashed or signed.

use alloc::string::String;
use core::fmt::Write;

use herald_core::cbor::ValueRef;

/// The P3 JSON display form of `value`, on one line.
pub fn json(value: ValueRef<'_>) -> String {
    let mut out = String::new();
    write_value(value, &mut out, Bytes::Hex);
    out
}

/// `value` for people, on one line: the JSON display form except that
/// byte strings are `h'…'`, as in CBOR diagnostic notation (RFC 8949
/// §8), so they are never mistaken for text. Not JSON; not read back.
pub fn diagnostic(value: ValueRef<'_>) -> String {
    let mut out = String::new();
    write_value(value, &mut out, Bytes::Diagnostic);
    out
}

/// How byte strings are written.
#[derive(Clone, Copy)]
enum Bytes {
    /// `"00ff"` (P3).
    Hex,
    /// `h'00ff'` (RFC 8949 §8).
    Diagnostic,
}

fn write_value(value: ValueRef<'_>, out: &mut String, bytes: Bytes) {
    match value {
        ValueRef::Unsigned(n) => {
            let _ = write!(out, "{n}");
        }
        ValueRef::Negative(n) => {
            let _ = write!(out, "{}", -1 - i128::from(n));
        }
        ValueRef::Bytes(b) => {
            let (open, close) = match bytes {
                Bytes::Hex => ("\"", "\""),
                Bytes::Diagnostic => ("h'", "'"),
            };
            out.push_str(open);
            out.push_str(&crate::report::hex(b));
            out.push_str(close);
        }
        ValueRef::Text(s) => write_string(s, out),
        ValueRef::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(item, out, bytes);
            }
            out.push(']');
        }
        ValueRef::Map(map) => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(key, out);
                out.push(':');
                write_value(item, out, bytes);
            }
            out.push('}');
        }
        // P1 floats are finite and non-integral: `{:?}` is the shortest
        // round-trip form and always has a `.` or an exponent, so reading
        // it back gives a float again.
        ValueRef::Float(x) => {
            let _ = write!(out, "{x:?}");
        }
        ValueRef::Bool(b) => out.push_str(if b { "true" } else { "false" }),
        ValueRef::Null => out.push_str("null"),
    }
}

fn write_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 || c == '\u{2028}' || c == '\u{2029}' => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod diagnostic_tests {
    use super::*;
    use herald_core::cbor::{Map, Value};

    #[test]
    fn bytes_are_h_quoted_and_text_is_not() {
        let mut map = Map::new();
        map.insert("b", Value::Bytes(std::vec![0xde, 0xad]));
        map.insert("t", Value::text("dead"));
        let bytes = Value::Map(map).to_vec();
        let value = herald_core::cbor::decode(&bytes).unwrap();
        assert_eq!(diagnostic(value), r#"{"b":h'dead',"t":"dead"}"#);
        assert_eq!(json(value), r#"{"b":"dead","t":"dead"}"#);
    }
}
