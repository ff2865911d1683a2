//! Hostile input against herald-verify (docs/fuzzing.md, "Hostile input"):
//! the same claimed lengths, deep nesting, oversized maps and envelopes as
//! herald-core/tests/hostile.rs, through `sequence::split` and `audit`,
//! and large streams of one-byte items. A counting global allocator (this
//! file only) measures the bytes the calling thread allocates during each
//! call; the input itself is built before measuring.
//!
//! Run with `-- --nocapture` to see the numbers reported in docs/fuzzing.md;
//! the largest case in the suite is 4 MiB.

// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::time::Duration;

use herald_testkit::alloc::{Counting, Usage, measure};

use herald_core::cbor::{Limits, Value};
use herald_core::{EnvelopeBuilder, ReasonCode, SigningKey, Status};
use herald_verify::{
    AuditOptions, Input, Keyring, Piece, Provenance, Report, SplitError, audit, split_sequence,
};

use herald_testkit::T0 as TS;

#[global_allocator]
static GLOBAL: Counting = Counting;

const QUICK: Duration = Duration::from_millis(250);
const MIB: usize = 1 << 20;

fn keyring() -> Keyring {
    let mut ring = Keyring::new();
    for seed in [[0x11u8; 32], [0x22; 32]] {
        ring.insert(
            SigningKey::from_seed(&seed).public_key(),
            Provenance::Pinned,
        );
    }
    ring
}

/// `audit` over one input, measured (the input and keyring are built first).
fn audit_one(bytes: Vec<u8>) -> (Report, Usage) {
    let inputs = [Input {
        name: "hostile".into(),
        bytes,
    }];
    let ring = keyring();
    let opts = AuditOptions::default();
    measure(|| audit(&inputs, &ring, &opts))
}

/// The one report of an unsplittable or undecodable input: malformed, and
/// its detail names the problem.
fn assert_one_malformed(report: &Report, detail: &str) {
    assert_eq!(report.envelopes.len(), 1, "{report:#?}");
    let e = &report.envelopes[0];
    assert_eq!(e.status(), Status::Invalid);
    assert!(
        e.reasons
            .iter()
            .any(|r| r.code == ReasonCode::Malformed && r.detail.contains(detail)),
        "{:#?}",
        e.reasons
    );
    assert_eq!(report.summary.invalid, 1);
}

const BOUNDED: usize = 64 << 10;

#[test]
fn a_nine_byte_header_claiming_2_pow_63_bytes() {
    for initial in [0x5b, 0x7b, 0x9b, 0xbb] {
        let mut input = vec![0u8; 9];
        input[0] = initial;
        input[1] = 0x80;
        let (pieces, u) = measure(|| split_sequence(&input, MIB, 512));
        u.report(&format!("split {input:02x?}"), input.len());
        // The claim alone is past the envelope size limit: too large, not
        // merely truncated (it would be too large whatever followed).
        assert_eq!(
            pieces,
            vec![Piece::Unsplittable {
                offset: 0,
                error: SplitError::TooLarge
            }]
        );
        assert!(u.allocated < 1024);
        let (r, u) = audit_one(input.clone());
        u.report(&format!("audit {input:02x?}"), input.len());
        assert_one_malformed(&r, "larger than the envelope size limit");
        assert!(u.allocated < BOUNDED && u.time < QUICK);
    }
}

#[test]
fn ten_thousand_deep_nesting() {
    for initial in [0x81u8, 0x9f, 0xa1] {
        let mut input = vec![initial; 10_000];
        input.push(0x00);
        let (pieces, u) = measure(|| split_sequence(&input, MIB, 512));
        u.report(&format!("split {initial:02x} x 10 000"), input.len());
        // (For 0xa1 each map's key is again a map: well-formed, still nesting.)
        assert_eq!(
            pieces,
            vec![Piece::Unsplittable {
                offset: 0,
                error: SplitError::TooDeep
            }]
        );
        assert!(
            u.allocated < BOUNDED,
            "the splitter's stack is bounded by its depth"
        );
        let (r, u) = audit_one(input.clone());
        u.report(&format!("audit {initial:02x} x 10 000"), input.len());
        assert_one_malformed(&r, "nested too deeply");
        assert!(u.allocated < BOUNDED && u.time < QUICK);
    }
}

