//! `herald demo --heralds` run as the real binary (PROFILE P14,
//! docs/heralds.md): two witnesses and three Heralds as processes,
//! certifications asked over HTTP, a conversation through a conduit, and
//! the public replay with `verify --heralds`: every sender's key comes from the
//! Heralds, its handle and model certified by 2 of 2; the lying Herald's
//! claim fails the 2-of-3 quorum. Bounded: one minute.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

#[test]
fn demo_with_heralds_certifies_by_quorum_and_the_liar_fails_it() {
    let (dir, text) = support::run_demo("--heralds");
    // Heralds, witnesses and the conduit as processes.
    for line in [
        "witness w1 listening on http://127.0.0.1:",
        "witness w2 listening on http://127.0.0.1:",
        "Herald h1 (h1.example/log) listening on http://127.0.0.1:",
        "Herald h3 (h3.example/log) listening on http://127.0.0.1:",
        "conduit (relay + notary) listening on http://127.0.0.1:",
    ] {
        assert!(text.contains(line), "{line}: {text}");
    }
    // Each agent's key certified by h1 and h2 over HTTP.
    assert_eq!(
        text.matches(": 201, its key certified").count(),
        4,
        "{text}"
    );
    // The honest replay: alice and bob by their certified handles and
    // models, 2 of 2, keys from the Heralds.
    let (honest, liar) = text
        .split_once("the same replay trusting h1, h2 and h3")
        .unwrap();
    assert!(
        honest.contains(
            "valid   alice@acme.com, model claude-x, certified by 2 of 2; key from herald"
        ),
        "{honest}"
    );
    assert!(
        honest
            .contains("valid   bob@acme.com, model claude-y, certified by 2 of 2; key from herald"),
        "{honest}"
    );
    // With the liar listed: claude-x still by 2 (of 3), claude-fake not.
    assert!(
        liar.contains("alice@acme.com, model claude-x, certified by 2 of 3"),
        "{liar}"
    );
    assert!(!liar.contains("model claude-fake, certified"), "{liar}");
    assert!(
        liar.contains("h3's claim (alice runs claude-fake): 1 of 3 Heralds, below the threshold 2: not certified"),
        "{liar}"
    );
    assert!(
        text.contains(
            "every envelope valid, keys from the Heralds; the lying Herald fails the quorum"
        ),
        "{text}"
    );
    // The verifier's inputs are left for the reader to run again.
    for f in [
        "trace.cbor",
        "two.heralds",
        "three.heralds",
        "heralds.policy",
        "conduit.keyring",
    ] {
        assert!(dir.path().join(f).is_file(), "{f}");
    }
}
