//! `herald demo --heralds`: Heralds (PROFILE P14) as processes. Two
//! `herald witness serve` cosign the logs of three `herald heraldry serve`
//! (h1 and h2 honest, h3 lying about alice's model); each operator first
//! certifies the agents' handles and models (`herald heraldry certify`),
//! then the agents ask h1 and h2 over HTTP to certify their keys. The
//! agents talk through a conduit (as `herald demo --conduit`), and a public
//! verifier holding no agent key replays the trace with `herald verify
//! --heralds`: the keys come from the Heralds, and each sender is shown
//! with what a quorum certified; with the liar listed too, its claim fails
//! the quorum.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::Duration;

use herald_conduit::client;
use herald_core::cbor::{Map, Value};
use herald_core::{EnvelopeBuilder, SigilForm, SigningKey};
use herald_tlog::note::NoteVerifier;
use herald_verify::labelled_key_line;

use crate::commands::agent::{conduit_addr, expect};
use crate::commands::conduit_demo::{public_trace, say, start_conduit, stop, talk};
use crate::commands::demo::workdir;
use crate::commands::keygen::write_pair;
use crate::error::CliError;
use crate::output::{Existing, write_atomic};

const T: Duration = Duration::from_secs(10);
/// The Heralds: name, log origin, and the model each says alice runs.
const HERALDS: [(&str, &str, &str); 3] = [
    ("h1", "h1.example/log", "claude-x"),
    ("h2", "h2.example/log", "claude-x"),
    ("h3", "h3.example/log", "claude-fake"),
];
/// The agents: name and handle.
const AGENTS: [(&str, &str); 2] = [("alice", "alice@acme.com"), ("bob", "bob@acme.com")];

/// Processes killed (SIGTERM, then waited for) when dropped.
struct Running(Vec<Child>);

impl Drop for Running {
    fn drop(&mut self) {
        for c in &mut self.0 {
            stop(c);
        }
    }
}

