//! `herald mcp proxy` and `herald mcp guard` (docs/mcp.md): the MCP
//! wrapper. The stable form (CLI.md extension, scripts depend on it):
//!
//! ```text
//! herald mcp proxy --key AGENT.key --sandbox-key TOOL.key --trace FILE
//!                  [--conduit URL [--conduit-key CONDUIT.pub]] [--pin FILE]
//!                  [--sync release|each] -- COMMAND [ARGS...]
//! ```
//!
//! Standard input and output speak MCP (stdio transport) to the client;
//! COMMAND is the server, started as a child, or `--upstream URL` instead
//! names a server speaking streamable HTTP. Diagnostics go to standard
//! error and never name a key's secret.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Subcommand, ValueEnum};
use herald_mcp::{Conduit, GuardConfig, Keys, ProxyConfig, SessionLimits, SyncPolicy, Upstream};
use herald_verify::{Receiver, Store};

use crate::error::CliError;
use crate::keyfile;

/// `herald mcp`.
#[derive(Args, Debug)]
pub(crate) struct McpArgs {
    #[command(subcommand)]
    pub(crate) command: McpCommand,
}

/// The `herald mcp` subcommands.
#[derive(Subcommand, Debug)]
pub(crate) enum McpCommand {
    /// Wrap an MCP server (a command over stdio, or a URL over streamable HTTP): every
    /// tools/call and its result signed into a trace (docs/mcp.md); everything else passes
    /// through untouched
    Proxy(ProxyArgs),
    /// Face a server: admit a tools/call only with a fresh, valid, never-seen request envelope
    /// in _meta from a keyring sigil; answer others isError with the P11 codes (docs/mcp.md)
    Guard(GuardArgs),
}

/// `herald mcp guard`.
#[derive(Args, Debug)]
#[command(
    after_help = "Example (behind the proxy, or in front of a server any client reaches):\n  \
    herald mcp guard --keyring agent.pub --state guard-state -- node server.js\n\
    Exit status: the server's (with --upstream: 0, or 1 if the server ended the session \
    first); 2 if the guard could not start."
)]
pub(crate) struct GuardArgs {
    /// Admitted signers: a public key file, a keyring file or a directory of *.pub (repeatable)
    #[arg(long, value_name = "PATH", required = true)]
    pub(crate) keyring: Vec<PathBuf>,
    /// Directory of the persistent replay cache (created if absent)
    #[arg(long, value_name = "DIR")]
    pub(crate) state: PathBuf,
    /// Oldest a request envelope may be, in seconds
    #[arg(long, value_name = "SECS", default_value_t = herald_mcp::DEFAULT_MAX_AGE)]
    pub(crate) max_age: u64,
    #[command(flatten)]
    pub(crate) server: ServerArgs,
}

/// `herald mcp proxy`.
#[derive(Args, Debug)]
#[command(after_help = "Example (a client's server command line):\n  \
    herald mcp proxy --key agent.key --sandbox-key tool.key --trace session.herald \\\n    \
    -- npx -y @modelcontextprotocol/server-everything\n\
Or in front of a server speaking streamable HTTP:\n  \
    herald mcp proxy --key agent.key --sandbox-key tool.key --trace session.herald \\\n    \
    --upstream http://127.0.0.1:3001/mcp\n\
    Exit status: the server's (with --upstream: 0, or 1 if the server ended the session \
    first); 2 if the proxy could not start.")]
pub(crate) struct ProxyArgs {
    /// Secret key file of the agent: signs each tools/call and the session genesis
    #[arg(long, value_name = "AGENT.key")]
    pub(crate) key: PathBuf,
    /// Secret key file of the tool sandbox: co-signs each result (scope tool_sandbox)
    #[arg(long, value_name = "TOOL.key")]
    pub(crate) sandbox_key: PathBuf,
    /// Append the session's envelopes to FILE (a CBOR sequence; created if absent)
    #[arg(long, value_name = "FILE")]
    pub(crate) trace: PathBuf,
    /// Also post every envelope to this conduit (CONDUIT.md), http://IP:PORT, a relay; a tool's
    /// result is released only once the conduit acknowledged it with a receipt that verifies,
    /// a refusal becomes an isError result
    #[arg(long, value_name = "URL")]
    pub(crate) conduit: Option<String>,
    /// The conduit's public key file, its receipts and refusals checked under it [default: the
    /// key its /.well-known/herald-conduit names, pinned on first use]
    #[arg(long, value_name = "CONDUIT.pub", requires = "conduit")]
    pub(crate) conduit_key: Option<PathBuf>,
    /// Serve MCP over streamable HTTP at http://ADDR/mcp instead of stdio (each session its own
    /// server and trace); prints "listening on http://ADDR/mcp"
    #[arg(long, value_name = "ADDR")]
    pub(crate) listen: Option<std::net::SocketAddr>,
    /// With --listen: end a session (and its server) after SECS without a request from its client
    /// and with no stream open to it; 0: never
    #[arg(long, value_name = "SECS", default_value_t = 300, requires = "listen")]
    pub(crate) session_idle: u64,
    /// With --listen: most MCP sessions (each its own server) at once; an initialize past it is
    /// answered 503
    #[arg(long, value_name = "N", default_value_t = herald_mcp::DEFAULT_MAX_SESSIONS,
          value_parser = clap::value_parser!(u32).range(1..), requires = "listen")]
    pub(crate) max_sessions: u32,
    /// Pin the tool set in FILE: written on first use, later a changed tool set is refused
    #[arg(long, value_name = "FILE")]
    pub(crate) pin: Option<PathBuf>,
    /// When the trace file is fdatasync'd: `release`, once per call before its result is released
    /// (the request is written, not yet synced, when the call is forwarded); `each`, after every
    /// envelope, so a call is forwarded only once its request is on disk (docs/mcp.md)
    #[arg(long, value_name = "WHEN", value_enum, default_value_t = SyncWhen::Release)]
    pub(crate) sync: SyncWhen,
    #[command(flatten)]
    pub(crate) server: ServerArgs,
}

