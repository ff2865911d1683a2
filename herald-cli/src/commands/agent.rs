//! `herald agent`: a conduit client (CONDUIT.md *herald agent*). It opens a
//! conversation or waits for one, follows its inbox by long poll, verifies
//! each arrival live (herald-verify's [`Receiver`]: signatures, replay,
//! time, with the conduit's receipt; from a notary, the inclusion proof
//! against the conduit's signed tree head), and replies, until it has sent
//! and received `--turns` envelopes.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use herald_agent::sender;
use herald_conduit::client::{self, Response};
use herald_core::cbor::{Map, Value};
use herald_core::{EnvelopeBuilder, EnvelopeRef, PublicKey, SigilForm, SigningKey, Status};
use herald_verify::{InclusionProof, Keyring, Provenance, Receiver, Store, hex, receipt_by};

use crate::commands::verify::load_keyrings;
use crate::error::CliError;
use crate::{clock, keyfile};

/// Each request's bound, beyond a long poll's wait.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// A long poll's wait, seconds.
const POLL_WAIT: u64 = 10;

/// `herald agent`.
#[derive(Args, Debug)]
pub(crate) struct AgentArgs {
    /// The conduit, http://HOST:PORT (an IP address and port)
    #[arg(long, value_name = "URL")]
    conduit: String,
    /// This agent's secret key file
    #[arg(long, value_name = "NAME.key")]
    key: PathBuf,
    /// State directory: this agent's replay cache (created if absent)
    #[arg(long, value_name = "DIR")]
    state: PathBuf,
    /// Keyring files or directories of the peers' keys
    #[arg(long, value_name = "PATH")]
    keyring: Vec<PathBuf>,
    /// The peer's sigil (replies go to whoever wrote)
    #[arg(long, value_name = "SIGIL")]
    peer: String,
    /// Open the conversation with this text (else wait for the peer)
    #[arg(long, value_name = "TEXT")]
    open: Option<String>,
    /// Envelopes to send, and to receive, before stopping
    #[arg(long, value_name = "N", default_value_t = 3)]
    turns: u32,
    /// Give up after this many seconds
    #[arg(long, value_name = "SECS", default_value_t = 60)]
    timeout: u64,
}

/// The socket address of an `http://IP:PORT` URL (no path).
pub(crate) fn conduit_addr(url: &str) -> Result<SocketAddr, CliError> {
    herald_http::client::Url::parse(url)
        .ok()
        .filter(|u| u.target() == "/" && u.authority().ends_with(&format!(":{}", u.port())))
        .and_then(|u| Some(SocketAddr::new(u.host().parse().ok()?, u.port())))
        .ok_or_else(|| CliError::new(format!("--conduit: {url:?} is not http://IP:PORT")))
}

/// The conduit's published key (`/.well-known/herald-conduit`), the one
/// its receipts and refusals are checked under (spec §5.2).
pub(crate) async fn conduit_key(addr: SocketAddr) -> Result<PublicKey, CliError> {
    sender::conduit_key(&herald_http::client::Url::root(addr), REQUEST_TIMEOUT)
        .await
        .map_err(|e| CliError::new(e.to_string()))
}

/// A response with status `want`, else an error naming `what`.
pub(crate) fn expect(
    r: Result<Response, client::ClientError>,
    want: u16,
    what: &str,
) -> Result<Response, CliError> {
    let r = r.map_err(|e| CliError::new(format!("{what}: {e}")))?;
    if r.status != want {
        return Err(CliError::new(format!(
            "{what}: status {} ({})",
            r.status,
            String::from_utf8_lossy(&r.body)
                .chars()
                .take(200)
                .collect::<String>()
        )));
    }
    Ok(r)
}

/// Run `agent`.
pub(crate) fn run(args: &AgentArgs) -> Result<ExitCode, CliError> {
    let addr = conduit_addr(&args.conduit)?;
    let key = keyfile::load(&args.key)?;
    let keyring = load_keyrings(&args.keyring)?;
    let peer = crate::commands::parse_sigil("--peer", &args.peer)?;
    herald_verify::create_private_dir(&args.state).map_err(CliError::file)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::new(format!("could not start the runtime: {e}")))?;
    let deadline = Duration::from_secs(args.timeout);
    runtime.block_on(async {
        tokio::time::timeout(deadline, talk(args, addr, key, keyring, peer))
            .await
            .map_err(|_| CliError::new(format!("no conversation within {}s", args.timeout)))?
    })
}

fn say(line: &str) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}")
        .and_then(|()| out.flush())
        .map_err(|e| CliError::stdout(&e))
}

fn text_payload(text: &str) -> Value {
    let mut m = Map::new();
    m.insert("text", Value::text(text));
    Value::Map(m)
}

