//! P1 against the cbor-wg RFC 8949 test vectors (vectors/external/cbor/,
//! README section 1): good.cbor, bad.cbor and the Appendix A files.
//!
//! The verdict for each vector is derived, not listed by index, from two
//! independent sources that must agree:
//! - a reference walker over the `encoded` bytes, written here from the P1
//!   text, which names the first rule broken (offset + rule);
//! - a reference canonical encoder over the vector's `decoded` value (as
//!   ciborium reads it): a vector is inside P1 exactly when `decoded` can be
//!   held by P1 and its canonical encoding is the `encoded` bytes.
//!
//! The strict decoder must then agree with the walker, rule for rule.
//! `EXPECTED` below pins a commented selection of verdicts by description,
//! so that a walker bug shared with the decoder would still be caught.

// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![allow(missing_docs)]

use std::collections::{BTreeMap, HashMap};

use herald_core::cbor::{self, Limits, Rule, Value, from_ciborium, to_ciborium};
use serde::Deserialize;

const GOOD: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../vectors/external/cbor/cbor-wg-rfc8949/good.cbor"
));
const BAD: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../vectors/external/cbor/cbor-wg-rfc8949/bad.cbor"
));

macro_rules! appendix {
    ($name:literal) => {
        (
            $name,
            include_bytes!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../vectors/external/cbor/cbor-wg-rfc8949-appendixA/",
                $name,
                ".cbor"
            ))
            .as_slice(),
        )
    };
}

/// Every vector file with the number of tests README section 1 gives for it.
fn files() -> Vec<(&'static str, &'static [u8], usize)> {
    let appendix = [
        (appendix!("mt0"), 11),
        (appendix!("mt1"), 5),
        (appendix!("mt2"), 2),
        (appendix!("mt3"), 7),
        (appendix!("mt4"), 4),
        (appendix!("mt5"), 5),
        (appendix!("mt6"), 8),
        (appendix!("mt7-float"), 22),
        (appendix!("mt7-simple"), 6),
        (appendix!("streaming"), 11),
    ];
    let mut all = vec![("good", GOOD, 88), ("bad", BAD, 47)];
    all.extend(
        appendix
            .into_iter()
            .map(|((name, bytes), n)| (name, bytes, n)),
    );
    all
}

/// README: 88 good + 47 bad + 81 Appendix A tests.
const TOTAL_VECTORS: usize = 88 + 47 + 81;

/// Limits high enough for the 500-deep vectors (good.cbor).
const RAISED: Limits = Limits {
    max_depth: 1024,
    ..Limits::DEFAULT
};

// ---------------------------------------------------------------------------
// Reading the vector files (non-canonical CBOR, through ciborium).

#[derive(Deserialize)]
struct VectorFile {
    title: String,
    #[serde(default)]
    fail: bool,
    tests: Vec<VectorTest>,
}

struct VectorTest {
    description: String,
    encoded: Vec<u8>,
    decoded: Decoded,
    roundtrip: bool,
    fail: bool,
}

/// A test's `decoded` field. ciborium has no value for simple(n) other than
/// false/true/null/undefined (it refuses them, and reads `undefined` as
/// null); a refused value is kept as `Unreadable` so the rest of the file
/// still loads.
enum Decoded {
    Absent,
    Value(ciborium::Value),
    Unreadable(String),
}

impl<'de> Deserialize<'de> for VectorTest {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(TestVisitor)
    }
}

struct TestVisitor;

impl<'de> serde::de::Visitor<'de> for TestVisitor {
    type Value = VectorTest;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a cbor-wg test map")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<VectorTest, A::Error> {
        let mut t = VectorTest {
            description: String::new(),
            encoded: Vec::new(),
            decoded: Decoded::Absent,
            roundtrip: true,
            fail: false,
        };
        let mut has_encoded = false;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "description" => t.description = map.next_value()?,
                "encoded" => {
                    let ciborium::Value::Bytes(b) = map.next_value()? else {
                        return Err(serde::de::Error::custom("encoded is not a byte string"));
                    };
                    t.encoded = b;
                    has_encoded = true;
                }
                "decoded" => {
                    t.decoded = match map.next_value::<ciborium::Value>() {
                        Ok(v) => Decoded::Value(v),
                        Err(e) => {
                            // ciborium put the refused simple value's head back;
                            // reading it as a bool consumes it (and fails).
                            map.next_value::<ConsumeHead>()?;
                            Decoded::Unreadable(e.to_string())
                        }
                    }
                }
                "roundtrip" => t.roundtrip = map.next_value()?,
                "fail" => t.fail = map.next_value()?,
                _ => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
        }
        if !has_encoded {
            return Err(serde::de::Error::missing_field("encoded"));
        }
        Ok(t)
    }
}

