//! Key resolution from the command line (PROFILE P15, CLI.md *Resolution
//! and Heralds*): the channels `--resolve` names and the flags they take,
//! and the unknown signers of a `verify` set resolved through them.
//!
//! A signer is resolved through DNS only by a handle it claims itself: a
//! `handle` attestation (P12) on one of its envelopes (its birth
//! included). The key the handle's record names is used only when it
//! hashes to the signer's sigil (the resolver checks) and the envelope
//! that claimed the handle verifies under it, so both directions agree;
//! a handle DNS does not confirm is never shown as the signer's name.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use clap::{Args, ValueEnum};
use herald_core::cbor::Limits;
use herald_core::{CheckOptions, EnvelopeRef, Kind, PublicKey, Reason, Sigil, check};
use herald_resolve::{
    DnsChannel, DnsServer, Handle, Query, Resolution, Resolved, Resolver, Source, TrustAnchors,
};
use herald_verify::{Input, Keyring, Piece, Provenance, ResolvedAt, sequence_pieces};

use crate::error::CliError;

/// Most signers of one set resolved.
const MAX_SIGNERS: usize = 256;

/// Most handles one signer's envelopes may claim that are tried.
const MAX_HANDLES: usize = 4;

/// Largest trust anchor file read.
const MAX_ANCHOR_FILE: u64 = 64 << 10;

/// A resolution channel `--resolve` names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum ChannelName {
    // (Plain comments: doc comments would make clap's help long-form.)
    // TXT records at a handle's `_herald` name.
    Dns,
    // A conduit's `GET /v1/keys/{sigil}`.
    Conduit,
    // The Mainline DHT.
    Dht,
}

/// The flags of the resolution channels (`herald resolve`, `herald verify --resolve`).
#[derive(Args, Debug, Default, Clone)]
pub(crate) struct ChannelArgs {
    /// The DNS server to ask, as IP:PORT [default: the system's resolver]
    #[arg(long, value_name = "SERVER:PORT")]
    pub(crate) dns: Option<SocketAddr>,
    /// DNSSEC trust anchors: a file of the zone's DNSKEY records (as `dig DNSKEY ZONE` prints them), or
    /// `root` for the root zone's keys; answers under an anchor must validate [default: no
    /// validation, every answer dnssec: false]
    #[arg(long = "trust-anchor", value_name = "FILE|root")]
    pub(crate) trust_anchor: Option<String>,
    /// A conduit to ask for keys (repeatable)
    #[arg(long, value_name = "URL")]
    pub(crate) conduit: Vec<String>,
    /// The Mainline DHT's bootstrap nodes (docs/resolution.md)
    #[cfg(feature = "dht")]
    #[command(flatten)]
    pub(crate) dht: crate::commands::dht::DhtBootstrap,
}

/// A current-thread runtime for the channels.
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, CliError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::new(format!("cannot start the resolver: {e}")))
}

/// The trust anchors `--trust-anchor` names.
fn anchors(arg: Option<&str>) -> Result<Option<TrustAnchors>, CliError> {
    let Some(arg) = arg else { return Ok(None) };
    if arg == "root" {
        return Ok(Some(TrustAnchors::root()));
    }
    let path = Path::new(arg);
    let size = std::fs::metadata(path)
        .map_err(|e| CliError::io(path, &e))?
        .len();
    if size > MAX_ANCHOR_FILE {
        return Err(CliError::new(format!(
            "--trust-anchor {arg}: larger than {MAX_ANCHOR_FILE} bytes"
        )));
    }
    let text = std::fs::read_to_string(path).map_err(|e| CliError::io(path, &e))?;
    TrustAnchors::parse(&text)
        .map(Some)
        .map_err(|e| CliError::new(format!("--trust-anchor {arg}: {e}")))
}

/// A resolver asking `keyring`, then `channels` in order. Call it within
/// a tokio runtime.
pub(crate) fn resolver(
    channels: &[ChannelName],
    args: &ChannelArgs,
    keyring: Keyring,
) -> Result<Resolver, CliError> {
    // The pinned keys also judge conduits' molt proofs (P8 rule 3).
    let pins = keyring.clone();
    let mut resolver = Resolver::new().with_keyring(keyring);
    let mut seen = Vec::new();
    for &channel in channels {
        if seen.contains(&channel) {
            continue;
        }
        seen.push(channel);
        resolver = match channel {
            ChannelName::Dns => {
                let server = args.dns.map_or(DnsServer::System, DnsServer::At);
                let dns = DnsChannel::new(server, anchors(args.trust_anchor.as_deref())?)
                    .map_err(|e| CliError::new(format!("dns: {e}")))?;
                resolver.with_channel(Box::new(dns))
            }
            ChannelName::Conduit => conduits(resolver, args, &pins)?,
            ChannelName::Dht => resolver.with_channel(dht_channel(args, &pins)?),
        };
    }
    Ok(resolver)
}

