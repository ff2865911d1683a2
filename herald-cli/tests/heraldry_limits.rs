//! `herald heraldry serve`'s rate limits through the binary
//! (docs/heralds.md *Limits*; a signed `429 rate_limited` refusal, as the
//! conduit's, CONDUIT.md `herald heraldry serve`): a flood of `key`
//! requests from fresh keys is held to `--rate-unknown`, while a subject
//! the log already names is still certified; one subject is held to
//! `--rate-subject`, and forgeries naming it do not spend its tokens.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use herald_conduit::client;
use herald_core::SigningKey;
use support::heraldry::{self, key_request, refusal_reason};

const T: Duration = Duration::from_secs(10);
const FLOOD: u64 = 200;
const RATE_UNKNOWN: u64 = 5;

fn fresh(n: u64) -> SigningKey {
    let mut seed = [0x99u8; 32];
    seed[..8].copy_from_slice(&n.to_be_bytes());
    SigningKey::from_seed(&seed)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_fresh_keys_is_refused_while_a_known_subject_is_certified() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let key = SigningKey::from_seed(&[0x5a; 32]);
    let s = heraldry::serve(
        d,
        "h",
        &key,
        "limits.example/log",
        &[],
        &[
            "--batch-ms",
            "50",
            "--rate-unknown",
            &RATE_UNKNOWN.to_string(),
            "--rate-subject",
            "3",
        ],
    );
    // alice is certified before the flood: from then on the log names her.
    let alice = SigningKey::from_seed(&[0x11; 32]);
    let started = Instant::now();
    let r = client::post(s.addr, "/v1/certify", &key_request(&alice, &key), T)
        .await
        .unwrap();
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));

    // The flood: FLOOD fresh keys, each asking for its `key`, 8 at a time.
    let next = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let flood_started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let (next, hkey, addr) = (
            Arc::clone(&next),
            SigningKey::from_seed(&key.to_seed()),
            s.addr,
        );
        tasks.push(tokio::spawn(async move {
            let (mut created, mut limited) = (0u64, 0u64);
            loop {
                let n = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if n >= FLOOD {
                    return (created, limited);
                }
                let r = client::post(addr, "/v1/certify", &key_request(&fresh(n), &hkey), T)
                    .await
                    .unwrap();
                match r.status {
                    201 => created += 1,
                    429 => {
                        assert_eq!(refusal_reason(&r.body, &hkey), "rate_limited");
                        let wait: u64 = r.header("retry-after").unwrap().parse().unwrap();
                        assert!(wait >= 1, "Retry-After {wait}");
                        limited += 1;
                    }
                    s => panic!("{s}: {}", String::from_utf8_lossy(&r.body)),
                }
            }
        }));
    }
    let (mut created, mut limited) = (0, 0);
    for t in tasks {
        let (c, l) = t.await.unwrap();
        created += c;
        limited += l;
    }
    let secs = flood_started.elapsed().as_secs_f64();
    // A second's worth at once, then RATE_UNKNOWN a second (alice's
    // first request took one token before).
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let bound = RATE_UNKNOWN + (secs * RATE_UNKNOWN as f64).ceil() as u64;
    eprintln!(
        "{FLOOD} fresh keys in {secs:.2} s: {created} certified, {limited} refused rate_limited (bound {bound})"
    );
    assert_eq!(created + limited, FLOOD);
    assert!(created >= 1 && created <= bound, "{created} > {bound}");

    // Forgeries naming alice (signed by mallory) are refused for their
    // signature and spend none of her tokens.
    let mallory = SigningKey::from_seed(&[0x66; 32]);
    let genuine = key_request(&alice, &key);
    for _ in 0..5 {
        let forged = heraldry::forged(&genuine, &alice, &mallory, &key);
        let r = client::post(s.addr, "/v1/certify", &forged, T)
            .await
            .unwrap();
        assert_eq!(r.status, 422);
        assert_eq!(refusal_reason(&r.body, &key), "bad_signature");
    }

    // alice, whom the log names, is certified right after the flood, with
    // the unknown bucket empty: twice more (her 3 a minute) ...
    for _ in 0..2 {
        let r = client::post(s.addr, "/v1/certify", &key_request(&alice, &key), T)
            .await
            .unwrap();
        assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    }
    // ... and then held to her own rate, unless a token came back (20 s).
    let r = client::post(s.addr, "/v1/certify", &key_request(&alice, &key), T)
        .await
        .unwrap();
    if started.elapsed() < Duration::from_secs(20) {
        assert_eq!(r.status, 429, "{}", String::from_utf8_lossy(&r.body));
        assert_eq!(refusal_reason(&r.body, &key), "rate_limited");
    }
}
