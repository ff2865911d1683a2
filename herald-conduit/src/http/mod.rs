//! The HTTP surface (CONDUIT.md *Endpoints*): routes, bodies, status codes;
//! the notary's audit log is served by the child modules [`audit`] (P9)
//! and [`tlog`] (its C2SP form).

mod audit;
mod batch;
mod erase;
mod keys;
mod reads;
mod signers;
mod tlog;
mod window;

use audit::audit_log;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{Path, Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use data_encoding::HEXLOWER;
use herald_core::{Sigil, SigilForm};
use herald_http::front::{Cut, NoHead, Posted, read_envelope};
use herald_http::head::Head;
use tokio::sync::{Semaphore, oneshot};
use tower_http::limit::RequestBodyLimitLayer;

use crate::Conduit;
use crate::config::MAX_WAIT;
use crate::page::{self, Page};
use crate::refusal::Refusal;
use crate::stored::recipient;
use crate::writer::{self, Job, Outcome, Queue};

/// Bytes read past `--max-body` at most, so that the head of an oversize
/// envelope can still be read and its refusal addressed; the connection
/// level cap is `--max-body` plus this.
const HEAD_SLACK: usize = 64 << 10;
/// Kept back from `--deadline-ms` to write the answer.
const ANSWER_MARGIN: Duration = Duration::from_millis(50);

const CBOR: &str = "application/cbor";
const CBOR_SEQ: &str = "application/cbor-seq";

#[derive(Clone)]
pub(crate) struct App {
    pub(crate) conduit: Arc<Conduit>,
    queue: Queue,
    inflight: Arc<Semaphore>,
    /// Who may read what (CONDUIT.md revision 3).
    reads: Arc<reads::Reads>,
}

/// The router of every CONDUIT.md endpoint this crate serves.
pub(crate) fn router(conduit: Arc<Conduit>, queue: Queue) -> Router {
    let limit = conduit.config.max_body.saturating_add(HEAD_SLACK);
    let app = App {
        inflight: Arc::new(Semaphore::new(conduit.config.max_inflight)),
        conduit,
        queue,
        reads: Arc::default(),
    };
    Router::new()
        .route("/v1/envelopes", post(post_envelope))
        .route(
            "/v1/envelopes/{id}",
            get(get_envelope).delete(erase::delete_envelope),
        )
        .route("/v1/inbox/{sigil}", get(inbox))
        .route("/v1/traces/{trace}", get(trace))
        .route("/v1/sth", get(audit::sth))
        .route("/v1/proof/inclusion/{id}", get(audit::inclusion))
        .route("/v1/proof/consistency", get(audit::consistency))
        .route("/checkpoint", get(tlog::checkpoint))
        .route("/tile/{*path}", get(tlog::tile))
        .route("/v1/keys/{sigil}", get(keys::keys))
        .route("/.well-known/herald-conduit", get(well_known))
        .route("/healthz", get(healthz))
        .route("/metrics", get(metrics))
        .fallback(|| async { problem(StatusCode::NOT_FOUND, "not_found", "no such endpoint") })
        .layer(RequestBodyLimitLayer::new(limit))
        .with_state(app)
}

/// An RFC 9457 problem (`application/problem+json`), type
/// `urn:herald:conduit:{kind}`.
pub(crate) fn problem(status: StatusCode, kind: &str, detail: &str) -> Response {
    herald_http::front::problem("conduit", status, kind, detail)
}

fn cbor(status: StatusCode, content_type: &'static str, body: Vec<u8>) -> Response {
    (status, [(header::CONTENT_TYPE, content_type)], body).into_response()
}

/// A 64-hex-character id or trace from a path (CONDUIT.md: else 400).
fn hash32(text: &str) -> Result<[u8; 32], Box<Response>> {
    let bad = || {
        Box::new(problem(
            StatusCode::BAD_REQUEST,
            "bad_hash",
            "expected 64 lowercase hex characters",
        ))
    };
    if text.len() != 64 {
        return Err(bad());
    }
    HEXLOWER
        .decode(text.as_bytes())
        .ok()
        .and_then(|v| <[u8; 32]>::try_from(v).ok())
        .ok_or_else(bad)
}

/// The `{id}` of `/v1/envelopes/{id}` (a `400 bad_hash` unless 64 lowercase
/// hex characters), as the handlers of its GET and DELETE take it.
pub(super) struct EnvelopeId(pub(super) [u8; 32]);

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for EnvelopeId {
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &S,
    ) -> Result<Self, Response> {
        let Path(id) = Path::<String>::from_request_parts(parts, state)
            .await
            .map_err(IntoResponse::into_response)?;
        hash32(&id).map(Self).map_err(|r| *r)
    }
}

