//! P1 rule by rule, with hand-built bytes: every `Rule` raised at the right
//! offset, the limits of P1/P13, map-key order at the head-length
//! boundaries, the sinks, and numeric reduction.

// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![allow(missing_docs)]

use std::cmp::Ordering;
use std::collections::BTreeSet;

use herald_core::cbor::{
    self, BufferFull, EncodeError, Encoder, Float, FloatError, LenSink, Limits, Map, Rule,
    SliceSink, Value, ValueRef, key_cmp,
};
use sha2::{Digest, Sha256};

fn h(hex: &str) -> Vec<u8> {
    hex::decode(hex.replace(' ', "")).unwrap()
}

/// `hex` is rejected at `offset` for `rule` (default limits), by the borrowed
/// and the owned decoder alike.
#[track_caller]
fn reject(hex: &str, offset: usize, rule: Rule) {
    reject_with(hex, &Limits::DEFAULT, offset, rule);
}

#[track_caller]
fn reject_with(hex: &str, limits: &Limits, offset: usize, rule: Rule) {
    reject_bytes(&h(hex), limits, offset, rule);
}

#[track_caller]
fn reject_bytes(bytes: &[u8], limits: &Limits, offset: usize, rule: Rule) {
    let e = cbor::decode_with(bytes, limits).unwrap_err();
    assert_eq!(
        (e.offset(), e.rule().name()),
        (offset, rule.name()),
        "{}",
        hex::encode(&bytes[..bytes.len().min(40)])
    );
    assert_eq!(Value::decode_with(bytes, limits).unwrap_err(), e);
    assert!(e.offset() <= bytes.len());
}

/// `hex` is accepted (default limits) and re-encodes to itself.
#[track_caller]
fn accept(hex: &str) -> Value {
    accept_bytes(&h(hex), &Limits::DEFAULT)
}

#[track_caller]
fn accept_bytes(bytes: &[u8], limits: &Limits) -> Value {
    cbor::decode_with(bytes, limits).unwrap();
    let v = Value::decode_with(bytes, limits).unwrap();
    assert_eq!(v.to_vec(), bytes);
    v
}

fn limits(max_depth: usize, max_items: usize, max_size: usize) -> Limits {
    Limits {
        max_depth,
        max_items,
        max_size,
    }
}

// ---------------------------------------------------------------------------
// One test per rule.

#[test]
fn truncated() {
    reject("", 0, Rule::Truncated);
    // Argument bytes missing: reported at the end of the input.
    reject("18", 1, Rule::Truncated);
    reject("19 01", 2, Rule::Truncated);
    reject("1b 00 00 00 01", 5, Rule::Truncated);
    reject("f9 00", 2, Rule::Truncated);
    reject("f8", 1, Rule::Truncated);
    // A length or count claiming more than is left: reported at its head.
    reject("44 01 02 03", 0, Rule::Truncated);
    reject("62 61", 0, Rule::Truncated);
    reject("82 00 83 00", 2, Rule::Truncated);
    reject("a1", 0, Rule::Truncated);
    reject("a2 61 61 00", 0, Rule::Truncated); // 2 entries need ≥ 4 bytes
    // An item missing after a complete key.
    reject("a1 61 61", 3, Rule::Truncated);
    reject("82 61 61", 3, Rule::Truncated);
    // Fewer bytes left than items claimed: at the head.
    reject("82 00", 0, Rule::Truncated);
}

#[test]
fn trailing_bytes() {
    reject("00 00", 1, Rule::TrailingBytes);
    reject("80 ff", 1, Rule::TrailingBytes);
    reject("a1 61 61 00 00", 4, Rule::TrailingBytes);
    // decode_prefix reads a CBOR sequence item by item.
    let seq = h("01 61 61 80");
    let (first, end) = cbor::decode_prefix(&seq, &Limits::DEFAULT).unwrap();
    assert_eq!((first, end), (ValueRef::Unsigned(1), 1));
    let (second, end2) = cbor::decode_prefix(&seq[end..], &Limits::DEFAULT).unwrap();
    assert_eq!((second, end2), (ValueRef::Text("a"), 2));
}

