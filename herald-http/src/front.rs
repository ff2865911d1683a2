//! The front of a HERALD server's `POST` of one envelope: the conduit's
//! `POST /v1/envelopes` (CONDUIT.md *Endpoints*) and a Herald's `POST
//! /v1/certify` (docs/heralds.md *Limits*) read their requests by this one
//! rule.
//!
//! - The body is bounded in bytes and in time before any work is done for
//!   it: at most `max + 1` bytes are read, before the deadline.
//! - Its [`head`] is read even from an oversize or late body
//!   (CONDUIT.md: a refusal is addressed to the refused envelope's `from`,
//!   in its `trace`), so the caller refuses it with a signed envelope.
//! - Without a head there is no one to address: an RFC 9457 [`problem`].

use std::time::Instant;

use axum::body::Body;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::head::{self, Head};

/// A posted body whose head was read.
#[derive(Debug)]
pub struct Posted {
    /// The body, or the prefix of it that was read when it was [`Cut`].
    pub bytes: Vec<u8>,
    /// Its head.
    pub head: Head,
    /// Why only a prefix was read, if it was: the caller refuses the
    /// envelope (addressed to `head`).
    pub cut: Option<Cut>,
}

/// Why a body was read only in part.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cut {
    /// It is larger than the limit: its first `max` bytes were read.
    TooLarge,
    /// The deadline came first: what had arrived was read.
    Late,
}

/// A posted body with no head to address a refusal to: answered with
/// [`NoHead::problem`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum NoHead {
    /// The connection failed while the body was read.
    Broken,
    /// The deadline came before a head had arrived.
    Late,
    /// The body is not an envelope with an `id`, a `from` sigil and a
    /// `trace`.
    NoEnvelope,
}

impl NoHead {
    /// Its status: `503` when the body was late, else `400`.
    #[must_use]
    pub fn status(self) -> StatusCode {
        match self {
            Self::Late => StatusCode::SERVICE_UNAVAILABLE,
            Self::Broken | Self::NoEnvelope => StatusCode::BAD_REQUEST,
        }
    }

    /// The problem's `urn:herald:{service}:{kind}` kind.
    #[must_use]
    pub fn kind(self) -> &'static str {
        match self {
            Self::Broken => "body",
            Self::Late => "deadline",
            Self::NoEnvelope => "no_envelope",
        }
    }

    /// The problem's detail.
    #[must_use]
    pub fn detail(self) -> &'static str {
        match self {
            Self::Broken => "the request body could not be read",
            Self::Late => "the body did not arrive within the deadline",
            Self::NoEnvelope => "the body is not one envelope with an id, a from sigil and a trace",
        }
    }

    /// The RFC 9457 answer of `service` (`conduit`, `heraldry`).
    #[must_use]
    pub fn problem(self, service: &str) -> Response {
        problem(service, self.status(), self.kind(), self.detail())
    }
}

/// An RFC 9457 problem (`application/problem+json`) of `service`: type
/// `urn:herald:{service}:{kind}`, the status's reason as its title.
#[must_use]
pub fn problem(service: &str, status: StatusCode, kind: &str, detail: &str) -> Response {
    let body = serde_json::json!({
        "type": format!("urn:herald:{service}:{kind}"),
        "title": status.canonical_reason().unwrap_or("error"),
        "detail": detail,
    });
    (
        status,
        [(header::CONTENT_TYPE, "application/problem+json")],
        body.to_string(),
    )
        .into_response()
}

/// Read `body` (at most `max + 1` bytes, before `deadline`) and its head.
pub async fn read_envelope(body: Body, max: usize, deadline: Instant) -> Result<Posted, NoHead> {
    let (bytes, cut) = match read_body(body, max, deadline).await {
        BodyRead::Whole(b) => (b, None),
        BodyRead::TooLarge(b) => (b, Some(Cut::TooLarge)),
        BodyRead::Late(b) => (b, Some(Cut::Late)),
        BodyRead::Broken => return Err(NoHead::Broken),
    };
    match head::scan(&bytes) {
        Some(head) => Ok(Posted { bytes, head, cut }),
        None if cut == Some(Cut::Late) => Err(NoHead::Late),
        None => Err(NoHead::NoEnvelope),
    }
}

/// A request body as read by [`read_body`].
enum BodyRead {
    /// The whole body, within the limit.
    Whole(Vec<u8>),
    /// Larger than the limit: its first `max` bytes.
    TooLarge(Vec<u8>),
    /// The deadline came first: what arrived.
    Late(Vec<u8>),
    /// The connection failed.
    Broken,
}

/// Read at most `max + 1` bytes of `body` before `deadline`, never more.
async fn read_body(mut body: Body, max: usize, deadline: Instant) -> BodyRead {
    use axum::body::HttpBody;
    let mut buf = Vec::new();
    loop {
        let next = std::future::poll_fn(|cx| std::pin::Pin::new(&mut body).poll_frame(cx));
        match tokio::time::timeout_at(deadline.into(), next).await {
            Err(_) => return BodyRead::Late(buf),
            Ok(None) => return BodyRead::Whole(buf),
            Ok(Some(Err(_))) => return BodyRead::Broken,
            Ok(Some(Ok(frame))) => {
                if let Ok(data) = frame.into_data() {
                    let room = (max + 1).saturating_sub(buf.len());
                    buf.extend_from_slice(data.get(..room.min(data.len())).unwrap_or_default());
                    if buf.len() > max {
                        buf.truncate(max);
                        return BodyRead::TooLarge(buf);
                    }
                }
            }
        }
    }
}
