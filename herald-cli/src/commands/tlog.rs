//! `herald log checkpoint|key|tiles|witness|fetch|monitor|verify-evidence`:
//! the audit log in the C2SP transparency-log formats (signed-note,
//! tlog-checkpoint, tlog-tiles, tlog-witness, tlog-cosignature,
//! tlog-policy), through `herald-tlog`. Formats: `docs/audit-log.md`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Subcommand};
use herald_tlog::checkpoint::SignedCheckpoint;
use herald_tlog::note::NoteVerifier;
use herald_tlog::policy::Policy;
use herald_tlog::tiles::{FetchError, TileReader};
use herald_verify::report::hex;
use herald_witness::client;

use crate::error::CliError;
use crate::output::{self, Existing};

use super::log::{open, signing_key};

/// The C2SP subcommands of `herald log`.
#[derive(Subcommand, Debug)]
pub(crate) enum TlogCommand {
    /// Sign and print the log's current C2SP tlog-checkpoint (a signed note)
    Checkpoint(CheckpointArgs),
    /// Print the log's C2SP verifier key for ORIGIN (name+hex(key id)+base64(0x01||key))
    Key(KeyArgs),
    /// Write the log as a static C2SP tlog-tiles tree: OUT/tile/... (and OUT/checkpoint with
    /// --origin)
    Tiles(TilesArgs),
    /// Submit the current checkpoint to tlog-witness witnesses; print it with their
    /// cosignatures
    Witness(WitnessArgs),
    /// Read a log from its checkpoint and tiles alone (a URL or a directory); verify the
    /// checkpoint, rebuild the root, and prove entries
    Fetch(FetchArgs),
}

/// `herald log checkpoint`.
#[derive(Args, Debug)]
pub(crate) struct CheckpointArgs {
    /// The log directory
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// The checkpoint's origin line, also the key name of the signature
    #[arg(long, value_name = "ORIGIN")]
    origin: String,
    /// The log's secret key file [default: the one recorded by `herald log init`]
    #[arg(long, value_name = "LOG.key")]
    key: Option<PathBuf>,
    /// Where to write it, replacing OUT atomically (- for standard output) [default: -]
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    out: Option<PathBuf>,
}

/// `herald log key`.
#[derive(Args, Debug)]
pub(crate) struct KeyArgs {
    /// The log directory
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// The origin: the key name
    #[arg(long, value_name = "ORIGIN")]
    origin: String,
}

/// `herald log tiles`.
#[derive(Args, Debug)]
pub(crate) struct TilesArgs {
    /// The log directory
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// The output directory (created if missing)
    #[arg(value_name = "OUT")]
    out: PathBuf,
    /// Also sign and write OUT/checkpoint with this origin
    #[arg(long, value_name = "ORIGIN")]
    origin: Option<String>,
    /// The log's secret key file (with --origin) [default: the one recorded by `herald log
    /// init`]
    #[arg(long, value_name = "LOG.key")]
    key: Option<PathBuf>,
}

/// `herald log witness`.
#[derive(Args, Debug)]
pub(crate) struct WitnessArgs {
    /// The log directory
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// Witness URLs (their tlog-witness submission prefix, e.g. http://127.0.0.1:8471)
    #[arg(value_name = "URL", required = true)]
    urls: Vec<String>,
    /// The checkpoint's origin
    #[arg(long, value_name = "ORIGIN")]
    origin: String,
    /// Witness verifier keys (name+id+base64(0x04||key)); their cosignatures are checked
    /// before they are published (repeatable; the same order as the URLs)
    #[arg(long = "witness-key", value_name = "VKEY")]
    witness_keys: Vec<String>,
    /// The log's secret key file [default: the one recorded by `herald log init`]
    #[arg(long, value_name = "LOG.key")]
    key: Option<PathBuf>,
    /// Where to write the cosigned checkpoint (- for standard output) [default: -]
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    out: Option<PathBuf>,
}