/// A `500` for a failure of the store: `e` is logged, never sent (it
/// names files of the state directory).
pub(crate) fn storage_problem(e: &dyn std::fmt::Display) -> Response {
    tracing::error!(error = %e, "storage");
    problem(
        StatusCode::INTERNAL_SERVER_ERROR,
        "storage",
        "the conduit's storage failed; nothing of this request was acknowledged",
    )
}

async fn post_envelope(State(app): State<App>, req: Request) -> Response {
    let start = Instant::now();
    let deadline = start + app.conduit.config.deadline.saturating_sub(ANSWER_MARGIN);
    let response = submit(&app, req, deadline).await;
    app.conduit.metrics.latency(start.elapsed());
    response
}

async fn submit(app: &App, req: Request, deadline: Instant) -> Response {
    let conduit = &app.conduit;
    let permit = Arc::clone(&app.inflight).try_acquire_owned().ok();
    let Posted { bytes, head, cut } =
        match read_envelope(req.into_body(), conduit.config.max_body, deadline).await {
            Ok(posted) => posted,
            Err(no) => {
                let late = matches!(no, NoHead::Late);
                conduit
                    .metrics
                    .refused(if late { "deadline" } else { "bad_request" });
                return no.problem("conduit");
            }
        };
    match cut {
        Some(Cut::TooLarge) => return refuse(conduit, &Refusal::TooLarge, &head),
        Some(Cut::Late) => return refuse(conduit, &Refusal::Deadline, &head),
        None => {}
    }
    if head.end != Some(bytes.len()) {
        conduit.metrics.refused("bad_request");
        return problem(
            StatusCode::BAD_REQUEST,
            "not_one_item",
            "the body is not exactly one CBOR item (a sequence, or trailing bytes)",
        );
    }
    // The cost of a post is bounded before any signature work (CONDUIT.md
    // revision 3): signature k covers the body and the k before it.
    if head
        .signatures
        .is_some_and(|n| n > u64::try_from(conduit.config.max_signatures).unwrap_or(u64::MAX))
    {
        return refuse(conduit, &Refusal::TooManySignatures, &head);
    }
    // A relay's receipt must still fit in P1's limit (docs/conduit.md).
    if bytes.len() > conduit.sender_max_body {
        return refuse(conduit, &Refusal::TooLarge, &head);
    }
    if permit.is_none() || !conduit.accepting.load(std::sync::atomic::Ordering::SeqCst) {
        return refuse(conduit, &Refusal::Overloaded, &head);
    }
    // The rate limits are charged by the writer once the origin is checked
    // (`rate`): a post anyone could forge never spends a sender's tokens.
    // A repeat of an acknowledged envelope: its first answer (spec §11.3).
    if let Some(body) = conduit.backend.answered(head.id).await
        && writer::is_envelope_of(&bytes, &head.id)
    {
        return created(conduit, &head.id, body);
    }
    let (reply, answer) = oneshot::channel();
    let job = Job {
        bytes,
        id: head.id,
        trace: head.trace,
        sender: recipient(&head.from),
        birth: head.birth,
        deadline,
        reply,
    };
    if !writer::offer(&app.queue, job) {
        return refuse(conduit, &Refusal::Overloaded, &head);
    }
    match tokio::time::timeout_at(deadline.into(), answer).await {
        Ok(Ok(Outcome::Created(body))) => {
            // The writer keeps no copy: the body moves out of its Arc.
            let body = Arc::try_unwrap(body).unwrap_or_else(|shared| shared.to_vec());
            created(conduit, &head.id, body)
        }
        Ok(Ok(Outcome::Refused(r))) => refuse(conduit, &r, &head),
        Ok(Ok(Outcome::Erased(tombstone))) => erase::gone(conduit, tombstone),
        Ok(Ok(Outcome::Failed(e))) => {
            conduit.metrics.refused("storage");
            storage_problem(&e)
        }
        Ok(Err(_)) => {
            conduit.metrics.refused("overloaded");
            refuse(conduit, &Refusal::Overloaded, &head)
        }
        Err(_) => refuse(conduit, &Refusal::Deadline, &head),
    }
}

fn created(conduit: &Conduit, id: &[u8; 32], body: Vec<u8>) -> Response {
    conduit.metrics.accepted();
    let mut r = cbor(StatusCode::CREATED, CBOR, body);
    if let Ok(v) = HeaderValue::from_str(&format!("/v1/envelopes/{}", HEXLOWER.encode(id))) {
        r.headers_mut().insert(header::LOCATION, v);
    }
    r
}

