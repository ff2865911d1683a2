//! Canonical CBOR cases (P1).

use super::*;

pub(super) fn encoding_cases(g: &mut Gen) {
    let mut all = Map::new();
    all.insert("uint", Value::Unsigned(1_000_000));
    all.insert("nint", Value::Negative(499));
    all.insert("bytes", Value::Bytes(vec![0xde, 0xad, 0xbe, 0xef]));
    all.insert("text", Value::text("sigil ✓"));
    all.insert(
        "array",
        Value::Array(vec![Value::Unsigned(1), Value::Array(Vec::new())]),
    );
    all.insert(
        "map",
        Value::Map([("k", Value::Null)].into_iter().collect()),
    );
    all.insert("f16", Value::from_f64(1.5).unwrap_or(Value::Null));
    all.insert("f32", Value::from_f64(100_000.5).unwrap_or(Value::Null));
    all.insert("f64", Value::from_f64(0.1).unwrap_or(Value::Null));
    all.insert("true", Value::Bool(true));
    all.insert("false", Value::Bool(false));
    all.insert("null", Value::Null);
    g.cbor(
        "canonical_every_type",
        "a map holding every type P1 allows, in canonical form",
        Value::Map(all).to_vec(),
        None,
    );
    let cases: [(&str, &str, &[u8], &str, usize); 16] = [
        (
            "non_shortest_head",
            "5 written with a one-byte argument",
            &[0x18, 0x05],
            "non_shortest_head",
            0,
        ),
        (
            "non_shortest_length",
            "a 1-byte string whose length uses a 2-byte argument",
            &[0x59, 0x00, 0x01, 0x61],
            "non_shortest_head",
            0,
        ),
        (
            "indefinite_length",
            "an indefinite-length array",
            &[0x9f, 0x01, 0xff],
            "indefinite_length",
            0,
        ),
        (
            "unsorted_keys",
            "map keys \"b\" then \"a\"",
            &[0xa2, 0x61, 0x62, 0x01, 0x61, 0x61, 0x02],
            "unsorted_keys",
            4,
        ),
        (
            "length_first_order",
            "keys \"aa\" then \"b\": bytewise-lexicographic, not canonical (shorter first)",
            &[0xa2, 0x62, 0x61, 0x61, 0x01, 0x61, 0x62, 0x02],
            "unsorted_keys",
            5,
        ),
        (
            "duplicate_key",
            "the key \"a\" twice",
            &[0xa2, 0x61, 0x61, 0x01, 0x61, 0x61, 0x02],
            "duplicate_key",
            4,
        ),
        (
            "non_text_key",
            "an integer map key",
            &[0xa1, 0x01, 0x02],
            "non_text_key",
            1,
        ),
        (
            "tag",
            "tag 1 (epoch time)",
            &[0xc1, 0x1a, 0x68, 0x1a, 0x4e, 0x00],
            "tag",
            0,
        ),
        (
            "undefined",
            "the simple value undefined",
            &[0xf7],
            "disallowed_simple",
            0,
        ),
        (
            "nan",
            "a half-precision NaN",
            &[0xf9, 0x7e, 0x00],
            "non_finite_float",
            0,
        ),
        (
            "infinity",
            "a half-precision +Infinity",
            &[0xf9, 0x7c, 0x00],
            "non_finite_float",
            0,
        ),
        (
            "negative_zero",
            "-0.0",
            &[0xf9, 0x80, 0x00],
            "negative_zero",
            0,
        ),
        (
            "integral_float",
            "1.0 as a float (must be the integer 1)",
            &[0xf9, 0x3c, 0x00],
            "integral_float",
            0,
        ),
        (
            "non_shortest_float",
            "1.5 as binary32 (fits binary16)",
            &[0xfa, 0x3f, 0xc0, 0x00, 0x00],
            "non_shortest_float",
            0,
        ),
        (
            "invalid_utf8",
            "text holding the bytes c3 28",
            &[0x62, 0xc3, 0x28],
            "invalid_utf8",
            1,
        ),
        (
            "trailing_bytes",
            "a second item after the first",
            &[0x01, 0x01],
            "trailing_bytes",
            1,
        ),
    ];
    for (name, description, bytes, rule, offset) in cases {
        g.cbor(name, description, bytes.to_vec(), Some((rule, offset)));
    }
    g.cbor(
        "truncated",
        "a 2-byte string with 1 byte present (the offset names the head that claims too much)",
        vec![0x62, 0x61],
        Some(("truncated", 0)),
    );
}
