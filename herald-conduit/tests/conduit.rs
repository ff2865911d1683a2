//! The HTTP contract of CONDUIT.md against a real server on loopback:
//! every status code, idempotency, replay, receipts, inclusion proofs,
//! inbox cursors and long polls, the reads, slow clients and shedding.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::time::{Duration, Instant};

use herald_conduit::client;
use herald_core::cbor::Value;
use herald_core::{EnvelopeBuilder, Nonce, SigilForm};
use herald_verify::{ConsistencyProof, SignedTreeHead};
use support::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_status_code_of_a_post() {
    let c = start(|cfg| cfg.max_body = 4096).await;
    let first = message(&alice(), &bob(), 1, "hello bob");

    // 201: forwarded with the receipt, index, a proof against a signed head.
    let r = c.post(&first).await;
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.header("content-type"), Some("application/cbor"));
    let id = herald_verify::hex(
        &herald_core::Envelope::from_bytes(first.clone())
            .unwrap()
            .id(),
    );
    assert_eq!(
        r.header("location"),
        Some(format!("/v1/envelopes/{id}").as_str())
    );
    let made = created(&r.body);
    assert!(made.envelope.starts_with(&first[..8]));
    assert_receipt(&made.envelope);
    assert_eq!(made.index, Some(0));
    let proof = assert_proof(&made.proof.unwrap(), &made.envelope);
    assert_eq!(proof.index(), 0);

    // Idempotent: the same envelope again, the same body.
    let again = c.post(&first).await;
    assert_eq!(again.status, 201);
    assert_eq!(again.body, r.body);

    // 409: another envelope with the same (from key, nonce).
    let replay = message(&alice(), &bob(), 1, "hello again");
    let r = c.post(&replay).await;
    assert_eq!(r.status, 409);
    assert_refusal(&r.body, &replay, "replayed_nonce");

    // 422: a forgery (one payload byte changed: the id no longer matches).
    let mut forged = message(&alice(), &bob(), 2, "pay 10");
    let at = forged.windows(6).position(|w| w == b"pay 10").unwrap() + 4;
    forged[at] = b'9';
    let r = c.post(&forged).await;
    assert_eq!(r.status, 422);
    assert_refusal(&r.body, &forged, "id_mismatch");
    assert!(r.header("herald-reasons").unwrap().contains("id_mismatch"));
    // The forgery used up nothing: the real envelope with nonce 2 is taken.
    let r = c.post(&message(&alice(), &bob(), 2, "pay 10")).await;
    assert_eq!(r.status, 201);

    // 422: an unknown signer.
    let stranger = herald_core::SigningKey::from_seed(&[0x99; 32]);
    let unknown = message(&stranger, &bob(), 3, "who am I");
    let r = c.post(&unknown).await;
    assert_eq!(r.status, 422);
    assert_refusal(&r.body, &unknown, "unknown_signer");

    // 413: larger than --max-body; the refusal still names it.
    let big = message(&alice(), &bob(), 4, &"x".repeat(8000));
    let r = c.post(&big).await;
    assert_eq!(r.status, 413);
    assert_refusal(&r.body, &big, "too_large");

    // 400: not CBOR, empty, two envelopes, a map without a head.
    for (body, what) in [
        (b"hello".to_vec(), "garbage"),
        (Vec::new(), "empty"),
        ([first.clone(), first.clone()].concat(), "a sequence"),
        (vec![0xa1, 0x61, b'x', 0x01], "no head"),
    ] {
        let r = c.post(&body).await;
        assert_eq!(r.status, 400, "{what}");
        assert_eq!(r.header("content-type"), Some("application/problem+json"));
        let p: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
        assert!(p["type"].is_string() && p["title"].is_string() && p["detail"].is_string());
    }

    // Metrics count them.
    let m = String::from_utf8(c.get("/metrics").await.body).unwrap();
    assert!(m.contains("herald_conduit_accepted_total 3"), "{m}");
    for reason in [
        "replayed_nonce",
        "id_mismatch",
        "too_large",
        "unknown_signer",
    ] {
        assert!(
            m.contains(&format!("reason=\"{reason}\"}} 1")),
            "{reason}: {m}"
        );
    }
    assert!(m.contains("reason=\"bad_request\"} 4"), "{m}");
    assert!(m.contains("herald_conduit_log_size 2"), "{m}");
    assert!(m.contains("herald_conduit_post_seconds_bucket"), "{m}");
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_limit_and_shedding_are_signed_refusals() {
    let c = start(|cfg| {
        cfg.rate = Some(1);
        cfg.burst = Some(1);
    })
    .await;
    assert_eq!(
        c.post(&message(&alice(), &bob(), 1, "one")).await.status,
        201
    );
    let second = message(&alice(), &bob(), 2, "two");
    let r = c.post(&second).await;
    assert_eq!(r.status, 429);
    assert!(r.header("retry-after").unwrap().parse::<u64>().unwrap() >= 1);
    assert_refusal(&r.body, &second, "rate_limited");
    // Another sender has its own bucket.
    assert_eq!(
        c.post(&message(&bob(), &alice(), 1, "hi")).await.status,
        201
    );
    c.stop().await;

    let c = start(|cfg| cfg.max_inflight = 0).await;
    let m = message(&alice(), &bob(), 1, "one");
    let r = c.post(&m).await;
    assert_eq!(r.status, 503);
    assert_eq!(r.header("retry-after"), Some("1"));
    assert_refusal(&r.body, &m, "overloaded");
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_body_gets_the_deadline_refusal_and_others_are_answered() {
    let c = start(|cfg| cfg.deadline = Duration::from_millis(1500)).await;
    let slow = message(&alice(), &bob(), 1, &"s".repeat(200));
    // Send the head, then one byte a second.
    let mut s = tokio::net::TcpStream::connect(c.addr).await.unwrap();
    let head = format!(
        "POST /v1/envelopes HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        slow.len()
    );
    s.write_all(head.as_bytes()).await.unwrap();
    s.write_all(&slow[..slow.len() - 100]).await.unwrap();
    let started = Instant::now();
    let dribble = tokio::spawn(async move {
        let mut i = slow.len() - 100;
        let mut answer = Vec::new();
        loop {
            tokio::select! {
                n = s.read_to_end(&mut answer) => { n.unwrap(); break; }
                _ = tokio::time::sleep(Duration::from_secs(1)) => {
                    if i < slow.len() && s.write_all(&slow[i..=i]).await.is_ok() { i += 1; }
                }
            }
        }
        (answer, slow)
    });
    // Meanwhile others are answered at once.
    for n in 2..6 {
        let t = Instant::now();
        assert_eq!(
            c.post(&message(&alice(), &bob(), n, "quick")).await.status,
            201
        );
        assert!(t.elapsed() < Duration::from_millis(1500));
    }
    let (answer, slow) = tokio::time::timeout(T, dribble).await.unwrap().unwrap();
    assert!(
        started.elapsed() < Duration::from_millis(2500),
        "{:?}",
        started.elapsed()
    );
    let text = String::from_utf8_lossy(&answer);
    assert!(text.starts_with("HTTP/1.1 503"), "{text}");
    let body = &answer[answer.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4..];
    assert_refusal(body, &slow, "deadline");
    // Nothing of it was acknowledged: it can be sent again, whole.
    assert_eq!(c.post(&slow).await.status, 201);
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inbox_cursor_and_long_poll() {
    let c = start(|_| {}).await;
    let bob_sigil = bob().sigil(SigilForm::Default).to_string();
    for n in 1..=3 {
        assert_eq!(
            c.post(&message(&alice(), &bob(), n, "to bob")).await.status,
            201
        );
    }
    assert_eq!(
        c.post(&message(&bob(), &alice(), 1, "to alice"))
            .await
            .status,
        201
    );
    let r = c.get_as(&format!("/v1/inbox/{bob_sigil}"), &bob()).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("application/cbor-seq"));
    assert_eq!(r.header("herald-cursor"), Some("3"));
    let got = items(&r.body);
    assert_eq!(got.len(), 3);
    // Any form of the sigil names the same inbox.
    let long = bob().sigil(SigilForm::Long).to_string();
    let r = c.get_as(&format!("/v1/inbox/{long}?after=2"), &bob()).await;
    assert_eq!(
        (r.header("herald-cursor"), items(&r.body).len()),
        (Some("3"), 1)
    );
    // Nothing new: an immediate empty answer with the cursor unchanged.
    let r = c
        .get_as(&format!("/v1/inbox/{bob_sigil}?after=3"), &bob())
        .await;
    assert_eq!(
        (r.status, r.header("herald-cursor"), r.body.len()),
        (200, Some("3"), 0)
    );
    // A long poll is answered by the next arrival.
    let addr = c.addr;
    let path = format!("/v1/inbox/{bob_sigil}?after=3&wait=10");
    let poll = tokio::spawn(async move {
        let t = Instant::now();
        (
            client::get_as(addr, &path, &bob(), T).await.unwrap(),
            t.elapsed(),
        )
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        c.post(&message(&alice(), &bob(), 9, "late")).await.status,
        201
    );
    let (r, took) = poll.await.unwrap();
    assert_eq!(r.header("herald-cursor"), Some("4"));
    assert!(
        took >= Duration::from_millis(250) && took < Duration::from_secs(5),
        "{took:?}"
    );
    // A long poll with nothing arriving ends at `wait`, empty.
    let t = Instant::now();
    let r = c
        .get_as(&format!("/v1/inbox/{bob_sigil}?after=4&wait=1"), &bob())
        .await;
    assert!(t.elapsed() >= Duration::from_millis(900));
    assert_eq!((r.header("herald-cursor"), r.body.len()), (Some("4"), 0));
    for bad in ["/v1/inbox/nonsense", "/v1/inbox/{s}?after=x"] {
        let r = c.get(&bad.replace("{s}", &bob_sigil)).await;
        assert_eq!(r.status, 400, "{bad}");
    }
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_traces_tree_heads_and_proofs() {
    let c = start(|cfg| cfg.origin = Some("test.invalid/conduit".into())).await;
    let genesis = herald_core::Envelope::from_bytes(message(&alice(), &bob(), 1, "start")).unwrap();
    let reply = EnvelopeBuilder::reply(&genesis.view(), now())
        .nonce(Nonce([0x42; 16]))
        .to(alice().sigil(SigilForm::Default))
        .payload(Value::text("reply"))
        .sign(&bob())
        .unwrap();
    let mut forwarded = Vec::new();
    for e in [&genesis, &reply] {
        let r = c.post(e.as_bytes()).await;
        assert_eq!(r.status, 201);
        forwarded.push(created(&r.body).envelope);
    }
    assert_eq!(
        c.post(&message(&bob(), &alice(), 5, "other trace"))
            .await
            .status,
        201
    );
    let trace = herald_verify::hex(genesis.view().trace());
    let r = c.get_as(&format!("/v1/traces/{trace}"), &alice()).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body, forwarded.concat());
    let id = herald_verify::hex(&reply.id());
    let r = c.get_as(&format!("/v1/envelopes/{id}"), &bob()).await;
    assert_eq!((r.status, &r.body), (200, &forwarded[1]));
    // Unknown or not the reader's: the same 401 (CONDUIT.md *Who may read what*).
    assert_eq!(
        c.get_as(&format!("/v1/envelopes/{}", "0".repeat(64)), &alice())
            .await
            .status,
        401
    );
    for bad in [
        "/v1/envelopes/ABC",
        "/v1/traces/12",
        "/v1/proof/inclusion/zz",
    ] {
        assert_eq!(c.get(bad).await.status, 400, "{bad}");
    }
    // The STH, CBOR and JSON, signed by the conduit key.
    let sth = SignedTreeHead::decode(&c.get("/v1/sth").await.body).unwrap();
    sth.verify(&published()).unwrap();
    assert_eq!(sth.size(), 3);
    let json: serde_json::Value =
        serde_json::from_slice(&c.get("/v1/sth?json").await.body).unwrap();
    assert_eq!(json["size"], 3);
    assert_eq!(json["root"], herald_verify::hex(sth.root()));
    let r = c.get(&format!("/v1/proof/inclusion/{id}")).await;
    let p = assert_proof(&r.body, &forwarded[1]);
    assert_eq!((p.index(), p.size()), (1, 3));
    let r = c.get("/v1/proof/consistency?from=1&to=3").await;
    let cp = ConsistencyProof::decode(&r.body).unwrap();
    cp.verify(&published()).unwrap();
    assert_eq!((cp.size1(), cp.size2()), (1, 3));
    assert_eq!(c.get("/v1/proof/consistency?from=0").await.status, 400);
    let wk: serde_json::Value =
        serde_json::from_slice(&c.get("/.well-known/herald-conduit").await.body).unwrap();
    let sigil = conduit_key().sigil(SigilForm::Default).to_string();
    assert_eq!(wk["sigil"], sigil.as_str());
    assert_eq!(wk["log"], sigil.as_str());
    assert_eq!(
        wk["key"],
        herald_verify::hex(conduit_key().public_key().as_bytes())
    );
    assert_eq!(wk["roles"], serde_json::json!(["relay", "notary"]));
    assert_eq!(wk["origin"], "test.invalid/conduit");
    // A relay leaves room for its receipt within P1's 1 MiB (docs/conduit.md).
    let max_body = wk["max_body"].as_u64().unwrap();
    assert!(
        max_body < 1 << 20 && max_body > (1 << 20) - 512,
        "{max_body}"
    );
    assert_eq!(wk["max_signatures"], 32);
    assert_eq!(wk["deadline_ms"], 5000);
    let h = c.get("/healthz").await;
    assert_eq!((h.status, h.body.as_slice()), (200, b"ok".as_slice()));
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pass_through_keeps_no_log_and_adds_no_receipt() {
    let c = start(|cfg| cfg.roles = herald_conduit::Roles::default()).await;
    let m = message(&alice(), &bob(), 1, "plain");
    let r = c.post(&m).await;
    assert_eq!(r.status, 201);
    let made = created(&r.body);
    assert_eq!((made.envelope, made.index, made.proof), (m, None, None));
    assert_eq!(c.get("/v1/sth").await.status, 404);
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn state_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let c = start_at(state.clone(), |_| {}).await;
    let m = message(&alice(), &bob(), 1, "kept");
    let first = c.post(&m).await;
    assert_eq!(first.status, 201);
    // The log grows past it, under new tree heads: a repeat is still
    // answered with its first head (conduit_heads), byte for byte.
    for n in 2..5 {
        assert_eq!(
            c.post(&message(&alice(), &bob(), n, "more")).await.status,
            201
        );
    }
    assert_eq!(c.post(&m).await.body, first.body);
    let made = created(&first.body);
    assert_eq!(assert_proof(&made.proof.unwrap(), &made.envelope).size(), 1);
    c.stop().await;
    let c = start_at(state, |_| {}).await;
    // The same body again, a replay still a replay, the inbox and the log kept.
    assert_eq!(c.post(&m).await.body, first.body);
    assert_eq!(
        c.post(&message(&alice(), &bob(), 1, "again")).await.status,
        409
    );
    let bob_sigil = bob().sigil(SigilForm::Default).to_string();
    let r = c.get_as(&format!("/v1/inbox/{bob_sigil}"), &bob()).await;
    assert_eq!(items(&r.body)[0], created(&first.body).envelope);
    assert_eq!(items(&r.body).len(), 4);
    let sth = SignedTreeHead::decode(&c.get("/v1/sth").await.body).unwrap();
    assert_eq!(sth.size(), 4);
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_relays_in_a_row_keep_both_receipts() {
    let dir = tempfile::tempdir().unwrap();
    let key_a = || herald_core::SigningKey::from_seed(&[0xa1; 32]);
    let key_b = || herald_core::SigningKey::from_seed(&[0xb2; 32]);
    let mut ring_a = herald_verify::Keyring::new();
    ring_a.insert(alice().public_key(), herald_verify::Provenance::Pinned);
    let mut ring_b = ring_a.clone();
    let a = start_as(dir.path().join("a"), key_a(), ring_a, |c| {
        c.roles = herald_conduit::Roles {
            relay: true,
            notary: false,
        };
    })
    .await;
    // B without A's key: A's receipt is an unknown co-signer, `partial`, refused.
    let m = message(&alice(), &bob(), 1, "through two relays");
    let via_a = created(&a.post(&m).await.body).envelope;
    let b_blind = start_as(dir.path().join("b0"), key_b(), ring_b.clone(), |_| {}).await;
    let r = b_blind.post(&via_a).await;
    assert_eq!(r.status, 422);
    assert!(
        r.header("herald-reasons")
            .unwrap()
            .contains("unknown_signer")
    );
    b_blind.stop().await;
    // B with A's key: both receipts, in order, valid end to end.
    ring_b.insert(key_a().public_key(), herald_verify::Provenance::Pinned);
    let b = start_as(dir.path().join("b"), key_b(), ring_b, |_| {}).await;
    let r = b.post(&via_a).await;
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    let made = created(&r.body);
    let via_b = made.envelope;
    let env = herald_core::EnvelopeRef::decode(&via_b).unwrap();
    let sigs: Vec<_> = env.signatures().map(|s| s.unwrap()).collect();
    assert_eq!(sigs.len(), 3);
    assert_eq!(sigs[1].by, key_a().sigil(SigilForm::Default).to_string());
    assert_eq!(sigs[2].by, key_b().sigil(SigilForm::Default).to_string());
    assert!(sigs[1..].iter().all(|s| s.scope == "conduit_receipt"));
    let mut end = herald_verify::Keyring::new();
    for k in [alice(), key_a(), key_b()] {
        end.insert(k.public_key(), herald_verify::Provenance::Pinned);
    }
    let mut reasons = Vec::new();
    let checked = herald_core::check(
        &via_b,
        &end,
        &herald_core::CheckOptions::default(),
        &mut reasons,
    );
    assert_eq!(checked.status, herald_core::Status::Valid, "{reasons:?}");
    // B's proof covers the envelope and verifies with B's key.
    let p = herald_verify::InclusionProof::decode(&made.proof.unwrap()).unwrap();
    p.verify(&end).unwrap();
    p.matches(&env).unwrap();
    a.stop().await;
    b.stop().await;
}

/// The hostile shapes of herald-verify's `hostile.rs` and the fuzz targets,
/// posted over HTTP: each gets its 400, 413 or 422 in time, nothing panics,
/// the conduit keeps answering, and memory stays bounded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_bodies_are_answered_and_memory_stays_bounded() {
    let c = start(|_| {}).await;
    let valid = message(&alice(), &bob(), 1, "fine");
    let mut deep = vec![0x81u8; 10_000];
    deep.push(0x00);
    let mut wide = vec![0xba, 0x00, 0x01, 0x00, 0x01]; // map of 65 537 entries
    for i in 0..65_537u32 {
        wide.push(0x1a);
        wide.extend_from_slice(&i.to_be_bytes());
        wide.push(0x00);
    }
    let mut trailing = valid.clone();
    trailing.push(0x00);
    let mut head_then_deep = valid[..valid.len() - 1].to_vec();
    head_then_deep.extend_from_slice(&[0x81; 5000]);
    let cases: Vec<(&str, Vec<u8>, &[u16])> = vec![
        (
            "2^63-byte header",
            vec![0x5b, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
            &[400],
        ),
        ("10 000-deep nesting", deep, &[400]),
        ("map of 65 537 entries", wide, &[400]),
        ("64 MiB of 0xff", vec![0xff; 64 << 20], &[400, 413]),
        ("4 MiB of zeros", vec![0x00; 4 << 20], &[400, 413]),
        ("trailing byte", trailing, &[400]),
        ("head, then deep nesting", head_then_deep, &[400, 422]),
        ("indefinite map", vec![0xbf, 0xff], &[400]),
    ];
    let rss = |what: &str| {
        std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with(what))
                    .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
            })
            .unwrap_or(0)
    };
    for (what, body, want) in &cases {
        let t = Instant::now();
        let status = match c.try_post(body).await {
            Ok(r) => r.status,
            Err(e) => panic!("{what}: {e}"),
        };
        assert!(want.contains(&status), "{what}: {status}");
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "{what}: {:?}",
            t.elapsed()
        );
        assert_eq!(c.get("/healthz").await.status, 200, "after {what}");
    }
    assert_eq!(c.post(&valid).await.status, 201);
    println!(
        "hostile bodies: peak RSS of the test process {} kB",
        rss("VmHWM:")
    );
    c.stop().await;
}