/// Consumes one head, whatever it is, by asking for a bool.
struct ConsumeHead;

impl<'de> Deserialize<'de> for ConsumeHead {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let _refused = bool::deserialize(d);
        Ok(ConsumeHead)
    }
}

fn load(bytes: &[u8]) -> VectorFile {
    // good.cbor nests about 510 deep (README caveat).
    ciborium::de::from_reader_with_recursion_limit(bytes, 4096).unwrap()
}

// ---------------------------------------------------------------------------
// Reference walker over encoded bytes: the first P1 rule broken, in byte order.

type Verdict = Result<(), (usize, Rule)>;

/// Every finite non-zero binary16 value, by the bits of its f64 widening,
/// computed from the IEEE 754 definition.
fn f16_table() -> HashMap<u64, u16> {
    let mut table = HashMap::new();
    for h in 0u16..=u16::MAX {
        let v = ref_f16_to_f64(h);
        if v.is_finite() && v != 0.0 {
            table.insert(v.to_bits(), h);
        }
    }
    table
}

fn ref_f16_to_f64(h: u16) -> f64 {
    let sign = if h >> 15 == 1 { -1.0 } else { 1.0 };
    let e = i32::from((h >> 10) & 0x1f);
    let m = f64::from(h & 0x3ff);
    match e {
        0 => sign * (m / 1024.0) * 2f64.powi(-14),
        31 if m == 0.0 => sign * f64::INFINITY,
        31 => f64::NAN,
        _ => sign * (1.0 + m / 1024.0) * 2f64.powi(e - 15),
    }
}

const TWO_64: f64 = 18_446_744_073_709_551_616.0;

fn ref_integral(v: f64) -> bool {
    v.fract() == 0.0 && (-TWO_64..TWO_64).contains(&v)
}

/// Width in bytes of the shortest float that holds `v` exactly.
fn ref_width(v: f64, f16: &HashMap<u64, u16>) -> usize {
    if f16.contains_key(&v.to_bits()) {
        2
    } else if f64::from(v as f32) == v {
        4
    } else {
        8
    }
}

struct Walker<'a> {
    b: &'a [u8],
    pos: usize,
    limits: Limits,
    f16: &'a HashMap<u64, u16>,
}

impl<'a> Walker<'a> {
    fn walk(b: &'a [u8], limits: Limits, f16: &'a HashMap<u64, u16>) -> Verdict {
        let mut w = Walker {
            b,
            pos: 0,
            limits,
            f16,
        };
        w.item(0)?;
        if w.pos != b.len() {
            return Err((w.pos, Rule::TrailingBytes));
        }
        Ok(())
    }

    fn byte(&mut self) -> Result<u8, (usize, Rule)> {
        let x = *self
            .b
            .get(self.pos)
            .ok_or((self.b.len(), Rule::Truncated))?;
        self.pos += 1;
        Ok(x)
    }

    fn uint(&mut self, n: usize) -> Result<u64, (usize, Rule)> {
        let mut v = 0u64;
        for _ in 0..n {
            v = (v << 8) | u64::from(self.byte()?);
        }
        Ok(v)
    }

    fn left(&self) -> u128 {
        (self.b.len() - self.pos) as u128
    }

    /// The argument of a head of major type 0–5, in shortest form.
    fn arg(&mut self, start: usize, ai: u8) -> Result<u64, (usize, Rule)> {
        let (n, min) = match ai {
            0..=23 => return Ok(u64::from(ai)),
            24 => (1, 24),
            25 => (2, 1 << 8),
            26 => (4, 1 << 16),
            27 => (8, 1 << 32),
            28..=30 => return Err((start, Rule::ReservedAdditionalInfo)),
            _ => return Err((start, Rule::IndefiniteLength)),
        };
        let v = self.uint(n)?;
        if v < min {
            return Err((start, Rule::NonShortestHead));
        }
        Ok(v)
    }

