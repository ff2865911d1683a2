//! `herald conduit serve` (CONDUIT.md *Starting one*): the reference
//! conduit of [`herald_conduit`] on a loopback port by default. It prints
//! `listening on http://ADDR` once it accepts connections (with
//! `--dht-announce`, once its first DHT announce round is over), and exits 0
//! after SIGTERM or SIGINT once what was in flight is answered.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Subcommand};
use herald_conduit::{Conduit, Config, Roles};

use crate::commands::verify::load_keyrings;
use crate::error::CliError;
use crate::keyfile;

/// `herald conduit`.
#[derive(Args, Debug)]
pub(crate) struct ConduitArgs {
    #[command(subcommand)]
    command: ConduitCommand,
}

#[derive(Subcommand, Debug)]
enum ConduitCommand {
    /// Serve the conduit's HTTP API (CONDUIT.md) until SIGTERM or SIGINT
    Serve(ServeArgs),
}

/// `herald conduit serve`.
#[derive(Args, Debug)]
struct ServeArgs {
    /// The conduit's secret key file (it signs receipts, refusals and tree heads)
    #[arg(long, value_name = "CONDUIT.key")]
    key: PathBuf,
    /// State directory (replay cache, envelopes, inboxes), created if absent
    #[arg(long, value_name = "DIR")]
    state: PathBuf,
    /// Address to listen on (port 0: a free port, named in the `listening on` line)
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8470")]
    listen: SocketAddr,
    /// Roles beyond pass-through, comma-separated: relay, notary
    #[arg(long, value_name = "ROLES", value_delimiter = ',')]
    roles: Vec<String>,
    /// Keyring files or directories of the senders' pinned keys
    #[arg(long, value_name = "PATH")]
    keyring: Vec<PathBuf>,
    /// Audit log directory (notary) [default: DIR/log]
    #[arg(long, value_name = "DIR")]
    log: Option<PathBuf>,
    /// Every answer within this many milliseconds, refusals included
    #[arg(long, value_name = "MS", default_value_t = 5000)]
    deadline_ms: u64,
    /// Largest envelope accepted, bytes
    #[arg(long, value_name = "BYTES", default_value_t = 1 << 20)]
    max_body: usize,
    /// Posts per second per sender sigil (no limit when absent)
    #[arg(long, value_name = "PER_SEC")]
    rate: Option<u32>,
    /// Burst above --rate [default: --rate]
    #[arg(long, value_name = "N")]
    burst: Option<u32>,
    /// Posts per second, all together, from senders the conduit holds no key for and births (0:
    /// no limit)
    #[arg(long, value_name = "PER_SEC", default_value_t = herald_conduit::config::DEFAULT_RATE_UNKNOWN)]
    rate_unknown: u32,
    /// Most signatures in an envelope; more are refused (413 too_many_signatures) before any is
    /// verified
    #[arg(long, value_name = "N", default_value_t = herald_conduit::config::DEFAULT_MAX_SIGNATURES)]
    max_signatures: usize,
    /// Sign a tree head at least this often, milliseconds (notary)
    #[arg(long, value_name = "MS", default_value_t = 500)]
    batch_ms: u64,
    /// Posts in flight before the conduit sheds load (503 overloaded)
    #[arg(long, value_name = "N", default_value_t = herald_conduit::config::DEFAULT_MAX_INFLIGHT)]
    max_inflight: usize,
    /// The log's C2SP origin (checkpoint origin line and key name) [default: the conduit's
    /// sigil]
    #[arg(long, value_name = "ORIGIN")]
    origin: Option<String>,
    /// Keep the state in a PostgreSQL database shared by a fleet of conduits (postgres://...)
    /// instead of the redb file in --state
    #[arg(long, value_name = "URL")]
    store: Option<String>,
    /// A witness that cosigns each new checkpoint (notary): its cosigner verifier key (as `herald
    /// witness key` prints it), `=`, its tlog-witness URL prefix (repeatable)
    #[arg(long = "witness", value_name = "VKEY=URL")]
    witnesses: Vec<String>,
    /// Bytes of envelopes in one trace or inbox answer at most (also at most 1000 envelopes);
    /// `Herald-Cursor` and `?after=` page through the rest
    #[arg(long, value_name = "BYTES", default_value_t = herald_conduit::page::DEFAULT_MAX_PAGE)]
    max_page: usize,
    /// Announce this conduit on the Mainline DHT as serving SIGIL (BEP 5, PROFILE P15), before
    /// listening and every 15 minutes (repeatable or comma-separated; docs/resolution.md)
    #[cfg(feature = "dht")]
    #[arg(long = "dht-announce", value_name = "SIGIL", value_delimiter = ',')]
    dht_announce: Vec<String>,
    #[cfg(feature = "dht")]
    #[command(flatten)]
    dht: crate::commands::dht::DhtBootstrap,
    /// Serve every envelope and trace to anyone (a public archive); without it, only a
    /// participant of the trace reads them, with a signed request (inboxes always need their
    /// owner's signature)
    #[arg(long)]
    public: bool,
    /// Erase stored envelopes whose ts is more than DAYS days old, in the background (0: keep
    /// them forever); what remains of each is its log leaf, its replay claim and a signed
    /// tombstone (CONDUIT.md, Retention and erasure)
    #[arg(long, value_name = "DAYS", default_value_t = 0)]
    retain: u64,
}