#[test]
fn a_map_of_65_537_entries() {
    let n: u32 = 65_537;
    let mut input = vec![0xba];
    input.extend_from_slice(&n.to_be_bytes());
    for i in 0..n {
        input.push(0x65);
        input.extend_from_slice(format!("{i:05}").as_bytes());
        input.push(0x00);
    }
    let len = input.len();
    let (pieces, u) = measure(|| split_sequence(&input, MIB, 512));
    u.report("split map of 65 537 entries", len);
    assert!(matches!(pieces[..], [Piece::Item { offset: 0, bytes }] if bytes.len() == len));
    let (r, u) = audit_one(input);
    u.report("audit map of 65 537 entries", len);
    assert_one_malformed(&r, "more items than the limit");
    assert!(u.allocated < BOUNDED && u.time < QUICK, "{u:?}");
}

#[test]
fn an_envelope_over_1_mib() {
    let raised = Limits {
        max_size: 4 << 20,
        ..Limits::DEFAULT
    };
    let env = EnvelopeBuilder::genesis(TS)
        .payload(Value::Bytes(vec![0x5a; MIB]))
        .limits(raised)
        .nonce(herald_core::Nonce([1; 16]))
        .sign(&SigningKey::from_seed(&[0x11; 32]))
        .unwrap();
    let bytes = env.as_bytes().to_vec();
    assert!(bytes.len() > MIB);
    let (pieces, u) = measure(|| split_sequence(&bytes, MIB, 512));
    u.report("split envelope > 1 MiB", bytes.len());
    assert_eq!(
        pieces,
        vec![Piece::Unsplittable {
            offset: 0,
            error: SplitError::TooLarge
        }]
    );
    let (r, u) = audit_one(bytes.clone());
    u.report("audit envelope > 1 MiB", bytes.len());
    assert_one_malformed(&r, "larger than the envelope size limit");
    assert!(u.allocated < BOUNDED && u.time < QUICK);

    // Only the size is wrong: with the limit raised the audit finds it valid.
    let inputs = [Input {
        name: "big".into(),
        bytes,
    }];
    let opts = AuditOptions {
        limits: raised,
        ..AuditOptions::default()
    };
    let r = audit(&inputs, &keyring(), &opts);
    assert!(r.all_valid(), "{r:#?}");
}

// ---- streams of one-byte items -------------------------------------------------

/// 0xff is a stray break: the whole stream is one unsplittable piece.
#[test]
fn sixty_four_mib_of_0xff() {
    let input = vec![0xffu8; 64 * MIB];
    let (pieces, u) = measure(|| split_sequence(&input, MIB, 512));
    u.report("split 64 MiB of 0xff", input.len());
    assert_eq!(
        pieces,
        vec![Piece::Unsplittable {
            offset: 0,
            error: SplitError::NotWellFormed
        }]
    );
    assert!(u.allocated < 1024 && u.time < QUICK);
    let (r, u) = audit_one(input);
    u.report("audit 64 MiB of 0xff", 64 * MIB);
    assert_one_malformed(&r, "not well-formed");
    assert!(u.allocated < BOUNDED && u.time < QUICK);
}

/// Each 0x00 is a complete item (the integer 0): `split` returns one piece
/// per input byte, so its memory is proportional to the input (bytes per
/// input byte printed; docs/fuzzing.md, finding F2).
fn zeros_split(len: usize) -> Usage {
    let input = vec![0u8; len];
    let (pieces, u) = measure(|| split_sequence(&input, MIB, 512));
    u.report(&format!("split {} MiB of 0x00", len / MIB), len);
    assert_eq!(pieces.len(), len);
    assert!(pieces.iter().enumerate().all(|(i, p)| matches!(
        p,
        Piece::Item { offset, bytes: [0] } if *offset == i
    )));
    eprintln!(
        "  {:.1} B allocated and {:.1} B peak per input byte",
        u.allocated as f64 / len as f64,
        u.peak as f64 / len as f64
    );
    u
}

#[test]
fn four_mib_of_zeros_split_into_one_item_per_byte() {
    let u = zeros_split(4 * MIB);
    // Linear: one `Piece` (32 bytes) per item, plus vector growth.
    assert!(u.peak as usize <= 4 * MIB * 64, "{u:?}");
}

