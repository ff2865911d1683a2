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
use herald_verify::hex;
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
    /// Check every pair of a log's checkpoints seen (from the log, its mirrors, cosigned copies,
    /// the last run) for consistency; report split views with self-contained evidence
    #[command(
        after_help = "Exit status: 0 every pair is consistent, 1 a split view (evidence \
                            written) or a checkpoint that does not verify, 2 the command could \
                            not run."
    )]
    Monitor(MonitorArgs),
    /// Check split-view evidence offline (as `monitor` writes it)
    #[command(
        after_help = "Exit status: 0 the evidence proves that the log signed two \
                            checkpoints that cannot both be true, 1 it does not."
    )]
    VerifyEvidence(VerifyEvidenceArgs),
}

/// `herald log monitor`.
#[derive(Args, Debug)]
pub(crate) struct MonitorArgs {
    /// Where checkpoints come from: a log URL (http://…) or directory serving checkpoint and
    /// tile/ (its tiles prove consistency), or a file holding a checkpoint (e.g. a cosigned
    /// copy from `herald log witness`)
    #[arg(value_name = "SOURCE", required = true)]
    sources: Vec<String>,
    /// The log's verifier key (name+id+base64(0x01||key))
    #[arg(long = "log-key", value_name = "VKEY")]
    log_key: String,
    /// A file keeping the largest consistent checkpoint between runs (read if present, then
    /// replaced)
    #[arg(long, value_name = "FILE")]
    state: Option<PathBuf>,
    /// Where to write split-view evidence (a second one gets OUT.2, …)
    #[arg(long, value_name = "OUT", default_value = "split_view.evidence")]
    evidence: PathBuf,
}

