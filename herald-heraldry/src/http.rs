//! `herald heraldry serve`'s HTTP surface (CONDUIT.md): `POST
//! /v1/certify`, `GET /v1/certifications/{sigil}`, `GET /checkpoint`,
//! `GET /tile/...`, `GET /.well-known/herald`; on herald-http's accept
//! loop (header read timeout, connection cap, lingering close, bounded
//! shutdown), as every HERALD server.
//!
//! Each request's cost is bounded before work (docs/heralds.md *Limits*):
//! the body to `max_body` (read against the deadline: a slow client gets
//! `deadline`), at most [`MAX_SIGNATURES`] signatures (a request needs
//! one), one origin verification, one DNS lookup within the deadline, and
//! at most `max_inflight` requests at once (`overloaded` past it).

use std::future::Future;
use std::sync::Arc;
use std::sync::mpsc::SyncSender;
use std::time::Instant;

use axum::Router;
use axum::extract::{Path, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use data_encoding::HEXLOWER;
use herald_core::{Sigil, SigilForm};
use herald_http::front::{Cut, Posted, read_envelope};
use herald_http::head::Head;
use herald_http::server::Limits;
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, oneshot};
use tower_http::limit::RequestBodyLimitLayer;

use crate::certification::{REQUESTABLE, item};
use crate::herald::{Herald, now};
use crate::log::LogView;
use crate::refusal::Refusal;
use crate::request;
use crate::sequencer::{self, Job};

/// Most signatures a request may carry, refused before any is verified.
pub const MAX_SIGNATURES: u64 = 4;
/// Most items in a `GET /v1/certifications/{sigil}` answer.
pub const MAX_ITEMS: usize = 1000;
/// Bytes read past `max_body` so an oversize request's head can still be
/// addressed.
const HEAD_SLACK: usize = 4096;

const CBOR: &str = "application/cbor";
const CBOR_SEQ: &str = "application/cbor-seq";

#[derive(Clone)]
struct App {
    herald: Arc<Herald>,
    queue: SyncSender<Job>,
    inflight: Arc<Semaphore>,
}

/// The router of every endpoint.
fn router(herald: Arc<Herald>, queue: SyncSender<Job>) -> Router {
    let limit = herald.config.max_body.saturating_add(HEAD_SLACK);
    let app = App {
        inflight: Arc::new(Semaphore::new(herald.config.max_inflight)),
        herald,
        queue,
    };
    Router::new()
        .route("/v1/certify", post(certify))
        .route("/v1/certifications/{sigil}", get(certifications))
        .route("/checkpoint", get(checkpoint))
        .route("/tile/{*path}", get(tile))
        .route("/.well-known/herald", get(well_known))
        .fallback(|| async { problem(StatusCode::NOT_FOUND, "not_found", "no such endpoint") })
        .layer(RequestBodyLimitLayer::new(limit))
        .with_state(app)
}

/// An RFC 9457 problem, type `urn:herald:heraldry:{kind}`.
fn problem(status: StatusCode, kind: &str, detail: &str) -> Response {
    herald_http::front::problem("heraldry", status, kind, detail)
}

fn refuse(herald: &Herald, refusal: Refusal, head: &Head) -> Response {
    tracing::debug!(reason = refusal.reason(), "certification refused");
    let Some(body) = refusal.envelope(&herald.key, (head.id, head.trace, head.from), now()) else {
        return problem(
            StatusCode::INTERNAL_SERVER_ERROR,
            "refusal",
            "the refusal envelope could not be built",
        );
    };
    let status = StatusCode::from_u16(refusal.status()).unwrap_or(StatusCode::BAD_REQUEST);
    let mut r = (status, [(header::CONTENT_TYPE, CBOR)], body).into_response();
    if let Some(s) = refusal.retry_after() {
        r.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(s));
    }
    r
}

