//! The JSON display form of an envelope or any canonical value (PROFILE.md
//! P3, spec §3.1): byte strings as lowercase hex, keys in canonical order.
//! Display only: never hashed or signed.

use alloc::string::String;
use core::fmt::Write;

use herald_core::cbor::ValueRef;

/// The P3 JSON display form of `value`, on one line.
pub fn json(value: ValueRef<'_>) -> String {
    let mut out = String::new();
    write_value(value, &mut out);
    out
}

fn write_value(value: ValueRef<'_>, out: &mut String) {
    match value {
        ValueRef::Unsigned(n) => {
            let _ = write!(out, "{n}");
        }
        ValueRef::Negative(n) => {
            let _ = write!(out, "{}", -1 - i128::from(n));
        }
        ValueRef::Bytes(b) => {
            out.push('"');
            out.push_str(&crate::report::hex(b));
            out.push('"');
        }
        ValueRef::Text(s) => write_string(s, out),
        ValueRef::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(item, out);
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
                write_value(item, out);
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