/// `herald log verify-evidence`.
#[derive(Args, Debug)]
pub(crate) struct VerifyEvidenceArgs {
    /// The evidence file
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// Require the evidence to be about this log key [default: the key the file names]
    #[arg(long = "log-key", value_name = "VKEY")]
    log_key: Option<String>,
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
        TlogCommand::Monitor(a) => monitor(&a),
        TlogCommand::VerifyEvidence(a) => verify_evidence(&a),
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
                let lines = if keys.is_empty() {
                    lines
                } else {
                    let (good, bad) = client::verified_cosignatures(&cp, lines, &keys);
                    for _ in 0..bad {
                        eprintln!("herald: {url}: a cosignature by no --witness-key, or invalid");
                    }
                    failed += bad;
                    good
                };
                for line in lines {
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
        let policy = read_policy(path).map_err(CliError::new)?;
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

/// `verify-proof --log-policy FILE --checkpoint CP` (C2SP tlog-policy):
/// [`herald_verify::policy_covers`], the rule `herald verify
/// --log-policy` applies too.
/// Returns who cosigned it.
pub(crate) fn policy_covers(
    policy: &Path,
    checkpoint: &Path,
    head: &herald_verify::TreeHead,
) -> Result<String, String> {
    let policy = read_policy(policy)?;
    let bytes = std::fs::read(checkpoint).map_err(|e| format!("{}: {e}", checkpoint.display()))?;
    herald_verify::policy_covers(&policy, &bytes, head)
        .map_err(|e| format!("{}: {e}", checkpoint.display()))
}

/// Read and parse a `--log-policy` file.
pub(crate) fn read_policy(path: &Path) -> Result<Policy, String> {
    let text = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Policy::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
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

/// One checkpoint the monitor saw.
struct Seen {
    source: String,
    bytes: Vec<u8>,
    checkpoint: herald_tlog::Checkpoint,
    /// Where its tiles are (a log URL or directory), if any.
    tiles: Option<String>,
}

fn monitor(a: &MonitorArgs) -> Result<ExitCode, CliError> {
    let key =
        NoteVerifier::parse(&a.log_key).map_err(|e| CliError::new(format!("--log-key: {e}")))?;
    let mut out = String::new();
    let mut bad = false;
    let mut seen: Vec<Seen> = Vec::new();
    // (source, its checkpoint's bytes, where its tiles are)
    type Input = (String, Result<Vec<u8>, String>, Option<String>);
    let mut inputs: Vec<Input> = Vec::new();
    if let Some(state) = a.state.as_ref().filter(|s| s.exists()) {
        let r = std::fs::read(state).map_err(|e| e.to_string());
        inputs.push((state.display().to_string(), r, None));
    }
    for src in &a.sources {
        if Path::new(src).is_file() {
            inputs.push((
                src.clone(),
                std::fs::read(src).map_err(|e| e.to_string()),
                None,
            ));
        } else {
            let r = fetch_from(src, "checkpoint").map_err(|e| e.to_string());
            inputs.push((src.clone(), r, Some(src.clone())));
        }
    }
    for (source, bytes, tiles) in inputs {
        let checked = bytes.and_then(|b| {
            SignedCheckpoint::open(&b, std::slice::from_ref(&key))
                .map(|(c, _)| (b, c.checkpoint().clone()))
                .map_err(|e| e.to_string())
        });
        match checked {
            Ok((bytes, checkpoint)) => seen.push(Seen {
                source,
                bytes,
                checkpoint,
                tiles,
            }),
            Err(e) => {
                bad = true;
                out.push_str(&format!("invalid: {source}: {e}\n"));
            }
        }
    }
    let mut found = 0usize;
    for i in 0..seen.len() {
        for j in i + 1..seen.len() {
            let (small, large) = if seen[i].checkpoint.size() <= seen[j].checkpoint.size() {
                (&seen[i], &seen[j])
            } else {
                (&seen[j], &seen[i])
            };
            let (s, l) = (&small.checkpoint, &large.checkpoint);
            let pair = format!(
                "{} (size {}) and {} (size {})",
                small.source,
                s.size(),
                large.source,
                l.size()
            );
            let prefix = if s.size() == l.size() || s.size() == 0 {
                None
            } else {
                let Some(base) = &large.tiles else {
                    out.push_str(&format!(
                        "unchecked: {pair}: no tiles for the larger tree\n"
                    ));
                    continue;
                };
                let reader = TileReader::new(|p: &str| fetch_from(base, p), l);
                match reader.and_then(|r| r.prefix_proof(s.size())) {
                    Ok(p) => Some(p),
                    Err(e) => {
                        bad = true;
                        out.push_str(&format!("invalid: {}: tiles: {e}\n", large.source));
                        continue;
                    }
                }
            };
            let consistent = match &prefix {
                None => s.size() == 0 || s.root() == l.root(),
                Some((x, _)) => x == s.root(),
            };
            if consistent {
                out.push_str(&format!("consistent: {pair}\n"));
                continue;
            }
            let evidence = herald_tlog::evidence::SplitView::new(
                key.clone(),
                &small.bytes,
                &large.bytes,
                prefix,
            );
            if let Err(e) = evidence.verify() {
                return Err(CliError::new(format!(
                    "{pair}: evidence does not verify: {e}"
                )));
            }
            found += 1;
            let path = if found == 1 {
                a.evidence.clone()
            } else {
                let mut p = a.evidence.clone().into_os_string();
                p.push(format!(".{found}"));
                PathBuf::from(p)
            };
            output::write_atomic(&path, &evidence.to_bytes(), 0o644, Existing::Replace)?;
            out.push_str(&format!(
                "split_view: {pair}: log {} signed both; evidence in {}\n",
                s.origin(),
                path.display()
            ));
        }
    }
    let largest = seen.iter().max_by_key(|s| s.checkpoint.size());
    if let (true, Some(state), Some(largest)) = (found == 0 && !bad, &a.state, largest) {
        output::write_atomic(state, &largest.bytes, 0o644, Existing::Replace)?;
    }
    print(&out)?;
    Ok(if found == 0 && !bad {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn verify_evidence(a: &VerifyEvidenceArgs) -> Result<ExitCode, CliError> {
    let bytes = std::fs::read(&a.file).map_err(|e| CliError::io(&a.file, &e))?;
    let name = a.file.display();
    let verdict = |ok: bool, line: String| -> Result<ExitCode, CliError> {
        print(&format!("{line}\n"))?;
        Ok(if ok {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        })
    };
    let evidence = match herald_tlog::evidence::SplitView::parse(&bytes) {
        Ok(e) => e,
        Err(e) => return verdict(false, format!("invalid: {name}: {e}")),
    };
    if let Some(k) = &a.log_key {
        let want = NoteVerifier::parse(k).map_err(|e| CliError::new(format!("--log-key: {e}")))?;
        if want != *evidence.log() {
            return verdict(
                false,
                format!(
                    "invalid: {name}: about log key {}, not --log-key",
                    evidence.log()
                ),
            );
        }
    }
    match evidence.verify() {
        Ok(p) => verdict(
            true,
            format!(
                "valid split_view evidence: log {} ({}) signed size {} root {} and size {} root {}, \
                 which cannot both be true",
                p.origin,
                evidence.log(),
                p.sizes.0,
                hex(&p.roots.0),
                p.sizes.1,
                hex(&p.roots.1)
            ),
        ),
        Err(e) => verdict(false, format!("invalid: {name}: {e}")),
    }
}
