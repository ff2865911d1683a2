//! The split-view defence (spec §5.3, docs/audit-log.md *C2SP forms*) end
//! to end with real processes on 127.0.0.1:0: a notary conduit with two
//! `herald witness serve` witnesses publishes its checkpoint with both
//! cosignatures at `GET /checkpoint`; a verifier with a 2-of-2 tlog-policy
//! accepts proofs against it (`log verify-proof`, and `herald verify` over
//! a bundle carrying the cosigned checkpoint) and refuses them when a
//! cosignature is missing; a down witness neither blocks nor fails a post;
//! a second conduit with the same key and origin (a forked log) is refused
//! by the witness and caught by `log monitor`, whose evidence `log
//! verify-evidence` checks offline.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod support;

use std::net::SocketAddr;
use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant};

use herald_core::cbor::Value;
use herald_core::{EnvelopeBuilder, EnvelopeRef, Nonce, SigilForm, SigningKey};
use herald_tlog::checkpoint::SignedCheckpoint;
use herald_tlog::note::NoteVerifier;
use herald_witness::client;
use support::conduit::{alice, bob, conduit_key, now, write_files};
use support::herald;

const ORIGIN: &str = "example.test/conduit";
/// Every wait is bounded by this.
const T: Duration = Duration::from_secs(20);

fn message(from: &SigningKey, to: &SigningKey, n: u64) -> Vec<u8> {
    let mut nonce = [0u8; 16];
    nonce[..8].copy_from_slice(&n.to_be_bytes());
    EnvelopeBuilder::genesis(now())
        .nonce(Nonce(nonce))
        .to(to.sigil(SigilForm::Default))
        .payload(Value::text(format!("m{n}")))
        .sign(from)
        .unwrap()
        .into_bytes()
}

struct Conduit(Child, SocketAddr);

impl Drop for Conduit {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Conduit {
    fn start(d: &Path, state: &str, witnesses: &[String]) -> Self {
        let (child, addr) = support::conduit::serve(|cmd| {
            cmd.current_dir(d)
                .args(["--roles", "notary", "--batch-ms", "50", "--origin", ORIGIN])
                .args([
                    "--key",
                    "conduit.key",
                    "--keyring",
                    "keyring",
                    "--state",
                    state,
                ]);
            for w in witnesses {
                cmd.arg("--witness").arg(w);
            }
        });
        Self(child, addr)
    }

    fn url(&self) -> String {
        format!("http://{}", self.1)
    }

    /// Post `bytes`; the 201's envelope id, and how long it took.
    fn post(&self, bytes: &[u8]) -> ([u8; 32], Duration) {
        let started = Instant::now();
        let r = client::request(
            "POST",
            &format!("{}/v1/envelopes", self.url()),
            Some(("application/cbor", bytes)),
        )
        .unwrap();
        assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
        (*EnvelopeRef::decode(bytes).unwrap().id(), started.elapsed())
    }