/// `herald log fetch`.
#[derive(Args, Debug)]
pub(crate) struct FetchArgs {
    /// The log's URL prefix (http://…) or a directory holding checkpoint and tile/
    #[arg(value_name = "URL")]
    url: String,
    /// The log's verifier key (name+id+base64(0x01||key)); or use --log-policy
    #[arg(
        long = "log-key",
        value_name = "VKEY",
        required_unless_present = "log_policy"
    )]
    log_key: Option<String>,
    /// A C2SP tlog-policy file: the checkpoint must be signed by one of its logs and cosigned
    /// by its quorum
    #[arg(long = "log-policy", value_name = "FILE")]
    log_policy: Option<PathBuf>,
    /// Print the inclusion proof of these entry indexes (repeatable)
    #[arg(long = "index", value_name = "N")]
    index: Vec<u64>,
    /// An older checkpoint of the same log: prove the fetched tree consistent with it
    #[arg(long = "since", value_name = "CHECKPOINT")]
    since: Option<PathBuf>,
}

/// Run a C2SP subcommand of `herald log`.
pub(crate) fn run(command: TlogCommand) -> Result<ExitCode, CliError> {
    match command {
        TlogCommand::Checkpoint(a) => checkpoint(&a),
        TlogCommand::Key(a) => key(&a),
        TlogCommand::Tiles(a) => tiles(&a),
        TlogCommand::Witness(a) => witness(&a),
        TlogCommand::Fetch(a) => fetch(&a),
    }
}

fn publish_error(e: herald_tlog::log::PublishError) -> CliError {
    CliError::new(e.to_string())
}

fn print(text: &str) -> Result<(), CliError> {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(|e| CliError::stdout(&e))
}

/// Write `text` to OUT atomically, or print it.
fn emit(text: &str, out: Option<&Path>) -> Result<(), CliError> {
    match out {
        Some(p) if p != Path::new("-") => {
            output::write_atomic(p, text.as_bytes(), 0o644, Existing::Replace)
        }
        _ => print(text),
    }
}

fn signed_checkpoint(
    dir: &Path,
    origin: &str,
    key: Option<&Path>,
) -> Result<(herald_verify::Log, SignedCheckpoint), CliError> {
    let log = open(dir)?;
    let key = signing_key(&log, key)?;
    let cp = herald_tlog::log::checkpoint(&log, origin, &key).map_err(publish_error)?;
    Ok((log, cp))
}

fn checkpoint(a: &CheckpointArgs) -> Result<ExitCode, CliError> {
    let (_, cp) = signed_checkpoint(&a.dir, &a.origin, a.key.as_deref())?;
    emit(&cp.note().to_text(), a.out.as_deref())?;
    Ok(ExitCode::SUCCESS)
}

fn key(a: &KeyArgs) -> Result<ExitCode, CliError> {
    let log = open(&a.dir)?;
    let vkey = herald_tlog::log::verifier_key(&log, &a.origin).map_err(publish_error)?;
    print(&format!("{vkey}\n"))?;
    Ok(ExitCode::SUCCESS)
}

fn tiles(a: &TilesArgs) -> Result<ExitCode, CliError> {
    let (log, cp) = match &a.origin {
        Some(origin) => {
            let (log, cp) = signed_checkpoint(&a.dir, origin, a.key.as_deref())?;
            (log, Some(cp))
        }
        None => (open(&a.dir)?, None),
    };
    let n = herald_tlog::log::export(&log, &a.out, cp.as_ref()).map_err(publish_error)?;
    print(&format!(
        "wrote {n} tiles of a tree of {} leaves to {}{}\n",
        log.len(),
        a.out.display(),
        if cp.is_some() {
            ", and its checkpoint"
        } else {
            ""
        }
    ))?;
    Ok(ExitCode::SUCCESS)
}