#[test]
fn non_shortest_head() {
    for hex in [
        "18 17",
        "19 00 ff",
        "1a 00 00 ff ff",
        "1b 00 00 00 00 ff ff ff ff",
        "38 00",
        "39 00 17",
    ] {
        reject(hex, 0, Rule::NonShortestHead);
    }
    // Lengths and counts too.
    reject("58 01 ff", 0, Rule::NonShortestHead);
    reject("78 00", 0, Rule::NonShortestHead);
    reject("98 00", 0, Rule::NonShortestHead);
    reject("b9 00 00", 0, Rule::NonShortestHead);
    // Nested, and in a map key.
    reject("82 00 19 00 ff", 2, Rule::NonShortestHead);
    reject("a1 78 01 61 00", 1, Rule::NonShortestHead);
    // The smallest argument of each width is accepted.
    assert_eq!(accept("18 18"), Value::Unsigned(24));
    assert_eq!(accept("19 01 00"), Value::Unsigned(256));
    assert_eq!(accept("1a 00 01 00 00"), Value::Unsigned(65_536));
    assert_eq!(
        accept("1b 00 00 00 01 00 00 00 00"),
        Value::Unsigned(1 << 32)
    );
    assert_eq!(
        accept("3b ff ff ff ff ff ff ff ff"),
        Value::Negative(u64::MAX)
    );
}

#[test]
fn reserved_additional_info() {
    for hex in ["1c", "3d", "5e", "7c", "9d", "be", "fc", "fd", "fe"] {
        reject(hex, 0, Rule::ReservedAdditionalInfo);
    }
    reject("81 1c", 1, Rule::ReservedAdditionalInfo);
    reject("a1 61 61 fe", 3, Rule::ReservedAdditionalInfo);
}

#[test]
fn indefinite_length() {
    for hex in ["5f 41 00 ff", "7f 61 61 ff", "9f ff", "bf ff", "5f", "bf"] {
        reject(hex, 0, Rule::IndefiniteLength);
    }
    reject("82 00 9f ff", 2, Rule::IndefiniteLength);
    reject("a1 7f 61 61 ff 00", 1, Rule::IndefiniteLength);
}

#[test]
fn unexpected_break() {
    reject("ff", 0, Rule::UnexpectedBreak);
    reject("82 00 ff", 2, Rule::UnexpectedBreak);
    reject("a1 61 61 ff", 3, Rule::UnexpectedBreak);
}

#[test]
fn tag() {
    for hex in [
        "c0 60",
        "c1 00",
        "c2 41 01",
        "c3 41 01",
        "d8 20 60",
        "db 00 00 00 00 00 00 00 00 00",
        "c1",
    ] {
        reject(hex, 0, Rule::Tag);
    }
    reject("81 c1 00", 1, Rule::Tag);
    // A tagged key is a tag before it is a non-text key.
    reject("a1 c1 61 61 00", 1, Rule::Tag);
    reject("a1 61 61 c1 00", 3, Rule::Tag);
}

#[test]
fn disallowed_simple() {
    // undefined, simple(0), simple(19), simple(16), two-byte forms (even of
    // false/true/null, which are not well-formed that way).
    for hex in ["f7", "e0", "f3", "f0", "f8 ff", "f8 20", "f8 14", "f8 16"] {
        reject(hex, 0, Rule::DisallowedSimple);
    }
    reject("82 f6 f7", 2, Rule::DisallowedSimple);
    assert_eq!(
        accept("83 f4 f5 f6"),
        Value::Array(vec![Value::Bool(false), Value::Bool(true), Value::Null])
    );
}

#[test]
fn non_finite_float() {
    for hex in [
        "f9 7c 00",
        "f9 fc 00",
        "f9 7e 00",
        "f9 7c 01",
        "fa 7f 80 00 00",
        "fa ff 80 00 00",
        "fa 7f c0 00 00",
        "fb 7f f0 00 00 00 00 00 00",
        "fb ff f8 00 00 00 00 00 00",
        "fb 7f f0 00 00 00 00 00 01",
    ] {
        reject(hex, 0, Rule::NonFiniteFloat);
    }
    reject("81 f9 7e 00", 1, Rule::NonFiniteFloat);
}

