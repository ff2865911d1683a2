//! The audit log in C2SP forms (issue 17): `herald log checkpoint`, `log
//! key` and `log tiles` — a tlog-checkpoint signed note of the log's
//! current tree, the log key's verifier-key text, and the log as a static
//! tile tree any web server can serve.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use herald_tlog::note::{self, Verifier};
use herald_tlog::{Checkpoint, tiles};

use super::log::{SignArgs, open, signing_key};
use crate::error::CliError;
use crate::output::{Existing, write_atomic};

/// `herald log checkpoint`.
#[derive(Args, Debug)]
pub(crate) struct CheckpointArgs {
    /// The log directory
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// The log's origin line (C2SP tlog-checkpoint), also the key's name
    #[arg(long, value_name = "ORIGIN")]
    origin: String,
    #[command(flatten)]
    sign: SignArgs,
}

/// `herald log key`.
#[derive(Args, Debug)]
pub(crate) struct KeyArgs {
    /// The log directory
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// The log's origin, the key's name
    #[arg(long, value_name = "ORIGIN")]
    origin: String,
}

/// `herald log tiles`.
#[derive(Args, Debug)]
pub(crate) struct TilesArgs {
    /// The log directory
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// Where to write the tile tree (created; files already there are kept
    /// unless --force)
    #[arg(value_name = "OUT")]
    out: PathBuf,
    /// The log's origin line, also the key's name
    #[arg(long, value_name = "ORIGIN")]
    origin: String,
    /// Replace files already in OUT
    #[arg(long)]
    force: bool,
    #[command(flatten)]
    sign: SignArgs,
}

fn note_error(e: impl std::fmt::Display) -> CliError {
    CliError::new(format!("--origin: {e}"))
}

/// The log's current tree as a signed C2SP checkpoint.
fn signed_checkpoint(dir: &Path, origin: &str, sign: &SignArgs) -> Result<String, CliError> {
    if origin.is_empty() || origin.contains(['\n', '\r']) {
        return Err(CliError::new("--origin: one non-empty line"));
    }
    let log = open(dir)?;
    let key = signing_key(&log, sign)?;
    let checkpoint = Checkpoint {
        origin: origin.to_owned(),
        size: log.len(),
        root: log.tree().root(),
        extensions: Vec::new(),
    };
    note::sign(&checkpoint.to_text(), origin, &key).map_err(note_error)
}

pub(crate) fn checkpoint(a: &CheckpointArgs) -> Result<ExitCode, CliError> {
    let note = signed_checkpoint(&a.dir, &a.origin, &a.sign)?;
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(note.as_bytes())
        .map_err(|e| CliError::stdout(&e))?;
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn key(a: &KeyArgs) -> Result<ExitCode, CliError> {
    let log = open(&a.dir)?;
    let verifier = Verifier::new(&a.origin, *log.public_key()).map_err(note_error)?;
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{}", verifier.to_text()).map_err(|e| CliError::stdout(&e))?;
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn tiles(a: &TilesArgs) -> Result<ExitCode, CliError> {
    let note = signed_checkpoint(&a.dir, &a.origin, &a.sign)?;
    let log = open(&a.dir)?;
    let leaves = (0..log.len())
        .map(|i| log.leaf_bytes(i))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| CliError::new(e.to_string()))?;
    let entries: Vec<&[u8]> = leaves.iter().map(Vec::as_slice).collect();
    let tiles = tiles::level0_tiles(&entries).map_err(|e| CliError::new(e.to_string()))?;
    let existing = Existing::from_force(a.force);
    for (path, bytes) in &tiles {
        let file = a.out.join(path);
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent).map_err(|e| CliError::io(parent, &e))?;
        }
        write_atomic(&file, bytes, 0o644, existing)?;
    }
    std::fs::create_dir_all(&a.out).map_err(|e| CliError::io(&a.out, &e))?;
    // The checkpoint last: it never names tiles that are not there yet.
    write_atomic(
        &a.out.join("checkpoint"),
        note.as_bytes(),
        0o644,
        Existing::Replace,
    )?;
    let mut stdout = std::io::stdout().lock();
    writeln!(
        stdout,
        "{} leaves: {} tiles and the checkpoint in {}",
        log.len(),
        tiles.len(),
        a.out.display()
    )
    .map_err(|e| CliError::stdout(&e))?;
    Ok(ExitCode::SUCCESS)
}
