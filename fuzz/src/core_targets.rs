//! Fuzz-target bodies over herald-core's parsers (docs/fuzzing.md).
//!
//! Shared, unchanged, by the libFuzzer binaries (through `fuzz/src/lib.rs`)
//! and by `herald-core/tests/fuzz_replay.rs` (through `#[path]`), so it may
//! only use what herald-core's tests can: herald_core, ciborium, sha2, std.
//! Every function must never panic on any input; the `assert!`s state the
//! properties a failure would break (a failed assertion is a finding).

use std::sync::OnceLock;

use herald_core::cbor::{self, Limits, Rule, Value, ValueRef, from_ciborium, to_ciborium};
use herald_core::{
    CheckOptions, EnvelopeRef, PublicKey, Reasons, Sigil, SigilForm, SigningKey, Status, check,
    check_parent,
};
use sha2::{Digest, Sha256};

/// The clock of the fuzzed checks: one hour after the tests' fixed `ts`.
pub const NOW: u64 = 1_746_432_000 + 3_600;

/// The seeds of the two keys every fuzzed check resolves (the tests' Alice and Bob).
pub const KEY_SEEDS: [[u8; 32]; 2] = [[0x11; 32], [0x22; 32]];

/// The fixed 2-key resolver of `envelope_check`.
pub fn fuzz_keys() -> &'static [PublicKey; 2] {
    static KEYS: OnceLock<[PublicKey; 2]> = OnceLock::new();
    KEYS.get_or_init(|| KEY_SEEDS.map(|seed| SigningKey::from_seed(&seed).public_key()))
}

/// Deepest nesting and largest container of an accepted value.
fn shape(v: &ValueRef<'_>) -> (usize, usize) {
    match v {
        ValueRef::Array(a) => a.iter().fold((1, a.len()), |(d, n), item| {
            let (id, inn) = shape(&item);
            (d.max(id + 1), n.max(inn))
        }),
        ValueRef::Map(m) => m.iter().fold((1, m.len()), |(d, n), (_, item)| {
            let (id, inn) = shape(&item);
            (d.max(id + 1), n.max(inn))
        }),
        _ => (0, 0),
    }
}

/// Every span an iterator hands out re-decodes, alone, to the value it came with.
fn check_spans(data: &[u8], v: &ValueRef<'_>) {
    match v {
        ValueRef::Array(a) => {
            let mut it = a.iter();
            let mut count = 0;
            let mut last_end = a.items_span().start;
            while let Some((span, item)) = it.next_spanned() {
                assert_eq!(span.start, last_end, "array items are contiguous");
                last_end = span.end;
                let alone = data.get(span).map(cbor::decode);
                assert_eq!(alone, Some(Ok(item)), "array item span re-decodes");
                check_spans(data, &item);
                count += 1;
            }
            assert_eq!(count, a.len());
            assert_eq!(last_end, a.items_span().end);
        }
        ValueRef::Map(m) => {
            let mut it = m.iter();
            let mut count = 0;
            let mut last_end = m.entries_span().start;
            while let Some(e) = it.next_entry() {
                assert_eq!(e.span.start, last_end, "map entries are contiguous");
                assert_eq!(e.span.end, e.value_span.end);
                last_end = e.span.end;
                let alone = data.get(e.value_span.clone()).map(cbor::decode);
                assert_eq!(alone, Some(Ok(e.value)), "map value span re-decodes");
                if count < 16 {
                    assert_eq!(m.get(e.key), Some(e.value), "get finds every key");
                }
                check_spans(data, &e.value);
                count += 1;
            }
            assert_eq!(count, m.len());
            assert_eq!(last_end, m.entries_span().end);
        }
        other => {
            let _ = (other.as_number(), other.type_name());
        }
    }
}