/// A signed refusal (spec §5.2) with its status and headers.
fn refuse(conduit: &Conduit, refusal: &Refusal, head: &Head) -> Response {
    conduit.metrics.refused(refusal.reason());
    let Some(body) = refusal.envelope(&conduit.key, head, conduit.now()) else {
        return problem(
            StatusCode::INTERNAL_SERVER_ERROR,
            "refusal",
            "the refusal envelope could not be built",
        );
    };
    let status = StatusCode::from_u16(refusal.status()).unwrap_or(StatusCode::BAD_REQUEST);
    let mut r = cbor(status, CBOR, body);
    if let Some(s) = refusal.retry_after() {
        r.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(s));
    }
    if let Refusal::Invalid(codes) = refusal
        && let Ok(v) = HeaderValue::from_str(&reasons_header(codes))
    {
        r.headers_mut().insert("herald-reasons", v);
    }
    r
}

/// Most codes named in `Herald-Reasons`, and most bytes of it.
const MAX_REASONS: usize = 16;
const MAX_REASONS_BYTES: usize = 1024;

/// `Herald-Reasons` (CONDUIT.md): every distinct code of `codes`, in order,
/// at most [`MAX_REASONS`] of them in at most [`MAX_REASONS_BYTES`], then
/// `+N` for the N distinct codes left out. The refusal's payload names the
/// first code either way.
fn reasons_header(codes: &[&str]) -> String {
    let mut distinct: Vec<&str> = Vec::new();
    for c in codes {
        if !distinct.contains(c) {
            distinct.push(c);
        }
    }
    let mut out = String::new();
    let mut named = 0;
    for c in &distinct {
        // Room for this code, its comma and the longest `,+N` marker.
        if named == MAX_REASONS || out.len() + c.len() + 1 + 8 > MAX_REASONS_BYTES {
            break;
        }
        if named > 0 {
            out.push(',');
        }
        out.push_str(c);
        named += 1;
    }
    if named < distinct.len() {
        out.push_str(&format!(",+{}", distinct.len() - named));
    }
    out
}

/// The signer of a read, when CONDUIT.md *Who may read what* asks for one:
/// always for an inbox, for envelopes and traces unless `--public`.
async fn reader(
    app: &App,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
) -> Result<reads::Who, Box<Response>> {
    reads::signer(app, method, uri, headers)
        .await
        .map_err(Box::new)
}

async fn get_envelope(
    State(app): State<App>,
    EnvelopeId(id): EnvelopeId,
    request: Request,
) -> Response {
    let who = if app.conduit.config.public {
        None
    } else {
        match reader(&app, request.method(), request.uri(), request.headers()).await {
            Ok(w) => Some(w),
            Err(r) => return *r,
        }
    };
    let stored = match app.conduit.backend.envelope(id).await {
        Ok(s) => s,
        Err(e) => return storage_problem(&e),
    };
    match (stored, who) {
        (Some(s), None) => cbor(StatusCode::OK, CBOR, s.bytes),
        // Unknown, or erased (CONDUIT.md *Retention and erasure*).
        (None, who) => erase::read_erased(&app, id, who).await,
        (Some(s), Some(who)) => match reads::trace_of(&s.bytes, who) {
            Some((_, true)) => cbor(StatusCode::OK, CBOR, s.bytes),
            Some((trace, false)) => match reads::may_read_trace(&app, trace, who).await {
                Ok(()) => cbor(StatusCode::OK, CBOR, s.bytes),
                Err(r) => r,
            },
            None => reads::denied(),
        },
    }
}

fn query_u64(q: &HashMap<String, String>, name: &str) -> Result<Option<u64>, Box<Response>> {
    match q.get(name) {
        None => Ok(None),
        Some(v) => v.parse().map(Some).map_err(|_| {
            Box::new(problem(
                StatusCode::BAD_REQUEST,
                "bad_query",
                &format!("{name} must be a non-negative integer"),
            ))
        }),
    }
}

async fn inbox(
    State(app): State<App>,
    Path(sigil): Path<String>,
    Query(q): Query<HashMap<String, String>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    let Some(who) = Sigil::parse(&sigil).ok().and_then(|s| recipient(&s)) else {
        return problem(StatusCode::BAD_REQUEST, "bad_sigil", "not a sigil (P2)");
    };
    let (after, wait) = match (query_u64(&q, "after"), query_u64(&q, "wait")) {
        (Ok(a), Ok(w)) => (a.unwrap_or(0), w.unwrap_or(0)),
        (Err(r), _) | (_, Err(r)) => return *r,
    };
    // Its owner's only, even on a `--public` conduit (CONDUIT.md).
    match reader(&app, &method, &uri, &headers).await {
        Ok(signer) if signer == who => {}
        Ok(_) => return reads::denied(),
        Err(r) => return *r,
    }
    let until = Instant::now() + Duration::from_secs(wait).min(MAX_WAIT);
    let mut arrivals = app.conduit.deliveries.subscribe();
    let mut closing = app.conduit.closing.subscribe();
    // A fleet's other conduits deliver too.
    let mut elsewhere = app.conduit.backend.deliveries();
    let max_page = app.conduit.config.max_page;
    loop {
        arrivals.mark_unchanged();
        if let Some(e) = elsewhere.as_mut() {
            e.mark_unchanged();
        }
        let page = match app.conduit.backend.inbox_page(who, after, max_page).await {
            Ok(p) => p,
            Err(e) => return storage_problem(&e),
        };
        let done = !page.entries.is_empty() || Instant::now() >= until || *closing.borrow();
        if done {
            return paged(&app, &page);
        }
        tokio::select! {
            _ = tokio::time::sleep_until(until.into()) => {}
            _ = arrivals.changed() => {}
            _ = closing.changed() => {}
            () = changed(elsewhere.as_mut()) => {}
        }
    }
}

