//! `herald heraldry serve|certify|monitor` through the binary (CONDUIT.md
//! `herald heraldry serve`, PROFILE P14): three Heralds with different
//! keys, two `herald witness serve` processes cosigning their logs, a
//! subject asking each for a `key` certification, the answers checked as a
//! verifier checks them (origin, tlog-proof, checkpoint under a 2-of-2
//! witness policy), the operator's offline certify refused while the
//! server holds the state, and a monitor listing what each Herald said.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::time::Duration;

use herald_conduit::client;
use herald_core::cbor::Value;
use herald_core::{SigilForm, SigningKey};
use herald_tlog::Policy;
use support::heraldry::{
    self, check_item, item, key_request, log_key, policy_text, refusal_reason, request,
};

const T: Duration = Duration::from_secs(10);

fn heralds() -> Vec<(&'static str, SigningKey, String)> {
    (1..=3u8)
        .map(|i| {
            (
                ["h1", "h2", "h3"][usize::from(i - 1)],
                SigningKey::from_seed(&[0x40 + i; 32]),
                format!("herald{i}.example/log"),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_heralds_two_witnesses_certify_and_a_monitor_sees_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let hs = heralds();
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
            .map(|s| (log_key(&s.key, &s.origin), Some(s.url())))
            .collect::<Vec<_>>(),
        &[("w1", &w1key), ("w2", &w2key)],
        2,
    );
    std::fs::write(d.join("policy"), &policy).unwrap();
    let policy = Policy::parse(policy.as_bytes()).unwrap();

    let alice = SigningKey::from_seed(&[0x11; 32]);
    let alice_sigil = alice.sigil(SigilForm::Default).to_string();
    for s in &servers {
        let req = key_request(&alice, &s.key);
        let r = client::post(s.addr, "/v1/certify", &req, T).await.unwrap();
        assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
        let (cert, size) = check_item(&r.body, &s.key, &policy);
        assert!(size >= 1);
        // The certification replies to the request (P14) and says what
        // was asked.
        let env = herald_core::EnvelopeRef::decode(&cert).unwrap();
        assert_eq!(
            env.parent(),
            Some(herald_core::EnvelopeRef::decode(&req).unwrap().id())
        );
        let c = herald_heraldry::Certification::of(&env).unwrap();
        assert_eq!(
            (c.claim.as_str(), c.subject.to_string()),
            ("key", alice_sigil.clone())
        );
        assert_eq!(c.value, Value::from(alice.public_key().as_bytes().to_vec()));
        assert!(c.not_after.is_some());
        // The same request again: the same certification, not a second.
        let again = client::post(s.addr, "/v1/certify", &req, T).await.unwrap();
        assert_eq!(again.status, 201);
        assert_eq!(item(&again.body).0, cert);
        // GET /v1/certifications/{sigil}: it, with a proof.
        let g = client::get(s.addr, &format!("/v1/certifications/{alice_sigil}"), T)
            .await
            .unwrap();
        assert_eq!(g.status, 200);
        assert_eq!(check_item(&g.body, &s.key, &policy).0, cert);
        let wk = client::get(s.addr, "/.well-known/herald", T).await.unwrap();
        let wk: serde_json::Value = serde_json::from_slice(&wk.body).unwrap();
        assert_eq!(wk["origin"], s.origin.as_str());
        assert_eq!(wk["log_key"], log_key(&s.key, &s.origin).as_str());
    }

    // The operator's offline certify is refused while the server runs.
    let offline_certify = || {
        support::herald(
            d,
            &[
                "heraldry",
                "certify",
                "--key",
                "h1.key",
                "--state",
                "h1-state",
                "--subject",
                &alice_sigil,
                "--claim",
                "model",
                "--value",
                r#"{"name":"claude-x"}"#,
            ],
        )
    };
    let run = offline_certify();
    run.expect(2);
    assert!(
        run.stderr.contains("held by another process"),
        "{}",
        run.stderr
    );

    // Stopped, h1's operator certifies alice's model; restarted, h1 serves it.
    let mut servers = servers;
    let h1 = servers.remove(0);
    drop(h1);
    let run = offline_certify();
    run.expect(0);
    assert!(
        run.out()
            .starts_with("certified model {\"name\":\"claude-x\"} of "),
        "{}",
        run.out()
    );
    let (_, k1, o1) = &hs[0];
    let h1 = heraldry::serve(d, "h1", k1, o1, &witnesses, &["--batch-ms", "200"]);
    servers.insert(0, h1);
    let policy = policy_text(
        &servers
            .iter()
            .map(|s| (log_key(&s.key, &s.origin), Some(s.url())))
            .collect::<Vec<_>>(),
        &[("w1", &w1key), ("w2", &w2key)],
        2,
    );
    std::fs::write(d.join("policy"), &policy).unwrap();
    // Its checkpoint covers the operator's entry within a batch or two.
    let deadline = std::time::Instant::now() + T;
    loop {
        let g = client::get(
            servers[0].addr,
            &format!("/v1/certifications/{alice_sigil}"),
            T,
        )
        .await
        .unwrap();
        let n = herald_verify::split_sequence(&g.body, 1 << 20, 64).len();
        if n == 2 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the operator's certification never served"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // The monitor: every certification about alice, newest first.
    let run = support::herald(
        d,
        &[
            "heraldry",
            "monitor",
            "--log-policy",
            "policy",
            "--subject",
            &alice_sigil,
            "--json",
        ],
    );
    run.expect(0);
    let j = run.json();
    assert_eq!(j["logs"].as_array().unwrap().len(), 3, "{j}");
    assert!(
        j["logs"]
            .as_array()
            .unwrap()
            .iter()
            .all(|l| l["quorum"] == true),
        "{j}"
    );
    let found = j["certifications"].as_array().unwrap();
    assert_eq!(found.len(), 4, "{j}");
    assert_eq!(found[0]["claim"], "model", "newest first: {j}");
    assert_eq!(found[0]["value"]["name"], "claude-x");
    assert!(found.iter().all(|f| f["subject"] == alice_sigil.as_str()));
    let text = support::herald(
        d,
        &[
            "heraldry",
            "monitor",
            "--log-policy",
            "policy",
            "--subject",
            &alice_sigil,
        ],
    );
    text.expect(0);
    assert!(text.out().contains("cosigned by w1, w2"), "{}", text.out());
    drop((w1, w2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_requests_are_refused_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let key = SigningKey::from_seed(&[0x51; 32]);
    let s = heraldry::serve(
        d,
        "h",
        &key,
        "hostile.example/log",
        &[],
        &[
            "--batch-ms",
            "100",
            "--deadline-ms",
            "1000",
            "--max-body",
            "4096",
        ],
    );
    let alice = SigningKey::from_seed(&[0x11; 32]);
    let mallory = SigningKey::from_seed(&[0x66; 32]);

    // A claim it cannot check itself: a signed refusal.
    let r = client::post(
        s.addr,
        "/v1/certify",
        &request(&alice, &key, "model", Value::text("claude-x")),
        T,
    )
    .await
    .unwrap();
    assert_eq!(r.status, 422);
    assert_eq!(refusal_reason(&r.body, &key), "unsupported_claim");

    // Wrongly signed: mallory signs a request claiming to be from alice.
    let genuine = key_request(&alice, &key);
    let forged = heraldry::forged(&genuine, &alice, &mallory, &key);
    let r = client::post(s.addr, "/v1/certify", &forged, T)
        .await
        .unwrap();
    assert_eq!(r.status, 422);
    assert_eq!(refusal_reason(&r.body, &key), "bad_signature");

    // A key the sender's sigil does not name.
    let r = client::post(
        s.addr,
        "/v1/certify",
        &request(
            &alice,
            &key,
            "key",
            Value::from(mallory.public_key().as_bytes().to_vec()),
        ),
        T,
    )
    .await
    .unwrap();
    assert_eq!(r.status, 422);
    assert_eq!(refusal_reason(&r.body, &key), "key_mismatch");

    // Addressed to someone else.
    let r = client::post(s.addr, "/v1/certify", &key_request(&alice, &mallory), T)
        .await
        .unwrap();
    assert_eq!(refusal_reason(&r.body, &key), "not_for_this_herald");

    // Unsigned / not an envelope at all: 400 problem, no refusal to address.
    let r = client::post(s.addr, "/v1/certify", b"\xa1\x61x\x01", T)
        .await
        .unwrap();
    assert_eq!(r.status, 400);
    assert_eq!(r.content_type(), Some("application/problem+json"));

    // Past --max-body: a signed too_large refusal from its head; far
    // past it, refused by length before a byte is read (as the conduit);
    // the server still answers.
    let big = request(&alice, &key, "key", Value::from(vec![7u8; 6000]));
    let r = client::post(s.addr, "/v1/certify", &big, T).await.unwrap();
    assert_eq!(r.status, 413);
    assert_eq!(refusal_reason(&r.body, &key), "too_large");
    let huge = request(&alice, &key, "key", Value::from(vec![7u8; 512 << 10]));
    let r = client::post(s.addr, "/v1/certify", &huge, T).await.unwrap();
    assert_eq!(r.status, 413);

    // A slow client: the head, then half the body, then nothing: a
    // signed `deadline` refusal within the deadline, nothing certified.
    let slow = key_request(&alice, &key);
    let addr = s.addr;
    let started = std::time::Instant::now();
    let answer = tokio::task::spawn_blocking(move || {
        use std::io::{Read, Write};
        let mut c = std::net::TcpStream::connect(addr).unwrap();
        c.set_read_timeout(Some(T)).unwrap();
        write!(
            c,
            "POST /v1/certify HTTP/1.1\r\nHost: x\r\nContent-Type: application/cbor\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            slow.len()
        )
        .unwrap();
        c.write_all(&slow[..slow.len() / 2]).unwrap();
        let mut out = Vec::new();
        let _ = c.read_to_end(&mut out);
        out
    })
    .await
    .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    let text = String::from_utf8_lossy(&answer);
    assert!(text.starts_with("HTTP/1.1 503"), "{text}");
    let body = &answer[answer.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4..];
    assert_eq!(refusal_reason(body, &key), "deadline");

    // A genuine request still works after all that.
    let r = client::post(s.addr, "/v1/certify", &key_request(&alice, &key), T)
        .await
        .unwrap();
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
}

/// A Herald that forks its log: one key and origin, two states, each
/// shown to a different party. Both trees have one entry and different
/// roots; the monitor, reading the log at its policy URL and at the other
/// place, reports the split view with evidence anyone checks offline, and
/// exits 1.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forked_log_is_caught_by_the_monitor() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let key = SigningKey::from_seed(&[0x52; 32]);
    let origin = "forked.example/log";
    let a = heraldry::serve(d, "a", &key, origin, &[], &["--batch-ms", "50"]);
    let b = heraldry::serve(d, "b", &key, origin, &[], &["--batch-ms", "50"]);
    let alice = SigningKey::from_seed(&[0x11; 32]);
    let bob = SigningKey::from_seed(&[0x22; 32]);
    let ra = client::post(a.addr, "/v1/certify", &key_request(&alice, &key), T)
        .await
        .unwrap();
    let rb = client::post(b.addr, "/v1/certify", &key_request(&bob, &key), T)
        .await
        .unwrap();
    assert_eq!((ra.status, rb.status), (201, 201));
    let policy = policy_text(&[(log_key(&key, origin), Some(a.url()))], &[], 0);
    std::fs::write(d.join("policy"), policy).unwrap();
    let alice_sigil = alice.sigil(SigilForm::Default).to_string();
    // Alone, the log at its URL looks fine; the monitor keeps its
    // checkpoint.
    let run = support::herald(
        d,
        &[
            "heraldry",
            "monitor",
            "--log-policy",
            "policy",
            "--subject",
            &alice_sigil,
            "--state",
            "mstate",
        ],
    );
    run.expect(0);
    // Shown the other branch later (the policy now names b's URL), the
    // monitor compares it with the checkpoint it kept: a split view.
    let other = policy_text(&[(log_key(&key, origin), Some(b.url()))], &[], 0);
    std::fs::write(d.join("policy-b"), other).unwrap();
    let run = support::herald(
        d,
        &[
            "heraldry",
            "monitor",
            "--log-policy",
            "policy-b",
            "--subject",
            &alice_sigil,
            "--state",
            "mstate",
            "--evidence",
            "later.evidence",
        ],
    );
    run.expect(1);
    assert!(
        run.out().contains("the checkpoint kept from the last run"),
        "{}",
        run.out()
    );
    assert!(d.join("later.evidence").exists());
    let run = support::herald(
        d,
        &[
            "heraldry",
            "monitor",
            "--log-policy",
            "policy",
            "--subject",
            &alice_sigil,
            "--source",
            &format!("{origin}={}", b.url()),
            "--evidence",
            "fork.evidence",
        ],
    );
    run.expect(1);
    assert!(
        run.out().contains("split_view: forked.example/log"),
        "{}",
        run.out()
    );
    let evidence = std::fs::read(d.join("fork.evidence")).unwrap();
    let proven = herald_tlog::evidence::SplitView::parse(&evidence)
        .unwrap()
        .verify()
        .unwrap();
    let _ = proven;
}

/// `handle` through a real DNS server (PROFILE P15 record, Knot DNS): the
/// record names alice, so alice's request is certified; a handle whose
/// record names nobody, and alice's handle asked for by mallory, are
/// refused; the monitor finds the certification by handle.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handle_certifications_follow_the_dns_record() {
    let Some(programs) = support::knot::programs() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let alice = SigningKey::from_seed(&[0x11; 32]);
    let mallory = SigningKey::from_seed(&[0x66; 32]);
    let record = format!(
        "alice._herald TXT \"v=herald1; sigil={}; key={}\"\n",
        alice.sigil(SigilForm::Default),
        herald_verify::hex(alice.public_key().as_bytes())
    );
    let zone = format!(
        "$ORIGIN acme.test.\n$TTL 300\n@ SOA ns admin 1 3600 600 86400 300\n@ NS ns\nns A 127.0.0.1\n{record}"
    );
    let knot = support::knot::Knot::start(
        &programs,
        &d.join("knot"),
        &[support::knot::Zone {
            name: "acme.test",
            text: zone,
            sign: false,
        }],
        false,
    );
    let key = SigningKey::from_seed(&[0x53; 32]);
    let origin = "handles.example/log";
    let s = heraldry::serve(
        d,
        "h",
        &key,
        origin,
        &[],
        &["--batch-ms", "50", "--dns", &knot.addr()],
    );
    let asks = |who: &SigningKey, handle: &str| request(who, &key, "handle", Value::text(handle));
    let r = client::post(s.addr, "/v1/certify", &asks(&alice, "alice@acme.test"), T)
        .await
        .unwrap();
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    let policy = policy_text(&[(log_key(&key, origin), Some(s.url()))], &[], 0);
    std::fs::write(d.join("policy"), &policy).unwrap();
    let (cert, _) = check_item(&r.body, &key, &Policy::parse(policy.as_bytes()).unwrap());
    let c = herald_heraldry::Certification::of(&herald_core::EnvelopeRef::decode(&cert).unwrap())
        .unwrap();
    assert_eq!(
        (c.claim.as_str(), c.value.as_text()),
        ("handle", Some("alice@acme.test"))
    );
    for (who, handle) in [(&alice, "bob@acme.test"), (&mallory, "alice@acme.test")] {
        let r = client::post(s.addr, "/v1/certify", &asks(who, handle), T)
            .await
            .unwrap();
        assert_eq!(r.status, 422);
        assert_eq!(refusal_reason(&r.body, &key), "handle_unconfirmed");
    }
    let run = support::herald(
        d,
        &[
            "heraldry",
            "monitor",
            "--log-policy",
            "policy",
            "--handle",
            "Alice@acme.test",
            "--json",
        ],
    );
    run.expect(0);
    let j = run.json();
    assert_eq!(j["certifications"].as_array().unwrap().len(), 1, "{j}");
    assert_eq!(j["certifications"][0]["value"], "alice@acme.test");
}

/// A witness that accepts the connection and never answers does not hold
/// the Herald's answers: the checkpoint goes out with the other witness's
/// cosignature within the deadline, and a 1-of-2 policy accepts it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_witness_does_not_hold_the_answers() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let key = SigningKey::from_seed(&[0x55; 32]);
    let origin = "hung.example/log";
    let (w1, w1key) = heraldry::witness(d, "w1", &[(origin.to_owned(), log_key(&key, origin))]);
    let hung = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let hung_key = herald_tlog::note::NoteVerifier::cosigner(
        "hung.example",
        SigningKey::from_seed(&[0x56; 32]).public_key(),
    )
    .unwrap()
    .to_string();
    let witnesses = vec![
        format!("{w1key}={}", w1.1),
        format!("{hung_key}=http://{}", hung.local_addr().unwrap()),
    ];
    let s = heraldry::serve(d, "h", &key, origin, &witnesses, &["--batch-ms", "100"]);
    let alice = SigningKey::from_seed(&[0x11; 32]);
    let started = std::time::Instant::now();
    let r = client::post(s.addr, "/v1/certify", &key_request(&alice, &key), T)
        .await
        .unwrap();
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    let policy = policy_text(
        &[(log_key(&key, origin), Some(s.url()))],
        &[("w1", &w1key), ("hung", &hung_key)],
        1,
    );
    check_item(&r.body, &key, &Policy::parse(policy.as_bytes()).unwrap());
    drop(hung);
}
