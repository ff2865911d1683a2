//! `herald log …` (CLI.md `herald log`; PROFILE.md P9): an append-only
//! audit log in a directory, its signed tree heads, inclusion and
//! consistency proofs, and checking them.
//!
//! The log's secret key is never copied into the directory: `init`
//! records the key file's absolute path in `DIR/log.conf`, and `sth`,
//! `prove` and `consistency` load it from there (or from `--key`), through
//! the same loader as every command, so a key file readable by group or
//! others is refused on every use, and a key that is not the log's
//! (`DIR/log.pub`) is refused too. Formats and files: `docs/audit-log.md`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Subcommand};
use herald_core::cbor::Value;
use herald_core::{Envelope, EnvelopeRef, SigilForm, SigningKey};
use herald_verify::{AuditObject, Keyring, Log, display_json, hex};

use crate::error::CliError;
use crate::id_prefix::IdPrefix;
use crate::output::{self, Existing};
use crate::{clock, input, keyfile};

/// The `herald log` subcommands.
#[derive(Subcommand, Debug)]
pub(crate) enum LogCommand {
    /// Make a new, empty log in DIR whose key is LOG.key (its path is recorded, the key is not
    /// copied); print the log's sigil
    Init(InitArgs),
    /// Log envelopes: one line "INDEX ID" each, ID in hex (the same index again for a repeat)
    Append(AppendArgs),
    /// Sign and print the current signed tree head
    Sth(SthArgs),
    /// Print the inclusion proof of envelope ID, with a signed tree head
    Prove(ProveArgs),
    /// Print the consistency proof between two tree sizes, with both signed tree heads
    Consistency(ConsistencyArgs),
    /// Check an inclusion or consistency proof (or a signed tree head) against a keyring
    #[command(
        after_help = "Exit status: 0 the proof, its signed tree heads and (with --envelope) the \
                      leaf's match with the envelope all hold, 1 otherwise, 2 the command could \
                      not run."
    )]
    VerifyProof(VerifyProofArgs),
    /// Show a log: its sigil, key file, leaves, current root and the largest tree head signed
    Status(StatusArgs),
    #[command(flatten)]
    Tlog(super::tlog::TlogCommand),
}

/// `herald log status`.
#[derive(Args, Debug)]
pub(crate) struct StatusArgs {
    /// The log directory
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// Print one JSON object: log, key_file, leaves, root, signed
    #[arg(long)]
    json: bool,
}

/// `herald log init`.
#[derive(Args, Debug)]
pub(crate) struct InitArgs {
    /// The log directory (created if missing; must not hold a log)
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// The log's secret key file (from `herald keygen`); the log's sigil is this key's
    #[arg(long, value_name = "LOG.key")]
    key: PathBuf,
}

/// `herald log append`.
#[derive(Args, Debug)]
pub(crate) struct AppendArgs {
    /// The log directory
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// Envelope or trace files (- for standard input); all are logged with one sync
    #[arg(value_name = "FILE", required = true)]
    files: Vec<PathBuf>,
}

/// Signing options of `sth`, `prove` and `consistency`.
#[derive(Args, Debug)]
pub(crate) struct SignArgs {
    /// The log's secret key file [default: the one recorded by `herald log init`]
    #[arg(long, value_name = "LOG.key")]
    key: Option<PathBuf>,
    /// The signed tree heads' ts, Unix seconds or RFC 3339 [default: the clock]
    #[arg(long, value_name = "TIME", value_parser = crate::clock::parse_time)]
    ts: Option<u64>,
}

/// Output options of `sth`, `prove` and `consistency`.
#[derive(Args, Debug)]
pub(crate) struct OutArgs {
    /// Print the same map as JSON, byte strings as lowercase hex
    #[arg(long)]
    json: bool,
    /// Where to write it, atomically (- for standard output) [default: -]
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    out: Option<PathBuf>,
    /// Replace OUT if it exists
    #[arg(long)]
    force: bool,
}

/// `herald log sth`.
#[derive(Args, Debug)]
pub(crate) struct SthArgs {
    /// The log directory
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    #[command(flatten)]
    sign: SignArgs,
    #[command(flatten)]
    out: OutArgs,
}

/// `herald log prove`.
#[derive(Args, Debug)]
pub(crate) struct ProveArgs {
    /// The log directory
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// The envelope id as `append` prints it, or a unique prefix of it (at least 8 hex digits)
    #[arg(value_name = "ID")]
    id: String,
    /// Prove inclusion in the tree of the first N leaves [default: all]
    #[arg(long, value_name = "N")]
    size: Option<u64>,
    #[command(flatten)]
    sign: SignArgs,
    #[command(flatten)]
    out: OutArgs,
}

