//! The inspector session with Heralds (PROFILE P14): certification items
//! judged, not audited; claims certified at the list's threshold.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use herald_core::payload::Claim;
use herald_core::{EnvelopeBuilder, SigilForm};
use herald_testkit::heralds::{TestHerald, Witness, model, policy};
use herald_testkit::{T0, key, nonce};

use super::*;

/// Alice's message, and the policy, list (2 of 2) and items of two
/// Heralds certifying her key and model `m-1`.
fn world() -> (Vec<u8>, String, String, Vec<u8>) {
    let alice = key(1);
    let said = EnvelopeBuilder::genesis(T0 + 60)
        .nonce(nonce(1))
        .payload(herald_core::cbor::Value::text("hello"))
        .sign(&alice)
        .unwrap();
    let mut heralds = [TestHerald::new(11), TestHerald::new(12)];
    let w = Witness::new("w1", 31);
    let subject = alice.sigil(SigilForm::Default);
    let real = *alice.public_key().as_bytes();
    let mut items = Vec::new();
    for h in &mut heralds {
        let es = [
            h.certify(subject, &Claim::Key(&real), T0, None),
            h.certify(subject, &model("m-1"), T0, None),
        ];
        items.extend(es.iter().map(|e| h.item(e, &[&w])));
    }
    let all: Vec<&TestHerald> = heralds.iter().collect();
    (
        said.as_bytes().to_vec(),
        policy(&all, &[&w], "", "w1"),
        herald_testkit::heralds::list(&all, 2),
        CertificationItem::encode_sequence(&items),
    )
}

fn entry(json: &str) -> serde_json::Value {
    let doc: serde_json::Value = serde_json::from_str(json).unwrap();
    doc["envelopes"][0].clone()
}

#[test]
fn heralds_certify_the_sender_and_their_items_are_not_audited() {
    let (trace, policy, list, items) = world();
    let mut s = Session::new();
    s.add_input("trace.cbor", trace);
    s.add_input("certs.cbor", items);
    s.set_log_policy("policy", policy.as_bytes()).unwrap();
    let listed: serde_json::Value =
        serde_json::from_str(&s.set_heralds("list", list.as_bytes()).unwrap()).unwrap();
    assert_eq!(listed["threshold"], 2);
    assert_eq!(listed["heralds"].as_array().unwrap().len(), 2);
    let doc: serde_json::Value = serde_json::from_str(&s.verify(Some(T0 + 3_600))).unwrap();
    // One entry: the items are judged, not listed as envelopes.
    assert_eq!(doc["envelopes"].as_array().unwrap().len(), 1);
    let e = &doc["envelopes"][0];
    assert_eq!(e["status"], "valid");
    assert_eq!(e["key_source"], "herald");
    let claims: Vec<&str> = e["certified"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["claim"].as_str().unwrap())
        .collect();
    assert_eq!(claims.len(), 2, "{e}");
    assert!(claims.contains(&"key") && claims.contains(&"model"), "{e}");
    let judged: Vec<serde_json::Value> = serde_json::from_str(&s.certifications()).unwrap();
    assert_eq!(judged.len(), 4);
    assert!(judged.iter().all(|j| j["counts"] == true), "{judged:?}");
}

#[test]
fn without_heralds_or_a_time_nothing_is_certified() {
    let (trace, policy, list, items) = world();
    let mut s = Session::new();
    s.add_input("trace.cbor", trace);
    s.add_input("certs.cbor", items);
    // A list needs its policy first.
    assert!(
        s.set_heralds("list", list.as_bytes())
            .unwrap_err()
            .contains("tlog-policy")
    );
    let e = entry(&s.verify(Some(T0 + 3_600)));
    assert!(e.get("certified").is_none(), "{e}");
    s.set_log_policy("policy", policy.as_bytes()).unwrap();
    s.set_heralds("list", list.as_bytes()).unwrap();
    let e = entry(&s.verify(None));
    assert!(e.get("certified").is_none(), "{e}");
    assert_eq!(s.certifications(), "[]");
}

#[test]
fn a_bad_policy_line_is_named() {
    let mut s = Session::new();
    let err = s.set_log_policy("p.txt", b"log nonsense\n").unwrap_err();
    assert!(err.starts_with("p.txt: "), "{err}");
}