/// Until `rx` changes; never when there is none or its sender is gone.
async fn changed(rx: Option<&mut tokio::sync::watch::Receiver<u64>>) {
    if let Some(rx) = rx
        && rx.changed().await.is_ok()
    {
        return;
    }
    std::future::pending().await
}

/// A `200` answer of `page` (CONDUIT.md *Bounded answers*): header
/// `Herald-Cursor`, the envelopes streamed from the store a chunk at a
/// time.
fn paged(app: &App, page: &Page) -> Response {
    let backend = Arc::clone(&app.conduit.backend);
    let body = page::body(&page.entries, move |ids| {
        let backend = Arc::clone(&backend);
        async move { backend.concat(ids).await }
    });
    let mut r = (StatusCode::OK, [(header::CONTENT_TYPE, CBOR_SEQ)], body).into_response();
    r.headers_mut()
        .insert("herald-cursor", HeaderValue::from(page.cursor));
    r
}

async fn trace(
    State(app): State<App>,
    Path(trace): Path<String>,
    Query(q): Query<HashMap<String, String>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    let trace = match hash32(&trace) {
        Ok(t) => t,
        Err(r) => return *r,
    };
    let after = match query_u64(&q, "after") {
        Ok(a) => a.unwrap_or(0),
        Err(r) => return *r,
    };
    if !app.conduit.config.public {
        let who = match reader(&app, &method, &uri, &headers).await {
            Ok(w) => w,
            Err(r) => return *r,
        };
        if let Err(r) = reads::may_read_trace(&app, trace, who).await {
            return r;
        }
    }
    let max_page = app.conduit.config.max_page;
    match app.conduit.backend.trace_page(trace, after, max_page).await {
        Ok(page) => paged(&app, &page),
        Err(e) => storage_problem(&e),
    }
}

async fn well_known(State(app): State<App>) -> Response {
    let c = &app.conduit;
    let key = c.public_key();
    let sigil = key.sigil(SigilForm::Default).to_string();
    let body = serde_json::json!({
        "sigil": sigil,
        "key": HEXLOWER.encode(key.as_bytes()),
        "roles": c.config.roles.names(),
        "log": c.config.roles.notary.then(|| sigil.clone()),
        "origin": c.origin,
        "max_body": c.sender_max_body,
        "max_signatures": c.config.max_signatures,
        "deadline_ms": u64::try_from(c.config.deadline.as_millis()).unwrap_or(u64::MAX),
        "version": env!("CARGO_PKG_VERSION"),
    });
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

async fn healthz(State(app): State<App>) -> Response {
    if !app
        .conduit
        .accepting
        .load(std::sync::atomic::Ordering::SeqCst)
    {
        (StatusCode::SERVICE_UNAVAILABLE, "shutting down").into_response()
    } else if !app.conduit.backend.healthy().await {
        // docs/conduit.md *Storage failures*.
        (StatusCode::SERVICE_UNAVAILABLE, "storage unavailable").into_response()
    } else {
        (StatusCode::OK, "ok").into_response()
    }
}

async fn metrics(State(app): State<App>) -> Response {
    let size = match app.conduit.backend.log() {
        Some(log) => log.size().await,
        None => None,
    };
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        app.conduit.metrics.render(size),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn herald_reasons_is_bounded_and_distinct() {
        assert_eq!(
            reasons_header(&["bad_signature", "expired", "bad_signature"]),
            "bad_signature,expired"
        );
        let many: Vec<String> = (0..40).map(|i| format!("code_{i}")).collect();
        let mut codes: Vec<&str> = many.iter().map(String::as_str).collect();
        codes.extend(std::iter::repeat_n("code_0", 5_000));
        let h = reasons_header(&codes);
        assert!(h.starts_with("code_0,code_1,"), "{h}");
        assert!(h.ends_with(",+24"), "{h}");
        let long: Vec<String> = (0..16).map(|i| format!("{i}{}", "x".repeat(100))).collect();
        let long: Vec<&str> = long.iter().map(String::as_str).collect();
        let h = reasons_header(&long);
        assert!(h.len() <= MAX_REASONS_BYTES, "{}", h.len());
        assert!(h.ends_with(",+7"), "{h}");
    }
}
