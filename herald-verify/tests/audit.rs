// Tests unwrap: a failure is the assertion.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use herald_core::attestation::birth_attestation;
use herald_core::cbor::{Map, Value};
use herald_core::{Envelope, EnvelopeBuilder, ReasonCode, SigningKey, Status};
use herald_testkit::{T0, genesis, key, nonce, reply};
use herald_verify::{AuditOptions, Input, Keyring, Provenance, Report, audit};

fn keyring(keys: &[&SigningKey]) -> Keyring {
    let mut k = Keyring::new();
    for key in keys {
        k.insert(key.public_key(), Provenance::Pinned);
    }
    k
}

fn seq(envs: &[&Envelope]) -> Vec<u8> {
    envs.iter().flat_map(|e| e.as_bytes().to_vec()).collect()
}

fn run(inputs: Vec<(&str, Vec<u8>)>, keys: &Keyring) -> Report {
    let inputs: Vec<Input> = inputs
        .into_iter()
        .map(|(name, bytes)| Input {
            name: name.into(),
            bytes,
        })
        .collect();
    audit(&inputs, keys, &AuditOptions::default())
}

fn codes(r: &herald_verify::EnvelopeReport) -> Vec<ReasonCode> {
    r.reasons.iter().map(|r| r.code).collect()
}

#[test]
fn conversation_with_fan_out_is_valid_and_grouped_into_one_trace() {
    let (a, b, c) = (key(1), key(2), key(3));
    let g = genesis(&a, 0);
    let r1 = reply(&g, &b, 1);
    let r2a = reply(&r1, &a, 2);
    let r2b = reply(&r1, &c, 3);
    let r3 = reply(&r2a, &b, 4);
    let report = run(
        vec![("t", seq(&[&g, &r1, &r2a, &r2b, &r3]))],
        &keyring(&[&a, &b, &c]),
    );
    assert!(report.all_valid(), "{report:#?}");
    assert_eq!(report.summary.valid, 5);
    assert_eq!(report.traces.len(), 1);
    let t = &report.traces[0];
    assert_eq!(t.genesis.as_deref(), Some(hex::encode(g.id()).as_str()));
    let mut leaves = t.leaves.clone();
    leaves.sort();
    let mut want = vec![hex::encode(r2b.id()), hex::encode(r3.id())];
    want.sort();
    assert_eq!(leaves, want);
    assert_eq!((t.valid, t.partial, t.invalid), (5, 0, 0));
    for e in &report.envelopes {
        assert_eq!(e.key_source.map(|k| k.name()), Some("keyring"));
    }
}

#[test]
fn missing_parent_and_cross_trace_parent_replay() {
    let (a, b) = (key(1), key(2));
    let g1 = genesis(&a, 0);
    let g2 = genesis(&a, 1);
    let orphan = reply(&genesis(&b, 9), &b, 2);
    // A reply naming g2 as parent but carrying g1's trace (spec §3.3a).
    let forged = EnvelopeBuilder::reply_to(g2.id(), g1.id(), T0 + 3)
        .nonce(nonce(3))
        .sign(&b)
        .unwrap();
    let report = run(
        vec![("t", seq(&[&g1, &g2, &orphan, &forged]))],
        &keyring(&[&a, &b]),
    );
    assert_eq!(report.envelopes[0].status(), Status::Valid);
    assert_eq!(report.envelopes[1].status(), Status::Valid);
    assert_eq!(codes(&report.envelopes[2]), vec![ReasonCode::MissingParent]);
    assert_eq!(report.envelopes[2].status(), Status::Invalid);
    assert_eq!(codes(&report.envelopes[3]), vec![ReasonCode::TraceMismatch]);
    assert_eq!(report.envelopes[3].status(), Status::Invalid);
    assert!(!report.all_valid());
}

