//! The notary's audit log (spec §5.3, P9; CONDUIT.md *Endpoints*):
//! `GET /v1/sth`, `GET /v1/proof/inclusion/{id}`,
//! `GET /v1/proof/consistency`, from the backend's [`AuditLog`].

use std::collections::HashMap;

use axum::extract::{Path, Query, RawQuery, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::{App, CBOR, cbor, hash32, problem, query_u64, storage_problem};
use crate::Conduit;
use crate::backend::{AuditLog, Between, Inclusion};

/// The audit log this conduit serves, or the `404` of one that keeps none.
pub(super) fn audit_log(c: &Conduit) -> Result<&dyn AuditLog, Box<Response>> {
    c.backend.log().ok_or_else(|| Box::new(no_log()))
}

fn no_log() -> Response {
    problem(
        StatusCode::NOT_FOUND,
        "not_a_notary",
        "this conduit keeps no audit log",
    )
}

/// The P1 bytes of `value`, or with `json` its CLI.md JSON form.
fn audit_object(value: Vec<u8>, json: bool) -> Response {
    if !json {
        return cbor(StatusCode::OK, CBOR, value);
    }
    match herald_core::cbor::decode(&value) {
        Ok(v) => (
            StatusCode::OK,
            [(header::CONTENT_TYPE, "application/json")],
            herald_verify::display_json(v),
        )
            .into_response(),
        Err(e) => storage_problem(&e),
    }
}

pub(super) async fn sth(State(app): State<App>, RawQuery(q): RawQuery) -> Response {
    let json = q.is_some_and(|q| q.split('&').any(|p| p == "json" || p.starts_with("json=")));
    let log = match audit_log(&app.conduit) {
        Ok(l) => l,
        Err(r) => return *r,
    };
    match log.sth().await {
        Err(e) => storage_problem(&e),
        Ok(Some(s)) => audit_object(s.encode(), json),
        Ok(None) => problem(
            StatusCode::NOT_FOUND,
            "empty_log",
            "the log has no leaves yet",
        ),
    }
}

pub(super) async fn inclusion(State(app): State<App>, Path(id): Path<String>) -> Response {
    let id = match hash32(&id) {
        Ok(id) => id,
        Err(r) => return *r,
    };
    let log = match audit_log(&app.conduit) {
        Ok(l) => l,
        Err(r) => return *r,
    };
    match log.inclusion(id).await {
        Ok(Inclusion::Proof(p)) => cbor(StatusCode::OK, CBOR, p.encode()),
        Ok(Inclusion::Unknown) => {
            problem(StatusCode::NOT_FOUND, "unknown_id", "no leaf with that id")
        }
        Ok(Inclusion::NotCovered) => problem(
            StatusCode::NOT_FOUND,
            "not_yet_covered",
            "no tree head covers that leaf yet",
        ),
        Err(e) => storage_problem(&e),
    }
}

pub(super) async fn consistency(
    State(app): State<App>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let log = match audit_log(&app.conduit) {
        Ok(l) => l,
        Err(r) => return *r,
    };
    let (from, to) = match (query_u64(&q, "from"), query_u64(&q, "to")) {
        (Ok(Some(f)), Ok(t)) => (f, t),
        (Ok(None), _) => {
            return problem(StatusCode::BAD_REQUEST, "bad_query", "from is required");
        }
        (Err(r), _) | (_, Err(r)) => return *r,
    };
    let between = Between {
        size1: from,
        size2: to,
        now: app.conduit.now(),
    };
    let proof = match log.consistency(&app.conduit.key, between).await {
        Ok(p) => p,
        Err(e) => return storage_problem(&e),
    };
    match proof {
        Ok(p) => cbor(StatusCode::OK, CBOR, p.encode()),
        Err(e) => problem(StatusCode::BAD_REQUEST, "bad_sizes", &e),
    }
}
