//! `sequence::read` stops reading where an audit stops using its input,
//! and the audit of what it read is the audit of the whole input: for
//! random streams of envelopes, garbage, hostile heads, JSON text and
//! bundles, read through a reader that hands out random-sized pieces (also
//! when the audit cuts the items where the reader found them end,
//! `audit_compact_read`); and for endless streams, which it must stop
//! reading.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod support;

use std::io::{self, Read};

use herald_core::EnvelopeBuilder;
use herald_core::cbor::Limits;
use herald_core::cbor::Value;
use herald_verify::{
    AuditOptions, Input, Keyring, Provenance, ReadError, ReadLimits, audit, audit_compact_read,
    encode_bundle, read_sequence, read_sequence_items,
};
use proptest::prelude::*;
use support::{T0, key, nonce};

/// Hands out at most `sizes[i]` bytes per call (cycling), like a pipe.
struct Trickle<'a> {
    data: &'a [u8],
    sizes: Vec<usize>,
    call: usize,
    /// Bytes handed out.
    given: usize,
}

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.sizes[self.call % self.sizes.len()]
            .max(1)
            .min(buf.len())
            .min(self.data.len() - self.given);
        self.call += 1;
        buf[..n].copy_from_slice(&self.data[self.given..self.given + n]);
        self.given += n;
        Ok(n)
    }
}

/// Small limits so that the cap and the size limit are reached.
fn options(max_item: usize, max_envelopes: usize) -> AuditOptions {
    AuditOptions {
        now: Some(T0 + 1000),
        limits: Limits {
            max_size: max_item,
            ..Limits::DEFAULT
        },
        max_envelopes,
        ..AuditOptions::default()
    }
}

fn limits(opts: &AuditOptions, max_bytes: u64) -> ReadLimits {
    ReadLimits {
        max_item: opts.limits.max_size,
        max_depth: 512,
        max_items: opts.max_envelopes,
        max_bytes,
    }
}

fn keyring() -> Keyring {
    let mut k = Keyring::new();
    for n in 1..=3 {
        k.insert(key(n).public_key(), Provenance::Pinned);
    }
    k
}

/// Parts a stream is made of.
#[derive(Clone, Debug)]
enum Part {
    /// Envelope `n` of a small fixed set (a repeat is a replay).
    Envelope(usize),
    /// Arbitrary bytes.
    Garbage(Vec<u8>),
    /// A byte or text string head claiming `len` bytes, and nothing more.
    Claim(u8, u64),
    /// An array head claiming `count` items.
    Array(u64),
    /// A stray break, the end of anything splittable.
    Break,
    /// Zeros: one-byte items.
    Zeros(usize),
    /// JSON text.
    Json,
}

fn part() -> impl Strategy<Value = Part> {
    prop_oneof![
        6 => (0usize..6).prop_map(Part::Envelope),
        1 => prop::collection::vec(any::<u8>(), 0..40).prop_map(Part::Garbage),
        1 => (prop::sample::select(vec![0x5bu8, 0x7b, 0x5a, 0x59]), any::<u64>())
            .prop_map(|(h, n)| Part::Claim(h, n)),
        1 => any::<u64>().prop_map(Part::Array),
        1 => Just(Part::Break),
        1 => (0usize..3000).prop_map(Part::Zeros),
        1 => Just(Part::Json),
    ]
}

/// Six envelopes of 0.2 to 20 KB, so that items span the reader's rounds.
fn envelopes() -> Vec<Vec<u8>> {
    (0..6)
        .map(|i| {
            EnvelopeBuilder::genesis(T0 + i as u64)
                .nonce(nonce())
                .payload(Value::text("w".repeat([10, 3000, 9000, 20_000][i % 4])))
                .sign(&key(1 + (i % 3) as u8))
                .unwrap()
                .as_bytes()
                .to_vec()
        })
        .collect()
}

fn stream(parts: &[Part], envs: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    for p in parts {
        match p {
            Part::Envelope(i) => out.extend_from_slice(&envs[*i]),
            Part::Garbage(g) => out.extend_from_slice(g),
            Part::Claim(h, n) => {
                out.push(*h);
                let width = match h & 0x1f {
                    27 => 8,
                    26 => 4,
                    _ => 2,
                };
                out.extend_from_slice(&n.to_be_bytes()[8 - width..]);
            }
            Part::Array(n) => {
                out.push(0x9b);
                out.extend_from_slice(&n.to_be_bytes());
            }
            Part::Break => out.push(0xff),
            Part::Zeros(n) => out.extend(std::iter::repeat_n(0u8, *n)),
            Part::Json => out.extend_from_slice(b"{\"v\": \"herald/0.2\", \"id\": \"00\"}"),
        }
    }
    out
}