#[test]
fn negative_zero() {
    for hex in ["f9 80 00", "fa 80 00 00 00", "fb 80 00 00 00 00 00 00 00"] {
        reject(hex, 0, Rule::NegativeZero);
    }
    reject("a1 61 61 f9 80 00", 3, Rule::NegativeZero);
}

#[test]
fn integral_float() {
    for hex in [
        "f9 00 00",                   // 0.0
        "f9 3c 00",                   // 1.0
        "f9 c4 00",                   // -4.0
        "f9 7b ff",                   // 65504.0
        "fa 47 c3 50 00",             // 100000.0
        "fa 5a 00 00 00",             // 2^53
        "fb 43 ef ff ff ff ff ff ff", // 2^64 − 2048, largest f64 below 2^64
        "fa df 80 00 00",             // −2^64, the most negative CBOR integer
    ] {
        reject(hex, 0, Rule::IntegralFloat);
    }
    reject("82 00 f9 3c 00", 2, Rule::IntegralFloat);
    // Integral but outside −2^64 … 2^64−1: floats, in shortest width.
    let Value::Float(x) = accept("fa 5f 80 00 00") else {
        panic!()
    };
    assert_eq!(x.get(), 18_446_744_073_709_551_616.0);
    let Value::Float(x) = accept("fa e0 00 00 00") else {
        panic!()
    };
    assert_eq!(x.get(), -36_893_488_147_419_103_232.0);
    accept("fb 7f ef ff ff ff ff ff ff");
}

#[test]
fn non_shortest_float() {
    reject("fa 3f c0 00 00", 0, Rule::NonShortestFloat); // 1.5 as f32
    reject("fb 3f f8 00 00 00 00 00 00", 0, Rule::NonShortestFloat); // 1.5 as f64
    reject("fb 3f d5 55 55 60 00 00 00", 0, Rule::NonShortestFloat); // f32 1/3 as f64
    reject("fa 33 80 00 00", 0, Rule::NonShortestFloat); // 2^-24, an f16 subnormal
    reject("fb 43 f0 00 00 00 00 00 00", 0, Rule::NonShortestFloat); // 2^64 as f64
    reject("81 fa 3f c0 00 00", 1, Rule::NonShortestFloat);
    // The shortest forms of the same values.
    accept("f9 3e 00");
    accept("fa 3e aa aa ab");
    accept("f9 00 01");
    accept("f9 03 ff");
    accept("fa 00 00 00 01"); // f32 subnormal: not an f16
    accept("fb 3f b9 99 99 99 99 99 9a"); // 0.1
}

#[test]
fn invalid_utf8() {
    reject("62 c0 ae", 1, Rule::InvalidUtf8); // overlong
    reject("63 61 ff 61", 2, Rule::InvalidUtf8);
    reject("63 ed a0 80", 1, Rule::InvalidUtf8); // surrogate
    reject("62 61 e2", 2, Rule::InvalidUtf8); // cut sequence
    reject("64 f4 90 80 80", 1, Rule::InvalidUtf8); // above U+10FFFF
    reject("a1 62 61 ff 00", 3, Rule::InvalidUtf8); // in a key
    // Byte strings are not text.
    accept("42 c0 ae");
    assert_eq!(accept("64 f0 90 85 91"), Value::text("\u{10151}"));
}

#[test]
fn non_text_key() {
    for hex in [
        "a1 00 00",
        "a1 20 00",
        "a1 41 61 00",
        "a1 80 00",
        "a1 a0 00",
        "a1 f6 00",
        "a1 f5 00",
        "a1 f9 3e 00 00",
    ] {
        reject(hex, 1, Rule::NonTextKey);
    }
    reject("81 a1 01 02", 2, Rule::NonTextKey);
    reject("a2 61 61 00 01 00", 4, Rule::NonTextKey);
}

