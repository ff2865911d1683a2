//! Heralds through real processes (PROFILE P14; CLI.md *Resolution and
//! Heralds*; CONDUIT.md `herald heraldry serve`): three `herald heraldry
//! serve` with different keys, two `herald witness serve` cosigning their
//! logs under a 2-of-2 witness policy; the subject asks two of the three
//! for a `key` certification; `herald verify --heralds` and `herald
//! resolve --heralds` then fetch from all three (`GET
//! /v1/certifications/{sigil}`) and apply the list's threshold: 2 of 3
//! resolves the signer (`key_source: "herald"`), 3 of 3 does not.
//! Bounded: loopback only, every child killed when dropped.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::time::Duration;

use herald_conduit::client;
use herald_core::{EnvelopeBuilder, SigilForm, SigningKey};
use support::heraldry::{self, key_request, log_key, policy_text};
use support::{codes, herald};

const T: Duration = Duration::from_secs(10);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verify_and_resolve_fetch_from_real_heralds_and_count_a_quorum() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let hs: Vec<(String, SigningKey, String)> = (1..=3u8)
        .map(|i| {
            (
                format!("h{i}"),
                SigningKey::from_seed(&[0x50 + i; 32]),
                format!("herald{i}.example/log"),
            )
        })
        .collect();
    let logs: Vec<(String, String)> = hs
        .iter()
        .map(|(_, k, o)| (o.clone(), log_key(k, o)))
        .collect();
    let (w1, w1key) = heraldry::witness(d, "w1", &logs);
    let (w2, w2key) = heraldry::witness(d, "w2", &logs);
    let witnesses = vec![format!("{w1key}={}", w1.1), format!("{w2key}={}", w2.1)];
    let servers: Vec<heraldry::Herald> = hs
        .iter()
        .map(|(name, k, o)| heraldry::serve(d, name, k, o, &witnesses, &["--batch-ms", "200"]))
        .collect();
    let policy = policy_text(
        &servers
            .iter()
            .map(|s| (log_key(&s.key, &s.origin), None))
            .collect::<Vec<_>>(),
        &[("w1", &w1key), ("w2", &w2key)],
        2,
    );
    std::fs::write(d.join("policy.txt"), &policy).unwrap();
    let list = |threshold: usize| {
        let mut text = String::new();
        for s in &servers {
            text.push_str(&format!(
                "herald {} {} {}\n",
                herald_verify::key_line(&s.key.public_key()),
                s.origin,
                s.url()
            ));
        }
        text.push_str(&format!("threshold {threshold}\n"));
        text
    };
    std::fs::write(d.join("two.txt"), list(2)).unwrap();
    std::fs::write(d.join("three.txt"), list(3)).unwrap();

    // Alice asks the first two Heralds to certify her key; the third
    // never heard of her.
    let alice = SigningKey::from_seed(&[0x61; 32]);
    for s in &servers[..2] {
        let r = client::post(s.addr, "/v1/certify", &key_request(&alice, &s.key), T)
            .await
            .unwrap();
        assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    }
    let said = EnvelopeBuilder::genesis(support::conduit::now())
        .payload(herald_core::cbor::Value::text("hello"))
        .sign(&alice)
        .unwrap();
    std::fs::write(d.join("trace.cbor"), said.as_bytes()).unwrap();

    let run = herald(
        d,
        &[
            "verify",
            "trace.cbor",
            "--json",
            "--heralds",
            "two.txt",
            "--log-policy",
            "policy.txt",
        ],
    );
    run.expect(0);
    let entry = &run.json()["envelopes"][0];
    assert_eq!(entry["key_source"], "herald");
    let certified = entry["certified"].as_array().unwrap();
    assert_eq!(certified.len(), 1, "{entry}");
    assert_eq!(certified[0]["claim"], "key");
    assert_eq!(
        certified[0]["value"],
        herald_verify::hex(alice.public_key().as_bytes())
    );
    let mut by: Vec<String> = certified[0]["heralds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h.as_str().unwrap().to_owned())
        .collect();
    by.sort();
    let mut want: Vec<String> = servers[..2]
        .iter()
        .map(|s| s.key.sigil(SigilForm::Default).to_string())
        .collect();
    want.sort();
    assert_eq!(by, want);

    // Three of three: the third Herald never certified her.
    let run = herald(
        d,
        &[
            "verify",
            "trace.cbor",
            "--json",
            "--heralds",
            "three.txt",
            "--log-policy",
            "policy.txt",
        ],
    );
    run.expect(1);
    assert_eq!(codes(&run.json()["envelopes"][0]), ["unknown_signer[0]"]);

    let sigil = alice.sigil(SigilForm::Default).to_string();
    let run = herald(
        d,
        &[
            "resolve",
            &sigil,
            "--heralds",
            "two.txt",
            "--log-policy",
            "policy.txt",
            "--json",
            "--dns",
            "127.0.0.1:9",
        ],
    );
    run.expect(0);
    let answer: serde_json::Value =
        serde_json::from_str(run.out().lines().next().unwrap()).unwrap();
    assert_eq!(answer["source"], "herald");
    assert_eq!(
        answer["key"],
        herald_verify::hex(alice.public_key().as_bytes())
    );
    assert_eq!(answer["certified"][0]["claim"], "key");
    drop((servers, w1, w2));
}