/// Run `conduit`.
pub(crate) fn run(args: ConduitArgs) -> Result<ExitCode, CliError> {
    match args.command {
        ConduitCommand::Serve(a) => serve(a),
    }
}

fn roles(names: &[String]) -> Result<Roles, CliError> {
    let mut roles = Roles::default();
    for name in names.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
        match name {
            "relay" => roles.relay = true,
            "notary" => roles.notary = true,
            other => {
                return Err(CliError::new(format!(
                    "--roles: unknown role {other:?} (one of: relay, notary)"
                )));
            }
        }
    }
    Ok(roles)
}

fn serve(a: ServeArgs) -> Result<ExitCode, CliError> {
    if a.deadline_ms == 0 || a.batch_ms == 0 || a.max_body == 0 {
        return Err(CliError::new(
            "--deadline-ms, --batch-ms and --max-body must be greater than 0",
        ));
    }
    if a.max_page == 0 {
        return Err(CliError::new("--max-page must be greater than 0"));
    }
    if a.max_signatures == 0 {
        return Err(CliError::new(
            "--max-signatures must be at least 1 (the origin)",
        ));
    }
    #[cfg(feature = "dht")]
    let dht_sigils = crate::commands::dht::announced_sigils(&a.dht_announce)?;
    let key = keyfile::load(&a.key)?;
    let keyring = load_keyrings(&a.keyring)?;
    let mut config = Config::new(&a.state);
    config.roles = roles(&a.roles)?;
    config.log = a.log;
    config.deadline = Duration::from_millis(a.deadline_ms);
    config.max_body = a.max_body;
    config.rate = a.rate;
    config.burst = a.burst;
    config.rate_unknown = a.rate_unknown;
    config.max_signatures = a.max_signatures;
    config.batch = Duration::from_millis(a.batch_ms);
    config.max_inflight = a.max_inflight;
    config.origin = a.origin;
    config.max_page = a.max_page;
    config.public = a.public;
    config.retain_days = a.retain;
    if let Some(url) = &a.store
        && !(url.starts_with("postgres://") || url.starts_with("postgresql://"))
    {
        return Err(CliError::new(
            "--store: expected a postgres:// or postgresql:// URL",
        ));
    }
    config.store = a.store;
    if config.store.is_some() && !a.witnesses.is_empty() {
        return Err(CliError::new(
            "--witness works with the file log only, not yet with --store (docs/conduit.md, Witnesses)",
        ));
    }
    let roles_notary = config.roles.notary;
    for spec in &a.witnesses {
        if !roles_notary {
            return Err(CliError::new("--witness needs --roles notary"));
        }
        config.witnesses.push(
            herald_witness::client::WitnessTarget::parse(spec)
                .map_err(|e| CliError::new(format!("--witness: {e}")))?,
        );
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::new(format!("could not start the runtime: {e}")))?;
    let conduit = runtime
        .block_on(Conduit::open(config, key, keyring))
        .map_err(|e| CliError::new(e.to_string()))?;
    runtime.block_on(async move {
        // Installed before the `listening on` line (see termination()).
        let stop = herald_conduit::termination();
        let listener = herald_conduit::listen(a.listen)
            .map_err(|e| CliError::new(format!("--listen {}: {e}", a.listen)))?;
        let addr = listener
            .local_addr()
            .map_err(|e| CliError::new(format!("--listen {}: {e}", a.listen)))?;
        #[cfg(feature = "dht")]
        if !dht_sigils.is_empty() {
            crate::commands::dht::start_announcing(&a.dht, dht_sigils, addr.port()).await?;
        }
        {
            let mut out = std::io::stdout().lock();
            writeln!(out, "listening on http://{addr}")
                .and_then(|()| out.flush())
                .map_err(|e| CliError::stdout(&e))?;
        }
        herald_conduit::serve(conduit, listener, stop)
            .await
            .map_err(|e| CliError::new(format!("serving on {addr}: {e}")))
    })?;
    Ok(ExitCode::SUCCESS)
}