/// `herald log consistency`.
#[derive(Args, Debug)]
pub(crate) struct ConsistencyArgs {
    /// The log directory
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// The older tree size (at least 1, P9)
    #[arg(long = "from", value_name = "N")]
    from: u64,
    /// The newer tree size [default: all leaves]
    #[arg(long = "to", value_name = "M")]
    to: Option<u64>,
    #[command(flatten)]
    sign: SignArgs,
    #[command(flatten)]
    out: OutArgs,
}

/// `herald log verify-proof`.
#[derive(Args, Debug)]
pub(crate) struct VerifyProofArgs {
    /// The proof (P1 CBOR, as `prove`, `consistency` or `sth` write it; - for standard input)
    #[arg(value_name = "PROOF")]
    proof: PathBuf,
    /// Keyring file, or directory of *.pub files, holding the log's key (repeatable; a log's
    /// DIR/log.pub is one)
    #[arg(long, value_name = "PATH", required = true)]
    keyring: Vec<PathBuf>,
    /// With an inclusion proof: also check that the leaf is this envelope's (in a trace
    /// file, the envelope with the leaf's id)
    #[arg(long, value_name = "FILE")]
    envelope: Option<PathBuf>,
    /// A C2SP tlog-policy file: the proof counts only if --checkpoint is its (newer) tree head,
    /// signed by the log and cosigned by the policy's quorum of witnesses
    #[arg(long = "log-policy", value_name = "FILE", requires = "checkpoint")]
    log_policy: Option<PathBuf>,
    /// The cosigned C2SP checkpoint of the proof's (newer) tree head (with --log-policy)
    #[arg(long, value_name = "CHECKPOINT", requires = "log_policy")]
    checkpoint: Option<PathBuf>,
}

/// Run `herald log …`.
pub(crate) fn run(command: LogCommand) -> Result<ExitCode, CliError> {
    match command {
        LogCommand::Init(a) => init(&a),
        LogCommand::Append(a) => append(&a),
        LogCommand::Sth(a) => sth(&a),
        LogCommand::Prove(a) => prove(&a),
        LogCommand::Consistency(a) => consistency(&a),
        LogCommand::VerifyProof(a) => verify_proof(&a),
        LogCommand::Status(a) => status(&a),
        LogCommand::Tlog(c) => super::tlog::run(c),
    }
}

fn log_error(e: herald_verify::LogError) -> CliError {
    CliError::new(e.to_string())
}

/// Open the log in `dir`, reporting a repaired interrupted append.
pub(crate) fn open(dir: &Path) -> Result<Log, CliError> {
    let log = Log::open(dir).map_err(log_error)?;
    if let Some(r) = log.recovery() {
        crate::notice::note(&r.to_string());
    }
    Ok(log)
}

fn init(a: &InitArgs) -> Result<ExitCode, CliError> {
    let key = keyfile::load(&a.key)?;
    let path = std::fs::canonicalize(&a.key).map_err(|e| CliError::io(&a.key, &e))?;
    let log = Log::create(&a.dir, &key.public_key(), Some(&path)).map_err(log_error)?;
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{}", log.sigil()).map_err(|e| CliError::stdout(&e))?;
    Ok(ExitCode::SUCCESS)
}

fn append(a: &AppendArgs) -> Result<ExitCode, CliError> {
    let mut envelopes: Vec<Envelope> = Vec::new();
    for path in &a.files {
        let name = input::display_name(path);
        for (k, env) in input::envelopes(path)?.into_iter().enumerate() {
            let view = env.view();
            if view.computed_id() != *view.id() {
                return Err(CliError::new(format!(
                    "{name}: envelope {k} (id {}): the id is not the hash of its body \
                     (id_mismatch, P4); nothing was logged",
                    hex(view.id())
                )));
            }
            envelopes.push(env);
        }
    }
    let mut log = open(&a.dir)?;
    let views: Vec<EnvelopeRef<'_>> = envelopes.iter().map(Envelope::view).collect();
    let appended = log.append_envelopes(&views).map_err(log_error)?;
    // Only now, synced: acknowledge.
    let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
    for (view, a) in views.iter().zip(&appended) {
        writeln!(stdout, "{} {}", a.index, hex(view.id())).map_err(|e| CliError::stdout(&e))?;
    }
    stdout.flush().map_err(|e| CliError::stdout(&e))?;
    Ok(ExitCode::SUCCESS)
}