#[test]
fn unsorted_keys() {
    reject("a2 61 62 00 61 61 00", 4, Rule::UnsortedKeys);
    // Plain lexicographic order {"aa", "b"} is not canonical: "b" is shorter.
    reject("a2 62 61 61 00 61 62 00", 5, Rule::UnsortedKeys);
    assert_eq!(accept("a2 61 62 00 62 61 61 00").as_map().unwrap().len(), 2);
    // The empty key sorts first.
    reject("a2 61 61 00 60 00", 4, Rule::UnsortedKeys);
    accept("a2 60 00 61 61 00");
}

#[test]
fn duplicate_key() {
    reject("a2 61 61 00 61 61 01", 4, Rule::DuplicateKey);
    reject("a3 60 00 61 61 00 61 61 00", 6, Rule::DuplicateKey);
    reject("a2 60 00 60 00", 3, Rule::DuplicateKey);
}

fn nested_arrays(depth: usize) -> Vec<u8> {
    let mut b = vec![0x81; depth - 1];
    b.push(0x80);
    b
}

fn nested_maps(depth: usize) -> Vec<u8> {
    let mut b = Vec::new();
    for _ in 0..depth - 1 {
        b.extend([0xa1, 0x61, 0x61]);
    }
    b.push(0xa0);
    b
}

#[test]
fn depth_exceeded() {
    // P13: the top-level container is depth 1; the default limit is 32.
    accept_bytes(&nested_arrays(32), &Limits::DEFAULT);
    reject_bytes(
        &nested_arrays(33),
        &Limits::DEFAULT,
        32,
        Rule::DepthExceeded,
    );
    accept_bytes(&nested_maps(32), &Limits::DEFAULT);
    reject_bytes(
        &nested_maps(33),
        &Limits::DEFAULT,
        3 * 32,
        Rule::DepthExceeded,
    );
    // Scalars do not count.
    let mut b = vec![0x81; 32];
    b.push(0x00);
    accept_bytes(&b, &Limits::DEFAULT);
    // A configured limit.
    let one = limits(1, 65_536, 1 << 20);
    accept_bytes(&h("82 00 01"), &one);
    reject_with("81 80", &one, 1, Rule::DepthExceeded);
    let zero = limits(0, 65_536, 1 << 20);
    accept_bytes(&h("00"), &zero);
    reject_with("80", &zero, 0, Rule::DepthExceeded);
    // Checked before the (truncated) contents.
    reject_bytes(&[0x81; 40], &Limits::DEFAULT, 32, Rule::DepthExceeded);
}

#[test]
fn too_many_items() {
    let three = limits(32, 3, 1 << 20);
    accept_bytes(&h("83 01 02 03"), &three);
    reject_with("84 01 02 03 04", &three, 0, Rule::TooManyItems);
    accept_bytes(&h("a3 61 61 00 61 62 00 61 63 00"), &three);
    reject_with(
        "a4 61 61 00 61 62 00 61 63 00 61 64 00",
        &three,
        0,
        Rule::TooManyItems,
    );
    reject_with("81 84 01 02 03 04", &three, 1, Rule::TooManyItems);
    // Checked before the claim is compared with the input.
    reject_with("9b 7f ff ff ff ff ff ff ff", &three, 0, Rule::TooManyItems);
    // The default: 65 536 items per container.
    let mut ok = h("9a 00 01 00 00");
    ok.resize(5 + 65_536, 0);
    accept_bytes(&ok, &Limits::DEFAULT);
    let mut over = h("9a 00 01 00 01");
    over.resize(5 + 65_537, 0);
    reject_bytes(&over, &Limits::DEFAULT, 0, Rule::TooManyItems);
    // Byte and text strings are limited by size, not item count.
    let mut long = h("5a 00 01 00 01");
    long.resize(5 + 65_537, 0);
    accept_bytes(&long, &Limits::DEFAULT);
}