fn audit_of(bytes: Vec<u8>, opts: &AuditOptions) -> herald_verify::Report {
    audit(
        &[Input {
            name: "-".into(),
            bytes,
        }],
        &keyring(),
        opts,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(160))]

    #[test]
    fn the_audit_of_what_was_read_is_the_audit_of_the_stream(
        parts in prop::collection::vec(part(), 0..32),
        sizes in prop::collection::vec(1usize..5000, 1..6),
        max_item in prop::sample::select(vec![600usize, 12_000, 1 << 20]),
        max_envelopes in prop::sample::select(vec![3usize, 10, 1000]),
        as_bundle in any::<bool>(),
    ) {
        let envs = envelopes();
        let mut data = stream(&parts, &envs);
        if as_bundle {
            let items: Vec<&[u8]> = envs.iter().map(Vec::as_slice).collect();
            let mut b = encode_bundle(&items, &[], &[]);
            b.extend_from_slice(&data);
            data = b;
        }
        let opts = options(max_item, max_envelopes);
        let mut reader = Trickle { data: &data, sizes, call: 0, given: 0 };
        let got = read_sequence(&mut reader, &limits(&opts, 1 << 30)).unwrap();
        // What was read is a prefix of the stream and all that was handed out.
        prop_assert!(data.starts_with(&got));
        prop_assert_eq!(got.len(), reader.given);
        let whole = audit_of(data.clone(), &opts);
        prop_assert_eq!(audit_of(got, &opts), whole.clone());
        // Read again, with where each item ends: the audit that cuts the
        // items there is the audit of the stream too.
        let mut reader = Trickle { data: &data, sizes: reader.sizes, call: 0, given: 0 };
        let (got, ends) = read_sequence_items(&mut reader, &limits(&opts, 1 << 30), 0).unwrap();
        prop_assert!(data.starts_with(&got));
        let inputs = [Input { name: "-".into(), bytes: got }];
        let cut = audit_compact_read(&inputs, vec![ends], &keyring(), &opts).into_report();
        prop_assert_eq!(cut, whole);
    }
}

/// An endless source of `pattern` after `head`.
struct Endless {
    head: Vec<u8>,
    pattern: Vec<u8>,
    given: u64,
}

impl Read for Endless {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        for b in buf.iter_mut() {
            let i = self.given as usize;
            *b = match self.head.get(i) {
                Some(&h) => h,
                None => self.pattern[(i - self.head.len()) % self.pattern.len()],
            };
            self.given += 1;
        }
        Ok(buf.len())
    }
}

fn endless(head: &[u8], pattern: &[u8]) -> Endless {
    Endless {
        head: head.to_vec(),
        pattern: pattern.to_vec(),
        given: 0,
    }
}

const GIB: u64 = 1 << 30;

/// Bytes read from an endless stream before `read` stops, with the audit
/// defaults and a 1 GiB budget.
fn read_endless(mut r: Endless) -> (Result<Vec<u8>, ReadError>, u64) {
    let opts = AuditOptions::default();
    let got = read_sequence(&mut r, &limits(&opts, GIB));
    (got, r.given)
}

#[test]
fn endless_hostile_streams_stop_at_their_first_bytes() {
    let envelope = envelopes().remove(0);
    let cases: [(&str, Vec<u8>, &[u8]); 6] = [
        (
            "an indefinite-length array that never ends",
            vec![0x9f],
            &[0],
        ),
        (
            "a byte string head claiming 2^63 bytes",
            vec![0x5b, 0x80, 0, 0, 0, 0, 0, 0, 0],
            &[0],
        ),
        ("a head claiming 1 GiB", vec![0x5a, 0x40, 0, 0, 0], &[0x41]),
        ("stray breaks", vec![], &[0xff]),
        (
            "an envelope, then arrays nested without end",
            envelope.clone(),
            &[0x81],
        ),
        ("JSON text", b"{\"v\": ".to_vec(), b" "),
    ];
    for (what, head, pattern) in cases {
        let (got, given) = read_endless(endless(&head, pattern));
        let got = got.unwrap_or_else(|e| panic!("{what}: {e}"));
        // A round or two, or for an item that grows past the 1 MiB limit,
        // rounds that double with it: at most twice the limit.
        assert!(
            given <= (2 << 20) + (64 << 10),
            "{what}: read {given} bytes"
        );
        assert_eq!(got.len() as u64, given, "{what}");
    }
}

#[test]
fn an_endless_stream_of_zeros_stops_after_the_audit_cap() {
    let (got, given) = read_endless(endless(&[], &[0]));
    let got = got.unwrap();
    let cap = AuditOptions::default().max_envelopes;
    // Item cap + 1 one-byte items, within one more round.
    assert!(
        got.len() > cap && given <= (cap + (64 << 10)) as u64,
        "read {given} bytes"
    );
}

#[test]
fn an_endless_stream_of_envelopes_is_refused_at_the_byte_limit() {
    let envelope = envelopes().remove(0);
    let mut r = endless(&[], &envelope);
    let opts = AuditOptions::default();
    let limit = 8 << 20;
    match read_sequence(&mut r, &limits(&opts, limit)) {
        Err(ReadError::TooLarge { limit: l }) => assert_eq!(l, limit),
        other => panic!("expected TooLarge, got {:?}", other.map(|b| b.len())),
    }
    assert!(r.given <= limit + 1, "read {} bytes", r.given);
}

#[test]
fn an_empty_stream_reads_as_empty() {
    let mut r: &[u8] = &[];
    assert!(
        read_sequence(&mut r, &limits(&AuditOptions::default(), GIB))
            .unwrap()
            .is_empty()
    );
}