#[test]
fn replay_inside_the_set_flags_every_later_copy() {
    let a = key(1);
    let g = genesis(&a, 0);
    let r = reply(&g, &a, 1);
    // The same nonce again in a different envelope, and the same bytes again.
    let other = EnvelopeBuilder::reply(&g.view(), T0 + 5)
        .nonce(nonce(1))
        .payload(Value::text("different"))
        .sign(&a)
        .unwrap();
    let report = run(vec![("t", seq(&[&g, &r, &other, &r]))], &keyring(&[&a]));
    // The repeated envelope is one DAG node: listed once among the leaves.
    let mut leaves = report.traces[0].leaves.clone();
    leaves.sort();
    let mut want = vec![hex::encode(r.id()), hex::encode(other.id())];
    want.sort();
    assert_eq!(leaves, want);
    let statuses: Vec<Status> = report.envelopes.iter().map(|e| e.status()).collect();
    assert_eq!(
        statuses,
        vec![
            Status::Valid,
            Status::Valid,
            Status::Invalid,
            Status::Invalid
        ]
    );
    assert_eq!(codes(&report.envelopes[2]), vec![ReasonCode::ReplayedNonce]);
    assert_eq!(codes(&report.envelopes[3]), vec![ReasonCode::ReplayedNonce]);
    // Same nonce, different signer: no replay.
    let b = key(2);
    let theirs = EnvelopeBuilder::reply(&g.view(), T0 + 6)
        .nonce(nonce(1))
        .sign(&b)
        .unwrap();
    let report = run(vec![("t", seq(&[&g, &r, &theirs]))], &keyring(&[&a, &b]));
    assert!(report.all_valid());
}

#[test]
fn files_form_one_set_in_argument_order() {
    let a = key(1);
    let g = genesis(&a, 0);
    let r = reply(&g, &a, 1);
    let report = run(
        vec![("reply", seq(&[&r])), ("genesis", seq(&[&g]))],
        &keyring(&[&a]),
    );
    assert!(report.all_valid());
    assert_eq!(report.envelopes[0].id, Some(hex::encode(r.id())));
    assert_eq!(report.envelopes[0].source.input, "reply");
}

#[test]
fn malformed_envelope_does_not_hide_the_next_ones() {
    let a = key(1);
    let g = genesis(&a, 0);
    let r = reply(&g, &a, 1);
    // A well-formed but non-canonical map (keys unsorted) between two envelopes.
    let bad = vec![0xa2, 0x61, 0x62, 0x01, 0x61, 0x61, 0x02];
    let mut bytes = g.as_bytes().to_vec();
    bytes.extend_from_slice(&bad);
    bytes.extend_from_slice(r.as_bytes());
    let report = run(vec![("t", bytes)], &keyring(&[&a]));
    assert_eq!(report.envelopes.len(), 3);
    assert_eq!(report.envelopes[0].status(), Status::Valid);
    assert_eq!(report.envelopes[1].status(), Status::Invalid);
    assert_eq!(report.envelopes[1].id, None);
    assert_eq!(codes(&report.envelopes[1]), vec![ReasonCode::Malformed]);
    assert_eq!(report.envelopes[2].status(), Status::Valid);
}

