//! Property tests for P1: encode/decode round trips, "accepted implies
//! canonical", no panics on arbitrary input, the serde bridge, and a
//! differential check against ciborium in both directions.

// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![allow(missing_docs)]

use herald_core::cbor::{
    self, Float, FloatError, Limits, Map, SerdeError, Value, ValueRef, from_ciborium, from_value,
    key_cmp, to_ciborium, to_value,
};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::Index;
use serde::{Deserialize, Serialize};

// ---------------------------------------------------------------------------
// Strategies.

/// Integer arguments at every head-width boundary.
fn boundary_u64() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(0u64),
        Just(23),
        Just(24),
        Just(255),
        Just(256),
        Just(65_535),
        Just(65_536),
        Just(u64::from(u32::MAX)),
        Just(u64::from(u32::MAX) + 1),
        Just(u64::MAX - 1),
        Just(u64::MAX),
    ]
}

/// Finite floats of every width, passed through P1 numeric reduction.
fn number() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<f64>().prop_filter_map("outside P1", |x| Value::from_f64(x).ok()),
        any::<u64>().prop_filter_map("outside P1", |bits| Value::from_f64(f64::from_bits(bits))
            .ok()),
        any::<u32>().prop_filter_map("outside P1", |bits| Value::from_f64(f64::from(
            f32::from_bits(bits)
        ))
        .ok()),
        // Dyadic values around the f16 range: many fit f16 or are integral.
        (any::<i16>(), -30i32..20).prop_filter_map("outside P1", |(m, e)| {
            Value::from_f64(f64::from(m) * 2f64.powi(e)).ok()
        }),
    ]
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[a-cé水😀\u{0}\u{7f}]{0,12}",
        "[a-z]{20,30}",
    ]
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<u64>().prop_map(Value::Unsigned),
        any::<u64>().prop_map(Value::Negative),
        boundary_u64().prop_map(Value::Unsigned),
        boundary_u64().prop_map(Value::Negative),
        vec(any::<u8>(), 0..40).prop_map(Value::Bytes),
        text().prop_map(Value::Text),
        number(),
        any::<bool>().prop_map(Value::Bool),
        Just(Value::Null),
    ]
}

/// Any `Value`, nested at most 8 deep.
fn value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(8, 64, 8, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..8).prop_map(Value::Array),
            vec((text(), inner), 0..8)
                .prop_map(|entries| Value::Map(entries.into_iter().collect::<Map>())),
        ]
    })
}

#[derive(Clone, Debug)]
enum Mutation {
    Flip(Index, u8),
    Set(Index, u8),
    Insert(Index, u8),
    Delete(Index),
}

/// Bytes that are heads or break codes, to make mutations interesting.
fn interesting_byte() -> impl Strategy<Value = u8> {
    prop_oneof![
        any::<u8>(),
        prop::sample::select(vec![
            0x00, 0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1f, 0x20, 0x40, 0x41, 0x58, 0x5f, 0x60, 0x61,
            0x78, 0x7f, 0x80, 0x81, 0x98, 0x9f, 0xa0, 0xa1, 0xb8, 0xbf, 0xc0, 0xf4, 0xf6, 0xf7,
            0xf9, 0xfa, 0xfb, 0xff,
        ]),
    ]
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<Index>(), 1u8..=255).prop_map(|(i, m)| Mutation::Flip(i, m)),
        (any::<Index>(), interesting_byte()).prop_map(|(i, b)| Mutation::Set(i, b)),
        (any::<Index>(), interesting_byte()).prop_map(|(i, b)| Mutation::Insert(i, b)),
        any::<Index>().prop_map(Mutation::Delete),
    ]
}

fn apply(mut bytes: Vec<u8>, mutations: &[Mutation]) -> Vec<u8> {
    for m in mutations {
        match m {
            Mutation::Insert(i, b) => {
                let at = i.index(bytes.len() + 1);
                bytes.insert(at, *b);
            }
            _ if bytes.is_empty() => {}
            Mutation::Flip(i, mask) => {
                let at = i.index(bytes.len());
                bytes[at] ^= mask;
            }
            Mutation::Set(i, b) => {
                let at = i.index(bytes.len());
                bytes[at] = *b;
            }
            Mutation::Delete(i) => {
                let at = i.index(bytes.len());
                bytes.remove(at);
            }
        }
    }
    bytes
}