/// `resolver` with a conduit channel for each `--conduit URL`, in order
/// (PROFILE P15 *Conduits*), judging answers with `pins`.
fn conduits(
    mut resolver: Resolver,
    args: &ChannelArgs,
    pins: &Keyring,
) -> Result<Resolver, CliError> {
    if args.conduit.is_empty() {
        return Err(CliError::new("--resolve conduit needs --conduit URL"));
    }
    for url in &args.conduit {
        let channel = herald_resolve::ConduitChannel::new(url, pins.clone())
            .map_err(|e| CliError::new(format!("--conduit: {e}")))?;
        resolver = resolver.with_channel(Box::new(channel));
    }
    Ok(resolver)
}

/// The Mainline DHT channel (docs/resolution.md *Mainline DHT*).
#[cfg(feature = "dht")]
fn dht_channel(
    args: &ChannelArgs,
    pins: &Keyring,
) -> Result<Box<dyn herald_resolve::Channel>, CliError> {
    let channel = herald_resolve::DhtChannel::new(&args.dht.config())
        .map_err(|e| CliError::new(format!("dht: DHT node: {e}")))?
        .with_keyring(pins.clone());
    Ok(Box::new(channel))
}

/// Without the `dht` feature there is no DHT channel.
#[cfg(not(feature = "dht"))]
fn dht_channel(_: &ChannelArgs, _: &Keyring) -> Result<Box<dyn herald_resolve::Channel>, CliError> {
    Err(CliError::new(
        "--resolve dht: this herald was built without the dht feature",
    ))
}

/// The handles a signer's envelopes claim, each with the envelope that claimed it.
type Claims<'a> = HashMap<Sigil, Vec<(Handle, &'a [u8])>>;

/// The signers of `inputs` without a pinned key in `keyring`, with the
/// handles their own envelopes claim (P12 `handle`). The envelopes are
/// read on every core, in chunks merged in input order (this pass is all
/// that resolution adds to a verify whose signers' records are cached).
fn unknown_signers<'a>(inputs: &'a [Input], keyring: &Keyring) -> Claims<'a> {
    let items: Vec<&'a [u8]> = inputs
        .iter()
        .flat_map(|i| {
            sequence_pieces(
                &i.bytes,
                Limits::DEFAULT.max_size,
                crate::input::SPLIT_DEPTH,
            )
        })
        .filter_map(|piece| match piece {
            Piece::Item { bytes, .. } => Some(bytes),
            Piece::Unsplittable { .. } => None,
        })
        .collect();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = items.len().div_ceil(threads).max(MIN_CHUNK);
    let parts: Vec<ChunkClaims<'a>> = std::thread::scope(|s| {
        let running: Vec<_> = items
            .chunks(chunk)
            .map(|c| s.spawn(move || claims_in(c, keyring)))
            .collect();
        running.into_iter().filter_map(|t| t.join().ok()).collect()
    });
    let mut claims: Claims<'a> = HashMap::new();
    for part in parts {
        for (from, handles) in part {
            if !claims.contains_key(&from) && claims.len() >= MAX_SIGNERS {
                continue;
            }
            let known = claims.entry(from).or_default();
            for (h, bytes, birth) in handles {
                if known.len() < MAX_HANDLES && !known.iter().any(|(k, _)| *k == h) {
                    // A birth's claim first: it names the identity, not one message.
                    if birth {
                        known.insert(0, (h, bytes));
                    } else {
                        known.push((h, bytes));
                    }
                }
            }
        }
    }
    claims
}

/// Fewest envelopes one thread of [`unknown_signers`] reads.
const MIN_CHUNK: usize = 1024;

/// The claims of one chunk: each unpinned signer (in first-seen order
/// within the chunk) with its handles, each with its envelope and whether
/// that is a birth.
type ChunkClaims<'a> = Vec<(Sigil, Vec<(Handle, &'a [u8], bool)>)>;

/// [`unknown_signers`] over one chunk of envelopes.
fn claims_in<'a>(items: &[&'a [u8]], keyring: &Keyring) -> ChunkClaims<'a> {
    let mut out: ChunkClaims<'a> = Vec::new();
    let mut at: HashMap<Sigil, usize> = HashMap::new();
    for &bytes in items {
        let Ok(env) = EnvelopeRef::decode(bytes) else {
            continue;
        };
        let from = env.from_sigil();
        let slot = match at.get(&from) {
            Some(&i) => i,
            None => {
                if from.is_reserved()
                    || keyring
                        .lookup(&from)
                        .is_some_and(|(_, p)| p == Provenance::Pinned)
                    || out.len() >= MAX_SIGNERS
                {
                    continue;
                }
                at.insert(from, out.len());
                out.push((from, Vec::new()));
                out.len() - 1
            }
        };
        let claimed = env
            .attestation("handle")
            .and_then(|v| v.as_text())
            .and_then(|t| Handle::parse(t).ok());
        if let (Some(h), Some((_, handles))) = (claimed, out.get_mut(slot))
            && handles.len() < MAX_HANDLES
            && !handles.iter().any(|(known, ..)| *known == h)
        {
            handles.push((h, bytes, env.kind() == Kind::Birth));
        }
    }
    out
}

