//! `herald demo [--dir DIR]`: three agents hold a short conversation — a
//! genesis from Alice to Bob, replies, a fan-out (two replies to one
//! envelope), one reply co-signed `human_approval` by Carol — written as a
//! trace file (a CBOR sequence) beside their keys and a keyring. The trace
//! is verified, then a copy with one payload byte flipped. Exit 0 when the
//! honest trace is all valid and the tampered one is not.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use herald_core::cbor::{Map, Value};
use herald_core::{Envelope, EnvelopeBuilder, Scope, SigilForm, SigningKey, Status};
use herald_verify::labelled_key_line;

use crate::commands::keygen::write_pair;
use crate::commands::verify::{self, Options};
use crate::error::CliError;
use crate::output::{Existing, random_suffix, write_atomic};
use crate::render::{self, Style};
use crate::{clock, input};

struct Agent {
    name: &'static str,
    role: &'static str,
    key: SigningKey,
}

/// Run `demo`.
pub(crate) fn run(dir: Option<&Path>, force: bool) -> Result<ExitCode, CliError> {
    let dir = workdir(dir)?;
    let existing = Existing::from_force(force);
    let mut out = std::io::stdout().lock();
    let mut say = |text: String| writeln!(out, "{text}").map_err(|e| CliError::stdout(&e));
    say(format!("herald demo: writing into {}", dir.display()))?;
    say(String::new())?;

    let agents = [
        ("alice", "agent, opens the conversation"),
        ("bob", "agent, answers"),
        ("carol", "human, approves one answer"),
    ]
    .map(|(name, role)| Agent {
        name,
        role,
        key: SigningKey::generate_os(),
    });
    let mut keyring = String::from("# herald demo keyring\n");
    for a in &agents {
        let secret = dir.join(format!("{}.key", a.name));
        let public = dir.join(format!("{}.pub", a.name));
        write_pair(&a.key, &secret, &public, existing)?;
        keyring.push_str(&labelled_key_line(&a.key.public_key(), a.name));
        keyring.push('\n');
        say(format!(
            "{:<6} {}  ({})",
            a.name,
            a.key.sigil(SigilForm::Default),
            a.role
        ))?;
    }
    let keyring_path = dir.join("keyring");
    write_atomic(&keyring_path, keyring.as_bytes(), 0o644, existing)?;

    let [alice, bob, carol] = &agents;
    let trace = conversation(&alice.key, &bob.key, &carol.key)?;
    let bytes: Vec<u8> = trace.iter().flat_map(|e| e.as_bytes().to_vec()).collect();
    let trace_path = dir.join("trace.cbor");
    write_atomic(&trace_path, &bytes, 0o644, existing)?;

    // Tamper with the fourth envelope: one byte inside its payload text.
    let victim = 3;
    let mut tampered = bytes.clone();
    let at = trace[..victim]
        .iter()
        .map(|e| e.as_bytes().len())
        .sum::<usize>()
        + payload_last_byte(&trace[victim]);
    if let Some(b) = tampered.get_mut(at) {
        *b ^= 0x01;
    }
    let tampered_path = dir.join("tampered.cbor");
    write_atomic(&tampered_path, &tampered, 0o644, existing)?;

    say(String::new())?;
    say(format!(
        "{} envelopes: a genesis alice → bob, replies, a fan-out, one co-signed by carol:",
        trace.len()
    ))?;
    for (e, line) in trace.iter().zip(LINES) {
        let (from, to, text, note) = line;
        say(format!(
            "  {}  {from:<5} → {to:<5}  {text:?}{note}",
            render::short(Some(&herald_verify::hex(&e.id())))
        ))?;
    }
    say(String::new())?;
    let honest = show(&mut say, &trace_path, &keyring_path)?;
    say(String::new())?;
    say(format!(
        "the same trace with byte {at} flipped (inside the payload of envelope {}):",
        render::short(Some(&herald_verify::hex(&trace[victim].id())))
    ))?;
    let forged = show(&mut say, &tampered_path, &keyring_path)?;
    say(String::new())?;
    let ok = honest.all_valid() && !forged.all_valid();
    let verdict = |r: &herald_verify::Report| {
        if r.all_valid() {
            "valid".to_owned()
        } else {
            let worst = r
                .envelopes
                .iter()
                .map(|e| e.status())
                .max()
                .unwrap_or(Status::Invalid);
            worst.name().to_owned()
        }
    };
    say(format!(
        "honest trace: {}; tampered copy: {}",
        verdict(&honest),
        verdict(&forged)
    ))?;
    say(format!("try: herald inspect {}", trace_path.display()))?;
    say(format!(
        "     herald verify {} --keyring {} --verbose",
        tampered_path.display(),
        dir.display()
    ))?;
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The directory to write into: `dir` (created if missing), or a fresh one
/// under the system temp directory.
pub(crate) fn workdir(dir: Option<&Path>) -> Result<PathBuf, CliError> {
    match dir {
        Some(dir) => {
            std::fs::create_dir_all(dir).map_err(|e| CliError::io(dir, &e))?;
            Ok(dir.to_path_buf())
        }
        None => {
            let dir = std::env::temp_dir().join(format!("herald-demo-{}", random_suffix()?));
            let mut builder = std::fs::DirBuilder::new();
            #[cfg(unix)]
            {
                use std::os::unix::fs::DirBuilderExt;
                builder.mode(0o700);
            }
            builder.create(&dir).map_err(|e| CliError::io(&dir, &e))?;
            Ok(dir)
        }
    }
}

/// Who says what, in trace order: (from, to, payload text, note).
const LINES: [(&str, &str, &str, &str); 6] = [
    (
        "alice",
        "bob",
        "Bob, can you check the Q3 figures before we publish?",
        "",
    ),
    (
        "bob",
        "alice",
        "Two figures look off: March revenue and headcount.",
        "",
    ),
    ("alice", "bob", "Please draft one correction for each.", ""),
    (
        "bob",
        "alice",
        "Correction 1: March revenue is 4.2M, not 4.7M.",
        "",
    ),
    (
        "bob",
        "alice",
        "Correction 2: headcount is 118, not 181.",
        "  + human_approval by carol",
    ),
    (
        "alice",
        "bob",
        "Approved by Carol: publishing the corrected report.",
        "",
    ),
];

fn text(s: &str) -> Value {
    let mut m = Map::new();
    m.insert("text", Value::text(s));
    Value::Map(m)
}

/// The conversation, in trace-file order.
fn conversation(
    alice: &SigningKey,
    bob: &SigningKey,
    carol: &SigningKey,
) -> Result<Vec<Envelope>, CliError> {
    let build = |e: Result<Envelope, herald_core::BuildError>| {
        e.map_err(|e| CliError::new(format!("demo: cannot build an envelope: {e}")))
    };
    let (a, b) = (
        alice.sigil(SigilForm::Default),
        bob.sigil(SigilForm::Default),
    );
    let t0 = clock::now()?.saturating_sub(600);
    let genesis = build(
        EnvelopeBuilder::genesis(t0)
            .to(b)
            .attest("model", Value::text("demo-agent-a"))
            .payload(text(LINES[0].2))
            .sign(alice),
    )?;
    let answer = build(
        EnvelopeBuilder::reply(&genesis.view(), t0 + 60)
            .to(a)
            .attest("model", Value::text("demo-agent-b"))
            .payload(text(LINES[1].2))
            .sign(bob),
    )?;
    let ask = build(
        EnvelopeBuilder::reply(&answer.view(), t0 + 120)
            .to(b)
            .payload(text(LINES[2].2))
            .sign(alice),
    )?;
    // The fan-out: two replies to `ask`.
    let fix1 = build(
        EnvelopeBuilder::reply(&ask.view(), t0 + 180)
            .to(a)
            .payload(text(LINES[3].2))
            .sign(bob),
    )?;
    let fix2 = build(
        EnvelopeBuilder::reply(&ask.view(), t0 + 200)
            .to(a)
            .payload(text(LINES[4].2))
            .sign(bob),
    )?;
    let fix2 = build(fix2.cosign(carol, Scope::HumanApproval, Some(t0 + 240)))?;
    let done = build(
        EnvelopeBuilder::reply(&fix2.view(), t0 + 300)
            .to(b)
            .payload(text(LINES[5].2))
            .sign(alice),
    )?;
    Ok(vec![genesis, answer, ask, fix1, fix2, done])
}

/// Offset of the last byte of `e`'s payload in its bytes (an ASCII letter
/// or `.` of the text, so the flipped copy is still well-formed UTF-8).
fn payload_last_byte(e: &Envelope) -> usize {
    let view = e.view();
    let start = view.payload_bytes().as_ptr() as usize - view.as_bytes().as_ptr() as usize;
    start + view.payload_bytes().len().saturating_sub(1)
}

/// Verify `trace` with `keyring` and print the human report.
pub(crate) fn show(
    say: &mut dyn FnMut(String) -> Result<(), CliError>,
    trace: &Path,
    keyring: &Path,
) -> Result<herald_verify::Report, CliError> {
    say(format!(
        "$ herald verify {} --keyring {}",
        input::display_name(trace),
        keyring.display()
    ))?;
    let read = verify::read(&Options {
        files: vec![trace.to_path_buf()],
        keyrings: vec![keyring.to_path_buf()],
        tree: true,
        ..Options::default()
    })?;
    let report = read.audit();
    let mut buf = Vec::new();
    render::write_report(
        &mut buf,
        &report,
        &render::Options {
            names: &crate::names::Names::of(&report, &read.keyring),
            style: Style::for_stdout(),
            verbose: false,
            tree: true,
            keyring_given: true,
        },
    )
    .map_err(|e| CliError::stdout(&e))?;
    say(String::from_utf8_lossy(&buf).trim_end().to_owned())?;
    Ok(report.into_report())
}

/// `herald demo`.
#[derive(Args, Debug)]
pub(crate) struct DemoArgs {
    /// Write the keys, keyring and traces into DIR (created if missing; files there are
    /// not replaced without --force) [default: a fresh directory under the system temp dir]
    #[arg(long, value_name = "DIR")]
    pub(crate) dir: Option<PathBuf>,
    /// Replace the files a previous demo wrote in DIR
    #[arg(long, requires = "dir")]
    pub(crate) force: bool,
    /// Talk through a conduit on a free loopback port: two agent processes, then a public replay
    #[arg(long)]
    pub(crate) conduit: bool,
    /// Heralds as processes: witnesses, three Heralds certifying the agents' keys, handles and
    /// models, a conversation through a conduit, then a replay verified by a Herald quorum
    #[arg(long, conflicts_with = "conduit")]
    pub(crate) heralds: bool,
}
