//! `herald witness serve|key` (CONDUIT.md `herald witness serve`; C2SP
//! tlog-witness v1.0.0, tlog-cosignature v1), through `herald-witness`.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Args, Subcommand};
use herald_core::SigningKey;
use herald_tlog::note::NoteVerifier;
use herald_witness::Witness;

use crate::error::CliError;
use crate::keyfile;

/// `herald witness`.
#[derive(Args, Debug)]
pub(crate) struct WitnessArgs {
    #[command(subcommand)]
    command: WitnessCommand,
}

#[derive(Subcommand, Debug)]
enum WitnessCommand {
    /// Serve POST /add-checkpoint (C2SP tlog-witness) for the logs given with --log-key
    Serve(ServeArgs),
    /// Print the witness's cosigner verifier key (name+id+base64(0x04||key)), for policies
    Key(KeyArgs),
}

/// The witness's identity.
#[derive(Args, Debug)]
struct IdentityArgs {
    /// The witness's secret key file (from `herald keygen`)
    #[arg(long, value_name = "WITNESS.key")]
    key: PathBuf,
    /// The witness's name in its cosignature lines [default: herald-witness/<first 8 bytes of
    /// its public key in hex>]
    #[arg(long, value_name = "NAME")]
    name: Option<String>,
}

#[derive(Args, Debug)]
struct ServeArgs {
    #[command(flatten)]
    id: IdentityArgs,
    /// Directory of the witness's state (the latest cosigned tree of each log)
    #[arg(long, value_name = "DIR")]
    state: PathBuf,
    /// A log it witnesses: its origin and checkpoint verifier key (repeatable)
    #[arg(long = "log-key", value_name = "ORIGIN=VERIFIER_KEY", required = true)]
    log_keys: Vec<String>,
    /// Address to listen on (port 0 picks a free port)
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8471")]
    listen: SocketAddr,
}

#[derive(Args, Debug)]
struct KeyArgs {
    #[command(flatten)]
    id: IdentityArgs,
}

/// Run `herald witness …`.
pub(crate) fn run(args: WitnessArgs) -> Result<ExitCode, CliError> {
    match args.command {
        WitnessCommand::Serve(a) => serve(a),
        WitnessCommand::Key(a) => {
            let (name, key) = identity(&a.id)?;
            let v = NoteVerifier::cosigner(&name, key.public_key())
                .map_err(|e| CliError::new(format!("--name: {e}")))?;
            let mut stdout = std::io::stdout().lock();
            writeln!(stdout, "{v}").map_err(|e| CliError::stdout(&e))?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn identity(a: &IdentityArgs) -> Result<(String, SigningKey), CliError> {
    let key = keyfile::load(&a.key)?;
    let name = a.name.clone().unwrap_or_else(|| {
        format!(
            "herald-witness/{}",
            herald_verify::hex(&key.public_key().as_bytes()[..8])
        )
    });
    Ok((name, key))
}

fn serve(a: ServeArgs) -> Result<ExitCode, CliError> {
    let (name, key) = identity(&a.id)?;
    let mut logs = Vec::new();
    for spec in &a.log_keys {
        let (origin, vkey) = spec.split_once('=').ok_or_else(|| {
            CliError::new(format!("--log-key: {spec:?} is not ORIGIN=VERIFIER_KEY"))
        })?;
        let v = NoteVerifier::parse(vkey).map_err(|e| CliError::new(format!("--log-key: {e}")))?;
        logs.push((origin.to_owned(), v));
    }
    let witness =
        Witness::open(&name, key, logs, &a.state).map_err(|e| CliError::new(e.to_string()))?;
    herald_witness::server::run(a.listen, Arc::new(witness))
        .map_err(|e| CliError::new(format!("--listen {}: {e}", a.listen)))?;
    Ok(ExitCode::SUCCESS)
}