/// `audit` over a stream of one-byte items: every one is malformed, the
/// first `MAX_LISTED_UNPARSED` listed and the rest counted
/// (docs/performance.md *Memory under hostile input*, B7); the memory
/// per input byte is printed (finding F2).
fn stream_audit(byte: u8, len: usize, detail: &str) -> Usage {
    let (r, u) = audit_one(vec![byte; len]);
    u.report(&format!("audit {} KiB of {byte:#04x}", len >> 10), len);
    let listed = len.min(herald_verify::MAX_LISTED_UNPARSED);
    assert_eq!(r.envelopes.len(), listed);
    assert_eq!(r.unlisted, len - listed);
    assert_eq!(r.summary.invalid, len);
    assert!(r.envelopes.iter().all(|e| {
        e.status() == Status::Invalid
            && e.reasons
                .iter()
                .any(|x| x.code == ReasonCode::Malformed && x.detail.contains(detail))
    }));
    eprintln!(
        "  {:.0} B allocated and {:.0} B peak per input byte, {:.2} us per item",
        u.allocated as f64 / len as f64,
        u.peak as f64 / len as f64,
        u.time.as_secs_f64() * 1e6 / len as f64
    );
    u
}

#[test]
fn audit_reports_every_item_of_a_zero_stream_malformed() {
    // Past the first thousand, an item costs its place in the split (24
    // bytes) and the slice of its bytes (16): finding F2 once measured
    // ~1.4 KB peak per input byte here.
    let len = 256 << 10;
    let u = stream_audit(0x00, len, "not a map");
    assert!((u.peak as usize) < len * 64 + (4 << 20), "{u:?}");
    // 0xa0 is an empty map: an envelope missing all nine required fields.
    let u = stream_audit(0xa0, len, "required field missing");
    assert!((u.peak as usize) < len * 64 + (4 << 20), "{u:?}");
}

/// `max_envelopes` caps the entries audited; the rest is one malformed entry.
#[test]
fn max_envelopes_caps_a_stream() {
    let inputs = [Input {
        name: "zeros".into(),
        bytes: vec![0; 100_000],
    }];
    let opts = AuditOptions {
        max_envelopes: 500,
        ..AuditOptions::default()
    };
    let ring = keyring();
    let (r, u) = measure(|| audit(&inputs, &ring, &opts));
    u.report("audit 100 000 zeros, max_envelopes 500", 100_000);
    assert_eq!(r.envelopes.len(), 501);
    assert_eq!(r.unlisted, 0);
    assert!(
        r.envelopes[500].reasons[0]
            .detail
            .contains("more than 500 envelopes")
    );
}

/// Past `MAX_LISTED_UNPARSED` undecodable items, the rest are counted; the
/// pieces listed after them (an unsplittable tail, the next input's
/// envelope) keep their order and their sources.
#[test]
fn unlisted_items_leave_later_reports_in_order() {
    let cap = herald_verify::MAX_LISTED_UNPARSED;
    let mut first = vec![0xa0u8; cap + 500];
    // A text string claiming 27 bytes that are not there: unsplittable.
    first.extend_from_slice(&[0x78, 27, b'x']);
    let env = EnvelopeBuilder::genesis(TS)
        .payload(Value::text("after the junk"))
        .sign(&SigningKey::from_seed(&[0x11; 32]))
        .unwrap();
    let inputs = [
        Input {
            name: "junk".into(),
            bytes: first,
        },
        Input {
            name: "good".into(),
            bytes: env.as_bytes().to_vec(),
        },
    ];
    let opts = AuditOptions {
        now: Some(TS + 10),
        ..AuditOptions::default()
    };
    let r = audit(&inputs, &keyring(), &opts);
    // The unsplittable tail counts among the undecodable items listed.
    assert_eq!(r.envelopes.len(), cap + 1);
    assert_eq!(r.unlisted, cap + 500 - (cap - 1));
    assert_eq!(r.summary.invalid, cap + 501);
    let tail = &r.envelopes[cap - 1];
    assert_eq!(
        (tail.source.input.as_str(), tail.source.offset),
        ("junk", cap + 500)
    );
    let last = &r.envelopes[cap];
    assert_eq!(last.source.input, "good");
    assert_eq!(last.status(), Status::Valid, "{:?}", last.reasons);
}