/// `cbor_decode`: the strict decoder (P1). On acceptance the owned value
/// re-encodes to exactly the input, the spans of the zero-copy views
/// re-decode, and each limit is exact (the value's own depth, largest
/// container and size pass; one less fails with that limit's rule).
pub fn cbor_decode(data: &[u8]) {
    let strict = cbor::decode(data);
    let prefix = cbor::decode_prefix(data, &Limits::DEFAULT);
    assert!(
        strict.is_err() || prefix.is_ok(),
        "decode accepted, decode_prefix did not"
    );
    match (&strict, &prefix) {
        (Ok(v), Ok((p, end))) => {
            assert_eq!(v, p);
            assert_eq!(*end, data.len());
        }
        (Err(e), Ok((_, end))) => {
            assert_eq!(
                e.rule(),
                Rule::TrailingBytes,
                "only trailing bytes split them"
            );
            assert_eq!(e.offset(), *end);
        }
        (Err(e), Err(pe)) => assert_eq!(e, pe),
        (Ok(_), Err(_)) => {}
    }
    let owned = Value::decode(data);
    assert_eq!(owned.is_ok(), strict.is_ok());
    let v = match strict {
        Ok(v) => v,
        Err(e) => {
            assert!(e.offset() <= data.len(), "error offset inside the input");
            assert_eq!(owned.err(), Some(e));
            return;
        }
    };
    let Ok(owned) = owned else { return };
    assert_eq!(Value::from(&v), owned);
    assert_eq!(
        owned.to_vec(),
        data,
        "accepted input re-encodes to itself (P1)"
    );
    check_spans(data, &v);

    let (depth, items) = shape(&v);
    let exact = Limits {
        max_depth: depth,
        max_items: items,
        max_size: data.len(),
    };
    assert_eq!(cbor::decode_with(data, &exact), Ok(v));
    let rule_with = |limits: Limits| cbor::decode_with(data, &limits).err().map(|e| e.rule());
    if depth > 0 {
        let shallower = Limits {
            max_depth: depth - 1,
            ..exact
        };
        assert_eq!(rule_with(shallower), Some(Rule::DepthExceeded));
    }
    if items > 0 {
        let fewer = Limits {
            max_items: items - 1,
            ..exact
        };
        assert_eq!(rule_with(fewer), Some(Rule::TooManyItems));
    }
    let smaller = Limits {
        max_size: data.len() - 1,
        ..exact
    };
    assert_eq!(rule_with(smaller), Some(Rule::TooLarge));
    let cut = data.get(..data.len() - 1).map(cbor::decode);
    assert_eq!(
        cut.map(|r| r.err().map(|e| e.rule())),
        Some(Some(Rule::Truncated)),
        "every proper prefix of an item is truncated"
    );
}

/// Whether a strict rejection is for a configurable limit rather than a P1 rule.
fn is_limit(rule: Rule) -> bool {
    matches!(
        rule,
        Rule::DepthExceeded | Rule::TooManyItems | Rule::TooLarge
    )
}

/// `cbor_differential`: the strict decoder against ciborium (P1).
///
/// - Whatever strict accepts, ciborium decodes (no trailing bytes) to the
///   same value (compared through `to_ciborium`).
/// - Whatever ciborium decodes to a value P1 can hold (`from_ciborium`)
///   whose P1 encoding is the input itself, strict accepts, unless a
///   configurable limit (depth 32, 65 536 items, 1 MiB) stops it.
pub fn cbor_differential(data: &[u8]) {
    let strict = cbor::decode(data);
    let mut rest = data;
    let lax = ciborium::de::from_reader::<ciborium::Value, _>(&mut rest)
        .ok()
        .filter(|_| rest.is_empty());
    if let Ok(v) = &strict {
        let expected = to_ciborium(&Value::from(v));
        assert_eq!(
            lax.as_ref(),
            Some(&expected),
            "strict accepted {data:02x?}; ciborium must decode the same value"
        );
    }
    let Some(lax) = lax else { return };
    let Ok(p1) = from_ciborium(lax) else { return };
    if p1.to_vec() != data {
        return;
    }
    match &strict {
        Ok(v) => assert_eq!(Value::from(v), p1),
        Err(e) => assert!(
            is_limit(e.rule()),
            "{data:02x?} is the P1 encoding of what ciborium read, yet strict says {e}"
        ),
    }
}