/// Run `demo --heralds`.
pub(crate) fn run(dir: Option<&Path>) -> Result<ExitCode, CliError> {
    let dir = workdir(dir)?;
    let exe = std::env::current_exe().map_err(|e| CliError::new(format!("own path: {e}")))?;
    say(&format!(
        "herald demo --heralds: writing into {}",
        dir.display()
    ))?;
    let mut keys = std::collections::BTreeMap::new();
    let mut agents_ring =
        String::from("# herald demo --heralds: the agents' keys (the agents only)\n");
    for name in ["w1", "w2", "h1", "h2", "h3", "conduit", "alice", "bob"] {
        let key = SigningKey::generate_os();
        write_pair(
            &key,
            &dir.join(format!("{name}.key")),
            &dir.join(format!("{name}.pub")),
            Existing::Keep,
        )?;
        if name == "alice" || name == "bob" {
            agents_ring.push_str(&labelled_key_line(&key.public_key(), name));
            agents_ring.push('\n');
        }
        keys.insert(name, key);
    }
    let key = |name: &str| -> Result<&SigningKey, CliError> {
        keys.get(name)
            .ok_or_else(|| CliError::new(format!("no key {name}")))
    };
    let sigil = |name: &str| key(name).map(|k| k.sigil(SigilForm::Default).to_string());
    let ring_path = dir.join("agents.keyring");
    write_atomic(&ring_path, agents_ring.as_bytes(), 0o644, Existing::Keep)?;

    // 1. Each Herald's operator certifies the agents' handles and models,
    //    offline, into its log (h3 lies about alice's model).
    say("\nthe Heralds' operators certify handles and models (herald heraldry certify):")?;
    for (h, _, alice_model) in HERALDS {
        for (agent, handle) in AGENTS {
            let model = if agent == "alice" {
                alice_model
            } else {
                "claude-y"
            };
            for (claim, value) in [
                ("handle", format!("{handle:?}")),
                ("model", format!("{{\"name\":{model:?}}}")),
            ] {
                certify(&exe, &dir, h, &sigil(agent)?, claim, &value)?;
            }
            say(&format!("  {h}: {agent} is {handle}, runs {model}"))?;
        }
    }

    // 2. Two witnesses, three Heralds, each a process.
    let logs: Vec<(String, String)> = HERALDS
        .iter()
        .map(|(h, origin, _)| {
            let v = NoteVerifier::ed25519(origin, key(h)?.public_key())
                .map_err(|e| CliError::new(e.to_string()))?;
            Ok(((*origin).to_owned(), v.to_string()))
        })
        .collect::<Result<_, CliError>>()?;
    let mut running = Running(Vec::new());
    let mut witnesses = Vec::new();
    say("")?;
    for w in ["w1", "w2"] {
        let name = format!("{w}.example");
        let vkey = NoteVerifier::cosigner(&name, key(w)?.public_key())
            .map_err(|e| CliError::new(e.to_string()))?
            .to_string();
        let mut cmd = Command::new(&exe);
        cmd.args([
            "witness",
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--name",
            &name,
        ])
        .arg("--key")
        .arg(dir.join(format!("{w}.key")))
        .arg("--state")
        .arg(dir.join(format!("{w}-state")))
        .stdout(Stdio::piped());
        for (origin, v) in &logs {
            cmd.arg("--log-key").arg(format!("{origin}={v}"));
        }
        let url = start(&mut running, cmd, "listening on ", w)?;
        say(&format!("witness {w} listening on {url}"))?;
        witnesses.push((name, vkey, url));
    }
    let mut herald_urls = Vec::new();
    for (h, origin, _) in HERALDS {
        let mut cmd = Command::new(&exe);
        cmd.args([
            "heraldry",
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--batch-ms",
            "200",
        ])
        .args(["--origin", origin])
        .arg("--key")
        .arg(dir.join(format!("{h}.key")))
        .arg("--state")
        .arg(dir.join(format!("{h}-state")))
        .stdout(Stdio::piped());
        for (_, vkey, url) in &witnesses {
            cmd.arg("--witness").arg(format!("{vkey}={url}"));
        }
        let url = start(&mut running, cmd, "listening on ", h)?;
        say(&format!("Herald {h} ({origin}) listening on {url}"))?;
        herald_urls.push(url);
    }

    // 3. The agents ask h1 and h2 to certify their keys (POST /v1/certify).
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::new(format!("could not start the runtime: {e}")))?;
    say("\nthe agents ask h1 and h2 to certify their keys (POST /v1/certify):")?;
    for (agent, _) in AGENTS {
        for (i, (h, _, _)) in HERALDS.iter().enumerate().take(2) {
            let addr = conduit_addr(&herald_urls[i])?;
            let request = key_request(key(agent)?, key(h)?)?;
            runtime.block_on(async {
                expect(
                    client::post(addr, "/v1/certify", &request, T).await,
                    201,
                    "POST /v1/certify",
                )
            })?;
            say(&format!(
                "  {agent} → {h}: 201, its key certified, in {h}'s log with a proof cosigned by w1 and w2"
            ))?;
        }
    }

    // 4. The agents talk through a conduit.
    let mut conduit = start_conduit(&exe, &dir, &ring_path)?;
    let url = first_line(&mut conduit, "listening on ", "the conduit");
    running.0.push(conduit);
    let url = url?;
    say(&format!("\nconduit (relay + notary) listening on {url}"))?;
    let trace = talk(
        &exe,
        &dir,
        &url,
        &ring_path,
        &sigil("alice")?,
        &sigil("bob")?,
    )?;

    // 5. A public verifier: the trace, the conduit's published key, and
    //    Heralds; no agent key.
    let addr = conduit_addr(&url)?;
    let (trace_bytes, conduit_pub) = runtime.block_on(public_trace(addr, &trace))?;
    write_atomic(
        &dir.join("trace.cbor"),
        &trace_bytes,
        0o644,
        Existing::Replace,
    )?;
    let conduit_ring = format!("{}\n", labelled_key_line(&conduit_pub, "conduit"));
    write_atomic(
        &dir.join("conduit.keyring"),
        conduit_ring.as_bytes(),
        0o644,
        Existing::Replace,
    )?;
    let mut policy = String::new();
    for (_, v) in &logs {
        policy.push_str(&format!("log {v}\n"));
    }
    for (name, vkey, _) in &witnesses {
        policy.push_str(&format!("witness {name} {vkey}\n"));
    }
    policy.push_str("group both 2 w1.example w2.example\nquorum both\n");
    write_atomic(
        &dir.join("heralds.policy"),
        policy.as_bytes(),
        0o644,
        Existing::Replace,
    )?;
    let list = |n: usize, threshold: usize| -> Result<String, CliError> {
        let mut text = String::new();
        for (i, (h, origin, _)) in HERALDS.iter().enumerate().take(n) {
            text.push_str(&format!(
                "herald {} {origin} {} {h}\n",
                herald_verify::key_line(&key(h)?.public_key()),
                herald_urls[i]
            ));
        }
        text.push_str(&format!("threshold {threshold}\n"));
        Ok(text)
    };
    write_atomic(
        &dir.join("two.heralds"),
        list(2, 2)?.as_bytes(),
        0o644,
        Existing::Replace,
    )?;
    write_atomic(
        &dir.join("three.heralds"),
        list(3, 2)?.as_bytes(),
        0o644,
        Existing::Replace,
    )?;

    say(&format!(
        "\npublic replay: {} bytes of trace {}…, the conduit's key, no agent key; \
         herald verify trace.cbor --keyring conduit.keyring --heralds two.heralds --log-policy heralds.policy",
        trace_bytes.len(),
        &trace[..12.min(trace.len())]
    ))?;
    let honest = replay(&exe, &dir, "two.heralds", 2)?;
    say(
        "\nthe same replay trusting h1, h2 and h3 (threshold 2), h3 saying alice runs claude-fake:",
    )?;
    let with_liar = replay(&exe, &dir, "three.heralds", 3)?;
    let lie_certified = with_liar.models.iter().any(|m| m == "claude-fake");
    say(&format!(
        "  h3's claim (alice runs claude-fake): {}",
        if lie_certified {
            "certified (unexpected)"
        } else {
            "1 of 3 Heralds, below the threshold 2: not certified"
        }
    ))?;
    let ok = honest.all_valid
        && with_liar.all_valid
        && honest.models.iter().any(|m| m == "claude-x")
        && !lie_certified;
    say(&format!(
        "\nreplay with Heralds: {}",
        if ok {
            "every envelope valid, keys from the Heralds; the lying Herald fails the quorum"
        } else {
            "NOT as expected"
        }
    ))?;
    drop(running);
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// What a replay showed.
struct Replayed {
    all_valid: bool,
    /// The models certified about alice.
    models: Vec<String>,
}