    fn body(&mut self, start: usize, len: u64) -> Result<&'a [u8], (usize, Rule)> {
        if u128::from(len) > self.left() {
            return Err((start, Rule::Truncated));
        }
        let body = &self.b[self.pos..self.pos + len as usize];
        self.pos += len as usize;
        Ok(body)
    }

    fn text(&mut self, start: usize, len: u64) -> Verdict {
        let body_start = self.pos;
        let body = self.body(start, len)?;
        std::str::from_utf8(body)
            .map(drop)
            .map_err(|e| (body_start + e.valid_up_to(), Rule::InvalidUtf8))
    }

    fn container(&self, start: usize, count: u64, min_bytes: u128, depth: usize) -> Verdict {
        if depth + 1 > self.limits.max_depth {
            return Err((start, Rule::DepthExceeded));
        }
        if count > self.limits.max_items as u64 {
            return Err((start, Rule::TooManyItems));
        }
        if u128::from(count) * min_bytes > self.left() {
            return Err((start, Rule::Truncated));
        }
        Ok(())
    }

    fn item(&mut self, depth: usize) -> Verdict {
        let start = self.pos;
        let initial = self.byte()?;
        let (major, ai) = (initial >> 5, initial & 0x1f);
        match major {
            6 => Err((start, Rule::Tag)),
            7 => self.simple(start, ai),
            _ => {
                let arg = self.arg(start, ai)?;
                match major {
                    0 | 1 => Ok(()),
                    2 => self.body(start, arg).map(drop),
                    3 => self.text(start, arg),
                    4 => {
                        self.container(start, arg, 1, depth)?;
                        (0..arg).try_for_each(|_| self.item(depth + 1))
                    }
                    _ => {
                        self.container(start, arg, 2, depth)?;
                        let mut prev: Option<&[u8]> = None;
                        for _ in 0..arg {
                            let key_start = self.pos;
                            let key_initial = self.byte()?;
                            match key_initial >> 5 {
                                6 => return Err((key_start, Rule::Tag)),
                                3 => {}
                                _ => return Err((key_start, Rule::NonTextKey)),
                            }
                            let len = self.arg(key_start, key_initial & 0x1f)?;
                            self.text(key_start, len)?;
                            // RFC 8949 §4.2.1: bytewise order of the encoded keys.
                            let key = &self.b[key_start..self.pos];
                            match prev.map(|p| p.cmp(key)) {
                                Some(std::cmp::Ordering::Equal) => {
                                    return Err((key_start, Rule::DuplicateKey));
                                }
                                Some(std::cmp::Ordering::Greater) => {
                                    return Err((key_start, Rule::UnsortedKeys));
                                }
                                _ => {}
                            }
                            prev = Some(key);
                            self.item(depth + 1)?;
                        }
                        Ok(())
                    }
                }
            }
        }
    }

    fn simple(&mut self, start: usize, ai: u8) -> Verdict {
        let (v, width) = match ai {
            20..=22 => return Ok(()),
            24 => {
                self.byte()?;
                return Err((start, Rule::DisallowedSimple));
            }
            25 => (ref_f16_to_f64(self.uint(2)? as u16), 2),
            26 => (f64::from(f32::from_bits(self.uint(4)? as u32)), 4),
            27 => (f64::from_bits(self.uint(8)?), 8),
            28..=30 => return Err((start, Rule::ReservedAdditionalInfo)),
            31 => return Err((start, Rule::UnexpectedBreak)),
            _ => return Err((start, Rule::DisallowedSimple)),
        };
        if !v.is_finite() {
            Err((start, Rule::NonFiniteFloat))
        } else if v == 0.0 && v.is_sign_negative() {
            Err((start, Rule::NegativeZero))
        } else if ref_integral(v) {
            Err((start, Rule::IntegralFloat))
        } else if ref_width(v, self.f16) != width {
            Err((start, Rule::NonShortestFloat))
        } else {
            Ok(())
        }
    }
}

// ---------------------------------------------------------------------------
// Reference canonical encoder over ciborium values (the `decoded` side).

fn ref_head(out: &mut Vec<u8>, major: u8, arg: u64) {
    let mt = major << 5;
    match arg {
        0..=23 => out.push(mt | arg as u8),
        24..=0xff => out.extend([mt | 24, arg as u8]),
        0x100..=0xffff => {
            out.push(mt | 25);
            out.extend((arg as u16).to_be_bytes());
        }
        0x1_0000..=0xffff_ffff => {
            out.push(mt | 26);
            out.extend((arg as u32).to_be_bytes());
        }
        _ => {
            out.push(mt | 27);
            out.extend(arg.to_be_bytes());
        }
    }
}

