//! The builder signs without decoding its own output again (docs/performance.md,
//! R1): `EnvelopeBuilder::sign` checks only what the strict decode (P1, P3)
//! could still refuse. These tests hold it to the old behaviour, a full
//! decode of the result: for random builders (genesis or reply, every kind,
//! `to`, extra fields, nested payloads and attestation values near the
//! depth and item limits, `expires` around `ts`, many attestations, sizes at
//! the limit), the same envelope is made independently (tests/support's
//! `Raw`), decoded with the builder's limits, and the builder must agree:
//! the same bytes when that decode succeeds, the same error when it fails.

// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod support;

use herald_core::cbor::{Limits, MAX_NESTING, Map, Value};
use herald_core::{
    BuildError, EnvelopeBuilder, EnvelopeError, EnvelopeRef, Kind, Nonce, Reserved, Sigil,
    SigilForm, SigningKey,
};
use proptest::prelude::*;
use support::*;

/// Everything a builder can be given.
#[derive(Clone, Debug)]
struct Params {
    key: u8,
    parent: Option<([u8; 32], [u8; 32])>,
    to: Option<Sigil>,
    ts: u64,
    nonce: [u8; 16],
    expires: Option<u64>,
    kind: Kind,
    lineage_proof: Option<[u8; 32]>,
    attestations: Vec<(String, Value)>,
    payload: Value,
    extra: Vec<(String, Value)>,
    from_form: SigilForm,
    from: Option<Sigil>,
    limits: Limits,
}

const FORMS: [SigilForm; 3] = [SigilForm::Default, SigilForm::Long, SigilForm::Short];

impl Params {
    fn signing_key(&self) -> SigningKey {
        key(self.key)
    }

    fn signer_sigil(&self) -> Sigil {
        self.from
            .unwrap_or_else(|| self.signing_key().public_key().sigil(self.from_form))
    }

    /// The builder, and the extra fields it accepted (it refuses P3 keys).
    fn builder(&self) -> (EnvelopeBuilder, Vec<(String, Value)>) {
        let mut b = match self.parent {
            None => EnvelopeBuilder::genesis(self.ts),
            Some((id, trace)) => EnvelopeBuilder::reply_to(id, trace, self.ts),
        }
        .kind(self.kind)
        .nonce(Nonce(self.nonce))
        .payload(self.payload.clone())
        .from_form(self.from_form)
        .limits(self.limits);
        if let Some(to) = self.to {
            b = b.to(to);
        }
        if let Some(x) = self.expires {
            b = b.expires(x);
        }
        if let Some(p) = self.lineage_proof {
            b = b.lineage_proof(p);
        }
        if let Some(f) = self.from {
            b = b.from_sigil(f);
        }
        for (ty, v) in &self.attestations {
            b = b.attest(ty, v.clone());
        }
        let mut accepted = Vec::new();
        for (k, v) in &self.extra {
            match b.clone().extra_field(k, v.clone()) {
                Ok(next) => {
                    b = next;
                    accepted.push((k.clone(), v.clone()));
                }
                Err(e) => assert_eq!(e, BuildError::ReservedKey(k.clone())),
            }
        }
        (b, accepted)
    }

    /// The same envelope made by hand (P3, P4, P5), signed.
    fn raw(&self, extra: &[(String, Value)]) -> Raw {
        let mut m = Map::new();
        m.insert("v", Value::text("herald/0.2"));
        m.insert("from", Value::text(self.signer_sigil().to_string()));
        m.insert("ts", Value::Unsigned(self.ts));
        m.insert("nonce", Value::Bytes(self.nonce.to_vec()));
        m.insert("payload", self.payload.clone());
        m.insert("signatures", Value::Array(Vec::new()));
        match self.parent {
            None => m.insert("parent", Value::Null),
            Some((id, trace)) => {
                m.insert("trace", Value::Bytes(trace.to_vec()));
                m.insert("parent", Value::Bytes(id.to_vec()))
            }
        };
        if let Some(to) = self.to {
            m.insert("to", Value::text(to.to_string()));
        }
        if self.kind != Kind::Message {
            m.insert("kind", Value::text(self.kind.name()));
        }
        if let Some(x) = self.expires {
            m.insert("expires", Value::Unsigned(x));
        }
        if let Some(p) = self.lineage_proof {
            m.insert("lineage_proof", Value::Bytes(p.to_vec()));
        }
        if !self.attestations.is_empty() {
            let list = self
                .attestations
                .iter()
                .map(|(ty, v)| attestation(ty, v.clone()))
                .collect();
            m.insert("attestations", Value::Array(list));
        }
        for (k, v) in extra {
            m.insert(k.as_str(), v.clone());
        }
        Raw(m).seal(&self.signing_key(), self.kind.origin_tag())
    }
}

