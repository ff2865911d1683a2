//! `herald witness serve` killed with SIGKILL at arbitrary moments while a
//! log submits a growing sequence of checkpoints: after every restart the
//! witness's latest cosigned size is at least the last one it acknowledged
//! (a 200) and at most the last one submitted, it never cosigns a smaller
//! tree, and it continues the sequence from there. `.ci/run` runs this in
//! its own step, with its time.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use herald_merkle::{Tree, leaf_hash};
use herald_tlog::checkpoint::{Checkpoint, SignedCheckpoint};
use herald_tlog::note::NoteVerifier;
use herald_witness::client::{self, add_checkpoint_body};

const ORIGIN: &str = "example.test/killed";
const ROUNDS: u64 = 40;

fn spawn(dir: &Path, vkey: &str) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_herald"))
        .current_dir(dir)
        .args(["witness", "serve", "--key", "w.key", "--state", "state"])
        .args(["--name", "w.example/kill", "--listen", "127.0.0.1:0"])
        .arg("--log-key")
        .arg(format!("{ORIGIN}={vkey}"))
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let url = support::listening(&mut child, "listening on ");
    (child, url)
}

fn post(
    url: &str,
    old: u64,
    proof: &[[u8; 32]],
    cp: &SignedCheckpoint,
) -> Result<client::Response, String> {
    let body = add_checkpoint_body(old, proof, &cp.note().to_text());
    client::request(
        "POST",
        &format!("{url}/add-checkpoint"),
        Some(("text/plain", &body)),
    )
}

/// The witness's latest size: its 409 answer to old size 0 with the
/// size-0 checkpoint `cp`, or 0 when it cosigns that (it has nothing
/// larger).
fn latest(url: &str, cp: &SignedCheckpoint) -> u64 {
    let r = post(url, 0, &[], cp).unwrap();
    match r.status {
        409 => std::str::from_utf8(&r.body)
            .unwrap()
            .trim()
            .parse()
            .unwrap(),
        200 => 0,
        s => panic!("status {s}"),
    }
}

#[test]
fn sigkill_loop_never_rolls_back() {
    let start = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    support::keygen(dir.path(), "w");
    let log_key = herald_testkit::key(1);
    let vkey = NoteVerifier::ed25519(ORIGIN, log_key.public_key())
        .unwrap()
        .to_string();
    let max = 100_000u64;
    let tree = Tree::from_leaf_hashes((0..max).map(|i| leaf_hash(&i.to_be_bytes())));
    let cp = |size: u64| {
        let c = Checkpoint::new(ORIGIN, size, tree.root_at(size).unwrap()).unwrap();
        SignedCheckpoint::sign(c, ORIGIN, &log_key).unwrap()
    };
    let mut acked = 0u64;
    let mut submitted = 0u64;
    let mut cosigned = 0u64;
    for round in 0..ROUNDS {
        let (mut child, url) = spawn(dir.path(), &vkey);
        // After a restart: the state is between the last 200 and the last
        // request sent.
        let now = latest(&url, &cp(0));
        assert!(
            acked <= now && now <= submitted,
            "round {round}: witness at {now}, acknowledged {acked}, submitted {submitted}"
        );
        acked = now;
        if now > 1 {
            // Never a smaller tree, from any old size.
            let smaller = cp(now - 1);
            assert_eq!(post(&url, now, &[], &smaller).unwrap().status, 400);
            assert_eq!(post(&url, now - 1, &[], &smaller).unwrap().status, 409);
        }
        // Kill after a delay that varies per round (1..=60 ms of traffic).
        let delay = Duration::from_millis(1 + (round * 17) % 60);
        let killer = std::thread::spawn(move || {
            std::thread::sleep(delay);
            child.kill().unwrap();
            child.wait().unwrap();
        });
        let mut size = acked;
        loop {
            let next = (size + 1 + size / 64).min(max);
            let proof = if size == 0 {
                vec![]
            } else {
                tree.consistency_proof(size, next).unwrap()
            };
            submitted = next;
            match post(&url, size, &proof, &cp(next)) {
                Ok(r) if r.status == 200 => {
                    acked = next;
                    cosigned += 1;
                    size = next;
                }
                Ok(r) => panic!("round {round}: status {} for {size} -> {next}", r.status),
                Err(_) => break,
            }
            if next == max {
                break;
            }
        }
        killer.join().unwrap();
    }
    assert!(
        cosigned > ROUNDS,
        "only {cosigned} cosignatures in {ROUNDS} rounds"
    );
    println!(
        "witness SIGKILL loop: {ROUNDS} kills, {cosigned} cosignatures, final size {acked}, {:.1}s",
        start.elapsed().as_secs_f64()
    );
}