fn status(a: &StatusArgs) -> Result<ExitCode, CliError> {
    let log = open(&a.dir)?;
    let root = hex(&log.tree().root());
    let key_file = log.key_path().map(|p| p.display().to_string());
    let mut stdout = std::io::stdout().lock();
    let written = if a.json {
        let value = serde_json::json!({
            "log": log.sigil().to_string(),
            "key_file": key_file,
            "leaves": log.len(),
            "root": root,
            "signed": log.signed_size(),
        });
        writeln!(stdout, "{value}")
    } else {
        let unsigned = log.len().saturating_sub(log.signed_size());
        writeln!(
            stdout,
            "log       {}\nkey file  {}\nleaves    {}\nroot      {root}\nsigned    {} ({unsigned} leaves not yet under a signed tree head)",
            log.sigil(),
            key_file
                .as_deref()
                .unwrap_or("(not recorded: pass --key to sign)"),
            log.len(),
            log.signed_size(),
        )
    };
    written.map_err(|e| CliError::stdout(&e))?;
    Ok(ExitCode::SUCCESS)
}

/// The log's key, from `--key` or the path `init` recorded, checked to be
/// the log's.
pub(crate) fn signing_key(log: &Log, key: Option<&Path>) -> Result<SigningKey, CliError> {
    let path = match (key, log.key_path()) {
        (Some(p), _) => p.to_path_buf(),
        (None, Some(p)) => p.to_path_buf(),
        (None, None) => {
            return Err(CliError::new(format!(
                "{}: records no key file; pass --key LOG.key",
                log.dir().join(herald_verify::LOG_CONFIG_FILE).display()
            )));
        }
    };
    let key = keyfile::load(&path)?;
    if key.public_key() != *log.public_key() {
        return Err(CliError::new(format!(
            "{}: the key {} is not the key of log {} ({})",
            path.display(),
            key.sigil(SigilForm::Default),
            log.sigil(),
            log.dir().join(herald_verify::LOG_KEY_FILE).display()
        )));
    }
    Ok(key)
}

fn ts(sign: &SignArgs) -> Result<u64, CliError> {
    sign.ts.map_or_else(clock::now, Ok)
}

/// Write `value`: its P1 bytes, or with `--json` its JSON display form.
fn emit(value: &Value, out: &OutArgs) -> Result<(), CliError> {
    let bytes = value.to_vec();
    let target = out.out.as_deref().unwrap_or(Path::new("-"));
    if !out.json {
        return output::write_envelope(target, &bytes, Existing::from_force(out.force));
    }
    let decoded = herald_core::cbor::decode(&bytes)
        .map_err(|e| CliError::new(format!("internal error: our own output: {e}")))?;
    let text = format!("{}\n", display_json(decoded));
    if input::is_stdin(target) {
        let mut stdout = std::io::stdout().lock();
        stdout
            .write_all(text.as_bytes())
            .and_then(|()| stdout.flush())
            .map_err(|e| CliError::stdout(&e))
    } else {
        output::write_atomic(
            target,
            text.as_bytes(),
            0o644,
            Existing::from_force(out.force),
        )
    }
}

fn sth(a: &SthArgs) -> Result<ExitCode, CliError> {
    let log = open(&a.dir)?;
    let key = signing_key(&log, a.sign.key.as_deref())?;
    let sth = log
        .signed_tree_head(&key, None, ts(&a.sign)?)
        .map_err(log_error)?;
    emit(&sth.to_value(), &a.out)?;
    Ok(ExitCode::SUCCESS)
}

/// The id of the one logged envelope whose id starts with `text`.
fn logged_id(log: &Log, text: &str) -> Result<[u8; 32], CliError> {
    let prefix = IdPrefix::parse("ID", text)?;
    let mut ids = Vec::new();
    for index in 0..log.len() {
        let id = *log.leaf(index).map_err(log_error)?.id();
        if prefix.matches(&id) {
            ids.push((id, id));
        }
    }
    prefix.resolve(ids, &format!("in log {}", log.dir().display()))
}

fn prove(a: &ProveArgs) -> Result<ExitCode, CliError> {
    let log = open(&a.dir)?;
    let id = logged_id(&log, &a.id)?;
    let key = signing_key(&log, a.sign.key.as_deref())?;
    let proof = log
        .inclusion_proof(&key, &id, a.size, ts(&a.sign)?)
        .map_err(log_error)?;
    emit(&proof.to_value(), &a.out)?;
    Ok(ExitCode::SUCCESS)
}

