//! Who may read what (CONDUIT.md revision 3): the inbox by its owner,
//! envelopes and traces by a participant of the trace (a sigil that is
//! `from` or `to` of one of its envelopes) unless `--public`, each proven
//! by a request signed as [`herald_http::signature`] gives it.
//!
//! A request is judged in bounded work before any signature is verified:
//! the fields are read only up to [`herald_http::signature::MAX_FIELD`]
//! bytes and one signature (label `herald`) is considered; `created` must
//! be within [`MAX_AGE`] of the conduit's clock; the keys are those the
//! conduit holds for the `keyid` sigil ([`crate::backend::Backend::signing_keys`],
//! kept between reads by [`SignerKeys`]), at most [`MAX_KEYS`] tried; that
//! lookup (a query of the fleet's database) is free only for a sigil whose
//! signature verified recently ([`Verified`]), and otherwise takes a token
//! of the unknown senders' bucket first (`--rate-unknown`, as a post from
//! an unknown sender does: `429` with `Retry-After` when it is empty), so
//! requests naming sigils at random cost the storage no more than that
//! rate. The signature base is built once; a signature is verified with
//! the signatures of concurrent reads in one batch ([`Batcher`]), with the
//! verdict of single verification. An accepted signature is claimed in the
//! replay [`Window`], and in a fleet in its database too
//! ([`crate::backend::Backend::claim_read`]). Every refusal is the same `401` with
//! `WWW-Authenticate: Signature` ([`denied`]), whatever failed and whether
//! or not what was asked for exists; the cause is only logged.
//!
//! Participants of a trace are learned by reading the trace's envelopes
//! (their `from` and `to`), a page at a time until the reader is found,
//! and kept per trace with the position read up to ([`Participants`]):
//! arrivals commit in order in both backends, so a later read starts where
//! the last one stopped, and a stranger costs one read of what is new.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::Response;
use herald_core::{Prepared, PublicKey, Sigil};
use herald_http::signature;

use super::batch::Batcher;
use super::signers::SignerKeys;
use super::window::{self, Claim, MAX_AGE, Window};
use super::{App, problem, storage_problem};
use crate::page::CHUNK;
use crate::stored::{RECIPIENT_LEN, recipient};
use herald_http::head;

/// An identity: the key-hash prefix every form of its sigils shares.
pub(crate) type Who = [u8; RECIPIENT_LEN];

/// Keys tried for one signature at most (a sigil has its own key and a
/// few molted-in ones).
const MAX_KEYS: usize = 4;
/// Traces whose participants are kept at most.
const MAX_TRACES: usize = 4096;
/// Participants kept for one trace at most; a trace with more is read
/// again at each request rather than kept.
const MAX_PARTIES: usize = 1024;

/// Sigils whose signature verified remembered at most.
const MAX_VERIFIED: usize = 65_536;
/// How long a sigil stays in [`Verified`] after its last verified read.
const VERIFIED_FOR: Duration = Duration::from_secs(MAX_AGE);

/// The read side's state: the replay window, the participants learned, the
/// sigils recently verified.
#[derive(Default)]
pub(crate) struct Reads {
    window: Window,
    batcher: Arc<Batcher>,
    signers: SignerKeys,
    participants: Participants,
    verified: Verified,
}

/// The sigils whose signed read verified in the last [`VERIFIED_FOR`]: their
/// keys are looked up without charging the unknown senders' bucket. A
/// sigil leaves it when a request naming it fails to verify, so forged
/// requests naming a known sigil are charged from the second on. Bounded
/// ([`MAX_VERIFIED`]): the expired go first, then the oldest.
#[derive(Default)]
struct Verified {
    inner: Mutex<HashMap<Who, Instant>>,
}

impl Verified {
    fn contains(&self, who: &Who, now: Instant) -> bool {
        let inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        inner
            .get(who)
            .is_some_and(|at| now.saturating_duration_since(*at) < VERIFIED_FOR)
    }

    fn insert(&self, who: Who, now: Instant) {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if !inner.contains_key(&who) && inner.len() >= MAX_VERIFIED {
            inner.retain(|_, at| now.saturating_duration_since(*at) < VERIFIED_FOR);
            if inner.len() >= MAX_VERIFIED
                && let Some(oldest) = inner.iter().min_by_key(|(_, at)| **at).map(|(k, _)| *k)
            {
                inner.remove(&oldest);
            }
        }
        inner.insert(who, now);
    }

