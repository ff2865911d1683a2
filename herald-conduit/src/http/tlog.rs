//! The notary's audit log in C2SP form (CONDUIT.md: `GET /checkpoint`,
//! `GET /tile/...`): a tlog-checkpoint signed note by the log key (the
//! conduit key) and tlog-tiles hash tiles and entry bundles of the P9 leaf
//! bytes. The bytes are herald-tlog's ([`herald_tlog::log`]), the same as
//! `herald log checkpoint` and `herald log tiles` write for the log
//! directory.
//!
//! Caching (tlog-tiles "Client behavior"): a tile path names bytes that
//! never change — a full tile is final, and a partial tile `.p/W` holds the
//! first `W` hashes or entries of its tile, which an append-only log never
//! rewrites — so every tile answer is `immutable`; the checkpoint changes
//! with each tree head and is `no-cache`; a 404 (a tile not yet in the
//! tree) is `no-store`, as it may exist later.

use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::{App, audit_log, problem, storage_problem};

/// tlog-checkpoint: a signed note is UTF-8 text.
const CHECKPOINT_TYPE: &str = "text/plain; charset=utf-8";
/// tlog-tiles: tiles and entry bundles are opaque bytes.
const TILE_TYPE: &str = "application/octet-stream";
/// Tiles never change once served.
const IMMUTABLE: &str = "public, max-age=31536000, immutable";
/// The checkpoint moves with every tree head.
const NO_CACHE: &str = "no-cache";

/// `GET /checkpoint`.
pub(crate) async fn checkpoint(State(app): State<App>) -> Response {
    let c = &app.conduit;
    // With witnesses: the newest checkpoint they were asked to cosign,
    // with their cosignatures (witnesses.rs), once there is one.
    let log = match audit_log(c) {
        Ok(l) => l,
        Err(r) => return *r,
    };
    let text = match c.witnesses.published() {
        Some(t) => Ok(t),
        None => log.checkpoint(&c.key, &c.origin).await,
    };
    match text {
        Ok(t) => (
            StatusCode::OK,
            [
                (header::CONTENT_TYPE, CHECKPOINT_TYPE),
                (header::CACHE_CONTROL, NO_CACHE),
            ],
            t,
        )
            .into_response(),
        Err(e) => storage_problem(&e),
    }
}

/// `GET /tile/{path}`: `tile/<L>/<N>[.p/<W>]` or `tile/entries/<N>[.p/<W>]`.
pub(crate) async fn tile(State(app): State<App>, Path(path): Path<String>) -> Response {
    let path = format!("tile/{path}");
    let log = match audit_log(&app.conduit) {
        Ok(l) => l,
        Err(r) => return *r,
    };
    match log.tile(path).await {
        Ok(Some(b)) => (
            StatusCode::OK,
            [
                (header::CONTENT_TYPE, TILE_TYPE),
                (header::CACHE_CONTROL, IMMUTABLE),
            ],
            b,
        )
            .into_response(),
        Ok(None) => {
            let mut r = problem(
                StatusCode::NOT_FOUND,
                "no_such_tile",
                "no such tile in the tree as it is now (a malformed path, or beyond the tree)",
            );
            r.headers_mut().insert(
                header::CACHE_CONTROL,
                axum::http::HeaderValue::from_static("no-store"),
            );
            r
        }
        Err(e) => storage_problem(&e),
    }
}