    /// `GET /checkpoint` until `ok` holds of it (bounded by T).
    fn checkpoint_until(&self, what: &str, ok: impl Fn(&SignedCheckpoint) -> bool) -> Vec<u8> {
        let started = Instant::now();
        loop {
            let bytes = client::get(&format!("{}/checkpoint", self.url())).unwrap();
            let (cp, _) = SignedCheckpoint::open(&bytes, &[log_key()]).unwrap();
            if ok(&cp) {
                return bytes;
            }
            assert!(
                started.elapsed() < T,
                "no checkpoint {what} within {T:?}; last:\n{}",
                String::from_utf8_lossy(&bytes)
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

fn log_key() -> NoteVerifier {
    NoteVerifier::ed25519(ORIGIN, conduit_key().public_key()).unwrap()
}

fn cosigners(cp: &SignedCheckpoint) -> usize {
    cp.note()
        .signatures()
        .iter()
        .filter(|s| s.name().ends_with(".example"))
        .count()
}

#[test]
fn a_conduit_with_two_witnesses_under_a_two_of_two_policy() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    write_files(d);
    let vkey = log_key().to_string();
    let (w1, v1) = support::witness::serve(d, "w1", ORIGIN, &vkey);
    let (w2, v2) = support::witness::serve(d, "w2", ORIGIN, &vkey);
    let a = Conduit::start(
        d,
        "state-a",
        // Witness 1 with its key (its answers are checked before they are
        // published), witness 2 by URL alone (CONDUIT.md's form).
        &[format!("{v1}={}", w1.1), w2.1.clone()],
    );

    // Three posts; the checkpoint of size 3 is published with both
    // cosignatures.
    let mut ids = Vec::new();
    for n in 0..3 {
        let bytes = message(&alice(), &bob(), n);
        std::fs::write(d.join(format!("env{n}")), &bytes).unwrap();
        ids.push(a.post(&bytes).0);
    }
    let cosigned = a.checkpoint_until("of size 3 with 2 cosignatures", |cp| {
        cp.checkpoint().size() == 3 && cosigners(cp) == 2
    });
    std::fs::write(d.join("cosigned"), &cosigned).unwrap();

    // The proof of envelope 1 against the tree of size 3.
    let proof = client::get(&format!(
        "{}/v1/proof/inclusion/{}",
        a.url(),
        herald_verify::hex(&ids[1])
    ))
    .unwrap();
    std::fs::write(d.join("proof1"), &proof).unwrap();
    let policy = format!(
        "log {vkey}\nwitness W1 {v1}\nwitness W2 {v2}\ngroup both all W1 W2\nquorum both\n"
    );
    std::fs::write(d.join("policy"), policy).unwrap();
    let verify_proof = |cp: &str| {
        herald(
            d,
            &[
                "log",
                "verify-proof",
                "proof1",
                "--keyring",
                "conduit.pub",
                "--log-policy",
                "policy",
                "--checkpoint",
                cp,
            ],
        )
    };
    // A tile client reads the conduit under the policy alone.
    let fetched = herald(
        d,
        &[
            "log",
            "fetch",
            &a.url(),
            "--log-policy",
            "policy",
            "--index",
            "1",
        ],
    );
    fetched.expect(0);
    assert!(
        fetched.out().contains("size 3") && fetched.out().contains("cosigned by W1, W2"),
        "{}",
        fetched.out()
    );
    let ok = verify_proof("cosigned");
    ok.expect(0);
    assert!(ok.out().contains("cosigned by W1, W2"), "{}", ok.out());
    // One cosignature taken off: 1 of 2 is not the quorum.
    let text = String::from_utf8(cosigned.clone()).unwrap();
    let one: String = {
        let mut lines: Vec<&str> = text.lines().collect();
        let w2_line = lines.iter().position(|l| l.contains("w2.example")).unwrap();
        lines.remove(w2_line);
        lines.join("\n") + "\n"
    };
    std::fs::write(d.join("one"), &one).unwrap();
    let bad = verify_proof("one");
    bad.expect(1);
    assert!(bad.out().contains("quorum not met"), "{}", bad.out());

    // `herald verify --log-policy` over a bundle carrying the envelope, its
    // proof and the cosigned checkpoint: the proof counts; with the
    // checkpoint that lacks a cosignature (or none) it does not.
    let verify_bundle = |name: &str, checkpoint: Option<&str>| {
        let mut args = vec!["bundle", "env1", "--proof", "proof1", "-o", name];
        if let Some(cp) = checkpoint {
            args.extend(["--checkpoint", cp]);
        }
        herald(d, &args).expect(0);
        herald(
            d,
            &[
                "verify",
                name,
                "--keyring",
                "keyring",
                "--keyring",
                "conduit.pub",
                "--log-policy",
                "policy",
                "--json",
            ],
        )
    };
    let good = verify_bundle("b-good", Some("cosigned"));
    good.expect(0);
    let proof = &good.json()["proofs"][0];
    assert_eq!(proof["status"], "valid", "{}", good.out());
    assert_eq!(proof["witnessed"], "cosigned by W1, W2");
    for (name, cp) in [("b-one", Some("one")), ("b-none", None)] {
        let bad = verify_bundle(name, cp);
        bad.expect(1);
        let proof = &bad.json()["proofs"][0];
        assert_eq!(proof["status"], "invalid", "{}", bad.out());
        assert!(
            proof["detail"]
                .as_str()
                .unwrap()
                .starts_with("log policy: "),
            "{}",
            bad.out()
        );
    }
    // Without --log-policy the log key's signature is enough (as before).
    herald(
        d,
        &[
            "verify",
            "b-none",
            "--keyring",
            "keyring",
            "--keyring",
            "conduit.pub",
        ],
    )
    .expect(0);
    // A file that is not a checkpoint is refused by `herald bundle`.
    herald(
        d,
        &[
            "bundle",
            "env1",
            "--proof",
            "proof1",
            "--checkpoint",
            "policy",
            "-o",
            "x",
        ],
    )
    .expect(2);

    // A witness goes down: posts are still answered at once, and the next
    // checkpoint is published with the one cosignature there is.
    drop(w2);
    let (id3, took) = a.post(&message(&alice(), &bob(), 3));
    assert!(took < Duration::from_secs(2), "a post took {took:?}");
    ids.push(id3);
    let partial = a.checkpoint_until("of size 4 with 1 cosignature", |cp| {
        cp.checkpoint().size() == 4 && cosigners(cp) == 1
    });
    std::fs::write(d.join("partial"), &partial).unwrap();

    // A fork: a second conduit with the same key and origin, another
    // history. Witness 1 refuses to cosign it (it has cosigned a larger,
    // different tree); the monitor sees both logs and proves the split.
    let b = Conduit::start(d, "state-b", &[format!("{v1}={}", w1.1)]);
    b.post(&message(&bob(), &alice(), 100));
    let forked = b.checkpoint_until("of size 1", |cp| cp.checkpoint().size() == 1);
    std::thread::sleep(Duration::from_millis(600));
    let again = client::get(&format!("{}/checkpoint", b.url())).unwrap();
    let (cp, _) = SignedCheckpoint::open(&again, &[log_key()]).unwrap();
    assert_eq!(cosigners(&cp), 0, "a witness cosigned a fork");
    assert_eq!(forked, again);

    let run = herald(
        d,
        &[
            "log",
            "monitor",
            &a.url(),
            &b.url(),
            "--log-key",
            &vkey,
            "--evidence",
            "fork.evidence",
        ],
    );
    run.expect(1);
    assert!(run.out().contains("split_view:"), "{}", run.out());
    let ev = herald(
        d,
        &[
            "log",
            "verify-evidence",
            "fork.evidence",
            "--log-key",
            &vkey,
        ],
    );
    ev.expect(0);
    assert!(
        ev.out().starts_with("valid split_view evidence"),
        "{}",
        ev.out()
    );
    // The evidence stands on its own: a flipped byte breaks it.
    let mut bytes = std::fs::read(d.join("fork.evidence")).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 0x01;
    std::fs::write(d.join("tampered.evidence"), bytes).unwrap();
    herald(d, &["log", "verify-evidence", "tampered.evidence"]).expect(1);
}