/// `envelope_check`: [`check`] with a fixed 2-key resolver and clock, and
/// [`EnvelopeRef::decode`], over arbitrary bytes. Checks that the status
/// is the P13 maximum of the reasons, that a fixed-capacity sink sees the
/// same reasons and status, that `decode` agrees with `check` on whether
/// the fields have their P3 types, that fewer keys never improve a
/// verdict, and, when an envelope decodes, that every `body(E, k)` is fed
/// as the P1 encoding of E without `id` (and a genesis's `trace`) and with
/// the first k signatures (P4).
pub fn envelope_check(data: &[u8]) {
    let keys = fuzz_keys();
    let opts = CheckOptions {
        now: Some(NOW),
        ..CheckOptions::DEFAULT
    };
    let mut reasons = Vec::new();
    let checked = check(data, keys, &opts, &mut reasons);
    let derived = reasons
        .iter()
        .map(|r| r.status())
        .max()
        .unwrap_or(Status::Valid);
    assert_eq!(checked.status, derived, "status is the P13 maximum");
    for r in &reasons {
        let _ = std::format!("{r}");
    }

    let mut fixed = Reasons::<4>::new();
    let again = check(data, keys, &opts, &mut fixed);
    assert_eq!(again.status, checked.status);
    assert_eq!(fixed.status(), checked.status);
    assert_eq!(
        fixed.as_slice(),
        reasons.get(..reasons.len().min(4)).unwrap_or(&[])
    );
    assert_eq!(fixed.dropped(), reasons.len().saturating_sub(4));

    let mut keyless = Vec::new();
    let without = check(data, &(), &opts, &mut keyless);
    assert!(without.status >= checked.status, "fewer keys never help");

    let decoded = EnvelopeRef::decode(data);
    assert_eq!(decoded.is_ok(), checked.envelope.is_some());
    if let Err(e) = &decoded {
        assert!(
            reasons.contains(&e.0),
            "decode's first error is among check's"
        );
        let _ = std::format!("{e}");
    }
    let Some(env) = checked.envelope else {
        assert_eq!(checked.status, Status::Invalid);
        return;
    };
    assert_eq!(env.as_bytes(), data);
    assert_eq!(checked.computed_id, Some(env.computed_id()));
    if checked.status != Status::Invalid {
        assert_eq!(
            env.id(),
            &env.computed_id(),
            "a verdict above invalid has its id"
        );
    }
    let _ = (
        env.from(),
        env.from_sigil(),
        env.to(),
        env.kind(),
        env.expires(),
        env.lineage_proof(),
        env.attestation("birth"),
        env.unknown_fields(),
    );
    assert_eq!(cbor::decode(env.payload_bytes()), Ok(env.payload()));
    for s in env.signatures().flatten() {
        let _ = s.registered_scope();
    }
    let _ = check_parent(&env, &env);

    // Body feeding (P4), against an owned re-construction of body(E, k).
    let wire = Value::decode(data);
    assert!(
        matches!(wire, Ok(Value::Map(_))),
        "a decoded envelope is a map"
    );
    let Ok(Value::Map(wire)) = wire else { return };
    let all = wire.get("signatures").cloned();
    assert!(
        matches!(all, Some(Value::Array(_))),
        "it has a signatures array"
    );
    let Some(Value::Array(all)) = all else { return };
    let n = env.signature_count();
    assert_eq!(all.len(), n);
    assert!(env.body(n + 1).is_none());
    for k in (0..=n).take(8) {
        let body = env.body(k);
        assert!(body.is_some(), "body(E, {k}) exists for k <= {n}");
        let Some(body) = body else { return };
        let mut fed = Vec::new();
        body.feed(&mut |part| fed.extend_from_slice(part));
        assert_eq!(fed, body.to_vec());
        assert_eq!(fed.len(), body.len());
        let digest: [u8; 32] = Sha256::digest(&fed).into();
        assert_eq!(digest, body.sha256());
        if k == 0 {
            assert_eq!(digest, env.computed_id());
        }
        let mut expected = wire.clone();
        expected.remove("id");
        if env.is_genesis() {
            expected.remove("trace");
        }
        expected.insert(
            "signatures",
            Value::Array(all.iter().take(k).cloned().collect()),
        );
        assert_eq!(
            Value::decode(&fed),
            Ok(Value::Map(expected)),
            "body(E, {k}) is canonical and is E without id, with {k} signatures"
        );
    }
}

/// `sigil_parse`: [`Sigil::parse`] over the input as (lossy) UTF-8. An
/// accepted string is the sigil's only spelling: `Display` gives it back
/// byte for byte, and it re-parses to the same sigil (P2). Every form the
/// sigil converts to round-trips too.
pub fn sigil_parse(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    for s in [text.as_ref(), text.trim()] {
        match Sigil::parse(s) {
            Ok(sigil) => {
                let shown = sigil.to_string();
                assert_eq!(shown, s, "a sigil has exactly one spelling (P2)");
                assert_eq!(Sigil::parse(&shown), Ok(sigil));
                assert_eq!(s.parse::<Sigil>(), Ok(sigil));
                match sigil.form() {
                    Some(form) => {
                        assert!(!sigil.is_reserved());
                        assert_eq!(sigil.hash_prefix().len(), form.hash_len());
                        assert_eq!(s.len(), form.prefix().len() + form.chars());
                        assert!(sigil.same_key_as(&sigil));
                    }
                    None => {
                        assert!(sigil.is_reserved());
                        assert!(sigil.hash_prefix().is_empty());
                        assert!(!sigil.same_key_as(&sigil));
                    }
                }
                for form in SigilForm::ALL {
                    if let Some(other) = sigil.to_form(form) {
                        assert_eq!(other.form(), Some(form));
                        assert!(other.same_key_as(&sigil));
                        assert_eq!(Sigil::parse(&other.to_string()), Ok(other));
                    }
                }
                assert!(!sigil.names_key(&[0u8; 32]) || !sigil.is_reserved());
            }
            Err(e) => {
                let _ = e.to_string();
            }
        }
    }
}