#[test]
fn too_large() {
    let eight = limits(32, 65_536, 8);
    accept_bytes(&h("47 01 02 03 04 05 06 07"), &eight);
    reject_with("48 01 02 03 04 05 06 07 08", &eight, 0, Rule::TooLarge);
    reject_with("84 01 02 03 1a 00 01 00 00", &eight, 0, Rule::TooLarge);
    // A truncated item within the limit is still just truncated.
    reject_with("48 01 02", &eight, 0, Rule::Truncated);
    // An item inside the limit followed by more input: trailing bytes.
    reject_with(
        "41 00 00 00 00 00 00 00 00 00",
        &eight,
        2,
        Rule::TrailingBytes,
    );
    let seq = h("41 00 00 00 00 00 00 00 00 00");
    let (v, end) = cbor::decode_prefix(&seq, &eight).unwrap();
    assert_eq!((v, end), (ValueRef::Bytes(&[0]), 2));
    // The default: 1 MiB per item, head included.
    let body = (1 << 20) - 5;
    let mut max = h("5a 00 0f ff fb");
    max.resize(5 + body, 0x61);
    accept_bytes(&max, &Limits::DEFAULT);
    let mut over = h("5a 00 0f ff fc");
    over.resize(5 + body + 1, 0x61);
    reject_bytes(&over, &Limits::DEFAULT, 0, Rule::TooLarge);
}

#[test]
fn huge_claims_fail_fast() {
    // Heads claiming 2^63 bytes, 4 GiB, and 2^64−1 bytes: each rejected from
    // the head alone. (Reserving the claimed length would abort the process,
    // so passing is the proof that nothing was allocated for it.)
    let unlimited = limits(32, usize::MAX, usize::MAX);
    for lim in [Limits::DEFAULT, unlimited] {
        reject_with("5b 80 00 00 00 00 00 00 00", &lim, 0, Rule::Truncated);
        reject_with("5b 80 00 00 00 00 00 00 00 61 62", &lim, 0, Rule::Truncated);
        reject_with("7b ff ff ff ff ff ff ff ff", &lim, 0, Rule::Truncated);
        reject_with("5a ff ff ff ff 00", &lim, 0, Rule::Truncated);
        reject_with("81 5b 80 00 00 00 00 00 00 00", &lim, 1, Rule::Truncated);
    }
    // A map claiming 2^32 entries (and 2^32 − 1): over the item limit by
    // default, and truncated when the limit is lifted.
    reject("bb 00 00 00 01 00 00 00 00", 0, Rule::TooManyItems);
    reject("ba ff ff ff ff", 0, Rule::TooManyItems);
    reject_with(
        "bb 00 00 00 01 00 00 00 00 61 61 00",
        &unlimited,
        0,
        Rule::Truncated,
    );
    reject_with("ba ff ff ff ff", &unlimited, 0, Rule::Truncated);
    reject_with("9b ff ff ff ff ff ff ff ff", &unlimited, 0, Rule::Truncated);
    reject_with("bb ff ff ff ff ff ff ff ff", &unlimited, 0, Rule::Truncated);
}

/// Every `Rule` is raised by some input, and the names are distinct.
#[test]
fn every_rule_is_raised() {
    let small = limits(1, 1, 4);
    let cases: &[(&str, &Limits, usize, Rule)] = &[
        ("18", &Limits::DEFAULT, 1, Rule::Truncated),
        ("00 00", &Limits::DEFAULT, 1, Rule::TrailingBytes),
        ("18 00", &Limits::DEFAULT, 0, Rule::NonShortestHead),
        ("1c", &Limits::DEFAULT, 0, Rule::ReservedAdditionalInfo),
        ("9f ff", &Limits::DEFAULT, 0, Rule::IndefiniteLength),
        ("ff", &Limits::DEFAULT, 0, Rule::UnexpectedBreak),
        ("c1 00", &Limits::DEFAULT, 0, Rule::Tag),
        ("f7", &Limits::DEFAULT, 0, Rule::DisallowedSimple),
        ("f9 7e 00", &Limits::DEFAULT, 0, Rule::NonFiniteFloat),
        ("f9 80 00", &Limits::DEFAULT, 0, Rule::NegativeZero),
        ("f9 3c 00", &Limits::DEFAULT, 0, Rule::IntegralFloat),
        (
            "fa 3f c0 00 00",
            &Limits::DEFAULT,
            0,
            Rule::NonShortestFloat,
        ),
        ("61 ff", &Limits::DEFAULT, 1, Rule::InvalidUtf8),
        ("a1 00 00", &Limits::DEFAULT, 1, Rule::NonTextKey),
        (
            "a2 61 62 00 61 61 00",
            &Limits::DEFAULT,
            4,
            Rule::UnsortedKeys,
        ),
        (
            "a2 61 61 00 61 61 00",
            &Limits::DEFAULT,
            4,
            Rule::DuplicateKey,
        ),
        ("81 80", &small, 1, Rule::DepthExceeded),
        ("82 00 00", &small, 0, Rule::TooManyItems),
        ("44 00 00 00 00", &small, 0, Rule::TooLarge),
    ];
    let mut names = BTreeSet::new();
    for (hex, lim, offset, rule) in cases {
        reject_with(hex, lim, *offset, *rule);
        assert!(names.insert(rule.name()), "{} twice", rule.name());
        assert!(!rule.to_string().is_empty());
    }
    assert_eq!(names.len(), 19);
    let e = cbor::decode(&h("a1 00 00")).unwrap_err();
    assert_eq!(e.to_string(), "byte 1: map key is not a text string (P1)");
}

