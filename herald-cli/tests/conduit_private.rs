//! Who may read what (CONDUIT.md revision 3) through the real `herald
//! conduit serve` on loopback: an inbox by its owner, a trace and its
//! envelopes by a participant, with requests signed as RFC 9421 gives them;
//! every other read is the same `401` with `WWW-Authenticate: Signature`
//! whether or not what was asked for exists, and changes nothing: a key
//! that is not the sigil's, an expired or future `created`, a replayed
//! signature, a signature over another path or method, missing or
//! oversized fields. Proofs, tree heads, checkpoints and `.well-known` stay
//! public; `--public` opens envelopes and traces, never inboxes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use herald_core::cbor::Value;
use herald_core::{Envelope, EnvelopeBuilder, Kind, Nonce, SigilForm, SigningKey};
use herald_http::client::{Client, HeaderName, HeaderValue, Limits, Request, Response, Url};
use herald_http::signature;
use support::conduit::{Killed, NOTARY, alice, birth, bob, carol, message, now, sigil};

const T: Duration = Duration::from_secs(20);

/// A relay + notary conduit over `dir` (keyring: alice, bob, carol) with
/// `extra` flags.
fn spawn(dir: &Path, extra: &[&str]) -> Killed {
    support::conduit::write_files(dir);
    let line = |k: &SigningKey| herald_verify::key_line(&k.public_key());
    std::fs::write(
        dir.join("keyring"),
        format!("{}\n{}\n{}\n", line(&alice()), line(&bob()), line(&carol())),
    )
    .unwrap();
    support::conduit::start(dir, &[&NOTARY[..], extra].concat())
}

fn client() -> Client {
    Client::new(Limits {
        connect_timeout: T,
        timeout: T,
        max_body: 64 << 20,
    })
}

/// `GET path`, with `fields` as they are given (name, value).
async fn get_with(addr: SocketAddr, path: &str, fields: &[(&str, String)]) -> Response {
    let mut r = Request::get(Url::for_addr(addr, path).unwrap());
    for (name, value) in fields {
        r = r.header(
            HeaderName::from_bytes(name.as_bytes()).unwrap(),
            HeaderValue::from_str(value).unwrap(),
        );
    }
    client().send(&r).await.unwrap()
}

/// The two fields signing `method` `path` (as sent to `addr`) with `key`
/// for `keyid` at `created`.
fn fields(
    addr: SocketAddr,
    method: &str,
    path: &str,
    key: &SigningKey,
    keyid: &str,
    created: u64,
) -> Vec<(&'static str, String)> {
    let uri = signature::target_uri(&addr.to_string(), path);
    let s = signature::sign(key, keyid, method, &uri, created);
    vec![("signature-input", s.input), ("signature", s.signature)]
}

/// `GET path` signed by `key` for its own sigil now.
async fn get_as(addr: SocketAddr, path: &str, key: &SigningKey) -> Response {
    herald_conduit::client::get_as(addr, path, key, T)
        .await
        .unwrap()
}

/// The refusal every unauthorised read gets: its body.
fn assert_denied(r: &Response, what: &str) -> Vec<u8> {
    assert_eq!(
        r.status,
        401,
        "{what}: {}",
        String::from_utf8_lossy(&r.body)
    );
    assert_eq!(
        r.header("www-authenticate"),
        Some("Signature"),
        "{what}: WWW-Authenticate"
    );
    r.body.clone()
}