/// Valid encodings with one to four mutations.
fn mutated() -> impl Strategy<Value = Vec<u8>> {
    (value(), vec(mutation(), 1..5)).prop_map(|(v, ms)| apply(v.to_vec(), &ms))
}

/// Valid encodings, mutated encodings and random bytes.
fn any_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        value().prop_map(|v| v.to_vec()),
        mutated(),
        vec(any::<u8>(), 0..64),
        vec(interesting_byte(), 0..32),
    ]
}

fn small_limits() -> impl Strategy<Value = Limits> {
    (0usize..40, 0usize..12, 0usize..96).prop_map(|(max_depth, max_items, max_size)| Limits {
        max_depth,
        max_items,
        max_size,
    })
}

// ---------------------------------------------------------------------------
// A walker visiting every item of a ValueRef.

/// Visits every item under `v` (which was decoded from `input` with
/// `limits`), checking the iterators against the container lengths and the
/// spans against the input. Returns the number of items visited.
fn walk(v: &ValueRef<'_>, input: &[u8], limits: &Limits) -> usize {
    let _ = format!("{v:?}");
    assert!(!v.type_name().is_empty());
    match v {
        ValueRef::Array(a) => {
            let span = a.items_span();
            assert!(span.start <= span.end && span.end <= input.len());
            let mut it = a.iter();
            assert_eq!(it.size_hint(), (a.len(), Some(a.len())));
            let mut n = 0;
            let mut end = span.start;
            let mut visited = 1;
            while let Some((item_span, item)) = it.next_spanned() {
                assert_eq!(item_span.start, end, "items are contiguous");
                end = item_span.end;
                // Each item's bytes are canonical on their own.
                assert_eq!(cbor::decode_with(&input[item_span], limits), Ok(item));
                visited += walk(&item, input, limits);
                n += 1;
            }
            assert_eq!(end, span.end);
            assert_eq!(n, a.len());
            assert_eq!(a.iter().count(), a.len());
            assert_eq!(a.is_empty(), n == 0);
            visited
        }
        ValueRef::Map(m) => {
            let span = m.entries_span();
            assert!(span.start <= span.end && span.end <= input.len());
            let mut it = m.iter();
            let mut n = 0;
            let mut end = span.start;
            let mut prev: Option<&str> = None;
            let mut visited = 1;
            while let Some(e) = it.next_entry() {
                assert_eq!(e.span.start, end, "entries are contiguous");
                assert_eq!(e.span.end, e.value_span.end);
                assert!(e.span.start < e.value_span.start);
                end = e.span.end;
                if let Some(p) = prev {
                    assert_eq!(key_cmp(p, e.key), std::cmp::Ordering::Less);
                }
                prev = Some(e.key);
                assert_eq!(
                    cbor::decode_with(&input[e.value_span.clone()], limits),
                    Ok(e.value)
                );
                assert_eq!(
                    cbor::decode(&input[e.span.start..e.value_span.start]),
                    Ok(ValueRef::Text(e.key))
                );
                assert_eq!(m.get(e.key), Some(e.value));
                visited += walk(&e.value, input, limits);
                n += 1;
            }
            assert_eq!(end, span.end);
            assert_eq!(n, m.len());
            assert_eq!(m.iter().count(), m.len());
            visited
        }
        _ => 1,
    }
}

fn count_items(v: &Value) -> usize {
    1 + match v {
        Value::Array(items) => items.iter().map(count_items).sum(),
        Value::Map(m) => m.iter().map(|(_, v)| count_items(v)).sum(),
        _ => 0,
    }
}

fn depth(v: &Value) -> usize {
    match v {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Map(m) => 1 + m.iter().map(|(_, v)| depth(v)).max().unwrap_or(0),
        _ => 0,
    }
}

fn ciborium_decode(bytes: &[u8]) -> Option<ciborium::Value> {
    ciborium::de::from_reader::<ciborium::Value, _>(bytes).ok()
}