async fn certify(State(app): State<App>, req: Request) -> Response {
    let herald = &app.herald;
    let deadline = Instant::now()
        + herald
            .config
            .deadline
            .saturating_sub(std::time::Duration::from_millis(50));
    let permit = Arc::clone(&app.inflight).try_acquire_owned().ok();
    let Posted { bytes, head, cut } =
        match read_envelope(req.into_body(), herald.config.max_body, deadline).await {
            Ok(posted) => posted,
            Err(no) => return no.problem("heraldry"),
        };
    match cut {
        Some(Cut::TooLarge) => return refuse(herald, Refusal::TooLarge, &head),
        Some(Cut::Late) => return refuse(herald, Refusal::Deadline, &head),
        None => {}
    }
    if head.end != Some(bytes.len()) {
        return problem(
            StatusCode::BAD_REQUEST,
            "not_one_item",
            "the body is not exactly one CBOR item",
        );
    }
    if head.signatures.is_some_and(|n| n > MAX_SIGNATURES) {
        return refuse(herald, Refusal::TooManySignatures, &head);
    }
    if permit.is_none() {
        return refuse(herald, Refusal::Overloaded, &head);
    }
    // Rate limits (src/rate.rs): a subject the log does not name yet
    // first spends the shared bucket, before any verification or lookup.
    let subject = head.from.to_form(SigilForm::Default).unwrap_or(head.from);
    if !herald.knows(subject).await
        && let Err(wait) = herald.limits.unknown()
    {
        return refuse(herald, Refusal::RateLimited(wait), &head);
    }
    let decided = tokio::time::timeout_at(
        deadline.into(),
        request::decide(
            &bytes,
            &herald.sigil(),
            herald
                .dns
                .as_ref()
                .map(|d| d as &dyn herald_resolve::Channel),
            now(),
            herald
                .config
                .validity
                .map(|v| now().saturating_add(v.as_secs())),
        ),
    )
    .await;
    let decided = match decided {
        Ok(Ok(d)) => d,
        Ok(Err(r)) => return refuse(herald, r, &head),
        Err(_) => return refuse(herald, Refusal::Deadline, &head),
    };
    // Its origin verified: its subject's own bucket.
    if let Err(wait) = herald.limits.subject(&decided.certification.subject) {
        return refuse(herald, Refusal::RateLimited(wait), &head);
    }
    let entry = match decided
        .certification
        .issue(&herald.key, Some(decided.request), now())
    {
        Ok(e) => e.into_bytes(),
        Err(_) => return refuse(herald, Refusal::Invalid("malformed"), &head),
    };
    let (reply, answer) = oneshot::channel();
    let job = Job {
        entry,
        request: Some(decided.request.0),
        reply,
    };
    if app.queue.try_send(job).is_err() {
        return refuse(herald, Refusal::Overloaded, &head);
    }
    match tokio::time::timeout_at(deadline.into(), answer).await {
        Ok(Ok(Ok((entry, proof)))) => {
            let mut r = (
                StatusCode::CREATED,
                [(header::CONTENT_TYPE, CBOR)],
                item(&entry, &proof),
            )
                .into_response();
            if let Ok(v) = HeaderValue::from_str(&format!(
                "/v1/certifications/{}",
                head.from.to_form(SigilForm::Default).unwrap_or(head.from)
            )) {
                r.headers_mut().insert(header::LOCATION, v);
            }
            r
        }
        Ok(Ok(Err(_))) => problem(
            StatusCode::INTERNAL_SERVER_ERROR,
            "storage",
            "the Herald's storage failed; nothing of this request was acknowledged",
        ),
        Ok(Err(_)) => refuse(herald, Refusal::Overloaded, &head),
        Err(_) => refuse(herald, Refusal::Deadline, &head),
    }
}

async fn certifications(State(app): State<App>, Path(sigil): Path<String>) -> Response {
    let Some(subject) = Sigil::parse(&sigil)
        .ok()
        .filter(|s| !s.is_short() && !s.is_reserved())
        .and_then(|s| s.to_form(SigilForm::Default))
    else {
        return problem(
            StatusCode::BAD_REQUEST,
            "bad_sigil",
            "not a default or long sigil (P2)",
        );
    };
    let Some(published) = app.herald.published() else {
        return (
            StatusCode::OK,
            [(header::CONTENT_TYPE, CBOR_SEQ)],
            Vec::new(),
        )
            .into_response();
    };
    // The store's lock and reads are taken off the runtime: the sequencer
    // holds that lock across a write and its sync.
    let herald = Arc::clone(&app.herald);
    match tokio::task::spawn_blocking(move || about(&herald, &subject, &published)).await {
        Ok(Some(body)) => {
            (StatusCode::OK, [(header::CONTENT_TYPE, CBOR_SEQ)], body).into_response()
        }
        _ => problem(
            StatusCode::INTERNAL_SERVER_ERROR,
            "storage",
            "the Herald's storage failed",
        ),
    }
}