/// `herald verify trace.cbor --heralds LIST --json`, shown one line per
/// envelope: the sender with its certified handle and model, and how many
/// Heralds certified them.
fn replay(exe: &Path, dir: &Path, list: &str, of: usize) -> Result<Replayed, CliError> {
    let out = Command::new(exe)
        .current_dir(dir)
        .args([
            "verify",
            "trace.cbor",
            "--json",
            "--keyring",
            "conduit.keyring",
        ])
        .args(["--heralds", list, "--log-policy", "heralds.policy"])
        .stderr(Stdio::null())
        .output()
        .map_err(|e| CliError::new(format!("herald verify: {e}")))?;
    let report: serde_json::Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| CliError::new(format!("herald verify --json: {e}")))?;
    let mut all_valid = true;
    let mut models = Vec::new();
    for e in report["envelopes"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
    {
        let status = e["status"].as_str().unwrap_or("?");
        all_valid &= status == "valid" && e["key_source"] == "herald";
        let claims = e["certified"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        let find = |claim: &str| {
            claims.iter().find(|c| c["claim"] == claim).map(|c| {
                let n = c["heralds"].as_array().map_or(0, Vec::len);
                (c["value"].clone(), n)
            })
        };
        let handle = find("handle");
        let model = find("model");
        let is_alice = handle
            .as_ref()
            .is_some_and(|(v, _)| v.as_str() == Some("alice@acme.com"));
        let named = handle
            .as_ref()
            .and_then(|(v, _)| v.as_str())
            .unwrap_or("(no certified handle)");
        let model_name = model
            .as_ref()
            .and_then(|(v, _)| v["name"].as_str())
            .unwrap_or("(no certified model)");
        if is_alice {
            models.extend(
                claims
                    .iter()
                    .filter(|c| c["claim"] == "model")
                    .filter_map(|c| c["value"]["name"].as_str().map(str::to_owned)),
            );
        }
        let by = model.as_ref().map_or(0, |(_, n)| *n);
        say(&format!(
            "  {status:<7} {named}, model {model_name}, certified by {by} of {of}; key from {}",
            e["key_source"].as_str().unwrap_or("?")
        ))?;
    }
    Ok(Replayed { all_valid, models })
}

/// `herald heraldry certify` by Herald `h` about `subject`.
fn certify(
    exe: &Path,
    dir: &Path,
    h: &str,
    subject: &str,
    claim: &str,
    value: &str,
) -> Result<(), CliError> {
    let out = Command::new(exe)
        .current_dir(dir)
        .args(["heraldry", "certify", "--key", &format!("{h}.key")])
        .args(["--state", &format!("{h}-state"), "--subject", subject])
        .args(["--claim", claim, "--value", value])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| CliError::new(format!("herald heraldry certify: {e}")))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(CliError::new(format!(
            "herald heraldry certify ({h}, {claim}): {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )))
    }
}

/// `subject`'s request to `herald` for its `key` (CONDUIT.md `POST
/// /v1/certify`).
fn key_request(subject: &SigningKey, herald: &SigningKey) -> Result<Vec<u8>, CliError> {
    let mut m = Map::new();
    m.insert("certify", Value::text("key"));
    m.insert(
        "value",
        Value::from(subject.public_key().as_bytes().to_vec()),
    );
    EnvelopeBuilder::genesis(crate::clock::now()?)
        .to(herald.sigil(SigilForm::Default))
        .payload(Value::Map(m))
        .sign(subject)
        .map(herald_core::Envelope::into_bytes)
        .map_err(|e| CliError::new(e.to_string()))
}

/// Spawn `cmd`, keep it in `running`, and return the rest of its first
/// line after `prefix`.
fn start(
    running: &mut Running,
    mut cmd: Command,
    prefix: &str,
    what: &str,
) -> Result<String, CliError> {
    let mut child = cmd
        .spawn()
        .map_err(|e| CliError::new(format!("starting {what}: {e}")))?;
    let line = first_line(&mut child, prefix, what);
    running.0.push(child);
    line
}

fn first_line(child: &mut Child, prefix: &str, what: &str) -> Result<String, CliError> {
    let mut line = String::new();
    if let Some(out) = child.stdout.take() {
        BufReader::new(out)
            .read_line(&mut line)
            .map_err(|e| CliError::new(format!("reading {what}'s first line: {e}")))?;
    }
    line.trim()
        .strip_prefix(prefix)
        .map(str::to_owned)
        .ok_or_else(|| CliError::new(format!("{what} said {line:?}")))
}