/// 1 000 connections held open (half of them mid-request) do not stop
/// other clients from getting their answers within the deadline.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_idle_connections_do_not_block_others() {
    let c = start(|cfg| cfg.deadline = Duration::from_millis(2000)).await;
    let mut held = Vec::new();
    for i in 0..1000 {
        let mut s = tokio::net::TcpStream::connect(c.addr).await.unwrap();
        if i % 2 == 0 {
            // A request head, a declared body that never comes.
            s.write_all(
                b"POST /v1/envelopes HTTP/1.1\r\nHost: x\r\nContent-Length: 500\r\n\r\n\xa9",
            )
            .await
            .unwrap();
        }
        held.push(s);
    }
    for n in 1..=20 {
        let t = Instant::now();
        let r = c
            .post(&message(&alice(), &bob(), n, "through the crowd"))
            .await;
        assert_eq!(r.status, 201);
        assert!(
            t.elapsed() < Duration::from_millis(2000),
            "{:?}",
            t.elapsed()
        );
    }
    // The half-sent posts got their answers (503: no addressable head in
    // one byte) within the deadline, without blocking anyone.
    let mut answered = 0;
    for s in held.iter_mut().step_by(2).take(20) {
        let mut buf = [0u8; 12];
        if tokio::time::timeout(Duration::from_secs(5), s.read_exact(&mut buf))
            .await
            .is_ok_and(|r| r.is_ok())
        {
            assert_eq!(&buf, b"HTTP/1.1 503");
            answered += 1;
        }
    }
    assert_eq!(answered, 20);
    drop(held);
    c.stop().await;
}