// ---------------------------------------------------------------------------
// Map-key order: RFC 8949 bytewise vs RFC 7049 length-first.

fn encoded_key(k: &str) -> Vec<u8> {
    Value::text(k).to_vec()
}

fn rfc7049_cmp(a: &str, b: &str) -> Ordering {
    a.len()
        .cmp(&b.len())
        .then_with(|| a.as_bytes().cmp(b.as_bytes()))
}

#[test]
fn key_order_at_head_length_boundaries() {
    // For text keys the head encodes the length, so the bytewise order of the
    // encodings (RFC 8949 §4.2.1) is the length-first order (RFC 7049 §3.9);
    // the worry is the boundaries where the head grows.
    for len in [
        0usize, 1, 22, 23, 24, 25, 254, 255, 256, 257, 65_535, 65_536,
    ] {
        let shorter = "z".repeat(len);
        let longer = "a".repeat(len + 1);
        let (es, el) = (encoded_key(&shorter), encoded_key(&longer));
        assert_eq!(es.cmp(&el), Ordering::Less, "len {len}");
        assert_eq!(rfc7049_cmp(&shorter, &longer), Ordering::Less);
        assert_eq!(key_cmp(&shorter, &longer), Ordering::Less);
        // Plain string order disagrees whenever len > 0.
        if len > 0 {
            assert_eq!(shorter.cmp(&longer), Ordering::Greater);
        }

        // `Map` puts the shorter key first, whatever the insertion order.
        let map: Map = [
            (longer.clone(), Value::Null),
            (shorter.clone(), Value::Bool(true)),
        ]
        .into_iter()
        .collect();
        let order: Vec<&str> = map.iter().map(|(k, _)| k).collect();
        assert_eq!(order, [shorter.as_str(), longer.as_str()]);
        let bytes = Value::Map(map.clone()).to_vec();
        assert_eq!(Value::decode(&bytes).unwrap(), Value::Map(map.clone()));
        let decoded = cbor::decode(&bytes).unwrap().as_map().unwrap();
        let keys: Vec<&str> = decoded.iter().map(|(k, _)| k).collect();
        assert_eq!(keys, order);

        // The same two entries written longer-first are rejected at the second key.
        let mut swapped = vec![0xa2];
        swapped.extend(&el);
        swapped.push(0xf6);
        let second = swapped.len();
        swapped.extend(&es);
        swapped.push(0xf5);
        reject_bytes(&swapped, &Limits::DEFAULT, second, Rule::UnsortedKeys);
    }
}

