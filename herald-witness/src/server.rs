//! The witness over HTTP (CONDUIT.md `herald witness serve`): `POST
//! /add-checkpoint`, on a listener the caller binds (loopback by default).

use std::future::Future;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use herald_http::server::Limits;
use tokio::net::TcpListener;

use crate::witness::Witness;

/// Largest request body: a checkpoint with its signatures and 63 proof
/// lines is a few kilobytes.
const MAX_BODY: usize = 64 * 1024;

/// The router: `POST /add-checkpoint` (tlog-witness v1.0.0).
pub fn router(witness: Arc<Witness>) -> Router {
    Router::new()
        .route("/add-checkpoint", post(add_checkpoint))
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .with_state(witness)
}

async fn add_checkpoint(State(witness): State<Arc<Witness>>, body: Bytes) -> Response {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(1, |d| d.as_secs());
    // Verifying and fsyncing block: off the async workers.
    let reply = tokio::task::spawn_blocking(move || witness.add_checkpoint(&body, now)).await;
    match reply {
        Ok(r) => (
            StatusCode::from_u16(r.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            [(header::CONTENT_TYPE, r.content_type)],
            r.body,
        )
            .into_response(),
        Err(_) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
}

/// Serve `witness` on `listener` until `shutdown` completes (then as
/// [`herald_http::server::serve`]: stop accepting, finish what is in
/// flight within the shutdown grace, return); print `listening on
/// http://ADDR` once it accepts connections.
pub async fn serve(
    listener: TcpListener,
    witness: Arc<Witness>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let addr = listener.local_addr()?;
    println!("listening on http://{addr}");
    herald_http::server::serve(listener, router(witness), Limits::default(), shutdown).await
}

/// Bind `listen` and serve `witness` on a multi-threaded runtime until
/// SIGTERM or SIGINT (the blocking entry point of `herald witness serve`),
/// under the limits every HERALD server has (docs/conduit.md *Limits
/// against slow and idle clients*).
pub fn run(listen: std::net::SocketAddr, witness: Arc<Witness>) -> std::io::Result<()> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(async move {
            // Installed before the `listening on` line.
            let stop = herald_http::server::termination();
            let listener = herald_http::server::listen(listen)?;
            serve(listener, witness, stop).await
        })
}