/// `--sync`: when the trace file is made durable (docs/mcp.md *Release order*).
#[derive(Clone, Copy, Debug, ValueEnum)]
pub(crate) enum SyncWhen {
    /// One fdatasync per call, before its result is released
    Release,
    /// An fdatasync after every envelope, before the call is forwarded too
    Each,
}

impl From<SyncWhen> for SyncPolicy {
    fn from(s: SyncWhen) -> Self {
        match s {
            SyncWhen::Release => Self::Release,
            SyncWhen::Each => Self::Each,
        }
    }
}

/// The MCP server of `proxy` and `guard`: a command, or a URL.
#[derive(Args, Debug)]
pub(crate) struct ServerArgs {
    /// Speak to an MCP server at this URL over streamable HTTP (http://HOST:PORT/mcp) instead
    /// of starting COMMAND
    #[arg(long, value_name = "URL", conflicts_with = "command")]
    pub(crate) upstream: Option<String>,
    /// The MCP server to start, and its arguments
    #[arg(
        last = true,
        required_unless_present = "upstream",
        value_name = "COMMAND"
    )]
    pub(crate) command: Vec<OsString>,
}

impl ServerArgs {
    fn upstream(self) -> Upstream {
        match self.upstream {
            Some(url) => Upstream::Url(url),
            None => Upstream::Command(self.command),
        }
    }
}

/// Run `herald mcp`.
pub(crate) fn run(command: McpCommand) -> Result<ExitCode, CliError> {
    // What the wrapper logs (a torn tail cut, an upstream gone, a session
    // ended) goes to standard error, the message alone (logging.rs);
    // standard output is the MCP client's.
    match command {
        McpCommand::Proxy(a) => proxy(a),
        McpCommand::Guard(a) => guard(a),
    }
}

fn proxy(args: ProxyArgs) -> Result<ExitCode, CliError> {
    let agent = keyfile::load(&args.key)?;
    let sandbox = keyfile::load(&args.sandbox_key)?;
    if agent.public_key() == sandbox.public_key() {
        return Err(CliError::new(
            "--key and --sandbox-key are the same key; the sandbox's co-signature must come \
             from another key (a repeated signer is duplicate_signer, spec §3.4)",
        ));
    }
    let conduit_key = match &args.conduit_key {
        Some(path) => {
            let keyring = super::verify::load_keyrings(std::slice::from_ref(path))?;
            let mut keys = keyring.keys();
            match (keys.next(), keys.next()) {
                (Some(key), None) => Some(key),
                _ => {
                    return Err(CliError::new(format!(
                        "--conduit-key {}: not one public key",
                        path.display()
                    )));
                }
            }
        }
        None => None,
    };
    let conduit = args
        .conduit
        .as_deref()
        .map(super::agent::conduit_addr)
        .transpose()?
        .map(|addr| Conduit::new(addr, conduit_key));
    let config = ProxyConfig {
        keys: Keys { agent, sandbox },
        trace: args.trace,
        pin: args.pin,
        conduit,
        sync: args.sync.into(),
        upstream: args.server.upstream(),
    };
    if let Some(listen) = args.listen {
        let limits = SessionLimits {
            idle: (args.session_idle > 0).then(|| Duration::from_secs(args.session_idle)),
            max_sessions: usize::try_from(args.max_sessions).unwrap_or(usize::MAX),
        };
        herald_mcp::run_http(listen, config, limits).map_err(|e| CliError::new(e.to_string()))?;
        return Ok(ExitCode::SUCCESS);
    }
    let code = herald_mcp::run_stdio(config).map_err(|e| CliError::new(e.to_string()))?;
    Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)))
}

fn guard(args: GuardArgs) -> Result<ExitCode, CliError> {
    let keyring = super::verify::load_keyrings(&args.keyring)?;
    std::fs::create_dir_all(&args.state)
        .map_err(|e| CliError::new(format!("--state {}: {e}", args.state.display())))?;
    let store = Store::open_or_create(args.state.join("guard.redb"), "herald-mcp-guard")
        .map_err(|e| CliError::new(format!("--state {}: {e}", args.state.display())))?;
    let config = GuardConfig {
        receive: {
            let receiver = Receiver::new(store, keyring);
            Box::new(move |envelope| Ok(receiver.receive(envelope)?))
        },
        max_age: args.max_age,
        upstream: args.server.upstream(),
    };
    let code = herald_mcp::run_guard(config).map_err(|e| CliError::new(e.to_string()))?;
    Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)))
}