fn witness(a: &WitnessArgs) -> Result<ExitCode, CliError> {
    let (log, mut cp) = signed_checkpoint(&a.dir, &a.origin, a.key.as_deref())?;
    let keys = a
        .witness_keys
        .iter()
        .map(|k| NoteVerifier::parse(k).map_err(|e| CliError::new(format!("--witness-key: {e}"))))
        .collect::<Result<Vec<_>, _>>()?;
    let mut failed = 0;
    for url in &a.urls {
        let proof = |old: u64| {
            log.tree()
                .consistency_proof(old, log.len())
                .map_err(|e| e.to_string())
        };
        match client::add_checkpoint(url, &cp, proof) {
            Ok(lines) => {
                for line in lines {
                    if !keys.is_empty() {
                        let mut probe = cp.note().clone();
                        probe
                            .push(line.clone())
                            .map_err(|e| CliError::new(e.to_string()))?;
                        if probe.verify(&keys).is_err() {
                            eprintln!(
                                "herald: {url}: a cosignature by no --witness-key, or invalid"
                            );
                            failed += 1;
                            continue;
                        }
                    }
                    cp.note_mut()
                        .push(line)
                        .map_err(|e| CliError::new(e.to_string()))?;
                }
            }
            Err(e) => {
                eprintln!("herald: {url}: {e}");
                failed += 1;
            }
        }
    }
    emit(&cp.note().to_text(), a.out.as_deref())?;
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Fetch `path` under `base`: an http:// URL prefix or a directory.
pub(crate) fn fetch_from(base: &str, path: &str) -> Result<Vec<u8>, FetchError> {
    if base.starts_with("http://") {
        let url = format!("{}/{path}", base.trim_end_matches('/'));
        client::get(&url).map_err(|reason| FetchError {
            path: path.to_owned(),
            reason,
        })
    } else {
        std::fs::read(Path::new(base).join(path)).map_err(|e| FetchError {
            path: path.to_owned(),
            reason: e.to_string(),
        })
    }
}

/// Verify a checkpoint with `--log-key` or `--log-policy`.
pub(crate) fn open_checkpoint(
    bytes: &[u8],
    log_key: Option<&str>,
    policy: Option<&Path>,
) -> Result<(SignedCheckpoint, String), CliError> {
    if let Some(path) = policy {
        let text = std::fs::read(path).map_err(|e| CliError::io(path, &e))?;
        let policy =
            Policy::parse(&text).map_err(|e| CliError::new(format!("{}: {e}", path.display())))?;
        let (cp, names) = policy
            .verify_checkpoint(bytes)
            .map_err(|e| CliError::new(format!("checkpoint: {e}")))?;
        let by = if names.is_empty() {
            "no witness (quorum none)".to_owned()
        } else {
            names.join(", ")
        };
        return Ok((cp, format!("cosigned by {by}")));
    }
    let vkey = log_key.unwrap_or_default();
    let key = NoteVerifier::parse(vkey).map_err(|e| CliError::new(format!("--log-key: {e}")))?;
    let (cp, _) = SignedCheckpoint::open(bytes, &[key])
        .map_err(|e| CliError::new(format!("checkpoint: {e}")))?;
    Ok((cp, "signed by the log key".to_owned()))
}

fn fetch(a: &FetchArgs) -> Result<ExitCode, CliError> {
    let base = a.url.clone();
    let bytes = fetch_from(&base, "checkpoint").map_err(|e| CliError::new(e.to_string()))?;
    let (cp, by) = open_checkpoint(&bytes, a.log_key.as_deref(), a.log_policy.as_deref())?;
    let c = cp.checkpoint();
    let reader = TileReader::new(|p: &str| fetch_from(&base, p), c)
        .map_err(|e| CliError::new(e.to_string()))?;
    let mut out = format!(
        "checkpoint: {} size {} root {} ({by}); root rebuilt from tiles\n",
        c.origin(),
        c.size(),
        hex(c.root())
    );
    for &index in &a.index {
        let path = reader
            .inclusion_proof(index)
            .map_err(|e| CliError::new(format!("--index {index}: {e}")))?;
        let leaf = reader
            .leaf_hash(index)
            .map_err(|e| CliError::new(format!("--index {index}: {e}")))?;
        let hashes: Vec<String> = path.iter().map(|h| hex(h)).collect();
        out.push_str(&format!(
            "inclusion {index}: leaf hash {} path [{}] verified\n",
            hex(&leaf),
            hashes.join(" ")
        ));
    }
    if let Some(since) = &a.since {
        let old = std::fs::read(since).map_err(|e| CliError::io(since, &e))?;
        let (old, _) = open_checkpoint(&old, a.log_key.as_deref(), a.log_policy.as_deref())?;
        let proof = reader
            .consistency_proof(old.checkpoint())
            .map_err(|e| CliError::new(format!("--since: {e}")))?;
        let hashes: Vec<String> = proof.iter().map(|h| hex(h)).collect();
        out.push_str(&format!(
            "consistency {} -> {}: path [{}] verified\n",
            old.checkpoint().size(),
            c.size(),
            hashes.join(" ")
        ));
    }
    print(&out)?;
    Ok(ExitCode::SUCCESS)
}
