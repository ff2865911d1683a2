//! `herald resolve HANDLE|SIGIL [--dns SERVER:PORT] [--trust-anchor FILE|root]
//! [--conduit URL]… [--keyring PATH]… [--heralds FILE --log-policy FILE]
//! [--json]` (CLI.md *Resolution and Heralds*, PROFILE P14, P15): which
//! sigils a handle names, or which key a sigil is, and what a quorum of
//! the listed Heralds certifies about each. Exit 0 when resolved, 1 when
//! not, 2 when the command could not run.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use herald_core::Sigil;
use herald_resolve::{
    ConduitChannel, Failure, Handle, HeraldChannel, Query, Resolution, Resolved, Source,
};
use herald_verify::{Certified, Keyring, ReportedClaim, key_line};
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
    let heralds = match &args.heralds {
        Some(list) => {
            let policy = match &args.log_policy {
                Some(p) => Some(super::tlog::read_policy(p).map_err(CliError::new)?),
                None => None,
            };
            Some(crate::heralds::load(list, policy.as_ref())?)
        }
        None => None,
    };
    let now = crate::clock::now()?;
    let runtime = resolution::runtime()?;
    let pins = keyring.clone();
    let (outcome, certified) = runtime.block_on(async {
        let resolver = resolution::resolver(&channels, &args.channels, keyring)?;
        let outcome = resolver.resolve(&query).await;
        let outcome = follow_conduits(outcome, &pins).await;
        Ok::<_, CliError>(match &heralds {
            Some(h) => by_heralds(outcome, query.sigil, &HeraldChannel::new(h.clone(), now)).await,
            None => (outcome, Vec::new()),
        })
    })?;
    report(args, &outcome, &certified)?;
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

/// What the Heralds certify about each sigil of `outcome` (and `asked`),
/// and, when a quorum certifies a key for `asked` that no channel gave,
/// that key as an answer of its own (`source: "herald"`, PROFILE P14: it
/// hashes to the sigil, [`herald_verify::Certified::keys`]).
async fn by_heralds(
    mut outcome: Resolution,
    asked: Option<Sigil>,
    channel: &HeraldChannel,
) -> (Resolution, Vec<(Sigil, Certified)>) {
    let mut sigils: Vec<Sigil> = asked.into_iter().collect();
    for a in &outcome.answers {
        if !sigils.iter().any(|s| s.same_key_as(&a.sigil)) {
            sigils.push(a.sigil);
        }
    }
    let mut certified = Vec::new();
    for sigil in sigils {
        let (c, failures) = channel.certified(&sigil, &[]).await;
        for (url, e) in failures {
            outcome.failures.push(Failure::new(
                Source::Herald,
                herald_resolve::ResolveError::Unreachable {
                    detail: format!("Herald {url}: {e}"),
                },
            ));
        }
        if Some(sigil) == asked {
            for key in c.keys().filter(|k| sigil.names_key(k.as_bytes())) {
                if !outcome.answers.iter().any(|a| a.key == key) {
                    outcome
                        .answers
                        .push(Resolved::new(sigil, key, Source::Herald));
                }
            }
        }
        certified.push((sigil, c));
    }
    (outcome, certified)
}

/// Failures as warnings; answers on standard output.
fn report(
    args: &ResolveArgs,
    outcome: &Resolution,
    certified: &[(Sigil, Certified)],
) -> Result<(), CliError> {
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
        let claims: Vec<ReportedClaim> = certified
            .iter()
            .filter(|(s, _)| s.same_key_as(&answer.sigil))
            .flat_map(|(_, c)| c.reported(&answer.sigil))
            .collect();
        if args.json {
            let line = serde_json::to_string(&JsonAnswer::of(&args.query, answer, claims))
                .map_err(|e| CliError::new(e.to_string()))?;
            writeln!(out, "{line}")
        } else {
            writeln!(out, "{}", human(answer, &claims))
        }
        .map_err(|e| CliError::stdout(&e))?;
    }
    Ok(())
}

/// A keyring line (CLI.md) and where it came from:
/// `<sigil> ed25519 <hex>  # dns alice@acme.com, DNSSEC-validated`.
fn human(answer: &Resolved, claims: &[ReportedClaim]) -> String {
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
    for c in claims {
        line.push_str(&format!(
            ", certified {} {} by {} Herald{}",
            c.claim,
            c.value,
            c.heralds.len(),
            if c.heralds.len() == 1 { "" } else { "s" }
        ));
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
    /// What a quorum of the listed Heralds certifies about the sigil
    /// (PROFILE P14; empty without --heralds).
    certified: Vec<ReportedClaim>,
}

impl<'a> JsonAnswer<'a> {
    fn of(query: &'a str, a: &'a Resolved, certified: Vec<ReportedClaim>) -> Self {
        Self {
            query,
            sigil: a.sigil.to_string(),
            key: herald_verify::hex(a.current_key().as_bytes()),
            source: a.source.name(),
            handle: a.handle.as_ref().map(Handle::as_str),
            dnssec: a.dnssec,
            conduit: a.conduit.as_deref(),
            certified,
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
    /// The Herald list (PROFILE P14): each listed Herald with a URL is asked for its
    /// certifications of the sigil; a key a threshold of distinct Heralds certifies resolves it
    /// (source herald), and every certified claim is listed
    #[arg(long, value_name = "FILE", requires = "log_policy")]
    pub(crate) heralds: Option<PathBuf>,
    /// The C2SP tlog-policy each Herald's log is checked under (with --heralds)
    #[arg(long = "log-policy", value_name = "FILE", requires = "heralds")]
    pub(crate) log_policy: Option<PathBuf>,
}
