//! `herald demo --conduit`: the conversation over the network. A conduit
//! (relay + notary) on a free loopback port and two agents as separate
//! processes (`herald agent`) talk through it; then the trace is replayed
//! as a public verifier would (the conduit runs with `--public`, CONDUIT.md
//! *Who may read what*): fetched from `/v1/traces/{trace}` with the
//! inclusion proofs, bundled, and verified with only published keys (the
//! agents' `.pub` files and the conduit's `.well-known` key); last, a
//! tampered copy fails.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::Duration;

use herald_conduit::client;
use herald_core::{EnvelopeRef, SigilForm, SigningKey};
use herald_verify::labelled_key_line;

use crate::commands::agent::{conduit_addr, conduit_key, expect};
use crate::commands::demo::{show, workdir};
use crate::commands::keygen::write_pair;
use crate::error::CliError;
use crate::output::{Existing, write_atomic};

const T: Duration = Duration::from_secs(10);
const TURNS: &str = "3";

/// Run `demo --conduit`.
pub(crate) fn run(dir: Option<&Path>) -> Result<ExitCode, CliError> {
    let dir = workdir(dir)?;
    let exe = std::env::current_exe().map_err(|e| CliError::new(format!("own path: {e}")))?;
    say(&format!(
        "herald demo --conduit: writing into {}",
        dir.display()
    ))?;
    let mut keyring = String::from("# herald demo --conduit: the agents' published keys\n");
    for name in ["conduit", "alice", "bob"] {
        let key = SigningKey::generate_os();
        write_pair(
            &key,
            &dir.join(format!("{name}.key")),
            &dir.join(format!("{name}.pub")),
            Existing::Keep,
        )?;
        if name != "conduit" {
            // Labelled (CLI.md keyring line `[label]`): the replay names
            // the agents, not their sigils.
            keyring.push_str(&labelled_key_line(&key.public_key(), name));
            keyring.push('\n');
        }
        say(&format!("{name:<8} {}", key.sigil(SigilForm::Default)))?;
    }
    let agents_ring = dir.join("agents.keyring");
    write_atomic(&agents_ring, keyring.as_bytes(), 0o644, Existing::Keep)?;
    let sigil = |name: &str| -> Result<String, CliError> {
        let text = std::fs::read_to_string(dir.join(format!("{name}.pub")))
            .map_err(|e| CliError::io(&dir.join(format!("{name}.pub")), &e))?;
        let mut ring = herald_verify::Keyring::new();
        ring.parse(&text, name)
            .map_err(|e| CliError::new(e.to_string()))?;
        ring.keys()
            .next()
            .map(|k| k.sigil(SigilForm::Default).to_string())
            .ok_or_else(|| CliError::new(format!("{name}.pub: no key")))
    };

    let mut conduit = start_conduit(&exe, &dir, &agents_ring)?;
    let result = converse(
        &exe,
        &dir,
        &mut conduit,
        &agents_ring,
        &sigil("alice")?,
        &sigil("bob")?,
    );
    stop(&mut conduit);
    result
}

/// `herald conduit serve` for a demo: relay and notary on a free loopback
/// port, its key and state in `dir`, the agents' keys from `keyring`, and
/// public: the replay reads the trace as anyone would (CONDUIT.md *Who may
/// read what*); the agents sign their inbox reads all the same.
pub(crate) fn start_conduit(exe: &Path, dir: &Path, keyring: &Path) -> Result<Child, CliError> {
    Command::new(exe)
        .args([
            "conduit",
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--roles",
            "relay,notary",
            "--public",
        ])
        .args(["--batch-ms", "100", "--key"])
        .arg(dir.join("conduit.key"))
        .arg("--state")
        .arg(dir.join("conduit"))
        .arg("--keyring")
        .arg(keyring)
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| CliError::new(format!("starting the conduit: {e}")))
}

pub(crate) fn say(line: &str) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}")
        .and_then(|()| out.flush())
        .map_err(|e| CliError::stdout(&e))
}

/// SIGTERM (graceful: CONDUIT.md), else kill.
pub(crate) fn stop(child: &mut Child) {
    let term = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .is_ok_and(|s| s.success());
    if !term {
        let _ = child.kill();
    }
    let _ = child.wait();
}

fn agent(
    exe: &Path,
    dir: &Path,
    name: &str,
    peer: &str,
    url: &str,
    ring: &Path,
    open: Option<&str>,
) -> Result<Child, CliError> {
    let mut cmd = Command::new(exe);
    cmd.args([
        "agent",
        "--conduit",
        url,
        "--peer",
        peer,
        "--turns",
        TURNS,
        "--timeout",
        "30",
    ])
    .arg("--key")
    .arg(dir.join(format!("{name}.key")))
    .arg("--state")
    .arg(dir.join(format!("{name}-state")))
    .arg("--keyring")
    .arg(ring)
    .stdout(Stdio::piped());
    if let Some(text) = open {
        cmd.args(["--open", text]);
    }
    cmd.spawn()
        .map_err(|e| CliError::new(format!("starting agent {name}: {e}")))
}

fn converse(
    exe: &Path,
    dir: &Path,
    conduit: &mut Child,
    ring: &Path,
    alice: &str,
    bob: &str,
) -> Result<ExitCode, CliError> {
    let mut line = String::new();
    if let Some(out) = conduit.stdout.take() {
        BufReader::new(out)
            .read_line(&mut line)
            .map_err(|e| CliError::new(format!("reading the conduit's first line: {e}")))?;
    }
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .ok_or_else(|| CliError::new(format!("the conduit said {line:?}")))?
        .to_owned();
    say(&format!("\nconduit (relay + notary) listening on {url}"))?;
    let trace = talk(exe, dir, &url, ring, alice, bob)?;
    replay(dir, &url, &trace)
}