    fn remove(&self, who: &Who) {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        inner.remove(who);
    }
}

/// The one refusal of a read (CONDUIT.md: `401` with `WWW-Authenticate:
/// Signature`, never a hint whether what was asked for exists).
pub(crate) fn denied() -> Response {
    let mut r = problem(
        StatusCode::UNAUTHORIZED,
        "unauthorized",
        "this read needs a request signed (RFC 9421) by a sigil allowed to read it \
         (CONDUIT.md, Who may read what)",
    );
    r.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static("Signature"),
    );
    r
}

/// [`denied`], `why` logged, never sent.
fn refuse(why: &str) -> Response {
    tracing::debug!(why, "read refused");
    denied()
}

/// The identity that signed `method` `uri` (with `headers`), or the
/// answer that refuses it.
pub(crate) async fn signer(
    app: &App,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
) -> Result<Who, Response> {
    let lines = |name: &str| -> Vec<&[u8]> {
        headers
            .get_all(name)
            .iter()
            .take(signature::MAX_MEMBERS + 1)
            .map(HeaderValue::as_bytes)
            .collect()
    };
    let presented = signature::parse(
        signature::LABEL,
        &lines("signature-input"),
        &lines("signature"),
    )
    .map_err(|e| refuse(&e.to_string()))?;
    if !presented.is_herald_form() {
        return Err(refuse("not the signature form CONDUIT.md gives"));
    }
    let now = app.conduit.now();
    let created = presented.created().unwrap_or(0);
    if created.abs_diff(now) > MAX_AGE {
        return Err(refuse("created too far from the conduit's clock"));
    }
    let sigil = presented
        .keyid()
        .and_then(|k| Sigil::parse(k).ok())
        .ok_or_else(|| refuse("keyid is not a sigil"))?;
    let who = recipient(&sigil).ok_or_else(|| refuse("keyid is not a sigil"))?;
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .ok_or_else(|| refuse("no Host"))?;
    let target = uri.path_and_query().map_or("/", |p| p.as_str());
    let target_uri = signature::target_uri(host, target);
    // The signature base, built once for every key tried.
    let base = presented
        .base(method.as_str(), &target_uri)
        .ok_or_else(|| refuse("not the signature form CONDUIT.md gives"))?;
    // A replay of a signature accepted before costs no lookup either.
    if app.reads.window.holds(presented.signature()) {
        return Err(refuse("a replayed signature"));
    }
    let at = Instant::now();
    if !app.reads.verified.contains(&who, at)
        && let Err(wait) = app.conduit.limits.take_unknown()
    {
        return Err(rate_limited(wait));
    }
    let keys = app
        .reads
        .signers
        .of(app, sigil, now)
        .await
        .map_err(|e| storage_problem(&e))?;
    if !verifies(&app.reads.batcher, presented.signature(), &keys, &base).await {
        app.reads.verified.remove(&who);
        return Err(refuse("no key held for the sigil verifies the signature"));
    }
    app.reads.verified.insert(who, at);
    match app
        .reads
        .window
        .claim(presented.signature(), who, created, now)
    {
        Claim::Fresh => {
            let until = created.saturating_add(MAX_AGE);
            let key = window::key_of(presented.signature());
            match app.conduit.backend.claim_read(key, until, now).await {
                Ok(true) => Ok(who),
                Ok(false) => Err(refuse("a signature another conduit of the fleet accepted")),
                Err(e) => Err(storage_problem(&e)),
            }
        }
        Claim::Replayed => Err(refuse("a replayed signature")),
        Claim::Full => {
            let mut r = problem(
                StatusCode::SERVICE_UNAVAILABLE,
                "overloaded",
                "too many signed requests in the last 300 s; try again",
            );
            r.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(1));
            Err(r)
        }
    }
}

