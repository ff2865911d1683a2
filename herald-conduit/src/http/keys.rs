//! `GET /v1/keys/{sigil}` (CONDUIT.md *Endpoints*, PROFILE.md P15): public
//! (CONDUIT.md *Who may read what*: keys carry no content), planned from
//! the backend's lifecycle index by [`crate::keys`].

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;

use super::{App, CBOR_SEQ, cbor, problem, storage_problem};
use crate::backend::Inclusion;
use crate::keys::{Lifecycle, from_sigil, identity, plan};

/// Room an inclusion proof takes at most in an answer (P9's bound).
const PROOF_ROOM: usize = herald_verify::MAX_PROOF_LEN as usize;

pub(super) async fn keys(State(app): State<App>, Path(sigil): Path<String>) -> Response {
    let Some((sigil, who)) = identity(&sigil) else {
        return problem(StatusCode::BAD_REQUEST, "bad_sigil", "not a sigil (P2)");
    };
    let backend = &app.conduit.backend;
    let rows = match backend.lifecycle(who).await {
        Ok(r) => r,
        Err(e) => return storage_problem(&e),
    };
    let log = backend.log();
    let room = if log.is_some() { PROOF_ROOM } else { 0 };
    let mut body = Vec::new();
    let mut held = false;
    for row in plan(&rows, app.conduit.config.max_page, room) {
        let stored = match backend.envelope(row.id).await {
            Ok(Some(s)) => s,
            // Gone since the index was read.
            Ok(None) => continue,
            Err(e) => return storage_problem(&e),
        };
        // The index is by the 10 bytes all forms share: only the sigil's
        // own envelopes are answered.
        if !from_sigil(&stored.bytes, &sigil) {
            continue;
        }
        body.extend_from_slice(&stored.bytes);
        held = true;
        if row.kind == Lifecycle::Molt
            && let Some(log) = log
        {
            match log.inclusion(row.id).await {
                Ok(Inclusion::Proof(p)) => {
                    let proof = p.encode();
                    if proof.len() <= PROOF_ROOM {
                        body.extend_from_slice(&proof);
                    }
                }
                Ok(Inclusion::Unknown | Inclusion::NotCovered) => {}
                Err(e) => return storage_problem(&e),
            }
        }
    }
    if !held {
        return problem(
            StatusCode::NOT_FOUND,
            "unknown_sigil",
            "this conduit holds no birth, molt or deprecation of that sigil",
        );
    }
    cbor(StatusCode::OK, CBOR_SEQ, body)
}