/// alice and bob (`dir/NAME.key`, keyring `ring`) as two `herald agent`
/// processes talking through the conduit at `url`, their lines shown; the
/// trace alice named.
pub(crate) fn talk(
    exe: &Path,
    dir: &Path,
    url: &str,
    ring: &Path,
    alice: &str,
    bob: &str,
) -> Result<String, CliError> {
    let mut b = agent(exe, dir, "bob", alice, url, ring, None)?;
    let mut a = agent(
        exe,
        dir,
        "alice",
        bob,
        url,
        ring,
        Some("Bob, can you check the Q3 figures?"),
    )?;
    let mut trace = None;
    for (name, child) in [("alice", &mut a), ("bob", &mut b)] {
        if let Some(out) = child.stdout.take() {
            for l in BufReader::new(out).lines().map_while(Result::ok) {
                if let Some(t) = l.strip_prefix("trace ") {
                    trace = Some(t.to_owned());
                }
                say(&format!("  {name:<5} | {l}"))?;
            }
        }
        let status = child
            .wait()
            .map_err(|e| CliError::new(format!("agent {name}: {e}")))?;
        if !status.success() {
            return Err(CliError::new(format!("agent {name} failed ({status})")));
        }
    }
    trace.ok_or_else(|| CliError::new("alice named no trace"))
}

/// What a public verifier fetches from the conduit at `addr`: the trace
/// `trace` (every page of `GET /v1/traces/{trace}`, the conduit started
/// `--public`) and the conduit's published key.
pub(crate) async fn public_trace(
    addr: std::net::SocketAddr,
    trace: &str,
) -> Result<(Vec<u8>, herald_core::PublicKey), CliError> {
    let conduit_pub = conduit_key(addr).await?;
    let seq = expect(
        client::get_pages(
            addr,
            &format!("/v1/traces/{trace}"),
            0,
            client::MAX_RESPONSE,
            T,
        )
        .await,
        200,
        "GET /v1/traces",
    )?;
    Ok((seq.body, conduit_pub))
}

/// The public verifier: fetch, bundle, verify with published keys only.
fn replay(dir: &Path, url: &str, trace: &str) -> Result<ExitCode, CliError> {
    let addr = conduit_addr(url)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::new(format!("could not start the runtime: {e}")))?;
    let (envelopes, proofs, conduit_pub) = runtime.block_on(async {
        let (body, conduit_pub) = public_trace(addr, trace).await?;
        let mut envelopes = Vec::new();
        let mut proofs = Vec::new();
        for piece in herald_verify::split_sequence(&body, 1 << 20, 64) {
            let herald_verify::Piece::Item { bytes, .. } = piece else {
                return Err(CliError::new("GET /v1/traces: not a CBOR sequence"));
            };
            let id = EnvelopeRef::decode(bytes)
                .map(|e| herald_verify::hex(e.id()))
                .map_err(|e| CliError::new(format!("a trace envelope: {e}")))?;
            let p = expect(
                client::get(addr, &format!("/v1/proof/inclusion/{id}"), T).await,
                200,
                "GET /v1/proof/inclusion",
            )?;
            envelopes.push(bytes.to_vec());
            proofs.push(p.body);
        }
        Ok::<_, CliError>((envelopes, proofs, conduit_pub))
    })?;
    say(&format!(
        "\npublic replay: GET /v1/traces/{}… → {} envelopes, {} inclusion proofs; published keys: \
         alice.pub, bob.pub and the conduit's /.well-known key",
        &trace[..12],
        envelopes.len(),
        proofs.len()
    ))?;
    let mut published = std::fs::read_to_string(dir.join("agents.keyring"))
        .map_err(|e| CliError::io(&dir.join("agents.keyring"), &e))?;
    published.push_str(&labelled_key_line(&conduit_pub, "conduit"));
    published.push('\n');
    let published_ring = dir.join("published.keyring");
    write_atomic(
        &published_ring,
        published.as_bytes(),
        0o644,
        Existing::Replace,
    )?;
    let bundle = |envs: &[Vec<u8>]| {
        let e: Vec<&[u8]> = envs.iter().map(Vec::as_slice).collect();
        let p: Vec<&[u8]> = proofs.iter().map(Vec::as_slice).collect();
        herald_verify::encode_bundle(&e, &p, &[])
    };
    let honest_path = dir.join("replay.bundle");
    write_atomic(&honest_path, &bundle(&envelopes), 0o644, Existing::Replace)?;
    let mut out = |t: String| say(&t);
    let honest = show(&mut out, &honest_path, &published_ring)?;
    // Tamper: one byte of the second envelope's payload.
    let mut tampered = envelopes.clone();
    if let Some(e) = tampered.get_mut(1)
        && let Some(at) = e.windows(5).position(|w| w == b"reply")
        && let Some(b) = e.get_mut(at)
    {
        *b ^= 0x20;
    }
    let tampered_path = dir.join("tampered.bundle");
    write_atomic(&tampered_path, &bundle(&tampered), 0o644, Existing::Replace)?;
    say("\nthe same replay with one payload byte of the second envelope flipped:")?;
    let forged = show(&mut out, &tampered_path, &published_ring)?;
    let ok = honest.all_valid() && !forged.all_valid() && envelopes.len() >= 2;
    say(&format!(
        "\nhonest replay: {}; tampered copy: {}",
        if honest.all_valid() {
            "valid"
        } else {
            "NOT valid"
        },
        if forged.all_valid() {
            "valid (unexpected)"
        } else {
            "rejected"
        }
    ))?;
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