/// Whether `envelope`'s origin signature verifies under `key`.
fn signed_by(envelope: &[u8], key: PublicKey) -> bool {
    let mut one = Keyring::new();
    one.insert(key, Provenance::Pinned);
    let mut reasons: Vec<Reason> = Vec::new();
    check(envelope, &one, &CheckOptions::DEFAULT, &mut reasons);
    !reasons
        .iter()
        .any(|r| r.index == Some(0) && !r.code.is_warning())
}

/// Resolve the signers of `inputs` that `keyring` has no pinned key for,
/// through `channels`, and add what resolves to `keyring` (with its
/// handle). Failures are warnings: the audit then reports the signer
/// unknown, as without resolution.
pub(crate) fn resolve_signers(
    inputs: &[Input],
    keyring: &mut Keyring,
    channels: &[ChannelName],
    args: &ChannelArgs,
) -> Result<(), CliError> {
    let claims = unknown_signers(inputs, keyring);
    if claims.is_empty() {
        return Ok(());
    }
    let runtime = runtime()?;
    let results = runtime.block_on(async {
        let resolver = Arc::new(resolver(channels, args, Keyring::new())?);
        let mut tasks = tokio::task::JoinSet::new();
        for (sigil, handles) in &claims {
            let resolver = resolver.clone();
            let (sigil, handles) = (*sigil, handles.iter().map(|(h, _)| h.clone()).collect());
            tasks.spawn(async move { (sigil, resolve_one(&resolver, sigil, handles).await) });
        }
        let mut results = Vec::new();
        while let Some(done) = tasks.join_next().await {
            if let Ok(result) = done {
                results.push(result);
            }
        }
        Ok::<_, CliError>(results)
    })?;
    let mut results = results;
    results.sort_by_key(|(sigil, _)| sigil.to_string());
    for (sigil, outcome) in results {
        for failure in &outcome.failures {
            crate::notice::warning(&format!("resolving {sigil}: {failure}"));
        }
        let Some(answer) = outcome.answers.first() else {
            for (handle, _) in claims.get(&sigil).into_iter().flatten() {
                crate::notice::note(&format!(
                    "{sigil} claims the handle {handle}, which does not name it: not used"
                ));
            }
            continue;
        };
        accept(
            keyring,
            sigil,
            answer,
            claims.get(&sigil).map_or(&[][..], Vec::as_slice),
        );
    }
    Ok(())
}

/// Ask for `sigil` at each handle it claims, then (for the channels that
/// know sigils) by itself.
async fn resolve_one(resolver: &Resolver, sigil: Sigil, handles: Vec<Handle>) -> Resolution {
    let mut failures = Vec::new();
    for handle in handles {
        let mut out = resolver.resolve(&Query::sigil_at(sigil, handle)).await;
        if out.is_resolved() {
            return out;
        }
        failures.append(&mut out.failures);
    }
    let only_dns = resolver.channels().all(|c| c == Source::Dns);
    let mut out = if only_dns {
        Resolution::default()
    } else {
        resolver.resolve(&Query::sigil(sigil)).await
    };
    failures.append(&mut out.failures);
    out.failures = failures;
    out
}

/// Add `answer`'s key for `sigil` to `keyring`: with its handle when the
/// envelope that claimed that handle verifies under it (P15, both
/// directions agree), else not at all for a DNS answer.
fn accept(keyring: &mut Keyring, sigil: Sigil, answer: &Resolved, claims: &[(Handle, &[u8])]) {
    let provenance = match answer.source {
        Source::Dns => Provenance::Dns,
        // A DHT answer's key was served by a conduit the DHT pointed at.
        Source::Conduit | Source::Dht => Provenance::Conduit,
        _ => Provenance::Birth,
    };
    if let Some(h) = &answer.history
        && (h.keys.len() > 1 || h.deprecated.is_some())
    {
        // The molt (with its proof) or the deprecation must be judged on
        // the envelopes themselves (P8): a resolved key would hide it.
        crate::notice::warning(&format!(
            "{sigil} molted or was deprecated (its conduit says so): not resolved for verify; \
             give its birth, molts, proofs and deprecation in the set (herald bundle)"
        ));
        return;
    }
    let Some(handle) = &answer.handle else {
        keyring.insert_resolved(answer.key, provenance, None);
        return;
    };
    let claimed_by_signer = claims
        .iter()
        .any(|(h, envelope)| h == handle && signed_by(envelope, answer.key));
    if claimed_by_signer {
        let at = ResolvedAt::new(handle.to_string(), answer.dnssec);
        keyring.insert_resolved(answer.key, provenance, Some(at));
    } else {
        crate::notice::warning(&format!(
            "{handle} names {sigil}, but no envelope signed by that key claims {handle}: not used"
        ));
    }
}