#[test]
fn truncated_empty_and_json_inputs_are_one_malformed_entry() {
    let a = key(1);
    let g = genesis(&a, 0);
    let r = reply(&g, &a, 1);
    let mut truncated = seq(&[&g, &r]);
    truncated.truncate(g.as_bytes().len() + 10);
    let report = run(vec![("t", truncated)], &keyring(&[&a]));
    assert_eq!(report.envelopes.len(), 2);
    assert_eq!(report.envelopes[0].status(), Status::Valid);
    assert_eq!(report.envelopes[1].id, None);
    assert_eq!(codes(&report.envelopes[1]), vec![ReasonCode::Malformed]);
    assert!(
        report.envelopes[1].reasons[0].detail.contains("truncated"),
        "{:?}",
        report.envelopes[1]
    );

    let report = run(vec![("empty", Vec::new())], &keyring(&[&a]));
    assert_eq!(report.envelopes.len(), 1);
    assert_eq!(report.envelopes[0].status(), Status::Invalid);
    assert!(report.envelopes[0].reasons[0].detail.contains("empty"));
    assert!(!report.all_valid());

    let report = run(
        vec![("j", br#"{"v": "herald/0.2"}"#.to_vec())],
        &keyring(&[&a]),
    );
    assert_eq!(report.envelopes.len(), 1);
    assert_eq!(report.envelopes[0].status(), Status::Invalid);
    assert!(
        report.envelopes[0].reasons[0]
            .detail
            .contains("looks like JSON")
    );
}

#[test]
fn unknown_signer_without_a_key() {
    let a = key(1);
    let g = genesis(&a, 0);
    let report = run(vec![("t", seq(&[&g]))], &Keyring::new());
    assert_eq!(codes(&report.envelopes[0]), vec![ReasonCode::UnknownSigner]);
    assert_eq!(report.envelopes[0].status(), Status::Invalid);
    assert_eq!(report.envelopes[0].key_source, None);
}

#[test]
fn keys_learned_from_a_birth_are_marked_birth() {
    let a = key(1);
    let birth = EnvelopeBuilder::genesis(T0)
        .kind(herald_core::Kind::Birth)
        .nonce(nonce(0))
        .attest(
            "birth",
            birth_attestation(&a.public_key(), "test agent", &[]),
        )
        .sign(&a)
        .unwrap();
    let r = reply(&birth, &a, 1);
    let report = run(vec![("t", seq(&[&birth, &r]))], &Keyring::new());
    assert!(report.all_valid(), "{report:#?}");
    assert_eq!(
        report.envelopes[0].key_source.map(|k| k.name()),
        Some("birth")
    );
    assert_eq!(
        report.envelopes[1].key_source.map(|k| k.name()),
        Some("birth")
    );
    // A pinned key stays "keyring".
    let report = run(vec![("t", seq(&[&birth, &r]))], &keyring(&[&a]));
    assert_eq!(
        report.envelopes[1].key_source.map(|k| k.name()),
        Some("keyring")
    );
}

#[test]
fn forged_parent_cycle_terminates_and_is_reported() {
    // Two envelopes whose parents name each other: impossible with honest
    // ids, so the ids are forged (id_mismatch), and the walk must not loop.
    // P13 revision 2: a forged id names nobody, so neither is the other's
    // parent: both report missing_parent and both are leaves.
    let a = key(1);
    let x = [0x11u8; 32];
    let y = [0x22u8; 32];
    let mk = |id: [u8; 32], parent: [u8; 32]| {
        let mut m = Map::new();
        m.insert("v", Value::text("herald/0.2"));
        m.insert("id", Value::Bytes(id.to_vec()));
        m.insert(
            "from",
            Value::Text(a.sigil(herald_core::SigilForm::Default).to_string()),
        );
        m.insert("parent", Value::Bytes(parent.to_vec()));
        m.insert("trace", Value::Bytes(x.to_vec()));
        m.insert("ts", Value::Unsigned(T0));
        m.insert("nonce", Value::Bytes(id[..16].to_vec()));
        m.insert("payload", Value::Null);
        m.insert("signatures", Value::Array(vec![]));
        Value::Map(m).to_vec()
    };
    let mut bytes = mk(x, y);
    bytes.extend(mk(y, x));
    let report = run(vec![("cycle", bytes)], &keyring(&[&a]));
    assert_eq!(report.envelopes.len(), 2);
    for e in &report.envelopes {
        assert_eq!(e.status(), Status::Invalid);
        assert!(e.has(ReasonCode::IdMismatch));
        assert!(e.has(ReasonCode::OriginMissing));
        assert!(e.has(ReasonCode::MissingParent));
    }
    assert_eq!(report.traces.len(), 1);
    assert_eq!(report.traces[0].leaves.len(), 2);
}

#[test]
fn a_100_000_deep_chain_neither_recurses_nor_hangs() {
    let a = key(1);
    let g = genesis(&a, 0);
    let mut bytes = g.as_bytes().to_vec();
    let mut last = g;
    for n in 1..100_000u64 {
        let next = reply(&last, &a, n);
        bytes.extend_from_slice(next.as_bytes());
        last = next;
    }
    // Verify on a small stack: nothing may recurse per envelope.
    let keys = keyring(&[&a]);
    let report = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(move || run(vec![("chain", bytes)], &keys))
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(report.summary.valid, 100_000);
    assert_eq!(report.traces.len(), 1);
    assert_eq!(report.traces[0].leaves, vec![hex::encode(last.id())]);
}

#[test]
fn max_envelopes_limit_reports_the_rest_as_malformed() {
    let a = key(1);
    let g = genesis(&a, 0);
    let r = reply(&g, &a, 1);
    let r2 = reply(&r, &a, 2);
    let inputs = vec![Input {
        name: "t".into(),
        bytes: seq(&[&g, &r, &r2]),
    }];
    let opts = AuditOptions {
        max_envelopes: 2,
        ..AuditOptions::default()
    };
    let report = audit(&inputs, &keyring(&[&a]), &opts);
    assert_eq!(report.envelopes.len(), 3);
    assert_eq!(report.envelopes[2].id, None);
    assert!(
        report.envelopes[2].reasons[0]
            .detail
            .contains("more than 2")
    );
}

#[test]
fn json_has_the_cli_md_shape() {
    let a = key(1);
    let g = genesis(&a, 0);
    let mut bytes = seq(&[&g]);
    bytes.push(0x1c); // reserved additional information: unsplittable
    let report = run(vec![("t", bytes)], &keyring(&[&a]));
    let json: serde_json::Value =
        serde_json::from_str(&serde_json::to_string(&report).unwrap()).unwrap();
    let envs = json["envelopes"].as_array().unwrap();
    assert_eq!(envs.len(), 2);
    assert_eq!(envs[0]["status"], "valid");
    assert_eq!(envs[0]["id"], hex::encode(g.id()));
    assert_eq!(
        envs[0]["from"],
        a.sigil(herald_core::SigilForm::Default).to_string()
    );
    assert_eq!(envs[0]["reasons"], serde_json::json!([]));
    assert_eq!(envs[0]["key_source"], "keyring");
    assert!(envs[1]["id"].is_null());
    assert_eq!(envs[1]["status"], "invalid");
    assert_eq!(envs[1]["reasons"][0]["code"], "malformed");
    assert!(envs[1]["reasons"][0].get("index").is_none());
    let t = &json["traces"][0];
    assert_eq!(t["trace"], hex::encode(g.id()));
    assert_eq!(t["genesis"], hex::encode(g.id()));
    assert_eq!(t["leaves"], serde_json::json!([hex::encode(g.id())]));
    assert_eq!(
        json["summary"],
        serde_json::json!({"valid": 1, "partial": 0, "invalid": 1})
    );
}

#[test]
fn policy_required_scope_gives_partial() {
    let (a, h) = (key(1), key(7));
    let g = genesis(&a, 0);
    let approved = g
        .cosign(&h, herald_core::Scope::HumanApproval, None)
        .unwrap();
    let inputs = vec![Input {
        name: "t".into(),
        bytes: seq(&[&g]),
    }];
    let opts = AuditOptions {
        required_scopes: vec![herald_core::Scope::HumanApproval],
        ..AuditOptions::default()
    };
    let report = audit(&inputs, &keyring(&[&a, &h]), &opts);
    assert_eq!(report.envelopes[0].status(), Status::Partial);
    assert_eq!(
        codes(&report.envelopes[0]),
        vec![ReasonCode::RequiredSignatureMissing]
    );
    let inputs = vec![Input {
        name: "t".into(),
        bytes: seq(&[&approved]),
    }];
    let report = audit(&inputs, &keyring(&[&a, &h]), &opts);
    assert!(report.all_valid());
}

/// An item that does not decode as an envelope (here an unsupported `v`)
/// still names the `id` and `from` it carries, and only those
/// that parse.
#[test]
fn an_undecodable_envelope_names_its_id_and_from() {
    let a = key(1);
    let g = genesis(&a, 0);
    let edit = |v: Value, from: Value| {
        let Value::Map(mut m) = Value::from(&herald_core::cbor::decode(g.as_bytes()).unwrap())
        else {
            panic!("an envelope is a map")
        };
        m.insert("v", v);
        m.insert("from", from);
        Value::Map(m).to_vec()
    };
    let sigil = a.sigil(herald_core::SigilForm::Default).to_string();
    let r = run(
        vec![
            ("v", edit(Value::text("0.3"), Value::text(sigil.clone()))),
            (
                "junk-from",
                edit(Value::text("0.3"), Value::text("not a sigil")),
            ),
        ],
        &keyring(&[&a]),
    );
    assert!(codes(&r.envelopes[0]).contains(&ReasonCode::UnsupportedVersion));
    assert_eq!(r.envelopes[0].from.as_deref(), Some(sigil.as_str()));
    assert_eq!(
        r.envelopes[0].id.as_deref(),
        Some(herald_verify::hex(&g.id()).as_str())
    );
    assert_eq!(r.envelopes[1].from, None);
}

/// An unknown top-level field is a warning whose detail names the field.
#[test]
fn an_unknown_field_is_named() {
    let a = key(1);
    let env = EnvelopeBuilder::genesis(T0)
        .nonce(nonce(7))
        .payload(Value::text("hi"))
        .extra_field("x-trace-note", Value::text("kept"))
        .unwrap()
        .sign(&a)
        .unwrap();
    let r = run(vec![("x", seq(&[&env]))], &keyring(&[&a]));
    assert_eq!(r.envelopes[0].status(), Status::Valid);
    let reason = &r.envelopes[0].reasons[0];
    assert_eq!(reason.code, ReasonCode::UnknownField);
    assert!(
        reason.detail.starts_with("\"x-trace-note\": "),
        "{}",
        reason.detail
    );
}

/// `env` with a co-signature by a key the verifier does not know appended:
/// what anyone can make of a real envelope (PROFILE P10 revision 3).
fn junk_cosigned(env: &Envelope) -> Envelope {
    env.clone()
        .cosign(&key(99), herald_core::Scope::HumanApproval, None)
        .unwrap()
}

/// PROFILE P10 revision 3, trace audit: the pair goes to the first
/// envelope that would be valid apart from the replay rule, whatever the
/// order of a junk-co-signed copy and the real envelope.
#[test]
fn a_junk_cosigned_copy_never_takes_the_pair_from_the_real_envelope() {
    let a = key(1);
    let real = genesis(&a, 0);
    let copy = junk_cosigned(&real);
    let keys = keyring(&[&a]);
    for (order, real_at) in [([&copy, &real], 1), ([&real, &copy], 0)] {
        let report = run(vec![("t", seq(&order))], &keys);
        let (r, c) = (&report.envelopes[real_at], &report.envelopes[1 - real_at]);
        assert_eq!(r.status(), Status::Valid, "real at {real_at}: {r:?}");
        assert!(r.reasons.is_empty(), "{r:?}");
        assert_eq!(
            codes(c),
            vec![ReasonCode::UnknownSigner, ReasonCode::ReplayedNonce],
            "real at {real_at}"
        );
        assert_eq!(c.reasons[0].index, Some(1));
        assert!(
            c.reasons[1].detail.contains(&hex::encode(real.id())),
            "{}",
            c.reasons[1].detail
        );
    }
}

/// When no envelope with the pair would be valid, it goes to the first
/// whose origin verifies; a forgery before it never claims and is no
/// replay, and the same bytes twice still make the second a replay.
#[test]
fn without_a_valid_envelope_the_first_whose_origin_verifies_claims() {
    let a = key(1);
    let real = genesis(&a, 0);
    let copy = junk_cosigned(&real);
    let other_copy = real
        .clone()
        .cosign(&key(98), herald_core::Scope::ToolSandbox, None)
        .unwrap();
    // A forgery: the real envelope with its origin signature broken.
    let sig = *real.view().signatures().next().unwrap().unwrap().sig;
    let mut forged = real.as_bytes().to_vec();
    let at = forged.windows(64).position(|w| w == sig).unwrap();
    forged[at + 5] ^= 1;
    let forged = Envelope::from_bytes(forged).unwrap();
    let keys = keyring(&[&a]);
    let report = run(
        vec![("t", seq(&[&forged, &copy, &other_copy, &copy]))],
        &keys,
    );
    let e = &report.envelopes;
    assert_eq!(codes(&e[0]), vec![ReasonCode::BadSignature]);
    assert_eq!(codes(&e[1]), vec![ReasonCode::UnknownSigner]);
    assert_eq!(e[1].status(), Status::Partial);
    for later in &e[2..] {
        assert_eq!(
            codes(later),
            vec![ReasonCode::UnknownSigner, ReasonCode::ReplayedNonce]
        );
    }
    // With the real envelope last, it takes the pair from all of them.
    let report = run(
        vec![("t", seq(&[&forged, &copy, &other_copy, &real, &real]))],
        &keys,
    );
    let e = &report.envelopes;
    assert_eq!(codes(&e[0]), vec![ReasonCode::BadSignature]);
    for copy in &e[1..3] {
        assert_eq!(
            codes(copy),
            vec![ReasonCode::UnknownSigner, ReasonCode::ReplayedNonce]
        );
    }
    assert_eq!(e[3].status(), Status::Valid, "{:?}", e[3]);
    assert_eq!(codes(&e[4]), vec![ReasonCode::ReplayedNonce]);
}

/// A key a resolution found (PROFILE P15) is reported `key_source: "dns"`
/// with its handle and DNSSEC verdict (CLI.md *Resolution and Heralds*);
/// a key that was only pinned says neither.
#[test]
fn a_resolved_key_reports_its_handle() {
    let (a, b) = (key(1), key(2));
    let (ga, gb) = (genesis(&a, 0), genesis(&b, 1));
    let mut keys = keyring(&[&b]);
    keys.insert_resolved(
        a.public_key(),
        Provenance::Dns,
        Some(herald_verify::ResolvedAt::new(
            "alice@acme.com".into(),
            Some(true),
        )),
    );
    let report = run(vec![("t", seq(&[&ga, &gb]))], &keys);
    let json: serde_json::Value =
        serde_json::from_str(&serde_json::to_string(&report).unwrap()).unwrap();
    let envs = json["envelopes"].as_array().unwrap();
    assert_eq!(envs[0]["key_source"], "dns");
    assert_eq!(envs[0]["handle"], "alice@acme.com");
    assert_eq!(envs[0]["dnssec"], true);
    assert_eq!(envs[0]["status"], "valid");
    assert_eq!(envs[1]["key_source"], "keyring");
    assert!(envs[1].get("handle").is_none() && envs[1].get("dnssec").is_none());
    // The compact writer (`verify --json`) says the same.
    let inputs = [Input {
        name: "t".into(),
        bytes: seq(&[&ga, &gb]),
    }];
    let compact = herald_verify::audit_compact(&inputs, &keys, &AuditOptions::default());
    let mut out = Vec::new();
    compact.write_document(&mut out).unwrap();
    let mut expected = Vec::new();
    report.write_document(&mut expected).unwrap();
    assert_eq!(
        String::from_utf8(out).unwrap(),
        String::from_utf8(expected).unwrap()
    );
}