fn ref_int(out: &mut Vec<u8>, i: i128) -> Option<()> {
    if i >= 0 {
        ref_head(out, 0, u64::try_from(i).ok()?);
    } else {
        ref_head(out, 1, u64::try_from(-1 - i).ok()?);
    }
    Some(())
}

/// The P1 encoding of `v`, or `None` when P1 cannot hold it.
fn ref_encode(v: &ciborium::Value, f16: &HashMap<u64, u16>, out: &mut Vec<u8>) -> Option<()> {
    use ciborium::Value as C;
    match v {
        C::Integer(i) => ref_int(out, i128::from(*i))?,
        C::Bytes(b) => {
            ref_head(out, 2, b.len() as u64);
            out.extend(b);
        }
        C::Text(s) => {
            ref_head(out, 3, s.len() as u64);
            out.extend(s.as_bytes());
        }
        C::Array(items) => {
            ref_head(out, 4, items.len() as u64);
            for item in items {
                ref_encode(item, f16, out)?;
            }
        }
        C::Map(entries) => {
            let mut sorted = BTreeMap::new();
            for (k, v) in entries {
                let C::Text(_) = k else { return None };
                let mut key = Vec::new();
                ref_encode(k, f16, &mut key)?;
                let mut value = Vec::new();
                ref_encode(v, f16, &mut value)?;
                if sorted.insert(key, value).is_some() {
                    return None;
                }
            }
            ref_head(out, 5, sorted.len() as u64);
            for (k, v) in sorted {
                out.extend(k);
                out.extend(v);
            }
        }
        C::Float(x) => {
            let x = *x;
            if !x.is_finite() || (x == 0.0 && x.is_sign_negative()) {
                return None;
            }
            if ref_integral(x) {
                ref_int(out, x as i128)?;
            } else {
                match ref_width(x, f16) {
                    2 => {
                        out.push(0xf9);
                        out.extend(f16[&x.to_bits()].to_be_bytes());
                    }
                    4 => {
                        out.push(0xfa);
                        out.extend((x as f32).to_bits().to_be_bytes());
                    }
                    _ => {
                        out.push(0xfb);
                        out.extend(x.to_bits().to_be_bytes());
                    }
                }
            }
        }
        C::Bool(b) => out.push(if *b { 0xf5 } else { 0xf4 }),
        C::Null => out.push(0xf6),
        _ => return None, // tags
    }
    Some(())
}

// ---------------------------------------------------------------------------
// Pinned verdicts (default limits), keyed by (file, description). `None` means
// accepted. Each must match exactly one vector.