#[test]
fn key_orders_coincide_for_text() {
    let keys = [
        "",
        "a",
        "b",
        "z",
        "aa",
        "ab",
        "b\u{0}",
        "é",
        "\u{7f}",
        "\u{80}",
        "\u{ffff}",
        "\u{10000}",
        "~~",
        "a\u{10ffff}",
    ];
    let mut all: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
    for len in [23, 24, 255, 256] {
        all.push("a".repeat(len));
        all.push("é".repeat(len / 2) + &"a".repeat(len % 2));
        all.push("\u{7f}".repeat(len));
    }
    for a in &all {
        for b in &all {
            let bytewise = encoded_key(a).cmp(&encoded_key(b));
            assert_eq!(bytewise, rfc7049_cmp(a, b), "{a:?} {b:?}");
            assert_eq!(bytewise, key_cmp(a, b), "{a:?} {b:?}");
        }
    }
    // `Map` iterates in that order, and its encoding decodes.
    let map: Map = all.iter().rev().map(|k| (k.clone(), Value::Null)).collect();
    let mut expect = all.clone();
    expect.sort_by_key(|k| encoded_key(k));
    expect.dedup();
    let got: Vec<&str> = map.iter().map(|(k, _)| k).collect();
    assert_eq!(got, expect);
    accept_bytes(&Value::Map(map).to_vec(), &Limits::DEFAULT);
}

#[test]
fn non_text_keys_rejected_even_when_sorted() {
    reject("a2 01 00 02 00", 1, Rule::NonTextKey);
    reject("a2 20 00 21 00", 1, Rule::NonTextKey);
    reject("a2 41 00 00 41 01 00", 1, Rule::NonTextKey);
    reject("a2 80 00 81 00 00", 1, Rule::NonTextKey);
}

// ---------------------------------------------------------------------------
// Sinks.

fn sample() -> Value {
    let inner: Map = [
        ("n", Value::Negative(41)),
        ("f", Value::from_f64(0.25).unwrap()),
    ]
    .into_iter()
    .collect();
    let map: Map = [
        ("bytes", Value::Bytes(vec![1, 2, 3])),
        (
            "list",
            Value::Array(vec![
                Value::Unsigned(1_000_000),
                Value::Null,
                Value::Bool(true),
            ]),
        ),
        ("inner", Value::Map(inner)),
        ("text", Value::text("héllo")),
    ]
    .into_iter()
    .collect();
    Value::Map(map)
}

#[test]
fn slice_sink() {
    let v = sample();
    let expect = v.to_vec();
    let n = expect.len();
    // Exact fit.
    let mut buf = vec![0u8; n];
    let mut enc = Encoder::new(SliceSink::new(&mut buf));
    v.encode(&mut enc).unwrap();
    assert_eq!(enc.into_inner().into_written(), expect.as_slice());
    // Room to spare: only the prefix is written.
    let mut big = vec![0xeeu8; n + 10];
    let mut enc = Encoder::new(SliceSink::new(&mut big));
    v.encode(&mut enc).unwrap();
    assert_eq!(enc.sink_mut().written(), expect.as_slice());
    assert!(big[n..].iter().all(|&b| b == 0xee));
    // Every shorter buffer is refused.
    for short in 0..n {
        let mut buf = vec![0u8; short];
        let mut enc = Encoder::new(SliceSink::new(&mut buf));
        assert_eq!(v.encode(&mut enc), Err(BufferFull), "{short} bytes");
        assert!(enc.into_inner().into_written().len() <= short);
    }
}

#[test]
fn heapless_sink() {
    let v = sample();
    let expect = v.to_vec();
    assert!(expect.len() <= 128);
    let mut enc = Encoder::new(heapless::Vec::<u8, 128>::new());
    v.encode(&mut enc).unwrap();
    assert_eq!(enc.into_inner().as_slice(), expect.as_slice());
    let mut small = Encoder::new(heapless::Vec::<u8, 8>::new());
    assert_eq!(v.encode(&mut small), Err(BufferFull));
}

#[test]
fn hashing_sink_and_len_sink() {
    let v = sample();
    let bytes = v.to_vec();
    let mut enc = Encoder::new(Sha256::new());
    match v.encode(&mut enc) {
        Ok(()) => {}
        Err(never) => match never {},
    }
    assert_eq!(enc.into_inner().finalize(), Sha256::digest(&bytes));
    let mut len = Encoder::new(LenSink::default());
    match v.encode(&mut len) {
        Ok(()) => {}
        Err(never) => match never {},
    }
    assert_eq!(len.into_inner().0, bytes.len());
}