/// The forwarded envelope of a 201 body.
fn created_body(body: &[u8]) -> Vec<u8> {
    let v = Value::decode(body).unwrap();
    match v.as_map().unwrap().get("envelope") {
        Some(Value::Bytes(b)) => b.clone(),
        other => panic!("no envelope in the 201 body: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_participant_reads_its_trace_a_stranger_cannot_tell_it_exists() {
    let dir = tempfile::tempdir().unwrap();
    let c = spawn(dir.path(), &[]);
    let addr = c.addr;
    let first = message(1, "for bob's eyes");
    let r = herald_conduit::client::post(addr, "/v1/envelopes", &first, T)
        .await
        .unwrap();
    assert_eq!(r.status, 201);
    let forwarded = created_body(&r.body);
    let genesis = Envelope::from_bytes(first).unwrap();
    let trace = herald_verify::hex(genesis.view().trace());
    let id = herald_verify::hex(&genesis.id());
    let unknown = "ab".repeat(32);

    // Participants: bob (`to`) and alice (`from`).
    for who in [bob(), alice()] {
        let r = get_as(addr, &format!("/v1/traces/{trace}"), &who).await;
        assert_eq!((r.status, &r.body), (200, &forwarded));
        let r = get_as(addr, &format!("/v1/envelopes/{id}"), &who).await;
        assert_eq!((r.status, &r.body), (200, &forwarded));
    }
    let r = get_as(addr, &format!("/v1/inbox/{}", sigil(&bob())), &bob()).await;
    assert_eq!((r.status, &r.body), (200, &forwarded));

    // A stranger, and no one: one answer, whether the trace exists or not.
    let body = assert_denied(
        &get_as(addr, &format!("/v1/traces/{trace}"), &carol()).await,
        "a stranger reads a trace",
    );
    for (path, key) in [
        (format!("/v1/traces/{unknown}"), Some(carol())),
        (format!("/v1/envelopes/{id}"), Some(carol())),
        (format!("/v1/envelopes/{unknown}"), Some(carol())),
        (format!("/v1/envelopes/{unknown}"), Some(bob())),
        (format!("/v1/inbox/{}", sigil(&bob())), Some(carol())),
        (format!("/v1/inbox/{}", sigil(&bob())), Some(alice())),
        (format!("/v1/traces/{trace}"), None),
        (format!("/v1/envelopes/{id}"), None),
        (format!("/v1/inbox/{}", sigil(&bob())), None),
    ] {
        let r = match &key {
            Some(k) => get_as(addr, &path, k).await,
            None => get_with(addr, &path, &[]).await,
        };
        assert_eq!(assert_denied(&r, &path), body, "{path}: another body");
    }

    // Public: proofs, tree heads, checkpoints, .well-known.
    let r = herald_conduit::client::get(addr, &format!("/v1/proof/inclusion/{id}"), T)
        .await
        .unwrap();
    assert_eq!(r.status, 200);
    for path in ["/v1/sth", "/checkpoint", "/.well-known/herald-conduit"] {
        let r = herald_conduit::client::get(addr, path, T).await.unwrap();
        assert_eq!(r.status, 200, "{path}");
    }

    // Bob writes to carol in the same trace: now she is a participant.
    let reply = EnvelopeBuilder::reply(&genesis.view(), now())
        .nonce(Nonce([0x44; 16]))
        .to(carol().sigil(SigilForm::Default))
        .payload(Value::text("carol, see this"))
        .sign(&bob())
        .unwrap();
    let r = herald_conduit::client::post(addr, "/v1/envelopes", reply.as_bytes(), T)
        .await
        .unwrap();
    assert_eq!(r.status, 201);
    let r = get_as(addr, &format!("/v1/envelopes/{id}"), &carol()).await;
    assert_eq!((r.status, &r.body), (200, &forwarded));
    let r = get_as(addr, &format!("/v1/traces/{trace}"), &carol()).await;
    assert_eq!(r.status, 200);
    assert!(r.body.starts_with(&forwarded) && r.body.len() > forwarded.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_signatures_are_refused_and_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let c = spawn(dir.path(), &[]);
    let addr = c.addr;
    for n in 1..=2 {
        let r = herald_conduit::client::post(addr, "/v1/envelopes", &message(n, "hi"), T)
            .await
            .unwrap();
        assert_eq!(r.status, 201);
    }
    let path = format!("/v1/inbox/{}?after=0", sigil(&bob()));
    let before = get_as(addr, &path, &bob()).await;
    assert_eq!(before.status, 200);
    let t = now();
    let bob_id = sigil(&bob());
    let mut cases: Vec<(&str, Vec<(&str, String)>)> = vec![
        (
            "a key that is not the sigil's",
            fields(addr, "GET", &path, &carol(), &bob_id, t),
        ),
        (
            "created 301 s ago",
            fields(addr, "GET", &path, &bob(), &bob_id, t - 301),
        ),
        (
            "created 301 s ahead",
            fields(addr, "GET", &path, &bob(), &bob_id, t + 301),
        ),
        (
            "over another path",
            fields(addr, "GET", "/v1/inbox/x?after=1", &bob(), &bob_id, t),
        ),
        (
            "over another method",
            fields(addr, "POST", &path, &bob(), &bob_id, t),
        ),
        ("over another authority", {
            let uri = signature::target_uri("127.0.0.1:1", &path);
            let s = signature::sign(&bob(), &bob_id, "GET", &uri, t);
            vec![("signature-input", s.input), ("signature", s.signature)]
        }),
        ("no fields", vec![]),
        (
            "no Signature",
            fields(addr, "GET", &path, &bob(), &bob_id, t)[..1].to_vec(),
        ),
        (
            "no Signature-Input",
            fields(addr, "GET", &path, &bob(), &bob_id, t)[1..].to_vec(),
        ),
        (
            "a keyid that is no sigil",
            fields(addr, "GET", &path, &bob(), "bob", t),
        ),
    ];
    // Another label, another algorithm, another component list.
    let good = fields(addr, "GET", &path, &bob(), &bob_id, t);
    for (what, from, to) in [
        ("another label", "herald=", "other="),
        ("another alg", "alg=\"ed25519\"", "alg=\"hmac-sha256\""),
        (
            "fewer components",
            "(\"@method\" \"@target-uri\")",
            "(\"@target-uri\")",
        ),
    ] {
        let mut f = good.clone();
        f[0].1 = f[0].1.replace(from, to);
        if what == "another label" {
            f[1].1 = f[1].1.replace(from, to);
        }
        cases.push((what, f));
    }
    // Oversized: a field past the bound, and many members before the label.
    let mut long = good.clone();
    long[0].1 = format!("{}, {}", "x".repeat(signature::MAX_FIELD), long[0].1);
    cases.push(("an oversized Signature-Input", long));
    let mut many = good.clone();
    many[1].1 = format!(
        "{}{}",
        "a=:AAAA:, ".repeat(signature::MAX_MEMBERS),
        many[1].1
    );
    cases.push(("too many Signature members", many));

    let mut bodies = Vec::new();
    for (what, f) in &cases {
        bodies.push(assert_denied(&get_with(addr, &path, f).await, what));
    }
    assert!(bodies.windows(2).all(|w| w[0] == w[1]), "one refusal body");
    // Far past any bound: refused by the HTTP layer, not a 200.
    let huge = vec![("signature-input", "y".repeat(200_000))];
    let r = client()
        .send(&{
            let mut r = Request::get(Url::for_addr(addr, &path).unwrap());
            for (n, v) in &huge {
                r = r.header(
                    HeaderName::from_bytes(n.as_bytes()).unwrap(),
                    HeaderValue::from_str(v).unwrap(),
                );
            }
            r
        })
        .await;
    if let Ok(r) = r {
        assert!(
            r.status == 431 || r.status == 401 || r.status == 400,
            "{}",
            r.status
        );
    }

    // A replay: the same signed request twice (a `created` no other
    // request of this test signs the path with).
    let signed = fields(addr, "GET", &path, &bob(), &bob_id, now() - 5);
    let first = get_with(addr, &path, &signed).await;
    assert_eq!((first.status, &first.body), (200, &before.body));
    assert_denied(
        &get_with(addr, &path, &signed).await,
        "a replayed signature",
    );

    // Nothing changed: the inbox is as it was.
    let after = get_as(addr, &path, &bob()).await;
    assert_eq!((after.status, &after.body), (200, &before.body));
    assert_eq!(
        after.header("herald-cursor"),
        before.header("herald-cursor")
    );
    // A signature refused for its path is not spent: sent where it was
    // signed for, it is accepted once.
    let elsewhere = format!("/v1/inbox/{}?after=1", sigil(&bob()));
    let f = fields(addr, "GET", &elsewhere, &bob(), &bob_id, now() - 7);
    assert_denied(&get_with(addr, &path, &f).await, "over another path");
    assert_eq!(get_with(addr, &elsewhere, &f).await.status, 200);
}

/// `old`'s molt to `new` at `ts`, taking effect a day later (P8).
fn molt(old: &SigningKey, new: &SigningKey, ts: u64) -> Vec<u8> {
    EnvelopeBuilder::genesis(ts)
        .kind(Kind::Molt)
        .nonce(Nonce([0x6d; 16]))
        .payload(support::conduit::molt_payload(new, ts + 86_400))
        .sign(old)
        .unwrap()
        .into_bytes()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn birth_and_molt_keys_sign_reads_and_public_opens_traces_only() {
    let dir = tempfile::tempdir().unwrap();
    let c = spawn(dir.path(), &["--public"]);
    let addr = c.addr;
    // A key the conduit learns from its birth, then its molt.
    let (old, new) = (
        SigningKey::from_seed(&[0x61; 32]),
        SigningKey::from_seed(&[0x62; 32]),
    );
    let t = now();
    let post = |b: Vec<u8>| async move {
        herald_conduit::client::post(addr, "/v1/envelopes", &b, T)
            .await
            .unwrap()
    };
    let inbox = format!("/v1/inbox/{}", sigil(&old));
    // Before its birth: the conduit holds no key for it.
    assert_denied(&get_as(addr, &inbox, &old).await, "no birth yet");
    assert_eq!(
        post(birth(&old, "reader", t - 3 * 86_400).into_bytes())
            .await
            .status,
        201
    );
    assert_eq!(get_as(addr, &inbox, &old).await.status, 200);
    // The molt takes effect a day after its ts: from then on the new key
    // signs for the sigil, and the old one no longer does.
    let r = post(molt(&old, &new, t - 2 * 86_400)).await;
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    let signed_by = |key: &SigningKey| fields(addr, "GET", &inbox, key, &sigil(&old), now() - 3);
    assert_eq!(get_with(addr, &inbox, &signed_by(&new)).await.status, 200);
    assert_denied(
        &get_with(addr, &inbox, &signed_by(&old)).await,
        "the key the molt retired",
    );

    // --public: anyone reads envelopes and traces, unsigned; an unknown one
    // is 404 there. Inboxes stay their owners'.
    let m = message(1, "public");
    assert_eq!(post(m.clone()).await.status, 201);
    let e = Envelope::from_bytes(m).unwrap();
    let trace = herald_verify::hex(e.view().trace());
    let r = herald_conduit::client::get(addr, &format!("/v1/traces/{trace}"), T)
        .await
        .unwrap();
    assert_eq!(r.status, 200);
    let r = herald_conduit::client::get(
        addr,
        &format!("/v1/envelopes/{}", herald_verify::hex(&e.id())),
        T,
    )
    .await
    .unwrap();
    assert_eq!(r.status, 200);
    let r = herald_conduit::client::get(addr, &format!("/v1/envelopes/{}", "cd".repeat(32)), T)
        .await
        .unwrap();
    assert_eq!(r.status, 404);
    assert_denied(
        &herald_conduit::client::get(addr, &format!("/v1/inbox/{}", sigil(&bob())), T)
            .await
            .unwrap(),
        "an inbox on a --public conduit",
    );
}

/// Before a signature is verified, its sigil's keys are looked up (a
/// database query in a fleet): a sigil not verified recently pays for it
/// from the unknown senders' bucket (`--rate-unknown`), so reads naming
/// fresh sigils are turned away `429` once it is empty, and a reader the
/// conduit verified before still reads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_naming_unknown_sigils_are_held_to_the_unknown_rate() {
    let dir = tempfile::tempdir().unwrap();
    let c = spawn(dir.path(), &["--rate-unknown", "5"]);
    let addr = c.addr;
    let inbox = format!("/v1/inbox/{}", sigil(&bob()));
    assert_eq!(get_as(addr, &inbox, &bob()).await.status, 200);
    let (mut denied, mut limited) = (0, 0);
    for n in 0..40u8 {
        let stranger = SigningKey::from_seed(&[0x80 ^ n; 32]);
        let path = format!("/v1/inbox/{}", sigil(&stranger));
        let r = get_as(addr, &path, &stranger).await;
        match r.status {
            401 => denied += 1,
            429 => {
                assert!(r.header("retry-after").is_some(), "429 without Retry-After");
                limited += 1;
            }
            s => panic!("a read naming an unknown sigil: {s}"),
        }
    }
    assert!(
        limited > 0,
        "never held to --rate-unknown ({denied} refused 401)"
    );
    // The bucket holds a second's worth, refilled at 5 a second meanwhile.
    assert!(denied <= 20, "{denied} lookups for unknown sigils");
    // A reader verified before looks its keys up for free.
    assert_eq!(get_as(addr, &inbox, &bob()).await.status, 200);
}

/// Signed reads sent at once over kept-alive connections, some with a
/// bad signature (a key that is not the sigil's, or a flipped bit): the
/// conduit verifies concurrent reads' signatures together (one batch
/// equation, each alone when it fails), and every read still gets its own
/// answer — each bad one `401` with `WWW-Authenticate: Signature`, every
/// good one its page, whatever batch it shared.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_reads_get_their_own_verdicts_in_a_batch() {
    const CONNECTIONS: usize = 12;
    const EACH: usize = 25;
    let dir = tempfile::tempdir().unwrap();
    let c = spawn(dir.path(), &["--rate-unknown", "0"]);
    let addr = c.addr;
    for n in 1..=3 {
        let r = herald_conduit::client::post(addr, "/v1/envelopes", &message(n, "hi"), T)
            .await
            .unwrap();
        assert_eq!(r.status, 201);
    }
    let inbox = format!("/v1/inbox/{}", sigil(&bob()));
    let page = get_as(addr, &inbox, &bob()).await;
    assert_eq!(page.status, 200);
    let page = std::sync::Arc::new(page.body);
    let t = now();
    let mut tasks = Vec::new();
    for conn in 0..CONNECTIONS {
        let page = std::sync::Arc::clone(&page);
        // Built before any is sent, so that they arrive together.
        let requests: Vec<(bool, Request)> = (0..EACH)
            .map(|i| {
                let path = format!("{inbox}?r={conn}-{i}");
                let (key, good) = match (conn * EACH + i) % 5 {
                    1 => (carol(), false),
                    _ => (bob(), true),
                };
                let mut f = fields(addr, "GET", &path, &key, &sigil(&bob()), t);
                let flip = (conn * EACH + i) % 7 == 3;
                if flip {
                    // `herald=:<base64>:`: another first character of the
                    // signature's base64 (its R), still 64 bytes.
                    let at = "herald=:".len();
                    let c = if f[1].1.as_bytes()[at] == b'A' {
                        "B"
                    } else {
                        "A"
                    };
                    f[1].1.replace_range(at..=at, c);
                }
                let mut r = Request::get(Url::for_addr(addr, &path).unwrap());
                for (name, value) in f {
                    r = r.header(
                        HeaderName::from_bytes(name.as_bytes()).unwrap(),
                        HeaderValue::from_str(&value).unwrap(),
                    );
                }
                (good && !flip, r)
            })
            .collect();
        tasks.push(tokio::spawn(async move {
            let mut c = client()
                .connect(&Url::for_addr(addr, "/").unwrap())
                .await
                .unwrap();
            let (mut good, mut bad) = (0, 0);
            for (ok, r) in &requests {
                let answer = c.send(r).await.unwrap();
                if *ok {
                    assert_eq!((answer.status, &answer.body), (200, &*page));
                    good += 1;
                } else {
                    assert_denied(&answer, "a bad signature among good ones");
                    bad += 1;
                }
            }
            (good, bad)
        }));
    }
    let (mut good, mut bad) = (0, 0);
    for t in tasks {
        let (g, b) = tokio::time::timeout(T, t).await.unwrap().unwrap();
        good += g;
        bad += b;
    }
    assert_eq!(good + bad, CONNECTIONS * EACH);
    assert!(good > 0 && bad > 0, "{good} good, {bad} bad");
}

/// The keys a sigil signs reads with are kept between reads (within one
/// second, until the conduit commits again): a molt or a deprecation the
/// conduit stores ends the retired key at once, in the same second as a
/// read it signed before. Each attempt starts on a fresh second and counts
/// only when both reads fall in it; the same fresh identity is never used
/// twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stored_molt_or_deprecation_ends_the_old_key_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let c = spawn(dir.path(), &["--rate-unknown", "0"]);
    let addr = c.addr;
    let post = |b: Vec<u8>| async move {
        let r = herald_conduit::client::post(addr, "/v1/envelopes", &b, T)
            .await
            .unwrap();
        assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    };
    for deprecate in [true, false] {
        let mut within_a_second = false;
        for attempt in 0..6u8 {
            let seed = if deprecate { 0xa0 } else { 0xb0 } + attempt;
            let (old, new) = (
                SigningKey::from_seed(&[seed; 32]),
                SigningKey::from_seed(&[seed ^ 0x0f; 32]),
            );
            let t = now();
            let born = birth(&old, "reader", t - 3 * 86_400);
            post(born.clone().into_bytes()).await;
            let ends = if deprecate {
                EnvelopeBuilder::reply(&born.view(), t - 60)
                    .kind(Kind::Deprecation)
                    .payload(Value::Map(herald_core::cbor::Map::new()))
                    .sign(&old)
                    .unwrap()
                    .into_bytes()
            } else {
                molt(&old, &new, t - 2 * 86_400)
            };
            // At the start of a second, so that both reads likely share it.
            let since = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap();
            tokio::time::sleep(Duration::from_nanos(u64::from(
                1_000_000_000 - since.subsec_nanos(),
            )))
            .await;
            let inbox = format!("/v1/inbox/{}", sigil(&old));
            let first = now();
            assert_eq!(get_as(addr, &inbox, &old).await.status, 200);
            post(ends).await;
            assert_denied(
                &get_as(addr, &inbox, &old).await,
                if deprecate {
                    "the key of a deprecated sigil"
                } else {
                    "the key a molt retired"
                },
            );
            if now() == first {
                within_a_second = true;
                break;
            }
        }
        assert!(within_a_second, "no attempt read twice within one second");
    }
}