const EXPECTED: &[(&str, &str, Option<Rule>)] = &[
    // Integers in a wider head than needed.
    ("good", "u8: non-preferred 0", Some(Rule::NonShortestHead)),
    (
        "good",
        "s64: -65537, not preferred",
        Some(Rule::NonShortestHead),
    ),
    ("good", "u64: MAX_SAFE_INTEGER", None),
    ("mt1", "mt1 minimum", None),
    ("mt0", "mt0 largest", None),
    // Numeric reduction: integral floats in −2^64 … 2^64−1 must be integers,
    // including 0.0 and floats the JS-minded vectors mark `avoidInts`.
    ("good", "MAX_SAFE_INTEGER + 1", Some(Rule::IntegralFloat)),
    ("good", "f16: Largest odd number", Some(Rule::IntegralFloat)),
    ("good", "f32: one", Some(Rule::IntegralFloat)),
    ("good", "f32: 0", Some(Rule::IntegralFloat)),
    ("mt7-float", "Zero", Some(Rule::IntegralFloat)),
    ("mt7-float", "100000", Some(Rule::IntegralFloat)),
    // Integral but beyond 2^64: stays a float, in its shortest width.
    ("good", "f32: Min", None),
    ("good", "f64: Max", None),
    ("mt7-float", "Largest f32", None),
    ("mt7-float", "1.5 collapses to an f16", None),
    ("mt7-float", "1.1 does not fit into a smaller float", None),
    // README's JS-only `roundtrip: false` exceptions: the two subnormals are
    // canonical; the -0 key is outside P1 twice over (non-text key, and -0.0).
    ("good", "f16: Largest subnormal", None),
    ("good", "f16: Largest subnormal, negative", None),
    ("good", "Map: -0 key", Some(Rule::NonTextKey)),
    // −0.0, NaN and infinities in any width.
    ("good", "f32: -0", Some(Rule::NegativeZero)),
    ("mt7-float", "Negative zero", Some(Rule::NegativeZero)),
    ("mt7-float", "Trivial NaN", Some(Rule::NonFiniteFloat)),
    ("mt7-float", "Negative infinity", Some(Rule::NonFiniteFloat)),
    (
        "mt7-float",
        "Infinity coded as f32 instead of f16",
        Some(Rule::NonFiniteFloat),
    ),
    (
        "mt7-float",
        "Trivial NaN coded as f64 instead of f16",
        Some(Rule::NonFiniteFloat),
    ),
    // Tags, including bignums and dates.
    ("good", "bigint: Positive", Some(Rule::Tag)),
    ("good", "Date: -1 epoch", Some(Rule::Tag)),
    ("mt6", "Bigint", Some(Rule::Tag)),
    ("mt6", "URL", Some(Rule::Tag)),
    (
        "bad",
        "date: unexpected object instead of offset",
        Some(Rule::Tag),
    ),
    (
        "bad",
        "date: unexpected object instead of string",
        Some(Rule::Tag),
    ),
    // Simple values other than false/true/null.
    ("mt7-simple", "undefined", Some(Rule::DisallowedSimple)),
    (
        "mt7-simple",
        "Unknown 0-byte simple value",
        Some(Rule::DisallowedSimple),
    ),
    (
        "mt7-simple",
        "Unknown 1-byte simple value",
        Some(Rule::DisallowedSimple),
    ),
    ("mt7-simple", "null", None),
    // Maps: keys must be text, sorted.
    ("mt5", "Map with integer keys", Some(Rule::NonTextKey)),
    ("good", "Map: interesting keys", Some(Rule::NonTextKey)),
    ("good", "map: deeply-nested key", Some(Rule::NonTextKey)),
    ("good", "map: deeply-nested value", Some(Rule::NonTextKey)),
    ("mt5", "Map with more keys", None),
    ("good", "JS: __proto__ should be escaped (security)", None),
    // Depth: 500 nested arrays exceed the default 32 (accepted when raised).
    ("good", "array: deeply-nested", Some(Rule::DepthExceeded)),
    (
        "bad",
        "array: deeply-nested missing item",
        Some(Rule::DepthExceeded),
    ),
    // Indefinite lengths.
    ("streaming", "Streamed map", Some(Rule::IndefiniteLength)),
    (
        "streaming",
        "Non-Streamed array, nested streamed then non-streamed array",
        Some(Rule::IndefiniteLength),
    ),
    (
        "bad",
        "bytes: Indeterminate bytestring with nothing",
        Some(Rule::IndefiniteLength),
    ),
    // Malformed input.
    (
        "bad",
        "Missing the next byte for mt0 ai 24",
        Some(Rule::Truncated),
    ),
    ("bad", "array: unexpected BREAK", Some(Rule::Truncated)), // 0x91 claims 17 items
    ("bad", "Invalid AI: 29", Some(Rule::ReservedAdditionalInfo)),
    (
        "bad",
        "Invalid streaming AI: 30",
        Some(Rule::ReservedAdditionalInfo),
    ),
    ("bad", "unexpected BREAK", Some(Rule::UnexpectedBreak)),
    ("bad", "utf8: invalid utf8", Some(Rule::InvalidUtf8)),
    ("bad", "map: invalid key", Some(Rule::NonTextKey)),
    // UTF-8 edge cases that are valid.
    ("good", "string: BOM", None),
    ("good", "string: zalgo, length 1384", None),
    ("mt3", "String with UTF-16 Unicode escapes", None),
];

/// The outcome histogram (default limits) over all 216 vectors: a regression
/// guard on the derived verdicts as a whole.
const EXPECTED_TALLY: &[(&str, usize)] = &[
    ("accepted", 98),
    ("depth_exceeded", 2),
    ("disallowed_simple", 3),
    ("indefinite_length", 24),
    ("integral_float", 15),
    ("invalid_utf8", 1),
    ("negative_zero", 2),
    ("non_finite_float", 9),
    ("non_shortest_head", 12),
    ("non_text_key", 7),
    ("reserved_additional_info", 8),
    ("tag", 15),
    ("truncated", 19),
    ("unexpected_break", 1),
];

