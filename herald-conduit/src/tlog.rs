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

use crate::http::{App, fleet_log, no_log, problem, storage_problem};

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
    let text = if let Some(t) = c.witnesses.published() {
        Ok(t)
    } else if let Some(f) = fleet_log(c) {
        f.checkpoint(&c.key, &c.origin)
            .await
            .map_err(|e| e.to_string())
    } else {
        let Some(notary) = &c.notary else {
            return no_log();
        };
        match notary.lock() {
            Ok(mut n) => n.checkpoint(&c.key, &c.origin).map_err(|e| e.to_string()),
            Err(_) => return storage_problem(&"the notary lock is poisoned"),
        }
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
    let bytes = if let Some(f) = fleet_log(&app.conduit) {
        f.tile(&path).await.map_err(|e| e.to_string())
    } else {
        let Some(notary) = &app.conduit.notary else {
            return no_log();
        };
        match notary.lock() {
            Ok(n) => n.tile(&path).map_err(|e| e.to_string()),
            Err(_) => return storage_problem(&"the notary lock is poisoned"),
        }
    };
    match bytes {
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
