//! The Mainline DHT (docs/resolution.md *Mainline DHT*, PROFILE.md P15
//! *Distributed lookup*): `herald dht announce` publishes an agent's
//! signed record naming its conduit; `--dht-bootstrap` names the DHT
//! nodes for it, for `herald conduit serve --dht-announce`, and for
//! `--resolve dht`. Without `--dht-bootstrap`, the public Mainline DHT.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Subcommand};
use herald_core::{Sigil, SigilForm};
use herald_resolve::{DhtAnnouncer, DhtConfig};

use crate::error::CliError;
use crate::keyfile;

/// How often `herald conduit serve --dht-announce` announces again (DHT
/// nodes forget announces after about 30 minutes).
pub(crate) const REANNOUNCE: Duration = Duration::from_secs(15 * 60);

/// Most time one announce round may take before the conduit serves anyway.
const ANNOUNCE_TIME: Duration = Duration::from_secs(10);

/// `--dht-bootstrap`, shared by every command that speaks to the DHT.
#[derive(Args, Debug, Default, Clone)]
pub(crate) struct DhtBootstrap {
    /// Mainline DHT bootstrap nodes, HOST:PORT (repeatable or comma-separated) [default: the
    /// public DHT's routers]; all loopback: a local DHT, bound to 127.0.0.1
    #[arg(
        long = "dht-bootstrap",
        value_name = "HOST:PORT",
        value_delimiter = ','
    )]
    pub(crate) nodes: Vec<String>,
}

impl DhtBootstrap {
    /// The DHT node settings these flags give.
    pub(crate) fn config(&self) -> DhtConfig {
        DhtConfig::new().with_bootstrap(self.nodes.clone())
    }
}

/// `herald dht`.
#[derive(Args, Debug)]
pub(crate) struct DhtArgs {
    #[command(subcommand)]
    command: DhtCommand,
}

#[derive(Subcommand, Debug)]
enum DhtCommand {
    /// Publish AGENT's record, signed by its key, naming its conduit (BEP 44); a conduit
    /// announces its own address with `herald conduit serve --dht-announce`
    Announce(AnnounceArgs),
}

/// `herald dht announce`.
#[derive(Args, Debug)]
struct AnnounceArgs {
    /// The agent's secret key file: it signs the record
    #[arg(long, value_name = "AGENT.key")]
    key: PathBuf,
    /// The conduit where the agent's mail is delivered (http:// or https://)
    #[arg(long, value_name = "URL")]
    conduit: String,
    #[command(flatten)]
    bootstrap: DhtBootstrap,
}

/// Run `dht`.
pub(crate) fn run(args: DhtArgs) -> Result<ExitCode, CliError> {
    match args.command {
        DhtCommand::Announce(a) => announce(&a),
    }
}

fn runtime() -> Result<tokio::runtime::Runtime, CliError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::new(format!("could not start the runtime: {e}")))
}

fn announce(a: &AnnounceArgs) -> Result<ExitCode, CliError> {
    let key = keyfile::load(&a.key)?;
    if !herald_resolve::dht_conduit_url_ok(&a.conduit) {
        return Err(CliError::new(format!(
            "--conduit: {:?} is not an http:// or https:// URL",
            a.conduit
        )));
    }
    let announcer = DhtAnnouncer::new(&a.bootstrap.config())
        .map_err(|e| CliError::new(format!("DHT node: {e}")))?;
    let seq = runtime()?
        .block_on(announcer.publish(&key, &a.conduit))
        .map_err(|e| CliError::new(format!("dht announce: {e}")))?;
    if !crate::notice::quiet() {
        let mut out = std::io::stdout().lock();
        writeln!(
            out,
            "published {} -> {} (seq {seq})",
            key.sigil(SigilForm::Default),
            a.conduit
        )
        .map_err(|e| CliError::stdout(&e))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The sigils given to `--dht-announce`: each must carry the 16 digest
/// bytes of the info-hash (a default or long sigil, P2, P15).
pub(crate) fn announced_sigils(texts: &[String]) -> Result<Vec<Sigil>, CliError> {
    texts
        .iter()
        .map(|text| {
            let sigil = super::parse_sigil("--dht-announce", text)?;
            match herald_resolve::dht_info_hash(&sigil) {
                Some(_) => Ok(sigil),
                None => Err(CliError::new(format!(
                    "--dht-announce: {text}: a short or reserved sigil cannot be announced (P15 needs 16 digest bytes)"
                ))),
            }
        })
        .collect()
}

/// `herald conduit serve --dht-announce`: a DHT node announcing `port`
/// for each of `sigils`, once now (bounded, failures logged) and then every
/// [`REANNOUNCE`] on the current runtime until the process ends.
pub(crate) async fn start_announcing(
    bootstrap: &DhtBootstrap,
    sigils: Vec<Sigil>,
    port: u16,
) -> Result<(), CliError> {
    let announcer = DhtAnnouncer::new(&bootstrap.config())
        .map_err(|e| CliError::new(format!("--dht-announce: DHT node: {e}")))?;
    announce_round(&announcer, &sigils, port).await;
    tokio::spawn(async move {
        let mut every = tokio::time::interval(REANNOUNCE);
        every.tick().await;
        loop {
            every.tick().await;
            announce_round(&announcer, &sigils, port).await;
        }
    });
    Ok(())
}

async fn announce_round(announcer: &DhtAnnouncer, sigils: &[Sigil], port: u16) {
    for sigil in sigils {
        match tokio::time::timeout(ANNOUNCE_TIME, announcer.announce_conduit(sigil, port)).await {
            Ok(Ok(())) => tracing::info!(%sigil, port, "announced on the DHT"),
            Ok(Err(error)) => tracing::warn!(%sigil, %error, "DHT announce failed"),
            Err(_) => tracing::warn!(%sigil, "DHT announce timed out"),
        }
    }
}