/// Posts on kept-alive connections (`client::Connection`), several in
/// flight, so batches overlap in the writer's stages: every one is
/// acknowledged once with its own leaf and a proof, and a repeat on the
/// same connection, at once and later, gets the first 201 body (whether
/// the body is still waiting to be recorded or recorded).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kept_alive_posts_and_their_repeats() {
    let c = start(|_| {}).await;
    let mut tasks = Vec::new();
    for k in 0..4u64 {
        let addr = c.addr;
        tasks.push(tokio::spawn(async move {
            let mut conn = client::Connection::connect(addr).await.unwrap();
            let mut out = Vec::new();
            for n in 0..10 {
                let m = message(&alice(), &bob(), 1000 + k * 100 + n, "kept alive");
                let r = conn.post("/v1/envelopes", &m, T).await.unwrap();
                assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
                let again = conn.post("/v1/envelopes", &m, T).await.unwrap();
                assert_eq!((again.status, &again.body), (201, &r.body));
                out.push((m, r.body));
            }
            out
        }));
    }
    let mut answered = Vec::new();
    for t in tasks {
        answered.extend(t.await.unwrap());
    }
    let mut indices: Vec<u64> = answered
        .iter()
        .map(|(_, body)| {
            let cr = created(body);
            assert_proof(&cr.proof.unwrap(), &cr.envelope);
            cr.index.unwrap()
        })
        .collect();
    indices.sort_unstable();
    assert_eq!(indices, (0..40).collect::<Vec<u64>>());
    let mut conn = client::Connection::connect(c.addr).await.unwrap();
    for (m, body) in &answered {
        let r = conn.post("/v1/envelopes", m, T).await.unwrap();
        assert_eq!((r.status, &r.body), (201, body));
    }
    let sth = SignedTreeHead::decode(&c.get("/v1/sth").await.body).unwrap();
    assert_eq!(sth.size(), 40);
    c.stop().await;
}