#[test]
fn encoder_writes_canonical_heads_and_floats() {
    let mut enc = Encoder::new(Vec::new());
    enc.map(3).unwrap();
    enc.text("a").unwrap();
    enc.int(i64::MIN).unwrap();
    enc.text("b").unwrap();
    enc.array(3).unwrap();
    enc.float(2.0).unwrap();
    enc.float(-1.5).unwrap();
    enc.float(65_536.5).unwrap();
    enc.text("cc").unwrap();
    enc.bytes(&[0; 24]).unwrap();
    let bytes = enc.into_inner();
    let mut expect =
        h("a3 61 61 3b 7f ff ff ff ff ff ff ff 61 62 83 02 f9 be 00 fa 47 80 00 40 62 63 63 58 18");
    expect.extend([0; 24]);
    assert_eq!(bytes, expect);
    accept_bytes(&bytes, &Limits::DEFAULT);

    let mut enc = Encoder::new(Vec::new());
    assert_eq!(
        enc.float(-0.0),
        Err(EncodeError::Float(FloatError::NegativeZero))
    );
    assert_eq!(
        enc.float(f64::NAN),
        Err(EncodeError::Float(FloatError::NaN))
    );
    assert_eq!(
        enc.float(f64::INFINITY),
        Err(EncodeError::Float(FloatError::Infinite))
    );
    assert!(enc.into_inner().is_empty());
}

// ---------------------------------------------------------------------------
// Numeric reduction.

#[test]
fn from_f64_reduces_numbers() {
    const TWO_64: f64 = 18_446_744_073_709_551_616.0;
    assert_eq!(Value::from_f64(2.0), Ok(Value::Unsigned(2)));
    assert_eq!(Value::from_f64(0.0), Ok(Value::Unsigned(0)));
    assert_eq!(Value::from_f64(-1.0), Ok(Value::Negative(0)));
    assert_eq!(Value::from_f64(-TWO_64), Ok(Value::Negative(u64::MAX)));
    assert_eq!(
        Value::from_f64(-TWO_64).unwrap().to_vec(),
        h("3b ff ff ff ff ff ff ff ff")
    );
    assert_eq!(
        Value::from_f64(TWO_64 - 2048.0),
        Ok(Value::Unsigned(u64::MAX - 2047))
    );
    // 2^64 is out of integer range: it stays a float (an exact f32).
    let big = Value::from_f64(TWO_64).unwrap();
    assert!(matches!(big, Value::Float(x) if x.get() == TWO_64));
    assert_eq!(big.to_vec(), h("fa 5f 80 00 00"));
    assert_eq!(Value::from_f64(1.5).unwrap().to_vec(), h("f9 3e 00"));
    assert_eq!(
        Value::from_f64(0.1).unwrap().to_vec(),
        h("fb 3f b9 99 99 99 99 99 9a")
    );
    assert_eq!(
        Value::from_f64(100_000.5).unwrap().to_vec(),
        h("fa 47 c3 50 40")
    );
    assert_eq!(Value::from_f64(f64::NAN), Err(FloatError::NaN));
    assert_eq!(Value::from_f64(f64::INFINITY), Err(FloatError::Infinite));
    assert_eq!(
        Value::from_f64(f64::NEG_INFINITY),
        Err(FloatError::Infinite)
    );
    assert_eq!(Value::from_f64(-0.0), Err(FloatError::NegativeZero));
}

#[test]
fn float_new_rejects_integral_values() {
    assert_eq!(Float::new(2.0), Err(FloatError::Integral));
    assert_eq!(Float::new(0.0), Err(FloatError::Integral));
    assert_eq!(
        Float::new(-18_446_744_073_709_551_616.0),
        Err(FloatError::Integral)
    );
    assert_eq!(Float::new(-0.0), Err(FloatError::NegativeZero));
    assert_eq!(Float::new(f64::NAN), Err(FloatError::NaN));
    assert_eq!(Float::new(1.5).map(Float::get), Ok(1.5));
    assert_eq!(
        Float::new(18_446_744_073_709_551_616.0).map(Float::get),
        Ok(18_446_744_073_709_551_616.0)
    );
    assert_eq!(
        Value::Float(Float::new(-2.5).unwrap()).to_vec(),
        h("f9 c1 00")
    );
}