/// Every certification about `subject` that `published` covers, with its
/// proof, as a CBOR sequence (blocking: the store's lock).
fn about(herald: &Herald, subject: &Sigil, published: &sequencer::Published) -> Option<Vec<u8>> {
    let store = herald.store.lock().ok()?;
    let mut body = Vec::new();
    for &i in store
        .about(&subject.to_string())
        .iter()
        .filter(|&&i| i < published.size)
        .take(MAX_ITEMS)
    {
        if let (Ok(entry), Some(p)) = (store.entry(i), sequencer::proof(&store, i, published)) {
            body.extend_from_slice(&item(&entry, &p));
        }
    }
    Some(body)
}

async fn checkpoint(State(app): State<App>) -> Response {
    match app.herald.published() {
        Some(p) => (
            StatusCode::OK,
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            p.text,
        )
            .into_response(),
        None => problem(StatusCode::NOT_FOUND, "no_checkpoint", "no checkpoint yet"),
    }
}

async fn tile(State(app): State<App>, Path(path): Path<String>) -> Response {
    // Off the runtime, as `certifications`.
    let herald = Arc::clone(&app.herald);
    let read = tokio::task::spawn_blocking(move || {
        let store = herald
            .store
            .lock()
            .map_err(|_| "the store lock is poisoned".to_owned())?;
        let view = LogView::new(&store, herald.key.public_key());
        herald_tlog::log::tile(&view, &format!("tile/{path}")).map_err(|e| e.to_string())
    })
    .await
    .unwrap_or_else(|e| Err(e.to_string()));
    match read {
        Ok(Some(bytes)) => (
            StatusCode::OK,
            [(header::CONTENT_TYPE, "application/octet-stream")],
            bytes,
        )
            .into_response(),
        Ok(None) => problem(StatusCode::NOT_FOUND, "no_tile", "no such tile"),
        Err(e) => {
            tracing::error!(error = %e, "tile");
            problem(
                StatusCode::INTERNAL_SERVER_ERROR,
                "storage",
                "the Herald's storage failed",
            )
        }
    }
}

async fn well_known(State(app): State<App>) -> Response {
    let h = &app.herald;
    let key = h.key.public_key();
    let body = serde_json::json!({
        "sigil": h.sigil().to_string(),
        "key": HEXLOWER.encode(key.as_bytes()),
        "origin": h.origin,
        "log_key": h.log_key().map(|k| k.to_string()),
        "claims": REQUESTABLE,
        "max_body": h.config.max_body,
        "deadline_ms": u64::try_from(h.config.deadline.as_millis()).unwrap_or(u64::MAX),
        "version": env!("CARGO_PKG_VERSION"),
    });
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// Serve `herald` on `listener` until `shutdown`, printing `listening on
/// http://ADDR` once it accepts connections; the sequencer runs on its
/// own thread and ends with the server.
pub async fn serve(
    listener: TcpListener,
    herald: Arc<Herald>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let (queue, jobs) = std::sync::mpsc::sync_channel(herald.config.max_inflight.max(1));
    let seq = Arc::clone(&herald);
    let thread = std::thread::Builder::new()
        .name("herald-heraldry-sequencer".into())
        .spawn(move || sequencer::run(&seq, &jobs))?;
    let addr = listener.local_addr()?;
    println!("listening on http://{addr}");
    let served =
        herald_http::server::serve(listener, router(herald, queue), Limits::default(), shutdown)
            .await;
    // The router (and with it the queue's sender) is dropped: the
    // sequencer ends.
    let _ = tokio::task::spawn_blocking(move || thread.join()).await;
    served
}

/// Bind `listen` and serve until SIGTERM or SIGINT (`herald heraldry
/// serve`'s blocking entry point). `build` makes the Herald inside the
/// runtime (its DNS channel needs one).
pub fn run(
    listen: std::net::SocketAddr,
    build: impl FnOnce() -> Result<Herald, String>,
) -> Result<(), String> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?
        .block_on(async move {
            let stop = herald_http::server::termination();
            let herald = Arc::new(build()?);
            let listener = herald_http::server::listen(listen)
                .map_err(|e| format!("--listen {listen}: {e}"))?;
            serve(listener, herald, stop)
                .await
                .map_err(|e| format!("--listen {listen}: {e}"))
        })
}