fn consistency(a: &ConsistencyArgs) -> Result<ExitCode, CliError> {
    let log = open(&a.dir)?;
    let key = signing_key(&log, a.sign.key.as_deref())?;
    let proof = log
        .consistency_proof(&key, a.from, a.to, ts(&a.sign)?)
        .map_err(|e| CliError::new(format!("--from {}: {e}", a.from)))?;
    emit(&proof.to_value(), &a.out)?;
    Ok(ExitCode::SUCCESS)
}

/// `1 leaf`, `n leaves`.
fn leaves(n: u64) -> String {
    if n == 1 {
        "1 leaf".into()
    } else {
        format!("{n} leaves")
    }
}

fn verify_proof(a: &VerifyProofArgs) -> Result<ExitCode, CliError> {
    let bytes = input::read_proof(&a.proof)?;
    let mut keys = Keyring::new();
    for path in &a.keyring {
        keys.load(path).map_err(|e| CliError::new(e.to_string()))?;
    }
    let envelope_bytes = a
        .envelope
        .as_deref()
        .map(input::read_envelopes)
        .transpose()?;
    let name = input::display_name(&a.proof);
    let verdict = |ok: bool, line: String| -> Result<ExitCode, CliError> {
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "{line}").map_err(|e| CliError::stdout(&e))?;
        Ok(if ok {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        })
    };
    let object = match AuditObject::decode(&bytes) {
        Ok(o) => o,
        Err(e) => return verdict(false, format!("invalid: {name}: {e}")),
    };
    if envelope_bytes.is_some() && !matches!(object, AuditObject::Inclusion(_)) {
        return Err(CliError::new(
            "--envelope: only an inclusion proof names an envelope",
        ));
    }
    if let Err(e) = object.verify(&keys) {
        return verdict(false, format!("invalid: {name}: {e}"));
    }
    let witnessed = match (&a.log_policy, &a.checkpoint) {
        (Some(policy), Some(cp)) => {
            let head = match &object {
                AuditObject::TreeHead(sth) => sth.head(),
                AuditObject::Consistency(p) => p.sth2().head(),
                AuditObject::Inclusion(p) => p.sth().head(),
            };
            match super::tlog::policy_covers(policy, cp, head) {
                Ok(by) => format!("; its checkpoint is {by}"),
                Err(e) => return verdict(false, format!("invalid: {name}: --log-policy: {e}")),
            }
        }
        _ => String::new(),
    };
    let line = match &object {
        AuditObject::TreeHead(sth) => format!(
            "valid signed tree head: log {}, {}, root {}, signed {}",
            sth.log(),
            leaves(sth.size()),
            hex(sth.root()),
            clock::utc(sth.ts())
        ),
        AuditObject::Consistency(p) => format!(
            "valid consistency proof: the tree of {} of log {} is a prefix of its tree of {}",
            leaves(p.size1()),
            p.log(),
            leaves(p.size2())
        ),
        AuditObject::Inclusion(p) => {
            let mut line = format!(
                "valid inclusion proof: envelope {} is leaf {} of the tree of {} of log {}, \
                 signed {}",
                hex(p.leaf().id()),
                p.index(),
                leaves(p.size()),
                p.log(),
                clock::utc(p.sth().ts())
            );
            if let (Some(path), Some(bytes)) = (&a.envelope, &envelope_bytes) {
                let env_name = input::display_name(path);
                let found = input::items(bytes).find_map(|item| match item {
                    input::Item::Envelope(_, env) if env.id() == p.leaf().id() => Some(env),
                    _ => None,
                });
                let Some(env) = found else {
                    return verdict(
                        false,
                        format!(
                            "invalid: {env_name}: no envelope with the leaf's id {}",
                            hex(p.leaf().id())
                        ),
                    );
                };
                if let Err(e) = p.matches(&env) {
                    return verdict(false, format!("invalid: {env_name}: {e}"));
                }
                line.push_str(&format!("; it is the envelope in {env_name}"));
            }
            line
        }
    };
    verdict(true, format!("{line}{witnessed}"))
}

/// `herald log`.
#[derive(Args, Debug)]
pub(crate) struct LogArgs {
    #[command(subcommand)]
    pub(crate) command: LogCommand,
}