/// A repeat sent the moment its first answer arrives, from many kept-alive
/// connections at once with short batches, so heads are answered, recorded
/// and replaced while repeats are judged: each repeat gets its first 201
/// body byte for byte (spec §11.3), never a proof against a later head.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn repeats_racing_the_head_records_get_their_first_answer() {
    let c = start(|config| config.batch = Duration::from_millis(1)).await;
    let mut tasks = Vec::new();
    for k in 0..8u64 {
        let addr = c.addr;
        tasks.push(tokio::spawn(async move {
            let mut conn = client::Connection::connect(addr).await.unwrap();
            for n in 0..40 {
                let m = message(&alice(), &bob(), 5000 + k * 100 + n, "racing");
                let r = conn.post("/v1/envelopes", &m, T).await.unwrap();
                assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
                let again = conn.post("/v1/envelopes", &m, T).await.unwrap();
                assert_eq!(
                    (again.status, &again.body),
                    (201, &r.body),
                    "the repeat of post {k}/{n} got another answer"
                );
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    c.stop().await;
}

/// A burst of new connections larger than tokio's default accept queue
/// (128), arriving while nothing is accepted (a busy conduit): the kernel
/// completes every handshake and queues it (`LISTEN_BACKLOG`), where a
/// queue of 128 would drop the rest and make each wait out TCP's
/// one-second SYN timeout (docs/performance.md (8)).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_of_connections_is_queued_not_dropped() {
    const BURST: usize = 400;
    let listener = herald_conduit::listen(([127, 0, 0, 1], 0).into()).unwrap();
    let addr = listener.local_addr().unwrap();
    let connects = (0..BURST).map(|_| {
        tokio::spawn(async move {
            tokio::time::timeout(
                Duration::from_millis(700),
                tokio::net::TcpStream::connect(addr),
            )
            .await
        })
    });
    let connects: Vec<_> = connects.collect();
    let mut connected = Vec::new();
    for c in connects {
        match c.await.unwrap() {
            Ok(Ok(stream)) => connected.push(stream),
            Ok(Err(e)) => panic!("connect failed: {e}"),
            Err(_) => panic!(
                "a handshake was dropped: {} of {BURST} connected within 0.7 s",
                connected.len()
            ),
        }
    }
    assert_eq!(connected.len(), BURST);
    drop(listener);
}
