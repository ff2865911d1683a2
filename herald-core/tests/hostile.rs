//! Hostile input against herald-core (docs/fuzzing.md, "Hostile input"):
//! claimed lengths far beyond the input, deep nesting, oversized maps and
//! envelopes. Each is rejected with the right P1 rule, quickly, and without
//! allocating: a counting global allocator (this file only) measures the
//! bytes allocated by the calling thread during each call.
//!
//! Run with `-- --nocapture` to see the numbers reported in docs/fuzzing.md.

// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod support;

use std::time::Duration;

use herald_testkit::alloc::{Counting, Usage, measure};

use herald_core::cbor::{self, Limits, Rule, Value};
use herald_core::{
    CheckOptions, Detail, EnvelopeBuilder, EnvelopeRef, ReasonCode, Reasons, SigilForm, Status,
    check,
};
use support::{Raw, TS, TestRng, alice, bob, keyring, sig_map};

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The decode error `check` reported, with a fixed-capacity (allocation-free) sink.
fn check_rule(bytes: &[u8]) -> (Option<(usize, Rule)>, Status, Usage) {
    let mut sink = Reasons::<8>::new();
    let keys = keyring();
    let (checked, usage) = measure(|| check(bytes, &keys, &CheckOptions::DEFAULT, &mut sink));
    let rule = sink.as_slice().iter().find_map(|r| match r.detail {
        Detail::Decode(e) if r.code == ReasonCode::Malformed => Some((e.offset(), e.rule())),
        _ => None,
    });
    (rule, checked.status, usage)
}

const QUICK: Duration = Duration::from_millis(250);

// ---- claimed lengths --------------------------------------------------------

#[test]
fn a_nine_byte_header_claiming_2_pow_63_bytes() {
    // Byte string, text, array and map heads each claiming 2^63.
    let cases: [(u8, Rule); 4] = [
        (0x5b, Rule::Truncated),
        (0x7b, Rule::Truncated),
        (0x9b, Rule::TooManyItems),
        (0xbb, Rule::TooManyItems),
    ];
    for (initial, rule) in cases {
        let mut input = [0u8; 9];
        input[0] = initial;
        input[1] = 0x80;
        let (r, u) = measure(|| cbor::decode(&input));
        u.report(&format!("decode {input:02x?}"), input.len());
        let e = r.unwrap_err();
        assert_eq!((e.offset(), e.rule()), (0, rule));
        assert_eq!(u.allocated, 0, "decode never allocates");
        assert!(u.time < QUICK);

        let (r, u) = measure(|| Value::decode(&input));
        assert_eq!(r.unwrap_err().rule(), rule);
        assert_eq!(u.allocated, 0, "a rejected owned decode allocates nothing");

        let (r, u) = measure(|| EnvelopeRef::decode(&input).map(|_| ()));
        assert!(r.is_err());
        assert_eq!(u.allocated, 0);

        let (found, status, u) = check_rule(&input);
        assert_eq!(found, Some((0, rule)));
        assert_eq!(status, Status::Invalid);
        assert_eq!(u.allocated, 0);
    }
}

#[test]
fn a_huge_claim_inside_an_envelope_is_truncated_there() {
    // A real envelope whose payload head is rewritten to claim 2^63 bytes.
    let env = EnvelopeBuilder::genesis(TS)
        .payload(Value::Bytes(vec![7; 300]))
        .sign_with_rng(&alice(), &mut TestRng::new(1))
        .unwrap();
    let mut bytes = env.as_bytes().to_vec();
    let head = [0x59, 0x01, 0x2c]; // bstr, 2-byte length 300
    let at = bytes.windows(3).position(|w| w == head).unwrap();
    bytes.splice(at..at + 3, [0x5b, 0x80, 0, 0, 0, 0, 0, 0, 0]);
    let (found, status, u) = check_rule(&bytes);
    u.report("envelope with a 2^63 payload claim", bytes.len());
    assert_eq!(found, Some((at, Rule::Truncated)));
    assert_eq!(status, Status::Invalid);
    assert_eq!(u.allocated, 0);
    assert!(u.time < QUICK);
}

#[test]
fn counts_are_bounded_by_the_bytes_left() {
    // An array of 65 536 (allowed by the item limit) in a 5-byte input:
    // refused before any item is read.
    let input = [0x9a, 0x00, 0x01, 0x00, 0x00];
    let (r, u) = measure(|| cbor::decode(&input));
    assert_eq!(r.unwrap_err().rule(), Rule::Truncated);
    assert_eq!(u.allocated, 0);
    // A map of 65 536 claims two bytes per entry: 131 072 bytes at least.
    let mut input = vec![0xba, 0x00, 0x01, 0x00, 0x00];
    input.resize(5 + 131_071, 0x60);
    let (r, u) = measure(|| cbor::decode(&input));
    let e = r.unwrap_err();
    assert_eq!((e.offset(), e.rule()), (0, Rule::Truncated));
    assert_eq!(u.allocated, 0);
    assert!(u.time < QUICK, "{:?}", u.time);
}