// ---------------------------------------------------------------------------
// Properties.

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// (a) Every Value round-trips, and its encoding is accepted.
    #[test]
    fn value_round_trips(v in value()) {
        prop_assert!(depth(&v) <= 8);
        let bytes = v.to_vec();
        let r = cbor::decode(&bytes).unwrap();
        prop_assert_eq!(walk(&r, &bytes, &Limits::DEFAULT), count_items(&v));
        prop_assert_eq!(Value::from(&r), v.clone());
        prop_assert_eq!(Value::decode(&bytes), Ok(v));
    }

    /// (b) Whatever the strict decoder accepts re-encodes to the same bytes.
    #[test]
    fn accepted_is_canonical(bytes in any_bytes()) {
        if let Ok(v) = Value::decode(&bytes) {
            prop_assert_eq!(v.to_vec(), bytes);
        }
    }

    /// (b) The same, for mutations of valid encodings only.
    #[test]
    fn accepted_mutation_is_canonical(bytes in mutated()) {
        match Value::decode(&bytes) {
            Ok(v) => prop_assert_eq!(v.to_vec(), bytes),
            Err(e) => prop_assert!(e.offset() <= bytes.len()),
        }
    }

    /// (c) Arbitrary input never panics the decoder or the views, under the
    /// default and under small limits.
    #[test]
    fn never_panics(bytes in any_bytes(), limits in small_limits()) {
        for lim in [Limits::DEFAULT, limits] {
            match cbor::decode_with(&bytes, &lim) {
                Ok(v) => {
                    walk(&v, &bytes, &lim);
                }
                Err(e) => prop_assert!(e.offset() <= bytes.len()),
            }
            match cbor::decode_prefix(&bytes, &lim) {
                Ok((v, end)) => {
                    prop_assert!(end <= bytes.len() && end <= lim.max_size);
                    walk(&v, &bytes, &lim);
                    prop_assert_eq!(cbor::decode_with(&bytes[..end], &lim), Ok(v));
                }
                Err(e) => prop_assert!(e.offset() <= bytes.len()),
            }
        }
        let _ = cbor::decode(&bytes);
    }

    /// (e) Differential, one way: what the strict decoder accepts, ciborium
    /// reads to the same value.
    #[test]
    fn ciborium_agrees_on_accepted(bytes in any_bytes()) {
        if let Ok(v) = Value::decode(&bytes) {
            prop_assert_eq!(ciborium_decode(&bytes), Some(to_ciborium(&v)));
        }
    }

    /// (e) Differential, the other way: bytes that a general decoder
    /// (ciborium) reads, and whose value P1 encodes back to the same bytes,
    /// are accepted by the strict decoder. So it rejects nothing canonical.
    #[test]
    fn strict_rejects_nothing_canonical(bytes in any_bytes()) {
        if let Some(c) = ciborium_decode(&bytes)
            && let Ok(v) = from_ciborium(c)
                && v.to_vec() == bytes {
                    prop_assert_eq!(Value::decode(&bytes), Ok(v));
                }
    }
}

// ---------------------------------------------------------------------------
// (d) serde.

/// Bytes that serialize as a CBOR byte string (not an array of integers).
#[derive(Clone, Debug, PartialEq)]
struct Blob(Vec<u8>);

impl Serialize for Blob {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(&self.0)
    }
}

impl<'de> Deserialize<'de> for Blob {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Blob;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a byte string")
            }
            fn visit_bytes<E>(self, b: &[u8]) -> Result<Blob, E> {
                Ok(Blob(b.to_vec()))
            }
            fn visit_byte_buf<E>(self, b: Vec<u8>) -> Result<Blob, E> {
                Ok(Blob(b))
            }
        }
        d.deserialize_bytes(V)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Reading {
    label: String,
    value: f64,
    tags: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
enum Kind {
    Plain,
    Scaled(f64),
    Named { who: String, rank: i64 },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Record {
    id: i64,
    count: u32,
    name: String,
    note: Option<String>,
    flag: bool,
    reading: Reading,
    history: Vec<Reading>,
    kind: Kind,
    blob: Blob,
    maybe_blob: Option<Blob>,
    pair: (u8, i16),
}

/// A finite, non-integral f64 other than −0.0. (P1 writes an integral f64 as
/// an integer, which serde then will not read back into an `f64` field: see
/// `integral_f64_fields_become_integers`.)
fn fraction() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<f64>(),
        (any::<i32>(), 1u32..40).prop_map(|(m, e)| f64::from(m) / 2f64.powi(e as i32) + 0.5),
    ]
    .prop_filter("not a P1 float", |x| Float::new(*x).is_ok())
}

fn reading() -> impl Strategy<Value = Reading> {
    (text(), fraction(), vec(text(), 0..4)).prop_map(|(label, value, tags)| Reading {
        label,
        value,
        tags,
    })
}

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![
        Just(Kind::Plain),
        fraction().prop_map(Kind::Scaled),
        (text(), any::<i64>()).prop_map(|(who, rank)| Kind::Named { who, rank }),
    ]
}