fn verdict_of(r: Result<cbor::ValueRef<'_>, cbor::DecodeError>) -> Verdict {
    r.map(drop).map_err(|e| (e.offset(), e.rule()))
}

fn name(v: &Verdict) -> &'static str {
    match v {
        Ok(()) => "accepted",
        Err((_, rule)) => rule.name(),
    }
}

/// The decoder agrees with the walker: same rule; same offset except for
/// `Truncated`, whose offset only has to lie within the input.
fn assert_agrees(label: &str, input: &[u8], decoder: Verdict, walker: Verdict) {
    match (decoder, walker) {
        (Ok(()), Ok(())) => {}
        (Err((off, rule)), Err((woff, wrule))) => {
            assert_eq!(rule.name(), wrule.name(), "{label}: rule");
            assert!(off <= input.len(), "{label}: offset {off} beyond input");
            if rule == Rule::Truncated {
                return;
            }
            assert!(off < input.len(), "{label}: offset {off} not inside input");
            assert_eq!(off, woff, "{label}: offset of {}", rule.name());
        }
        (d, w) => panic!("{label}: decoder {d:?}, walker {w:?}"),
    }
}

fn check_accepted(label: &str, encoded: &[u8], limits: &Limits, decoded: &Decoded) {
    let v = Value::decode_with(encoded, limits).unwrap();
    assert_eq!(v.to_vec(), encoded, "{label}: re-encoding");
    if let Decoded::Value(d) = decoded {
        assert_eq!(
            from_ciborium(d.clone()).as_ref(),
            Ok(&v),
            "{label}: decoded value"
        );
    }
    // ciborium reads the same bytes to the same value.
    let theirs: ciborium::Value =
        ciborium::de::from_reader_with_recursion_limit(encoded, 4096).unwrap();
    assert_eq!(theirs, to_ciborium(&v), "{label}: ciborium");
}

#[test]
fn cbor_wg_vectors() {
    // good.cbor nests ~510 deep and the reference walkers recurse per level:
    // give them a stack that does not depend on the build profile.
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(cbor_wg_vectors_body)
        .unwrap()
        .join()
        .unwrap();
}