/// Whether `signature` over `base` verifies with one of the first
/// [`MAX_KEYS`] of `keys` (P5 revision 2): with a single key, in a batch
/// with concurrent reads ([`Batcher`]); with several (a sigil around its
/// molt), one at a time here, since all but one of them fail and a failing
/// signature would send a whole batch to single verification.
async fn verifies(
    batcher: &Arc<Batcher>,
    signature: &[u8; 64],
    keys: &[PublicKey],
    base: &str,
) -> bool {
    let prepared = keys
        .iter()
        .take(MAX_KEYS)
        .filter_map(|k| k.prepare(signature, |feed| feed(base.as_bytes())).ok());
    let prepared: Vec<Prepared> = prepared.collect();
    match prepared.as_slice() {
        [one] => batcher.verify(*one).await,
        more => more.iter().any(|p| p.verify().is_ok()),
    }
}

/// `429` with `Retry-After: wait`: the unknown senders' bucket is empty.
fn rate_limited(wait: u64) -> Response {
    let mut r = problem(
        StatusCode::TOO_MANY_REQUESTS,
        "rate_limited",
        "too many signed requests from sigils this conduit does not know; try again",
    );
    r.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(wait));
    r
}

/// Whether `who` may read the envelopes of `trace`: a participant of it
/// (the callers skip this on a `--public` conduit).
pub(crate) async fn may_read_trace(app: &App, trace: [u8; 32], who: Who) -> Result<(), Response> {
    match app.reads.participants.includes(app, trace, who).await {
        Ok(true) => Ok(()),
        Ok(false) => Err(refuse("not a participant of the trace")),
        Err(e) => Err(storage_problem(&e)),
    }
}

/// The trace of the envelope `bytes` (as stored), and whether `who` is
/// its `from` or `to`.
pub(crate) fn trace_of(bytes: &[u8], who: Who) -> Option<([u8; 32], bool)> {
    let h = head::scan(bytes)?;
    let party = [Some(&h.from), h.to.as_ref()]
        .into_iter()
        .flatten()
        .any(|s| recipient(s) == Some(who));
    Some((h.trace, party))
}

/// The parties learned of a trace, and the position read up to.
#[derive(Default)]
struct Known {
    cursor: u64,
    parties: Vec<Who>,
}

/// The traces kept, and the order they were first kept in (the oldest
/// goes first).
type Kept = (HashMap<[u8; 32], Known>, VecDeque<[u8; 32]>);

/// The participants of recently read traces, at most [`MAX_TRACES`].
#[derive(Default)]
pub(crate) struct Participants {
    inner: Mutex<Kept>,
}

impl Participants {
    /// Whether `who` is `from` or `to` of an envelope of `trace`.
    async fn includes(&self, app: &App, trace: [u8; 32], who: Who) -> Result<bool, String> {
        let mut cursor = {
            let inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
            match inner.0.get(&trace) {
                Some(k) if k.parties.contains(&who) => return Ok(true),
                Some(k) => k.cursor,
                None => 0,
            }
        };
        let mut learned: Vec<Who> = Vec::new();
        let backend = &app.conduit.backend;
        loop {
            let page = backend.trace_page(trace, cursor, CHUNK).await?;
            if page.entries.is_empty() {
                break;
            }
            let ids = page.entries.iter().map(|e| e.id).collect();
            let bytes = backend.concat(ids).await?;
            let mut rest = bytes.as_slice();
            while let Some(h) = head::scan(rest) {
                for s in [Some(&h.from), h.to.as_ref()].into_iter().flatten() {
                    if let Some(p) = recipient(s)
                        && !learned.contains(&p)
                    {
                        learned.push(p);
                    }
                }
                let Some(end) = h.end.filter(|&e| e > 0) else {
                    break;
                };
                rest = rest.get(end..).unwrap_or_default();
            }
            cursor = page.cursor;
            // Found: the rest is read by whoever asks next.
            if learned.contains(&who) {
                break;
            }
        }
        let found = learned.contains(&who);
        if learned.is_empty() {
            return Ok(false);
        }
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let (known, order) = &mut *inner;
        if !known.contains_key(&trace) {
            if known.len() >= MAX_TRACES
                && let Some(old) = order.pop_front()
            {
                known.remove(&old);
            }
            order.push_back(trace);
        }
        let k = known.entry(trace).or_default();
        for p in learned {
            if !k.parties.contains(&p) {
                k.parties.push(p);
            }
        }
        k.cursor = k.cursor.max(cursor);
        let found = found || k.parties.contains(&who);
        if k.parties.len() > MAX_PARTIES {
            known.remove(&trace);
            order.retain(|t| t != &trace);
        }
        Ok(found)
    }
}