/// What the builder did before R1: the size check, then a full strict decode.
fn old_path(bytes: &[u8], limits: &Limits) -> Result<(), BuildError> {
    if bytes.len() > limits.max_size {
        return Err(BuildError::TooLarge {
            size: bytes.len(),
            limit: limits.max_size,
        });
    }
    EnvelopeRef::decode_with(bytes, limits)
        .map(|_| ())
        .map_err(BuildError::Invalid)
}

/// Build with `p` and compare with the old path over the hand-made envelope.
fn agree(p: &Params) {
    let (builder, extra) = p.builder();
    let raw = p.raw(&extra).bytes();
    let old = old_path(&raw, &p.limits);
    let new = builder.sign_with_rng(&p.signing_key(), &mut TestRng::new(1));
    match (&new, &old) {
        (Ok(env), Ok(())) => {
            assert_eq!(env.as_bytes(), &raw[..], "builder and Raw differ");
            // The Envelope invariant: its bytes decode with its limits.
            let view = EnvelopeRef::decode_with(env.as_bytes(), &p.limits).unwrap();
            assert_eq!(env.id(), *view.id());
            assert_eq!(env.id(), view.computed_id());
            assert_eq!(env.view().id(), view.id());
        }
        (Err(a), Err(b)) => assert_eq!(a, b),
        _ => panic!("builder {new:?}, full decode {old:?}"),
    }
}

fn sigil() -> impl Strategy<Value = Sigil> {
    prop_oneof![
        (any::<[u8; 32]>(), 0..3usize).prop_map(|(pk, f)| Sigil::from_key(&pk, FORMS[f])),
        (0..Reserved::ALL.len()).prop_map(|i| Sigil::parse(Reserved::ALL[i].as_str()).unwrap()),
    ]
}

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<u64>().prop_map(Value::Unsigned),
        any::<u64>().prop_map(Value::Negative),
        proptest::collection::vec(any::<u8>(), 0..40).prop_map(Value::Bytes),
        "\\PC{0,12}".prop_map(Value::Text),
        (-1e9f64..1e9).prop_map(|f| Value::from_f64(f + 0.5).unwrap_or(Value::Null)),
        any::<bool>().prop_map(Value::Bool),
        Just(Value::Null),
    ]
}

/// Values nested up to 6 deep, containers of up to 6 items.
fn value() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(6, 64, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::vec(("[a-z]{0,3}", inner), 0..6)
                .prop_map(|es| Value::Map(es.into_iter().collect())),
        ]
    })
}

fn limits() -> impl Strategy<Value = Limits> {
    prop_oneof![
        Just(Limits::DEFAULT),
        (0..9usize, 0..14usize).prop_map(|(max_depth, max_items)| Limits {
            max_depth,
            max_items,
            ..Limits::DEFAULT
        }),
        (0..9usize).prop_map(|max_depth| Limits {
            max_depth,
            ..Limits::DEFAULT
        }),
        (0..24usize).prop_map(|max_items| Limits {
            max_items,
            ..Limits::DEFAULT
        }),
    ]
}

/// Extra-field keys: mostly unknown ones, some P3 keys (the builder refuses those).
fn extra_key() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-z_]{0,14}",
        1 => prop::sample::select(vec![
            "v", "id", "to", "ts", "from", "kind", "nonce", "trace", "parent", "expires",
            "payload", "signatures", "attestations", "lineage_proof",
        ])
        .prop_map(String::from),
    ]
}

fn ts_and_expires() -> impl Strategy<Value = (u64, Option<u64>)> {
    let ts = prop_oneof![
        Just(0u64),
        Just(1u64),
        Just(TS),
        Just(u64::MAX),
        any::<u64>()
    ];
    (ts, -3i64..=3, any::<u64>(), 0..4u8).prop_map(|(ts, d, any, pick)| {
        let expires = match pick {
            0 => None,
            1 => Some(any),
            _ => Some(ts.saturating_add_signed(d)),
        };
        (ts, expires)
    })
}