fn cbor_wg_vectors_body() {
    let f16 = f16_table();
    let mut seen = 0;
    let mut tally: BTreeMap<&str, usize> = BTreeMap::new();
    let mut per_file: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    let mut pinned_hits = vec![0usize; EXPECTED.len()];
    let mut canonical_no_roundtrip = Vec::new();
    let mut depth_only = Vec::new();

    for (file, bytes, expected_count) in files() {
        let vf = load(bytes);
        assert!(!vf.title.is_empty());
        assert_eq!(vf.tests.len(), expected_count, "{file}: number of tests");
        assert_eq!(vf.fail, file == "bad", "{file}: file-level fail");
        for t in &vf.tests {
            seen += 1;
            let label = format!("{file}: {:?}", t.description);
            let encoded = &t.encoded;
            assert!(encoded.len() < Limits::DEFAULT.max_size);

            let walk_default = Walker::walk(encoded, Limits::DEFAULT, &f16);
            let walk_raised = Walker::walk(encoded, RAISED, &f16);

            // The two reference verdicts agree (depth aside, the walker with
            // raised limits says "inside P1" exactly when `decoded` encodes
            // canonically to `encoded`).
            match &t.decoded {
                Decoded::Value(d) => {
                    let mut mine = Vec::new();
                    let inside = ref_encode(d, &f16, &mut mine).is_some() && mine == *encoded;
                    assert_eq!(
                        walk_raised.is_ok(),
                        inside,
                        "{label}: walker {walk_raised:?} vs decoded"
                    );
                }
                Decoded::Unreadable(why) => {
                    // Only simple(n) values, which P1 forbids.
                    assert_eq!(file, "mt7-simple", "{label}: {why}");
                    assert!(walk_raised.is_err(), "{label}");
                }
                Decoded::Absent => assert!(vf.fail || t.fail, "{label}: no decoded value"),
            }
            if vf.fail || t.fail {
                assert!(
                    walk_default.is_err() && walk_raised.is_err(),
                    "{label}: must fail"
                );
            }
            if walk_raised.is_ok() && !t.roundtrip {
                canonical_no_roundtrip.push(t.description.clone());
            }
            if walk_raised.is_ok() && walk_default.is_err() {
                depth_only.push(t.description.clone());
            }

            // The strict decoder agrees with the walker under both limits.
            let got_default = verdict_of(cbor::decode(encoded));
            assert_agrees(&label, encoded, got_default, walk_default);
            let got_raised = verdict_of(cbor::decode_with(encoded, &RAISED));
            assert_agrees(&label, encoded, got_raised, walk_raised);
            // `Value::decode` gives the same verdict as the borrowed decoder.
            assert_eq!(
                Value::decode(encoded).err(),
                cbor::decode(encoded).err(),
                "{label}"
            );

            if walk_default.is_ok() {
                check_accepted(&label, encoded, &Limits::DEFAULT, &t.decoded);
            }
            if walk_raised.is_ok() {
                check_accepted(&label, encoded, &RAISED, &t.decoded);
            }

            for (i, (f, desc, rule)) in EXPECTED.iter().enumerate() {
                if *f == file && *desc == t.description {
                    pinned_hits[i] += 1;
                    assert_eq!(
                        got_default.map_err(|(_, r)| r.name()),
                        rule.map_or(Ok(()), |r| Err(r.name())),
                        "{label}: pinned verdict"
                    );
                }
            }
            *tally.entry(name(&got_default)).or_default() += 1;
            *per_file.entry((file, name(&got_default))).or_default() += 1;
        }
    }

    assert_eq!(seen, TOTAL_VECTORS);
    for (i, hits) in pinned_hits.iter().enumerate() {
        assert_eq!(
            *hits, 1,
            "pinned entry {:?} matched {hits} vectors",
            EXPECTED[i]
        );
    }
    // README: the only canonical `roundtrip: false` vectors are the two f16
    // subnormals (the third JS exception, the -0 key, is outside P1).
    canonical_no_roundtrip.sort();
    assert_eq!(
        canonical_no_roundtrip,
        ["f16: Largest subnormal", "f16: Largest subnormal, negative"]
    );
    // Only the 500-deep array is canonical yet deeper than the default limit.
    assert_eq!(depth_only, ["array: deeply-nested"]);

    println!("verdicts (default limits): {tally:?}");
    println!("per file: {per_file:?}");
    let expected: BTreeMap<&str, usize> = EXPECTED_TALLY.iter().copied().collect();
    assert_eq!(tally, expected);
}

/// README's three JS `roundtrip: false` exceptions, by their bytes.
#[test]
fn readme_roundtrip_exceptions() {
    for hex in ["f903ff", "f983ff"] {
        let bytes = hex::decode(hex).unwrap();
        let v = Value::decode(&bytes).unwrap();
        assert_eq!(v.to_vec(), bytes);
        let Value::Float(x) = v else {
            panic!("{hex}: not a float")
        };
        assert_eq!(x.get().abs(), 1023.0 * 2f64.powi(-24));
    }
    // {-0.0: []}: the key is not text, and −0.0 alone is also outside P1.
    let e = cbor::decode(&hex::decode("a1f9800080").unwrap()).unwrap_err();
    assert_eq!((e.offset(), e.rule()), (1, Rule::NonTextKey));
    let e = cbor::decode(&hex::decode("f98000").unwrap()).unwrap_err();
    assert_eq!((e.offset(), e.rule()), (0, Rule::NegativeZero));
}

/// The 47 bad vectors are all rejected (with the default and raised limits),
/// the last two being tags.
#[test]
fn all_bad_vectors_rejected() {
    let vf = load(BAD);
    assert!(vf.fail);
    assert_eq!(vf.tests.len(), 47);
    for t in &vf.tests {
        let encoded = &t.encoded;
        for limits in [Limits::DEFAULT, RAISED] {
            let e = cbor::decode_with(encoded, &limits).unwrap_err();
            assert!(e.offset() <= encoded.len(), "{}", t.description);
        }
    }
    let last: Vec<String> = vf.tests[45..]
        .iter()
        .map(|t| hex::encode(&t.encoded))
        .collect();
    assert_eq!(last, ["c1a1616100", "c0a1616100"]);
    for hex in last {
        let e = cbor::decode(&hex::decode(hex).unwrap()).unwrap_err();
        assert_eq!((e.offset(), e.rule()), (0, Rule::Tag));
    }
}
