//! `herald resolve HANDLE|SIGIL [--dns SERVER:PORT] [--trust-anchor FILE|root]
//! [--conduit URL]… [--keyring PATH]… [--json]` (CLI.md *Resolution and
//! Heralds*, PROFILE P15): which sigils a handle names, or which key a
//! sigil is. Exit 0 when resolved, 1 when not, 2 when the command could
//! not run.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use herald_core::Sigil;
use herald_resolve::{ConduitChannel, Failure, Handle, Query, Resolution, Resolved, Source};
use herald_verify::{Keyring, key_line};
use serde::Serialize;

use crate::commands::verify::load_keyrings;
use crate::error::CliError;
use crate::resolution::{self, ChannelArgs, ChannelName};

/// Run `resolve`.
pub(crate) fn run(args: &ResolveArgs) -> Result<ExitCode, CliError> {
    let query = if args.query.starts_with("sigil:") {
        let sigil =
            Sigil::parse(&args.query).map_err(|e| CliError::new(format!("{}: {e}", args.query)))?;
        Query::sigil(sigil)
    } else {
        let handle = Handle::parse(&args.query)
            .map_err(|e| CliError::new(format!("{}: not a sigil, and {e}", args.query)))?;
        Query::handle(handle)
    };
    let keyring = load_keyrings(&args.keyring)?;
    let mut channels = vec![ChannelName::Dns];
    if !args.channels.conduit.is_empty() {
        channels.push(ChannelName::Conduit);
    }
    #[cfg(feature = "dht")]
    if args.dht || !args.channels.dht.nodes.is_empty() {
        channels.push(ChannelName::Dht);
    }
    let runtime = resolution::runtime()?;
    let pins = keyring.clone();
    let outcome = runtime.block_on(async {
        let resolver = resolution::resolver(&channels, &args.channels, keyring)?;
        let outcome = resolver.resolve(&query).await;
        Ok::<_, CliError>(follow_conduits(outcome, &pins).await)
    })?;
    report(args, &outcome)?;
    Ok(if outcome.is_resolved() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Each DNS answer whose record names a conduit (`conduit=`, PROFILE P15)
/// completed with the key history that conduit proves for the sigil: the
/// molts and deprecation since the record was published, judged with
/// `pins` (P8 rule 3's proofs). What that conduit cannot prove is a
/// failure; the DNS answer itself stands (its record bound the handle and
/// the sigil's own key).
async fn follow_conduits(mut outcome: Resolution, pins: &Keyring) -> Resolution {
    let mut answers = Vec::with_capacity(outcome.answers.len());
    for answer in std::mem::take(&mut outcome.answers) {
        if answer.source != Source::Dns || answer.history.is_some() {
            answers.push(answer);
            continue;
        }
        let (answer, failure) = ConduitChannel::follow(answer, pins.clone()).await;
        if let Some(error) = failure {
            outcome.failures.push(Failure::new(Source::Conduit, error));
        }
        answers.push(answer);
    }
    outcome.answers = answers;
    outcome
}

/// Failures as warnings; answers on standard output.
fn report(args: &ResolveArgs, outcome: &Resolution) -> Result<(), CliError> {
    for failure in &outcome.failures {
        crate::notice::warning(&failure.to_string());
    }
    if !outcome.is_resolved() {
        crate::notice::note(&format!("{}: not resolved", args.query));
    }
    if crate::notice::quiet() {
        return Ok(());
    }
    let mut out = std::io::stdout().lock();
    for answer in &outcome.answers {
        if args.json {
            let line = serde_json::to_string(&JsonAnswer::of(&args.query, answer))
                .map_err(|e| CliError::new(e.to_string()))?;
            writeln!(out, "{line}")
        } else {
            writeln!(out, "{}", human(answer))
        }
        .map_err(|e| CliError::stdout(&e))?;
    }
    Ok(())
}

/// A keyring line (CLI.md) and where it came from:
/// `<sigil> ed25519 <hex>  # dns alice@acme.com, DNSSEC-validated`.
fn human(answer: &Resolved) -> String {
    let mut line = key_line(answer.current_key());
    line.push_str("  # ");
    line.push_str(answer.source.name());
    if let Some(handle) = &answer.handle {
        line.push(' ');
        line.push_str(handle.as_str());
    }
    match answer.dnssec {
        Some(true) => line.push_str(", DNSSEC-validated"),
        Some(false) => line.push_str(", not DNSSEC-validated"),
        None => {}
    }
    if let Some(conduit) = &answer.conduit {
        line.push_str(", conduit ");
        line.push_str(conduit);
    }
    line
}

/// One answer in the `resolve --json` shape (CLI.md).
#[derive(Serialize)]
struct JsonAnswer<'a> {
    query: &'a str,
    sigil: String,
    key: String,
    source: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    handle: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dnssec: Option<bool>,
    /// Where the sigil's mail is delivered, when the answer says (a DNS
    /// record's `conduit=`, a DHT record's or the announced conduit).
    #[serde(skip_serializing_if = "Option::is_none")]
    conduit: Option<&'a str>,
    /// Herald certifications (P14): none from these channels.
    certified: [(); 0],
}

impl<'a> JsonAnswer<'a> {
    fn of(query: &'a str, a: &'a Resolved) -> Self {
        Self {
            query,
            sigil: a.sigil.to_string(),
            key: herald_verify::hex(a.current_key().as_bytes()),
            source: a.source.name(),
            handle: a.handle.as_ref().map(Handle::as_str),
            dnssec: a.dnssec,
            conduit: a.conduit.as_deref(),
            certified: [],
        }
    }
}

/// `herald resolve`.
#[derive(Args, Debug)]
#[command(
    after_help = "Prints each answer as a keyring line (with --json, one JSON object a line: query, \
                  sigil, key, source, handle, dnssec, certified). A handle is looked up at \
                  _herald.DOMAIN or NAME._herald.DOMAIN (TXT). Exit status: 0 resolved, 1 not \
                  resolved, 2 the command could not run."
)]
pub(crate) struct ResolveArgs {
    /// A handle (acme.com, alice@acme.com) or a sigil
    #[arg(value_name = "HANDLE|SIGIL")]
    pub(crate) query: String,
    #[command(flatten)]
    pub(crate) channels: ChannelArgs,
    /// Also look a sigil up on the Mainline DHT, last (implied by --dht-bootstrap; without it, the
    /// public DHT; docs/resolution.md)
    #[cfg(feature = "dht")]
    #[arg(long)]
    pub(crate) dht: bool,
    /// Keyring file, or directory of *.pub files, asked first for a sigil (repeatable)
    #[arg(long, value_name = "PATH")]
    pub(crate) keyring: Vec<PathBuf>,
    /// One JSON object a line
    #[arg(long)]
    pub(crate) json: bool,
}
