//! `DELETE /v1/envelopes/{id}` and the `410 Gone` of an erased envelope
//! (CONDUIT.md *Retention and erasure*; the rule is [`crate::erase`]'s).
//!
//! Who may erase: the envelope's sender, with a request signed as for
//! reads ([`reads::signer`]), whether or not the conduit is `--public`.
//! Its recipient (a participant who knows it exists) is refused `403`;
//! anyone else gets the one `401` of reads, the same whether or not the
//! id exists, so a DELETE probes nothing. An erasure answers `200` with
//! the tombstone; erasing it again, `410` with the same tombstone. A
//! birth, molt or deprecation is never erased (`409`); a notary erases an
//! envelope only once its leaf is under a signed tree head (`503` with
//! `Retry-After` until then, about `--batch-ms`).
//!
//! Reading an erased id (`GET /v1/envelopes/{id}`) answers `410` with the
//! tombstone to whoever may read the envelope: its sender, its recipient,
//! a participant of its trace (as the trace stands now), or anyone on a
//! `--public` conduit; everyone else gets the `401` of an unknown id.

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;

use super::reads::{self, Who};
use super::{App, CBOR, EnvelopeId, cbor, problem, reader, storage_problem};
use crate::Conduit;
use crate::erase::{self, Kept, Tombstone};
use crate::stored::recipient;
use herald_http::head;

/// `410 Gone` with the tombstone `bytes`.
pub(super) fn gone(conduit: &Conduit, bytes: Vec<u8>) -> Response {
    conduit.metrics.refused("erased");
    cbor(StatusCode::GONE, CBOR, bytes)
}

/// Whether `who` may read the erased envelope `tombstone` stands for.
async fn may_read(app: &App, tombstone: &Tombstone, who: Who) -> Result<(), Response> {
    let Some((sender, trace)) = tombstone.sender_and_trace() else {
        return Err(reads::denied());
    };
    if who == sender || tombstone.recipient == Some(who) {
        return Ok(());
    }
    reads::may_read_trace(app, trace, who).await
}

/// The answer to `GET /v1/envelopes/{id}` of an id not stored: `410` with
/// its tombstone when it was erased and `who` may read it (`None`: a
/// `--public` conduit), else what an unknown id gets.
pub(super) async fn read_erased(app: &App, id: [u8; 32], who: Option<Who>) -> Response {
    let tombstone = match app.conduit.backend.tombstone(id).await {
        Ok(t) => t,
        Err(e) => return storage_problem(&e),
    };
    match (tombstone, who) {
        (Some(t), None) => gone(&app.conduit, t.bytes),
        (None, None) => problem(
            StatusCode::NOT_FOUND,
            "unknown_id",
            "no envelope with that id",
        ),
        (None, Some(_)) => reads::denied(),
        (Some(t), Some(who)) => match may_read(app, &t, who).await {
            Ok(()) => gone(&app.conduit, t.bytes),
            Err(r) => r,
        },
    }
}

/// `DELETE /v1/envelopes/{id}`.
pub(super) async fn delete_envelope(
    State(app): State<App>,
    EnvelopeId(id): EnvelopeId,
    request: Request,
) -> Response {
    let who = match reader(&app, request.method(), request.uri(), request.headers()).await {
        Ok(w) => w,
        Err(r) => return *r,
    };
    let conduit = &app.conduit;
    let stored = match conduit.backend.envelope(id).await {
        Ok(s) => s,
        Err(e) => return storage_problem(&e),
    };
    let Some(stored) = stored else {
        // Erased before: its sender gets the tombstone again.
        return match conduit.backend.tombstone(id).await {
            Ok(Some(t)) if t.sender_and_trace().is_some_and(|(s, _)| s == who) => {
                gone(conduit, t.bytes)
            }
            Ok(_) => reads::denied(),
            Err(e) => storage_problem(&e),
        };
    };
    let Some(h) = head::scan(&stored.bytes) else {
        return reads::denied();
    };
    if recipient(&h.from) != Some(who) {
        if h.to.as_ref().and_then(recipient) == Some(who) {
            return problem(
                StatusCode::FORBIDDEN,
                "not_sender",
                "only the envelope's sender may erase it",
            );
        }
        return reads::denied();
    }
    let erasure = match erase::erasure(conduit, &stored, conduit.now()) {
        Ok(e) => e,
        Err(Kept::Lifecycle) => {
            return problem(
                StatusCode::CONFLICT,
                "lifecycle",
                "a birth, molt or deprecation is public key history and is never erased",
            );
        }
        Err(Kept::Unreadable) => return storage_problem(&"a stored envelope no longer decodes"),
    };
    let tombstone = erasure.tombstone.bytes.clone();
    match conduit.backend.erase(vec![erasure]).await {
        Ok(done) if done.contains(&id) => {
            conduit.metrics.erased(1);
            cbor(StatusCode::OK, CBOR, tombstone)
        }
        Ok(_) => match conduit.backend.tombstone(id).await {
            // Erased meanwhile (retention, or another DELETE).
            Ok(Some(t)) => gone(conduit, t.bytes),
            Ok(None) => {
                let mut r = problem(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "not_logged",
                    "the envelope's leaf is not under a signed tree head yet; try again",
                );
                r.headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from(1));
                r
            }
            Err(e) => storage_problem(&e),
        },
        Err(e) => storage_problem(&e),
    }
}