// ---- nesting ----------------------------------------------------------------

#[test]
fn ten_thousand_deep_nesting() {
    let mut arrays = vec![0x81u8; 10_000];
    arrays.push(0x00);
    let mut maps = Vec::new();
    for _ in 0..10_000 {
        maps.extend_from_slice(&[0xa1, 0x61, 0x6b]); // {"k": ...
    }
    maps.push(0x00);
    let indefinite = vec![0x9fu8; 10_000];
    let cases: [(&str, &[u8], usize, Rule); 3] = [
        ("0x81 x 10 000", &arrays, 32, Rule::DepthExceeded),
        ("{\"k\": x 10 000", &maps, 32 * 3, Rule::DepthExceeded),
        ("0x9f x 10 000", &indefinite, 0, Rule::IndefiniteLength),
    ];
    for (name, input, offset, rule) in cases {
        let (r, u) = measure(|| cbor::decode(input));
        u.report(&format!("decode {name}"), input.len());
        let e = r.unwrap_err();
        assert_eq!((e.offset(), e.rule()), (offset, rule), "{name}");
        assert_eq!(u.allocated, 0);
        assert!(u.time < QUICK);
        let (found, _, u) = check_rule(input);
        assert_eq!(found, Some((offset, rule)));
        assert_eq!(u.allocated, 0);
    }
    // Exactly the limit passes: 32 nested containers (P13: the top level is depth 1).
    let mut ok = vec![0x81u8; 31];
    ok.push(0x80);
    assert!(cbor::decode(&ok).is_ok());
    ok.insert(0, 0x81);
    assert_eq!(cbor::decode(&ok).unwrap_err().rule(), Rule::DepthExceeded);
}

#[test]
fn the_default_depth_fits_a_small_stack() {
    // The decoder recurses once per level, bounded by max_depth: with the
    // P1 default of 32 it runs in a 64 KiB thread stack (debug build).
    let mut deep = vec![0x81u8; 31];
    deep.push(0x80);
    let ok = std::thread::Builder::new()
        .stack_size(64 << 10)
        .spawn(move || cbor::decode(&deep).is_ok())
        .unwrap()
        .join()
        .unwrap();
    assert!(ok);
}

// ---- item counts ------------------------------------------------------------

/// A canonical map of `n` entries `"00000": 0, "00001": 0, ...` (same-length
/// keys, so numeric order is canonical order).
fn wide_map(n: u32) -> Vec<u8> {
    let mut out = vec![0xba];
    out.extend_from_slice(&n.to_be_bytes());
    for i in 0..n {
        out.push(0x65);
        out.extend_from_slice(format!("{i:05}").as_bytes());
        out.push(0x00);
    }
    out
}

#[test]
fn a_map_of_65_537_entries() {
    let over = wide_map(65_537);
    let (r, u) = measure(|| cbor::decode(&over));
    u.report("decode map of 65 537 entries", over.len());
    let e = r.unwrap_err();
    assert_eq!((e.offset(), e.rule()), (0, Rule::TooManyItems));
    assert_eq!(u.allocated, 0);
    assert!(u.time < QUICK);
    let (found, _, u) = check_rule(&over);
    assert_eq!(found, Some((0, Rule::TooManyItems)));
    assert_eq!(u.allocated, 0);

    // 65 536 is the limit itself: accepted, still without allocating.
    let at_limit = wide_map(65_536);
    let (r, u) = measure(|| cbor::decode(&at_limit).map(|v| v.as_map().map(|m| m.len())));
    u.report("decode map of 65 536 entries", at_limit.len());
    assert_eq!(r.unwrap(), Some(65_536));
    assert_eq!(u.allocated, 0);
}

// ---- envelope size ------------------------------------------------------------