fn text_of(env: &EnvelopeRef<'_>) -> String {
    Value::decode(env.payload_bytes())
        .ok()
        .and_then(|v| {
            v.as_map()
                .and_then(|m| m.get("text"))
                .and_then(|t| t.as_text().map(str::to_owned))
        })
        .unwrap_or_default()
}

/// Post one envelope: delivered only with the conduit's receipt (spec
/// §5.2, herald-agent's [`sender`]).
async fn post(addr: SocketAddr, env: &[u8], conduit: &PublicKey) -> Result<(), CliError> {
    sender::deliver(
        &herald_http::client::Url::root(addr),
        env,
        conduit,
        REQUEST_TIMEOUT,
    )
    .await
    .map_err(|e| CliError::new(format!("POST /v1/envelopes: {e}")))?;
    Ok(())
}

async fn talk(
    args: &AgentArgs,
    addr: SocketAddr,
    key: SigningKey,
    mut keyring: Keyring,
    peer: herald_core::Sigil,
) -> Result<ExitCode, CliError> {
    let conduit = conduit_key(addr).await?;
    keyring.insert(conduit, Provenance::Pinned);
    let store = Store::open_or_create(args.state.join("agent.redb"), "herald-agent")
        .map_err(|e| CliError::new(e.to_string()))?;
    let receiver = Receiver::new(store, keyring.clone());
    let me = key.sigil(SigilForm::Default);
    let (mut sent, mut received) = (0u32, 0u32);
    if let Some(text) = &args.open {
        let env = EnvelopeBuilder::genesis(clock::now()?)
            .to(peer)
            .payload(text_payload(text))
            .sign(&key)
            .map_err(|e| CliError::new(format!("cannot build an envelope: {e}")))?;
        post(addr, env.as_bytes(), &conduit).await?;
        sent += 1;
        say(&format!("trace {}", hex(env.view().trace())))?;
        say(&format!("sent {} {text:?}", &hex(&env.id())[..12]))?;
    }
    let mut cursor = 0u64;
    while sent < args.turns || received < args.turns {
        let path = format!("/v1/inbox/{me}?after={cursor}&wait={POLL_WAIT}");
        let r = expect(
            // Signed: an inbox is its owner's (CONDUIT.md *Who may read what*).
            client::get_as(
                addr,
                &path,
                &key,
                REQUEST_TIMEOUT + Duration::from_secs(POLL_WAIT),
            )
            .await,
            200,
            "GET /v1/inbox",
        )?;
        cursor = r
            .header("herald-cursor")
            .and_then(|c| c.parse().ok())
            .unwrap_or(cursor);
        for piece in herald_verify::split_sequence(&r.body, 1 << 20, 64) {
            let herald_verify::Piece::Item { bytes, .. } = piece else {
                return Err(CliError::new("GET /v1/inbox: not a CBOR sequence"));
            };
            let report = receiver
                .receive(bytes)
                .map_err(|e| CliError::new(e.to_string()))?;
            let env = EnvelopeRef::decode(bytes)
                .map_err(|e| CliError::new(format!("an arrival does not decode: {e}")))?;
            let id = hex(env.id());
            let receipt = receipt_by(&env, &conduit).is_ok();
            if report.status() != Status::Valid || !receipt {
                let codes: Vec<_> = report.reasons.iter().map(|r| r.code.name()).collect();
                return Err(CliError::new(format!(
                    "arrival {id}: {} {codes:?}, receipt {}",
                    report.status().name(),
                    if receipt { "present" } else { "missing" }
                )));
            }
            let proof = expect(
                client::get(addr, &format!("/v1/proof/inclusion/{id}"), REQUEST_TIMEOUT).await,
                200,
                "GET /v1/proof/inclusion",
            )?;
            let proof = InclusionProof::decode(&proof.body)
                .map_err(|e| CliError::new(format!("inclusion proof of {id}: {e}")))?;
            proof
                .verify(&keyring)
                .map_err(|e| CliError::new(format!("inclusion proof of {id}: {e}")))?;
            proof
                .matches(&env)
                .map_err(|e| CliError::new(format!("inclusion proof of {id}: {e}")))?;
            received += 1;
            say(&format!(
                "received {} {:?}: valid, receipt by the conduit, in its log at {} of {}",
                &id[..12],
                text_of(&env),
                proof.index(),
                proof.size()
            ))?;
            if sent < args.turns {
                let name = args.key.file_stem().map(|s| s.to_string_lossy());
                let text = format!("reply {} from {}", sent + 1, name.unwrap_or_default());
                let reply = EnvelopeBuilder::reply(&env, clock::now()?)
                    .to(env.from_sigil())
                    .payload(text_payload(&text))
                    .sign(&key)
                    .map_err(|e| CliError::new(format!("cannot build an envelope: {e}")))?;
                post(addr, reply.as_bytes(), &conduit).await?;
                sent += 1;
                say(&format!("sent {} {text:?}", &hex(&reply.id())[..12]))?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
