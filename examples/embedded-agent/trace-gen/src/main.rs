//! Writes `data/` for the embedded agent (examples/embedded-agent): the
//! demo keys, a 3-envelope trace addressed to the agent, a wrong-parent
//! copy of its third envelope, and a copy of its first envelope with a junk
//! co-signature appended (what anyone can make of a real envelope). Everything is deterministic (fixed seeds,
//! timestamps and nonces), so `--check` proves the committed files are
//! exactly what this program makes.
//!
//! The seeds are public demo values: never use them for anything real.
//!
//! Usage: `cargo run --manifest-path examples/embedded-agent/trace-gen/Cargo.toml -- [--check] DATA_DIR`

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use data_encoding::HEXLOWER;
use herald_core::cbor::{Map, Value};
use herald_core::{Envelope, EnvelopeBuilder, Nonce, SigilForm, SigningKey};

/// The agent's own demo seed (it lives in the firmware's flash).
const AGENT_SEED: [u8; 32] = [0xa6; 32];
/// The two peers' demo seeds (the firmware holds only their public keys).
const PEER_SEEDS: [[u8; 32]; 2] = [[0xb1; 32], [0xc2; 32]];
/// The trace's first `ts` (2026-01-01T00:00:00Z); the firmware's fixed
/// "now" is `T0 + 60` (src/main.rs).
const T0: u64 = 1_767_225_600;
/// Every envelope of the trace expires an hour after `T0`.
const EXPIRES: u64 = T0 + 3600;

fn nonce(n: u8) -> Nonce {
    Nonce([n; 16])
}

/// `env` with a co-signature of 64 junk bytes under `by`'s name appended,
/// not re-signed: its id and origin signature are the real one's (P4: the
/// id covers no signature), so only the co-signature is bad.
fn junk_cosigned(env: &Envelope, by: &SigningKey) -> Result<Vec<u8>, String> {
    let Ok(Value::Map(mut m)) = Value::decode(env.as_bytes()) else {
        return Err("an envelope that is not a map".into());
    };
    let mut sigs = match m.get("signatures") {
        Some(Value::Array(sigs)) => sigs.clone(),
        _ => Vec::new(),
    };
    let mut junk = Map::new();
    junk.insert("alg", Value::text("ed25519"));
    junk.insert("by", Value::text(by.sigil(SigilForm::Default).to_string()));
    junk.insert("scope", Value::text("human_approval"));
    junk.insert("sig", Value::Bytes(vec![0x4a; 64]));
    sigs.push(Value::Map(junk));
    m.insert("signatures", Value::Array(sigs));
    Ok(Value::Map(m).to_vec())
}

fn files() -> Result<Vec<(&'static str, Vec<u8>)>, String> {
    let agent = SigningKey::from_seed(&AGENT_SEED);
    let [a, b] = PEER_SEEDS.map(|s| SigningKey::from_seed(&s));
    let me = agent.sigil(SigilForm::Default);
    let text = |s: &str| Value::text(s);
    let err = |e: herald_core::BuildError| e.to_string();
    // Peer A opens a trace to the agent, peer B follows up, A asks.
    let env0 = EnvelopeBuilder::genesis(T0)
        .to(me)
        .expires(EXPIRES)
        .nonce(nonce(1))
        .payload(text("sensor 7: report temperature"))
        .sign(&a)
        .map_err(err)?;
    let env1 = EnvelopeBuilder::reply(&env0.view(), T0 + 10)
        .to(me)
        .expires(EXPIRES)
        .nonce(nonce(2))
        .payload(text("approved: one reading, signed"))
        .sign(&b)
        .map_err(err)?;
    let third = |parent: [u8; 32]| -> Result<Envelope, String> {
        EnvelopeBuilder::reply_to(parent, *env0.view().trace(), T0 + 20)
            .to(me)
            .expires(EXPIRES)
            .nonce(nonce(3))
            .payload(text("please reply with the reading"))
            .sign(&a)
            .map_err(err)
    };
    let env2 = third(env1.id())?;
    // Correctly signed by A, but its parent is no envelope of the trace.
    let wrong_parent = third([0xee; 32])?;
    // A copy of env0 with B's name on a junk co-signature (PROFILE P10
    // revision 3: it must not take env0's nonce from the real one).
    let env0_junk = junk_cosigned(&env0, &b)?;
    let mut keyring = String::from("# demo peers of the embedded agent (trace-gen)\n");
    for k in [&a, &b] {
        keyring += &format!(
            "{} ed25519 {}\n",
            k.sigil(SigilForm::Default),
            HEXLOWER.encode(k.public_key().as_bytes())
        );
    }
    Ok(vec![
        ("agent.seed", AGENT_SEED.to_vec()),
        ("peer-a.pub", a.public_key().as_bytes().to_vec()),
        ("peer-b.pub", b.public_key().as_bytes().to_vec()),
        ("env0.cbor", env0.into_bytes()),
        ("env1.cbor", env1.into_bytes()),
        ("env2.cbor", env2.into_bytes()),
        ("wrong-parent.cbor", wrong_parent.into_bytes()),
        ("env0-junk-cosigned.cbor", env0_junk),
        ("peers.keyring", keyring.into_bytes()),
    ])
}

fn run(check: bool, dir: &Path) -> Result<(), String> {
    for (name, bytes) in files()? {
        let path: PathBuf = dir.join(name);
        if check {
            let found = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            if found != bytes {
                return Err(format!(
                    "{} differs from what trace-gen makes",
                    path.display()
                ));
            }
        } else {
            std::fs::write(&path, &bytes).map_err(|e| format!("{}: {e}", path.display()))?;
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (check, dir) = match args.as_slice() {
        [flag, dir] if flag == "--check" => (true, dir),
        [dir] => (false, dir),
        _ => {
            eprintln!("usage: trace-gen [--check] DATA_DIR");
            return ExitCode::from(2);
        }
    };
    match run(check, Path::new(dir)) {
        Ok(()) => {
            println!("{} {dir}", if check { "matches" } else { "wrote" });
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("trace-gen: {e}");
            ExitCode::FAILURE
        }
    }
}