fn record() -> impl Strategy<Value = Record> {
    (
        (
            any::<i64>(),
            any::<u32>(),
            text(),
            proptest::option::of(text()),
            any::<bool>(),
        ),
        (reading(), vec(reading(), 0..4), kind()),
        (
            vec(any::<u8>(), 0..32),
            proptest::option::of(vec(any::<u8>(), 0..8)),
            any::<(u8, i16)>(),
        ),
    )
        .prop_map(
            |(
                (id, count, name, note, flag),
                (reading, history, kind),
                (blob, maybe_blob, pair),
            )| Record {
                id,
                count,
                name,
                note,
                flag,
                reading,
                history,
                kind,
                blob: Blob(blob),
                maybe_blob: maybe_blob.map(Blob),
                pair,
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// (d) A serde struct survives to_value → to_vec → Value::decode → from_value.
    #[test]
    fn serde_round_trips(r in record()) {
        let v = to_value(&r).unwrap();
        let bytes = v.to_vec();
        let back = Value::decode(&bytes).unwrap();
        prop_assert_eq!(&back, &v);
        let map = back.as_map().unwrap();
        prop_assert!(matches!(map.get("blob"), Some(Value::Bytes(b)) if *b == r.blob.0));
        prop_assert_eq!(map.get("note") == Some(&Value::Null), r.note.is_none());
        let out: Record = from_value(&back).unwrap();
        prop_assert_eq!(out, r);
    }
}

#[test]
fn serde_rejects_non_p1_floats() {
    let mut r = Reading {
        label: "x".into(),
        value: f64::NAN,
        tags: vec![],
    };
    assert_eq!(to_value(&r), Err(SerdeError::Float(FloatError::NaN)));
    r.value = f64::NEG_INFINITY;
    assert_eq!(to_value(&r), Err(SerdeError::Float(FloatError::Infinite)));
    r.value = -0.0;
    assert_eq!(
        to_value(&r),
        Err(SerdeError::Float(FloatError::NegativeZero))
    );
    assert_eq!(
        to_value(&Kind::Scaled(f64::NAN)),
        Err(SerdeError::Float(FloatError::NaN))
    );
    assert_eq!(
        to_value(&vec![1.5, f64::NAN]),
        Err(SerdeError::Float(FloatError::NaN))
    );
}

/// P1 numeric reduction applies to serde floats: an integral f64 is written
/// as an integer.
#[test]
fn integral_f64_fields_become_integers() {
    let r = Reading {
        label: "x".into(),
        value: 2.0,
        tags: vec![],
    };
    let v = to_value(&r).unwrap();
    assert_eq!(v.as_map().unwrap().get("value"), Some(&Value::Unsigned(2)));
    assert_eq!(to_value(&-3.0f64), Ok(Value::Negative(2)));
}

#[test]
fn serde_rejects_non_text_keys() {
    let mut m = std::collections::BTreeMap::new();
    m.insert(1u8, "one");
    assert_eq!(to_value(&m), Err(SerdeError::NonTextKey));
}

/// The generators are not vacuous: on a fixed seed, mutations produce both
/// accepted and rejected inputs, and the canonicity oracle of
/// `strict_rejects_nothing_canonical` fires on some of them.
#[test]
fn generators_reach_both_verdicts() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;

    let mut runner = TestRunner::deterministic();
    let strategy = mutated();
    let (mut accepted, mut rejected, mut oracle) = (0, 0, 0);
    for _ in 0..2000 {
        let bytes = strategy.new_tree(&mut runner).unwrap().current();
        if Value::decode(&bytes).is_ok() {
            accepted += 1;
        } else {
            rejected += 1;
        }
        let canonical = ciborium_decode(&bytes)
            .and_then(|c| from_ciborium(c).ok())
            .is_some_and(|v| v.to_vec() == bytes);
        oracle += usize::from(canonical);
    }
    println!("mutations: {accepted} accepted, {rejected} rejected, oracle {oracle}");
    assert!(accepted >= 100, "only {accepted} mutations accepted");
    assert!(rejected >= 100, "only {rejected} mutations rejected");
    assert!(oracle >= 100, "oracle fired {oracle} times");
    let mut depths = [0usize; 9];
    for _ in 0..500 {
        let v = value().new_tree(&mut runner).unwrap().current();
        depths[depth(&v)] += 1;
    }
    assert!(
        depths[3..].iter().sum::<usize>() > 0,
        "no nested values: {depths:?}"
    );
}