fn params() -> impl Strategy<Value = Params> {
    (
        (
            0..8u8,
            proptest::option::of(any::<([u8; 32], [u8; 32])>()),
            proptest::option::of(sigil()),
            ts_and_expires(),
            any::<[u8; 16]>(),
            0..Kind::ALL.len(),
            proptest::option::of(any::<[u8; 32]>()),
        ),
        (
            proptest::collection::vec(("[a-z_]{0,12}", value()), 0..14),
            value(),
            proptest::collection::vec((extra_key(), value()), 0..4),
            0..3usize,
            proptest::option::of(sigil()),
            limits(),
        ),
    )
        .prop_map(
            |(
                (key, parent, to, (ts, expires), nonce, kind, lineage_proof),
                (attestations, payload, extra, form, from, limits),
            )| Params {
                key,
                parent,
                to,
                ts,
                nonce,
                expires,
                kind: Kind::ALL[kind],
                lineage_proof,
                attestations,
                payload,
                extra,
                from_form: FORMS[form],
                from,
                limits,
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    #[test]
    fn builder_agrees_with_a_full_decode(p in params()) {
        agree(&p);
    }

    #[test]
    fn builder_agrees_at_the_size_limit(p in params(), delta in -2i64..=2) {
        // Sized from the envelope itself: one byte under, at and over.
        let (_, extra) = p.builder();
        let size = p.raw(&extra).bytes().len();
        let limits = Limits {
            max_size: size.saturating_add_signed(delta as isize),
            ..Limits::DEFAULT
        };
        agree(&Params { limits, ..p });
    }
}

fn nested(depth: usize) -> Value {
    (0..depth).fold(Value::Null, |v, _| Value::Array(vec![v]))
}

fn base() -> Params {
    Params {
        key: 1,
        parent: None,
        to: None,
        ts: TS,
        nonce: [7; 16],
        expires: None,
        kind: Kind::Message,
        lineage_proof: None,
        attestations: Vec::new(),
        payload: Value::Null,
        extra: Vec::new(),
        from_form: SigilForm::Default,
        from: None,
        limits: Limits::DEFAULT,
    }
}

#[test]
fn depth_limit_edges_agree() {
    // Payload and extra fields sit at depth 2, attestation values at depth
    // 4; around the default limit (32) and around MAX_NESTING.
    for max_depth in [3, 4, 5, 32, MAX_NESTING - 1, MAX_NESTING, MAX_NESTING + 10] {
        let limits = Limits {
            max_depth,
            ..Limits::DEFAULT
        };
        let top = max_depth.min(MAX_NESTING);
        for depth in top.saturating_sub(4)..=top + 1 {
            let v = nested(depth);
            agree(&Params {
                payload: v.clone(),
                limits,
                ..base()
            });
            agree(&Params {
                extra: vec![("x".into(), v.clone())],
                limits,
                ..base()
            });
            agree(&Params {
                attestations: vec![("t".into(), v)],
                limits,
                ..base()
            });
        }
    }
}

#[test]
fn item_limit_edges_agree() {
    // The top-level map has 9 to 14 P3 entries plus the extras; the
    // signature map 4; an attestation map 2.
    for max_items in 0..20 {
        let limits = Limits {
            max_items,
            ..Limits::DEFAULT
        };
        for n in 0..16 {
            let extra = (0..n).map(|i| (format!("x{i}"), Value::Null)).collect();
            agree(&Params {
                extra,
                limits,
                ..base()
            });
            agree(&Params {
                attestations: (0..n).map(|i| (format!("t{i}"), Value::Null)).collect(),
                limits,
                ..base()
            });
            agree(&Params {
                payload: Value::Array(vec![Value::Null; n]),
                expires: Some(TS),
                to: Some(bob().public_key().sigil(SigilForm::Long)),
                kind: Kind::Birth,
                lineage_proof: Some([3; 32]),
                limits,
                ..base()
            });
        }
    }
}

#[test]
fn expires_before_ts_is_refused_as_before() {
    for (ts, expires) in [(TS, TS - 1), (1, 0), (u64::MAX, u64::MAX - 1)] {
        let p = Params {
            ts,
            expires: Some(expires),
            ..base()
        };
        let err = p
            .builder()
            .0
            .sign_with_rng(&p.signing_key(), &mut TestRng::new(1))
            .unwrap_err();
        let BuildError::Invalid(EnvelopeError(reason)) = &err else {
            panic!("{err:?}")
        };
        assert!(reason.to_string().contains("expires"), "{reason}");
        agree(&p);
    }
}

#[test]
fn map_head_widens_between_body_and_wire() {
    // A genesis body has 7 P3 entries and its wire form 9: with 15 to 17
    // extra fields the map head is one byte in body(E, 0) and two on the
    // wire (24 entries and more); a reply adds one entry to both.
    for n in 12..20 {
        let extra: Vec<(String, Value)> = (0..n)
            .map(|i| {
                (
                    format!("{}{i}", ["a", "k", "q", "z"][i % 4]),
                    Value::Unsigned(i as u64),
                )
            })
            .collect();
        agree(&Params {
            extra: extra.clone(),
            ..base()
        });
        agree(&Params {
            extra,
            parent: Some(([5; 32], [6; 32])),
            ..base()
        });
    }
}