#[test]
fn an_envelope_over_1_mib() {
    let raised = Limits {
        max_size: 4 << 20,
        ..Limits::DEFAULT
    };
    let env = EnvelopeBuilder::genesis(TS)
        .payload(Value::Bytes(vec![0x5a; 1 << 20]))
        .limits(raised)
        .sign_with_rng(&alice(), &mut TestRng::new(2))
        .unwrap();
    let bytes = env.as_bytes();
    assert!(bytes.len() > 1 << 20);

    let (r, u) = measure(|| cbor::decode(bytes).map(|_| ()));
    u.report("decode envelope > 1 MiB", bytes.len());
    let e = r.unwrap_err();
    assert_eq!((e.offset(), e.rule()), (0, Rule::TooLarge));
    assert_eq!(u.allocated, 0);
    assert!(u.time < QUICK);

    let (r, u) = measure(|| EnvelopeRef::decode(bytes).map(|_| ()));
    assert!(r.is_err());
    assert_eq!(u.allocated, 0);

    let (found, status, u) = check_rule(bytes);
    u.report("check envelope > 1 MiB", bytes.len());
    assert_eq!(found, Some((0, Rule::TooLarge)));
    assert_eq!(status, Status::Invalid);
    assert_eq!(u.allocated, 0);
    assert!(u.time < QUICK);

    // Only the size is wrong: with the limit raised it verifies.
    let opts = CheckOptions {
        limits: raised,
        ..CheckOptions::DEFAULT
    };
    let mut sink = Reasons::<8>::new();
    let keys = keyring();
    let (checked, u) = measure(|| check(bytes, &keys, &opts, &mut sink));
    u.report("check the same envelope, limit raised", bytes.len());
    assert_eq!(checked.status, Status::Valid, "{:?}", sink.as_slice());
    assert_eq!(
        u.allocated, 0,
        "even a valid 1 MiB envelope checks without allocating"
    );
}

// ---- many signatures (cost, not correctness) -----------------------------------

/// A valid genesis by Alice followed by `n` signature maps in
/// `tool_sandbox` with zeroed `sig`s, all by Bob (`known`, whose key the
/// resolver has) or each by a different unknown sigil.
fn many_signatures(n: usize, known: bool) -> Vec<u8> {
    let env = EnvelopeBuilder::genesis(TS)
        .sign_with_rng(&alice(), &mut TestRng::new(3))
        .unwrap();
    let mut raw = Raw::from_bytes(env.as_bytes());
    let mut sigs = raw.signatures();
    for i in 0..n {
        let by = if known {
            bob().sigil(SigilForm::Default)
        } else {
            let mut seed = [0u8; 32];
            seed[..8].copy_from_slice(&(i as u64 + 1).to_le_bytes());
            herald_core::Sigil::from_key(&seed, SigilForm::Default)
        };
        sigs.push(sig_map(
            "ed25519",
            &by.to_string(),
            "tool_sandbox",
            &[0; 64],
            None,
        ));
    }
    raw.set_signatures(sigs);
    raw.bytes()
}

/// Finding F1 (docs/fuzzing.md): signature k is verified over body(E, k),
/// so hashing grows with the square of the signature count when keys
/// resolve; `duplicate_signer` compared each signature with every earlier
/// one by re-parsing it (7.6 s for the ~7 000 maps a 1 MiB envelope holds,
/// release build). Earlier signers are now parsed once per window of 32
/// (`verify/duplicate_signer.rs`; 0.28 s at 7 000). Prints the times; the
/// reasons are asserted.
#[test]
fn many_signatures_cost() {
    for known in [false, true] {
        let mut times = Vec::new();
        for n in [250usize, 500, 1_000] {
            let bytes = many_signatures(n, known);
            assert!(bytes.len() < 1 << 20, "{}", bytes.len());
            let mut reasons = Vec::new();
            let keys = keyring();
            let (checked, u) =
                measure(|| check(&bytes, &keys, &CheckOptions::DEFAULT, &mut reasons));
            u.report(
                &format!(
                    "check {n} signatures by {}",
                    if known {
                        "one known key"
                    } else {
                        "unknown sigils"
                    }
                ),
                bytes.len(),
            );
            assert_eq!(checked.status, Status::Partial);
            let code = if known {
                ReasonCode::BadSignature
            } else {
                ReasonCode::UnknownSigner
            };
            assert_eq!(reasons.iter().filter(|r| r.code == code).count(), n);
            times.push(u.time);
        }
        eprintln!(
            "  time ratio 1000/500 = {:.2}",
            times[2].as_secs_f64() / times[1].as_secs_f64()
        );
    }
}

// ---- stack depth with raised limits ---------------------------------------------

/// Finding F3 (docs/fuzzing.md): the strict decoder recurses once per
/// nesting level. A caller who raised `Limits::max_depth` to 100 000 and met
/// hostile nesting overflowed a 2 MiB thread stack (a process abort, not a
/// panic). The decoder now follows at most `cbor::MAX_NESTING` levels
/// whatever the limit says: deeper input is `DepthExceeded`.
#[test]
fn raised_depth_limit_cannot_overflow_the_stack() {
    let mut input = vec![0x81u8; 100_000];
    input.push(0x00);
    let limits = Limits {
        max_depth: 100_000,
        ..Limits::DEFAULT
    };
    let rule = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            cbor::decode_with(&input, &limits)
                .map(|_| ())
                .map_err(|e| (e.rule(), e.offset()))
        })
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(rule, Err((cbor::Rule::DepthExceeded, cbor::MAX_NESTING)));
}
